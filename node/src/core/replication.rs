//! Log replication: what a replicator sends (the leader's own new entries made durable first),
//! AppendEntries on both sides, fast backtracking of `next_index`, and the leader's commit rule
//! (Raft §5.3, §5.4.2).

use super::{Effect, Effects, Progress, RaftCore, RoleState};
use crate::broken;
use crate::coverage::{reached, sometimes, Point};
use crate::messages::{AppendEntriesArgs, AppendEntriesReply, Conflict, Request, Response};
use crate::mutation::Mutation;
use crate::{LogIndex, NodeId};
use threadsim::Instant;

impl RaftCore {
    /// What the replicator for `peer` should send now, if anything: a vote request (once per
    /// peer per candidacy) or AppendEntries carrying entries `peer` lacks. Heartbeats come from
    /// [`RaftCore::heartbeat`]. The request carries `now`, the time its lease would count from.
    /// The effects come first: before the first send of entries that
    /// `propose` appended, the leader's own copy is written ([`Effect::Persist`]), so no majority
    /// can count it before it is durable (thesis §10.2.1); entries that arrive while a round is
    /// in flight share that one write.
    pub fn next_request(&mut self, peer: NodeId, now: Instant) -> Option<(Effects, Request)> {
        assert!(
            self.peers.contains(&peer),
            "{peer} is not a peer of {}",
            self.id
        );
        let membership = self.membership();
        // Votes are asked of voters (and of whoever a broken count counts).
        if self.quorum().is_counted(peer) {
            if let Some(args) = self.next_vote_request(peer) {
                return Some((Effects::default(), Request::RequestVote(args)));
            }
        }
        if !membership.contains(peer) {
            // Not in the configuration: it gets nothing (a learner gets the log).
            return None;
        }
        if let Some(timeout_now) = self.next_timeout_now(peer) {
            return Some((Effects::default(), Request::TimeoutNow(timeout_now)));
        }
        let RoleState::Leader(leader) = &mut self.role else {
            return None;
        };
        let next_index = leader.progress[&peer].next_index;
        if next_index > self.state.log.last_index() {
            return None;
        }
        let read_round = leader.reads.stamp(peer);
        if next_index <= self.state.log.snapshot_index() {
            // What the peer needs next is compacted: it gets the snapshot instead, the next
            // chunk of it.
            reached(Point::SnapshotSent);
            let sent = leader.progress[&peer].snapshot_sent;
            let mut args = self.snapshot_request(sent);
            args.read_round = read_round;
            args.sent_at = now;
            return Some((Effects::default(), Request::InstallSnapshot(args)));
        }
        let mut effects = Effects::default();
        if std::mem::take(&mut self.own_entries_unsaved) {
            effects.push(Effect::Persist);
        }
        let mut args = self.append_request(next_index, self.config.max_entries_per_append);
        debug_assert!(
            args.entries.len() <= 1
                || args
                    .entries
                    .iter()
                    .map(|e| e.command.0.len())
                    .sum::<usize>()
                    <= self.config.max_bytes_per_append,
            "an AppendEntries over its byte budget"
        );
        args.read_round = read_round;
        args.sent_at = now;
        Some((effects, Request::AppendEntries(args)))
    }

    /// AppendEntries for a follower whose next index is `next_index`, carrying at most
    /// `max_entries` entries (0: a heartbeat).
    pub(super) fn append_request(
        &self,
        next_index: LogIndex,
        max_entries: usize,
    ) -> AppendEntriesArgs {
        let prev_log_index = next_index.prev();
        AppendEntriesArgs {
            term: self.term(),
            leader: self.id,
            prev_log_index,
            prev_log_term: self
                .state
                .log
                .term_at(prev_log_index)
                .expect("next_index within log + 1"),
            entries: self.state.log.slice_from(
                next_index,
                max_entries,
                self.config.max_bytes_per_append,
            ),
            leader_commit: self.commit_index,
            read_round: 0,
            sent_at: threadsim::Instant::ZERO,
        }
    }

