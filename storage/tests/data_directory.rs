//! Opening a data directory: what is refused, with which message, and that nothing is left
//! half-written.

use node::{Persister, StorageError};
use std::path::PathBuf;
use storage::{FilePersister, OpenError};

fn fresh_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("interleave-dir-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn a_missing_directory_is_created_and_starts_empty() {
    let dir = fresh_dir("missing").join("nested");
    let persister = FilePersister::open(&dir).expect("created");
    assert_eq!(persister.load().expect("empty"), None);
    persister.save(b"first").expect("saved");
    drop(persister);
    let reopened = FilePersister::open(&dir).expect("reopened");
    assert_eq!(
        reopened.load().expect("read").as_deref(),
        Some(&b"first"[..])
    );
    std::fs::remove_dir_all(dir.parent().unwrap()).unwrap();
}

#[test]
fn a_second_process_on_the_same_directory_is_refused() {
    let dir = fresh_dir("locked");
    let first = FilePersister::open(&dir).expect("the first");
    let error = FilePersister::open(&dir)
        .err()
        .expect("the second is refused");
    assert!(matches!(error, OpenError::InUse { .. }), "{error}");
    assert!(
        error.to_string().contains("in use by another process"),
        "{error}"
    );
    drop(first);
    FilePersister::open(&dir).expect("free again once the first is gone");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_file_where_the_directory_should_be_is_refused() {
    let path = fresh_dir("a-file");
    std::fs::write(&path, b"not a directory").unwrap();
    let error = FilePersister::open(&path).err().expect("refused");
    assert!(error.to_string().contains("is not a directory"), "{error}");
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn a_directory_that_cannot_be_created_is_refused() {
    let error = FilePersister::open(std::path::Path::new("/proc/interleave-data"))
        .err()
        .expect("refused");
    assert!(
        error
            .to_string()
            .contains("cannot create the data directory"),
        "{error}"
    );
}

#[test]
fn a_damaged_state_file_is_refused_with_its_path() {
    let dir = fresh_dir("damaged");
    let persister = FilePersister::open(&dir).expect("opened");
    persister.save(b"a state worth keeping").expect("saved");
    let path = persister.state_path().to_path_buf();
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[15] ^= 0x40;
    std::fs::write(&path, &bytes).unwrap();
    let error = persister.load().expect_err("a flipped bit is refused");
    assert!(
        matches!(&error, StorageError::Corrupt(what) if what.contains("checksum mismatch") && what.contains(&*path.to_string_lossy())),
        "{error}"
    );
    std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    let error = persister.load().expect_err("a truncated file is refused");
    assert!(error.to_string().contains("truncated"), "{error}");
    // The refusal changed nothing: the file is as the damage left it.
    assert_eq!(std::fs::read(&path).unwrap(), &bytes[..bytes.len() / 2]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_state_file_left_mid_save_is_discarded_and_the_last_state_kept() {
    let dir = fresh_dir("left-mid-save");
    let persister = FilePersister::open(&dir).expect("opened");
    persister.save(b"the last whole state").expect("saved");
    drop(persister);
    std::fs::write(dir.join("state.tmp"), b"half of a new st").unwrap();
    let reopened = FilePersister::open(&dir).expect("reopened");
    assert!(
        !dir.join("state.tmp").exists(),
        "the unfinished save is removed"
    );
    assert_eq!(
        reopened.load().expect("read").as_deref(),
        Some(&b"the last whole state"[..])
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_disk_made_to_fail_refuses_every_later_save_and_keeps_the_last_good_state() {
    let dir = fresh_dir("failing");
    let persister = FilePersister::open(&dir).expect("opened");
    persister.save(b"good").expect("saved");
    persister.fail_writes();
    for _ in 0..2 {
        let error = persister.save(b"lost").expect_err("the disk fails");
        assert!(matches!(error, StorageError::Io(_)), "{error}");
        assert!(error.to_string().contains("Input/output error"), "{error}");
    }
    drop(persister);
    let reopened = FilePersister::open(&dir).expect("reopened");
    assert_eq!(reopened.load().unwrap().as_deref(), Some(&b"good"[..]));
    reopened
        .save(b"new disk")
        .expect("a new process writes again");
    std::fs::remove_dir_all(&dir).unwrap();
}
