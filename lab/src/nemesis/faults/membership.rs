//! The membership fault: the configuration changed while the clients run, through the
//! administrator's requests a server takes ([`server::administer`]), and changed back when the
//! fault ends. A voter (the leader, half of the time) is removed, or demoted to a learner, or
//! the leadership is handed to another voter. Healing adds a removed node back as a learner and
//! promotes it once it has caught up. A change a correct cluster cannot make or undo within
//! `PATIENCE` (10 s) of a quiet moment is a finding.

use super::usual_hold;
use crate::nemesis::error::{Finding, NemesisError};
use crate::nemesis::fault::{fault_boilerplate, Fault, Injected, Injection};
use crate::nemesis::fault::{FaultKind, KindSpec};
use crate::nemesis::inject::Nemesis;
use crate::nemesis::target::Target;
use node::{Membership, MembershipChange, NodeId};
use server::administer;
use server::wire::admin::AdminRequest;
use std::fmt;
use std::time::{Duration, Instant};

/// How long a change (or the transfer) may take: a new leader commits an entry of its term
/// first, a learner catches up before its promotion.
const PATIENCE: Duration = Duration::from_secs(10);

/// The configuration changed under the clients: a voter (the leader, often) removed and added
/// back, or demoted and promoted back, or the leadership handed to another voter (through this
/// project's administrator's requests).
pub static MEMBERSHIP: KindSpec = KindSpec {
    name: "membership",
    describe: "a voter, often the leader, removed and added back or demoted and promoted back; \
               or the leadership handed over",
    needs_cooperation: true,
    draw: |rng, target, _| {
        let change = match rng.index(3) {
            0 => Reconfiguration::Remove(target),
            1 => Reconfiguration::Demote(target),
            _ => Reconfiguration::Transfer,
        };
        (Box::new(Reconfigure(change)), usual_hold(rng))
    },
    ..KindSpec::PLAIN
};

/// A change of the configuration, and what undoes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reconfiguration {
    /// The target taken out of the configuration; added back as a learner and promoted when
    /// the fault ends.
    Remove(Target),
    /// The target made a learner; promoted back when the fault ends.
    Demote(Target),
    /// The leadership handed to another voter, drawn when the fault comes.
    Transfer,
}

/// The configuration changed, and changed back when the fault ends.
#[derive(Clone, Debug, PartialEq)]
pub struct Reconfigure(pub Reconfiguration);

impl Fault for Reconfigure {
    fn kind(&self) -> FaultKind {
        FaultKind::of(&MEMBERSHIP)
    }

    fn inject(&self, nemesis: &mut Nemesis<'_>) -> Result<Injection, NemesisError> {
        let (what, undo) = nemesis.reconfigure(self.0)?;
        Ok(Injection::new(what, Reconfigured(undo)))
    }

    fault_boilerplate!();
}

impl fmt::Display for Reconfigure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Reconfiguration::Remove(target) => {
                write!(f, "membership: {target} removed, then added back")
            }
            Reconfiguration::Demote(target) => {
                write!(f, "membership: {target} demoted, then promoted back")
            }
            Reconfiguration::Transfer => {
                write!(f, "membership: the leadership handed to another voter")
            }
        }
    }
}

/// The configuration was changed: make these changes to undo it.
pub struct Reconfigured(Vec<MembershipChange>);

impl Injected for Reconfigured {
    fn heal(self: Box<Self>, nemesis: &mut Nemesis<'_>, _: Instant) -> Result<String, Finding> {
        nemesis.reconfigure_back(&self.0)
    }
}

impl Nemesis<'_> {
    /// Makes `change`; says what was done, and the changes that undo it.
    fn reconfigure(
        &mut self,
        change: Reconfiguration,
    ) -> Result<(String, Vec<MembershipChange>), NemesisError> {
        match change {
            Reconfiguration::Remove(target) => {
                let (node, named) = self.resolve(target);
                let after =
                    self.administer(AdminRequest::Change(MembershipChange::Remove(node)))?;
                self.reconfigured.insert(node);
                Ok((
                    format!("membership: {named} removed ({after})"),
                    vec![
                        MembershipChange::AddLearner(node),
                        MembershipChange::Promote(node),
                    ],
                ))
            }
            Reconfiguration::Demote(target) => {
                let (node, named) = self.resolve(target);
                let after =
                    self.administer(AdminRequest::Change(MembershipChange::Demote(node)))?;
                self.reconfigured.insert(node);
                Ok((
                    format!("membership: {named} demoted ({after})"),
                    vec![MembershipChange::Promote(node)],
                ))
            }
            Reconfiguration::Transfer => {
                let leader = self.leader().ok_or_else(|| {
                    NemesisError::NotNow("membership: no single leader to hand over".into())
                })?;
                let membership = self.configuration()?;
                let others: Vec<NodeId> = (membership.voters().iter().copied())
                    .filter(|&voter| voter != leader)
                    .collect();
                if others.is_empty() {
                    let only = format!("membership: {leader} is the only voter");
                    return Err(NemesisError::NotNow(only));
                }
                let target = others[self.rng.index(others.len())];
                self.hit_leader = Some(leader);
                let after = self.administer(AdminRequest::Transfer(target))?;
                Ok((
                    format!("membership: leadership handed from {leader} to {target} ({after})"),
                    Vec::new(),
                ))
            }
        }
    }

    /// Undoes a reconfiguration: makes `changes` in order. Failing to is a finding.
    fn reconfigure_back(&mut self, changes: &[MembershipChange]) -> Result<String, Finding> {
        let mut after = String::from("nothing to undo");
        for &change in changes {
            after = self
                .administer(AdminRequest::Change(change))
                .map_err(|why| Finding(format!("undoing a membership change: {why}")))?;
        }
        if let Some(MembershipChange::Promote(node) | MembershipChange::AddLearner(node)) =
            changes.last()
        {
            self.reconfigured.remove(node);
        }
        Ok(format!("membership back: {after}"))
    }

    /// Makes every node this nemesis took out of the voters a voter again (the end of a run,
    /// after a fault whose undoing failed).
    pub(in crate::nemesis) fn restore_voters(&mut self) -> Vec<Finding> {
        let mut problems = Vec::new();
        let outside: Vec<NodeId> = self.reconfigured.iter().copied().collect();
        for node in outside {
            let membership = match self.configuration() {
                Ok(membership) => membership,
                Err(why) => {
                    problems.push(Finding(format!("restoring {node} as a voter: {why}")));
                    continue;
                }
            };
            let mut changes = Vec::new();
            if !membership.contains(node) {
                changes.push(MembershipChange::AddLearner(node));
            }
            if !membership.is_voter(node) {
                changes.push(MembershipChange::Promote(node));
            }
            match self.reconfigure_back(&changes) {
                Ok(_) => {
                    self.reconfigured.remove(&node);
                }
                Err(why) => problems.push(why),
            }
        }
        problems
    }

    /// The configuration the leader follows.
    fn configuration(&self) -> Result<Membership, NemesisError> {
        let control = self.control()?;
        administer(control, AdminRequest::Membership, PATIENCE)
            .map(|(_, membership)| membership)
            .map_err(NemesisError::server("membership"))
    }

    /// Sends `request` to the leader; the configuration after it, as text.
    fn administer(&self, request: AdminRequest) -> Result<String, NemesisError> {
        let control = self.control()?;
        administer(control, request, PATIENCE)
            .map(|(_, membership)| membership.to_string())
            .map_err(NemesisError::server("the administrator's request"))
    }
}
