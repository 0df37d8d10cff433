//! Answering the kernel: one thread reads requests from `/dev/fuse`, does each to the
//! [`Tree`] under its lock, and writes the reply. Requests are small and never wait, so one
//! thread serves a server's every thread. A file's `fsync` takes the sync latency a real disk
//! would: it is answered by a second thread once that has passed, and makes durable only what
//! was written before it began (a power cut in between, and it never finishes).

use super::abi::{Fields, InHeader, Opcode, Reply, FOPEN_DIRECT_IO, IN_HEADER, REQUEST_BUFFER};
use super::requests::{self, Errno};
use super::tree::{FsError, Ino, SyncBegun, Tree};
use server::real_time::{now, sleep_until};
use std::collections::BTreeMap;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How often the thread looks at its stop flag while no request comes.
const POLL_MS: i32 = 100;

/// A file sync the kernel waits for, answered when it is due.
struct PendingSync {
    due: Instant,
    begun: SyncBegun,
    unique: u64,
}

/// One mount's conversation with the kernel.
pub struct Session {
    tree: Arc<Mutex<Tree>>,
    /// Open handles: the inode each names.
    handles: BTreeMap<u64, Ino>,
    next_handle: u64,
    /// How long a file's sync takes, in microseconds (0: answered at once).
    sync_latency_us: Arc<AtomicU64>,
    /// Where syncs that take time go, while serving.
    pending_syncs: Option<Sender<PendingSync>>,
}

impl Session {
    /// A session on `tree` whose file syncs take `sync_latency_us`.
    pub fn new(tree: Arc<Mutex<Tree>>, sync_latency_us: Arc<AtomicU64>) -> Session {
        Session {
            tree,
            handles: BTreeMap::new(),
            next_handle: 1,
            sync_latency_us,
            pending_syncs: None,
        }
    }

    /// Serves requests from `device` until `stop` is set or the kernel ends the connection.
    pub fn serve(mut self, device: Arc<OwnedFd>, stop: &AtomicBool) -> io::Result<()> {
        let (sender, receiver) = channel();
        self.pending_syncs = Some(sender);
        let syncer = {
            let tree = Arc::clone(&self.tree);
            let device = Arc::clone(&device);
            std::thread::Builder::new()
                .name("lossy-fs-sync".into())
                .spawn(move || answer_syncs(&receiver, &tree, &device))?
        };
        let served = self.serve_requests(&device, stop);
        // The syncer ends once every pending sync is answered and its sender gone.
        drop(self);
        if syncer.join().is_err() {
            tracing::warn!("the lossy file system's sync thread panicked");
        }
        served
    }

    fn serve_requests(&mut self, device: &OwnedFd, stop: &AtomicBool) -> io::Result<()> {
        let mut buffer = vec![0u8; REQUEST_BUFFER];
        let fd = device.as_raw_fd();
        while !stop.load(Ordering::Acquire) {
            let mut poll = libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd, for the length given.
            let ready = unsafe { libc::poll(&mut poll, 1, POLL_MS) };
            if ready <= 0 {
                continue;
            }
            // SAFETY: the buffer is valid for writes of its length.
            let read = unsafe { libc::read(fd, buffer.as_mut_ptr().cast(), buffer.len()) };
            if read < 0 {
                let error = io::Error::last_os_error();
                match error.raw_os_error() {
                    // Interrupted, or a request the kernel took back: read the next.
                    Some(libc::EINTR | libc::EAGAIN | libc::ENOENT) => continue,
                    // Unmounted.
                    Some(libc::ENODEV) => return Ok(()),
                    _ => return Err(error),
                }
            }
            let request = &buffer[..read as usize];
            if let Some(reply) = self.answer(request) {
                match send(device, &reply) {
                    Err(error) if error.raw_os_error() == Some(libc::ENODEV) => return Ok(()),
                    other => other?,
                }
            }
        }
        Ok(())
    }

