//! A netlink socket that speaks nfnetlink_queue (`linux/netfilter/nfnetlink_queue.h`): the
//! kernel hands it each packet a `NFQUEUE` rule queued, by id and without its bytes, and sends
//! the packet on when the socket gives its verdict, in any order and as late as the socket
//! likes. That is how a host's links delay packets here: the kernel's own delayer (`tc netem`) is
//! not built into this machine's kernel.
//!
//! A socket belongs to the network namespace it was made in, whatever thread uses it later, so
//! it is opened by a thread inside the host's namespace.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Duration;

const NFNL_SUBSYS_QUEUE: u16 = 3;
const NFQNL_MSG_PACKET: u16 = 0;
const NFQNL_MSG_VERDICT: u16 = 1;
const NFQNL_MSG_CONFIG: u16 = 2;
const NFQA_PACKET_HDR: u16 = 1;
const NFQA_VERDICT_HDR: u16 = 2;
const NFQA_CFG_CMD: u16 = 1;
const NFQA_CFG_PARAMS: u16 = 2;
const NFQA_CFG_QUEUE_MAXLEN: u16 = 3;
const NFQNL_CFG_CMD_BIND: u8 = 1;
const NFQNL_COPY_META: u8 = 1;
const NF_ACCEPT: u32 = 1;
const NLMSG_ERROR: u16 = 2;
const NLMSG_HEADER_BYTES: usize = 16;
const NFGENMSG_BYTES: usize = 4;
/// How many packets one queue may hold before the kernel drops the next, as a full router does.
const QUEUE_MAX_PACKETS: u32 = 16_384;
/// The socket's receive buffer: packets announced faster than they are read wait here.
const RECEIVE_BUFFER_BYTES: libc::c_int = 8 << 20;

/// A packet the kernel holds until it has a verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct QueuedPacket {
    /// The queue's number (which link, here).
    pub queue: u16,
    /// The kernel's id for it, unique within its queue.
    pub id: u32,
}

/// The socket (see the module's documentation).
pub(super) struct QueueSocket {
    fd: OwnedFd,
    sequence: u32,
}

