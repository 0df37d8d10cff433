//! The corpus of hard histories in `models/corpus/`: what the project's own broken variants
//! produced under chaos and what the register generator writes, each with the verdict
//! `verdicts.tsv` gives and how that verdict was established. The tests check every verdict;
//! the `checker_speed` benchmark times every history.

use crate::formats::json;
use crate::{check, check_partitions, partition_by_key, CheckOptions, History, KeyValue, Register};
use crate::{KvInput, KvOutput, RegisterInput, RegisterOutput, Report, Verdict, Verdict::*};
use std::path::PathBuf;

/// The corpus folder.
pub fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus")
}

/// The model a corpus history is checked against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CorpusModel {
    /// [`Register`].
    Register,
    /// [`KeyValue`], key by key.
    Kv,
}

/// One row of `verdicts.tsv`.
#[derive(Clone, Debug)]
pub struct CorpusEntry {
    /// The file, relative to the corpus folder (`kv/...jsonl`).
    pub file: String,
    /// The model.
    pub model: CorpusModel,
    /// Its operations (the reader's count; a stale row fails the tests).
    pub operations: usize,
    /// How many of them have an unknown outcome.
    pub unknown: usize,
    /// The verdict it must get.
    pub verdict: Verdict,
    /// How that verdict was established.
    pub source: String,
}

impl CorpusEntry {
    /// A short name: the file without its folder and extension.
    pub fn name(&self) -> &str {
        let stem = self.file.rsplit('/').next().unwrap_or(&self.file);
        stem.strip_suffix(".jsonl").unwrap_or(stem)
    }

    /// Reads and parses the history (panics if the corpus is damaged: it is part of the source).
    pub fn read(&self) -> CorpusHistory {
        let path = dir().join(&self.file);
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        match self.model {
            CorpusModel::Register => CorpusHistory::Register(
                json::parse_register(&self.file, &text).expect("a valid history"),
            ),
            CorpusModel::Kv => {
                CorpusHistory::Kv(json::parse_kv(&self.file, &text).expect("a valid history"))
            }
        }
    }
}

/// A corpus history, parsed.
pub enum CorpusHistory {
    /// A register history.
    Register(History<RegisterInput, RegisterOutput>),
    /// A key-value history.
    Kv(History<KvInput, KvOutput>),
}

impl CorpusHistory {
    /// Its operations, and how many of them have an unknown outcome.
    pub fn counts(&self) -> (usize, usize) {
        fn count<I, O>(history: &History<I, O>) -> (usize, usize) {
            let unknown = history.iter().filter(|op| op.ret.is_none()).count();
            (history.len(), unknown)
        }
        match self {
            CorpusHistory::Register(history) => count(history),
            CorpusHistory::Kv(history) => count(history),
        }
    }

    /// Checks it (a key-value history key by key).
    pub fn check(&self, options: &CheckOptions) -> Report {
        match self {
            CorpusHistory::Register(history) => check(&Register, history, options),
            CorpusHistory::Kv(history) => {
                check_partitions(&KeyValue, partition_by_key(history), options)
            }
        }
    }
}

/// Every row of `verdicts.tsv` (tab-separated: file, model, operations, unknown, verdict,
/// source; `#` starts a comment line).
pub fn entries() -> Vec<CorpusEntry> {
    let path = dir().join("verdicts.tsv");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty() && !line.starts_with('#'))
        .map(|(number, line)| {
            let fields: Vec<&str> = line.split('\t').collect();
            let field = |at: usize| {
                *fields
                    .get(at)
                    .unwrap_or_else(|| panic!("verdicts.tsv:{}: too few fields", number + 1))
            };
            let count = |at: usize| {
                field(at)
                    .parse()
                    .unwrap_or_else(|_| panic!("verdicts.tsv:{}: not a count", number + 1))
            };
            CorpusEntry {
                file: field(0).to_string(),
                model: match field(1) {
                    "register" => CorpusModel::Register,
                    "kv" => CorpusModel::Kv,
                    other => panic!("verdicts.tsv:{}: unknown model {other:?}", number + 1),
                },
                operations: count(2),
                unknown: count(3),
                verdict: match field(4) {
                    "linearizable" => Linearizable,
                    "not_linearizable" => NotLinearizable,
                    other => panic!("verdicts.tsv:{}: unknown verdict {other:?}", number + 1),
                },
                source: field(5).to_string(),
            }
        })
        .collect()
}
