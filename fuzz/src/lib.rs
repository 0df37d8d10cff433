//! What every fuzz target shares: the planted panic that shows a target can fail.
//!
//! `scripts/fuzz --planted` runs each target with [`PLANTED_PANIC_VARIABLE`] set; each target
//! calls [`decoded`] where an input decodes, so each must then crash within seconds, starting
//! from its seeds (real encodings that decode). A target that does not has lost its seeds or
//! its decoder, and fuzzing it finds nothing.

use std::sync::OnceLock;

/// Set (to anything), every target panics at the first input it decodes.
pub const PLANTED_PANIC_VARIABLE: &str = "INTERLEAVE_FUZZ_PLANTED_PANIC";

/// Called by target `target` where an input decoded: panics when the planted panic is asked for.
pub fn decoded(target: &str) {
    static PLANTED: OnceLock<bool> = OnceLock::new();
    if *PLANTED.get_or_init(|| std::env::var_os(PLANTED_PANIC_VARIABLE).is_some()) {
        panic!("planted panic: {target} decoded an input");
    }
}
