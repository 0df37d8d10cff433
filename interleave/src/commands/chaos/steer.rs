//! Coverage-steered exploration (`chaos --steer`), after DEMi's and Antithesis's: runs that
//! reach a rarely reached coverage point are kept, and later seeds start from a kept run's
//! configuration instead of a fresh swarm draw, so the range spends more of its seeds near the
//! states few runs reach.
//!
//! The range runs in generations of [`GENERATION`] seeds. A seed of the first generation draws
//! its configuration as the swarm does. After each generation, its runs are learnt in seed order:
//! a run that reached a point fewer than [`RARE_SHARE`] of the runs before it had reached (or
//! none) is kept. A seed of a later generation is, one time in two, a mutant of a kept run:
//! the kept run's configuration with each setting (cluster size, message loss, every fault
//! kind, clock skew with read mode, snapshots) replaced by the seed's own swarm draw one time in
//! four, and the seed's own schedule; the kept run is chosen with weight the sum, over the rare
//! points it reached, of one over how many runs have reached each by now, so keepers of a point
//! that became common fade. Everything depends on the range's first seed and the runs' coverage
//! alone, never on which worker finished first: a steered range is the same runs every time, and
//! each run's replay line names its configuration as any swarm seed's does.

use runspec::RunSpec;
use std::collections::BTreeMap;
use threadsim::DetRng;

/// Seeds per generation: learnt together, so the steering waits for the slowest of them.
pub(super) const GENERATION: u64 = 32;

/// A point reached by fewer than this share of the runs so far is rare.
const RARE_SHARE: f64 = 0.05;

/// The most runs kept; past it the one with the least weight goes.
const MOST_KEPT: usize = 256;

/// The chance that a setting of a mutant comes from its own swarm draw, not the kept run.
const SETTING_REDRAWN: f64 = 0.25;

/// Mixed into the range's first seed for the steering's own choices.
const STEERING_SALT: u64 = 0x5354_4545_525f_0001;

/// A run kept for reaching rare points.
#[derive(Clone, Debug)]
struct Kept {
    spec: RunSpec,
    rare: Vec<&'static str>,
}

/// The steering of one range of seeds.
#[derive(Debug)]
pub(super) struct Steering {
    /// The configuration every fresh seed draws from (seed 0).
    base: RunSpec,
    rng: DetRng,
    /// Runs learnt so far.
    runs: u64,
    /// For each point, the runs that reached it.
    reached: BTreeMap<&'static str, u64>,
    kept: Vec<Kept>,
    /// Seeds run as mutants, and of those how many reached a point then rare.
    mutants: u64,
    mutants_kept: u64,
    /// Of the fresh seeds, how many were kept.
    fresh_kept: u64,
    /// The seeds of the generation being run, and the runs of it learnt so far.
    planned: BTreeMap<u64, bool>,
    pending: Vec<(RunSpec, threadsim::coverage::Counts)>,
}

impl Steering {
    /// The steering of a range that starts at `first_seed`, every fresh seed drawing from `base`.
    pub(super) fn new(base: RunSpec, first_seed: u64) -> Steering {
        Steering {
            base,
            rng: DetRng::new(first_seed ^ STEERING_SALT),
            runs: 0,
            reached: BTreeMap::new(),
            kept: Vec::new(),
            mutants: 0,
            mutants_kept: 0,
            fresh_kept: 0,
            planned: BTreeMap::new(),
            pending: Vec::new(),
        }
    }

    /// The runs of the next generation, for `seeds` (the generation's seeds, in order).
    pub(super) fn plan(&mut self, seeds: impl Iterator<Item = u64>) -> Vec<RunSpec> {
        assert!(
            self.pending.is_empty(),
            "a generation planned before the last was learnt"
        );
        self.planned.clear();
        let mut specs = Vec::new();
        for seed in seeds {
            let mut choices = self.rng.split(seed);
            let fresh = self.base.with_seed(seed).swarmed();
            let spec = if !self.kept.is_empty() && choices.chance(0.5) {
                let parent = self.choose(&mut choices);
                self.planned.insert(seed, true);
                mutant(&parent, fresh, &mut choices)
            } else {
                self.planned.insert(seed, false);
                fresh
            };
            specs.push(spec);
        }
        specs
    }

