//! The append-only log under `kill -9`: a child process saves ever longer logs (with a vote, a
//! term that grows, a snapshot every 100 entries and segments of 64 KiB, so the kills land in
//! appends, roll-overs, snapshot files and deletions) and prints each entry count once its save
//! returned; the test kills it at many points and reopens the log. The state must be the last
//! one acknowledged or the one after it, never an older one and never a refusal: a killed
//! process is not a torn disk. A broken log that buffers its appends must fail the same check.

use crate::killed_writer::KilledWriter;
use node::log::RaftLog;
use node::persist::StateEncoder;
use node::{Command, Entry, LogIndex, NodeId, PersistentState, Persister, Term};
use std::path::{Path, PathBuf};
use storage::WalPersister;
use threadsim::DetRng;

const DIR_VARIABLE: &str = "DEPLOY_WAL_CRASH_DIR";
const BROKEN_VARIABLE: &str = "DEPLOY_WAL_CRASH_BROKEN";
const SEGMENT_BYTES: u64 = 64 * 1024;

pub(crate) fn command(index: u64) -> Command {
    let len = 200 + (index * 7919 % 3000) as usize;
    Command((0..len).map(|i| (index as usize + i) as u8).collect())
}

pub(crate) fn term_at(index: u64) -> Term {
    Term(1 + index / 50)
}

/// Where state `n`'s snapshot ends: every 100 entries, 50 behind.
pub(crate) fn snapshot_index(n: u64) -> u64 {
    if n >= 100 {
        (n / 100) * 100 - 50
    } else {
        0
    }
}

/// The state after `n` entries, as a node would hold it.
pub(crate) fn state(n: u64) -> PersistentState {
    let s = snapshot_index(n);
    let entries = (s + 1..=n)
        .map(|index| Entry {
            term: term_at(index),
            command: command(index),
        })
        .collect();
    PersistentState {
        current_term: term_at(n),
        voted_for: Some(NodeId((n % 3) as u32)),
        log: RaftLog::after_snapshot(
            LogIndex(s),
            if s > 0 { term_at(s) } else { Term(0) },
            entries,
        ),
        snapshot: if s > 0 {
            format!("the service up to {s}").repeat(50).into_bytes()
        } else {
            Vec::new()
        },
    }
}

fn open(dir: &Path, broken: Option<&str>) -> WalPersister {
    match broken {
        None => WalPersister::open_with_segment_size(dir, SEGMENT_BYTES),
        Some("buffered-appends") => WalPersister::open_broken(dir, SEGMENT_BYTES),
        Some(other) => panic!("unknown broken log {other}"),
    }
    .expect("a usable data directory")
}

/// The child: goes on from the state on disk, appending entries (one save each, as a node's
/// log grows) until it is killed.
#[test]
#[ignore = "run by the crash tests as a child process, which they kill"]
fn wal_writer_child() {
    let dir = PathBuf::from(std::env::var(DIR_VARIABLE).expect("the directory"));
    let broken = std::env::var(BROKEN_VARIABLE)
        .ok()
        .filter(|b| !b.is_empty());
    let wal = open(&dir, broken.as_deref());
    let mut held = match wal.load().expect("a state the parent checked") {
        Some(bytes) => PersistentState::decode(&bytes).expect("the parent's check"),
        None => PersistentState::default(),
    };
    let mut encoder = StateEncoder::new();
    loop {
        let n = grow(&mut held);
        wal.save_state(&held, &mut encoder).expect("a save");
        println!("saved {n}");
    }
}

/// Brings `held`, state `n`, to state `n + 1` as a node would (one entry appended, a snapshot
/// taken when one is due), and returns `n + 1`.
pub(crate) fn grow(held: &mut PersistentState) -> u64 {
    let n = held.log.last_index().0 + 1;
    held.log.append(Entry {
        term: term_at(n),
        command: command(n),
    });
    held.current_term = term_at(n);
    held.voted_for = Some(NodeId((n % 3) as u32));
    let s = snapshot_index(n);
    if s > held.log.snapshot_index().0 {
        held.log.compact_to(LogIndex(s));
        held.snapshot = state(n).snapshot;
    }
    n
}

/// What the kills found.
#[derive(Debug, Default)]
struct Kills {
    acknowledged: u64,
    next: u64,
    /// Kills after which recovery cut a torn tail (the log's last segment was longer than
    /// what it kept).
    torn: u64,
    /// The entries the log held at the end.
    entries: u64,
}

fn kill_repeatedly(broken: Option<&str>, kills: u64, seed: u64) -> Result<Kills, String> {
    let dir = std::env::temp_dir().join(format!(
        "interleave-wal-crash-{}-{}-{seed}",
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
        child_test: "wal_crash::wal_writer_child",
        env: &env,
        most_saves_first: 40,
        most_delay_micros: 2000,
    };
    let outcome = (0..kills).try_for_each(|kill| {
        last_acknowledged = writer.run_once(&mut rng, last_acknowledged);
        let before: u64 = segment_bytes(&dir);
        let wal = WalPersister::open_with_segment_size(&dir, SEGMENT_BYTES)
            .map_err(|error| format!("kill {kill}: the log was refused: {error}"))?;
        if segment_bytes(&dir) < before {
            found.torn += 1;
        }
        let loaded = wal
            .load()
            .map_err(|error| format!("kill {kill}: the log was refused: {error}"))?
            .ok_or(format!(
                "kill {kill}: no state loaded, {last_acknowledged} was acknowledged"
            ))?;
        let loaded = PersistentState::decode(&loaded).map_err(|error| error.to_string())?;
        let n = loaded.log.last_index().0;
        if loaded != state(n) {
            return Err(format!(
                "kill {kill}: state {n} loaded with different contents"
            ));
        }
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
    found.entries = last_acknowledged;
    outcome.map(|()| found)
}

/// The bytes of the log's segments.
fn segment_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|files| {
            files
                .filter_map(|file| file.ok())
                .filter(|file| file.file_name().to_string_lossy().ends_with(".log"))
                .filter_map(|file| file.metadata().ok())
                .map(|meta| meta.len())
                .sum()
        })
        .unwrap_or(0)
}

#[test]
fn a_killed_log_writer_leaves_the_acknowledged_state_or_the_next() {
    let kills = 100;
    let found = kill_repeatedly(None, kills, 1).unwrap_or_else(|error| panic!("{error}"));
    eprintln!("{kills} kills: {found:?}");
    assert_eq!(found.acknowledged + found.next, kills);
    // Vacuity: the kills fell among many roll-overs (segments of 64 KiB, about 1.7 KiB an
    // entry) and snapshots (every 100 entries).
    assert!(
        found.entries >= 1000,
        "only {} entries written",
        found.entries
    );
}

#[test]
fn a_log_that_buffers_its_appends_is_caught() {
    let error = kill_repeatedly(Some("buffered-appends"), 100, 2).expect_err("a lost save");
    eprintln!("{error}");
    assert!(error.contains("was acknowledged"), "{error}");
}
