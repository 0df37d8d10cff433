//! [`Listener`]: the serving side. Accepts connections on one address; reads each
//! connection's requests in order and handles each on a thread of its own (at most
//! [`MAX_IN_FLIGHT`] per connection), writing each reply when it is ready. Within the
//! [`ListenerLimits`] of its protocol: a connection over the limit is closed at once, one idle
//! for too long is closed, a frame must arrive whole within a deadline once it has begun, and
//! the bytes of the frames being read or handled on all connections together have a budget. A
//! connection that passes a limit or sends a malformed frame is closed; the caller's side
//! makes a new one on its next call.

use super::auth::{
    answer_handshake, AuthError, ClusterKey, Opener, Sealer, MAX_HANDSHAKE_FRAME_BYTES,
};
use super::frame_reader::{read_request_frame, FrameBudget, FrameEnd};
use super::Protocol;
use crate::threads::{join_all, join_finished};
use crate::wire::frame::write_frame;
use std::io::{self, BufReader, BufWriter, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;
use threadsim::sync::{Arc, Mutex};

/// Requests of one connection handled at once; the next waits for the oldest to finish.
pub const MAX_IN_FLIGHT: usize = 64;
/// How long writing one reply may take before the connection is given up.
const WRITE_TIMEOUT: Duration = Duration::from_secs(1);

/// What one listener allows its connections (see the module's documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListenerLimits {
    /// Connections served at once; one more is closed as soon as it is accepted.
    pub max_connections: usize,
    /// The largest request frame.
    pub max_request_bytes: usize,
    /// The bytes of request frames being read or handled, on every connection together; a
    /// frame that would pass it closes its connection.
    pub max_buffered_bytes: usize,
    /// How long a frame may take to arrive once its first byte has.
    pub frame_deadline: Duration,
    /// How long a connection may stay silent between frames before it is closed.
    pub idle_timeout: Duration,
}

/// What handles a request: `None` answers nothing (the node is dead).
pub type Handler<P> =
    Arc<dyn Fn(<P as Protocol>::Request) -> Option<<P as Protocol>::Reply> + Send + Sync>;

/// A served connection: its stream (to shut it) and the thread reading it.
struct Served {
    stream: Shutter,
    thread: JoinHandle<()>,
}

/// A second handle on a served connection, to shut it from outside, that its own thread drops
/// when it ends: a handle kept past that would hold the socket open (half closed, its peer's
/// writes unanswered) until the next connection is accepted.
type Shutter = Arc<Mutex<Option<TcpStream>>>;

/// Serves one address (see the module's documentation). Dropping it stops it.
pub struct Listener {
    address: SocketAddr,
    refused: Arc<AtomicU64>,
    stopping: Arc<AtomicBool>,
    accepter: Option<JoinHandle<()>>,
    served: Arc<Mutex<Vec<Served>>>,
}

impl Listener {
    /// Listens on `address` (port 0 picks a free one) and serves every connection with
    /// `handler`, within the protocol's limits ([`Protocol::LIMITS`]). With a `key`, only a
    /// connection that proves it holds it is served ([`super::auth`]).
    pub fn bind<P: Protocol>(
        address: SocketAddr,
        handler: Handler<P>,
        key: Option<ClusterKey>,
    ) -> io::Result<Listener> {
        Listener::bind_with_limits::<P>(address, handler, P::LIMITS, key)
    }

    /// [`Listener::bind`] with limits of its own (tests shorten the timeouts).
    pub fn bind_with_limits<P: Protocol>(
        address: SocketAddr,
        handler: Handler<P>,
        limits: ListenerLimits,
        key: Option<ClusterKey>,
    ) -> io::Result<Listener> {
        let listener = TcpListener::bind(address)?;
        let address = listener.local_addr()?;
        let stopping = Arc::new(AtomicBool::new(false));
        let refused = Arc::new(AtomicU64::new(0));
        let served: Arc<Mutex<Vec<Served>>> = Arc::default();
        let accepter = {
            let stopping = stopping.clone();
            let served = served.clone();
            let serving = Serving {
                handler,
                limits,
                key: key.map(Arc::new),
                refused: refused.clone(),
            };
            std::thread::Builder::new()
                .name(format!("accept-{address}"))
                .spawn(move || accept::<P>(&listener, &stopping, &served, &serving))?
        };
        Ok(Listener {
            address,
            refused,
            stopping,
            accepter: Some(accepter),
            served,
        })
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.address
    }

