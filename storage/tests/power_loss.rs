//! The storage engines that ship, on a disk whose power a seeded test cuts
//! ([`MemoryFilesystem`]): saves write ever longer states (the write-ahead log's with segments of
//! 64 KiB and a snapshot every 100 entries, so cuts land in appends, roll-overs, snapshot files
//! and deletions), the power goes after a drawn number of changes, each file keeps a drawn
//! prefix of what it had not synced (a torn write), and the engine opens again. The state must
//! be the last one acknowledged or the one whose save was under way, never an older one and
//! never a refusal. The deliberately broken ways of writing fail the same check: power loss the
//! real-file tests can only have from a FUSE disk, here deterministic and in memory.

use crate::wal_crash::{grow, state};
use node::persist::StateEncoder;
use node::{Mutation, MutationSet, PersistentState, Persister};
use std::path::Path;
use std::sync::Arc;
use storage::filesystem::MemoryFilesystem;
use storage::{BrokenWrite, FilePersister, WalPersister};
use threadsim::DetRng;

const SEGMENT_BYTES: u64 = 64 * 1024;

/// The engine and the way it writes.
#[derive(Clone, Copy, Debug)]
enum Engine {
    Wal,
    /// The log that buffers its appends in the process (`WalPersister::open_broken`).
    WalBuffered,
    File,
    BrokenFile(BrokenWrite),
}

impl Engine {
    fn open(self, disk: &MemoryFilesystem, dir: &Path) -> Result<Box<dyn Persister>, String> {
        let filesystem = Arc::new(disk.clone());
        let opened: Result<Box<dyn Persister>, String> = match self {
            Engine::Wal => WalPersister::open_on(filesystem, dir, SEGMENT_BYTES)
                .map(|wal| Box::new(wal) as Box<dyn Persister>)
                .map_err(|error| error.to_string()),
            Engine::WalBuffered => WalPersister::open_broken_on(filesystem, dir, SEGMENT_BYTES)
                .map(|wal| Box::new(wal) as Box<dyn Persister>)
                .map_err(|error| error.to_string()),
            Engine::File => FilePersister::open_on(filesystem, dir)
                .map(|file| Box::new(file) as Box<dyn Persister>)
                .map_err(|error| error.to_string()),
            Engine::BrokenFile(broken) => FilePersister::open_broken_on(filesystem, dir, broken)
                .map(|file| Box::new(file) as Box<dyn Persister>)
                .map_err(|error| error.to_string()),
        };
        opened
    }
}

/// What the cuts found.
#[derive(Debug, Default)]
struct Cuts {
    /// Cuts after which the state loaded was the last acknowledged one.
    acknowledged: u64,
    /// Cuts after which it was the one whose save was under way.
    next: u64,
    /// The entries the state held at the end.
    entries: u64,
}

fn cut_repeatedly(engine: Engine, cuts: u64, seed: u64) -> Result<Cuts, String> {
    let disk = MemoryFilesystem::new();
    let dir = Path::new("/data");
    let mut rng = DetRng::new(seed);
    let mut found = Cuts::default();
    let mut acknowledged = 0;
    for cut in 0..cuts {
        let persister = engine
            .open(&disk, dir)
            .map_err(|error| format!("cut {cut}: refused to open: {error}"))?;
        let loaded = persister
            .load()
            .map_err(|error| format!("cut {cut}: the state was refused: {error}"))?;
        let mut held = match loaded {
            Some(bytes) => PersistentState::decode(&bytes).map_err(|error| error.to_string())?,
            None if acknowledged == 0 => PersistentState::default(),
            None => {
                return Err(format!(
                    "cut {cut}: no state loaded, {acknowledged} was acknowledged"
                ))
            }
        };
        let n = held.log.last_index().0;
        if n > 0 && held != state(n) {
            return Err(format!("cut {cut}: state {n} loaded with other contents"));
        }
        match n {
            n if n == acknowledged => found.acknowledged += 1,
            n if n == acknowledged + 1 => found.next += 1,
            n => {
                return Err(format!(
                    "cut {cut}: state {n} loaded, {acknowledged} was acknowledged"
                ))
            }
        }
        acknowledged = n;
        disk.cut_power_after(rng.range_inclusive(0, 40));
        let mut encoder = StateEncoder::new();
        loop {
            let n = grow(&mut held);
            if persister.save_state(&held, &mut encoder).is_err() {
                break;
            }
            acknowledged = n;
        }
        assert!(disk.power_cut(), "a save failed before the power was cut");
        drop(persister);
        disk.crash(&mut |_, unsynced| rng.index(unsynced + 1));
    }
    found.entries = acknowledged;
    Ok(found)
}

#[test]
fn the_log_keeps_every_acknowledged_save_through_power_cuts() {
    let cuts = 300;
    let found = cut_repeatedly(Engine::Wal, cuts, 1).unwrap_or_else(|error| panic!("{error}"));
    eprintln!("{cuts} cuts: {found:?}");
    assert_eq!(found.acknowledged + found.next, cuts);
    // Vacuity: the cuts fell among roll-overs (about 40 entries a segment) and snapshots (every
    // 100 entries), and some of them in the middle of a save that got through.
    assert!(
        found.entries >= 500,
        "only {} entries written",
        found.entries
    );
    assert!(found.next > 0, "no cut kept the save under way: {found:?}");
}

