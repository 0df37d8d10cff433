//! The lossy file system mounted for real: processes' files through the kernel, then a cut.

use super::*;
use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::time::Duration;

/// A fresh mount, or `None` where FUSE or root is missing (a skip on a user's machine, a
/// failure in CI: `realtools`). A mount that fails where both are here fails the test.
fn mounted(test: &str) -> Option<LossyMount> {
    if !realtools::require(&format!("lossy_fs::{test}"), available()) {
        return None;
    }
    let dir = std::env::temp_dir().join(format!("lossy-{test}-{}", std::process::id()));
    Some(LossyMount::mount(&dir).unwrap_or_else(|error| panic!("mount {}: {error}", dir.display())))
}

fn read(path: &Path) -> Vec<u8> {
    fs::read(path).unwrap()
}

#[test]
fn synced_writes_survive_a_power_cut_and_unsynced_ones_do_not() {
    let Some(mount) = mounted("sync") else { return };
    let dir = mount.dir().to_path_buf();
    let mut synced = File::create(dir.join("synced")).unwrap();
    synced.write_all(b"kept").unwrap();
    synced.sync_data().unwrap();
    File::open(&dir).unwrap().sync_all().unwrap();
    synced.write_all(b", and this lost").unwrap();
    fs::write(dir.join("never-synced"), b"gone").unwrap();
    assert_eq!(read(&dir.join("synced")), b"kept, and this lost");
    drop(synced);

    let report = mount.power_loss(LossMode::All, &mut DetRng::new(1));
    assert_eq!(read(&dir.join("synced")), b"kept");
    assert!(
        !dir.join("never-synced").exists(),
        "its name was never synced"
    );
    assert_eq!(report.bytes_lost, 15 + 4);
    assert_eq!(report.names_lost, 1);
}

#[test]
fn a_slow_sync_makes_durable_only_what_was_written_before_it_began() {
    let Some(mount) = mounted("latency") else {
        return;
    };
    mount.set_sync_latency(Duration::from_millis(200));
    let path = mount.dir().join("f");
    let file = File::create(&path).unwrap();
    File::open(mount.dir()).unwrap().sync_all().unwrap();
    (&file).write_all(b"before").unwrap();
    let began = server::real_time::now();
    std::thread::scope(|scope| {
        let syncing = scope.spawn(|| file.sync_data());
        server::real_time::sleep_until(server::real_time::now() + Duration::from_millis(50));
        OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b" during")
            .unwrap();
        syncing.join().unwrap().unwrap();
    });
    assert!(
        began.elapsed() >= Duration::from_millis(200),
        "the sync took its time"
    );
    drop(file);
    mount.power_loss(LossMode::All, &mut DetRng::new(1));
    assert_eq!(read(&path), b"before");
}

