//! The replicated key-value store under the fault workload: the correct read modes must be
//! linearizable on every seed; unsafe local reads, ReadIndex without its leadership round and
//! missing duplicate suppression must be rejected by the same workload and checker.

use models::Verdict;
use node::kv::ReadMode;
use node::kv::{ClerkConfig, KvServerConfig};
use node::{Mutation, MutationSet};
use sim::kv_workload::{new_clerk, simulate_kv};
use sim::kv_workload::{recheck_command, write_failure};
use sim::runner::seeds;
use sim::ClusterSettings;
use sim::{check_kv_history, replay_command, FaultMix, KvRun, KvWorkloadConfig};
use sim::{simulate, Cluster, ClusterConfig};
use std::path::PathBuf;
use std::time::Duration;
use threadsim::clock::spawn;
use threadsim::sync::Arc;

fn failures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/interleave-failures")
}

/// Checks `run`'s history; on a violation (or a check that ran out of budget) writes it out and
/// returns what happened and how to re-check the file.
fn check_linearizable(name: &str, seed: u64, run: &KvRun) -> Result<(), String> {
    let started = crate::support::stopwatch();
    let report = check_kv_history(&run.history);
    eprintln!(
        "{name} seed {seed}: {} operations ({} unknown), {:?} simulated, checked in {:?}, \
         {} leader isolations, {} crashes, {} local reads ({} by deposed leaders): {:?}",
        run.history.len(),
        run.figures.operations_unknown,
        run.figures.simulated,
        started.elapsed(),
        run.figures.leader_isolations,
        run.figures.crashes,
        run.figures.local_reads,
        run.figures.reads_by_deposed_leaders,
        report.verdict
    );
    if report.verdict == Verdict::Linearizable {
        return Ok(());
    }
    let file = write_failure(
        &failures_dir(),
        &format!("{name}-seed-{seed}"),
        &run.history,
        &report,
    )
    .expect("write the failing history");
    Err(format!(
        "history not linearizable ({:?}); written to {}\nre-check: {}",
        report.verdict,
        file.display(),
        recheck_command(&file)
    ))
}

/// Runs the workload in `read_mode` on each of `seeds`; each run must be linearizable.
fn linearizable_on_seeds(test: &str, read_mode: ReadMode, seeds: &[u64]) {
    let config = KvWorkloadConfig {
        read_mode,
        ..KvWorkloadConfig::default()
    };
    for &seed in seeds {
        let outcome = simulate_kv(seed, &config)
            .map_err(|failure| failure.message)
            .and_then(|run| {
                // Vacuity guards: the run did what it claims to.
                if run.figures.leader_isolations == 0 {
                    return Err("the leader was never cut off".into());
                }
                if run.figures.leaders_elected < 2 {
                    return Err(format!("{} leaders elected", run.figures.leaders_elected));
                }
                if run.figures.highest_applied < 1000 {
                    return Err(format!(
                        "only {} entries applied",
                        run.figures.highest_applied
                    ));
                }
                if run.history.len() < 2000 {
                    return Err(format!("only {} operations", run.history.len()));
                }
                // A mode whose reads all fail (rounds never confirmed) passes the checker with
                // every get unknown: the gets it served must be many (3,236 and 4,267 at
                // least over seeds 1-20 of ReadIndex and lease reads).
                let served = match read_mode {
                    ReadMode::ReadIndex => Some(run.figures.local_reads),
                    ReadMode::Lease => Some(run.figures.lease_reads),
                    ReadMode::Log | ReadMode::UnsafeLocal => None,
                };
                if let Some(served) = served.filter(|&served| served < 1000) {
                    return Err(format!("only {served} gets served by {read_mode} reads"));
                }
                if let Some(found) = &run.found_online {
                    return Err(format!("the online checker: {}", found.description));
                }
                check_linearizable(test, seed, &run)
            });
        if let Err(message) = outcome {
            panic!(
                "{test} failed with seed {seed}:\n{message}\nreplay: {}",
                replay_command(test, seed)
            );
        }
    }
}

/// Ten seeds of each read mode run in every suite (a key-value seed takes about 3 s in the test
/// profile); `INTERLEAVE_SEEDS=11..=100` runs more in each mode's `extra_seeds` (docs/kv.md).
/// One test per seed of a read mode, so that `cargo nextest run --partition count:K/N` spreads a
/// mode's seeds over machines (a loop inside one test cannot be split), and one test,
/// `extra_seeds`, for the seeds `INTERLEAVE_SEED` or `INTERLEAVE_SEEDS=a..=b` ask for (none by
/// default).
macro_rules! linearizable_per_seed {
    ($module:ident, $mode:expr, $($seed:literal => $test:ident),+) => {
        mod $module {
            use super::*;
            $(
                #[test]
                fn $test() {
                    let name = concat!("kv::", stringify!($module), "::", stringify!($test));
                    linearizable_on_seeds(name, $mode, &[$seed]);
                }
            )+
            #[test]
            fn extra_seeds() {
                let name = concat!("kv::", stringify!($module), "::extra_seeds");
                linearizable_on_seeds(name, $mode, &seeds(&[]));
            }
        }
    };
}

