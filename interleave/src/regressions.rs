//! The regressions file (`interleave/tests/regressions.txt`): seeds that once failed, kept in the
//! repository and replayed first by the suite, so a bug found once stays found (proptest's
//! convention). One line per seed: what must happen now, then the `chaos` flags of its run.
//!
//! ```text
//! passes --workload kv --seed 17   # found on the correct build, since fixed
//! fails --mutation forget-vote --seed 8   # a broken variant this seed must keep killing
//! ```

/// What a kept seed must do on today's build.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    /// Found on the correct build and fixed since: it must pass.
    Passes,
    /// A broken variant's failing seed: the variant must still fail on it.
    Fails,
}

/// One kept seed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Regression {
    /// Its line in the file (from 1).
    pub line: usize,
    /// What must happen.
    pub expect: Expect,
    /// Its run, the seed included (the random scheduler unless the flags name another).
    pub spec: runspec::RunSpec,
    /// The comment after `#`: what it found, and where it was fixed.
    pub note: String,
}

/// What is wrong with a line of the file.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {what}")]
pub struct RegressionError {
    /// The line, from 1.
    pub line: usize,
    /// What is wrong with it.
    pub what: WrongLine,
}

/// What is wrong with one line.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum WrongLine {
    /// A first word that is not `passes` or `fails`.
    #[error("{0:?} is not an expectation (`passes` or `fails`)")]
    NotAnExpectation(String),
    /// `--seed` last.
    #[error("--seed has no value")]
    SeedWithoutValue,
    /// `--seed` with a value that is not a seed.
    #[error("{0:?} is not a seed")]
    NotASeed(String),
    /// Two seeds.
    #[error("two seeds")]
    TwoSeeds,
    /// No seed.
    #[error("no --seed")]
    NoSeed,
    /// Flags that do not say a run.
    #[error(transparent)]
    Flags(#[from] runspec::SpecError),
    /// `fails` without a broken variant.
    #[error("`fails` needs the --mutation it fails with (the correct build must pass)")]
    FailsWithoutMutation,
}

/// Reads the file; an error names the line and what is wrong with it.
pub fn parse(text: &str) -> Result<Vec<Regression>, RegressionError> {
    let mut kept = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        let at = |what: WrongLine| RegressionError { line, what };
        let (body, note) = raw.split_once('#').unwrap_or((raw, ""));
        let mut words = body.split_whitespace();
        let Some(first) = words.next() else {
            continue;
        };
        let expect = match first {
            "passes" => Expect::Passes,
            "fails" => Expect::Fails,
            other => return Err(at(WrongLine::NotAnExpectation(other.to_string()))),
        };
        let mut flags: Vec<&str> = Vec::new();
        let mut seed = None;
        while let Some(word) = words.next() {
            if word == "--seed" {
                let value = words.next().ok_or(at(WrongLine::SeedWithoutValue))?;
                let parsed = value
                    .parse()
                    .map_err(|_| at(WrongLine::NotASeed(value.to_string())))?;
                if seed.replace(parsed).is_some() {
                    return Err(at(WrongLine::TwoSeeds));
                }
            } else {
                flags.push(word);
            }
        }
        let seed = seed.ok_or(at(WrongLine::NoSeed))?;
        let spec = runspec::RunSpec::parse_flags(seed, &flags.join(" "))
            .map_err(|error| at(error.into()))?;
        if expect == Expect::Fails && !spec.asks_for_broken() {
            return Err(at(WrongLine::FailsWithoutMutation));
        }
        kept.push(Regression {
            line,
            expect,
            spec,
            note: note.trim().to_string(),
        });
    }
    Ok(kept)
}

/// The line that keeps `spec`'s seed: `fails` for a run with a broken variant, else `passes`.
pub fn line_for(spec: &runspec::RunSpec) -> String {
    let expect = if spec.asks_for_broken() {
        "fails"
    } else {
        "passes"
    };
    format!("{expect} {} --seed {}", spec.flags(), spec.seed)
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn lines_are_read_with_their_notes_and_bad_ones_are_named() {
        let kept = parse("# a comment\n\npasses --workload kv --seed 17  # fixed in aabc91a\nfails --mutation forget-vote --seed 8\n").unwrap();
        assert_eq!(kept.len(), 2);
        assert_eq!(kept[0].line, 3);
        assert_eq!((kept[0].expect, kept[0].spec.seed), (Expect::Passes, 17));
        assert_eq!(kept[0].spec.workload, runspec::Workload::Kv);
        assert_eq!(kept[0].note, "fixed in aabc91a");
        for (text, error) in [
            ("maybe --seed 1", "not an expectation"),
            ("passes --workload kv", "no --seed"),
            ("passes --seed x", "not a seed"),
            ("passes --seed", "has no value"),
            ("passes --seed 1 --seed 2", "two seeds"),
            ("fails --seed 3", "needs the --mutation"),
            ("passes --nodes 12 --seed 3", "line 1: --nodes is outside"),
        ] {
            assert!(
                parse(text).unwrap_err().to_string().contains(error),
                "{text}"
            );
        }
        assert_eq!(
            line_for(&runspec::RunSpec {
                mutations: vec![runspec::Mutation::ForgetVote],
                ..runspec::RunSpec::default().with_seed(9)
            }),
            "fails --nodes 5 --rounds 200 --mutation forget-vote --seed 9"
        );
    }
}
