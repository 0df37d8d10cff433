//! The deployment crate's tests on real files and real processes.
#![cfg(not(any(loom, shuttle)))]

mod cluster;
mod crash;
mod data_directory;
mod killed_writer;
mod linearizable;
mod processes;
mod proxy;
mod wal_crash;
