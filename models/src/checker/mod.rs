//! The linearizability checker: partitions checked in parallel, each by [`search`], under a
//! [`Budget`], with a verdict that does not depend on thread timing.

mod bitset;
pub mod brute;
pub(crate) mod fold_hasher;
mod memo;
mod search;
mod set_digest;
#[cfg(all(test, not(any(loom, shuttle))))]
mod tests;

pub use bitset::Bitset;
pub(crate) use fold_hasher::FoldHasher;
pub use search::{search, SearchOutcome};

use crate::history::{History, Operation, Partition, Time};
use crate::model::{Decision, Model};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Limits on a check. When one runs out the answer is *unknown*, never a guess.
#[derive(Clone, Debug)]
pub struct Budget {
    /// The most (set, state) pairs one partition's memo may hold (each set kept as a 16-byte
    /// digest, whatever the history's length). Deterministic.
    pub max_states: usize,
    /// The most bytes one partition's search may hold: its memo, the model states it interned
    /// (their own heap data too, as [`Model::state_heap_bytes`] counts it) and the transitions
    /// between them. States can be large where sets are not (a key's value after 20,000
    /// appends), so this, not `max_states`, is what bounds the memory. Deterministic.
    pub max_bytes: usize,
    /// Wall-clock limit for the whole check, if any. Timing-dependent by nature.
    pub deadline: Option<Instant>,
}

/// The default of [`Budget::max_bytes`]: 2 GiB.
pub const DEFAULT_MAX_BYTES: usize = 2 << 30;

impl Default for Budget {
    fn default() -> Self {
        Budget {
            max_states: 20_000_000,
            max_bytes: DEFAULT_MAX_BYTES,
            deadline: None,
        }
    }
}

impl Budget {
    /// A budget of `max_states`, the default memory, and, if given, `time` from now.
    pub fn new(max_states: usize, time: Option<Duration>) -> Budget {
        #[allow(clippy::disallowed_methods)] // the checker's time limit is real time by design
        let deadline = time.map(|time| Instant::now() + time);
        Budget {
            max_states,
            max_bytes: DEFAULT_MAX_BYTES,
            deadline,
        }
    }

    /// The same budget with at most `max_bytes` of memory.
    pub fn with_max_bytes(self, max_bytes: usize) -> Budget {
        Budget { max_bytes, ..self }
    }

    /// Why the memory budget is exhausted by a search holding `states` pairs in `bytes`, if it
    /// is (cheap: the search asks on every step).
    pub fn memory_exhausted(&self, states: usize, bytes: usize) -> Option<String> {
        if states > self.max_states {
            return Some(format!(
                "memo reached {states} states (limit {})",
                self.max_states
            ));
        }
        if bytes > self.max_bytes {
            return Some(format!(
                "search reached {} MiB (limit {} MiB)",
                bytes >> 20,
                self.max_bytes >> 20
            ));
        }
        None
    }

    /// Why the budget is exhausted, if it is: memory, or time.
    pub fn exhausted(&self, states: usize, bytes: usize) -> Option<String> {
        if let Some(reason) = self.memory_exhausted(states, bytes) {
            return Some(reason);
        }
        #[allow(clippy::disallowed_methods)]
        let now = Instant::now();
        match self.deadline {
            Some(deadline) if now >= deadline => Some("time limit reached".to_string()),
            _ => None,
        }
    }
}

/// The verdict on a whole history.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Every partition is linearizable.
    Linearizable,
    /// Some partition is not linearizable.
    NotLinearizable,
    /// No partition is illegal, but some ran out of budget.
    Unknown,
}

/// An operation as a report shows it, independent of the model's types.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OperationSummary {
    /// The client that issued it.
    pub client: u64,
    /// When it was called.
    pub call: Time,
    /// When it returned (`None`: unknown outcome).
    pub ret: Option<Time>,
    /// What it was, as the model describes it.
    pub description: String,
}

/// Why one partition is not linearizable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Counterexample {
    /// Every operation of the partition.
    pub operations: Vec<OperationSummary>,
    /// The longest linearizable prefix found: indices into `operations`, in linearization order.
    pub longest_prefix: Vec<usize>,
    /// Operations that could not be placed after that prefix (indices into `operations`).
    pub unplaced: Vec<usize>,
    /// Where the model decided the history itself ([`Model::decide`]): why it is not
    /// linearizable, shown with the operations that conflict as `unplaced` (and no prefix).
    pub why: Option<String>,
}