impl QueueSocket {
    /// Opens a socket in the calling thread's network namespace and binds it to `queues`.
    pub fn open(queues: &[u16]) -> io::Result<QueueSocket> {
        // SAFETY: plain socket creation; the result is checked.
        let fd = unsafe {
            libc::socket(
                libc::AF_NETLINK,
                libc::SOCK_RAW | libc::SOCK_CLOEXEC,
                libc::NETLINK_NETFILTER,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` was just opened and nothing else owns it.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        // SAFETY: an all-zero sockaddr_nl is valid; the family is set below.
        let mut address: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
        address.nl_family = libc::AF_NETLINK as libc::sa_family_t;
        // SAFETY: `address` is a sockaddr_nl of the size given.
        let bound = unsafe {
            libc::bind(
                fd.as_raw_fd(),
                (&address as *const libc::sockaddr_nl).cast(),
                std::mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t,
            )
        };
        if bound != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: an int option of the size given; FORCE needs root, and plain is tried after.
        unsafe {
            for option in [libc::SO_RCVBUFFORCE, libc::SO_RCVBUF] {
                let size = RECEIVE_BUFFER_BYTES;
                if libc::setsockopt(
                    fd.as_raw_fd(),
                    libc::SOL_SOCKET,
                    option,
                    (&size as *const libc::c_int).cast(),
                    std::mem::size_of::<libc::c_int>() as libc::socklen_t,
                ) == 0
                {
                    break;
                }
            }
        }
        let mut socket = QueueSocket { fd, sequence: 0 };
        for &queue in queues {
            socket.bind(queue).map_err(|error| {
                io::Error::new(
                    error.kind(),
                    format!(
                        "cannot bind netfilter queue {queue}: {error} (is the kernel's \
                         nfnetlink_queue module available?)"
                    ),
                )
            })?;
        }
        Ok(socket)
    }

    /// Binds `queue` and asks for each packet's id only, never its bytes.
    fn bind(&mut self, queue: u16) -> io::Result<()> {
        let mut command = vec![NFQNL_CFG_CMD_BIND, 0];
        command.extend_from_slice(&0u16.to_be_bytes());
        self.configure(queue, &[(NFQA_CFG_CMD, command)])?;
        let mut params = 0u32.to_be_bytes().to_vec();
        params.push(NFQNL_COPY_META);
        self.configure(
            queue,
            &[
                (NFQA_CFG_PARAMS, params),
                (
                    NFQA_CFG_QUEUE_MAXLEN,
                    QUEUE_MAX_PACKETS.to_be_bytes().to_vec(),
                ),
            ],
        )
    }

    /// Sends a configuration message for `queue` and waits for the kernel's answer.
    fn configure(&mut self, queue: u16, attributes: &[(u16, Vec<u8>)]) -> io::Result<()> {
        let flags = (libc::NLM_F_REQUEST | libc::NLM_F_ACK) as u16;
        let sequence = self.send(NFQNL_MSG_CONFIG, flags, queue, attributes)?;
        let mut buffer = vec![0u8; 8192];
        loop {
            let read = self.receive_into(&mut buffer, true)?;
            for (kind, message_sequence, body) in messages(&buffer[..read]) {
                if kind == NLMSG_ERROR && message_sequence == sequence {
                    let code = i32::from_ne_bytes(body[..4].try_into().expect("4 bytes"));
                    return if code == 0 {
                        Ok(())
                    } else {
                        Err(io::Error::from_raw_os_error(-code))
                    };
                }
            }
        }
    }

    /// Waits at most `timeout` for packets and returns every one announced by then.
    pub fn receive(&mut self, timeout: Duration) -> io::Result<Vec<QueuedPacket>> {
        let mut poll = libc::pollfd {
            fd: self.fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let millis = timeout.as_millis().min(i32::MAX as u128) as libc::c_int;
        // SAFETY: one valid pollfd.
        if unsafe { libc::poll(&mut poll, 1, millis) } < 0 {
            let error = io::Error::last_os_error();
            return if error.kind() == io::ErrorKind::Interrupted {
                Ok(Vec::new())
            } else {
                Err(error)
            };
        }
        let mut packets = Vec::new();
        let mut buffer = vec![0u8; 65_536];
        loop {
            let read = match self.receive_into(&mut buffer, false) {
                Ok(read) => read,
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => break,
                // The kernel could not announce some packets (the buffer was full): they are
                // dropped, as a congested link drops them, and reading goes on.
                Err(error) if error.raw_os_error() == Some(libc::ENOBUFS) => continue,
                Err(error) => return Err(error),
            };
            for (kind, _, body) in messages(&buffer[..read]) {
                if kind != (NFNL_SUBSYS_QUEUE << 8 | NFQNL_MSG_PACKET) || body.len() < 4 {
                    continue;
                }
                let queue = u16::from_be_bytes([body[2], body[3]]);
                if let Some(header) = attribute(&body[NFGENMSG_BYTES..], NFQA_PACKET_HDR) {
                    if header.len() >= 4 {
                        let id = u32::from_be_bytes(header[..4].try_into().expect("4 bytes"));
                        packets.push(QueuedPacket { queue, id });
                    }
                }
            }
        }
        Ok(packets)
    }

    /// Lets `packet` go on its way.
    pub fn accept(&mut self, packet: QueuedPacket) -> io::Result<()> {
        let mut verdict = NF_ACCEPT.to_be_bytes().to_vec();
        verdict.extend_from_slice(&packet.id.to_be_bytes());
        self.send(
            NFQNL_MSG_VERDICT,
            libc::NLM_F_REQUEST as u16,
            packet.queue,
            &[(NFQA_VERDICT_HDR, verdict)],
        )
        .map(|_| ())
    }

    /// Sends one nfnetlink_queue message; returns its sequence number.
    fn send(
        &mut self,
        kind: u16,
        flags: u16,
        queue: u16,
        attributes: &[(u16, Vec<u8>)],
    ) -> io::Result<u32> {
        self.sequence = self.sequence.wrapping_add(1);
        let mut message = Vec::with_capacity(64);
        message.extend_from_slice(&[0; 4]); // the length, written last
        message.extend_from_slice(&(NFNL_SUBSYS_QUEUE << 8 | kind).to_ne_bytes());
        message.extend_from_slice(&flags.to_ne_bytes());
        message.extend_from_slice(&self.sequence.to_ne_bytes());
        message.extend_from_slice(&0u32.to_ne_bytes()); // to the kernel
        message.push(libc::AF_UNSPEC as u8);
        message.push(0); // NFNETLINK_V0
        message.extend_from_slice(&queue.to_be_bytes());
        for (kind, payload) in attributes {
            let length = 4 + payload.len();
            message.extend_from_slice(&(length as u16).to_ne_bytes());
            message.extend_from_slice(&kind.to_ne_bytes());
            message.extend_from_slice(payload);
            message.resize(message.len().next_multiple_of(4), 0);
        }
        let length = message.len() as u32;
        message[..4].copy_from_slice(&length.to_ne_bytes());
        // SAFETY: an all-zero sockaddr_nl (the kernel, pid 0) with its family set.
        let mut kernel: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
        kernel.nl_family = libc::AF_NETLINK as libc::sa_family_t;
        // SAFETY: `message` and `kernel` are valid for the lengths given.
        let sent = unsafe {
            libc::sendto(
                self.fd.as_raw_fd(),
                message.as_ptr().cast(),
                message.len(),
                0,
                (&kernel as *const libc::sockaddr_nl).cast(),
                std::mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t,
            )
        };
        if sent < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(self.sequence)
    }

    /// Reads one datagram into `buffer`, waiting for it when `wait`.
    fn receive_into(&mut self, buffer: &mut [u8], wait: bool) -> io::Result<usize> {
        let flags = if wait { 0 } else { libc::MSG_DONTWAIT };
        // SAFETY: `buffer` is valid for its length.
        let read = unsafe {
            libc::recv(
                self.fd.as_raw_fd(),
                buffer.as_mut_ptr().cast(),
                buffer.len(),
                flags,
            )
        };
        if read < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(read as usize)
    }
}

/// The netlink messages of a datagram: each one's type, sequence number and body (what follows
/// its header). A truncated message ends the list.
fn messages(datagram: &[u8]) -> Vec<(u16, u32, &[u8])> {
    let mut found = Vec::new();
    let mut rest = datagram;
    while rest.len() >= NLMSG_HEADER_BYTES {
        let length = u32::from_ne_bytes(rest[..4].try_into().expect("4 bytes")) as usize;
        if length < NLMSG_HEADER_BYTES || length > rest.len() {
            break;
        }
        let kind = u16::from_ne_bytes([rest[4], rest[5]]);
        let sequence = u32::from_ne_bytes(rest[8..12].try_into().expect("4 bytes"));
        found.push((kind, sequence, &rest[NLMSG_HEADER_BYTES..length]));
        rest = &rest[length.next_multiple_of(4).min(rest.len())..];
    }
    found
}

/// The payload of the first attribute of type `wanted` among `attributes`.
fn attribute(attributes: &[u8], wanted: u16) -> Option<&[u8]> {
    let mut rest = attributes;
    while rest.len() >= 4 {
        let length = u16::from_ne_bytes([rest[0], rest[1]]) as usize;
        // The top two bits of the type are flags (nested, byte order).
        let kind = u16::from_ne_bytes([rest[2], rest[3]]) & 0x3fff;
        if length < 4 || length > rest.len() {
            return None;
        }
        if kind == wanted {
            return Some(&rest[4..length]);
        }
        rest = &rest[length.next_multiple_of(4).min(rest.len())..];
    }
    None
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    fn message(kind: u16, sequence: u32, body: &[u8]) -> Vec<u8> {
        let mut bytes = ((NLMSG_HEADER_BYTES + body.len()) as u32)
            .to_ne_bytes()
            .to_vec();
        bytes.extend_from_slice(&kind.to_ne_bytes());
        bytes.extend_from_slice(&0u16.to_ne_bytes());
        bytes.extend_from_slice(&sequence.to_ne_bytes());
        bytes.extend_from_slice(&0u32.to_ne_bytes());
        bytes.extend_from_slice(body);
        bytes.resize(bytes.len().next_multiple_of(4), 0);
        bytes
    }

    #[test]
    fn a_datagram_splits_into_its_messages_and_stops_at_a_truncated_one() {
        let mut datagram = message(7, 1, &[1, 2, 3]);
        datagram.extend(message(8, 2, &[4; 8]));
        datagram.extend(&message(9, 3, &[5; 8])[..20]);
        let found = messages(&datagram);
        assert_eq!(found.len(), 2);
        assert_eq!((found[0].0, found[0].1, found[0].2), (7, 1, &[1, 2, 3][..]));
        assert_eq!((found[1].0, found[1].1), (8, 2));
    }

    #[test]
    fn an_attribute_is_found_past_others_and_a_bad_length_finds_nothing() {
        let mut attributes = vec![8, 0, 5, 0, 9, 9, 9, 9];
        attributes.extend([7, 0, 1, 0, 1, 2, 3, 0]);
        assert_eq!(attribute(&attributes, 1), Some(&[1, 2, 3][..]));
        assert_eq!(attribute(&attributes, 2), None);
        assert_eq!(attribute(&[200, 0, 1, 0], 1), None);
    }
}
