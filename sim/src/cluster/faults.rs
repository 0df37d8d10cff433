//! The cluster's control surface, named by the faults it injects (turmoil's `Sim` is the
//! model): crashes and restarts, pauses, partitions and one-way cuts, interfaces going down,
//! message loss, clock skew. Every fault is recorded in the run's trace as it happens.

use super::{Cluster, Service};
use crate::schedule::rate_text;
use node::{NodeError, NodeId, StorageError};
use std::time::Duration;
use threadsim::clock::RatePpm;

/// What came of [`Cluster::restart_unless_unreadable`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Restarted {
    /// The node runs.
    Running,
    /// The node could not read its disk and refused to start; it is still down.
    Refused,
}

impl Cluster {
    /// Crashes `node`: its instance stops sending and receiving at once, its threads are joined,
    /// and only its disk survives. No-op if it is already down.
    pub fn crash(&self, node: NodeId) {
        if self.is_running(node) {
            self.events.info(format!("crash {node}"));
            if self.config.power_loss_on_crash {
                // At one instant: no sync under way finishes after the cut.
                match &self.logs {
                    Some(logs) => logs.cut_power_now(node),
                    None => self.disk(node).cut_power(),
                }
            }
            self.stop_instance(node);
            match (&self.logs, self.config.power_loss_on_crash) {
                (Some(logs), true) => {
                    let lost = logs.lose_power(node);
                    self.events.info(format!(
                        "power lost on {node}: {lost} bytes written and not synced gone"
                    ));
                }
                (Some(logs), false) => logs.process_killed(node),
                (None, true) => {
                    let lost = self.disk(node).lose_unsynced();
                    self.events
                        .info(format!("power lost on {node}: {lost} unsynced writes gone"));
                }
                (None, false) => {}
            }
            if self.config.read_error_after_crash {
                self.disk(node).fail_next_read();
                self.events
                    .info(format!("{node}'s disk will fail its next read"));
            }
        } else {
            self.events.info(format!("crash {node} (already down)"));
        }
    }

    /// Adds what the nodes' logs went through to `figures` (nothing with the two-copy disk).
    pub fn count_log_figures(&self, figures: &mut runspec::RunFigures) {
        if let Some(logs) = &self.logs {
            logs.count(figures);
        }
    }

    /// Stops every running node at the end of a run (joining every thread), saying so once.
    pub(crate) fn stop_all(&self) {
        if self.ids().into_iter().any(|id| self.is_running(id)) {
            self.events
                .info("end of the run: every running node stops".to_string());
        }
        for id in self.ids() {
            self.stop_instance(id);
        }
    }

    /// Ends `node`'s running instance, if it has one: its network endpoint goes and its threads
    /// exit and are joined. Returns whether it had one.
    fn stop_instance(&self, node: NodeId) -> bool {
        let running = self.running.lock().remove(&node);
        let Some(running) = running else {
            return false;
        };
        self.network.detach(node);
        running.node.kill();
        match running.service {
            Service::Checker(thread) => thread.join(),
            Service::Kv(server) => server.kill(),
        }
        true
    }

    /// Starts a new instance of `node` from its disk (ending the running one first, if any).
    /// Fails if the node refuses to start (corrupt storage).
    pub fn restart(&self, node: NodeId) -> Result<(), NodeError> {
        self.events.info(if self.is_running(node) {
            format!("restart {node} (its running instance crashed first)")
        } else {
            format!("restart {node}")
        });
        self.stop_instance(node);
        self.disk(node).reboot();
        if let Some(logs) = &self.logs {
            logs.process_killed(node);
        }
        self.start_node(node)
    }

    /// Arms a crash in the middle of `node`'s next save: only some sectors of it reach the disk,
    /// the disk takes nothing more, and the node stops itself when its save fails. It stays in
    /// the cluster, stopped, until it is crashed or restarted.
    pub fn tear_next_save(&self, node: NodeId) {
        self.events
            .info(format!("{node}'s next save will be torn by a crash"));
        match &self.logs {
            Some(logs) => logs.tear_next_save(node, self.next_tear_rng()),
            None => self.disk(node).tear_next_save(self.next_tear_rng()),
        }
    }

