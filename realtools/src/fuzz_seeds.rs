//! Seeds for the fuzzer, written by the tests that already hold real encodings of every message
//! kind (`scripts/fuzz` runs them with [`FUZZ_SEEDS_VARIABLE`] set), so each target starts from
//! what a peer, a client or a disk really sends and its seeds follow the format as it changes.

use std::path::PathBuf;

/// The variable naming the folder that seeds go to: `FOLDER/TARGET/NAME`. Unset, nothing is
/// written.
pub const FUZZ_SEEDS_VARIABLE: &str = "INTERLEAVE_FUZZ_SEEDS";

/// Writes `bytes` as seed `name` of fuzz target `target`, when [`FUZZ_SEEDS_VARIABLE`] names a
/// folder; returns where (`None` when the variable is unset). Panics when the seed cannot be
/// written: the fuzzing step asked for it and must not start without it.
pub fn fuzz_seed(target: &str, name: &str, bytes: &[u8]) -> Option<PathBuf> {
    assert!(
        !target.is_empty() && !name.is_empty() && !format!("{target}{name}").contains(['/', '\\']),
        "a seed's target and name are plain file names: {target:?} {name:?}"
    );
    let folder = PathBuf::from(std::env::var_os(FUZZ_SEEDS_VARIABLE)?).join(target);
    let path = folder.join(name);
    std::fs::create_dir_all(&folder)
        .and_then(|()| std::fs::write(&path, bytes))
        .unwrap_or_else(|error| panic!("cannot write the fuzz seed {}: {error}", path.display()));
    Some(path)
}
