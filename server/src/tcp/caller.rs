//! [`Caller`]: calls to one remote address over one TCP connection, shared by every calling
//! thread; replies are matched to calls by id. A lost connection is made again on the next
//! call, no sooner than a backoff that doubles from 10 ms to 1 s while connecting fails.

use super::auth::{call_handshake, ClusterKey, Opener, Sealer};
use super::Protocol;
use crate::real_time::{left_until, now, sleep_until};
use crate::threads::{join_all, join_finished};
use crate::wire::frame::{read_frame, write_frame};
use std::collections::BTreeMap;
use std::io::{BufReader, BufWriter, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use threadsim::sync::{Arc, Mutex};

const FIRST_BACKOFF: Duration = Duration::from_millis(10);
const MAX_BACKOFF: Duration = Duration::from_secs(1);

/// The calls waiting for a reply on one connection.
struct Waiting<R> {
    replies: BTreeMap<u64, mpsc::Sender<R>>,
    /// The connection is gone: nothing more will be answered on it.
    closed: bool,
}

/// One open connection.
struct Connection<P: Protocol> {
    /// The stream's writing half, and the tags of what goes on it.
    writer: Mutex<(BufWriter<TcpStream>, Sealer)>,
    stream: TcpStream,
    waiting: Arc<Mutex<Waiting<P::Reply>>>,
}

impl<P: Protocol> Connection<P> {
    /// Wraps `stream`, proves it holds `key` (if any) before `deadline`, and starts the thread
    /// that reads its replies.
    fn start(
        stream: TcpStream,
        key: Option<&ClusterKey>,
        deadline: Instant,
    ) -> std::io::Result<(Arc<Self>, JoinHandle<()>)> {
        stream.set_nodelay(true)?;
        let mut writer = BufWriter::new(stream.try_clone()?);
        let (sealer, opener) = match key {
            None => (Sealer::plain(), Opener::plain()),
            Some(key) => {
                // The listener sends nothing after its challenge until a request has come, so
                // this reader cannot take bytes that belong to the replies' reader.
                let mut reader = BufReader::new(&stream);
                let halves = call_handshake(
                    key,
                    &mut |frame| {
                        writer
                            .get_ref()
                            .set_write_timeout(Some(left_until(deadline)))?;
                        write_frame(&mut writer, frame).and_then(|()| writer.flush())
                    },
                    &mut || {
                        stream.set_read_timeout(Some(left_until(deadline)))?;
                        read_frame(&mut reader)?
                            .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::UnexpectedEof))
                    },
                )
                .map_err(|refused| {
                    std::io::Error::new(std::io::ErrorKind::PermissionDenied, refused)
                })?;
                stream.set_read_timeout(None)?;
                halves
            }
        };
        let waiting = Arc::new(Mutex::new(Waiting {
            replies: BTreeMap::new(),
            closed: false,
        }));
        let connection = Arc::new(Connection {
            writer: Mutex::new((writer, sealer)),
            stream: stream.try_clone()?,
            waiting: waiting.clone(),
        });
        let reader = std::thread::Builder::new()
            .name("tcp-replies".into())
            .spawn(move || read_replies::<P>(stream, opener, &waiting))?;
        Ok((connection, reader))
    }

    fn is_closed(&self) -> bool {
        self.waiting.lock().closed
    }

    /// Closes the connection; its reader sees that and exits.
    fn close(&self) {
        self.waiting.lock().closed = true;
        let _ = self.stream.shutdown(Shutdown::Both);
    }
}

/// Hands each reply to the call waiting for it, until the connection ends or sends garbage
/// (a frame whose tag is wrong, or that does not decode).
fn read_replies<P: Protocol>(
    stream: TcpStream,
    mut opener: Opener,
    waiting: &Mutex<Waiting<P::Reply>>,
) {
    let mut reader = BufReader::new(&stream);
    while let Ok(Some(frame)) = read_frame(&mut reader) {
        let Ok(frame) = opener.open(frame) else {
            break;
        };
        let Ok((id, reply)) = P::decode_reply(&frame) else {
            break;
        };
        if let Some(caller) = waiting.lock().replies.remove(&id) {
            let _ = caller.send(reply);
        }
    }
    let mut waiting = waiting.lock();
    waiting.closed = true;
    // Dropping the senders wakes every call still waiting.
    waiting.replies.clear();
    let _ = stream.shutdown(Shutdown::Both);
}

