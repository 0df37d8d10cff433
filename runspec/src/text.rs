//! A run's text form, written and read only here: the flags of a replay line
//! (`--nodes 5 --rounds 200 --workload kv --read-mode lease ...`, every setting that differs from
//! the default) and the notes that head a schedule file (`# seed: 7`, `# flags: ...`,
//! `# violation: ...`).

use crate::spec::bounds;
use crate::{ClockSkew, Mutation, ReadMode, RunSpec, SchedulerKind, SimStorage, Workload};
use std::time::Duration;

/// The schedule note that holds the seed.
pub const SEED_NOTE: &str = "seed";
/// The schedule note that holds the flags.
pub const FLAGS_NOTE: &str = "flags";
/// The schedule note that holds the first line of the violation the run produced.
pub const VIOLATION_NOTE: &str = "violation";

/// Text that is not a run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    /// A word that is not a flag of a run.
    #[error("unknown flag {0:?}")]
    UnknownFlag(String),
    /// A flag without its value.
    #[error("{0} needs a value")]
    MissingValue(String),
    /// A value the flag does not take.
    #[error("{flag} {value:?}: {why}")]
    BadValue {
        /// The flag.
        flag: String,
        /// The value given.
        value: String,
        /// What is wrong with it.
        why: String,
    },
    /// A schedule without the note.
    #[error("the schedule has no `# {0}:` note")]
    MissingNote(&'static str),
    /// Settings out of bounds.
    #[error("{0}")]
    OutOfBounds(String),
}

impl RunSpec {
    /// The flags that say this run (without the seed), each setting that differs from the
    /// default; `--nodes` and `--rounds` always. [`RunSpec::parse_flags`] reads them back.
    pub fn flags(&self) -> String {
        let mut line = format!("--nodes {} --rounds {}", self.nodes, self.rounds);
        let mut push = |flag: String| {
            line.push(' ');
            line.push_str(&flag);
        };
        if self.reliable {
            push("--reliable".into());
        }
        for mutation in &self.mutations {
            push(format!("--mutation {mutation}"));
        }
        match self.workload {
            Workload::Raft => {}
            Workload::Kv => push(format!("--workload kv --read-mode {}", self.read_mode)),
            // Transactions go through the log whatever the read mode.
            Workload::ListAppend => push("--workload list-append".into()),
        }
        if let Some(duration) = self.duration {
            push(format!("--duration {}", duration.as_secs_f64()));
        }
        for (off, flag) in [
            (!self.faults.crashes, "--no-crashes"),
            (!self.faults.partitions, "--no-partitions"),
            (!self.faults.one_way, "--no-one-way"),
        ] {
            if off {
                push(flag.into());
            }
        }
        if !self.default_skew() {
            push(format!("--clock-skew {}", self.faults.skew));
        }
        if self.faults.pauses {
            push("--pauses".into());
        }
        if self.faults.fault_points {
            push("--fault-points".into());
        }
        if self.faults.liveness {
            push("--liveness".into());
        }
        if self.faults.power_loss {
            push("--power-loss".into());
        }
        if self.storage != SimStorage::Copies {
            push(format!("--storage {}", self.storage));
        }
        if self.faults.read_errors {
            push("--read-errors".into());
        }
        if self.faults.torn_writes {
            push("--torn-writes".into());
        }
        if self.faults.corruption {
            push("--corruption".into());
        }
        if self.faults.misdirected_writes {
            push("--misdirected-writes".into());
        }
        if self.faults.membership {
            push("--membership".into());
        }
        if self.overlap_unchecked {
            push("--without-overlap-check".into());
        }
        if self.faults.session_churn {
            push("--session-churn".into());
        }
        if let Some(bytes) = self.snapshot_threshold {
            push(format!("--snapshot-threshold {bytes}"));
        }
        if self.scheduler != SchedulerKind::Random {
            push(format!("--scheduler {}", self.scheduler.name()));
        }
        if self.scheduler == SchedulerKind::Pct {
            push(format!("--pct-depth {}", self.pct_depth));
        }
        if self.livelock_switches != crate::bounds::DEFAULT_LIVELOCK_SWITCHES {
            push(format!("--livelock-switches {}", self.livelock_switches));
        }
        line
    }