#[test]
fn the_state_file_keeps_every_acknowledged_save_through_power_cuts() {
    let cuts = 300;
    let found = cut_repeatedly(Engine::File, cuts, 2).unwrap_or_else(|error| panic!("{error}"));
    eprintln!("{cuts} cuts: {found:?}");
    // A save is durable only at its last change, the directory's sync (this disk keeps no
    // rename before it), so a cut never leaves the save under way: every one is the last
    // acknowledged.
    assert_eq!(found.acknowledged, cuts, "{found:?}");
    assert!(
        found.entries >= 500,
        "only {} entries written",
        found.entries
    );
}

/// Every broken way of writing loses an acknowledged save, or leaves a state that is refused,
/// within a few cuts.
#[test]
fn every_broken_way_of_writing_is_caught_by_a_power_cut() {
    let broken = [
        Engine::WalBuffered,
        Engine::BrokenFile(BrokenWrite::AckBeforeWrite),
        Engine::BrokenFile(BrokenWrite::NoDirSync),
        Engine::BrokenFile(BrokenWrite::InPlace),
    ];
    for engine in broken {
        let error = cut_repeatedly(engine, 100, 3).expect_err(&format!("{engine:?} caught"));
        eprintln!("{engine:?}: {error}");
    }
}

/// After an fsync fails, the kernel calls the pages it could not write clean: the correct log
/// refuses the save and writes nothing more, so a power loss leaves the last acknowledged
/// state; the log that tries the sync again (`sync-error-retried`) acknowledges a save that the
/// power loss then takes back.
#[test]
fn a_failed_sync_stops_the_log_and_a_retried_one_loses_an_acknowledged_save() {
    let dir = Path::new("/data");
    for (mutations, broken) in [
        (MutationSet::default(), false),
        (MutationSet::only(Mutation::SyncErrorRetried), true),
    ] {
        let disk = MemoryFilesystem::new();
        let wal = WalPersister::open_on(Arc::new(disk.clone()), dir, SEGMENT_BYTES).unwrap();
        wal.break_as(&mutations);
        let (mut held, mut encoder) = (PersistentState::default(), StateEncoder::new());
        for _ in 0..5 {
            grow(&mut held);
            wal.save_state(&held, &mut encoder).expect("a working disk");
        }
        disk.fail_next_sync();
        grow(&mut held);
        let sixth = wal.save_state(&held, &mut encoder);
        assert_eq!(sixth.is_ok(), broken, "the sixth save: {sixth:?}");
        if !broken {
            grow(&mut held);
            let seventh = wal.save_state(&held, &mut encoder);
            assert!(seventh.is_err(), "a write after a failed sync: {seventh:?}");
        }
        drop(wal);
        disk.crash(&mut |_, unsynced| unsynced);
        let wal = WalPersister::open_on(Arc::new(disk.clone()), dir, SEGMENT_BYTES).unwrap();
        let loaded = PersistentState::decode(&wal.load().unwrap().unwrap()).unwrap();
        let acknowledged = if broken { 6 } else { 5 };
        let n = loaded.log.last_index().0;
        assert_eq!(
            n < acknowledged,
            broken,
            "state {n} loaded, {acknowledged} acknowledged"
        );
    }
}

/// The disk fills up in the middle of a save: the save fails, having written part of a record.
/// The log must write nothing after that part (a record after a torn one is damage recovery
/// refuses), so once there is room again a power loss leaves the last acknowledged state, and
/// the log opens.
#[test]
fn a_full_disk_stops_the_log_and_it_opens_again_with_room() {
    let dir = Path::new("/data");
    for room in [0, 1, 7, 30] {
        let disk = MemoryFilesystem::new();
        let wal = WalPersister::open_on(Arc::new(disk.clone()), dir, SEGMENT_BYTES).unwrap();
        let (mut held, mut encoder) = (PersistentState::default(), StateEncoder::new());
        for _ in 0..5 {
            grow(&mut held);
            wal.save_state(&held, &mut encoder).expect("a working disk");
        }
        disk.fill_up_after(room);
        grow(&mut held);
        let sixth = wal.save_state(&held, &mut encoder);
        assert!(
            sixth.is_err(),
            "room {room}: the sixth save on a full disk: {sixth:?}"
        );
        disk.make_room();
        grow(&mut held);
        let seventh = wal.save_state(&held, &mut encoder);
        assert!(
            seventh.is_err(),
            "room {room}: a write after a failed one: {seventh:?}"
        );
        drop(wal);
        disk.crash(&mut |_, unsynced| unsynced);
        let wal = WalPersister::open_on(Arc::new(disk.clone()), dir, SEGMENT_BYTES)
            .unwrap_or_else(|error| panic!("room {room}: {error}"));
        let loaded = PersistentState::decode(&wal.load().unwrap().unwrap()).unwrap();
        assert_eq!(loaded.log.last_index().0, 5, "room {room}");
    }
}