/// The outcome for one partition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PartitionVerdict {
    /// Linearizable.
    Linearizable,
    /// Not linearizable, with a counterexample.
    NotLinearizable(Box<Counterexample>),
    /// The budget ran out.
    Unknown(String),
    /// Stopped because another partition was illegal.
    Cancelled,
}

/// The check of one partition (one key of a store, or the whole history).
#[derive(Clone, Debug)]
pub struct PartitionReport {
    /// The partition's name (the key, or `"all"`).
    pub name: String,
    /// Its number of operations.
    pub operations: usize,
    /// Its outcome.
    pub verdict: PartitionVerdict,
    /// (set, state) pairs explored.
    pub states: u64,
    /// Time spent on it.
    pub elapsed: Duration,
}

/// The result of a check.
#[derive(Clone, Debug)]
pub struct Report {
    /// The overall verdict.
    pub verdict: Verdict,
    /// One report per partition, in the order given.
    pub partitions: Vec<PartitionReport>,
}

impl Report {
    /// The first partition (in the order given) that is not linearizable, with its counterexample.
    pub fn counterexample(&self) -> Option<(&PartitionReport, &Counterexample)> {
        self.partitions
            .iter()
            .find_map(|partition| match &partition.verdict {
                PartitionVerdict::NotLinearizable(counterexample) => {
                    Some((partition, counterexample.as_ref()))
                }
                _ => None,
            })
    }
}

/// How to run a check.
#[derive(Clone, Debug)]
pub struct CheckOptions {
    /// The limits.
    pub budget: Budget,
    /// Worker threads for partitions (default: the number of cores).
    pub threads: usize,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            budget: Budget::default(),
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        }
    }
}

/// Checks one history as a single partition.
pub fn check<M: Model>(
    model: &M,
    history: &History<M::Input, M::Output>,
    options: &CheckOptions,
) -> Report {
    check_partitions(model, vec![("all".to_string(), history.clone())], options)
}

/// Checks independent partitions (a history is linearizable iff each is) in parallel. The first
/// illegal partition stops the others; the verdict is *not linearizable* if any partition is,
/// else *unknown* if any ran out of budget, else *linearizable*, whatever the thread timing.
pub fn check_partitions<M: Model>(
    model: &M,
    partitions: Vec<Partition<M::Input, M::Output>>,
    options: &CheckOptions,
) -> Report {
    let slices: Vec<Slice<'_, M>> = partitions
        .iter()
        .map(|(name, history)| (name.as_str(), history.as_slice()))
        .collect();
    check_slices(model, &slices, options)
}

type Slice<'a, M> = (
    &'a str,
    &'a [Operation<<M as Model>::Input, <M as Model>::Output>],
);

/// The memo size of the first pass over the partitions (see `check_slices`).
pub const FIRST_PASS_STATES: usize = 50_000;

