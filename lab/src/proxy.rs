//! [`LinkProxy`]: one directed link between two servers, made a TCP proxy so a nemesis can cut
//! it or slow it without root. Node A is told that node B lives at the proxy's address; the
//! proxy forwards A's connections to B's real address. Cutting the proxy closes the connections
//! it carries and refuses new ones, so A's calls to B get no reply while B's calls to A (through
//! the proxy of the link B to A) still go through: a one-way cut. Cutting both directions of
//! every link of a node partitions it.

use crate::link_fault::LinkFault;
use server::real_time::{now, sleep_until};
use server::threads::{join_all, join_finished};
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::thread::JoinHandle;
use std::time::Duration;
use threadsim::sync::{Arc, Mutex};

/// The bytes a pump forwards at once.
const CHUNK_BYTES: usize = 64 * 1024;

/// The connections a proxy carries. Locked before the fault when both are.
struct Carried {
    /// Both ends of every connection, to close them on a cut.
    streams: Vec<TcpStream>,
    pumps: Vec<JoinHandle<()>>,
    stopping: bool,
}

/// One directed link (see the module's documentation). Dropping it closes it.
pub struct LinkProxy {
    address: SocketAddr,
    carried: Arc<Mutex<Carried>>,
    fault: Arc<Mutex<LinkFault>>,
    accepter: Option<JoinHandle<()>>,
}

impl LinkProxy {
    /// A healthy proxy on a free port of localhost, forwarding to `target`.
    pub fn start(target: SocketAddr) -> io::Result<LinkProxy> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let address = listener.local_addr()?;
        let carried = Arc::new(Mutex::new(Carried {
            streams: Vec::new(),
            pumps: Vec::new(),
            stopping: false,
        }));
        let fault = Arc::new(Mutex::new(LinkFault::Healthy));
        let accepter = {
            let (carried, fault) = (carried.clone(), fault.clone());
            std::thread::Builder::new()
                .name(format!("proxy-{address}"))
                .spawn(move || accept(&listener, target, &carried, &fault))?
        };
        Ok(LinkProxy {
            address,
            carried,
            fault,
            accepter: Some(accepter),
        })
    }

    /// Where the caller connects.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// What the link does now.
    pub fn fault(&self) -> LinkFault {
        *self.fault.lock()
    }

    /// Makes the link do `fault` from now on; a cut closes what it carries. A proxy carries
    /// byte streams, so it cannot lose or duplicate packets: asking it to is a bug of the
    /// caller's ([`LinkFault::is_per_packet`] says which faults need a packet filter).
    pub fn set(&self, fault: LinkFault) {
        assert!(
            !fault.is_per_packet(),
            "a proxy cannot make a per-packet fault ({fault})"
        );
        let mut carried = self.carried.lock();
        *self.fault.lock() = fault;
        if fault == LinkFault::Cut {
            close_all(&mut carried);
        }
    }

    /// Stops accepting, closes every connection and joins every thread.
    pub fn close(&mut self) {
        let Some(accepter) = self.accepter.take() else {
            return;
        };
        let pumps = {
            let mut carried = self.carried.lock();
            carried.stopping = true;
            close_all(&mut carried);
            std::mem::take(&mut carried.pumps)
        };
        // Wakes the accept call, which then sees `stopping`.
        let _ = TcpStream::connect_timeout(&self.address, Duration::from_secs(1));
        join_all(vec![accepter]);
        join_all(pumps);
        let pumps = std::mem::take(&mut self.carried.lock().pumps);
        join_all(pumps);
    }
}

impl Drop for LinkProxy {
    fn drop(&mut self) {
        self.close();
    }
}

fn close_all(carried: &mut Carried) {
    for stream in carried.streams.drain(..) {
        let _ = stream.shutdown(Shutdown::Both);
    }
}

fn accept(
    listener: &TcpListener,
    target: SocketAddr,
    carried: &Mutex<Carried>,
    fault: &Arc<Mutex<LinkFault>>,
) {
    let is_cut = || *fault.lock() == LinkFault::Cut;
    for incoming in listener.incoming() {
        let Ok(incoming) = incoming else { continue };
        if carried.lock().stopping {
            return;
        }
        if is_cut() {
            let _ = incoming.shutdown(Shutdown::Both);
            continue;
        }
        let Ok(outgoing) = TcpStream::connect_timeout(&target, Duration::from_secs(1)) else {
            // The target is down: the caller sees its connection closed, as it would.
            let _ = incoming.shutdown(Shutdown::Both);
            continue;
        };
        let _ = incoming.set_nodelay(true);
        let _ = outgoing.set_nodelay(true);
        let (Ok(in_reader), Ok(in_writer), Ok(out_reader), Ok(out_writer)) = (
            incoming.try_clone(),
            incoming.try_clone(),
            outgoing.try_clone(),
            outgoing.try_clone(),
        ) else {
            continue;
        };
        let mut state = carried.lock();
        // A cut that came while connecting closes this connection too.
        if state.stopping || is_cut() {
            let _ = incoming.shutdown(Shutdown::Both);
            let _ = outgoing.shutdown(Shutdown::Both);
            continue;
        }
        join_finished(&mut state.pumps);
        state.streams.extend([incoming, outgoing]);
        for (from, to) in [(in_reader, out_writer), (out_reader, in_writer)] {
            let fault = fault.clone();
            let spawned = std::thread::Builder::new()
                .name("proxy-pump".into())
                .spawn(move || pump(from, to, &fault));
            if let Ok(pump) = spawned {
                state.pumps.push(pump);
            }
        }
    }
}

/// Forwards bytes from `from` to `to` until either end closes, holding each chunk while the
/// link is delayed.
fn pump(mut from: TcpStream, mut to: TcpStream, fault: &Mutex<LinkFault>) {
    let mut buffer = vec![0; CHUNK_BYTES];
    while let Ok(read) = from.read(&mut buffer) {
        if read == 0 {
            break;
        }
        let delay = match *fault.lock() {
            LinkFault::Delayed(delay) => Some(delay),
            _ => None,
        };
        if let Some(delay) = delay {
            sleep_until(now() + delay);
        }
        if to.write_all(&buffer[..read]).is_err() {
            break;
        }
    }
    let _ = from.shutdown(Shutdown::Both);
    let _ = to.shutdown(Shutdown::Both);
}
