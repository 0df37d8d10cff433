//! The glue compiled against the ordinary build: real OS threads.

use sim as engine_sim;
use threadsim as engine_threadsim;

// The same glue, compiled against this build on purpose (see `mod.rs`).
#[allow(clippy::duplicate_mod)]
#[path = "seed.rs"]
pub mod seed;