linearizable_per_seed!(reads_through_the_log_are_linearizable, ReadMode::Log,
    1 => seed_01, 2 => seed_02, 3 => seed_03, 4 => seed_04, 5 => seed_05,
    6 => seed_06, 7 => seed_07, 8 => seed_08, 9 => seed_09, 10 => seed_10);

linearizable_per_seed!(read_index_reads_are_linearizable, ReadMode::ReadIndex,
    1 => seed_01, 2 => seed_02, 3 => seed_03, 4 => seed_04, 5 => seed_05,
    6 => seed_06, 7 => seed_07, 8 => seed_08, 9 => seed_09, 10 => seed_10);

linearizable_per_seed!(lease_reads_are_linearizable, ReadMode::Lease,
    1 => seed_01, 2 => seed_02, 3 => seed_03, 4 => seed_04, 5 => seed_05,
    6 => seed_06, 7 => seed_07, 8 => seed_08, 9 => seed_09, 10 => seed_10);

/// Runs a broken variant on five seeds; every run must be rejected by the checker.
fn rejected_on_every_seed(name: &str, read_mode: ReadMode, mutations: MutationSet) -> Vec<KvRun> {
    let config = KvWorkloadConfig {
        cluster: ClusterSettings {
            mutations,
            ..ClusterSettings::default()
        },
        read_mode,
        ..KvWorkloadConfig::default()
    };
    rejected_on_every_seed_of(name, &config)
}

/// How many times a seed runs before a broken variant that survives it fails the test. On OS
/// threads a seed decides the faults, not the interleaving, and the bug needs one: the suite's
/// kv tests, run eight times on 2 cores, failed once with `read-index-without-round survived
/// seed 5` (2026-12-07), and such runs are rarer than one in fifty.
const RUNS_PER_SEED: usize = 3;

/// [`rejected_on_every_seed`] with the workload `config`: every seed's run must be rejected,
/// within [`RUNS_PER_SEED`] runs of it.
fn rejected_on_every_seed_of(name: &str, config: &KvWorkloadConfig) -> Vec<KvRun> {
    let mut runs = Vec::new();
    for seed in seeds(&[1, 2, 3, 4, 5]) {
        for attempt in 1..=RUNS_PER_SEED {
            let wall = crate::support::stopwatch();
            let run = simulate_kv(seed, config)
                .unwrap_or_else(|failure| panic!("{name} seed {seed}: {}", failure.message));
            let simulated_in = wall.elapsed();
            let started = crate::support::stopwatch();
            let report = check_kv_history(&run.history);
            eprintln!(
                "{name} seed {seed} (run {attempt}): simulated in {simulated_in:?}, {} operations, checked in {:?}, {} local reads, {} by deposed leaders: {:?}",
                run.history.len(),
                started.elapsed(),
                run.figures.local_reads,
                run.figures.reads_by_deposed_leaders,
                report.verdict
            );
            if report.verdict == Verdict::NotLinearizable {
                runs.push(run);
                break;
            }
            assert!(
                attempt < RUNS_PER_SEED,
                "{name} survived seed {seed} {RUNS_PER_SEED} times (replay: INTERLEAVE_SEED={seed})"
            );
        }
    }
    runs
}

#[test]
fn unsafe_local_reads_are_rejected() {
    let runs = rejected_on_every_seed(
        "unsafe-local",
        ReadMode::UnsafeLocal,
        MutationSet::default(),
    );
    for run in runs {
        // A run that stopped at a violation found online may stop before any deposed leader
        // served a read (a new leader's local read before it applied its predecessor's entries
        // is stale too); one that ran to its end must have had the opportunity.
        assert!(
            run.figures.reads_by_deposed_leaders > 0 || run.found_online.is_some(),
            "no stale-read opportunity in a run that ran to its end"
        );
        // The online checker found it and stopped the workload within a second of the return
        // that made it certain: no operation was called after. A key whose window outgrew the
        // online checker's budget is left to the whole history's check instead: seed 1 once ran
        // to its end (7,123 operations) unfound online, rejected by the whole history's check,
        // in eight runs of these tests (2026-12-07). Unfound with no key deferred would be a
        // violation the online checker missed, and fails.
        let Some(found) = run.found_online.as_ref() else {
            assert!(
                run.online.keys_deferred > 0,
                "not found online, and no key was left to the whole history's check: {:?}",
                run.online
            );
            continue;
        };
        assert!(found.delay() < Duration::from_secs(1), "{found:?}");
        let found_at = u64::try_from(found.found_at.as_nanos()).expect("fits");
        assert!(run
            .history
            .iter()
            .all(|operation| operation.call <= found_at));
    }
}

