//! [`Listener`]: the serving side. Accepts connections on one address; reads each
//! connection's requests in order and handles each on a thread of its own (at most
//! [`MAX_IN_FLIGHT`] per connection), writing each reply when it is ready. A connection that
//! sends a malformed frame is closed.

use super::Protocol;
use crate::threads::{join_all, join_finished};
use crate::wire::frame::{read_frame, write_frame};
use std::io::{self, BufReader, BufWriter, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;
use threadsim::sync::{Arc, Mutex};

/// Requests of one connection handled at once; the next waits for the oldest to finish.
pub const MAX_IN_FLIGHT: usize = 64;
/// How long writing one reply may take before the connection is given up.
const WRITE_TIMEOUT: Duration = Duration::from_secs(1);

/// What handles a request: `None` answers nothing (the node is dead).
pub type Handler<P> =
    Arc<dyn Fn(<P as Protocol>::Request) -> Option<<P as Protocol>::Reply> + Send + Sync>;

/// A served connection: its stream (to shut it) and the thread reading it.
struct Served {
    stream: TcpStream,
    thread: JoinHandle<()>,
}

/// Serves one address (see the module's documentation). Dropping it stops it.
pub struct Listener {
    address: SocketAddr,
    stopping: Arc<AtomicBool>,
    accepter: Option<JoinHandle<()>>,
    served: Arc<Mutex<Vec<Served>>>,
}

impl Listener {
    /// Listens on `address` (port 0 picks a free one) and serves every connection with
    /// `handler`.
    pub fn bind<P: Protocol>(address: SocketAddr, handler: Handler<P>) -> io::Result<Listener> {
        let listener = TcpListener::bind(address)?;
        let address = listener.local_addr()?;
        let stopping = Arc::new(AtomicBool::new(false));
        let served: Arc<Mutex<Vec<Served>>> = Arc::default();
        let accepter = {
            let stopping = stopping.clone();
            let served = served.clone();
            std::thread::Builder::new()
                .name(format!("accept-{address}"))
                .spawn(move || accept::<P>(&listener, &stopping, &served, &handler))?
        };
        Ok(Listener {
            address,
            stopping,
            accepter: Some(accepter),
            served,
        })
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.address
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
            let _ = connection.stream.shutdown(Shutdown::Both);
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

fn accept<P: Protocol>(
    listener: &TcpListener,
    stopping: &AtomicBool,
    served: &Mutex<Vec<Served>>,
    handler: &Handler<P>,
) {
    for stream in listener.incoming() {
        if stopping.load(Ordering::SeqCst) {
            return;
        }
        // A connection that failed before it was accepted changes nothing.
        let Ok(stream) = stream else { continue };
        let Ok(shutter) = stream.try_clone() else {
            continue;
        };
        let handler = handler.clone();
        let thread = std::thread::Builder::new()
            .name("tcp-requests".into())
            .spawn(move || serve::<P>(stream, &handler));
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
        if let Ok(thread) = thread {
            served.push(Served {
                stream: shutter,
                thread,
            });
        }
    }
}

/// Reads requests until the connection ends or misbehaves, handling each on its own thread.
fn serve<P: Protocol>(stream: TcpStream, handler: &Handler<P>) {
    let Ok(writer) = stream
        .set_nodelay(true)
        .and_then(|()| stream.set_write_timeout(Some(WRITE_TIMEOUT)))
        .and_then(|()| stream.try_clone())
    else {
        return;
    };
    let writer = Arc::new(Mutex::new(BufWriter::new(writer)));
    let mut handlers = Vec::new();
    let mut reader = BufReader::new(&stream);
    while let Ok(Some(frame)) = read_frame(&mut reader) {
        let Ok((id, request)) = P::decode_request(&frame) else {
            break;
        };
        join_finished(&mut handlers);
        if handlers.len() >= MAX_IN_FLIGHT {
            join_all(vec![handlers.remove(0)]);
        }
        let handler = handler.clone();
        let writer = writer.clone();
        let spawned = std::thread::Builder::new()
            .name("tcp-handler".into())
            .spawn(move || {
                let Some(reply) = handler(request) else {
                    return;
                };
                let frame = P::encode_reply(id, &reply);
                let mut writer = writer.lock();
                if write_frame(&mut *writer, &frame)
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
