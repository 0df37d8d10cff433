//! What a power cut keeps of a file's unsynced writes. A disk writes back its cache in no
//! promised order and may stop in the middle of a write, so three kinds of cut, after Jepsen's
//! LazyFS: everything unsynced lost, a random prefix of the unsynced writes kept, or such a
//! prefix and then part of the next write (a torn page).

use super::change::Change;
use std::fmt;
use threadsim::DetRng;

/// A disk sector: a torn write keeps whole sectors of the write it tears.
pub const SECTOR: usize = 512;

/// How a power cut treats each file's unsynced writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LossMode {
    /// Every unsynced write lost.
    All,
    /// The first k of the n unsynced writes kept, k drawn from 0..=n.
    Prefix,
    /// The first k kept and the next one torn: whole sectors of its start kept, the rest lost.
    TornPage,
}

impl LossMode {
    /// Every mode.
    pub const ALL: [LossMode; 3] = [LossMode::All, LossMode::Prefix, LossMode::TornPage];
}

impl fmt::Display for LossMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            LossMode::All => "every unsynced write lost",
            LossMode::Prefix => "a prefix of each file's unsynced writes kept",
            LossMode::TornPage => "a prefix kept and the next write torn",
        })
    }
}

/// What a power cut did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LossReport {
    /// Files that had unsynced writes.
    pub files_cut: u64,
    /// Unsynced bytes that did not survive.
    pub bytes_lost: u64,
    /// Directory entries (new, renamed or removed names) undone.
    pub names_lost: u64,
}

impl fmt::Display for LossReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} unsynced bytes lost in {} files, {} names undone",
            self.bytes_lost, self.files_cut, self.names_lost
        )
    }
}

/// A file's contents after a cut.
#[derive(Debug, PartialEq, Eq)]
pub struct Kept {
    /// What the file holds.
    pub contents: Vec<u8>,
    /// How many of the unsynced bytes made it.
    pub bytes_kept: u64,
}

/// What survives of a file whose durable contents are `durable` and whose unsynced changes
/// are `unsynced`, under `mode`.
pub fn cut_unsynced(durable: &[u8], unsynced: &[Change], mode: LossMode, rng: &mut DetRng) -> Kept {
    let mut contents = durable.to_vec();
    let mut bytes_kept = 0;
    let kept_whole = match mode {
        LossMode::All => 0,
        LossMode::Prefix => rng.range_inclusive(0, unsynced.len() as u64) as usize,
        LossMode::TornPage => rng.index(unsynced.len()),
    };
    for change in &unsynced[..kept_whole] {
        change.apply(&mut contents);
        bytes_kept += written(change);
    }
    if mode == LossMode::TornPage {
        if let Change::Write { offset, bytes } = &unsynced[kept_whole] {
            let sectors = bytes.len().div_ceil(SECTOR);
            // Fewer sectors than the write has: at least one byte is lost.
            let kept = (rng.index(sectors) * SECTOR).min(bytes.len());
            let torn = Change::Write {
                offset: *offset,
                bytes: bytes[..kept].to_vec(),
            };
            torn.apply(&mut contents);
            bytes_kept += kept as u64;
        }
    }
    Kept {
        contents,
        bytes_kept,
    }
}

fn written(change: &Change) -> u64 {
    match change {
        Change::Write { bytes, .. } => bytes.len() as u64,
        Change::Resize(_) => 0,
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    fn write(offset: u64, bytes: &[u8]) -> Change {
        Change::Write {
            offset,
            bytes: bytes.to_vec(),
        }
    }

    #[test]
    fn every_mode_keeps_the_durable_contents_and_only_a_prefix_of_the_writes() {
        let unsynced = [
            write(4, b"efgh"),
            Change::Resize(6),
            write(6, &[b'x'; 2000]),
        ];
        for seed in 0..200 {
            let mut rng = DetRng::new(seed);
            for mode in LossMode::ALL {
                let kept = cut_unsynced(b"abcd", &unsynced, mode, &mut rng);
                assert!(kept.contents.starts_with(b"abcd"), "{mode:?}");
                let mut prefixes = vec![b"abcd".to_vec()];
                let mut contents = b"abcd".to_vec();
                for change in &unsynced {
                    change.apply(&mut contents);
                    prefixes.push(contents.clone());
                }
                match mode {
                    LossMode::All => assert_eq!(kept.contents, b"abcd"),
                    LossMode::Prefix => assert!(prefixes.contains(&kept.contents)),
                    LossMode::TornPage => {
                        // A state before the last write, or the last write torn at a sector.
                        let torn_last = kept.contents.starts_with(&prefixes[2])
                            && kept.contents.len() < prefixes[3].len()
                            && (kept.contents.len() - 6).is_multiple_of(SECTOR)
                            && kept.contents[6..].iter().all(|&byte| byte == b'x');
                        assert!(prefixes[..3].contains(&kept.contents) || torn_last);
                    }
                }
            }
        }
    }

    #[test]
    fn a_torn_write_keeps_whole_sectors_and_loses_at_least_a_byte() {
        let unsynced = [write(0, &[7; 3 * SECTOR + 1])];
        let mut lengths = std::collections::BTreeSet::new();
        for seed in 0..100 {
            let kept = cut_unsynced(b"", &unsynced, LossMode::TornPage, &mut DetRng::new(seed));
            assert_eq!(kept.contents.len() as u64, kept.bytes_kept);
            lengths.insert(kept.contents.len());
        }
        let expected: std::collections::BTreeSet<usize> = (0..4).map(|s| s * SECTOR).collect();
        assert_eq!(lengths, expected);
    }
}