/// The run is twice the default's length: on real threads a stale read needs a deposed leader
/// to serve a key that its successor has since written, and with the cores shared (the suite's
/// other tests beside it) one run in about 30 of 27 s had none (measured: 2 of 24 five-seed
/// runs failed with four copies at once on 2 cores, the same before and after the disk's two
/// copies). A run stops at its first violation, so only a run that would survive pays.
#[test]
fn read_index_without_the_leadership_round_is_rejected() {
    let config = KvWorkloadConfig {
        cluster: ClusterSettings {
            mutations: MutationSet::only(Mutation::ReadIndexWithoutRound),
            ..ClusterSettings::default()
        },
        read_mode: ReadMode::ReadIndex,
        duration: 2 * KvWorkloadConfig::default().duration,
        ..KvWorkloadConfig::default()
    };
    let runs = rejected_on_every_seed_of("read-index-without-round", &config);
    for run in runs {
        // As for unsafe local reads: a run stopped at a violation found online may stop first.
        assert!(
            run.figures.reads_by_deposed_leaders > 0 || run.found_online.is_some(),
            "no stale-read opportunity in a run that ran to its end"
        );
    }
}

#[test]
fn no_duplicate_suppression_is_rejected() {
    rejected_on_every_seed(
        "no-duplicate-suppression",
        ReadMode::Log,
        MutationSet::only(Mutation::NoDuplicateSuppression),
    );
}

/// Several clerks append unique values to one key over an unreliable network, with the leader
/// cut off once; returns the final value and what each clerk had acknowledged, in order.
fn concurrent_appends(seed: u64, mutations: MutationSet) -> (String, Vec<Vec<String>>) {
    const CLIENTS: usize = 5;
    const APPENDS: usize = 30;
    let (sender, receiver) = std::sync::mpsc::channel();
    simulate(seed, move |sim| {
        let mut config = ClusterConfig::new(3);
        config.net.unreliable = true;
        config.node.mutations = mutations.clone();
        config.kv = Some(KvServerConfig {
            mutations,
            ..KvServerConfig::default()
        });
        let cluster = Arc::new(Cluster::new(sim, config));
        let clock = cluster.clock().clone();
        let clients: Vec<_> = (0..CLIENTS)
            .map(|index| {
                let mut clerk = new_clerk(&cluster, index, ClerkConfig::default());
                spawn(&clock, format!("client-{index}"), move || {
                    let mut acknowledged = Vec::new();
                    for n in 0..APPENDS {
                        let value = format!("{index}.{n};");
                        clerk.append("k", &value, None).expect("no deadline");
                        acknowledged.push(value);
                    }
                    acknowledged
                })
            })
            .collect();
        cluster.sleep(Duration::from_secs(1));
        if let Some(leader) = cluster.current_leader() {
            let others = cluster.others(leader);
            cluster.partition(&[vec![leader], others]);
            cluster.sleep(Duration::from_secs(2));
            cluster.heal();
        }
        let acknowledged: Vec<Vec<String>> = clients.into_iter().map(|c| c.join()).collect();
        let mut reader = new_clerk(&cluster, CLIENTS, ClerkConfig::default());
        let value = reader.get("k", None).expect("no deadline");
        cluster.shutdown();
        sender.send((value, acknowledged)).expect("receiver alive");
    })
    .unwrap_or_else(|failure| panic!("seed {seed}: {}", failure.message));
    receiver.recv().expect("the run's result")
}

/// Every acknowledged append must appear exactly once, and each clerk's in its order.
fn exactly_once_violation(value: &str, acknowledged: &[Vec<String>]) -> Option<String> {
    let appended: Vec<&str> = value.split_inclusive(';').collect();
    for (client, values) in acknowledged.iter().enumerate() {
        let mut last = None;
        for expected in values {
            let positions: Vec<usize> = appended
                .iter()
                .enumerate()
                .filter(|(_, v)| *v == expected)
                .map(|(i, _)| i)
                .collect();
            match positions.as_slice() {
                [position] if last.is_none_or(|last| last < *position) => last = Some(*position),
                [_] => return Some(format!("client {client}'s {expected:?} is out of order")),
                _ => {
                    return Some(format!(
                        "client {client}'s {expected:?} appears {} times",
                        positions.len()
                    ))
                }
            }
        }
    }
    let total: usize = acknowledged.iter().map(Vec::len).sum();
    (appended.len() != total).then(|| {
        format!(
            "{} appends in the value, {total} acknowledged",
            appended.len()
        )
    })
}