/// The connection to one address, made again when lost.
struct Link<P: Protocol> {
    connection: Option<Arc<Connection<P>>>,
    /// Reader threads of every connection made, joined when the caller closes.
    readers: Vec<JoinHandle<()>>,
    /// No new connection is tried before this.
    next_attempt: Option<Instant>,
    backoff: Duration,
    closed: bool,
}

/// Calls to one remote address (see the module's documentation).
pub struct Caller<P: Protocol> {
    address: SocketAddr,
    key: Option<ClusterKey>,
    next_id: AtomicU64,
    link: Mutex<Link<P>>,
}

impl<P: Protocol> Caller<P> {
    /// A caller of `address`; it connects at its first call, and with a `key` proves it holds
    /// it on every connection before it sends anything else ([`super::auth`]).
    pub fn new(address: SocketAddr, key: Option<ClusterKey>) -> Caller<P> {
        Caller {
            address,
            key,
            next_id: AtomicU64::new(1),
            link: Mutex::new(Link {
                connection: None,
                readers: Vec::new(),
                next_attempt: None,
                backoff: FIRST_BACKOFF,
                closed: false,
            }),
        }
    }

    /// The address called.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// Sends `request` and waits up to `timeout` for its reply. `None` when none came: the
    /// peer is down, unreachable, slow or answered nothing. Like a call in the simulation, a
    /// call without a reply takes its whole timeout, so a caller that retries at once cannot
    /// spin.
    pub fn call(&self, request: &P::Request, timeout: Duration) -> Option<P::Reply> {
        let deadline = now() + timeout;
        let reply = self.try_call(request, deadline);
        if reply.is_none() {
            sleep_until(deadline);
        }
        reply
    }

    fn try_call(&self, request: &P::Request, deadline: Instant) -> Option<P::Reply> {
        let connection = self.connection(deadline)?;
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (sender, receiver) = mpsc::channel();
        {
            let mut waiting = connection.waiting.lock();
            if waiting.closed {
                return None;
            }
            waiting.replies.insert(id, sender);
        }
        let sent = {
            let mut writer = connection.writer.lock();
            let (writer, sealer) = &mut *writer;
            let frame = sealer.seal(P::encode_request(id, request));
            // A peer that stopped reading (paused, say) must not hold this thread past its
            // deadline; a write cut short leaves the stream unusable, so it is closed.
            writer
                .get_ref()
                .set_write_timeout(Some(left_until(deadline)))
                .and_then(|()| write_frame(writer, &frame))
                .and_then(|()| writer.flush())
        };
        if sent.is_err() {
            connection.close();
            return None;
        }
        let reply = receiver.recv_timeout(left_until(deadline)).ok();
        if reply.is_none() {
            connection.waiting.lock().replies.remove(&id);
        }
        reply
    }

    /// The open connection, or a new one if the backoff allows; `None` if there is none.
    fn connection(&self, deadline: Instant) -> Option<Arc<Connection<P>>> {
        let mut link = self.link.lock();
        if link.closed {
            return None;
        }
        if let Some(connection) = &link.connection {
            if !connection.is_closed() {
                return Some(connection.clone());
            }
            link.connection = None;
        }
        if link.next_attempt.is_some_and(|at| now() < at) {
            return None;
        }
        let connected = TcpStream::connect_timeout(&self.address, left_until(deadline))
            .and_then(|stream| Connection::<P>::start(stream, self.key.as_ref(), deadline));
        match connected {
            Ok((connection, reader)) => {
                link.backoff = FIRST_BACKOFF;
                link.next_attempt = None;
                join_finished(&mut link.readers);
                link.readers.push(reader);
                link.connection = Some(connection.clone());
                Some(connection)
            }
            Err(_) => {
                link.next_attempt = Some(now() + link.backoff);
                link.backoff = (link.backoff * 2).min(MAX_BACKOFF);
                None
            }
        }
    }

    /// Closes the connection and joins its reader; later calls get no reply.
    pub fn close(&self) {
        let readers = {
            let mut link = self.link.lock();
            link.closed = true;
            if let Some(connection) = link.connection.take() {
                connection.close();
            }
            std::mem::take(&mut link.readers)
        };
        join_all(readers);
    }
}

impl<P: Protocol> Drop for Caller<P> {
    fn drop(&mut self) {
        self.close();
    }
}