    /// The reply to `request`, if it takes one.
    pub fn answer(&mut self, request: &[u8]) -> Option<Vec<u8>> {
        let header = InHeader::parse(request).ok()?;
        let end = (header.len as usize).clamp(IN_HEADER, request.len());
        let body = &request[IN_HEADER..end];
        if header.opcode.is_unanswered() {
            return None;
        }
        if self.is_powered_off() && !header.opcode.is_harmless_while_off() {
            return Some(Reply::error(header.unique, libc::EIO));
        }
        if header.opcode == Opcode::Fsync {
            match self.defer_sync(header) {
                Ok(true) => return None,
                Ok(false) => {}
                Err(Errno(errno)) => return Some(Reply::error(header.unique, errno)),
            }
        }
        Some(match self.reply(header, Fields::new(body)) {
            Ok(reply) => reply.finish(),
            Err(Errno(errno)) => Reply::error(header.unique, errno),
        })
    }

    fn is_powered_off(&self) -> bool {
        self.tree
            .lock()
            .expect("the tree's lock is never poisoned")
            .is_powered_off()
    }

    /// Begins a file's sync that takes time, to be answered when due: `false` if it takes
    /// none (no latency, no syncer, a directory) and is to be done at once.
    fn defer_sync(&mut self, header: InHeader) -> Result<bool, Errno> {
        let latency = Duration::from_micros(self.sync_latency_us.load(Ordering::Relaxed));
        let Some(pending_syncs) = &self.pending_syncs else {
            return Ok(false);
        };
        let tree = self.tree.lock().expect("the tree's lock is never poisoned");
        if latency.is_zero() || tree.attributes(Ino(header.nodeid))?.is_dir {
            return Ok(false);
        }
        let begun = tree.begin_sync(Ino(header.nodeid))?;
        let pending = PendingSync {
            due: now() + latency,
            begun,
            unique: header.unique,
        };
        Ok(pending_syncs.send(pending).is_ok())
    }

    fn new_handle(&mut self, ino: Ino) -> u64 {
        let handle = self.next_handle;
        self.next_handle += 1;
        self.handles.insert(handle, ino);
        handle
    }

    /// The reply to one request: what it does to the tree, by its opcode.
    fn reply(&mut self, header: InHeader, mut fields: Fields<'_>) -> Result<Reply, Errno> {
        let ino = Ino(header.nodeid);
        let fields = &mut fields;
        let mut reply = Reply::ok(header.unique);
        let out = &mut reply;
        let mut tree = self.tree.lock().expect("the tree's lock is never poisoned");
        match header.opcode {
            Opcode::Init => requests::init(fields, out)?,
            Opcode::Destroy | Opcode::Flush | Opcode::Access => {}
            Opcode::Lookup => requests::lookup(&tree, ino, fields, out)?,
            Opcode::Getattr => {
                out.attr_out(&tree.attributes(ino)?);
            }
            Opcode::Setattr => requests::setattr(&mut tree, ino, fields, out)?,
            Opcode::Mknod => requests::mknod(&mut tree, ino, fields, out)?,
            Opcode::Mkdir => requests::mkdir(&mut tree, ino, fields, out)?,
            Opcode::Create => {
                let created = requests::create(&mut tree, ino, fields, out)?;
                drop(tree);
                let handle = self.new_handle(created);
                out.open_out(handle, FOPEN_DIRECT_IO);
            }
            Opcode::Unlink | Opcode::Rmdir => {
                tree.remove(ino, fields.name()?, header.opcode == Opcode::Rmdir)?;
            }
            Opcode::Rename | Opcode::Rename2 => {
                requests::rename(&mut tree, ino, header.opcode == Opcode::Rename2, fields)?;
            }
            Opcode::Open | Opcode::Opendir => {
                let is_dir = tree.attributes(ino)?.is_dir;
                match (header.opcode, is_dir) {
                    (Opcode::Open, true) => return Err(FsError::IsADirectory.into()),
                    (Opcode::Opendir, false) => return Err(FsError::NotADirectory.into()),
                    _ => {}
                }
                tree.opened(ino)?;
                drop(tree);
                let handle = self.new_handle(ino);
                out.open_out(handle, if is_dir { 0 } else { FOPEN_DIRECT_IO });
            }
            Opcode::Release | Opcode::Releasedir => {
                if let Some(released) = self.handles.remove(&fields.u64()?) {
                    tree.released(released);
                }
            }
            Opcode::Read => requests::read(&tree, ino, fields, out)?,
            Opcode::Write => requests::write(&mut tree, ino, fields, out)?,
            Opcode::Fsync | Opcode::Fsyncdir => tree.sync(ino)?,
            Opcode::Readdir => requests::readdir(&tree, ino, fields, out)?,
            Opcode::Statfs => requests::statfs(out),
            Opcode::Forget | Opcode::BatchForget | Opcode::Interrupt => {
                unreachable!("answered above: these take no reply")
            }
            Opcode::Other(_) => return Err(Errno(libc::ENOSYS)),
        }
        Ok(reply)
    }
}