#[test]
fn every_acknowledged_append_appears_exactly_once_in_client_order() {
    for seed in seeds(&[1, 2, 3]) {
        let (value, acknowledged) = concurrent_appends(seed, MutationSet::default());
        if let Some(violation) = exactly_once_violation(&value, &acknowledged) {
            panic!(
                "seed {seed}: {violation}\nreplay: {}",
                replay_command(
                    "kv::every_acknowledged_append_appears_exactly_once_in_client_order",
                    seed
                )
            );
        }
    }
}

#[test]
fn without_duplicate_suppression_a_retried_append_appears_twice() {
    let found = (1..=10).find(|&seed| {
        let (value, acknowledged) =
            concurrent_appends(seed, MutationSet::only(Mutation::NoDuplicateSuppression));
        let violation = exactly_once_violation(&value, &acknowledged);
        eprintln!("no-duplicate-suppression, seed {seed}: {violation:?}");
        violation.is_some()
    });
    assert!(found.is_some(), "10 seeds found no duplicate append");
}

/// Sessions that expire all the time cost clients unknown outcomes, never a duplicate; the
/// variant that reopens an expired session instead applies retries twice.
#[test]
fn sessions_that_keep_expiring_cost_unknown_outcomes_never_a_duplicate() {
    let correct = KvWorkloadConfig::session_churn();
    for seed in 1..=2 {
        let run = simulate_kv(seed, &correct).expect("no invariant violated");
        assert!(
            run.figures.sessions_expired > 100,
            "only {} sessions expired",
            run.figures.sessions_expired
        );
        check_linearizable("sessions_that_keep_expiring", seed, &run).unwrap();
    }
}

#[test]
fn clients_stay_linearizable_while_the_configuration_changes_and_a_counted_learner_is_caught() {
    let changing = KvWorkloadConfig {
        cluster: ClusterSettings {
            faults: FaultMix {
                membership: true,
                ..FaultMix::DEFAULT
            },
            ..ClusterSettings::default()
        },
        ..KvWorkloadConfig::default()
    };
    let mut changes = 0;
    for seed in seeds(&[1, 2, 3]) {
        let run = simulate_kv(seed, &changing).unwrap_or_else(|failure| {
            panic!("seed {seed}: {}", failure.message);
        });
        // Vacuity: the clients were served, and (over the seeds: on OS threads how many
        // changes a leader takes varies) the configuration did change under them.
        let made = run.figures.membership_changes + run.figures.leadership_transfers;
        eprintln!("seed {seed}: {made} changes and transfers");
        changes += made;
        assert!(
            run.history.len() >= 2000,
            "seed {seed}: {}",
            run.history.len()
        );
        if let Err(message) = check_linearizable("kv-membership", seed, &run) {
            panic!("seed {seed}: {message}");
        }
    }
    assert!(changes >= 3, "{changes} changes over three seeds");
    // A learner counted toward majorities: two leaders of one term, or a leader without a
    // committed entry, while the clients run.
    let counted = KvWorkloadConfig {
        cluster: ClusterSettings {
            mutations: MutationSet::only(Mutation::LearnerCounted),
            ..changing.cluster.clone()
        },
        ..changing
    };
    let caught = (1..=5).find_map(|seed| simulate_kv(seed, &counted).err());
    let failure = caught
        .expect("learner-counted caught within 5 seeds")
        .message;
    assert!(failure.contains("invariant violated"), "{failure}");
}

/// The end's two probes run after the key-value clients too (as after the raft workload's
/// rounds): the run `interleave chaos --workload kv --fixed --mutation no-check-quorum --seed 2`
/// makes, whose leader, without check-quorum, holds its followers after the probe cuts it off
/// and fails the run for liveness; the correct build passes the same seed, its probe measured.
#[test]
fn the_end_probes_a_key_value_run_and_a_leader_without_check_quorum_fails_it() {
    let spec = |mutations: Vec<Mutation>| runspec::RunSpec {
        workload: runspec::Workload::Kv,
        mutations,
        ..runspec::RunSpec::default()
    };
    let broken = KvWorkloadConfig::from_spec(&spec(vec![Mutation::NoCheckQuorum]));
    let failure = simulate_kv(2, &broken).expect_err("a leader without check-quorum");
    assert!(
        failure.message.contains("after the end's probe"),
        "{}",
        failure.message
    );
    let run = simulate_kv(2, &KvWorkloadConfig::from_spec(&spec(Vec::new()))).unwrap();
    assert!(
        (run.figures.fault_windows.kinds()).any(|kind| kind.starts_with("probe: ")),
        "the correct build was probed"
    );
    assert_eq!(
        check_kv_history(&run.history).verdict,
        Verdict::Linearizable
    );
}
