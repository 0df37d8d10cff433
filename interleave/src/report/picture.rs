//! A run's picture: what each node was (role and term) over simulated time, when it was down or
//! paused, the network's faults, the commits, and the violation, read from the run's event trace
//! (the lines `trace.log` holds, which the harness writes in a small fixed vocabulary).

use serde_json::{json, Value};
use threadsim::TraceLog;

/// A stretch of one node's time in one role.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RoleSpan {
    /// Start, in simulated microseconds.
    pub start: u64,
    /// End, in simulated microseconds.
    pub end: u64,
    /// `Follower`, `PreCandidate`, `Candidate` or `Leader`.
    pub role: String,
    /// The term.
    pub term: u64,
}

/// One node's lane.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Lane {
    /// The node (`n3`).
    pub node: String,
    /// Its roles, in order, not overlapping.
    pub roles: Vec<RoleSpan>,
    /// When it was down (crashed until restarted, or the end).
    pub down: Vec<(u64, u64)>,
    /// When its threads were paused.
    pub paused: Vec<(u64, u64)>,
    /// When it advanced its commit index (time, index).
    pub commits: Vec<(u64, u64)>,
}

/// A fault or event of the network or the run, at one instant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mark {
    /// When, in simulated microseconds.
    pub at: u64,
    /// The trace's words for it.
    pub text: String,
}

/// The whole run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Picture {
    /// One lane per node, in node order.
    pub lanes: Vec<Lane>,
    /// Partitions (until the next partition or heal), as (start, end, groups).
    pub partitions: Vec<(u64, u64, String)>,
    /// One-way cuts, node network switches, reliability changes.
    pub network: Vec<Mark>,
    /// Stretches longer than [`STALL_US`] in which no node's commit index went past the highest
    /// any node had reached: the cluster committed nothing (start, end).
    pub stalls: Vec<(u64, u64)>,
    /// The violation, if the run had one.
    pub violation: Option<Mark>,
    /// The last instant of the run.
    pub end: u64,
}

/// The shortest stretch without a commit that the picture shows as a stall: the longest default
/// election timeout (a cluster that commits nothing for longer, with commands offered, had no
/// leader with a majority).
pub const STALL_US: u64 = 600_000;

/// A role a node is in since (start, role, term).
type OpenRole = Option<(u64, String, u64)>;

/// What is open on one node's lane while the trace is read.
#[derive(Default)]
struct Open {
    /// Its role since when, and which.
    role: OpenRole,
    /// Down since.
    down: Option<u64>,
    /// Paused since.
    paused: Option<u64>,
}

/// A trace being read into a picture, one event at a time.
#[derive(Default)]
struct Reader {
    picture: Picture,
    /// One per lane.
    open: Vec<Open>,
    /// The partition in force, since when.
    partition: Option<(u64, String)>,
}

fn node_number(node: &str) -> Option<usize> {
    node.strip_prefix('n')?.parse().ok()
}

impl Reader {
    /// The lane of `node` (`n3`), made with those before it if need be.
    fn lane(&mut self, node: &str) -> Option<usize> {
        let number = node_number(node)?;
        while self.picture.lanes.len() <= number {
            let name = format!("n{}", self.picture.lanes.len());
            self.picture.lanes.push(Lane {
                node: name,
                ..Lane::default()
            });
            self.open.push(Open::default());
        }
        Some(number)
    }

    /// Ends lane `n`'s open role, if any, at `at`.
    fn close_role(&mut self, n: usize, at: u64) {
        if let Some((start, role, term)) = self.open[n].role.take() {
            self.picture.lanes[n].roles.push(RoleSpan {
                start,
                end: at,
                role,
                term,
            });
        }
    }

    /// Reads one event of the trace, `text` at `at` microseconds.
    fn read(&mut self, at: u64, text: &str) {
        self.picture.end = self.picture.end.max(at);
        let words: Vec<&str> = text.split_whitespace().collect();
        match words.as_slice() {
            [node, "is", role, "in", term] => {
                let term = term.strip_prefix('t').and_then(|t| t.parse().ok());
                if let (Some(n), Some(term)) = (self.lane(node), term) {
                    self.close_role(n, at);
                    self.open[n].role = Some((at, role.to_string(), term));
                }
            }
            ["crash", node] => {
                if let Some(n) = self.lane(node) {
                    self.close_role(n, at);
                    self.open[n].down.get_or_insert(at);
                }
            }
            ["restart", node, ..] => {
                if let Some(n) = self.lane(node) {
                    if let Some(since) = self.open[n].down.take() {
                        self.picture.lanes[n].down.push((since, at));
                    }
                }
            }
            ["pause", node] => {
                if let Some(n) = self.lane(node) {
                    self.open[n].paused.get_or_insert(at);
                }
            }
            ["resume", node] => {
                if let Some(n) = self.lane(node) {
                    if let Some(since) = self.open[n].paused.take() {
                        self.picture.lanes[n].paused.push((since, at));
                    }
                }
            }
            [node, "commits", "up", "to", index] => {
                let index = index.strip_prefix('#').and_then(|i| i.parse().ok());
                if let (Some(n), Some(index)) = (self.lane(node), index) {
                    self.picture.lanes[n].commits.push((at, index));
                }
            }
            ["partition", groups @ ..] => {
                self.end_partition(at);
                self.partition = Some((at, groups.join(" ")));
            }
            ["heal"] => self.end_partition(at),
            ["cut", ..] | [_, "network", "up" | "down"] | ["network", _] => {
                self.picture.network.push(Mark {
                    at,
                    text: text.to_string(),
                })
            }
            ["invariant", "violated:", ..] => {
                self.picture.violation.get_or_insert(Mark {
                    at,
                    text: text.to_string(),
                });
            }
            _ => {}
        }
    }

