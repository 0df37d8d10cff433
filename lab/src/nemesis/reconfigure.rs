//! The membership fault: the configuration changed while the clients run, through the
//! administrator's requests a server takes ([`server::administer`]), and changed back when the
//! fault ends. A voter (the leader, half of the time) is removed, or demoted to a learner, or
//! the leadership is handed to another voter. Healing adds a removed node back as a learner and
//! promotes it once it has caught up. A change a correct cluster cannot make or undo within
//! [`PATIENCE`] of a quiet moment is a finding.

use super::fault::Reconfiguration;
use super::inject::{Injected, Nemesis};
use node::{Membership, MembershipChange, NodeId};
use server::administer;
use server::wire::admin::AdminRequest;
use std::time::Duration;

/// How long a change (or the transfer) may take: a new leader commits an entry of its term
/// first, a learner catches up before its promotion.
const PATIENCE: Duration = Duration::from_secs(10);

impl Nemesis<'_> {
    /// Makes `change`; says what was done, and what undoes it.
    pub(super) fn reconfigure(
        &mut self,
        change: Reconfiguration,
    ) -> Result<(String, Injected), String> {
        match change {
            Reconfiguration::Remove(target) => {
                let (node, named) = self.resolve(target);
                let after =
                    self.administer(AdminRequest::Change(MembershipChange::Remove(node)))?;
                self.reconfigured.insert(node);
                Ok((
                    format!("membership: {named} removed ({after})"),
                    Injected::Reconfigured(vec![
                        MembershipChange::AddLearner(node),
                        MembershipChange::Promote(node),
                    ]),
                ))
            }
            Reconfiguration::Demote(target) => {
                let (node, named) = self.resolve(target);
                let after =
                    self.administer(AdminRequest::Change(MembershipChange::Demote(node)))?;
                self.reconfigured.insert(node);
                Ok((
                    format!("membership: {named} demoted ({after})"),
                    Injected::Reconfigured(vec![MembershipChange::Promote(node)]),
                ))
            }
            Reconfiguration::Transfer => {
                let leader = self
                    .leader()
                    .ok_or("membership: no single leader to hand over")?;
                let membership = self.configuration()?;
                let others: Vec<NodeId> = (membership.voters().iter().copied())
                    .filter(|&voter| voter != leader)
                    .collect();
                if others.is_empty() {
                    return Err(format!("membership: {leader} is the only voter"));
                }
                let target = others[self.rng.index(others.len())];
                self.hit_leader = Some(leader);
                let after = self.administer(AdminRequest::Transfer(target))?;
                Ok((
                    format!("membership: leadership handed from {leader} to {target} ({after})"),
                    Injected::Reconfigured(Vec::new()),
                ))
            }
        }
    }

    /// Undoes a reconfiguration: makes `changes` in order. Failing to is a finding.
    pub(super) fn reconfigure_back(
        &mut self,
        changes: &[MembershipChange],
    ) -> Result<String, String> {
        let mut after = String::from("nothing to undo");
        for &change in changes {
            after = self
                .administer(AdminRequest::Change(change))
                .map_err(|why| format!("undoing a membership change: {why}"))?;
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
    pub(super) fn restore_voters(&mut self) -> Vec<String> {
        let mut problems = Vec::new();
        let outside: Vec<NodeId> = self.reconfigured.iter().copied().collect();
        for node in outside {
            let membership = match self.configuration() {
                Ok(membership) => membership,
                Err(why) => {
                    problems.push(format!("restoring {node} as a voter: {why}"));
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
    fn configuration(&self) -> Result<Membership, String> {
        let control = self.control()?;
        administer(control, AdminRequest::Membership, PATIENCE)
            .map(|(_, membership)| membership)
            .map_err(|why| format!("membership: {why}"))
    }

    /// Sends `request` to the leader; the configuration after it, as text.
    fn administer(&self, request: AdminRequest) -> Result<String, String> {
        let control = self.control()?;
        administer(control, request, PATIENCE)
            .map(|(_, membership)| membership.to_string())
            .map_err(|why| why.to_string())
    }
}
