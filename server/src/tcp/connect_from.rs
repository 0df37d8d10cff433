//! [`connect_from`]: a TCP connection from a local address of the caller's choosing, as a
//! client elsewhere on the network would make (on Linux every address of 127/8 is this
//! machine): the per-address limits and the hostile peers of the tests and the nemesis's
//! `forged` fault come from an address of their own.

use std::io;
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::os::fd::{FromRawFd, OwnedFd};

/// A connection to `to` whose local address is `from` (port chosen by the system).
pub fn connect_from(from: IpAddr, to: SocketAddr) -> io::Result<TcpStream> {
    let (IpAddr::V4(from), SocketAddr::V4(to)) = (from, to) else {
        return Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "connect_from takes IPv4 addresses",
        ));
    };
    let address = |ip: std::net::Ipv4Addr, port: u16| libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: port.to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from_ne_bytes(ip.octets()),
        },
        sin_zero: [0; 8],
    };
    let length = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
    // SAFETY: socket() returns a new descriptor or -1; an OwnedFd owns it from here on.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` is a descriptor this function just opened and nothing else owns.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    let local = address(from, 0);
    // SAFETY: `local` and `remote` live across the calls, and `length` is their size.
    if unsafe { libc::bind(fd, std::ptr::addr_of!(local).cast(), length) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let remote = address(*to.ip(), to.port());
    // SAFETY: as above.
    if unsafe { libc::connect(fd, std::ptr::addr_of!(remote).cast(), length) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(TcpStream::from(owned))
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn the_connection_comes_from_the_address_asked() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let stream = connect_from([127, 0, 0, 3].into(), listener.local_addr().unwrap()).unwrap();
        let (_, peer) = listener.accept().unwrap();
        assert_eq!(peer.ip(), IpAddr::from([127, 0, 0, 3]));
        assert_eq!(stream.local_addr().unwrap().ip(), peer.ip());
    }
}
