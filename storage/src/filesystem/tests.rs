//! What a crash of a [`MemoryFilesystem`] keeps: only what was made durable.

use super::*;
use std::path::Path;

fn disk_with_dir() -> (MemoryFilesystem, DirectoryHold) {
    let disk = MemoryFilesystem::new();
    let hold = disk
        .hold_directory(Path::new("/d"))
        .expect("a new directory");
    (disk, hold)
}

#[test]
fn a_crash_keeps_synced_appends_and_the_prefix_it_is_told_of_the_rest() {
    let (disk, _hold) = disk_with_dir();
    let path = Path::new("/d/log");
    let file = disk.create_new(path).unwrap();
    disk.sync_directory(Path::new("/d")).unwrap();
    file.append(b"durable").unwrap();
    file.sync_data().unwrap();
    file.append(b" and not").unwrap();
    disk.crash(&mut |_, unsynced| {
        assert_eq!(unsynced, 8);
        4
    });
    assert_eq!(disk.contents(path).unwrap(), b"durable and");
    let error = file.append(b"!").expect_err("opened before the crash");
    assert!(error.to_string().contains("crashed"), "{error}");
}

#[test]
fn a_name_is_kept_only_once_its_directory_is_synced() {
    let (disk, _hold) = disk_with_dir();
    let (old, new) = (Path::new("/d/old"), Path::new("/d/new"));
    disk.write_synced(old, b"x").unwrap();
    disk.sync_directory(Path::new("/d")).unwrap();
    disk.rename(old, new).unwrap();
    disk.write_synced(Path::new("/d/unsynced"), b"y").unwrap();
    assert!(disk.exists(new) && !disk.exists(old));
    disk.crash(&mut |_, _| 0);
    assert!(disk.exists(old) && !disk.exists(new));
    assert!(!disk.exists(Path::new("/d/unsynced")));
    assert_eq!(disk.contents(old).unwrap(), b"x");
}

#[test]
fn a_cut_refuses_every_change_after_it_and_a_held_directory_is_refused() {
    let (disk, _hold) = disk_with_dir();
    let in_use = disk.hold_directory(Path::new("/d")).err().expect("held");
    assert!(matches!(in_use, OpenError::InUse { .. }), "{in_use}");
    disk.cut_power_after(1);
    disk.write_synced(Path::new("/d/a"), b"torn")
        .expect_err("the write's sync is the second change");
    assert!(disk.power_cut());
    disk.remove(Path::new("/d/a"))
        .expect_err("no change after a cut");
    disk.crash(&mut |_, unsynced| unsynced);
    assert!(!disk.power_cut());
    disk.hold_directory(Path::new("/d"))
        .expect("a crash releases every hold");
}

#[test]
fn a_failed_sync_drops_what_it_should_have_written_and_a_crash_finds_zeros() {
    let (disk, _hold) = disk_with_dir();
    let path = Path::new("/d/log");
    let file = disk.create_new(path).unwrap();
    disk.sync_directory(Path::new("/d")).unwrap();
    file.append(b"kept").unwrap();
    file.sync_data().unwrap();
    file.append(b"gone").unwrap();
    disk.fail_next_sync();
    file.sync_data().expect_err("EIO");
    file.sync_data()
        .expect("a retry succeeds: the pages are clean");
    assert_eq!(
        disk.contents(path).unwrap(),
        b"keptgone",
        "the page cache keeps them"
    );
    disk.crash(&mut |_, unsynced| unsynced);
    assert_eq!(disk.contents(path).unwrap(), b"kept\0\0\0\0");
}

#[test]
fn a_full_disk_writes_what_fits_and_fails_with_enospc_until_there_is_room() {
    let (disk, _hold) = disk_with_dir();
    let path = Path::new("/d/log");
    let file = disk.create_new(path).unwrap();
    disk.fill_up_after(6);
    file.append(b"four").unwrap();
    let error = file.append(b"more").expect_err("no room");
    assert_eq!(error.raw_os_error(), Some(libc::ENOSPC));
    assert_eq!(disk.contents(path).unwrap(), b"fourmo", "what fitted");
    let snapshot = Path::new("/d/snapshot");
    assert!(disk.write_synced(snapshot, b"xyz").is_err());
    assert_eq!(disk.contents(snapshot).unwrap(), b"", "nothing fitted");
    disk.crash(&mut |_, unsynced| unsynced);
    assert!(disk.make_room(), "a crash keeps the disk full");
    assert!(!disk.make_room());
    disk.write_synced(snapshot, b"xyz").unwrap();
}
