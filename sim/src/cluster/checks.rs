//! What the tests ask of a cluster, after the 6.5840 labs' `config.go`: exactly one leader,
//! agreement on a term, a command committed on k nodes, no leader at all.

use super::Cluster;
use node::{Command, LogIndex, NodeId, Term};
use std::collections::BTreeMap;
use std::time::Duration;

impl Cluster {
    /// Waits for exactly one leader among the connected nodes and returns it; fails if two
    /// connected nodes lead in one term or no leader appears within ~5 s.
    pub fn check_one_leader(&self) -> NodeId {
        for _ in 0..10 {
            let pause =
                self.random_duration(Duration::from_millis(450), Duration::from_millis(550));
            self.sleep(pause);
            let mut leaders: BTreeMap<Term, Vec<NodeId>> = BTreeMap::new();
            for id in self.ids().into_iter().filter(|&id| self.is_connected(id)) {
                if let Some((term, true)) = self.state(id) {
                    leaders.entry(term).or_default().push(id);
                }
            }
            for (term, nodes) in &leaders {
                assert!(
                    nodes.len() == 1,
                    "{term} has {} leaders: {nodes:?}",
                    nodes.len()
                );
            }
            if let Some((_, nodes)) = leaders.last_key_value() {
                return nodes[0];
            }
        }
        panic!("expected one leader, got none within 5 s of simulated time");
    }

    /// The term every connected node agrees on; fails if they disagree.
    pub fn check_terms(&self) -> Option<Term> {
        let mut agreed = None;
        for id in self.ids().into_iter().filter(|&id| self.is_connected(id)) {
            let (term, _) = self.state(id).expect("connected node is running");
            match agreed {
                None => agreed = Some(term),
                Some(other) => assert_eq!(other, term, "connected nodes disagree on the term"),
            }
        }
        agreed
    }

    /// Waits (polling every 20 ms of simulated time, at most `within`) for a node of `group` that
    /// leads in a term after `after`, and returns it with its term. Fails, naming the liveness
    /// bound, if none does.
    pub fn leader_among(&self, group: &[NodeId], after: Term, within: Duration) -> (NodeId, Term) {
        let started = self.clock.now();
        while self.clock.now() - started < within {
            for &id in group.iter().filter(|&&id| self.is_connected(id)) {
                if let Some((term, true)) = self.state(id) {
                    if term > after {
                        return (id, term);
                    }
                }
            }
            self.sleep(Duration::from_millis(20));
        }
        panic!("liveness: no leader among {group:?} in a term after {after} within {within:?}");
    }

    /// [`Cluster::leader_among`] every node.
    pub fn leader_after(&self, after: Term, within: Duration) -> (NodeId, Term) {
        self.leader_among(&self.ids(), after, within)
    }

    /// Fails if any connected node believes it is leader.
    pub fn check_no_leader(&self) {
        for id in self.ids().into_iter().filter(|&id| self.is_connected(id)) {
            if let Some((term, true)) = self.state(id) {
                panic!("{id} is leader of {term}, but no node should be");
            }
        }
    }

    /// How many nodes have applied `index`, and the command there.
    pub fn applied_at(&self, index: LogIndex) -> (usize, Option<Command>) {
        self.check_invariants();
        self.invariants.applied_at(index)
    }

    /// Submits `command` until some leader commits it on at least `expected` nodes, and returns
    /// its index. If `retry` is false, gives up after the first leader that accepted it.
    /// Fails after 10 s of simulated time.
    pub fn one(&self, command: Command, expected: usize, retry: bool) -> LogIndex {
        self.one_on(command, |_| expected, retry)
    }

    /// [`Cluster::one`] on every member of the configuration the leader that takes the command
    /// follows (voters and learners: a node outside it gets nothing).
    pub fn one_on_every_member(&self, command: Command) -> LogIndex {
        self.one_on(
            command,
            |leader| {
                self.membership(leader)
                    .map_or(self.ids().len(), |membership| membership.members().count())
            },
            true,
        )
    }

