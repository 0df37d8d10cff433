//! A write-ahead log's segment as a damaged disk may hand it back, opened as a server opens its
//! data directory: recovery refuses it with a reason or recovers a state that decodes, never a
//! panic, and a state it recovers comes back the same when the log is opened again.
#![no_main]

use storage::wal::{segment_name, WalPersister};
use libfuzzer_sys::fuzz_target;
use node::{PersistentState, Persister};
use std::path::PathBuf;
use std::sync::OnceLock;

/// One data directory per process, emptied before each input (on a RAM disk where there is one).
fn data_dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let shm = std::path::Path::new("/dev/shm");
        let base = if shm.is_dir() {
            shm.to_path_buf()
        } else {
            std::env::temp_dir()
        };
        base.join(format!("interleave-fuzz-wal-{}", std::process::id()))
    })
}

fn recovered() -> Option<Vec<u8>> {
    let wal = WalPersister::open(data_dir()).ok()?;
    wal.load().ok().flatten()
}

fuzz_target!(|segment: &[u8]| {
    let dir = data_dir();
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).expect("a data directory");
    std::fs::write(dir.join(segment_name(1)), segment).expect("the segment written");
    if let Some(bytes) = recovered() {
        interleave_fuzz::decoded("wal_segment");
        let state = PersistentState::decode(&bytes).expect("a recovered state decodes");
        let again = recovered().expect("a recovered log opens again");
        assert_eq!(PersistentState::decode(&again), Ok(state));
    }
});
