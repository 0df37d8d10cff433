//! Who is in the cluster: [`Membership`], the configuration a node follows, and the rules for
//! changing it one server at a time (Raft thesis §4.1-4.3).
//!
//! A configuration names the **voters** (whose votes elect a leader and whose copies commit an
//! entry) and the **learners** (which receive the log but are counted in no majority, so that a
//! new server catches up before it can hold up commits). The nodes a node may ever talk to are
//! fixed when it starts (its peers); a configuration picks among them.
//!
//! A configuration travels in the log as an ordinary entry whose command starts with
//! [`MEMBERSHIP_PREFIX`], which no service command may start with
//! ([`crate::ProposeError::Reserved`]). What the core does with configurations is in
//! `core/reconfiguration.rs`. A node follows the **latest configuration in its log**,
//! committed or not (thesis §4.1), and falls back to the one before when a conflicting leader
//! removes it. Changes are single-server: the voters of a new configuration differ from the
//! current ones by at most one node, so any majority of the old and any majority of the new
//! share a node, and two leaders of one term can never be elected from two configurations.
//! Two more rules make that hold across leaders (the bug found after the dissertation, raft-dev,
//! 2015): a leader proposes a change only once an entry of its own term is committed, and only
//! when no earlier change is uncommitted.

use crate::{Command, NodeId};
use std::collections::BTreeSet;
use std::fmt;

/// The first bytes of a command that carries a configuration. A service command never starts
/// with them: 0xFF begins no UTF-8 text and no key-value command.
pub const MEMBERSHIP_PREFIX: &[u8] = b"\xffraft-membership\x01";

/// The most nodes a configuration names.
pub const MAX_MEMBERS: usize = 64;

/// A cluster configuration: its voters and its learners, never both.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Membership {
    voters: BTreeSet<NodeId>,
    learners: BTreeSet<NodeId>,
}

/// A configuration that cannot be: a node both voter and learner, none voting, or too many.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BadMembership {
    /// No voter: nothing could ever be elected or committed.
    #[error("a configuration needs at least one voter")]
    NoVoter,
    /// A node in both sets.
    #[error("{0} is both a voter and a learner")]
    Both(NodeId),
    /// More than [`MAX_MEMBERS`].
    #[error("a configuration of {0} nodes is over the limit of {MAX_MEMBERS}")]
    TooMany(usize),
    /// Bytes after the prefix that are not a configuration.
    #[error("not a configuration: {0}")]
    Malformed(&'static str),
}

/// One change a leader is asked to make.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MembershipChange {
    /// A node joins as a learner: it receives the log, and counts in no majority.
    AddLearner(NodeId),
    /// A learner becomes a voter (once it has caught up).
    Promote(NodeId),
    /// A voter becomes a learner.
    Demote(NodeId),
    /// A node, voter or learner, leaves.
    Remove(NodeId),
}

/// A change that does not apply to a configuration (a learner added twice, the last voter
/// removed, ...), and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InvalidChange(pub String);

impl Membership {
    /// The configuration of `voters`, with no learner.
    pub fn of_voters(voters: impl IntoIterator<Item = NodeId>) -> Membership {
        Membership {
            voters: voters.into_iter().collect(),
            learners: BTreeSet::new(),
        }
    }

    /// The configuration of `voters` and `learners`, if it can be.
    pub fn new(
        voters: impl IntoIterator<Item = NodeId>,
        learners: impl IntoIterator<Item = NodeId>,
    ) -> Result<Membership, BadMembership> {
        let membership = Membership {
            voters: voters.into_iter().collect(),
            learners: learners.into_iter().collect(),
        };
        membership.check()?;
        Ok(membership)
    }

    fn check(&self) -> Result<(), BadMembership> {
        if self.voters.is_empty() {
            return Err(BadMembership::NoVoter);
        }
        if let Some(both) = self.voters.intersection(&self.learners).next() {
            return Err(BadMembership::Both(*both));
        }
        let count = self.voters.len() + self.learners.len();
        if count > MAX_MEMBERS {
            return Err(BadMembership::TooMany(count));
        }
        Ok(())
    }

    /// Who votes.
    pub fn voters(&self) -> &BTreeSet<NodeId> {
        &self.voters
    }

    /// Who only receives the log.
    pub fn learners(&self) -> &BTreeSet<NodeId> {
        &self.learners
    }