    /// [`Cluster::one`] with the nodes that must apply the command counted by `expected` from
    /// the leader that took it.
    fn one_on(
        &self,
        command: Command,
        expected: impl Fn(NodeId) -> usize,
        retry: bool,
    ) -> LogIndex {
        let mut expected_on = 0;
        let started = self.clock.now();
        let ids = self.ids();
        let mut next = 0;
        while self.clock.now() - started < Duration::from_secs(10) {
            let mut accepted = None;
            for offset in 0..ids.len() {
                let id = ids[(next + offset) % ids.len()];
                if self.is_connected(id) {
                    if let Some((index, _)) = self.start(id, command.clone()) {
                        expected_on = expected(id);
                        accepted = Some(index);
                        next = (next + offset + 1) % ids.len();
                        break;
                    }
                }
            }
            if let Some(index) = accepted {
                let submitted = self.clock.now();
                while self.clock.now() - submitted < Duration::from_secs(2) {
                    let (count, applied) = self.applied_at(index);
                    if count >= expected_on && applied.as_ref() == Some(&command) {
                        return index;
                    }
                    self.sleep(Duration::from_millis(20));
                }
                assert!(
                    retry,
                    "one({command}) failed to reach agreement on {expected_on} nodes"
                );
            } else {
                self.sleep(Duration::from_millis(50));
            }
        }
        panic!(
            "one({command}) failed to reach agreement on {expected_on} nodes within 10 s; {}",
            self.progress_of_every_node()
        );
    }

    /// Each node's applied index and whether it is down or cut off, for a liveness failure to
    /// say which node never caught up.
    fn progress_of_every_node(&self) -> String {
        let nodes: Vec<String> = (self.ids().into_iter())
            .map(|id| {
                let applied = self.invariants().applied_upto(id);
                let deaf =
                    (self.others(id).into_iter()).all(|other| !self.network().reachable(other, id));
                let how = if !self.is_running(id) {
                    " (down)"
                } else if !self.is_connected(id) {
                    " (cut off)"
                } else if deaf {
                    " (hears nobody)"
                } else {
                    ""
                };
                let leads = match self.state(id) {
                    Some((term, true)) => format!(", leads {term}"),
                    _ => String::new(),
                };
                format!("{id} applied up to {applied}{how}{leads}")
            })
            .collect();
        nodes.join(", ")
    }

    /// Waits for `index` to be applied by at least `expected` nodes, giving up (returning None)
    /// if some node moves past `term` first, since then the entry may never commit.
    pub fn wait_applied(
        &self,
        index: LogIndex,
        expected: usize,
        term: Option<Term>,
    ) -> Option<Command> {
        let mut pause = Duration::from_millis(10);
        for _ in 0..30 {
            let (count, _) = self.applied_at(index);
            if count >= expected {
                break;
            }
            self.sleep(pause);
            pause = (pause * 2).min(Duration::from_secs(1));
            if let Some(term) = term {
                let moved_on = self
                    .ids()
                    .into_iter()
                    .any(|id| self.state(id).is_some_and(|(t, _)| t > term));
                if moved_on {
                    return None;
                }
            }
        }
        let (count, command) = self.applied_at(index);
        assert!(
            count >= expected,
            "only {count} nodes applied {index}, wanted {expected}"
        );
        command
    }

    /// With snapshots every `threshold` bytes of log: after a quiet second, every running node
    /// whose service has been handed its whole log keeps at most `threshold` bytes of log in
    /// its stored state (the service compacted the rest), so what a node stores stays bounded
    /// however long the run. Fails the test otherwise.
    pub fn check_log_bounded(&self, threshold: usize) {
        self.sleep(Duration::from_secs(1));
        for id in self.ids() {
            let Some((status, log_bytes)) = self
                .running
                .lock()
                .get(&id)
                .map(|running| (running.node.status(), running.node.log_bytes()))
            else {
                continue;
            };
            if status.last_applied == status.last_log_index {
                assert!(
                    log_bytes <= threshold,
                    "{id} stores {log_bytes} bytes of log with every entry up to {} applied, \
                     over the snapshot threshold of {threshold}: its service did not compact",
                    status.last_applied
                );
            }
        }
    }
}
