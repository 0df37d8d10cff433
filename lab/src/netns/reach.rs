//! Checking that new hosts reach each other before a server runs on them: a listener is opened
//! in each host's namespace (a thread that enters a namespace with `setns(2)` moves alone, and a
//! socket stays in the namespace it was made in), and a thread in every other host, and the
//! root namespace, connects to it. A machine whose root namespace filters bridged traffic (a
//! `FORWARD` policy of drop with `bridge-nf-call-iptables` on) fails here, with what to look at,
//! instead of as a cluster that never elects a leader.

use super::Hosts;
use node::NodeId;
use std::fs::File;
use std::io;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::time::Duration;

/// How long one connection may take on a bridge of one machine.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// Runs `work` on a thread of its own inside the namespace `file` names.
pub(crate) fn in_namespace<T: Send>(
    file: &File,
    work: impl FnOnce() -> io::Result<T> + Send,
) -> io::Result<T> {
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                // SAFETY: `file` is an open namespace file; only this thread moves.
                if unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
                    return Err(io::Error::last_os_error());
                }
                work()
            })
            .join()
            .expect("a connecting thread does not panic")
    })
}

/// Fails, naming the pair, unless every host reaches every other and the root namespace
/// reaches every host.
pub(super) fn check(hosts: &Hosts) -> io::Result<()> {
    let ids: Vec<NodeId> = (0..hosts.len()).map(NodeId).collect();
    let files = ids
        .iter()
        .map(|&id| hosts.namespace_file(id))
        .collect::<io::Result<Vec<File>>>()?;
    let listeners = ids
        .iter()
        .zip(&files)
        .map(|(&id, file)| {
            let address = SocketAddr::from((hosts.address(id), 0));
            in_namespace(file, || TcpListener::bind(address))
        })
        .collect::<io::Result<Vec<TcpListener>>>()?;
    let targets = listeners
        .iter()
        .map(TcpListener::local_addr)
        .collect::<io::Result<Vec<SocketAddr>>>()?;
    let unreachable = |from: &str, to: NodeId, error: io::Error| {
        io::Error::other(format!(
            "{from} cannot reach {to} at {} on the hosts' bridge: {error} (is bridged traffic \
             filtered? see /proc/sys/net/bridge/bridge-nf-call-iptables and the FORWARD chain)",
            targets[to.0 as usize]
        ))
    };
    for (&from, file) in ids.iter().zip(&files) {
        in_namespace(file, || {
            for (&to, target) in ids.iter().zip(&targets) {
                if to != from {
                    TcpStream::connect_timeout(target, CONNECT_TIMEOUT)
                        .map_err(|error| unreachable(&format!("host {from}"), to, error))?;
                }
            }
            Ok(())
        })?;
    }
    for (&to, target) in ids.iter().zip(&targets) {
        TcpStream::connect_timeout(target, CONNECT_TIMEOUT)
            .map_err(|error| unreachable("the root namespace", to, error))?;
    }
    Ok(())
}