#[test]
fn the_kernel_sees_renames_removals_truncations_and_listings() {
    let Some(mount) = mounted("names") else {
        return;
    };
    let dir = mount.dir().to_path_buf();
    fs::create_dir(dir.join("sub")).unwrap();
    fs::write(dir.join("sub/a.tmp"), vec![7u8; 300_000]).unwrap();
    fs::rename(dir.join("sub/a.tmp"), dir.join("sub/a")).unwrap();
    assert_eq!(
        read(&dir.join("sub/a")),
        vec![7u8; 300_000],
        "several writes' worth"
    );
    let mut file = OpenOptions::new()
        .write(true)
        .open(dir.join("sub/a"))
        .unwrap();
    file.set_len(10).unwrap();
    file.seek(SeekFrom::Start(20)).unwrap();
    file.write_all(b"x").unwrap();
    let mut contents = Vec::new();
    File::open(dir.join("sub/a"))
        .unwrap()
        .read_to_end(&mut contents)
        .unwrap();
    assert_eq!(contents.len(), 21);
    assert_eq!(&contents[10..20], &[0; 10]);
    fs::write(dir.join("sub/b"), b"").unwrap();
    let mut names: Vec<String> = fs::read_dir(dir.join("sub"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["a", "b"]);
    fs::remove_file(dir.join("sub/b")).unwrap();
    assert!(fs::remove_dir(dir.join("sub")).is_err(), "not empty");
    assert!(!dir.join("sub/b").exists());
}

#[test]
fn a_full_disk_fails_writes_with_enospc() {
    let Some(mount) = mounted("full") else { return };
    let path = mount.dir().join("f");
    fs::write(&path, b"before").unwrap();
    mount.set_full(true);
    let error = fs::write(mount.dir().join("g"), b"x").unwrap_err();
    assert_eq!(error.raw_os_error(), Some(libc::ENOSPC));
    let mut file = OpenOptions::new().append(true).open(&path).unwrap();
    assert_eq!(
        file.write_all(b"after").unwrap_err().raw_os_error(),
        Some(libc::ENOSPC)
    );
    mount.set_full(false);
    file.write_all(b"after").unwrap();
    assert_eq!(read(&path), b"beforeafter");
}

#[test]
fn the_log_recovers_what_it_acknowledged_after_every_kind_of_cut() {
    use node::persist::StateEncoder;
    use node::{Command, Entry, LogIndex, PersistentState, Persister, Term};
    let Some(mount) = mounted("wal") else { return };
    let dir = mount.dir().join("node");
    let mut rng = DetRng::new(7);
    let mut acknowledged = PersistentState::default();
    let mut unsynced = PersistentState::default();
    for (round, mode) in LossMode::ALL.into_iter().cycle().take(12).enumerate() {
        let wal = storage::WalPersister::open(&dir).unwrap();
        let recovered = match wal.load().unwrap() {
            Some(bytes) => PersistentState::decode(&bytes).unwrap(),
            None => PersistentState::default(),
        };
        assert!(
            recovered == acknowledged || recovered == unsynced,
            "round {round}: recovered neither what was acknowledged nor what came after it"
        );
        let mut state = recovered;
        state.current_term = Term(round as u64 + 1);
        for i in 0..50 {
            state.log.append(Entry {
                term: state.current_term,
                command: Command::from_text(&format!("put k{i} round {round}")),
            });
            let ticket = wal.write_state(&state, &mut StateEncoder::new()).unwrap();
            wal.sync(ticket).unwrap();
        }
        if round % 4 == 3 {
            let last = state.log.last_index();
            state.log.compact_to(LogIndex(last.0 - 10));
            state.snapshot = format!("the service up to {}", last.0 - 10).into_bytes();
            let ticket = wal.write_state(&state, &mut StateEncoder::new()).unwrap();
            wal.sync(ticket).unwrap();
        }
        // Written, not synced: a cut may keep it or not, but nothing else.
        acknowledged = state.clone();
        state.log.append(Entry {
            term: state.current_term,
            command: Command::from_text("never acknowledged"),
        });
        let _ticket = wal.write_state(&state, &mut StateEncoder::new()).unwrap();
        unsynced = state;
        drop(wal);
        mount.power_loss(mode, &mut rng);
    }
}

#[test]
fn a_state_renamed_into_place_survives_a_cut_only_if_its_directory_was_synced() {
    use node::Persister;
    let Some(mount) = mounted("rename") else {
        return;
    };
    let correct = mount.dir().join("correct");
    let persister = storage::FilePersister::open(&correct).unwrap();
    persister.save(b"first").unwrap();
    persister.save(b"second").unwrap();
    drop(persister);
    let broken = mount.dir().join("broken");
    let persister =
        storage::FilePersister::open_broken(&broken, storage::BrokenWrite::NoDirSync).unwrap();
    persister.save(b"first").unwrap();
    persister.save(b"second").unwrap();
    drop(persister);
    mount.power_loss(LossMode::All, &mut DetRng::new(1));
    let load = |dir: &Path| storage::FilePersister::open(dir).unwrap().load().unwrap();
    assert_eq!(load(&correct).as_deref(), Some(&b"second"[..]));
    assert_ne!(
        load(&broken).as_deref(),
        Some(&b"second"[..]),
        "the last rename was never made durable"
    );
}

#[test]
fn unmounting_can_leave_the_files_in_the_directory_beneath() {
    let Some(mount) = mounted("keep") else { return };
    let dir = mount.dir().to_path_buf();
    fs::create_dir(dir.join("sub")).unwrap();
    fs::write(dir.join("sub/f"), b"kept").unwrap();
    mount.unmount_keeping_files().unwrap();
    assert_eq!(read(&dir.join("sub/f")), b"kept");
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_mount_whose_program_is_gone_is_unmounted_so_its_folder_can_be_removed() {
    if !realtools::require("lossy_fs::a_mount_whose_program_is_gone", available()) {
        return;
    }
    let root = std::env::temp_dir().join(format!("lossy-stale-{}", std::process::id()));
    let dir = root.join("cluster.partial/n0");
    // Served by no one: closing the device ends the connection, as a killed program's exit does.
    drop(mount_device(&dir).unwrap());
    assert!(is_stale(&dir));
    assert!(
        fs::remove_dir_all(&root).is_err(),
        "a stale mount cannot be removed"
    );
    assert_eq!(unmount_stale_below(&root), 1);
    fs::remove_dir_all(&root).unwrap();
    assert_eq!(unmount_stale_below(&root), 0, "a folder that is gone");
}

#[test]
fn a_path_that_cannot_be_a_mount_point_is_a_clear_error() {
    let file = std::env::temp_dir().join(format!("lossy-not-a-dir-{}", std::process::id()));
    fs::write(&file, b"").unwrap();
    let error = LossyMount::mount(&file)
        .err()
        .expect("a file is no mount point");
    assert!(
        error.to_string().contains(&*file.to_string_lossy()),
        "{error}"
    );
    fs::remove_file(&file).unwrap();
}