    /// Arms a power cut in the middle of `node`'s next sync (a leader syncing its own entries
    /// apart, on a disk that shares fsyncs): the sync takes its time and fails, the node stops,
    /// and the run crashes it at its next step, taking back what it had not synced.
    pub fn cut_power_in_next_sync(&self, node: NodeId) {
        self.events
            .info(format!("{node}'s power will go during its next sync"));
        match &self.logs {
            Some(logs) => logs.cut_power_in_next_sync(node),
            None => self.disk(node).cut_power_in_next_sync(),
        }
    }

    /// Makes `node`'s next sync fail with EIO, dropping what it should have written (the
    /// server's log only; the two-copy disk has no such fault, and the event says so).
    pub fn fail_next_sync(&self, node: NodeId) {
        match &self.logs {
            Some(logs) => {
                self.events
                    .info(format!("{node}'s next sync will fail (EIO)"));
                logs.fail_next_sync(node);
            }
            None => self.events.info(format!(
                "{node}'s next sync would fail: not on the two-copy disk (--storage log)"
            )),
        }
    }

    /// Fills `node`'s disk: at most a sector more fits, then its writes fail with ENOSPC and
    /// it stops; it has room again when it restarts (the server's log only; the two-copy disk
    /// has no such fault, and the event says so).
    pub fn fill_disk(&self, node: NodeId) {
        match &self.logs {
            Some(logs) => {
                let room = logs.fill_disk(node);
                (self.events).info(format!("{node}'s disk fills up: {room} bytes more fit"));
            }
            None => self.events.info(format!(
                "{node}'s disk would fill up: not on the two-copy disk (--storage log)"
            )),
        }
    }

    /// Ends a fault armed by [`Cluster::fill_disk`] as [`Cluster::end_torn_save`] ends a tear:
    /// a node that stopped on its full disk is crashed (and has room when it restarts), a disk
    /// not yet full gets its room back.
    pub fn end_disk_full(&self, node: NodeId) {
        if self.is_stopped(node) {
            self.crash(node);
        } else if self.logs.as_ref().is_some_and(|logs| logs.make_room(node)) {
            (self.events).info(format!("{node}'s disk has room again"));
        }
    }

    /// Ends a fault armed by [`Cluster::fail_next_sync`] as [`Cluster::end_torn_save`] ends a
    /// tear: a node that stopped on the failure is crashed, a failure no sync met is taken back.
    pub fn end_sync_failure(&self, node: NodeId) {
        if self.is_stopped(node) {
            self.crash(node);
        } else if self
            .logs
            .as_ref()
            .is_some_and(|logs| logs.cancel_sync_failure(node))
        {
            self.events.info(format!(
                "{node} synced nothing since its failure was armed: taken back"
            ));
        }
    }

    /// Ends a fault armed by [`Cluster::cut_power_in_next_sync`] as
    /// [`Cluster::end_torn_save`] ends a tear.
    pub fn end_power_cut_in_sync(&self, node: NodeId) {
        if self.is_stopped(node) {
            self.crash(node);
        } else if match &self.logs {
            Some(logs) => logs.cancel_power_cut_in_sync(node),
            None => self.disk(node).cancel_power_cut_in_sync(),
        } {
            self.events.info(format!(
                "{node} synced nothing since its power cut was armed: taken back"
            ));
        }
    }

    /// Ends a fault armed by [`Cluster::tear_next_save`]: a node whose save was torn is crashed
    /// (its machine is down, to be restarted), and a tear still waiting for a save is taken
    /// back, so the healed cluster has no crash pending.
    pub fn end_torn_save(&self, node: NodeId) {
        if self.is_stopped(node) {
            self.crash(node);
        } else if match &self.logs {
            Some(logs) => logs.cancel_tear(node),
            None => self.disk(node).cancel_tear(),
        } {
            self.events.info(format!(
                "{node} saved nothing since its tear was armed: taken back"
            ));
        }
    }

    /// Arms a misdirected write on `node`'s disk: its next save writes one copy of the state
    /// over the other's place, and its machine goes down after it (the run crashes the node
    /// once it stops, at its next save).
    pub fn misdirect_next_save(&self, node: NodeId) {
        self.events.info(format!(
            "{node}'s next save will write one copy over the other, then its machine goes down"
        ));
        self.disk(node).misdirect_next_save(self.next_tear_rng());
    }