    /// The run of `seed` that `flags` say (as [`RunSpec::flags`] writes them; `--flag=value`
    /// is read too), every setting not named at its default.
    pub fn parse_flags(seed: u64, flags: &str) -> Result<RunSpec, SpecError> {
        let mut spec = RunSpec {
            seed,
            ..RunSpec::default()
        };
        let mut words = flags
            .split_whitespace()
            .flat_map(|word| match word.split_once('=') {
                Some((flag, value)) if word.starts_with("--") => vec![flag, value],
                _ => vec![word],
            });
        while let Some(flag) = words.next() {
            let mut value = || {
                words
                    .next()
                    .ok_or_else(|| SpecError::MissingValue(flag.to_string()))
            };
            match flag {
                "--reliable" => spec.reliable = true,
                "--no-crashes" => spec.faults.crashes = false,
                "--no-partitions" => spec.faults.partitions = false,
                "--no-one-way" => spec.faults.one_way = false,
                "--pauses" => spec.faults.pauses = true,
                "--fault-points" => spec.faults.fault_points = true,
                "--liveness" => spec.faults.liveness = true,
                "--power-loss" => spec.faults.power_loss = true,
                "--read-errors" => spec.faults.read_errors = true,
                "--torn-writes" => spec.faults.torn_writes = true,
                "--corruption" => spec.faults.corruption = true,
                "--misdirected-writes" => spec.faults.misdirected_writes = true,
                "--membership" => spec.faults.membership = true,
                "--without-overlap-check" => spec.overlap_unchecked = true,
                "--session-churn" => spec.faults.session_churn = true,
                "--nodes" => spec.nodes = number(flag, value()?)?,
                "--rounds" => spec.rounds = number(flag, value()?)?,
                "--pct-depth" => spec.pct_depth = number(flag, value()?)?,
                "--livelock-switches" => spec.livelock_switches = number(flag, value()?)?,
                "--snapshot-threshold" => spec.snapshot_threshold = Some(number(flag, value()?)?),
                "--storage" => {
                    let name = value()?;
                    spec.storage = SimStorage::from_name(name)
                        .ok_or_else(|| bad(flag, name, "known: copies, log"))?;
                }
                "--duration" => spec.duration = Some(seconds(flag, value()?)?),
                "--mutation" => {
                    let name = value()?;
                    let mutation = name.parse::<Mutation>().map_err(|e| bad(flag, name, e))?;
                    if !spec.mutations.contains(&mutation) {
                        spec.mutations.push(mutation);
                    }
                }
                "--workload" => spec.workload = named(flag, value()?, Workload::from_name)?,
                "--read-mode" => spec.read_mode = named(flag, value()?, ReadMode::from_name)?,
                "--clock-skew" => {
                    let name = value()?;
                    spec.faults.skew = name.parse::<ClockSkew>().map_err(|e| bad(flag, name, e))?
                }
                "--scheduler" => spec.scheduler = named(flag, value()?, SchedulerKind::from_name)?,
                other => return Err(SpecError::UnknownFlag(other.to_string())),
            }
        }
        spec.check().map_err(SpecError::OutOfBounds)?;
        Ok(spec)
    }

    /// The notes that head a schedule file of this run: the seed, the flags, and the first line
    /// of the violation it produced (if any).
    pub fn notes(&self, violation: Option<&str>) -> Vec<(String, String)> {
        let mut notes = vec![
            (SEED_NOTE.to_string(), self.seed.to_string()),
            (FLAGS_NOTE.to_string(), self.flags()),
        ];
        if let Some(violation) = violation {
            let first = violation.lines().next().unwrap_or_default();
            notes.push((VIOLATION_NOTE.to_string(), first.to_string()));
        }
        notes
    }

    /// The run a schedule file's notes say ([`RunSpec::notes`]); a file without a `flags` note
    /// is the default run of its seed.
    pub fn from_notes(notes: &[(String, String)]) -> Result<RunSpec, SpecError> {
        let note = |key: &str| {
            notes
                .iter()
                .find(|(name, _)| name == key)
                .map(|(_, value)| value.as_str())
        };
        let seed_text = note(SEED_NOTE).ok_or(SpecError::MissingNote(SEED_NOTE))?;
        let seed = number("# seed:", seed_text)?;
        RunSpec::parse_flags(seed, note(FLAGS_NOTE).unwrap_or_default())
    }
}

fn bad(flag: &str, value: &str, why: impl ToString) -> SpecError {
    SpecError::BadValue {
        flag: flag.to_string(),
        value: value.to_string(),
        why: why.to_string(),
    }
}

fn number<T: std::str::FromStr>(flag: &str, value: &str) -> Result<T, SpecError> {
    value
        .parse()
        .map_err(|_| bad(flag, value, "not a whole number in range"))
}

fn seconds(flag: &str, value: &str) -> Result<Duration, SpecError> {
    let seconds: f64 = value
        .parse()
        .map_err(|_| bad(flag, value, "not a number of seconds"))?;
    if !bounds::DURATION_SECONDS.contains(&seconds) {
        return Err(bad(flag, value, "outside 0.1..=86400 s"));
    }
    Ok(Duration::from_secs_f64(seconds))
}

