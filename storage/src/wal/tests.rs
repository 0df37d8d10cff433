//! The log against the states written through it: reopened after every kind of change, after
//! torn tails, with damage where acknowledged bytes were.

use super::files::SEGMENT_HEADER_LEN;
use super::names::segment_name;
use super::*;
use node::log::RaftLog;
use node::{Command, Entry, LogIndex, NodeId, Term};
use std::fs;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("interleave-wal-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    dir
}

fn entry(term: u64, text: &str) -> Entry {
    Entry {
        term: Term(term),
        command: Command::from_text(text),
    }
}

fn save(wal: &WalPersister, state: &PersistentState) {
    let ticket = wal
        .write_state(state, &mut StateEncoder::new())
        .expect("written");
    wal.sync(ticket).expect("synced");
}

fn loaded(dir: &Path) -> PersistentState {
    let wal = WalPersister::open_with_segment_size(dir, 256).expect("reopens");
    let bytes = wal.load().expect("loads").expect("something saved");
    PersistentState::decode(&bytes).expect("decodes")
}

/// A run of states a node could write: votes, appends, a truncation, compactions, a snapshot
/// installed over a conflicting log.
fn history() -> Vec<PersistentState> {
    let mut state = PersistentState::default();
    let mut states = Vec::new();
    state.current_term = Term(1);
    state.voted_for = Some(NodeId(0));
    states.push(state.clone());
    for i in 0..20 {
        state.log.append(entry(1, &format!("put k{i} {i}")));
        states.push(state.clone());
    }
    state.current_term = Term(2);
    state.voted_for = None;
    state.log.truncate_from(LogIndex(15));
    state.log.append(entry(2, "put after truncation"));
    states.push(state.clone());
    state.log.compact_to(LogIndex(10));
    state.snapshot = b"the service up to 10".to_vec();
    states.push(state.clone());
    for i in 0..30 {
        state
            .log
            .append(entry(2, &format!("append k 0123456789 {i}")));
        states.push(state.clone());
    }
    state.log.compact_to(LogIndex(40));
    state.snapshot = b"the service up to 40".to_vec();
    states.push(state.clone());
    // A leader's snapshot past the log, whose term disagrees: the log is replaced.
    state.current_term = Term(3);
    state.log = {
        let mut log = state.log.clone();
        assert!(log.install_snapshot(LogIndex(60), Term(3)));
        log
    };
    state.snapshot = b"the leader's service up to 60".to_vec();
    states.push(state.clone());
    state
        .log
        .append(entry(3, "first after the installed snapshot"));
    states.push(state);
    states
}

#[test]
fn every_state_written_comes_back_after_a_reopen() {
    let dir = scratch("history");
    for (step, state) in history().iter().enumerate() {
        {
            let wal = WalPersister::open_with_segment_size(&dir, 256).expect("opens");
            // A fresh node's log: the first write after a reopen compares every entry.
            save(&wal, state);
        }
        assert_eq!(&loaded(&dir), state, "step {step}");
    }
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn small_segments_roll_over_and_the_covered_ones_are_deleted() {
    let dir = scratch("segments");
    let wal = WalPersister::open_with_segment_size(&dir, 256).expect("opens");
    let mut states = history();
    // Appends after the last snapshot fill new segments, whose checkpoints cover the old ones.
    let mut state = states.last().unwrap().clone();
    for i in 0..20 {
        state.log.append(entry(3, &format!("after {i}")));
        states.push(state.clone());
    }
    // A snapshot of everything: the next checkpoint covers every segment before it.
    state.log.compact_to(state.log.last_index());
    state.snapshot = b"the service up to the end".to_vec();
    states.push(state.clone());
    for i in 0..20 {
        state
            .log
            .append(entry(3, &format!("after the last snapshot {i}")));
        states.push(state.clone());
    }
    for state in &states {
        save(&wal, state);
    }
    let stats = wal.stats();
    assert!(stats.segments_created > 5, "{stats:?}");
    assert!(stats.segments_deleted > 0, "{stats:?}");
    assert_eq!(stats.group.syncs, states.len() as u64, "one save at a time");
    drop(wal);
    let names: Vec<String> = fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    let snapshots = names
        .iter()
        .filter(|name| name.starts_with("snapshot-"))
        .count();
    assert_eq!(snapshots, 1, "old snapshots deleted: {names:?}");
    assert_eq!(&loaded(&dir), states.last().unwrap());
    fs::remove_dir_all(&dir).unwrap();
}

fn last_segment(dir: &Path) -> PathBuf {
    let mut segments: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "log"))
        .collect();
    segments.sort();
    segments.pop().expect("a segment")
}

