//! [`Shell`]: what every thread of a node reaches (the seams, the workers' signals), and
//! [`Locked`], the state behind the node's one lock.

use super::{Delivery, NodeParams, NodeStatus, ReplicationStats};
use crate::config::Config;
use crate::core::{
    ChangeRefused, Effects, MembershipChange, NotLeader, ProposeError, RaftCore, ReadOutcome,
    ReadTicket, TransferRefused,
};
use crate::mutation::Mutation;
use crate::observer::Observer;
use crate::persist::{Persister, StateEncoder, WriteTicket};
use crate::transport::Transport;
use crate::{broken, Command, LogIndex, NodeId, Term};
use std::collections::BTreeMap;
use threadsim::channel::Sender;
use threadsim::clock::{ClockRef, Signal};
use threadsim::sync::{Arc, Mutex, MutexGuard};

/// The state behind the node's lock.
pub(crate) struct Locked {
    pub core: RaftCore,
    /// Killed, or stopped itself after a write crashed under it: every worker exits.
    pub stopped: bool,
    /// Paused like a stopped process: workers wait, requests go unanswered.
    pub paused: bool,
    /// A persist deferred by the `reply-before-persist` variant.
    pub persist_owed: bool,
    /// What the `snapshot-persisted-apart` variant's snapshot file still holds while its new
    /// snapshot is being written.
    pub snapshot_file_behind: Option<Vec<u8>>,
    /// The stored form of the persistent state as of the last persist, so the next one encodes
    /// only the entries appended since.
    pub encoder: StateEncoder,
    /// The last write of the persistent state (durable once synced; see `persistence.rs`).
    pub written: WriteTicket,
    /// The bytes the last write's state spends besides its snapshot, as the encoder counts
    /// them (`persist::stored_log_bytes`), whatever the persister.
    pub log_bytes_written: usize,
    /// Set while a proposal or a replicator's request is written: the persist writes, and the
    /// node's own syncer makes it durable after the lock is released (see `persistence.rs`).
    pub sync_deferred: bool,
    /// The leader's own writes the syncer has yet to make durable.
    pub own_sync_owed: Option<OwnSyncOwed>,
    /// What the syncer last took to make durable (see `persistence.rs`).
    pub own_sync_started: Option<OwnSyncOwed>,
    pub last_applied: LogIndex,
    /// The log's snapshot must be handed to the service before any entry after it: one was
    /// installed from a leader, or restored at start.
    pub snapshot_due: bool,
    /// A thread (the applier, or a handler delivering on its own thread) is handing entries to
    /// the service: at most one at a time, so they arrive in order.
    pub delivering: bool,
    /// Set while a handler executes effects: a commit advance is delivered by that handler
    /// after it releases the lock (`apply_due`) instead of waking the applier.
    pub delivers_itself: bool,
    /// The commit index advanced while `delivers_itself` was set.
    pub apply_due: bool,
    /// What the replicators have sent.
    pub sent: ReplicationStats,
    /// Readers waiting for their ReadIndex round.
    pub reads: BTreeMap<ReadTicket, ReadWaiter>,
    /// The highest commit index and term seen, for the shell's own invariants.
    pub highest_commit_seen: LogIndex,
    pub highest_term_seen: Term,
}

/// Writes of the leader's own entries that wait for the node's syncer: every write up to
/// `ticket`, which hold its log through `through` in `term`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct OwnSyncOwed {
    pub ticket: WriteTicket,
    pub term: Term,
    pub through: LogIndex,
}

/// A reader waiting for its round: woken once the core decides its read.
pub(crate) struct ReadWaiter {
    pub signal: Arc<Signal>,
    pub outcome: Option<ReadOutcome>,
}

impl Locked {
    /// What every worker checks first: exit once the node has stopped, wait while it is paused.
    pub fn gate(&self) -> Option<super::Pass> {
        if self.stopped {
            Some(super::Pass::Exit)
        } else if self.paused {
            Some(super::Pass::WaitUntil(None))
        } else {
            None
        }
    }
}

/// What every thread of a node shares.
pub(crate) struct Shell {
    pub id: NodeId,
    pub clock: ClockRef,
    pub transport: Arc<dyn Transport>,
    pub config: Config,
    pub apply_sender: Sender<Delivery>,
    pub ticker_wake: Signal,
    pub applier_wake: Signal,
    /// Wakes the syncer of the leader's own writes (run only with a persister that shares
    /// fsyncs).
    pub own_sync_wake: Signal,
    pub replicator_wake: BTreeMap<NodeId, Signal>,
    pub heartbeat_wake: BTreeMap<NodeId, Signal>,
    pub persister: Arc<dyn Persister>,
    pub observer: Arc<dyn Observer>,
    /// Whether the observer wants log changes (asked once).
    pub watches_logs: bool,
    locked: Mutex<Locked>,
}