    /// Takes one finished run of the generation: its configuration and the points it reached.
    /// Returns whether the generation is complete (and learnt).
    pub(super) fn finished(&mut self, spec: RunSpec, reached: threadsim::coverage::Counts) -> bool {
        assert!(
            self.planned.contains_key(&spec.seed),
            "seed {} was not planned",
            spec.seed
        );
        self.pending.push((spec, reached));
        if self.pending.len() < self.planned.len() {
            return false;
        }
        let mut generation = std::mem::take(&mut self.pending);
        generation.sort_by_key(|(spec, _)| spec.seed);
        for (spec, reached) in generation {
            self.learn(spec, &reached);
        }
        true
    }

    /// Counts one run's points, and keeps it if one of them was rare before it.
    fn learn(&mut self, spec: RunSpec, reached: &threadsim::coverage::Counts) {
        let threshold = RARE_SHARE * self.runs as f64;
        let rare: Vec<&'static str> = (reached.keys().copied())
            .filter(|point| {
                (self.reached.get(point).copied().unwrap_or(0) as f64) < threshold.max(1.0)
            })
            .collect();
        self.runs += 1;
        for &point in reached.keys() {
            *self.reached.entry(point).or_insert(0) += 1;
        }
        let mutated = self.planned[&spec.seed];
        self.mutants += u64::from(mutated);
        if rare.is_empty() {
            return;
        }
        if mutated {
            self.mutants_kept += 1;
        } else {
            self.fresh_kept += 1;
        }
        self.kept.push(Kept { spec, rare });
        if self.kept.len() > MOST_KEPT {
            let weights: Vec<f64> = self.kept.iter().map(|kept| self.weight(kept)).collect();
            let lightest = (0..weights.len())
                .min_by(|&a, &b| weights[a].total_cmp(&weights[b]))
                .expect("kept runs");
            self.kept.remove(lightest);
        }
    }

    /// How much `kept` is worth starting from: its rare points, each the rarer the more.
    fn weight(&self, kept: &Kept) -> f64 {
        (kept.rare.iter())
            .map(|point| 1.0 / self.reached.get(point).copied().unwrap_or(1).max(1) as f64)
            .sum()
    }

    /// A kept run, chosen by weight.
    fn choose(&self, choices: &mut DetRng) -> RunSpec {
        let weights: Vec<f64> = self.kept.iter().map(|kept| self.weight(kept)).collect();
        let total: f64 = weights.iter().sum();
        let mut at = total * (choices.next_u64() as f64 / u64::MAX as f64);
        for (kept, weight) in self.kept.iter().zip(&weights) {
            if at < *weight {
                return kept.spec.clone();
            }
            at -= weight;
        }
        self.kept.last().expect("kept runs").spec.clone()
    }

    /// How many runs are kept now.
    #[cfg(test)]
    fn kept(&self) -> usize {
        self.kept.len()
    }

    /// What the steering did, for the summary.
    pub(super) fn figures(&self) -> SteeringFigures {
        SteeringFigures {
            runs: self.runs,
            mutants: self.mutants,
            kept_fresh: self.fresh_kept,
            kept_mutants: self.mutants_kept,
        }
    }
}

/// What the steering of a range did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct SteeringFigures {
    /// Runs learnt.
    pub(super) runs: u64,
    /// Of those, mutants of kept runs.
    pub(super) mutants: u64,
    /// Fresh swarm seeds kept for reaching a point then rare.
    pub(super) kept_fresh: u64,
    /// Mutants kept for the same.
    pub(super) kept_mutants: u64,
}

impl SteeringFigures {
    /// The summary's line.
    pub(super) fn describe(&self) -> String {
        format!(
            "steering: learnt from {} seeds (whole generations), {} of them mutants of kept \
             runs; kept for reaching a point then rare: {} of the {} fresh seeds, {} of the {} \
             mutants",
            self.runs,
            self.mutants,
            self.kept_fresh,
            self.runs - self.mutants,
            self.kept_mutants,
            self.mutants
        )
    }
}

