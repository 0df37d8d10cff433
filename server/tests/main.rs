//! The server's tests on real sockets and real processes: servers in this process over TCP,
//! `interleave-server` processes under signals, proxies and the nemesis.
#![cfg(not(any(loom, shuttle)))]

mod cluster;
mod linearizable;
mod processes;