    pub(super) fn handle_append_entries(
        &mut self,
        now: Instant,
        args: &AppendEntriesArgs,
    ) -> Effects {
        let mut effects = Effects::default();
        let reply = |core: &RaftCore, success: bool, conflict: Option<Conflict>| {
            Effect::Reply(Response::AppendEntries(AppendEntriesReply {
                term: core.term(),
                success,
                conflict,
                read_round: args.read_round,
            }))
        };
        if args.term < self.term() {
            reached(Point::StaleLeaderRejected);
            effects.push(reply(self, false, None));
            return effects;
        }
        self.become_follower(args.term, now, &mut effects);
        self.leader_hint = Some(args.leader);
        self.heard_from_leader(now);
        self.reset_election_timer(now, &mut effects);

        let log = &self.state.log;
        // Entries up to the snapshot's last index are committed, so they match whatever a
        // leader sends for them (Log Matching); `merge` skips them.
        let compacted = args.prev_log_index < log.snapshot_index();
        let conflict = match log.term_at(args.prev_log_index) {
            _ if compacted => None,
            None => Some(Conflict {
                term: None,
                first_index: log.last_index().next(),
            }),
            Some(term)
                if term != args.prev_log_term && !self.has(Mutation::SkipConsistencyCheck) =>
            {
                Some(Conflict {
                    term: Some(term),
                    first_index: log.first_index_of_term_run(args.prev_log_index),
                })
            }
            Some(_) => None,
        };
        sometimes(compacted, Point::AppendPrevCompacted);
        if let Some(conflict) = conflict {
            reached(match conflict.term {
                None => Point::AppendRejectedLogShort,
                Some(_) => Point::AppendRejectedTermMismatch,
            });
            effects.push(reply(self, false, Some(conflict)));
            return effects;
        }

        if self.has(Mutation::TruncateOnMatchingHeartbeat) {
            effects.extend(broken::truncate_on_matching_heartbeat::truncate(
                &mut self.state.log,
                args,
            ));
        }
        let outcome = self.state.log.merge(args.prev_log_index, &args.entries);
        if outcome.changed {
            effects.push(Effect::Persist);
            effects.push(Effect::LogChanged {
                truncated_from: outcome.truncated_from,
                appended_from: outcome.appended_from,
            });
        }
        if let Some(from) = outcome.truncated_from {
            reached(Point::FollowerTruncatedSuffix);
            if from <= self.commit_index {
                effects.push(Effect::InvariantViolated(format!(
                    "{}: truncated committed entries from {from} (commit index {})",
                    self.id, self.commit_index
                )));
            }
        }
        let last_new = LogIndex(args.prev_log_index.0 + args.entries.len() as u64);
        let new_commit = args.leader_commit.min(last_new);
        if new_commit > self.commit_index {
            self.commit_index = new_commit;
            effects.push(Effect::CommitAdvanced(new_commit));
        }
        effects.push(reply(self, true, None));
        effects
    }

    pub(super) fn handle_append_reply(
        &mut self,
        now: Instant,
        peer: NodeId,
        args: &AppendEntriesArgs,
        reply: &AppendEntriesReply,
    ) -> Effects {
        let mut effects = Effects::default();
        let answer = Answer {
            peer,
            request_term: args.term,
            reply_term: reply.term,
            sent_at: args.sent_at,
            read_round: reply.read_round,
        };
        if !self.answer_in_term(now, answer, &mut effects) {
            return effects;
        }
        let last_index = self.state.log.last_index();
        let RoleState::Leader(leader) = &mut self.role else {
            return effects;
        };
        let entry = leader
            .progress
            .get_mut(&peer)
            .expect("progress for every peer");
        if reply.success {
            let matched = LogIndex(args.prev_log_index.0 + args.entries.len() as u64);
            assert!(
                matched <= last_index,
                "{peer} matched {matched} beyond the leader's log"
            );
            entry.match_index = entry.match_index.max(matched);
            entry.next_index = entry.next_index.max(entry.match_index.next());
            self.advance_commit(&mut effects);
            self.step_down_if_removed(now, &mut effects);
        } else if let Some(conflict) = reply.conflict {
            let log = &self.state.log;
            let suggested = match conflict.term.and_then(|term| log.last_index_of_term(term)) {
                Some(last_of_term) => last_of_term.next(),
                None => {
                    sometimes(conflict.term.is_some(), Point::BacktrackedPastConflictTerm);
                    conflict.first_index
                }
            };
            entry.next_index = backtrack(*entry, suggested);
            effects.push(Effect::WakePeers);
        }
        if self.transfer_waits_for(peer) {
            // The target may have caught up: TimeoutNow may be due.
            effects.push(Effect::WakePeers);
        }
        effects
    }

