//! Snapshots (Raft section 7): the service hands the node its state up to an applied index and
//! the log's prefix up to there is compacted; a leader whose follower needs compacted entries
//! sends it the snapshot instead (InstallSnapshot); the follower takes it, keeping the entries
//! after it only if its log agrees there, and never goes back to an older one.

use super::replication::Answer;
use super::{Effect, Effects, RaftCore, RoleState};
use crate::messages::{InstallSnapshotArgs, InstallSnapshotReply, Response};
use crate::mutation::Mutation;
use crate::{LogIndex, NodeId};
use threadsim::Instant;

impl RaftCore {
    /// The service has applied every entry up to `index` (committed, so never removed) and its
    /// state there is `snapshot`: the log's prefix up to `index` is compacted into it, and both
    /// are written in one persist. A snapshot no newer than the one the log has is ignored.
    pub fn compact(&mut self, index: LogIndex, snapshot: Vec<u8>) -> Effects {
        assert!(
            index <= self.commit_index,
            "{}: a snapshot at {index} past the commit index {}",
            self.id,
            self.commit_index
        );
        let mut effects = Effects::default();
        if index <= self.state.log.snapshot_index() {
            return effects;
        }
        self.state.log.compact_to(index);
        self.state.snapshot = snapshot;
        effects.push(Effect::Persist);
        effects.push(Effect::LogCompacted {
            index,
            term: self.state.log.snapshot_term(),
        });
        effects
    }

    /// The InstallSnapshot a leader sends a follower whose next entries are compacted.
    pub(super) fn snapshot_request(&self) -> InstallSnapshotArgs {
        InstallSnapshotArgs {
            term: self.term(),
            leader: self.id,
            last_included_index: self.state.log.snapshot_index(),
            last_included_term: self.state.log.snapshot_term(),
            data: self.state.snapshot.clone(),
            read_round: 0,
            sent_at: Instant::ZERO,
        }
    }

    pub(super) fn handle_install_snapshot(
        &mut self,
        now: Instant,
        args: &InstallSnapshotArgs,
    ) -> Effects {
        let mut effects = Effects::default();
        let reply = |core: &RaftCore| {
            Effect::Reply(Response::InstallSnapshot(InstallSnapshotReply {
                term: core.term(),
                read_round: args.read_round,
            }))
        };
        if args.term < self.term() {
            effects.push(reply(self));
            return effects;
        }
        self.become_follower(args.term, now, &mut effects);
        self.leader_hint = Some(args.leader);
        self.heard_from_leader(now);
        self.reset_election_timer(now, &mut effects);
        let index = args.last_included_index;
        // What is committed here is in this log already (Log Matching): a snapshot this node's
        // commit index covers (its own snapshot's included) has nothing to add. (Broken variant
        // `install-older-snapshot`: anything newer than its own snapshot is taken.)
        let older_taken =
            self.has(Mutation::InstallOlderSnapshot) && index > self.state.log.snapshot_index();
        if index > self.commit_index || older_taken {
            let kept_suffix = self.state.log.term_at(index) == Some(args.last_included_term);
            self.state
                .log
                .install_snapshot(index, args.last_included_term);
            self.state.snapshot = args.data.clone();
            self.commit_index = self.commit_index.max(index);
            effects.push(Effect::Persist);
            effects.push(Effect::SnapshotInstalled {
                index,
                term: args.last_included_term,
                kept_suffix,
            });
        }
        effects.push(reply(self));
        effects
    }

    pub(super) fn handle_install_snapshot_reply(
        &mut self,
        now: Instant,
        peer: NodeId,
        args: &InstallSnapshotArgs,
        reply: &InstallSnapshotReply,
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
        let RoleState::Leader(leader) = &mut self.role else {
            return effects;
        };
        let progress = leader
            .progress
            .get_mut(&peer)
            .expect("progress for every peer");
        progress.match_index = progress.match_index.max(args.last_included_index);
        progress.next_index = progress.next_index.max(progress.match_index.next());
        self.advance_commit(&mut effects);
        effects.push(Effect::WakePeers);
        effects
    }
}