    /// Whether `node` votes.
    pub fn is_voter(&self, node: NodeId) -> bool {
        self.voters.contains(&node)
    }

    /// Whether `node` is in the configuration at all.
    pub fn contains(&self, node: NodeId) -> bool {
        self.voters.contains(&node) || self.learners.contains(&node)
    }

    /// Every node of it, voters and learners, in order.
    pub fn members(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.voters.union(&self.learners).copied()
    }

    /// The configuration after `change`, or why it cannot be made from this one.
    pub fn after(&self, change: MembershipChange) -> Result<Membership, InvalidChange> {
        let invalid = |why: String| Err(InvalidChange(why));
        let mut next = self.clone();
        match change {
            MembershipChange::AddLearner(node) => {
                if self.contains(node) {
                    return invalid(format!("{node} is already a member"));
                }
                next.learners.insert(node);
            }
            MembershipChange::Promote(node) => {
                if !next.learners.remove(&node) {
                    return invalid(format!("{node} is not a learner"));
                }
                next.voters.insert(node);
            }
            MembershipChange::Demote(node) => {
                if !next.voters.remove(&node) {
                    return invalid(format!("{node} is not a voter"));
                }
                next.learners.insert(node);
            }
            MembershipChange::Remove(node) => {
                if !next.voters.remove(&node) && !next.learners.remove(&node) {
                    return invalid(format!("{node} is not a member"));
                }
            }
        }
        if let Err(bad) = next.check() {
            return invalid(bad.to_string());
        }
        debug_assert!(next.voters.symmetric_difference(&self.voters).count() <= 1);
        Ok(next)
    }

    /// The command that carries it in the log.
    pub fn encode(&self) -> Command {
        let mut bytes = MEMBERSHIP_PREFIX.to_vec();
        for set in [&self.voters, &self.learners] {
            bytes.extend_from_slice(&(set.len() as u32).to_le_bytes());
            for node in set {
                bytes.extend_from_slice(&node.0.to_le_bytes());
            }
        }
        Command(bytes)
    }

    /// The configuration `command` carries: `None` for a service command, an error for bytes
    /// after the prefix that are not one.
    pub fn decode(command: &Command) -> Option<Result<Membership, BadMembership>> {
        let rest = command.0.strip_prefix(MEMBERSHIP_PREFIX)?;
        Some(match Membership::read_front(rest) {
            Ok((membership, [])) => Ok(membership),
            Ok(_) => Err(BadMembership::Malformed("trailing bytes")),
            Err(bad) => Err(bad),
        })
    }

    /// A snapshot as the node stores and sends it: the configuration it covers, then the
    /// service's bytes.
    pub fn wrap_snapshot(&self, service: &[u8]) -> Vec<u8> {
        let mut bytes = self.encode().0;
        bytes.extend_from_slice(service);
        bytes
    }

    /// The configuration and the service's bytes of a snapshot [`Membership::wrap_snapshot`]
    /// made.
    pub fn unwrap_snapshot(snapshot: &[u8]) -> Result<(Membership, &[u8]), BadMembership> {
        let rest = snapshot
            .strip_prefix(MEMBERSHIP_PREFIX)
            .ok_or(BadMembership::Malformed(
                "a snapshot without its configuration",
            ))?;
        Membership::read_front(rest)
    }

    /// A configuration at the front of `bytes` (after the prefix), and the bytes after it.
    fn read_front(mut bytes: &[u8]) -> Result<(Membership, &[u8]), BadMembership> {
        let mut take = |len: usize| -> Result<&[u8], BadMembership> {
            if bytes.len() < len {
                return Err(BadMembership::Malformed("truncated"));
            }
            let (head, tail) = bytes.split_at(len);
            bytes = tail;
            Ok(head)
        };
        let mut sets = [BTreeSet::new(), BTreeSet::new()];
        for set in &mut sets {
            let count = u32::from_le_bytes(take(4)?.try_into().expect("4 bytes")) as usize;
            if count > MAX_MEMBERS {
                return Err(BadMembership::TooMany(count));
            }
            for _ in 0..count {
                let node = NodeId(u32::from_le_bytes(take(4)?.try_into().expect("4 bytes")));
                if set.last().is_some_and(|last| *last >= node) {
                    return Err(BadMembership::Malformed("nodes out of order"));
                }
                set.insert(node);
            }
        }
        let [voters, learners] = sets;
        let membership = Membership { voters, learners };
        membership.check()?;
        Ok((membership, bytes))
    }
}

