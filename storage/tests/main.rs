//! The storage engines on real files under `kill -9` and in memory under power cuts, and
//! opening a data directory.
#![cfg(not(any(loom, shuttle)))]

mod crash;
mod data_directory;
mod killed_writer;
mod power_loss;
mod wal_crash;
