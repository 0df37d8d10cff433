//! The file persister under `kill -9`: a child process saves ever newer states and prints each
//! number once its save returned; the test kills it with SIGKILL at many points and loads what is
//! on disk. The state must be the last one acknowledged or the one after it (being written when
//! the kill came), never an older one and never a refusal: a killed process is not a torn disk.
//! Each broken way of writing must fail the same check.

use crate::killed_writer::KilledWriter;
use node::Persister;
use std::path::{Path, PathBuf};
use storage::FilePersister;
use threadsim::DetRng;

const DIR_VARIABLE: &str = "DEPLOY_CRASH_DIR";
const BROKEN_VARIABLE: &str = "DEPLOY_CRASH_BROKEN";

/// State number `n`: 32-160 KiB (so a save takes a while), its number first, then a pattern of it.
fn state(n: u64) -> Vec<u8> {
    let len = 32 * 1024 + (n * 7919 % (128 * 1024)) as usize;
    let mut bytes = n.to_le_bytes().to_vec();
    bytes.extend((0..len).map(|i| (n as usize + i) as u8));
    bytes
}

/// The number of a state made by [`state`], checking the rest of it.
fn number_of(bytes: &[u8]) -> Result<u64, String> {
    let n = u64::from_le_bytes(
        bytes
            .get(..8)
            .ok_or("a state shorter than its number")?
            .try_into()
            .expect("8 bytes"),
    );
    if bytes != state(n) {
        return Err(format!("state {n} loaded with different contents"));
    }
    Ok(n)
}

/// Opens the directory the way the test asks (correct or broken).
fn open(dir: &Path, broken: Option<&str>) -> FilePersister {
    match broken {
        None => FilePersister::open(dir),
        Some("in-place") => FilePersister::open_broken(dir, storage::BrokenWrite::InPlace),
        Some("ack-before-write") => {
            FilePersister::open_broken(dir, storage::BrokenWrite::AckBeforeWrite)
        }
        Some(other) => panic!("unknown broken write {other}"),
    }
    .expect("a usable data directory")
}

/// The child: goes on from the state on disk, saving the next states until it is killed.
#[test]
#[ignore = "run by the crash tests as a child process, which they kill"]
fn writer_child() {
    let dir = PathBuf::from(std::env::var(DIR_VARIABLE).expect("the directory"));
    let broken = std::env::var(BROKEN_VARIABLE)
        .ok()
        .filter(|b| !b.is_empty());
    let persister = open(&dir, broken.as_deref());
    let first = match persister.load().expect("a state the parent checked") {
        Some(bytes) => number_of(&bytes).expect("the parent's check") + 1,
        None => 1,
    };
    for n in first..first + 100_000 {
        persister.save(&state(n)).expect("a save");
        println!("saved {n}");
    }
}

/// What the kills found.
#[derive(Debug, Default)]
struct Kills {
    /// Kills that found the state the child last acknowledged.
    acknowledged: u64,
    /// Kills that found the next one (saved, the kill came before its acknowledgement).
    next: u64,
    /// Kills that came while a save was being written (`state.tmp` present).
    mid_write: u64,
}

/// Kills a writer `kills` times in one directory, checking after each kill what is on disk.
fn kill_repeatedly(broken: Option<&str>, kills: u64, seed: u64) -> Result<Kills, String> {
    let dir = std::env::temp_dir().join(format!(
        "interleave-crash-{}-{}-{seed}",
        std::process::id(),
        broken.unwrap_or("correct")
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let mut rng = DetRng::new(seed);
    let mut found = Kills::default();
    let mut last_acknowledged = 0;
    let dir_text = dir.to_string_lossy().into_owned();
    let env = [
        (DIR_VARIABLE, dir_text.as_str()),
        (BROKEN_VARIABLE, broken.unwrap_or("")),
    ];
    let writer = KilledWriter {
        child_test: "crash::writer_child",
        env: &env,
        most_saves_first: 4,
        most_delay_micros: 3000,
    };
    let outcome = (0..kills).try_for_each(|kill| {
        // Let it save a few states, then kill it a little later, at a point of the next save.
        last_acknowledged = writer.run_once(&mut rng, last_acknowledged);
        if dir.join("state.tmp").exists() {
            found.mid_write += 1;
        }
        let loaded = FilePersister::open(&dir)
            .expect("the directory reopens")
            .load()
            .map_err(|error| format!("kill {kill}: the state was refused: {error}"))?
            .ok_or(format!(
                "kill {kill}: no state after {last_acknowledged} saves"
            ))?;
        let n = number_of(&loaded).map_err(|error| format!("kill {kill}: {error}"))?;
        match n {
            n if n == last_acknowledged => found.acknowledged += 1,
            n if n == last_acknowledged + 1 => found.next += 1,
            n => {
                return Err(format!(
                    "kill {kill}: state {n} loaded, {last_acknowledged} was acknowledged"
                ))
            }
        }
        last_acknowledged = n;
        Ok(())
    });
    let _ = std::fs::remove_dir_all(&dir);
    outcome.map(|()| found)
}

#[test]
fn a_killed_writer_leaves_the_acknowledged_state_or_the_next() {
    let kills = 100;
    let found = kill_repeatedly(None, kills, 1).unwrap_or_else(|error| panic!("{error}"));
    eprintln!("{kills} kills: {found:?}");
    assert_eq!(found.acknowledged + found.next, kills);
    // Vacuity: the kills came while saves were being written.
    assert!(
        found.mid_write >= kills / 5,
        "only {} of {kills} kills came mid-write",
        found.mid_write
    );
}

#[test]
fn writing_the_state_in_place_is_caught() {
    let error = kill_repeatedly(Some("in-place"), 100, 2).expect_err("a torn state file");
    eprintln!("{error}");
    assert!(error.contains("refused"), "{error}");
}

#[test]
fn acknowledging_before_writing_is_caught() {
    let error = kill_repeatedly(Some("ack-before-write"), 100, 3).expect_err("a lost save");
    eprintln!("{error}");
    assert!(error.contains("was acknowledged"), "{error}");
}