/// Answers the syncs that take time, in the order they began (each as late as the latency
/// says), until the session is gone.
fn answer_syncs(receiver: &Receiver<PendingSync>, tree: &Mutex<Tree>, device: &OwnedFd) {
    for pending in receiver {
        sleep_until(pending.due);
        let finished = tree
            .lock()
            .expect("the tree's lock is never poisoned")
            .finish_sync(pending.begun);
        let reply = match finished {
            Ok(()) => Reply::ok(pending.unique).finish(),
            Err(error) => Reply::error(pending.unique, error.errno()),
        };
        // A process killed while it waited is gone, and so may the mount be.
        let _ = send(device, &reply);
    }
}

/// Writes one reply to the kernel; a reply to a request that was taken back is dropped.
fn send(device: &OwnedFd, reply: &[u8]) -> io::Result<()> {
    // SAFETY: the reply is valid for reads of its length.
    let written = unsafe { libc::write(device.as_raw_fd(), reply.as_ptr().cast(), reply.len()) };
    if written < 0 {
        let error = io::Error::last_os_error();
        if error.raw_os_error() != Some(libc::ENOENT) {
            return Err(error);
        }
    }
    Ok(())
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    fn request(opcode: u32, nodeid: u64, body: &[u8]) -> Vec<u8> {
        let mut bytes = Vec::new();
        bytes.extend_from_slice(&((IN_HEADER + body.len()) as u32).to_le_bytes());
        bytes.extend_from_slice(&opcode.to_le_bytes());
        bytes.extend_from_slice(&77u64.to_le_bytes());
        bytes.extend_from_slice(&nodeid.to_le_bytes());
        bytes.extend_from_slice(&[0; 16]);
        bytes.extend_from_slice(body);
        bytes
    }

    fn error_of(reply: &[u8]) -> i32 {
        i32::from_le_bytes(reply[4..8].try_into().unwrap())
    }

    #[test]
    fn malformed_and_unknown_requests_get_errors_not_panics() {
        let mut session = Session::new(Arc::default(), Arc::default());
        assert_eq!(
            session.answer(&[1, 2, 3]),
            None,
            "no header: nothing to answer"
        );
        let lookup_without_nul = request(1, 1, b"name");
        assert_eq!(
            error_of(&session.answer(&lookup_without_nul).unwrap()),
            -libc::EINVAL
        );
        let unknown = request(4096, 1, b"");
        assert_eq!(error_of(&session.answer(&unknown).unwrap()), -libc::ENOSYS);
        let missing = request(3, 99, b"");
        assert_eq!(error_of(&session.answer(&missing).unwrap()), -libc::ENOENT);
        let short_write = request(16, 1, &[0; 12]);
        assert_eq!(
            error_of(&session.answer(&short_write).unwrap()),
            -libc::EINVAL
        );
        assert_eq!(session.answer(&request(2, 1, &[0; 8])), None, "a forget");
    }
}