    /// Ends the partition in force, if any, at `at`.
    fn end_partition(&mut self, at: u64) {
        if let Some((start, groups)) = self.partition.take() {
            self.picture.partitions.push((start, at, groups));
        }
    }

    /// The picture, with what is still open ended at the last event.
    fn finish(mut self) -> Picture {
        let end = self.picture.end;
        for n in 0..self.open.len() {
            self.close_role(n, end);
            let lane = &mut self.picture.lanes[n];
            if let Some(since) = self.open[n].down.take() {
                lane.down.push((since, end));
            }
            if let Some(since) = self.open[n].paused.take() {
                lane.paused.push((since, end));
            }
        }
        self.end_partition(end);
        self.picture.stalls = stalls(&self.picture.lanes, end);
        self.picture
    }
}

/// The stretches of more than [`STALL_US`] between advances of the highest commit index of
/// `lanes` (from the run's start, and to its `end`).
fn stalls(lanes: &[Lane], end: u64) -> Vec<(u64, u64)> {
    let mut commits: Vec<(u64, u64)> = lanes.iter().flat_map(|lane| lane.commits.clone()).collect();
    commits.sort_unstable();
    let mut advances = vec![0];
    let mut highest = 0;
    for (at, index) in commits {
        if index > highest {
            highest = index;
            advances.push(at);
        }
    }
    advances.push(end);
    (advances.windows(2))
        .map(|pair| (pair[0], pair[1]))
        .filter(|&(from, to)| to - from > STALL_US)
        .collect()
}

impl Picture {
    /// Reads `trace`.
    pub fn from_trace(trace: &TraceLog) -> Picture {
        let mut reader = Reader::default();
        for event in &trace.events {
            reader.read(event.at.since_epoch().as_micros() as u64, &event.text);
        }
        reader.finish()
    }

    /// The picture as the JSON the page embeds (`run-data`), which tests read back.
    pub fn to_json(&self) -> Value {
        json!({
            "end_us": self.end,
            "lanes": self.lanes.iter().map(|lane| json!({
                "node": lane.node,
                "roles": lane.roles.iter().map(|s| json!([s.start, s.end, s.role, s.term])).collect::<Vec<_>>(),
                "down": lane.down,
                "paused": lane.paused,
                "commits": lane.commits.len(),
            })).collect::<Vec<_>>(),
            "partitions": self.partitions,
            "stalls": self.stalls,
            "network": self.network.iter().map(|m| json!([m.at, m.text])).collect::<Vec<_>>(),
            "violation": self.violation.as_ref().map(|m| json!([m.at, m.text])),
        })
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;
    use threadsim::trace::TraceEvent;
    use threadsim::{Instant, Level};

    fn trace(lines: &[(u64, &str)]) -> TraceLog {
        TraceLog {
            events: lines
                .iter()
                .map(|&(ms, text)| TraceEvent {
                    at: Instant::from_epoch(std::time::Duration::from_millis(ms)),
                    level: Level::Info,
                    text: text.to_string(),
                })
                .collect(),
            ..TraceLog::default()
        }
    }

    #[test]
    fn roles_crashes_partitions_and_the_violation_are_read_from_the_trace() {
        let picture = Picture::from_trace(&trace(&[
            (0, "partition [n0 n1] [n2]"),
            (100, "n1 is Candidate in t1"),
            (150, "n1 is Leader in t1"),
            (200, "n1 commits up to #1"),
            (300, "crash n1"),
            (350, "heal"),
            (400, "cut n0 -> n2"),
            (500, "restart n1"),
            (
                600,
                "invariant violated: Election Safety: n0 and n1 are both leaders of t1",
            ),
            (700, "end of the run: every running node stops"),
        ]));
        assert_eq!(picture.lanes.len(), 2);
        let n1 = &picture.lanes[1];
        assert_eq!(
            n1.roles,
            [
                RoleSpan {
                    start: 100_000,
                    end: 150_000,
                    role: "Candidate".into(),
                    term: 1
                },
                RoleSpan {
                    start: 150_000,
                    end: 300_000,
                    role: "Leader".into(),
                    term: 1
                },
            ]
        );
        assert_eq!(n1.down, [(300_000, 500_000)]);
        assert_eq!(n1.commits, [(200_000, 1)]);
        assert_eq!(
            picture.partitions,
            [(0, 350_000, "[n0 n1] [n2]".to_string())]
        );
        assert_eq!(picture.network[0].text, "cut n0 -> n2");
        assert_eq!(picture.violation.as_ref().map(|v| v.at), Some(600_000));
        assert_eq!(picture.end, 700_000);
        assert!(
            picture.stalls.is_empty(),
            "no stretch of 0.6 s without a commit"
        );
    }

    #[test]
    fn a_stall_is_a_stretch_without_a_new_commit_index_on_any_node() {
        let picture = Picture::from_trace(&trace(&[
            (100, "n0 commits up to #1"),
            (200, "n1 commits up to #1"),
            (1_000, "n1 commits up to #2"),
            (1_100, "n0 commits up to #3"),
            (1_500, "n1 commits up to #3"),
            (2_000, "end of the run: every running node stops"),
        ]));
        assert_eq!(
            picture.stalls,
            [(100_000, 1_000_000), (1_100_000, 2_000_000)],
            "a follower catching up is no commit; the stretch to the end counts"
        );
    }
}
