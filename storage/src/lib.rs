//! What a node keeps on disk, as it ships: the parts below the server that hold its state.
//!
//! - [`WalPersister`]: the node's state as an append-only log of what each save changed
//!   (segments of CRC32C records, fsyncs shared among concurrent saves, snapshots in files of
//!   their own), the server's default storage; a torn tail is cut on recovery, damage anywhere
//!   else refused with its file and offset, a lost segment refused by name ([`wal`]).
//! - [`FilePersister`]: the node's state in a real file, replaced atomically (a new file written
//!   and `fdatasync`ed, renamed over the old one, the directory `fsync`ed) and framed with a
//!   CRC32C, so a process killed at any point restarts from the old state or the new one, and a
//!   damaged file is refused with a message that names it.
//! - [`Storage`]: either, chosen by [`StorageKind`], in a data directory locked for one process
//!   ([`OpenError`]).
//!
//! Both write through a [`filesystem::Filesystem`]: real files and `fsync` as the server runs
//! them, or a [`filesystem::MemoryFilesystem`] whose crashes a test or the simulation decides,
//! the same engine either way. It imports neither the server nor the lab.
//!
//! ```
//! use storage::FilePersister;
//! use node::Persister;
//!
//! # if threadsim::sync::MODEL_CHECKER_BUILD { return; } // a loom or shuttle build runs only models
//! let dir = std::env::temp_dir().join(format!("storage-doc-{}", std::process::id()));
//! let persister = FilePersister::open(&dir).expect("a usable directory");
//! persister.save(b"term 3, voted for n1").expect("written");
//! assert_eq!(persister.load().unwrap().as_deref(), Some(&b"term 3, voted for n1"[..]));
//! # drop(persister);
//! # std::fs::remove_dir_all(&dir).unwrap();
//! ```
#![deny(missing_docs)]

mod data_dir;
mod file_persister;
pub mod filesystem;
mod state_file;
mod storage;
pub mod wal;

pub use data_dir::OpenError;
#[cfg(feature = "mutations")]
pub use file_persister::BrokenWrite;
pub use file_persister::FilePersister;
pub use state_file::{decode_state_file, encode_state_file, StateFileError, MAX_STATE_BYTES};
pub use storage::{Storage, StorageKind, UnknownStorageKind};
pub use wal::{Damage, RecordDamage, ReplayError, WalError, WalPersister};
