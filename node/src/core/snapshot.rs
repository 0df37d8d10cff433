//! Snapshots (Raft section 7): the service hands the node its state up to an applied index and
//! the log's prefix up to there is compacted; a leader whose follower needs compacted entries
//! sends it the snapshot instead (InstallSnapshot), in chunks of at most
//! `Config::max_bytes_per_append`, resuming from what the follower says it holds; the follower
//! assembles the chunks in order, installs the snapshot once whole and matching its checksum,
//! keeping the entries after it only if its log agrees there, and never goes back to an older
//! one.

use super::replication::Answer;
use super::{Effect, Effects, RaftCore, RoleState};
use crate::messages::{InstallSnapshotArgs, InstallSnapshotReply, Response};
use crate::mutation::Mutation;
use crate::persist::checksum;
use crate::{LogIndex, NodeId, Term};
use threadsim::Instant;

/// A snapshot a follower is receiving, chunk by chunk (volatile: a restart starts it over).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct IncomingSnapshot {
    index: LogIndex,
    term: Term,
    total_bytes: u64,
    checksum: u64,
    bytes: Vec<u8>,
}

impl IncomingSnapshot {
    fn is_for(&self, args: &InstallSnapshotArgs) -> bool {
        (self.index, self.term, self.total_bytes, self.checksum)
            == (
                args.last_included_index,
                args.last_included_term,
                args.total_bytes,
                args.checksum,
            )
    }
}

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
        crate::coverage::reached(crate::coverage::Point::LogCompacted);
        // The configuration in force at `index` goes with the snapshot: the entry that carried
        // it may be compacted away.
        let membership = self.membership_at(index);
        self.state.log.compact_to(index);
        self.state.snapshot = membership.wrap_snapshot(&snapshot);
        effects.push(Effect::Persist);
        effects.push(Effect::LogCompacted {
            index,
            term: self.state.log.snapshot_term(),
        });
        effects
    }

    /// The InstallSnapshot a leader sends a follower whose next entries are compacted: the
    /// chunk of the snapshot that starts at `offset` (0 unless the follower already holds that
    /// much of this snapshot).
    pub(super) fn snapshot_request(&self, sent: Option<(LogIndex, u64)>) -> InstallSnapshotArgs {
        let snapshot = &self.state.snapshot;
        let index = self.state.log.snapshot_index();
        let offset = match sent {
            Some((sent_index, received)) if sent_index == index => {
                received.min(snapshot.len() as u64)
            }
            _ => 0,
        };
        let start = offset as usize;
        let end = snapshot
            .len()
            .min(start.saturating_add(self.config.max_bytes_per_append));
        InstallSnapshotArgs {
            term: self.term(),
            leader: self.id,
            last_included_index: index,
            last_included_term: self.state.log.snapshot_term(),
            offset,
            total_bytes: snapshot.len() as u64,
            checksum: checksum(snapshot),
            data: snapshot[start..end].to_vec(),
            read_round: 0,
            sent_at: Instant::ZERO,
        }
    }

    /// Takes one chunk of the snapshot `args` sends; returns the whole snapshot once every
    /// chunk is in and matches its checksum. A chunk that does not start where the last one
    /// ended is not taken (the reply says where to go on); a first chunk starts over.
    fn take_chunk(&mut self, args: &InstallSnapshotArgs) -> Option<Vec<u8>> {
        let fits = args.offset.saturating_add(args.data.len() as u64) <= args.total_bytes;
        if args.offset == 0 && fits {
            self.incoming_snapshot = Some(IncomingSnapshot {
                index: args.last_included_index,
                term: args.last_included_term,
                total_bytes: args.total_bytes,
                checksum: args.checksum,
                bytes: Vec::new(),
            });
        }
        let incoming = self.incoming_snapshot.as_mut()?;
        if !incoming.is_for(args) || args.offset != incoming.bytes.len() as u64 || !fits {
            return None;
        }
        incoming.bytes.extend_from_slice(&args.data);
        if (incoming.bytes.len() as u64) < incoming.total_bytes {
            return None;
        }
        let whole = self.incoming_snapshot.take().expect("just filled").bytes;
        // Bytes that do not match the checksum are dropped: the leader sends them again.
        (checksum(&whole) == args.checksum).then_some(whole)
    }

    /// How many bytes of the snapshot `args` sends this follower holds, in order.
    fn snapshot_received(&self, args: &InstallSnapshotArgs) -> u64 {
        self.incoming_snapshot
            .as_ref()
            .filter(|incoming| incoming.is_for(args))
            .map_or(0, |incoming| incoming.bytes.len() as u64)
    }

    pub(super) fn handle_install_snapshot(
        &mut self,
        now: Instant,
        args: &InstallSnapshotArgs,
    ) -> Effects {
        let mut effects = Effects::default();
        let reply = |core: &RaftCore, received: u64| {
            Effect::Reply(Response::InstallSnapshot(InstallSnapshotReply {
                term: core.term(),
                received,
                read_round: args.read_round,
            }))
        };
        if args.term < self.term() {
            effects.push(reply(self, 0));
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
        if index <= self.commit_index && !older_taken {
            crate::coverage::reached(crate::coverage::Point::SnapshotAlreadyCommitted);
            effects.push(reply(self, args.total_bytes));
            return effects;
        }
        let Some(snapshot) = self.take_chunk(args) else {
            effects.push(reply(self, self.snapshot_received(args)));
            return effects;
        };
        if crate::membership::Membership::unwrap_snapshot(&snapshot).is_err() {
            // Whole and matching its checksum, but without the configuration a snapshot starts
            // with (a leader of an older version, or a bug): not installed, and the leader
            // starts it over.
            effects.push(reply(self, 0));
            return effects;
        }
        let kept_suffix = self.state.log.term_at(index) == Some(args.last_included_term);
        crate::coverage::reached(if kept_suffix {
            crate::coverage::Point::SnapshotInstalledKeptSuffix
        } else {
            crate::coverage::Point::SnapshotInstalledLogReplaced
        });
        self.state
            .log
            .install_snapshot(index, args.last_included_term);
        self.state.snapshot = snapshot;
        self.commit_index = self.commit_index.max(index);
        effects.push(Effect::Persist);
        effects.push(Effect::SnapshotInstalled {
            index,
            term: args.last_included_term,
            kept_suffix,
        });
        effects.push(reply(self, args.total_bytes));
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
        if reply.received < args.total_bytes {
            // More chunks to go, from where the follower is.
            crate::coverage::reached(crate::coverage::Point::SnapshotSentInChunks);
            progress.snapshot_sent = Some((args.last_included_index, reply.received));
            effects.push(Effect::WakePeers);
            return effects;
        }
        progress.snapshot_sent = None;
        progress.match_index = progress.match_index.max(args.last_included_index);
        progress.next_index = progress.next_index.max(progress.match_index.next());
        self.advance_commit(&mut effects);
        effects.push(Effect::WakePeers);
        effects
    }
}
