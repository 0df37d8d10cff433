//! A file system that can lose power: mounted with FUSE on a server's data directory, it keeps
//! every file in memory as two versions, what was written and what was synced, and on
//! [`LossyMount::power_loss`] throws away what was not synced (all of it, a random prefix of
//! each file's writes, or a prefix and a torn sector of the next; [`LossMode`]). `kill -9`
//! alone keeps the page cache, so a server that never calls `fsync` passes every kill test;
//! on this file system it loses acknowledged writes, as on a machine whose power was cut. The
//! idea is Jepsen's LazyFS; this is our own, small, in-process version.
//!
//! The rules are POSIX's and no kinder: a file's contents are durable once it is `fsync`ed
//! (or `fdatasync`ed), a new, renamed or removed name once its directory is. Files bypass the
//! kernel's page cache (direct I/O), and names and attributes are never cached, so a process
//! started after a power cut sees exactly what survived.
//!
//! Mounting needs `/dev/fuse` and the right to call `mount(2)` (root); [`LossyMount::mount`]
//! says clearly when either is missing. The mount lives as long as the [`LossyMount`]: dropping
//! it unmounts and joins its thread ([`LossyMount::unmount_keeping_files`] also leaves what it
//! held in the directory beneath). A mount left by a killed program is cleaned up by the next
//! mount on the same directory.

mod abi;
mod change;
mod loss;
mod requests;
mod session;
mod tree;

pub use loss::{LossMode, LossReport, SECTOR};
pub use tree::{Corruption, TreeStats as LossyStats};

use session::Session;
use std::ffi::CString;
use std::io;
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;
use threadsim::DetRng;
use tree::Tree;

/// What `/proc/mounts` shows as the source of a lossy mount.
const MOUNT_SOURCE: &str = "interleave-lossy";
const MOUNT_SOURCE_C: &std::ffi::CStr = c"interleave-lossy";

