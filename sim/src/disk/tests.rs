//! The simulated disk's faults, one test each: what a correct reader gets back, and what the
//! flawed readers of the storage variants get wrong.

use super::*;

#[test]
fn a_torn_first_save_leaves_a_disk_with_no_state_not_a_damaged_one() {
    for seed in 0..100 {
        let disk = Disk::new();
        disk.tear_next_save(DetRng::new(seed));
        assert_eq!(disk.save(&[7; 3000]), Err(StorageError::Crashed));
        disk.reboot();
        // Nothing, or the save whole if its first copy was written before the crash.
        let loaded = disk.load().expect("a copy checks out");
        assert!(loaded.is_none_or(|state| state == [7; 3000]), "seed {seed}");
        disk.save(b"after").unwrap();
        assert_eq!(disk.load().unwrap().as_deref(), Some(&b"after"[..]));
    }
}

#[test]
fn an_armed_read_error_fails_one_load_and_the_next_reads_the_state() {
    let disk = Disk::new();
    disk.save(b"state").unwrap();
    disk.fail_next_read();
    assert!(matches!(disk.load(), Err(StorageError::Io(_))));
    assert_eq!(disk.load().unwrap().as_deref(), Some(&b"state"[..]));
    assert_eq!(disk.stats().read_errors, 1);
}

#[test]
fn a_torn_save_leaves_the_previous_state_loadable() {
    for seed in 0..200 {
        let disk = Disk::new();
        assert_eq!(disk.load(), Ok(None));
        disk.save(b"first").unwrap();
        disk.save(b"second").unwrap();
        disk.tear_next_save(DetRng::new(seed));
        assert_eq!(disk.save(b"third, torn"), Err(StorageError::Crashed));
        assert!(disk.is_frozen());
        assert_eq!(disk.save(b"fourth, lost"), Err(StorageError::Crashed));
        let loaded = disk
            .load()
            .expect("one slot survives")
            .expect("state present");
        assert!(
            loaded == b"second" || loaded == b"third, torn",
            "seed {seed}: {loaded:?}"
        );
        disk.reboot();
        disk.save(b"fifth").unwrap();
        assert_eq!(disk.load(), Ok(Some(b"fifth".to_vec())));
    }
}

fn write(disk: &Disk, bytes: &[u8]) -> node::WriteTicket {
    node::WriteTicket(disk.write(bytes, Durability::Cached).expect("written"))
}

#[test]
fn a_power_loss_takes_every_write_since_the_last_sync_and_nothing_before() {
    for layout in [Layout::TwoCopies, Layout::InPlace] {
        let disk = Disk::with_layout(layout);
        disk.save(b"synced").unwrap();
        let unsynced = write(&disk, b"written, visible");
        assert_eq!(disk.load(), Ok(Some(b"written, visible".to_vec())));
        write(&disk, b"written again");
        assert_eq!(disk.lose_unsynced(), 2, "{layout:?}");
        assert_eq!(disk.load(), Ok(Some(b"synced".to_vec())), "{layout:?}");
        // A sync covers every write before it.
        write(&disk, b"one");
        let two = write(&disk, b"two");
        disk.sync(two).unwrap();
        assert_eq!(disk.lose_unsynced(), 0);
        assert_eq!(disk.load(), Ok(Some(b"two".to_vec())), "{layout:?}");
        assert!(unsynced < two);
        assert_eq!(disk.stats().lost, 2);
    }
}

#[test]
fn a_sync_makes_durable_the_writes_made_before_it_began_and_none_after() {
    let disk = Disk::new();
    disk.save(b"synced").unwrap();
    let one = write(&disk, b"one");
    let sync = disk.begin_sync(one).unwrap();
    // Written while the sync runs: "three" overwrites the slot that held "one".
    write(&disk, b"two");
    write(&disk, b"three");
    disk.end_sync(sync).unwrap();
    assert_eq!(disk.load(), Ok(Some(b"three".to_vec())), "the cache");
    assert_eq!(disk.lose_unsynced(), 2);
    assert_eq!(
        disk.load(),
        Ok(Some(b"one".to_vec())),
        "what the sync found"
    );
}

#[test]
fn a_power_cut_during_a_sync_fails_it_and_keeps_only_what_was_synced_before() {
    let disk = Disk::new();
    disk.save(b"synced").unwrap();
    let one = write(&disk, b"one");
    let sync = disk.begin_sync(one).unwrap();
    disk.cut_power();
    assert_eq!(disk.end_sync(sync), Err(StorageError::Crashed));
    assert_eq!(disk.lose_unsynced(), 1);
    assert_eq!(disk.load(), Ok(Some(b"synced".to_vec())));

    // Armed: the next sync to begin is the one cut.
    disk.reboot();
    disk.cut_power_in_next_sync();
    let two = write(&disk, b"two");
    let sync = disk.begin_sync(two).unwrap();
    assert_eq!(disk.end_sync(sync), Err(StorageError::Crashed));
    assert!(!disk.cancel_power_cut_in_sync(), "taken by the sync");
    assert!(disk.is_frozen());
    assert_eq!(disk.lose_unsynced(), 1);
    assert_eq!(disk.load(), Ok(Some(b"synced".to_vec())));
}