    /// Connections closed for what they sent: a failed handshake, a frame whose tag is wrong,
    /// a malformed frame or message.
    pub fn refused(&self) -> u64 {
        self.refused.load(Ordering::SeqCst)
    }

    /// Stops accepting, closes every connection and joins every thread it started.
    pub fn close(&mut self) {
        let Some(accepter) = self.accepter.take() else {
            return;
        };
        self.stopping.store(true, Ordering::SeqCst);
        // Wakes the accept call, which then sees the flag.
        let _ = TcpStream::connect_timeout(&self.address, Duration::from_secs(1));
        join_all(vec![accepter]);
        let served = std::mem::take(&mut *self.served.lock());
        for connection in &served {
            if let Some(stream) = connection.stream.lock().as_ref() {
                let _ = stream.shutdown(Shutdown::Both);
            }
        }
        join_all(
            served
                .into_iter()
                .map(|connection| connection.thread)
                .collect(),
        );
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.close();
    }
}

/// What every connection of one listener is served with.
struct Serving<P: Protocol> {
    handler: Handler<P>,
    limits: ListenerLimits,
    key: Option<Arc<ClusterKey>>,
    refused: Arc<AtomicU64>,
}

impl<P: Protocol> Clone for Serving<P> {
    fn clone(&self) -> Self {
        Serving {
            handler: self.handler.clone(),
            limits: self.limits,
            key: self.key.clone(),
            refused: self.refused.clone(),
        }
    }
}

fn accept<P: Protocol>(
    listener: &TcpListener,
    stopping: &AtomicBool,
    served: &Mutex<Vec<Served>>,
    serving: &Serving<P>,
) {
    let limits = serving.limits;
    let budget = Arc::new(FrameBudget::new(limits.max_buffered_bytes));
    for stream in listener.incoming() {
        if stopping.load(Ordering::SeqCst) {
            return;
        }
        // A connection that failed before it was accepted changes nothing.
        let Ok(stream) = stream else { continue };
        let mut served = served.lock();
        let (finished, running): (Vec<_>, Vec<_>) = std::mem::take(&mut *served)
            .into_iter()
            .partition(|connection| connection.thread.is_finished());
        *served = running;
        join_all(
            finished
                .into_iter()
                .map(|connection| connection.thread)
                .collect(),
        );
        if served.len() >= limits.max_connections {
            tracing::debug!(
                connections = served.len(),
                "a connection over the limit of {} closed",
                limits.max_connections
            );
            let _ = stream.shutdown(Shutdown::Both);
            continue;
        }
        let Ok(shutter) = stream.try_clone() else {
            continue;
        };
        let shutter: Shutter = Arc::new(Mutex::new(Some(shutter)));
        let own_shutter = shutter.clone();
        let serving = serving.clone();
        let budget = budget.clone();
        let thread = std::thread::Builder::new()
            .name("tcp-requests".into())
            .spawn(move || {
                serve::<P>(stream, &serving, &budget);
                own_shutter.lock().take();
            });
        if let Ok(thread) = thread {
            served.push(Served {
                stream: shutter,
                thread,
            });
        }
    }
}