impl Shell {
    pub fn new(params: NodeParams, core: RaftCore) -> Shell {
        let clock = params.clock;
        let id = params.id;
        let signals = |what: &str| -> BTreeMap<NodeId, Signal> {
            core.peers()
                .iter()
                .map(|&peer| (peer, Signal::new(&clock, &format!("{id} {what} {peer}"))))
                .collect()
        };
        let replicator_wake = signals("worker for");
        let heartbeat_wake = signals("heartbeats to");
        let highest_term_seen = core.term();
        let snapshot_due = core.persistent().log.snapshot_index() > LogIndex(0);
        Shell {
            id,
            ticker_wake: Signal::new(&clock, &format!("{id} ticker")),
            applier_wake: Signal::new(&clock, &format!("{id} applier")),
            own_sync_wake: Signal::new(&clock, &format!("{id} own syncer")),
            replicator_wake,
            heartbeat_wake,
            clock,
            transport: params.transport,
            config: params.config,
            apply_sender: params.apply_sender,
            persister: params.persister,
            watches_logs: params.observer.watches_logs(),
            observer: params.observer,
            locked: Mutex::new(Locked {
                core,
                stopped: false,
                paused: false,
                persist_owed: false,
                snapshot_file_behind: None,
                encoder: StateEncoder::new(),
                written: WriteTicket::DURABLE,
                log_bytes_written: 0,
                sync_deferred: false,
                own_sync_owed: None,
                own_sync_started: None,
                last_applied: LogIndex(0),
                snapshot_due,
                delivering: false,
                delivers_itself: false,
                apply_due: false,
                sent: ReplicationStats::default(),
                reads: BTreeMap::new(),
                highest_commit_seen: LogIndex(0),
                highest_term_seen,
            }),
        }
    }

    pub fn peers(&self) -> Vec<NodeId> {
        self.replicator_wake.keys().copied().collect()
    }

    /// The node's lock (a deadlock report names the caller's line).
    #[track_caller]
    pub fn lock(&self) -> MutexGuard<'_, Locked> {
        self.locked.lock()
    }

    pub fn start(&self, command: Command) -> Result<(LogIndex, Term), ProposeError> {
        self.append(|core| core.propose(command))
            .unwrap_or(Err(ProposeError::NotLeader(NotLeader {
                leader_hint: None,
            })))
    }

    /// As [`Shell::start`], for a change of the configuration.
    pub fn change_membership(
        &self,
        change: MembershipChange,
    ) -> Result<(LogIndex, Term), ChangeRefused> {
        self.append(|core| core.change_membership(change))
            .unwrap_or(Err(ChangeRefused::NotLeader(NotLeader {
                leader_hint: None,
            })))
    }

    /// As leader, starts handing leadership to `target` (see
    /// [`RaftCore::transfer_leadership`]).
    pub fn transfer_leadership(&self, target: NodeId) -> Result<(), TransferRefused> {
        let mut locked = self.lock();
        if locked.stopped || locked.paused {
            return Err(TransferRefused::NotLeader(NotLeader { leader_hint: None }));
        }
        let effects = locked.core.transfer_leadership(self.clock.now(), target)?;
        self.execute(&mut locked, effects);
        Ok(())
    }

    /// Appends what `append` makes the core append as leader, and carries out its effects:
    /// `None` when the node is stopped or paused.
    fn append<E>(
        &self,
        append: impl FnOnce(&mut RaftCore) -> Result<(LogIndex, Term, Effects), E>,
    ) -> Option<Result<(LogIndex, Term), E>> {
        if self.config.mutations.has(Mutation::LostApplierWakeup) {
            broken::lost_applier_wakeup::wake_too_early(&self.applier_wake);
        }
        let mut locked = self.lock();
        if locked.stopped || locked.paused {
            return None;
        }
        let (index, term, effects) = match append(&mut locked.core) {
            Ok(appended) => appended,
            Err(refused) => return Some(Err(refused)),
        };
        self.execute(&mut locked, effects);
        if self.persister.shares_fsyncs() && !locked.stopped {
            // Written now, sent by the replicators at once, and made durable by the node's
            // syncer meanwhile (group commit; see `persistence.rs`).
            locked.sync_deferred = true;
            let written = self.persist(&mut locked);
            locked.sync_deferred = false;
            if written.is_err() {
                self.stop(&mut locked);
            } else {
                self.owe_own_sync(&mut locked);
            }
        }
        Some(Ok((index, term)))
    }

    pub fn status(&self) -> NodeStatus {
        let locked = self.lock();
        NodeStatus {
            term: locked.core.term(),
            role: locked.core.role(),
            commit_index: locked.core.commit_index(),
            last_applied: locked.last_applied,
            last_log_index: locked.core.persistent().log.last_index(),
            snapshot_index: locked.core.persistent().log.snapshot_index(),
            sent: locked.sent,
            membership: locked.core.membership(),
        }
    }

    /// Stops the node and wakes every thread so it can see that and exit.
    pub fn kill(&self) {
        let mut locked = self.lock();
        self.stop(&mut locked);
    }

    /// Marks the node stopped, closes the apply channel (a blocked or later send fails), fails
    /// waiting reads and wakes every worker so it sees that and exits. Shared by `kill` and a
    /// crash mid-write.
    pub fn stop(&self, locked: &mut Locked) {
        locked.stopped = true;
        self.apply_sender.close();
        for waiter in locked.reads.values() {
            waiter.signal.notify();
        }
        self.notify_workers();
    }

    /// Whether the node has stopped (killed, or stopped itself after a crashed write).
    pub fn is_stopped(&self) -> bool {
        self.lock().stopped
    }

    /// Pauses or resumes every worker.
    pub fn set_paused(&self, paused: bool) {
        self.lock().paused = paused;
        self.notify_workers();
    }

    /// Wakes every worker thread (without taking the node's lock).
    pub fn notify_workers(&self) {
        self.ticker_wake.notify();
        self.applier_wake.notify();
        self.own_sync_wake.notify();
        for signal in self
            .replicator_wake
            .values()
            .chain(self.heartbeat_wake.values())
        {
            signal.notify();
        }
    }

    /// Reports a broken invariant to the observer.
    pub fn report(&self, description: String) {
        self.observer.on_event(
            self.id,
            &crate::observer::NodeEvent::InvariantViolated { description },
        );
    }
}