/// `parent`'s configuration with `fresh`'s seed, each setting redrawn to `fresh`'s one time in
/// four ([`SETTING_REDRAWN`]). The read mode and clock skew go together, so a mutant is as valid
/// as the two runs it mixes (lease reads never get clocks beyond their bound).
fn mutant(parent: &RunSpec, fresh: RunSpec, choices: &mut DetRng) -> RunSpec {
    let mut redraw = || choices.chance(SETTING_REDRAWN);
    let mut spec = RunSpec {
        seed: fresh.seed,
        ..parent.clone()
    };
    let (mine, theirs) = (&mut spec.faults, &fresh.faults);
    for (setting, drawn) in [
        (&mut mine.crashes, theirs.crashes),
        (&mut mine.partitions, theirs.partitions),
        (&mut mine.one_way, theirs.one_way),
        (&mut mine.pauses, theirs.pauses),
        (&mut mine.fault_points, theirs.fault_points),
        (&mut mine.liveness, theirs.liveness),
        (&mut mine.power_loss, theirs.power_loss),
        (&mut mine.read_errors, theirs.read_errors),
        (&mut mine.torn_writes, theirs.torn_writes),
        (&mut mine.corruption, theirs.corruption),
        (&mut mine.misdirected_writes, theirs.misdirected_writes),
        (&mut mine.session_churn, theirs.session_churn),
    ] {
        if redraw() {
            *setting = drawn;
        }
    }
    if redraw() {
        (spec.read_mode, spec.faults.skew) = (fresh.read_mode, fresh.faults.skew);
    }
    if redraw() {
        spec.nodes = fresh.nodes;
    }
    if redraw() {
        spec.reliable = fresh.reliable;
    }
    if redraw() {
        spec.snapshot_threshold = fresh.snapshot_threshold;
    }
    // Membership changes and the storage come from the parent (the swarm drew them); liveness
    // mode, redrawn above, does not go with membership changes, and the two-copy disk's own
    // faults, redrawn above, do not go with the log.
    spec.faults.membership &= !spec.faults.liveness;
    spec.fit_faults_to_storage();
    debug_assert!(spec.check().is_ok(), "a mutant is a valid run");
    spec
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Points a run of `spec` "reaches" in these tests: a rare one for one seed in ten.
    fn reached(spec: &RunSpec) -> threadsim::coverage::Counts {
        let mut counts = threadsim::coverage::Counts::new();
        counts.insert("common", 3);
        if spec.seed.is_multiple_of(10) {
            counts.insert("rare", 1);
        }
        counts
    }

    /// Steers `generations` generations from seed 1, finishing each generation's runs in
    /// `order`; returns every run's configuration.
    fn steer(generations: u64, reverse: bool) -> (Vec<RunSpec>, Steering) {
        let mut steering = Steering::new(RunSpec::default(), 1);
        let mut all = Vec::new();
        for generation in 0..generations {
            let first = 1 + generation * GENERATION;
            let mut specs = steering.plan(first..first + GENERATION);
            all.extend(specs.clone());
            if reverse {
                specs.reverse();
            }
            let last = specs.len() - 1;
            for (i, spec) in specs.into_iter().enumerate() {
                let counts = reached(&spec);
                assert_eq!(steering.finished(spec, counts), i == last);
            }
        }
        (all, steering)
    }

    #[test]
    fn a_steered_range_is_the_same_runs_whatever_order_they_finish_in() {
        let (forward, _) = steer(4, false);
        let (backward, _) = steer(4, true);
        assert_eq!(forward, backward);
    }

    #[test]
    fn runs_that_reach_a_rare_point_are_kept_and_mutated_into_valid_runs() {
        let (runs, steering) = steer(6, false);
        assert!(steering.kept() > 0, "a rare point's runs are kept");
        assert!(steering.mutants > 0, "later generations mutate kept runs");
        for run in &runs {
            assert!(run.check().is_ok(), "{run:?}");
        }
        // The first generation is the swarm's draw.
        for run in &runs[..GENERATION as usize] {
            assert_eq!(*run, RunSpec::default().with_seed(run.seed).swarmed());
        }
        // Mutants keep most of their parents: most differ from their own swarm draw.
        let redrawn = (runs.iter())
            .filter(|run| **run != RunSpec::default().with_seed(run.seed).swarmed())
            .count() as u64;
        assert!(
            redrawn > steering.mutants / 2,
            "{redrawn} of {} mutants",
            steering.mutants
        );
    }

    #[test]
    fn a_point_every_run_reaches_keeps_nothing() {
        let mut steering = Steering::new(RunSpec::default(), 1);
        let specs = steering.plan(1..=GENERATION);
        for spec in specs {
            let mut counts = threadsim::coverage::Counts::new();
            counts.insert("common", 1);
            steering.finished(spec, counts);
        }
        // The first run reaches it when nothing had: kept; the rest do not.
        assert_eq!(steering.kept(), 1);
    }
}