/// Reads requests until the connection ends, misbehaves or passes a limit, handling each on its
/// own thread; with a key, only after the connection has proved it holds it.
fn serve<P: Protocol>(stream: TcpStream, serving: &Serving<P>, budget: &Arc<FrameBudget>) {
    let limits = serving.limits;
    let refuse = |why: &dyn std::fmt::Display| {
        serving.refused.fetch_add(1, Ordering::SeqCst);
        tracing::warn!(peer = ?stream.peer_addr().ok(), "a connection refused: {why}");
    };
    let Ok(writer) = stream
        .set_nodelay(true)
        .and_then(|()| stream.set_write_timeout(Some(WRITE_TIMEOUT)))
        .and_then(|()| stream.try_clone())
    else {
        return;
    };
    let mut writer = BufWriter::new(writer);
    let mut reader = BufReader::new(&stream);
    let (sealer, mut opener) = match &serving.key {
        None => (Sealer::plain(), Opener::plain()),
        Some(key) => match handshake(key, &mut reader, &stream, &mut writer, budget, &limits) {
            Ok(halves) => halves,
            // A handshake frame past its limit or its deadline is a refusal like a wrong proof.
            Err(AuthError::Io(error)) if error.kind() == io::ErrorKind::InvalidData => {
                refuse(&format!("its handshake: {error}"));
                let _ = stream.shutdown(Shutdown::Both);
                return;
            }
            Err(AuthError::Io(error)) => {
                tracing::debug!("a connection closed during its handshake: {error}");
                let _ = stream.shutdown(Shutdown::Both);
                return;
            }
            Err(refused) => {
                refuse(&refused);
                let _ = stream.shutdown(Shutdown::Both);
                return;
            }
        },
    };
    let writer = Arc::new(Mutex::new((writer, sealer)));
    let mut handlers = Vec::new();
    loop {
        let (frame, reserved) = match read_request_frame(&mut reader, &stream, budget, &limits) {
            Ok(read) => read,
            Err(FrameEnd::Closed) => break,
            Err(passed) => {
                tracing::debug!("a connection closed: {passed}");
                break;
            }
        };
        let frame = match opener.open(frame) {
            Ok(message) => message,
            Err(refused) => {
                refuse(&refused);
                break;
            }
        };
        let (id, request) = match P::decode_request(&frame) {
            Ok(decoded) => decoded,
            Err(refused) => {
                refuse(&refused);
                break;
            }
        };
        drop(frame);
        join_finished(&mut handlers);
        if handlers.len() >= MAX_IN_FLIGHT {
            join_all(vec![handlers.remove(0)]);
        }
        let handler = serving.handler.clone();
        let writer = writer.clone();
        let spawned = std::thread::Builder::new()
            .name("tcp-handler".into())
            .spawn(move || {
                // The request's bytes stay counted until it is answered.
                let _reserved = reserved;
                let Some(reply) = handler(request) else {
                    return;
                };
                let mut writer = writer.lock();
                let (writer, sealer) = &mut *writer;
                let frame = sealer.seal(P::encode_reply(id, &reply));
                if write_frame(writer, &frame)
                    .and_then(|()| writer.flush())
                    .is_err()
                {
                    let _ = writer.get_ref().shutdown(Shutdown::Both);
                }
            });
        match spawned {
            Ok(thread) => handlers.push(thread),
            Err(_) => break,
        }
    }
    let _ = stream.shutdown(Shutdown::Both);
    join_all(handlers);
}

