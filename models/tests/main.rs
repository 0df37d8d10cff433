//! Integration tests of the checker: the shared histories and the command line.

mod histories;
mod lincheck;
