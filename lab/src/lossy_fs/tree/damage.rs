//! What the medium does to the tree: a power cut ([`Tree::power_loss`]), which keeps what was
//! synced and, of the rest, what the [`LossMode`] says; and damage at rest
//! ([`Tree::corrupt`]), a flipped bit or a zeroed sector in one file, which can be undone.

use super::{Ino, Inode, Node, Tree};
use crate::lossy_fs::change::Change;
use crate::lossy_fs::loss::{cut_unsynced, LossMode, LossReport, SECTOR};
use threadsim::DetRng;

/// Damage done to a file by `Tree::corrupt`, and what undoing it takes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Corruption {
    /// The file, from the mount's root.
    pub path: std::path::PathBuf,
    ino: Ino,
    /// Where the damage starts.
    pub offset: u64,
    /// The bytes that were there.
    original: Vec<u8>,
    /// Whether a sector was zeroed (else one bit flipped).
    pub zero_sector: bool,
}

impl std::fmt::Display for Corruption {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = if self.zero_sector {
            "a sector zeroed"
        } else {
            "a bit flipped"
        };
        write!(
            f,
            "{what} in {} at offset {}",
            self.path.display(),
            self.offset
        )
    }
}

/// Writes `bytes` over `contents` at `offset`, within its length.
fn overwrite(contents: &mut [u8], offset: usize, bytes: &[u8]) {
    let end = (offset + bytes.len()).min(contents.len());
    if offset < end {
        contents[offset..end].copy_from_slice(&bytes[..end - offset]);
    }
}

impl Tree {
    /// Damages one file on the medium, drawn from `rng` among the non-empty ones: one bit
    /// flipped, or (with `zero_sector`) a 512-byte sector zeroed, in what is seen and what is
    /// durable alike. Says what was done and what it takes to undo it; `None` if every file is
    /// empty.
    pub fn corrupt(&mut self, rng: &mut DetRng, zero_sector: bool) -> Option<Corruption> {
        let candidates: Vec<(std::path::PathBuf, Ino)> = self
            .walk()
            .into_iter()
            .filter(
                |(_, ino)| matches!(&self.inodes[ino].node, Node::File(f) if !f.current.is_empty()),
            )
            .collect();
        if candidates.is_empty() {
            return None;
        }
        let (path, ino) = candidates[rng.index(candidates.len())].clone();
        let Node::File(file) = &mut self.inodes.get_mut(&ino).expect("named").node else {
            unreachable!("a file was chosen")
        };
        let len = file.current.len();
        let (offset, new): (usize, Vec<u8>) = if zero_sector {
            let sector = rng.index(len.div_ceil(SECTOR));
            let start = sector * SECTOR;
            let end = (start + SECTOR).min(len);
            (start, vec![0; end - start])
        } else {
            let at = rng.index(len);
            (at, vec![file.current[at] ^ (1 << rng.index(8))])
        };
        let original = file.current[offset..offset + new.len()].to_vec();
        overwrite(&mut file.current, offset, &new);
        overwrite(&mut file.durable, offset, &new);
        Some(Corruption {
            path,
            ino,
            offset: offset as u64,
            original,
            zero_sector,
        })
    }

    /// Puts back the bytes `corruption` replaced.
    pub fn repair(&mut self, corruption: &Corruption) {
        if let Some(Inode {
            node: Node::File(file),
            ..
        }) = self.inodes.get_mut(&corruption.ino)
        {
            let offset = corruption.offset as usize;
            overwrite(&mut file.current, offset, &corruption.original);
            overwrite(&mut file.durable, offset, &corruption.original);
        }
    }

    /// A power cut (from [`Tree::power_off`], if it was called, or now): every directory back
    /// to its durable entries, every file to its durable contents plus what `mode` keeps of its
    /// unsynced changes (drawn from `rng`); then the power is on again. The processes using the
    /// file system must have been killed first; handles they left open are dropped.
    pub fn power_loss(&mut self, mode: LossMode, rng: &mut DetRng) -> LossReport {
        self.power_off();
        let mut report = LossReport::default();
        for inode in self.inodes.values_mut() {
            match &mut inode.node {
                Node::Dir(dir) => {
                    let lost: usize = dir
                        .current
                        .iter()
                        .filter(|(name, ino)| dir.durable.get(*name) != Some(ino))
                        .count();
                    report.names_lost += lost as u64;
                    dir.current = dir.durable.clone();
                }
                Node::File(file) if !file.unsynced.is_empty() => {
                    report.files_cut += 1;
                    let kept = cut_unsynced(&file.durable, &file.unsynced, mode, rng);
                    report.bytes_lost += file
                        .unsynced
                        .iter()
                        .map(|change| match change {
                            Change::Write { bytes, .. } => bytes.len() as u64,
                            Change::Resize(_) => 0,
                        })
                        .sum::<u64>()
                        .saturating_sub(kept.bytes_kept);
                    file.durable = kept.contents;
                    file.current = file.durable.clone();
                    file.unsynced.clear();
                }
                Node::File(_) => {}
            }
        }
        self.open.clear();
        self.collect_garbage();
        for inode in self.inodes.values() {
            match &inode.node {
                Node::Dir(dir) => assert_eq!(dir.current, dir.durable, "a directory after a cut"),
                Node::File(file) => assert!(file.unsynced.is_empty(), "a file after a cut"),
            }
        }
        self.powered_off = false;
        self.stats.power_losses += 1;
        report
    }
}