fn named<T>(flag: &str, value: &str, from_name: fn(&str) -> Option<T>) -> Result<T, SpecError> {
    from_name(value).ok_or_else(|| bad(flag, value, "unknown name"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::FaultMix;

    /// Runs that differ from the default in every setting, one or several at a time.
    fn examples() -> Vec<RunSpec> {
        let base = RunSpec::default().with_seed(42);
        vec![
            base.clone(),
            RunSpec {
                workload: Workload::Kv,
                read_mode: ReadMode::Lease,
                duration: Some(Duration::from_millis(2_500)),
                faults: FaultMix {
                    skew: ClockSkew::BeyondBound,
                    ..FaultMix::DEFAULT
                },
                ..base.clone()
            },
            RunSpec {
                nodes: 4,
                rounds: 17,
                reliable: true,
                faults: FaultMix {
                    crashes: false,
                    partitions: false,
                    one_way: false,
                    skew: ClockSkew::Off,
                    pauses: true,
                    fault_points: true,
                    liveness: true,
                    power_loss: true,
                    read_errors: true,
                    torn_writes: true,
                    corruption: false,
                    misdirected_writes: false,
                    session_churn: false,
                    membership: false,
                },
                snapshot_threshold: Some(1024),
                mutations: vec![Mutation::ForgetVote, Mutation::HalfIsMajority],
                scheduler: SchedulerKind::Pct,
                pct_depth: 7,
                ..base.clone()
            },
            RunSpec {
                workload: Workload::Kv,
                faults: FaultMix {
                    session_churn: true,
                    ..FaultMix::DEFAULT
                },
                ..base.clone()
            },
            RunSpec {
                faults: FaultMix {
                    corruption: true,
                    misdirected_writes: true,
                    membership: true,
                    ..FaultMix::DEFAULT
                },
                overlap_unchecked: true,
                livelock_switches: 5_000,
                ..base.clone()
            },
            RunSpec {
                faults: FaultMix {
                    power_loss: true,
                    ..FaultMix::DEFAULT
                },
                storage: SimStorage::Log,
                ..base.clone()
            },
            RunSpec {
                scheduler: SchedulerKind::Os,
                workload: Workload::Kv,
                read_mode: ReadMode::UnsafeLocal,
                ..base
            },
        ]
    }

    #[test]
    fn every_run_reads_back_from_its_flags_and_its_notes() {
        for spec in examples() {
            assert_eq!(
                RunSpec::parse_flags(spec.seed, &spec.flags()),
                Ok(spec.clone())
            );
            assert_eq!(
                RunSpec::from_notes(&spec.notes(Some("boom\nmore"))),
                Ok(spec.clone())
            );
        }
    }

    /// The form replay lines have printed since schedules were first written: files in
    /// `regressions/` and users' folders still read.
    #[test]
    fn the_flags_keep_their_published_form() {
        let spec = &examples()[2];
        assert_eq!(
            spec.flags(),
            "--nodes 4 --rounds 17 --reliable --mutation forget-vote --mutation half-is-majority \
             --no-crashes --no-partitions --no-one-way --clock-skew off --pauses --fault-points --liveness --power-loss --read-errors --torn-writes --snapshot-threshold 1024 \
             --scheduler pct --pct-depth 7"
        );
        assert_eq!(
            examples()[1].flags(),
            "--nodes 5 --rounds 200 --workload kv --read-mode lease --duration 2.5 --clock-skew beyond"
        );
    }

    #[test]
    fn bad_text_is_refused_with_what_is_wrong() {
        let refused = |flags: &str| RunSpec::parse_flags(1, flags).unwrap_err().to_string();
        assert_eq!(refused("--nodes"), "--nodes needs a value");
        assert!(
            refused("--nodes 12").contains("outside 2..=9"),
            "{}",
            refused("--nodes 12")
        );
        assert!(refused("--nodes many").contains("not a whole number"));
        assert_eq!(refused("--frobnicate"), "unknown flag \"--frobnicate\"");
        assert!(refused("--mutation no-such-bug").contains("commit-old-term"));
        assert!(refused("--read-mode leases").contains("unknown name"));
        assert!(refused("--duration 1e9").contains("outside"));
        assert!(refused("--snapshot-threshold 10").contains("outside 256"));
        assert!(refused("--scheduler random-one-stream").contains("unknown name"));
        assert!(refused("--session-churn").contains("key-value workload's"));
        assert!(refused("--storage disk").contains("known: copies, log"));
        assert!(refused("--storage log --torn-writes").contains("two-copy disk's"));
        assert_eq!(
            RunSpec::from_notes(&[]).unwrap_err(),
            SpecError::MissingNote(SEED_NOTE)
        );
        assert_eq!(
            RunSpec::parse_flags(3, "--nodes=7 --workload=kv").map(|s| (s.nodes, s.workload)),
            Ok((7, Workload::Kv))
        );
    }
}