    /// What a leader does with any answer from a peer: a higher term deposes it; an answer to a
    /// request of another term, or in another term, is ignored; otherwise the peer counts for
    /// check-quorum, for the lease from when the request was sent, and for the read round it
    /// echoes. Returns whether the answer is in this term (the caller goes on with it).
    pub(super) fn answer_in_term(
        &mut self,
        now: Instant,
        answer: Answer,
        effects: &mut Effects,
    ) -> bool {
        if answer.reply_term > self.term() {
            let stubborn = matches!(self.role, RoleState::Leader(_))
                && self.has(Mutation::NoStepDownOnHigherTermReply);
            if !stubborn {
                sometimes(
                    matches!(self.role, RoleState::Leader(_)),
                    Point::LeaderDeposedByReply,
                );
                self.become_follower(answer.reply_term, now, effects);
            }
            return false;
        }
        if answer.request_term != self.term() || answer.reply_term != self.term() {
            reached(Point::ReplyToOldTermIgnored);
            return false;
        }
        self.peer_answered(answer.peer, now);
        self.lease_acknowledged(answer.peer, answer.sent_at, now);
        self.read_round_answered(answer.peer, answer.read_round, effects);
        true
    }

    /// Commits the highest index replicated on a majority, counting only entries of the current
    /// term (Raft §5.4.2); earlier entries are committed indirectly.
    pub(super) fn advance_commit(&mut self, effects: &mut Effects) {
        let RoleState::Leader(leader) = &self.role else {
            return;
        };
        let term = self.term();
        let log = &self.state.log;
        let quorum = self.quorum();
        let mut candidate = log.last_index();
        while candidate > self.commit_index {
            let entry_term = log.term_at(candidate).expect("candidate within the log");
            let itself = self
                .counts_itself_toward(leader, candidate)
                .then_some(self.id);
            let holders = (leader.progress.iter())
                .filter(|(_, p)| p.match_index >= candidate)
                .map(|(&peer, _)| peer)
                .chain(itself);
            let on_majority = if self.has(Mutation::CommitNeedsEveryNode) {
                broken::commit_needs_every_node::committable(&quorum, holders)
            } else {
                quorum.counts(holders)
            };
            if entry_term != term && !self.has(Mutation::CommitOldTermByCounting) {
                sometimes(on_majority, Point::OldTermEntryOnMajorityNotCounted);
                break;
            }
            if on_majority {
                let first_new = self.commit_index.next();
                sometimes(
                    log.term_at(first_new).is_some_and(|first| first != term),
                    Point::OldTermEntriesCommittedIndirectly,
                );
                self.commit_index = candidate;
                effects.push(Effect::CommitAdvanced(candidate));
                return;
            }
            candidate = candidate.prev();
        }
    }
}

/// An answer from a peer to a leader's request, as far as every kind of request shares it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Answer {
    /// Who answered.
    pub peer: NodeId,
    /// The term the request was sent in.
    pub request_term: crate::Term,
    /// The term the peer answered in.
    pub reply_term: crate::Term,
    /// When the request was built (the lease counts from it).
    pub sent_at: Instant,
    /// The read round the answer echoes.
    pub read_round: u64,
}

/// The new `next_index` after a rejection suggesting `suggested`: never at or below what is known
/// to match, and always lower than before so backtracking makes progress.
fn backtrack(progress: Progress, suggested: LogIndex) -> LogIndex {
    let floor = progress.match_index.next();
    let lowered = suggested.min(progress.next_index.prev());
    lowered.max(floor).max(LogIndex(1))
}
