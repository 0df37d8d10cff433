//! The link proxy on its own: it forwards both ways, holds bytes while delayed, and a cut closes
//! what it carries and refuses new connections until healed.
#![cfg(not(any(loom, shuttle)))]

use lab::{LinkFault, LinkProxy};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::Duration;
use threadsim::{Clock, SystemClock};

/// A server on localhost that echoes every connection's bytes back; runs until the test ends.
fn echo_server() -> std::net::SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut reader = stream.try_clone().unwrap();
                let mut writer = stream;
                let _ = std::io::copy(&mut reader, &mut writer);
            });
        }
    });
    address
}

fn round_trip(stream: &mut TcpStream, text: &[u8]) -> std::io::Result<Vec<u8>> {
    stream.write_all(text)?;
    let mut back = vec![0; text.len()];
    stream.read_exact(&mut back)?;
    Ok(back)
}

fn connect(proxy: &LinkProxy) -> TcpStream {
    let stream = TcpStream::connect(proxy.address()).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(2)))
        .unwrap();
    stream
}

#[test]
fn a_proxy_forwards_delays_cuts_and_heals() {
    let proxy = LinkProxy::start(echo_server()).unwrap();
    let mut stream = connect(&proxy);
    assert_eq!(round_trip(&mut stream, b"hello").unwrap(), b"hello");

    proxy.set(LinkFault::Delayed(Duration::from_millis(100)));
    let clock = SystemClock::new();
    let before = clock.now();
    assert_eq!(round_trip(&mut stream, b"slow").unwrap(), b"slow");
    let took = clock.now().saturating_since(before);
    assert!(
        took >= Duration::from_millis(200),
        "one delay each way: {took:?}"
    );

    proxy.set(LinkFault::Cut);
    assert_eq!(proxy.fault(), LinkFault::Cut);
    assert!(
        round_trip(&mut stream, b"lost").is_err(),
        "a cut closes the connection"
    );
    let mut refused = connect(&proxy);
    assert!(
        round_trip(&mut refused, b"new").is_err(),
        "and refuses new ones"
    );

    proxy.set(LinkFault::Healthy);
    let mut healed = connect(&proxy);
    assert_eq!(round_trip(&mut healed, b"again").unwrap(), b"again");
}