/// The listener's side of the handshake ([`super::auth`]), its frames read within the
/// listener's limits like any request.
fn handshake(
    key: &ClusterKey,
    reader: &mut BufReader<&TcpStream>,
    stream: &TcpStream,
    writer: &mut BufWriter<TcpStream>,
    budget: &Arc<FrameBudget>,
    limits: &ListenerLimits,
) -> Result<(Sealer, Opener), AuthError> {
    let limits = ListenerLimits {
        max_request_bytes: MAX_HANDSHAKE_FRAME_BYTES,
        ..*limits
    };
    let mut receive = || match read_request_frame(reader, stream, budget, &limits) {
        Ok((frame, _reserved)) => Ok(frame),
        Err(FrameEnd::Closed) => Err(io::ErrorKind::UnexpectedEof.into()),
        Err(passed) => Err(io::Error::new(
            io::ErrorKind::InvalidData,
            passed.to_string(),
        )),
    };
    let hello = receive()?;
    answer_handshake(
        key,
        &hello,
        &mut |frame| write_frame(writer, frame).and_then(|()| writer.flush()),
        &mut receive,
    )
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;
    use crate::tcp::{Caller, ClientProtocol};
    use crate::wire::kv::{ClientReply, ClientRequest, StatusReport};
    use std::io::Read;

    /// A listener that answers every status request, with timeouts short enough for a test.
    fn quick_listener() -> Listener {
        let limits = ListenerLimits {
            frame_deadline: Duration::from_millis(300),
            idle_timeout: Duration::from_millis(300),
            ..ClientProtocol::LIMITS
        };
        let status = StatusReport {
            term: node::Term(1),
            leader: true,
            commit_index: node::LogIndex(0),
            last_applied: node::LogIndex(0),
            last_log_index: node::LogIndex(0),
        };
        let handler: Handler<ClientProtocol> =
            Arc::new(move |_: ClientRequest| Some(ClientReply::Status(status)));
        Listener::bind_with_limits::<ClientProtocol>(
            "127.0.0.1:0".parse().unwrap(),
            handler,
            limits,
            None,
        )
        .expect("bind")
    }

    /// How long until the server closes `stream` (at most 5 s).
    fn closed_after(mut stream: &TcpStream) -> Duration {
        let start = crate::real_time::now();
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let mut byte = [0u8; 1];
        assert!(
            matches!(stream.read(&mut byte), Ok(0) | Err(_)),
            "the server sent something"
        );
        crate::real_time::now() - start
    }

    /// A node port that answers every vote request, keyed with `key`.
    fn keyed_listener(key: &ClusterKey) -> Listener {
        use node::messages::{RequestVoteReply, Response};
        let handler: Handler<crate::tcp::RaftRpc> = Arc::new(|_| {
            Some(Response::RequestVote(RequestVoteReply {
                term: node::Term(1),
                vote_granted: false,
            }))
        });
        Listener::bind::<crate::tcp::RaftRpc>(
            "127.0.0.1:0".parse().unwrap(),
            handler,
            Some(key.clone()),
        )
        .expect("bind")
    }

    fn vote() -> node::messages::Request {
        node::messages::Request::RequestVote(node::messages::RequestVoteArgs {
            term: node::Term(1),
            candidate: node::NodeId(1),
            last_log_index: node::LogIndex(0),
            last_log_term: node::Term(0),
            pre_vote: false,
            transfer: false,
        })
    }

    #[test]
    fn a_keyed_port_answers_members_only_and_counts_every_refusal() {
        let key = ClusterKey::generate().unwrap();
        let listener = keyed_listener(&key);
        let member = Caller::<crate::tcp::RaftRpc>::new(listener.local_addr(), Some(key));
        for _ in 0..3 {
            assert!(member.call(&vote(), Duration::from_secs(2)).is_some());
        }
        member.close();
        assert_eq!(listener.refused(), 0);
        let stranger = Caller::<crate::tcp::RaftRpc>::new(listener.local_addr(), None);
        assert!(stranger.call(&vote(), Duration::from_millis(500)).is_none());
        stranger.close();
        let other_cluster = Caller::<crate::tcp::RaftRpc>::new(
            listener.local_addr(),
            Some(ClusterKey::generate().unwrap()),
        );
        assert!(other_cluster
            .call(&vote(), Duration::from_millis(500))
            .is_none());
        other_cluster.close();
        // A raw frame announcing more than a handshake takes: closed before it is read.
        let mut hog = TcpStream::connect(listener.local_addr()).unwrap();
        hog.write_all(&(60u32 << 20).to_le_bytes()).unwrap();
        assert!(closed_after(&hog) < Duration::from_secs(2));
        // The stranger's frame, the other cluster's hello and the hog's length: each counted
        // (the stranger's caller may have tried more than once within its timeout).
        assert!(
            listener.refused() >= 3,
            "the stranger, the other cluster and the hog: {}",
            listener.refused()
        );
    }

    #[test]
    fn an_idle_connection_and_a_stalled_frame_are_closed_and_an_honest_call_is_answered() {
        let listener = quick_listener();
        let idle = TcpStream::connect(listener.local_addr()).unwrap();
        let waited = closed_after(&idle);
        assert!(waited < Duration::from_secs(2), "idle for {waited:?}");
        let mut stalled = TcpStream::connect(listener.local_addr()).unwrap();
        // Half a length, then nothing: the frame has begun and must end within its deadline.
        stalled.write_all(&[9, 0]).unwrap();
        let waited = closed_after(&stalled);
        assert!(waited < Duration::from_secs(2), "stalled for {waited:?}");
        let caller = Caller::<ClientProtocol>::new(listener.local_addr(), None);
        assert!(matches!(
            caller.call(&ClientRequest::Status, Duration::from_secs(2)),
            Some(ClientReply::Status(_))
        ));
        caller.close();
    }
}