#[test]
fn a_power_cut_taken_back_while_a_sync_runs_leaves_the_sync_to_end() {
    let disk = Disk::new();
    disk.cut_power_in_next_sync();
    let one = write(&disk, b"one");
    let sync = disk.begin_sync(one).unwrap();
    assert!(disk.cancel_power_cut_in_sync(), "the run ended meanwhile");
    assert_eq!(disk.end_sync(sync), Ok(()));
    assert_eq!(disk.lose_unsynced(), 0);
    assert_eq!(disk.load(), Ok(Some(b"one".to_vec())));
}

#[test]
fn a_disk_never_synced_comes_back_empty() {
    let disk = Disk::new();
    write(&disk, b"a");
    write(&disk, b"b");
    write(&disk, b"c");
    assert_eq!(disk.lose_unsynced(), 3);
    assert_eq!(disk.load(), Ok(None));
}

#[test]
fn an_in_place_disk_keeps_only_a_prefix_of_a_torn_write() {
    let disk = Disk::with_layout(Layout::InPlace);
    disk.save(b"aaaaaaaa").unwrap();
    disk.tear_next_save(DetRng::new(3));
    assert!(disk.save(b"bbbbbbbb").is_err());
    let loaded = disk.load().unwrap().unwrap_or_default();
    assert!(
        loaded.len() < 8 && loaded.iter().all(|&b| b == b'b'),
        "{loaded:?}"
    );
}

/// A disk holding "one" then "two", both synced.
fn disk_with_two_saves(flaw: Flaw) -> Disk {
    let disk = Disk::new().with_flaw(flaw);
    disk.save(b"one").unwrap();
    disk.save(b"two").unwrap();
    disk
}

#[test]
fn a_copy_corrupted_at_rest_is_never_served_and_the_other_copy_is() {
    for seed in 0..200 {
        let disk = disk_with_two_saves(Flaw::None);
        assert_eq!(
            disk.corrupt_one_copy(DetRng::new(seed)),
            Some(0),
            "seed {seed}"
        );
        assert_eq!(disk.load(), Ok(Some(b"two".to_vec())), "seed {seed}");
        // The damaged copy is written first: a tear of the next save leaves "two" or "three".
        disk.tear_next_save(DetRng::new(seed));
        assert_eq!(disk.save(b"three"), Err(StorageError::Crashed));
        disk.reboot();
        let loaded = disk.load().unwrap().unwrap();
        assert!(
            loaded == b"two" || loaded == b"three",
            "seed {seed}: {loaded:?}"
        );
    }
}

#[test]
fn a_corruption_never_takes_the_last_good_copy() {
    let disk = disk_with_two_saves(Flaw::None);
    for seed in 0..50 {
        // Always the same copy: the other is the only good one.
        assert_eq!(disk.corrupt_one_copy(DetRng::new(seed)), Some(0));
    }
    assert_eq!(disk.load(), Ok(Some(b"two".to_vec())));
    assert_eq!(disk.stats().corrupted, 50);
    // After a misdirected save, the stale copy is the only one that may be corrupted.
    for seed in 0..50 {
        let disk = disk_with_two_saves(Flaw::None);
        disk.misdirect_next_save(DetRng::new(seed));
        disk.save(b"three").unwrap();
        disk.reboot();
        let corrupted = disk.corrupt_one_copy(DetRng::new(seed));
        assert_eq!(disk.load(), Ok(Some(b"three".to_vec())), "seed {seed}");
        let corrupted_after_load = disk.corrupt_one_copy(DetRng::new(seed)).unwrap();
        assert!(corrupted.is_none() || corrupted == Some(corrupted_after_load));
        assert_eq!(disk.load(), Ok(Some(b"three".to_vec())), "seed {seed}");
    }
}

#[test]
fn a_misdirected_save_stops_the_machine_and_the_newest_copy_is_read() {
    let mut stale_first = 0;
    for seed in 0..100 {
        let disk = disk_with_two_saves(Flaw::None);
        disk.misdirect_next_save(DetRng::new(seed));
        assert_eq!(
            disk.save(b"three"),
            Ok(()),
            "the disk acknowledged both copies"
        );
        assert!(disk.is_frozen());
        assert_eq!(disk.save(b"four"), Err(StorageError::Crashed));
        disk.reboot();
        stale_first += usize::from(unframe(&disk.state.lock().slots[0]).unwrap().1 == b"two");
        assert_eq!(disk.load(), Ok(Some(b"three".to_vec())), "seed {seed}");
        // The stale copy goes first: a tear of the next save cannot take "three".
        disk.tear_next_save(DetRng::new(seed));
        assert!(disk.save(b"four").is_err());
        disk.reboot();
        let loaded = disk.load().unwrap().unwrap();
        assert!(
            loaded == b"three" || loaded == b"four",
            "seed {seed}: {loaded:?}"
        );
        assert_eq!(disk.stats().misdirected, 1);
    }
    assert!(
        (20..80).contains(&stale_first),
        "either copy: {stale_first}"
    );
}