/// Whether `command` carries a configuration (and so is not the service's).
pub fn is_membership(command: &Command) -> bool {
    command.0.starts_with(MEMBERSHIP_PREFIX)
}

impl fmt::Display for MembershipChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MembershipChange::AddLearner(node) => write!(f, "add learner {node}"),
            MembershipChange::Promote(node) => write!(f, "promote {node}"),
            MembershipChange::Demote(node) => write!(f, "demote {node}"),
            MembershipChange::Remove(node) => write!(f, "remove {node}"),
        }
    }
}

impl fmt::Display for Membership {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = |set: &BTreeSet<NodeId>| {
            set.iter()
                .map(|node| node.to_string())
                .collect::<Vec<_>>()
                .join(" ")
        };
        write!(f, "voters [{}]", names(&self.voters))?;
        if !self.learners.is_empty() {
            write!(f, " learners [{}]", names(&self.learners))?;
        }
        Ok(())
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    fn nodes(ids: &[u32]) -> Vec<NodeId> {
        ids.iter().map(|&id| NodeId(id)).collect()
    }

    #[test]
    fn a_configuration_round_trips_and_garbage_after_the_prefix_is_refused() {
        let membership = Membership::new(nodes(&[0, 1, 2]), nodes(&[7])).unwrap();
        let command = membership.encode();
        assert!(is_membership(&command));
        assert_eq!(Membership::decode(&command), Some(Ok(membership.clone())));
        assert_eq!(Membership::decode(&Command::from_text("c12")), None);
        for cut in MEMBERSHIP_PREFIX.len()..command.0.len() {
            let cut = Command(command.0[..cut].to_vec());
            assert!(matches!(Membership::decode(&cut), Some(Err(_))));
        }
        let mut trailing = command.0.clone();
        trailing.push(0);
        assert!(matches!(
            Membership::decode(&Command(trailing)),
            Some(Err(BadMembership::Malformed(_)))
        ));
        assert_eq!(membership.to_string(), "voters [n0 n1 n2] learners [n7]");
    }

    #[test]
    fn a_snapshot_carries_its_configuration_before_the_services_bytes() {
        let membership = Membership::new(nodes(&[1, 2]), nodes(&[3])).unwrap();
        let wrapped = membership.wrap_snapshot(b"service state");
        let (read, service) = Membership::unwrap_snapshot(&wrapped).unwrap();
        assert_eq!((read, service), (membership, &b"service state"[..]));
        assert!(Membership::unwrap_snapshot(b"service state").is_err());
    }

    #[test]
    fn a_configuration_without_voters_or_with_a_node_twice_is_refused() {
        assert_eq!(
            Membership::new([], nodes(&[1])),
            Err(BadMembership::NoVoter)
        );
        assert_eq!(
            Membership::new(nodes(&[1, 2]), nodes(&[2])),
            Err(BadMembership::Both(NodeId(2)))
        );
    }

    #[test]
    fn each_change_moves_at_most_one_voter_and_nonsense_is_refused() {
        let start = Membership::of_voters(nodes(&[0, 1, 2]));
        let learner = start
            .after(MembershipChange::AddLearner(NodeId(3)))
            .unwrap();
        assert_eq!(learner.voters(), start.voters());
        assert!(learner.contains(NodeId(3)) && !learner.is_voter(NodeId(3)));
        let promoted = learner.after(MembershipChange::Promote(NodeId(3))).unwrap();
        assert!(promoted.is_voter(NodeId(3)));
        let removed = promoted.after(MembershipChange::Remove(NodeId(0))).unwrap();
        assert_eq!(removed.voters(), &nodes(&[1, 2, 3]).into_iter().collect());
        for refused in [
            start.after(MembershipChange::AddLearner(NodeId(1))),
            start.after(MembershipChange::Promote(NodeId(1))),
            start.after(MembershipChange::Remove(NodeId(9))),
            Membership::of_voters(nodes(&[4])).after(MembershipChange::Remove(NodeId(4))),
            Membership::of_voters(nodes(&[4])).after(MembershipChange::Demote(NodeId(4))),
        ] {
            assert!(refused.is_err(), "{refused:?}");
        }
    }
}
