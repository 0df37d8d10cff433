//! Integration tests of the checker: the shared histories and the command line.
#![cfg(not(any(loom, shuttle)))]

mod corpus;
mod histories;
mod lincheck;
mod readers_fuzz;
mod strict_json;
mod xorshift;