    /// Ends a fault armed by [`Cluster::misdirect_next_save`] as [`Cluster::end_torn_save`]
    /// ends a tear; a node still running on the disk its misdirected save stopped is crashed
    /// too.
    pub fn end_misdirected_save(&self, node: NodeId) {
        if self.is_stopped(node) || (self.is_running(node) && self.disk(node).is_frozen()) {
            self.crash(node);
        } else if self.disk(node).cancel_misdirection() {
            self.events.info(format!(
                "{node} saved nothing since its misdirection was armed: taken back"
            ));
        }
    }

    /// Flips a bit in one of the two copies of `node`'s state at rest, the one its next save
    /// writes first, if the other holds the newest state (one good copy is always left).
    pub fn corrupt_one_copy(&self, node: NodeId) {
        match self.disk(node).corrupt_one_copy(self.next_tear_rng()) {
            Some(copy) => self
                .events
                .info(format!("a bit flipped in copy {copy} of {node}'s state")),
            None => self.events.info(format!(
                "{node}'s disk has no copy to corrupt while keeping a good one"
            )),
        }
    }

    /// Restarts `node` as [`Cluster::restart`] does, except that a node that refuses to start
    /// because its disk could not be read (a latent read error) stays down, and
    /// `Ok(Restarted::Refused)` says so: refusing is what a correct node must do then.
    pub fn restart_unless_unreadable(&self, node: NodeId) -> Result<Restarted, NodeError> {
        match self.restart(node) {
            Ok(()) => Ok(Restarted::Running),
            Err(NodeError::Storage(StorageError::Io(why))) => {
                self.events.info(format!("{node} refused to start: {why}"));
                Ok(Restarted::Refused)
            }
            Err(error) => Err(error),
        }
    }

    /// Pauses every thread of `node` (see [`node::Node::pause`]).
    pub fn pause(&self, node: NodeId) {
        self.events.info(format!("pause {node}"));
        if let Some(running) = self.running.lock().get_mut(&node) {
            running.node.pause();
            running.paused = true;
        }
    }

    /// Resumes a paused node.
    pub fn resume(&self, node: NodeId) {
        self.events.info(format!("resume {node}"));
        if let Some(running) = self.running.lock().get_mut(&node) {
            running.node.resume();
            running.paused = false;
        }
    }

    /// Resumes every node a fault left paused (part of healing at the end of a run: a schedule
    /// that pauses a node and never resumes it, as a shrunk one may, must not pass for a cluster
    /// that cannot recover).
    pub fn resume_every_paused_node(&self) {
        let paused: Vec<NodeId> = (self.running.lock().iter())
            .filter(|(_, running)| running.paused)
            .map(|(id, _)| *id)
            .collect();
        for node in paused {
            self.resume(node);
        }
    }

    /// Takes `node` off the network (it keeps running).
    pub fn disconnect(&self, node: NodeId) {
        self.network.set_up(node, false);
    }

    /// Puts `node` back on the network.
    pub fn connect(&self, node: NodeId) {
        self.network.set_up(node, true);
    }

    /// Splits the nodes into `groups` that cannot reach each other; a node (or client) in no
    /// group is isolated.
    pub fn partition(&self, groups: &[Vec<NodeId>]) {
        self.network.partition(groups);
    }

    /// Cuts the link from `from` to `to` only: `to` can still send to `from`.
    pub fn partition_one_way(&self, from: NodeId, to: NodeId) {
        self.network.partition_one_way(from, to);
    }

    /// Restores every link and interface.
    pub fn heal(&self) {
        self.network.heal();
    }

    /// From now on `node`'s clock runs at `rate` of true time (its threads' timers follow).
    pub fn set_clock_rate(&self, node: NodeId, rate: RatePpm) {
        self.events
            .info(format!("clock {node} runs at {}", rate_text(rate)));
        self.node_clock(node).set_rate(rate);
    }

    /// `node`'s clock jumps `by` forward at once.
    pub fn jump_clock(&self, node: NodeId, by: Duration) {
        self.events.info(format!(
            "clock {node} jumps {}",
            crate::schedule::format_time(by)
        ));
        self.node_clock(node).jump(by);
    }

    /// Turns message loss (10% of requests and 10% of replies) on or off.
    pub fn set_unreliable(&self, unreliable: bool) {
        self.network.set_unreliable(unreliable);
    }

    /// Replaces the network's delays, loss rates and reordering.
    pub fn set_net_config(&self, config: crate::network::NetConfig) {
        self.network.set_config(config);
    }
}