/// Checks every partition in two passes. The first, on every thread, gives each at most
/// [`FIRST_PASS_STATES`] states, so a partition that is quickly found illegal stops the others
/// even when a hard one (minutes of search) would have held a thread first; the second checks the
/// partitions the first could not decide, from scratch, with the whole budget, one at a time, so
/// `max_states` bounds the memo of the whole process, not of each thread (the first pass gives
/// each thread its share of `max_bytes`, so that bounds the whole process's too). A partition's verdict
/// is the one a single pass with the whole budget gives, so the verdict depends neither on the
/// passes nor on the number of threads.
fn check_slices<M: Model>(
    model: &M,
    partitions: &[Slice<'_, M>],
    options: &CheckOptions,
) -> Report {
    let cancel = AtomicBool::new(false);
    // Largest first, so one long partition does not start last.
    let mut order: Vec<usize> = (0..partitions.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(partitions[i].1.len()));
    let results: Vec<Mutex<Option<PartitionReport>>> =
        partitions.iter().map(|_| Mutex::new(None)).collect();
    let full = &options.budget;
    // Every thread of the first pass holds a memo of up to this many states at once, and its
    // share of the memory.
    let first_threads = options.threads.clamp(1, partitions.len().max(1));
    let first = Budget {
        max_states: full.max_states.min(FIRST_PASS_STATES),
        max_bytes: full.max_bytes / first_threads,
        deadline: full.deadline,
    };
    run_pass(
        model,
        partitions,
        &order,
        &first,
        options.threads,
        &cancel,
        &results,
    );
    if first.max_states < full.max_states || first.max_bytes < full.max_bytes {
        let undecided: Vec<usize> = order
            .iter()
            .copied()
            .filter(|&index| {
                let slot = results[index].lock().unwrap_or_else(|p| p.into_inner());
                slot.as_ref()
                    .is_some_and(|report| matches!(report.verdict, PartitionVerdict::Unknown(_)))
            })
            .collect();
        run_pass(model, partitions, &undecided, full, 1, &cancel, &results);
    }
    let partitions: Vec<PartitionReport> = results
        .into_iter()
        .zip(partitions.iter())
        .map(|(slot, (name, operations))| {
            slot.into_inner()
                .unwrap_or_else(|p| p.into_inner())
                .unwrap_or_else(|| PartitionReport {
                    name: name.to_string(),
                    operations: operations.len(),
                    verdict: PartitionVerdict::Cancelled,
                    states: 0,
                    elapsed: Duration::ZERO,
                })
        })
        .collect();
    let verdict = if partitions
        .iter()
        .any(|p| matches!(p.verdict, PartitionVerdict::NotLinearizable(_)))
    {
        Verdict::NotLinearizable
    } else if partitions
        .iter()
        .any(|p| matches!(p.verdict, PartitionVerdict::Unknown(_)))
    {
        Verdict::Unknown
    } else {
        assert!(
            partitions
                .iter()
                .all(|p| p.verdict == PartitionVerdict::Linearizable),
            "a partition was cancelled although none was illegal"
        );
        Verdict::Linearizable
    };
    Report {
        verdict,
        partitions,
    }
}

/// Checks the partitions in `order` on up to `threads` threads, each with `budget`, and stores
/// each report in its slot of `results` (a later pass replaces an earlier pass's report).
fn run_pass<M: Model>(
    model: &M,
    partitions: &[Slice<'_, M>],
    order: &[usize],
    budget: &Budget,
    threads: usize,
    cancel: &AtomicBool,
    results: &[Mutex<Option<PartitionReport>>],
) {
    let next = AtomicUsize::new(0);
    let threads = threads.clamp(1, order.len().max(1));
    let work = || loop {
        let slot = next.fetch_add(1, Ordering::SeqCst);
        let Some(&index) = order.get(slot) else {
            return;
        };
        let (name, operations) = partitions[index];
        let mut report = check_one(model, name, operations, budget, cancel);
        if matches!(report.verdict, PartitionVerdict::NotLinearizable(_)) {
            cancel.store(true, Ordering::SeqCst);
        }
        let mut slot = results[index].lock().unwrap_or_else(|p| p.into_inner());
        if let Some(earlier) = slot.as_ref() {
            report.elapsed += earlier.elapsed;
        }
        *slot = Some(report);
    };
    if threads == 1 {
        // No thread to spawn: small histories are dominated by the spawn otherwise.
        work();
    } else {
        std::thread::scope(|scope| {
            for _ in 0..threads {
                scope.spawn(work);
            }
        });
    }
}

fn check_one<M: Model>(
    model: &M,
    name: &str,
    operations: &[Operation<M::Input, M::Output>],
    budget: &Budget,
    cancel: &AtomicBool,
) -> PartitionReport {
    #[allow(clippy::disallowed_methods)] // reports how long the check took
    let started = Instant::now();
    let summaries = || -> Vec<OperationSummary> {
        operations
            .iter()
            .map(|op| OperationSummary {
                client: op.client,
                call: op.call,
                ret: op.ret,
                description: model.describe(&op.input, op.output()),
            })
            .collect()
    };
    if let Some(decision) = model.decide(operations) {
        let verdict = match decision {
            Decision::Linearizable => PartitionVerdict::Linearizable,
            Decision::NotLinearizable { window, why } => {
                PartitionVerdict::NotLinearizable(Box::new(Counterexample {
                    operations: summaries(),
                    longest_prefix: Vec::new(),
                    unplaced: window,
                    why: Some(why),
                }))
            }
        };
        return PartitionReport {
            name: name.to_string(),
            operations: operations.len(),
            verdict,
            states: 0,
            elapsed: started.elapsed(),
        };
    }
    let (outcome, states) = search(model, operations, budget, cancel);
    let verdict = match outcome {
        SearchOutcome::Linearizable => PartitionVerdict::Linearizable,
        SearchOutcome::Unknown(reason) => PartitionVerdict::Unknown(reason),
        SearchOutcome::Cancelled => PartitionVerdict::Cancelled,
        SearchOutcome::NotLinearizable {
            longest_prefix,
            unplaced,
        } => PartitionVerdict::NotLinearizable(Box::new(Counterexample {
            operations: summaries(),
            longest_prefix,
            unplaced,
            why: None,
        })),
    };
    PartitionReport {
        name: name.to_string(),
        operations: operations.len(),
        verdict,
        states,
        elapsed: started.elapsed(),
    }
}
