//! What a range of seeds explored: the node's coverage points (`node::coverage::Point`) summed
//! over the seeds, which points the run's configuration can reach, and which of those no seed
//! reached. `chaos` prints it, writes it with `--coverage FILE`, and with `--require-coverage`
//! fails a run that left a reachable point unreached (the gate CI runs).

use node::coverage::Point;
use runspec::{RunSpec, Workload};
use std::collections::BTreeMap;

/// How often one point was reached over a range of seeds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reached {
    /// Seeds that reached it at least once.
    pub seeds: u64,
    /// Times it was reached, over every seed.
    pub hits: u64,
}

/// The points reached over a range of seeds.
#[derive(Clone, Debug, Default)]
pub struct CoverageTally {
    /// Seeds counted.
    pub seeds: u64,
    reached: BTreeMap<&'static str, Reached>,
    /// The fault points that fired, by name.
    fired: BTreeMap<&'static str, Reached>,
}

/// What a configuration can reach: the kinds of run each point needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reachable {
    /// The key-value service runs.
    pub kv: bool,
    /// Services snapshot.
    pub snapshots: bool,
    /// Nodes are paused.
    pub pauses: bool,
    /// The key-value service serves reads by lease.
    pub lease_reads: bool,
    /// Membership changes and leadership transfers are among the faults.
    pub membership: bool,
}

impl Reachable {
    /// What the seeds of `spec` can reach; with `swarm`, what some seed's draw can.
    pub fn of(spec: &RunSpec, swarm: bool) -> Reachable {
        let kv = spec.workload.uses_kv_service();
        let gets = spec.workload == Workload::Kv;
        Reachable {
            kv,
            snapshots: swarm || spec.snapshot_threshold.is_some(),
            // The key-value workload pauses leaders as part of its isolations.
            pauses: swarm || kv || spec.faults.pauses,
            lease_reads: gets && (swarm || spec.read_mode == runspec::ReadMode::Lease),
            membership: spec.workload == Workload::Raft && (swarm || spec.faults.membership),
        }
    }

    /// Whether `point` can be reached.
    pub fn includes(self, point: Point) -> bool {
        (self.kv || !point.needs_kv())
            && (self.snapshots || !point.needs_snapshots())
            && (self.pauses || !point.needs_pauses())
            && (self.lease_reads || !point.needs_lease_reads())
            && (self.membership || !point.needs_membership())
    }
}

impl CoverageTally {
    /// Adds one seed's counts: the coverage points it reached and the fault points that fired.
    pub fn add(
        &mut self,
        reached: &threadsim::coverage::Counts,
        fired: &threadsim::coverage::Counts,
    ) {
        self.seeds += 1;
        for (sums, counts) in [(&mut self.reached, reached), (&mut self.fired, fired)] {
            for (&name, &hits) in counts {
                let sum = sums.entry(name).or_default();
                sum.seeds += 1;
                sum.hits += hits;
            }
        }
    }

    /// How often `point` was reached.
    pub fn of(&self, point: Point) -> Reached {
        self.reached.get(point.name()).copied().unwrap_or_default()
    }

    /// The points `reachable` includes that no seed reached.
    pub fn unreached(&self, reachable: Reachable) -> Vec<Point> {
        Point::ALL
            .into_iter()
            .filter(|&point| reachable.includes(point) && self.of(point).seeds == 0)
            .collect()
    }

    /// The summary's lines: how many reachable points were reached, which were not, and the
    /// rarest reached ones.
    pub fn describe(&self, reachable: Reachable) -> Vec<String> {
        let applicable: Vec<Point> = (Point::ALL.into_iter())
            .filter(|&point| reachable.includes(point))
            .collect();
        let unreached = self.unreached(reachable);
        let mut lines = vec![format!(
            "coverage: {} of {} reachable points reached over {} seeds ({} need a kind of run \
             this one is not: the key-value workload, lease reads, snapshots or pauses)",
            applicable.len() - unreached.len(),
            applicable.len(),
            self.seeds,
            Point::ALL.len() - applicable.len()
        )];
        if !unreached.is_empty() {
            let names: Vec<&str> = unreached.iter().map(|point| point.name()).collect();
            lines.push(format!("  never reached: {}", names.join("; ")));
        }
        let mut rarest: Vec<(Point, Reached)> = (applicable.iter())
            .map(|&point| (point, self.of(point)))
            .filter(|(_, reached)| reached.seeds > 0)
            .collect();
        rarest.sort_by_key(|&(point, reached)| (reached.seeds, reached.hits, point));
        let rarest: Vec<String> = (rarest.iter().take(3))
            .map(|(point, reached)| format!("{} ({} seeds)", point.name(), reached.seeds))
            .collect();
        if !rarest.is_empty() {
            lines.push(format!("  rarest: {}", rarest.join("; ")));
        }
        if !self.fired.is_empty() {
            let fired: Vec<String> = (self.fired.iter())
                .map(|(name, fired)| {
                    format!("{name} ({} seeds, {} times)", fired.seeds, fired.hits)
                })
                .collect();
            lines.push(format!("fault points fired: {}", fired.join("; ")));
        }
        lines
    }

    /// Every point as JSON: whether this configuration can reach it, in how many seeds it was
    /// reached and how often.
    pub fn to_json(&self, reachable: Reachable) -> serde_json::Value {
        let points: Vec<serde_json::Value> = Point::ALL
            .into_iter()
            .map(|point| {
                let reached = self.of(point);
                serde_json::json!({
                    "point": point.name(),
                    "reachable": reachable.includes(point),
                    "seeds": reached.seeds,
                    "hits": reached.hits,
                })
            })
            .collect();
        let fired: serde_json::Map<String, serde_json::Value> = (self.fired.iter())
            .map(|(name, fired)| {
                let counts = serde_json::json!({ "seeds": fired.seeds, "times": fired.hits });
                (name.to_string(), counts)
            })
            .collect();
        serde_json::json!({ "seeds": self.seeds, "points": points, "fault_points_fired": fired })
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    fn counts(points: &[Point]) -> threadsim::coverage::Counts {
        points.iter().map(|point| (point.name(), 2)).collect()
    }

    #[test]
    fn a_reachable_point_no_seed_reached_is_reported_and_one_out_of_reach_is_not() {
        let raft = Reachable::of(&RunSpec::default(), false);
        let mut tally = CoverageTally::default();
        let all_but_one: Vec<Point> = (Point::ALL.into_iter())
            .filter(|&point| point != Point::CheckQuorumStepDown)
            .collect();
        tally.add(&counts(&all_but_one), &Default::default());
        tally.add(&counts(&[Point::PreVoteWon]), &Default::default());
        assert_eq!(tally.unreached(raft), vec![Point::CheckQuorumStepDown]);
        assert_eq!(tally.of(Point::PreVoteWon), Reached { seeds: 2, hits: 4 });
        let lines = tally.describe(raft).join("\n");
        assert!(
            lines.contains("never reached: election: leader stepped down by check-quorum"),
            "{lines}"
        );

        let mut raft_points = CoverageTally::default();
        let without_kv: Vec<Point> = (Point::ALL.into_iter())
            .filter(|&point| raft.includes(point))
            .collect();
        raft_points.add(&counts(&without_kv), &Default::default());
        assert!(raft_points.unreached(raft).is_empty());
        let kv = Reachable::of(
            &RunSpec {
                workload: Workload::Kv,
                ..RunSpec::default()
            },
            true,
        );
        assert!(raft_points.unreached(kv).contains(&Point::LeaseReadServed));
    }
}
