//! `interleave gather`: the shards of a sharded chaos run put back together. Each shard's job
//! saved its `chaos --json` output; gather reads them all, checks that the shards ran every seed
//! of the range exactly once, and prints one summary with every failure and its replay line.

use crate::cli::GatherArgs;
use std::collections::BTreeMap;
use std::process::ExitCode;

/// A failing seed as its shard reported it.
#[derive(Debug)]
struct Failure {
    seed: u64,
    violation: String,
    replay: String,
    verified: bool,
}

/// What the shard files hold, together.
#[derive(Debug, Default)]
struct Gathered {
    /// Each shard's name ("3/8", or the file when unsharded) and its range's first and last seed.
    shards: Vec<(String, Option<(u64, u64)>)>,
    /// Each shard's run as its summary names it (the whole range, the flags, the tool's
    /// version), with the shards that name it: shards of one run name one.
    runs: BTreeMap<String, Vec<String>>,
    /// Seeds that ran, with how many times.
    seeds: BTreeMap<u64, u32>,
    failures: Vec<Failure>,
    nondeterministic: Vec<u64>,
    interrupted: Vec<String>,
    wall_sum: f64,
    wall_max: f64,
    simulated: f64,
}

/// What is wrong with a shard's file.
#[derive(Debug, PartialEq, thiserror::Error)]
enum ShardError {
    /// Something wrong on one line.
    #[error("line {line}: {what}")]
    OnLine {
        /// The line, from 1.
        line: usize,
        /// What.
        what: Box<ShardError>,
    },
    /// Not JSON.
    #[error("not a JSON object of `chaos --json` ({0})")]
    NotJson(String),
    /// Two summaries.
    #[error("a second summary: one file per shard")]
    SecondSummary,
    /// A seed's line without its seed.
    #[error("no seed")]
    NoSeed,
    /// A verdict other than passed and failed.
    #[error("verdict {0:?} is neither passed nor failed")]
    OtherVerdict(Option<String>),
    /// Another format version.
    #[error(
        "format version {0}; this build reads version {version}", version = crate::JSON_VERSION
    )]
    OtherVersion(u64),
    /// No format version.
    #[error("no format version: not the output of `chaos --json`")]
    NoVersion,
    /// No summary.
    #[error("no summary line: the shard's run did not finish")]
    NoSummary,
}

/// Why the shards are not one whole run.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
enum CoverageError {
    /// Shards of runs that differ in their range, flags or build.
    #[error("shards of different runs: {0}")]
    DifferentRuns(String),
    /// Shards numbered out of different totals.
    #[error("shards of different splits: every shard must be one of the same N")]
    DifferentSplits,
    /// A shard given twice.
    #[error("shard(s) given more than once: {0}")]
    RepeatedShards(String),
    /// Shards missing.
    #[error("{given} of {count} shards given; missing: {missing}")]
    MissingShards {
        /// How many were given.
        given: usize,
        /// Of how many.
        count: u64,
        /// The first ones missing.
        missing: String,
    },
    /// Seeds that ran twice.
    #[error("seeds that ran more than once: {0:?}")]
    RepeatedSeeds(Vec<u64>),
    /// Nothing ran.
    #[error("no seed ran")]
    NoSeed,
    /// A gap in the seeds.
    #[error(
        "{absent} of the {expected} seeds {first}..={last} did not run (first missing: \
         {missing:?}): a shard is absent or was cut short"
    )]
    MissingSeeds {
        /// How many did not run.
        absent: u64,
        /// How many the range holds.
        expected: u64,
        /// Its first seed.
        first: u64,
        /// Its last.
        last: u64,
        /// The first missing ones.
        missing: Vec<u64>,
    },
    /// Ranges that do not add up to the seeds that ran.
    #[error(
        "the shards' ranges hold {claimed} seeds but {expected} ran: shards of different runs \
         mixed?"
    )]
    RangesDisagree {
        /// What the ranges hold.
        claimed: u64,
        /// What ran.
        expected: u64,
    },
}

/// The largest shard file read (256 MiB): a shard of 10,000 seeds writes a few megabytes.
const MAX_SHARD_BYTES: u64 = 256 << 20;