#[test]
fn a_torn_last_record_is_cut_and_the_save_before_it_comes_back() {
    let dir = scratch("torn");
    let states = history();
    let (before, last) = (&states[5], &states[6]);
    {
        let wal = WalPersister::open(&dir).expect("opens");
        save(&wal, before);
    }
    let segment = last_segment(&dir);
    let good = fs::read(&segment).unwrap();
    {
        let wal = WalPersister::open(&dir).expect("opens");
        save(&wal, last);
    }
    let whole = fs::read(&segment).unwrap();
    assert!(whole.len() > good.len());
    assert_eq!(
        segment,
        dir.join(segment_name(1)),
        "a new log's one segment"
    );
    realtools::fuzz_seed("wal_segment", "six-saves", &good);
    realtools::fuzz_seed("wal_segment", "seven-saves", &whole);
    for len in good.len()..whole.len() {
        fs::write(&segment, &whole[..len]).unwrap();
        assert_eq!(&loaded(&dir), before, "cut at {len}");
        // The reopen cut the tail for good.
        assert_eq!(fs::metadata(&segment).unwrap().len(), good.len() as u64);
    }
    fs::write(&segment, &whole).unwrap();
    assert_eq!(&loaded(&dir), last);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn damage_in_the_last_segment_with_good_records_after_it_is_refused_not_cut() {
    let dir = scratch("damaged-last");
    let states = history();
    {
        let wal = WalPersister::open(&dir).expect("opens");
        for state in &states[..8] {
            save(&wal, state);
        }
    }
    let segment = last_segment(&dir);
    let whole = fs::read(&segment).unwrap();
    // A bit of the first record's body, and the first record's length zeroed with what
    // follows it: both well before the last record.
    let mut flipped = whole.clone();
    flipped[SEGMENT_HEADER_LEN + 12] ^= 0x01;
    let mut zeroed = whole.clone();
    zeroed[SEGMENT_HEADER_LEN..SEGMENT_HEADER_LEN + 40].fill(0);
    for damaged in [flipped, zeroed] {
        fs::write(&segment, &damaged).unwrap();
        let message = WalPersister::open(&dir).err().expect("refused").to_string();
        assert!(
            message.contains("a good record follows") && message.contains("offset 17"),
            "{message}"
        );
        assert_eq!(fs::read(&segment).unwrap(), damaged, "nothing was cut");
    }
    fs::write(&segment, &whole).unwrap();
    assert_eq!(&loaded(&dir), &states[7]);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn damage_before_the_last_segment_is_refused_with_its_file_and_offset() {
    let dir = scratch("damaged");
    {
        let wal = WalPersister::open_with_segment_size(&dir, 256).expect("opens");
        for state in &history()[..20] {
            save(&wal, state);
        }
    }
    let first = dir.join(segment_name(1));
    let mut bytes = fs::read(&first).expect("the first segment is still there");
    let at = SEGMENT_HEADER_LEN + 12;
    bytes[at] ^= 0x01;
    fs::write(&first, &bytes).unwrap();
    let error = WalPersister::open_with_segment_size(&dir, 256)
        .err()
        .expect("refused");
    let message = error.to_string();
    assert!(
        message.contains(&segment_name(1)) && message.contains("offset 17"),
        "{message}"
    );
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_missing_last_segment_or_every_segment_is_refused_by_name() {
    let write = |dir: &Path, states: &[PersistentState]| {
        let wal = WalPersister::open_with_segment_size(dir, 256).expect("opens");
        for state in states {
            save(&wal, state);
        }
    };
    let refusal = |dir: &Path| {
        WalPersister::open_with_segment_size(dir, 256)
            .err()
            .expect("refused")
            .to_string()
    };
    // Rolled over, before any snapshot: the first segments are still needed.
    let dir = scratch("missing-last");
    write(&dir, &history()[..20]);
    let last = last_segment(&dir);
    assert_ne!(last, dir.join(segment_name(1)), "rolled over");
    fs::remove_file(&last).unwrap();
    let message = refusal(&dir);
    assert!(
        message.contains(&last.display().to_string())
            && message.contains("missing")
            && message.contains("ends with a seal"),
        "{message}"
    );
    fs::remove_dir_all(&dir).unwrap();
    // Every segment gone, the snapshot they pointed at left.
    let dir = scratch("missing-all");
    write(&dir, &history());
    for entry in fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|ext| ext == "log") {
            fs::remove_file(path).unwrap();
        }
    }
    let message = refusal(&dir);
    assert!(
        message.contains("no segment is left") && message.contains("snapshot-"),
        "{message}"
    );
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_record_after_a_seal_or_a_seal_to_another_segment_is_damage() {
    use super::record::{frame, Item};
    let dir = scratch("seal");
    {
        let wal = WalPersister::open_with_segment_size(&dir, 256).expect("opens");
        for state in &history()[..20] {
            save(&wal, state);
        }
    }
    let first = dir.join(segment_name(1));
    let sealed = fs::read(&first).unwrap();
    let mut after_seal = sealed.clone();
    after_seal.extend_from_slice(&frame(&[Item::Truncate { from: LogIndex(1) }]));
    fs::write(&first, &after_seal).unwrap();
    let message = WalPersister::open_with_segment_size(&dir, 256)
        .err()
        .expect("refused")
        .to_string();
    assert!(message.contains("a record after the seal"), "{message}");
    // The seal rewritten to name a segment two on.
    let seal = frame(&[Item::ContinuedIn { segment: 2 }]);
    assert!(
        sealed.ends_with(&seal),
        "the first segment ends with its seal"
    );
    let mut elsewhere = sealed[..sealed.len() - seal.len()].to_vec();
    elsewhere.extend_from_slice(&frame(&[Item::ContinuedIn { segment: 3 }]));
    fs::write(&first, &elsewhere).unwrap();
    let message = WalPersister::open_with_segment_size(&dir, 256)
        .err()
        .expect("refused")
        .to_string();
    assert!(message.contains("a seal naming segment 3"), "{message}");
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_damaged_snapshot_file_is_refused() {
    let dir = scratch("snapshot");
    let states = history();
    {
        let wal = WalPersister::open(&dir).expect("opens");
        for state in &states {
            save(&wal, state);
        }
    }
    let snapshot = fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .find(|path| {
            path.file_name()
                .is_some_and(|name| name.to_string_lossy().starts_with("snapshot-"))
        })
        .expect("a snapshot file");
    let mut bytes = fs::read(&snapshot).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x40;
    fs::write(&snapshot, &bytes).unwrap();
    let message = WalPersister::open(&dir).err().expect("refused").to_string();
    assert!(
        message.contains("snapshot-") && message.contains("checksum"),
        "{message}"
    );
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_directory_of_the_whole_state_file_is_not_taken_for_an_empty_log() {
    let dir = scratch("legacy");
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("state"), b"whatever").unwrap();
    let message = WalPersister::open(&dir).err().expect("refused").to_string();
    assert!(message.contains("--storage file"), "{message}");
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_log_is_not_taken_for_an_empty_state_file_either() {
    let dir = scratch("log-present");
    save(&WalPersister::open(&dir).expect("opens"), &history()[3]);
    let message = crate::Storage::open(crate::StorageKind::StateFile, &dir)
        .err()
        .expect("refused")
        .to_string();
    assert!(message.contains("--storage wal"), "{message}");
    assert!(crate::Storage::open(crate::StorageKind::Wal, &dir).is_ok());
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn concurrent_saves_share_fsyncs_and_each_returns_durable() {
    let dir = scratch("group");
    let wal = std::sync::Arc::new(WalPersister::open(&dir).expect("opens"));
    let node = std::sync::Arc::new(std::sync::Mutex::new(PersistentState::default()));
    let savers: Vec<_> = (0..8)
        .map(|saver| {
            let (wal, node) = (wal.clone(), node.clone());
            std::thread::spawn(move || {
                for i in 0..50 {
                    // As a node does: the write under its lock, the fsync after it.
                    let ticket = {
                        let mut state = node.lock().unwrap();
                        state.log.append(entry(1, &format!("{saver}/{i}")));
                        wal.write_state(&state, &mut StateEncoder::new())
                            .expect("written")
                    };
                    wal.sync(ticket).expect("synced");
                    assert!(wal.group.durable() >= ticket);
                }
            })
        })
        .collect();
    for saver in savers {
        saver.join().unwrap();
    }
    let stats = wal.stats();
    assert_eq!(stats.group.writes, 400);
    assert!(stats.group.syncs <= stats.group.writes);
    eprintln!("400 saves on 8 threads: {} fsyncs", stats.group.syncs);
    drop(wal);
    let state = node.lock().unwrap().clone();
    assert_eq!(loaded(&dir), state);
    let _ = RaftLog::default();
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_segment_that_is_a_device_a_fifo_or_past_the_longest_is_refused_unread() {
    let dir = scratch("not-regular");
    {
        let wal = WalPersister::open(&dir).expect("opens");
        save(&wal, &history()[3]);
    }
    let next = dir.join(segment_name(1_000));
    // A link to a device that never ends once filled all memory; a FIFO hung the server.
    std::os::unix::fs::symlink("/dev/zero", &next).unwrap();
    let refused = WalPersister::open(&dir).err().expect("a device refused");
    assert!(
        refused.to_string().contains("not a regular file"),
        "{refused}"
    );
    fs::remove_file(&next).unwrap();
    let fifo = std::ffi::CString::new(next.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a NUL-terminated path and a mode; mkfifo reads nothing else.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    let refused = WalPersister::open(&dir).err().expect("a FIFO refused");
    assert!(
        refused.to_string().contains("not a regular file"),
        "{refused}"
    );
    fs::remove_file(&next).unwrap();
    // A sparse file past the longest a segment can be: refused by its length, not read.
    let sparse = fs::File::create(&next).unwrap();
    sparse.set_len(files::MAX_SEGMENT_FILE_BYTES + 1).unwrap();
    let refused = WalPersister::open(&dir).err().expect("too long");
    assert!(
        refused.to_string().contains("larger than the limit"),
        "{refused}"
    );
    fs::remove_file(&next).unwrap();
    assert_eq!(loaded(&dir), history()[3]);
    fs::remove_dir_all(&dir).unwrap();
}
