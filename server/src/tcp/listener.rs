//! [`Listener`]: the serving side. Accepts connections on one address; reads each
//! connection's requests in order and handles each on a thread of its own (at most
//! [`MAX_IN_FLIGHT`] per connection), writing each reply when it is ready. Within the
//! [`ListenerLimits`] of its protocol: a connection over the limit is closed at once, one idle
//! for too long is closed, a frame must arrive whole within a deadline once it has begun, and
//! the bytes of the frames being read or handled on all connections together have a budget. A
//! connection that passes a limit or sends a malformed frame is closed; the caller's side
//! makes a new one on its next call. One address may hold only so many of the connections, so
//! one client cannot shut the others out, and a connection that must prove it holds a key has
//! [`HANDSHAKE_DEADLINE`] to do so. Who is served, and as what, is the listener's
//! [`Admission`]; each request reaches the handler with its connection's [`Standing`].

use super::admission::{admit, Admission, Admitted, Incoming, Standing};
use super::auth::{AuthError, Sealer};
use super::frame_reader::{read_request_frame, FrameBudget, FrameEnd, Reservation};
use super::limits::ListenerLimits;
use super::Protocol;
use crate::threads::{join_all, join_finished};
use crate::wire::frame::write_frame;
use std::io::{self, BufReader, BufWriter, Write};
use std::net::{IpAddr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;
use threadsim::sync::{Arc, Mutex};

/// Requests of one connection handled at once; the next waits for the oldest to finish.
pub const MAX_IN_FLIGHT: usize = 64;
/// How long writing one reply may take before the connection is given up.
const WRITE_TIMEOUT: Duration = Duration::from_secs(1);

/// What handles a request of a connection of a standing: `None` answers nothing (the node is
/// dead).
pub type Handler<P> =
    Arc<dyn Fn(Standing, <P as Protocol>::Request) -> Option<<P as Protocol>::Reply> + Send + Sync>;

/// A served connection: who it comes from, its stream (to shut it) and the thread reading it.
struct Served {
    peer: IpAddr,
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
    /// `handler`, within the protocol's limits ([`Protocol::LIMITS`]), whom `admission` lets in.
    pub fn bind<P: Protocol>(
        address: SocketAddr,
        handler: Handler<P>,
        admission: Admission,
    ) -> io::Result<Listener> {
        Listener::bind_with_limits::<P>(address, handler, P::LIMITS, admission)
    }

    /// [`Listener::bind`] with limits of its own (tests shorten the timeouts).
    pub fn bind_with_limits<P: Protocol>(
        address: SocketAddr,
        handler: Handler<P>,
        limits: ListenerLimits,
        admission: Admission,
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
                admission: Arc::new(admission),
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
    admission: Arc<Admission>,
    refused: Arc<AtomicU64>,
}

impl<P: Protocol> Clone for Serving<P> {
    fn clone(&self) -> Self {
        Serving {
            handler: self.handler.clone(),
            limits: self.limits,
            admission: self.admission.clone(),
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
    let budget = Arc::new(FrameBudget::new(serving.limits.max_buffered_bytes));
    for stream in listener.incoming() {
        if stopping.load(Ordering::SeqCst) {
            return;
        }
        // A connection that failed before it was accepted changes nothing.
        let Ok(stream) = stream else { continue };
        let Ok(peer) = stream.peer_addr().map(|address| address.ip()) else {
            continue;
        };
        let mut served = served.lock();
        reap_finished(&mut served);
        if !has_room_for(&served, peer, &serving.limits) {
            let _ = stream.shutdown(Shutdown::Both);
            continue;
        }
        let Ok(shutter) = stream.try_clone() else {
            continue;
        };
        let shutter: Shutter = Arc::new(Mutex::new(Some(shutter)));
        let own_shutter = shutter.clone();
        let own_serving = serving.clone();
        let budget = budget.clone();
        let thread = std::thread::Builder::new()
            .name("tcp-requests".into())
            .spawn(move || {
                serve::<P>(stream, &own_serving, &budget);
                own_shutter.lock().take();
            });
        if let Ok(thread) = thread {
            served.push(Served {
                peer,
                stream: shutter,
                thread,
            });
        }
        assert!(
            served.len() <= serving.limits.max_connections,
            "more connections served than the limit"
        );
    }
}

/// Joins the threads of the connections that have ended and forgets them.
fn reap_finished(served: &mut Vec<Served>) {
    let (finished, running): (Vec<_>, Vec<_>) = std::mem::take(served)
        .into_iter()
        .partition(|connection| connection.thread.is_finished());
    *served = running;
    join_all(
        finished
            .into_iter()
            .map(|connection| connection.thread)
            .collect(),
    );
}

/// Whether one more connection from `peer` is within the limits.
fn has_room_for(served: &[Served], peer: IpAddr, limits: &ListenerLimits) -> bool {
    if served.len() >= limits.max_connections {
        tracing::debug!(
            connections = served.len(),
            "a connection over the limit of {} closed",
            limits.max_connections
        );
        return false;
    }
    let from_peer = served
        .iter()
        .filter(|connection| connection.peer == peer)
        .count();
    if from_peer >= limits.max_connections_per_address {
        tracing::debug!(
            %peer,
            "a connection over the limit of {} from one address closed",
            limits.max_connections_per_address
        );
        return false;
    }
    true
}

/// The write half of a connection, and what seals its replies.
type ReplyWriter = Arc<Mutex<(BufWriter<TcpStream>, Sealer)>>;

/// Reads requests until the connection ends, misbehaves or passes a limit, handling each on its
/// own thread; a connection that must prove it holds a key, only after it has.
fn serve<P: Protocol>(stream: TcpStream, serving: &Serving<P>, budget: &Arc<FrameBudget>) {
    let limits = serving.limits;
    let Ok(writer) = stream
        .set_nodelay(true)
        .and_then(|()| stream.set_write_timeout(Some(WRITE_TIMEOUT)))
        .and_then(|()| stream.try_clone())
    else {
        return;
    };
    let mut writer = BufWriter::new(writer);
    let mut reader = BufReader::new(&stream);
    let mut connection = Incoming {
        reader: &mut reader,
        stream: &stream,
        budget,
        limits: &limits,
    };
    let admitted = admit(&serving.admission, &mut connection, &mut writer);
    let Some(Admitted {
        standing,
        sealer,
        mut opener,
        mut first,
    }) = serving.admitted(&stream, admitted)
    else {
        let _ = stream.shutdown(Shutdown::Both);
        return;
    };
    let writer: ReplyWriter = Arc::new(Mutex::new((writer, sealer)));
    let mut handlers = Vec::new();
    loop {
        let next = match first.take() {
            Some(frame) => Ok(frame),
            None => read_request_frame(&mut reader, &stream, budget, &limits),
        };
        let (frame, reserved) = match next {
            Ok(read) => read,
            Err(FrameEnd::Closed) => break,
            Err(passed) => {
                tracing::debug!("a connection closed: {passed}");
                break;
            }
        };
        let decoded = opener
            .open(frame)
            .map_err(|refused| refused.to_string())
            .and_then(|frame| P::decode_request(&frame).map_err(|refused| refused.to_string()));
        let (id, request) = match decoded {
            Ok(decoded) => decoded,
            Err(refused) => {
                serving.refuse(&stream, &refused);
                break;
            }
        };
        join_finished(&mut handlers);
        if handlers.len() >= MAX_IN_FLIGHT {
            join_all(vec![handlers.remove(0)]);
        }
        match serving.spawn_handler(standing, id, request, reserved, &writer) {
            Ok(thread) => handlers.push(thread),
            Err(_) => break,
        }
        assert!(
            handlers.len() <= MAX_IN_FLIGHT,
            "more requests in flight than the limit"
        );
    }
    let _ = stream.shutdown(Shutdown::Both);
    join_all(handlers);
}

impl<P: Protocol> Serving<P> {
    /// Counts and logs a connection closed for what it sent.
    fn refuse(&self, stream: &TcpStream, why: &dyn std::fmt::Display) {
        self.refused.fetch_add(1, Ordering::SeqCst);
        tracing::warn!(peer = ?stream.peer_addr().ok(), "a connection refused: {why}");
    }

    /// The connection as admitted, or `None` (refused, and counted, if it failed its
    /// handshake; a handshake frame past its limit or its deadline is a refusal like a wrong
    /// proof).
    fn admitted(
        &self,
        stream: &TcpStream,
        admitted: Result<Admitted, AuthError>,
    ) -> Option<Admitted> {
        match admitted {
            Ok(admitted) => Some(admitted),
            Err(AuthError::Io(error)) if error.kind() == io::ErrorKind::InvalidData => {
                self.refuse(stream, &format!("its handshake: {error}"));
                None
            }
            Err(AuthError::Io(error)) => {
                tracing::debug!("a connection closed during its handshake: {error}");
                None
            }
            Err(refused) => {
                self.refuse(stream, &refused);
                None
            }
        }
    }

    /// Handles one request on a thread of its own, which writes its reply when it is ready.
    fn spawn_handler(
        &self,
        standing: Standing,
        id: u64,
        request: P::Request,
        reserved: Reservation,
        writer: &ReplyWriter,
    ) -> io::Result<JoinHandle<()>> {
        let handler = self.handler.clone();
        let writer = writer.clone();
        std::thread::Builder::new()
            .name("tcp-handler".into())
            .spawn(move || {
                // The request's bytes stay counted until it is answered.
                let _reserved = reserved;
                let Some(reply) = handler(standing, request) else {
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
            })
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;
    use crate::tcp::{Caller, ClientProtocol, ClusterKey, HANDSHAKE_DEADLINE};
    use crate::wire::kv::{ClientReply, ClientRequest, StatusReport};
    use std::io::Read;

    /// A status whose term says who asked: 1 a stranger, 2 a key holder.
    fn status_of(standing: Standing) -> StatusReport {
        StatusReport {
            term: node::Term(match standing {
                Standing::Stranger => 1,
                Standing::KeyHolder => 2,
            }),
            leader: true,
            commit_index: node::LogIndex(0),
            last_applied: node::LogIndex(0),
            last_log_index: node::LogIndex(0),
        }
    }

    /// A client port that answers every status request with [`status_of`] its caller, with
    /// timeouts short enough for a test and at most two connections from one address.
    fn quick_listener(admission: Admission) -> Listener {
        let limits = ListenerLimits {
            frame_deadline: Duration::from_millis(300),
            idle_timeout: Duration::from_millis(300),
            max_connections_per_address: 2,
            ..ClientProtocol::LIMITS
        };
        let handler: Handler<ClientProtocol> =
            Arc::new(|standing, _| Some(ClientReply::Status(status_of(standing))));
        Listener::bind_with_limits::<ClientProtocol>(
            "127.0.0.1:0".parse().unwrap(),
            handler,
            limits,
            admission,
        )
        .expect("bind")
    }

    /// Who `caller` was taken for, if it was answered.
    fn standing_of(caller: &Caller<ClientProtocol>) -> Option<u64> {
        match caller.call(&ClientRequest::Status, Duration::from_millis(800)) {
            Some(ClientReply::Status(status)) => Some(status.term.0),
            _ => None,
        }
    }

    /// How long until the server closes `stream` (at most 15 s: past the handshake deadline and short of the idle timeout).
    fn closed_after(mut stream: &TcpStream) -> Duration {
        let start = crate::real_time::now();
        stream
            .set_read_timeout(Some(Duration::from_secs(15)))
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
        let handler: Handler<crate::tcp::RaftRpc> = Arc::new(|_, _| {
            Some(Response::RequestVote(RequestVoteReply {
                term: node::Term(1),
                vote_granted: false,
            }))
        });
        Listener::bind::<crate::tcp::RaftRpc>(
            "127.0.0.1:0".parse().unwrap(),
            handler,
            Admission::KeyHolders(key.clone()),
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
    fn a_stranger_on_a_keyed_node_port_has_the_handshake_deadline_not_the_idle_timeout() {
        let key = ClusterKey::generate().unwrap();
        let listener = keyed_listener(&key);
        let silent = TcpStream::connect(listener.local_addr()).unwrap();
        let waited = closed_after(&silent);
        assert!(
            waited >= HANDSHAKE_DEADLINE - Duration::from_millis(100)
                && waited < HANDSHAKE_DEADLINE + Duration::from_secs(1),
            "closed after {waited:?}, not after the handshake deadline"
        );
    }

    #[test]
    fn one_address_holds_at_most_its_share_of_the_connections() {
        let listener = quick_listener(Admission::Anyone);
        let first = TcpStream::connect(listener.local_addr()).unwrap();
        let second = TcpStream::connect(listener.local_addr()).unwrap();
        let third = TcpStream::connect(listener.local_addr()).unwrap();
        assert!(
            closed_after(&third) < Duration::from_millis(200),
            "a third connection from one address closed at once"
        );
        // Another address (all of 127/8 is this machine) is served meanwhile.
        let mut other =
            crate::tcp::connect_from([127, 0, 0, 2].into(), listener.local_addr()).unwrap();
        let request = ClientProtocol::encode_request(7, &ClientRequest::Status);
        crate::wire::frame::write_frame(&mut other, &request).unwrap();
        other
            .set_read_timeout(Some(Duration::from_secs(2)))
            .unwrap();
        let reply = crate::wire::frame::read_frame(&mut other)
            .expect("an answer")
            .expect("a frame");
        assert!(matches!(
            ClientProtocol::decode_reply(&reply),
            Ok((7, ClientReply::Status(_)))
        ));
        drop((first, second));
    }

    #[test]
    fn a_client_port_serves_strangers_and_tells_key_holders_apart() {
        let key = ClusterKey::generate().unwrap();
        let listener = quick_listener(Admission::AnyoneAndKeyHolders(key.clone()));
        let stranger = Caller::<ClientProtocol>::new(listener.local_addr(), None);
        assert_eq!(standing_of(&stranger), Some(1));
        stranger.close();
        let holder = Caller::<ClientProtocol>::new(listener.local_addr(), Some(key));
        assert_eq!(standing_of(&holder), Some(2));
        assert_eq!(standing_of(&holder), Some(2), "and on its next call");
        holder.close();
        let impostor = Caller::<ClientProtocol>::new(
            listener.local_addr(),
            Some(ClusterKey::generate().unwrap()),
        );
        assert_eq!(standing_of(&impostor), None, "another key is refused");
        impostor.close();
        assert!(listener.refused() >= 1);
    }

    #[test]
    fn an_idle_connection_and_a_stalled_frame_are_closed_and_an_honest_call_is_answered() {
        let listener = quick_listener(Admission::Anyone);
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