#[test]
fn a_tear_armed_with_a_misdirection_never_leaves_a_disk_with_no_good_copy() {
    for seed in 0..200 {
        let disk = disk_with_two_saves(Flaw::None);
        disk.corrupt_one_copy(DetRng::new(seed));
        disk.misdirect_next_save(DetRng::new(seed));
        disk.tear_next_save(DetRng::new(seed + 1000));
        assert_eq!(disk.save(&[3; 2000]), Err(StorageError::Crashed));
        disk.reboot();
        let loaded = disk.load().unwrap().unwrap();
        assert!(loaded == b"two" || loaded == [3; 2000], "seed {seed}");
        assert_eq!(disk.stats().misdirected, 0, "taken back by the crash");
    }
}

#[test]
fn a_save_after_a_torn_one_never_reuses_its_number() {
    for seed in 0..200 {
        let disk = disk_with_two_saves(Flaw::None);
        disk.tear_next_save(DetRng::new(seed));
        assert!(disk.save(&[3; 2000]).is_err());
        disk.reboot();
        disk.load().unwrap();
        // The torn save's first copy may be whole: "four" must not take its number.
        disk.misdirect_next_save(DetRng::new(seed + 1000));
        disk.save(b"four").unwrap();
        disk.reboot();
        assert_eq!(disk.load(), Ok(Some(b"four".to_vec())), "seed {seed}");
    }
}

#[test]
fn reading_the_first_good_copy_serves_a_stale_state_after_a_misdirected_save() {
    let served_stale = (0..100)
        .filter(|&seed| {
            let disk = disk_with_two_saves(Flaw::FirstGoodCopy);
            disk.misdirect_next_save(DetRng::new(seed));
            disk.save(b"three").unwrap();
            disk.reboot();
            disk.load() == Ok(Some(b"two".to_vec()))
        })
        .count();
    assert!(served_stale > 20, "{served_stale}");
    // Corruption and tears alone never fool it.
    for seed in 0..100 {
        let disk = disk_with_two_saves(Flaw::FirstGoodCopy);
        disk.corrupt_one_copy(DetRng::new(seed));
        assert_eq!(disk.load(), Ok(Some(b"two".to_vec())));
        disk.tear_next_save(DetRng::new(seed));
        assert!(disk.save(&[3; 2000]).is_err());
        disk.reboot();
        let loaded = disk.load().unwrap().unwrap();
        assert!(loaded == b"two" || loaded == [3; 2000], "seed {seed}");
    }
}

#[test]
fn trusting_agreeing_copies_serves_a_corrupted_one() {
    let state = vec![5u8; 600];
    let served_corrupt = (0..100)
        .filter(|&seed| {
            let disk = Disk::new().with_flaw(Flaw::TrustsAgreeingCopies);
            disk.save(&state).unwrap();
            disk.corrupt_one_copy(DetRng::new(seed));
            disk.load().unwrap().is_some_and(|loaded| loaded != state)
        })
        .count();
    assert!(served_corrupt > 80, "{served_corrupt}");
    // A misdirected save leaves copies that disagree: checked, and the newest taken.
    for seed in 0..100 {
        let disk = disk_with_two_saves(Flaw::TrustsAgreeingCopies);
        disk.misdirect_next_save(DetRng::new(seed));
        disk.save(b"three").unwrap();
        disk.reboot();
        assert_eq!(disk.load(), Ok(Some(b"three".to_vec())));
    }
}

#[test]
fn a_file_whose_directory_was_never_synced_is_lost_with_the_power() {
    let correct = disk_with_two_saves(Flaw::None);
    assert_eq!(correct.lose_unsynced(), 0);
    assert_eq!(correct.load(), Ok(Some(b"two".to_vec())));
    let flawed = disk_with_two_saves(Flaw::DirectoryNeverSynced);
    assert_eq!(
        flawed.load(),
        Ok(Some(b"two".to_vec())),
        "a process crash keeps it"
    );
    assert_eq!(flawed.lose_unsynced(), 2);
    assert_eq!(flawed.load(), Ok(None), "the file is gone");
    flawed.save(b"again").unwrap();
    assert_eq!(flawed.load(), Ok(Some(b"again".to_vec())));
}

#[test]
fn two_copies_damaged_at_once_are_refused_loudly() {
    let disk = disk_with_two_saves(Flaw::None);
    for slot in &mut disk.state.lock().slots {
        slot[20] ^= 1;
    }
    assert!(matches!(disk.load(), Err(StorageError::Corrupt(_))));
}