/// Why the lossy file system could not be mounted.
#[derive(Debug, thiserror::Error)]
pub enum MountError {
    /// `/dev/fuse` cannot be opened.
    #[error("cannot open /dev/fuse ({source}): the lossy file system needs FUSE")]
    NoFuse {
        /// Why.
        source: io::Error,
    },
    /// The directory cannot be made or used.
    #[error("cannot use {} as a mount point: {source}", dir.display())]
    MountPoint {
        /// The directory.
        dir: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// `mount(2)` refused.
    #[error("cannot mount the lossy file system on {}: {source}{hint}", dir.display())]
    Mount {
        /// The directory.
        dir: PathBuf,
        /// Why.
        source: io::Error,
        /// What to do about it.
        hint: &'static str,
    },
}

/// Whether this process can mount the lossy file system: `Err` says why not.
pub fn available() -> Result<(), crate::Unavailable> {
    if let Err(source) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/fuse")
    {
        return Err(crate::Unavailable::NoDevice {
            device: "/dev/fuse",
            source,
        });
    }
    // SAFETY: a plain call without arguments.
    if unsafe { libc::geteuid() } != 0 {
        return Err(crate::Unavailable::NotRoot {
            what: "mounts of a file system",
        });
    }
    Ok(())
}

/// A mounted lossy file system (see the module's documentation).
pub struct LossyMount {
    dir: PathBuf,
    tree: Arc<Mutex<Tree>>,
    sync_latency_us: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<io::Result<()>>>,
}

impl LossyMount {
    /// Mounts an empty lossy file system on `dir` (created if missing), hiding what the
    /// directory held.
    pub fn mount(dir: &Path) -> Result<LossyMount, MountError> {
        let device = Arc::new(mount_device(dir)?);
        let tree = Arc::new(Mutex::new(Tree::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let sync_latency_us = Arc::new(AtomicU64::new(0));
        let session = Session::new(Arc::clone(&tree), Arc::clone(&sync_latency_us));
        let thread_stop = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("lossy-fs".into())
            .spawn(move || session.serve(device, &thread_stop))
            .map_err(|source| {
                unmount(dir);
                MountError::Mount {
                    dir: dir.to_path_buf(),
                    source,
                    hint: "",
                }
            })?;
        Ok(LossyMount {
            dir: dir.to_path_buf(),
            tree,
            sync_latency_us,
            stop,
            thread: Some(thread),
        })
    }

    /// Where it is mounted.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Cuts the power at this instant: no sync under way finishes, every request fails with
    /// EIO until [`LossyMount::power_loss`]. Kill the processes using it next.
    pub fn power_off(&self) {
        self.tree().power_off();
    }

    /// Cuts the power (if [`LossyMount::power_off`] did not already): what was not synced is
    /// lost as `mode` says (drawn from `rng`); then the power is on again. Every process using
    /// the file system must have been killed first.
    pub fn power_loss(&self, mode: LossMode, rng: &mut DetRng) -> LossReport {
        self.tree().power_loss(mode, rng)
    }

    /// Makes every file sync take `latency` from now on, as a real disk's does (the default is
    /// none): what a process writes while a sync is under way is not made durable by it, and a
    /// power cut before the sync ends leaves it undone.
    pub fn set_sync_latency(&self, latency: Duration) {
        let micros = u64::try_from(latency.as_micros()).unwrap_or(u64::MAX);
        self.sync_latency_us.store(micros, Ordering::Relaxed);
    }

    /// Damages one non-empty file on the medium (see [`Corruption`]), drawn from `rng`; the
    /// process using it should be stopped first and started after, to find the damage.
    pub fn corrupt(&self, rng: &mut DetRng, zero_sector: bool) -> Option<Corruption> {
        self.tree().corrupt(rng, zero_sector)
    }

    /// Puts back what [`LossyMount::corrupt`] damaged.
    pub fn repair(&self, corruption: &Corruption) {
        self.tree().repair(corruption);
    }

    /// Makes every write fail with ENOSPC (`true`), or work again.
    pub fn set_full(&self, full: bool) {
        self.tree().set_full(full);
    }

    /// Counts of what was done on it.
    pub fn stats(&self) -> LossyStats {
        self.tree().stats()
    }

    /// Unmounts, then writes every file and directory as a process saw them last into the
    /// directory the mount hid, so they can be looked at after the run.
    pub fn unmount_keeping_files(mut self) -> io::Result<()> {
        self.stop_serving();
        let tree = self.tree();
        for (path, contents) in tree.export() {
            let path = self.dir.join(path);
            match contents {
                None => std::fs::create_dir_all(&path)?,
                Some(bytes) => std::fs::write(&path, bytes)?,
            }
        }
        Ok(())
    }

    /// Unmounts and joins the thread that served the mount (once).
    fn stop_serving(&mut self) {
        let Some(thread) = self.thread.take() else {
            return;
        };
        unmount(&self.dir);
        self.stop.store(true, Ordering::Release);
        match thread.join() {
            Ok(Ok(())) => {}
            Ok(Err(error)) => {
                tracing::warn!("the lossy file system on {}: {error}", self.dir.display())
            }
            Err(_) => tracing::warn!("the lossy file system's thread panicked"),
        }
    }

    fn tree(&self) -> std::sync::MutexGuard<'_, Tree> {
        self.tree.lock().expect("the tree's lock is never poisoned")
    }
}

impl Drop for LossyMount {
    fn drop(&mut self) {
        self.stop_serving();
    }
}

/// Mounts a FUSE file system on `dir` (created if missing; a stale mount there is cleared
/// first) and returns the device that serves it: closing it ends the mount's connection.
fn mount_device(dir: &Path) -> Result<OwnedFd, MountError> {
    let mount_point = |source| MountError::MountPoint {
        dir: dir.to_path_buf(),
        source,
    };
    clear_stale_mount(dir);
    std::fs::create_dir_all(dir).map_err(mount_point)?;
    let path = CString::new(dir.as_os_str().as_bytes())
        .map_err(|_| mount_point(io::Error::from(io::ErrorKind::InvalidInput)))?;
    // SAFETY: a NUL-terminated path; the descriptor returned is owned below.
    let fd = unsafe {
        libc::open(
            c"/dev/fuse".as_ptr(),
            libc::O_RDWR | libc::O_CLOEXEC | libc::O_NONBLOCK,
        )
    };
    if fd < 0 {
        return Err(MountError::NoFuse {
            source: io::Error::last_os_error(),
        });
    }
    // SAFETY: `fd` was just opened and nothing else owns it.
    let device = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: plain calls without arguments.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    let options = CString::new(format!(
        "fd={fd},rootmode=40755,user_id={uid},group_id={gid},allow_other"
    ))
    .expect("no NUL in the options");
    // SAFETY: every pointer is to a NUL-terminated string that outlives the call.
    let mounted = unsafe {
        libc::mount(
            MOUNT_SOURCE_C.as_ptr(),
            path.as_ptr(),
            c"fuse".as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV,
            options.as_ptr().cast(),
        )
    };
    if mounted != 0 {
        let source = io::Error::last_os_error();
        let hint = if source.raw_os_error() == Some(libc::EPERM) {
            " (mounting needs root)"
        } else {
            ""
        };
        return Err(MountError::Mount {
            dir: dir.to_path_buf(),
            source,
            hint,
        });
    }
    Ok(device)
}

/// Detaches the mount on `dir` (processes still inside it see it go when they leave).
fn unmount(dir: &Path) {
    if let Ok(path) = CString::new(dir.as_os_str().as_bytes()) {
        // SAFETY: a NUL-terminated path.
        unsafe { libc::umount2(path.as_ptr(), libc::MNT_DETACH) };
    }
}

/// Unmounts every lossy file system at or below `dir` whose program died (a killed run's; the
/// kernel answers ENOTCONN for it), which would otherwise stop anything from removing `dir`.
/// Returns how many it unmounted.
pub fn unmount_stale_below(dir: &Path) -> usize {
    let (Ok(dir), Ok(mounts)) = (
        std::fs::canonicalize(dir),
        std::fs::read_to_string("/proc/mounts"),
    ) else {
        return 0;
    };
    let mut unmounted = 0;
    for line in mounts.lines() {
        let mut fields = line.split(' ');
        let (Some(source), Some(point)) = (fields.next(), fields.next()) else {
            continue;
        };
        // /proc/mounts writes a space in a path as \040.
        let point = PathBuf::from(point.replace("\\040", " "));
        if source == MOUNT_SOURCE && point.starts_with(&dir) && is_stale(&point) {
            tracing::warn!("unmounting a lossy file system left on {}", point.display());
            unmount(&point);
            unmounted += 1;
        }
    }
    unmounted
}

/// Whether `dir` is a FUSE mount whose program is gone.
fn is_stale(dir: &Path) -> bool {
    std::fs::metadata(dir).is_err_and(|error| error.raw_os_error() == Some(libc::ENOTCONN))
}

/// Unmounts a FUSE mount on `dir` whose program died (the kernel answers ENOTCONN for it).
fn clear_stale_mount(dir: &Path) {
    if is_stale(dir) {
        tracing::warn!("unmounting a lossy file system left on {}", dir.display());
        unmount(dir);
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests;