/// Reads the files and prints the summary: exit 0 every seed of the range ran once and passed, 1
/// some failed, 2 a file is unreadable or malformed, or the shards miss or repeat seeds.
pub fn gather(args: &GatherArgs) -> ExitCode {
    let mut gathered = Gathered::default();
    for file in &args.files {
        let text = match userfiles::read_text(file, MAX_SHARD_BYTES) {
            Ok(text) => text,
            Err(error) => {
                eprintln!("interleave: {error}");
                return ExitCode::from(2);
            }
        };
        if let Err(message) = read_shard(&mut gathered, &file.display().to_string(), &text) {
            eprintln!("interleave: {}: {message}", file.display());
            return ExitCode::from(2);
        }
    }
    let coverage = check_coverage(&gathered);
    if args.json {
        println!("{}", summary_json(&gathered, coverage.as_ref().err()));
    } else {
        print_summary(&gathered, coverage.as_ref().err());
    }
    if coverage.is_err() || !gathered.interrupted.is_empty() {
        ExitCode::from(2)
    } else if !gathered.failures.is_empty() || !gathered.nondeterministic.is_empty() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn read_shard(gathered: &mut Gathered, name: &str, text: &str) -> Result<(), ShardError> {
    let mut summary = None;
    for (number, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let at = |what: ShardError| ShardError::OnLine {
            line: number + 1,
            what: Box::new(what),
        };
        let object: serde_json::Value = serde_json::from_str(line)
            .map_err(|error| at(ShardError::NotJson(error.to_string())))?;
        let object = match object.get("summary") {
            Some(inner) => {
                if summary.is_some() {
                    return Err(at(ShardError::SecondSummary));
                }
                summary = Some(inner.clone());
                continue;
            }
            None => object,
        };
        check_version(&object).map_err(at)?;
        let seed = object["seed"]
            .as_u64()
            .ok_or_else(|| at(ShardError::NoSeed))?;
        *gathered.seeds.entry(seed).or_default() += 1;
        match object["verdict"].as_str() {
            Some("passed") => {}
            Some("failed") => {
                let text = |field: &str| object[field].as_str().unwrap_or("").to_string();
                if object["nondeterministic"] == true {
                    gathered.nondeterministic.push(seed);
                }
                gathered.failures.push(Failure {
                    seed,
                    violation: text("violation"),
                    replay: text("replay"),
                    verified: object["replay_verified"] == true,
                });
            }
            other => return Err(at(ShardError::OtherVerdict(other.map(str::to_string)))),
        }
    }
    let summary = summary.ok_or(ShardError::NoSummary)?;
    check_version(&summary)?;
    let range = summary["range"].as_str().and_then(parse_range);
    let shard = summary["shard"].as_str().unwrap_or(name).to_string();
    if summary["interrupted"] == true {
        gathered.interrupted.push(shard.clone());
    }
    let run = &summary["run"];
    let identity = format!(
        "seeds {}, flags `{}`, interleave {}",
        run["range"].as_str().unwrap_or("(not said)"),
        run["flags"].as_str().unwrap_or("(not said)"),
        run["tool"].as_str().unwrap_or("(not said)"),
    );
    gathered
        .runs
        .entry(identity)
        .or_default()
        .push(shard.clone());
    gathered.shards.push((shard, range));
    let wall = summary["wall_s"].as_f64().unwrap_or(0.0);
    gathered.wall_sum += wall;
    gathered.wall_max = gathered.wall_max.max(wall);
    gathered.simulated += summary["simulated_s"].as_f64().unwrap_or(0.0);
    Ok(())
}

fn check_version(object: &serde_json::Value) -> Result<(), ShardError> {
    match object["version"].as_u64() {
        Some(version) if version == u64::from(crate::JSON_VERSION) => Ok(()),
        Some(version) => Err(ShardError::OtherVersion(version)),
        None => Err(ShardError::NoVersion),
    }
}

fn parse_range(text: &str) -> Option<(u64, u64)> {
    let (first, last) = text.split_once("..=")?;
    Some((first.parse().ok()?, last.parse().ok()?))
}

/// Ok when the shards are one run's (one range, flags and build) and, where they are numbered
/// ("2/8"), every one of them is there once.
fn check_shards(gathered: &Gathered) -> Result<(), CoverageError> {
    if gathered.runs.len() > 1 {
        let runs: Vec<String> = (gathered.runs.iter())
            .map(|(run, shards)| format!("{} of {run}", shards.join(", ")))
            .collect();
        return Err(CoverageError::DifferentRuns(runs.join("; ")));
    }
    let numbered: Vec<(u64, u64)> = (gathered.shards.iter())
        .filter_map(|(name, _)| {
            let (index, count) = name.split_once('/')?;
            Some((index.parse().ok()?, count.parse().ok()?))
        })
        .collect();
    let Some(&(_, count)) = numbered.first() else {
        return Ok(());
    };
    if numbered.len() != gathered.shards.len() || numbered.iter().any(|&(_, c)| c != count) {
        return Err(CoverageError::DifferentSplits);
    }
    let repeated: Vec<String> = (1..=count)
        .filter(|index| numbered.iter().filter(|&&(i, _)| i == *index).count() > 1)
        .map(|index| format!("{index}/{count}"))
        .collect();
    if !repeated.is_empty() {
        return Err(CoverageError::RepeatedShards(repeated.join(", ")));
    }
    let missing: Vec<String> = (1..=count)
        .filter(|index| !numbered.iter().any(|&(i, _)| i == *index))
        .map(|index| format!("{index}/{count}"))
        .take(10)
        .collect();
    if !missing.is_empty() {
        return Err(CoverageError::MissingShards {
            given: numbered.len(),
            count,
            missing: missing.join(", "),
        });
    }
    Ok(())
}

/// Ok when the shards are one whole run ([`check_shards`]) and the seeds that ran are exactly
/// one contiguous range, each once; else what is wrong.
fn check_coverage(gathered: &Gathered) -> Result<(u64, u64), CoverageError> {
    check_shards(gathered)?;
    let repeated: Vec<u64> = (gathered.seeds.iter())
        .filter(|(_, &times)| times > 1)
        .map(|(&seed, _)| seed)
        .take(10)
        .collect();
    if !repeated.is_empty() {
        return Err(CoverageError::RepeatedSeeds(repeated));
    }
    let (Some((&first, _)), Some((&last, _))) = (
        gathered.seeds.first_key_value(),
        gathered.seeds.last_key_value(),
    ) else {
        return Err(CoverageError::NoSeed);
    };
    let expected = last - first + 1;
    if gathered.seeds.len() as u64 != expected {
        let missing: Vec<u64> = (first..=last)
            .filter(|seed| !gathered.seeds.contains_key(seed))
            .take(10)
            .collect();
        return Err(CoverageError::MissingSeeds {
            absent: expected - gathered.seeds.len() as u64,
            expected,
            first,
            last,
            missing,
        });
    }
    let claimed: u64 = (gathered.shards.iter())
        .filter_map(|(_, range)| range.map(|(a, b)| b - a + 1))
        .sum();
    if claimed != expected {
        return Err(CoverageError::RangesDisagree { claimed, expected });
    }
    Ok((first, last))
}

fn print_summary(gathered: &Gathered, problem: Option<&CoverageError>) {
    let seeds = gathered.seeds.len();
    let range = match (
        gathered.seeds.first_key_value(),
        gathered.seeds.last_key_value(),
    ) {
        (Some((first, _)), Some((last, _))) => format!("{first}..={last}"),
        _ => "(none)".to_string(),
    };
    println!(
        "{seeds} seeds ({range}) from {} shard(s): {:.0} s of wall time in all, {:.1} s the longest shard, {:.0} simulated s",
        gathered.shards.len(),
        gathered.wall_sum,
        gathered.wall_max,
        gathered.simulated
    );
    for failure in &gathered.failures {
        println!("FAILED seed {}: {}", failure.seed, failure.violation);
        println!(
            "replay{}: {}",
            if failure.verified {
                ""
            } else {
                " (NOT verified)"
            },
            failure.replay
        );
    }
    if !gathered.nondeterministic.is_empty() {
        println!(
            "UNCONTROLLED NONDETERMINISM in seed(s) {:?}",
            gathered.nondeterministic
        );
    }
    if !gathered.interrupted.is_empty() {
        println!("interrupted shard(s): {}", gathered.interrupted.join(", "));
    }
    if let Some(problem) = problem {
        println!("INCOMPLETE: {problem}");
    }
    if gathered.failures.is_empty() {
        println!("found nothing: every seed passed");
    } else {
        let seeds: Vec<u64> = gathered.failures.iter().map(|f| f.seed).collect();
        println!("found {} failing seed(s): {seeds:?}", seeds.len());
    }
}

fn summary_json(gathered: &Gathered, problem: Option<&CoverageError>) -> serde_json::Value {
    serde_json::json!({
        "version": crate::JSON_VERSION,
        "seeds": gathered.seeds.len(),
        "shards": gathered.shards.iter().map(|(name, _)| name).collect::<Vec<_>>(),
        "complete": problem.is_none(),
        "problem": problem.map(ToString::to_string),
        "failures": gathered.failures.iter().map(|f| serde_json::json!({
            "seed": f.seed, "violation": f.violation, "replay": f.replay, "replay_verified": f.verified,
        })).collect::<Vec<_>>(),
        "nondeterministic": gathered.nondeterministic,
        "interrupted": gathered.interrupted,
        "wall_s_sum": gathered.wall_sum,
        "wall_s_max": gathered.wall_max,
        "simulated_s": gathered.simulated,
    })
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    fn shard(seeds: &[u64], shard: &str, range: &str) -> String {
        shard_of(seeds, shard, range, "--rounds 5")
    }

    fn shard_of(seeds: &[u64], shard: &str, range: &str, flags: &str) -> String {
        let mut text = String::new();
        for seed in seeds {
            text.push_str(&format!(
                "{{\"version\":1,\"seed\":{seed},\"verdict\":\"passed\"}}\n"
            ));
        }
        text.push_str(&format!(
            "{{\"summary\":{{\"version\":1,\"range\":\"{range}\",\"shard\":\"{shard}\",\"wall_s\":2.0,\"simulated_s\":10.0,\"interrupted\":false,\"run\":{{\"range\":\"1..=5\",\"flags\":\"{flags}\",\"tool\":\"0.1.0\"}}}}}}\n"
        ));
        text
    }

    fn gather_texts(texts: &[String]) -> Result<Gathered, ShardError> {
        let mut gathered = Gathered::default();
        for (i, text) in texts.iter().enumerate() {
            read_shard(&mut gathered, &format!("file {i}"), text)?;
        }
        Ok(gathered)
    }

    #[test]
    fn complete_shards_pass_and_a_missing_or_repeated_one_is_named() {
        let one = shard(&[1, 2], "1/2", "1..=2");
        let two = shard(&[3, 4, 5], "2/2", "3..=5");
        let both = gather_texts(&[one.clone(), two]).unwrap();
        assert_eq!(check_coverage(&both), Ok((1, 5)));
        assert_eq!(both.wall_max, 2.0);
        let gap = gather_texts(&[one.clone(), shard(&[4, 5], "2/2", "4..=5")]).unwrap();
        assert!(check_coverage(&gap)
            .unwrap_err()
            .to_string()
            .contains("first missing: [3]"));
        let twice = gather_texts(&[one.clone(), one]).unwrap();
        assert_eq!(
            check_coverage(&twice),
            Err(CoverageError::RepeatedShards("1/2".to_string()))
        );
    }

    #[test]
    fn one_shard_of_two_and_shards_of_different_runs_are_refused() {
        let one = shard(&[1, 2], "1/2", "1..=2");
        let alone = gather_texts(std::slice::from_ref(&one)).unwrap();
        assert_eq!(
            check_coverage(&alone),
            Err(CoverageError::MissingShards {
                given: 1,
                count: 2,
                missing: "2/2".to_string()
            })
        );
        let other_flags = shard_of(&[3, 4, 5], "2/2", "3..=5", "--rounds 50");
        let mixed = gather_texts(&[one.clone(), other_flags]).unwrap();
        let problem = check_coverage(&mixed).unwrap_err().to_string();
        assert!(
            problem.starts_with("shards of different runs: "),
            "{problem}"
        );
        assert!(problem.contains("--rounds 50"), "{problem}");
        let other_split = shard(&[3, 4, 5], "2/3", "3..=5");
        let split = gather_texts(&[one, other_split]).unwrap();
        assert_eq!(check_coverage(&split), Err(CoverageError::DifferentSplits));
    }

    #[test]
    fn a_file_that_is_not_chaos_output_is_refused_with_its_line() {
        for (text, expected) in [
            ("{\"seed\":1}\n", "line 1: no format version"),
            ("not json\n", "line 1: not a JSON object"),
            (
                "{\"version\":9,\"seed\":1,\"verdict\":\"passed\"}\n",
                "format version 9",
            ),
            (
                "{\"version\":1,\"seed\":1,\"verdict\":\"passed\"}\n",
                "no summary line",
            ),
            (
                "{\"version\":1,\"seed\":1,\"verdict\":\"maybe\"}\n",
                "neither passed nor failed",
            ),
        ] {
            let error = gather_texts(&[text.to_string()]).unwrap_err().to_string();
            assert!(error.contains(expected), "{text}: {error}");
        }
    }
}
