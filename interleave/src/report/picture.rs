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
    /// The violation, if the run had one.
    pub violation: Option<Mark>,
    /// The last instant of the run.
    pub end: u64,
}

/// A role a node is in since (start, role, term).
type OpenRole = Option<(u64, String, u64)>;

/// Ends `lane`'s open role, if any, at `at`.
fn close_role(lane: &mut Lane, open: &mut OpenRole, at: u64) {
    if let Some((start, role, term)) = open.take() {
        lane.roles.push(RoleSpan {
            start,
            end: at,
            role,
            term,
        });
    }
}

/// Makes `slots` long enough to hold node `n`.
fn grow<T>(slots: &mut Vec<Option<T>>, n: usize) {
    while slots.len() <= n {
        slots.push(None);
    }
}

fn node_number(node: &str) -> Option<usize> {
    node.strip_prefix('n')?.parse().ok()
}

impl Picture {
    /// Reads `trace`.
    pub fn from_trace(trace: &TraceLog) -> Picture {
        let mut picture = Picture::default();
        let mut open_role: Vec<OpenRole> = Vec::new();
        let mut down_since: Vec<Option<u64>> = Vec::new();
        let mut paused_since: Vec<Option<u64>> = Vec::new();
        let mut partition: Option<(u64, String)> = None;
        for event in &trace.events {
            let at = event.at.since_epoch().as_micros() as u64;
            picture.end = picture.end.max(at);
            let text = event.text.as_str();
            let words: Vec<&str> = text.split_whitespace().collect();
            let lane = |picture: &mut Picture, node: &str| -> Option<usize> {
                let number = node_number(node)?;
                while picture.lanes.len() <= number {
                    let name = format!("n{}", picture.lanes.len());
                    picture.lanes.push(Lane {
                        node: name,
                        ..Lane::default()
                    });
                }
                Some(number)
            };
            match words.as_slice() {
                [node, "is", role, "in", term] => {
                    let (Some(n), Some(term)) = (
                        lane(&mut picture, node),
                        term.strip_prefix('t').and_then(|t| t.parse().ok()),
                    ) else {
                        continue;
                    };
                    grow(&mut open_role, n);
                    close_role(&mut picture.lanes[n], &mut open_role[n], at);
                    open_role[n] = Some((at, role.to_string(), term));
                }
                ["crash", node] => {
                    let Some(n) = lane(&mut picture, node) else {
                        continue;
                    };
                    grow(&mut open_role, n);
                    grow(&mut down_since, n);
                    close_role(&mut picture.lanes[n], &mut open_role[n], at);
                    down_since[n].get_or_insert(at);
                }
                ["restart", node, ..] => {
                    let Some(n) = lane(&mut picture, node) else {
                        continue;
                    };
                    grow(&mut down_since, n);
                    if let Some(since) = down_since[n].take() {
                        picture.lanes[n].down.push((since, at));
                    }
                }
                ["pause", node] | ["resume", node] => {
                    let Some(n) = lane(&mut picture, node) else {
                        continue;
                    };
                    grow(&mut paused_since, n);
                    if words[0] == "pause" {
                        paused_since[n].get_or_insert(at);
                    } else if let Some(since) = paused_since[n].take() {
                        picture.lanes[n].paused.push((since, at));
                    }
                }
                [node, "commits", "up", "to", index] => {
                    let (Some(n), Some(index)) = (
                        lane(&mut picture, node),
                        index.strip_prefix('#').and_then(|i| i.parse().ok()),
                    ) else {
                        continue;
                    };
                    picture.lanes[n].commits.push((at, index));
                }
                ["partition", ..] | ["heal"] => {
                    if let Some((start, groups)) = partition.take() {
                        picture.partitions.push((start, at, groups));
                    }
                    if words[0] == "partition" {
                        partition = Some((at, words[1..].join(" ")));
                    }
                }
                ["cut", ..] | [_, "network", "up" | "down"] | ["network", _] => {
                    picture.network.push(Mark {
                        at,
                        text: text.to_string(),
                    })
                }
                ["invariant", "violated:", ..] => {
                    picture.violation.get_or_insert(Mark {
                        at,
                        text: text.to_string(),
                    });
                }
                _ => {}
            }
        }
        let end = picture.end;
        for (n, open) in open_role.iter_mut().enumerate() {
            close_role(&mut picture.lanes[n], open, end);
        }
        for (n, since) in down_since.into_iter().enumerate() {
            if let Some(since) = since {
                picture.lanes[n].down.push((since, end));
            }
        }
        for (n, since) in paused_since.into_iter().enumerate() {
            if let Some(since) = since {
                picture.lanes[n].paused.push((since, end));
            }
        }
        if let Some((start, groups)) = partition {
            picture.partitions.push((start, end, groups));
        }
        picture
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
    }
}
