//! The service the raft workload runs on every node: it hands each committed entry to the
//! invariants, and keeps as its state a chain digest of every command applied, so that it has a
//! state to snapshot. With a threshold it hands the node a snapshot of that state once the log
//! grows past it, as the key-value server does, so the chaos workload compacts, installs and
//! restores snapshots too.

use crate::invariants::Invariants;
use node::{Applied, Delivery, LogIndex, Node, NodeId};
use threadsim::channel::Receiver;
use threadsim::clock::{spawn, ClockJoinHandle};
use threadsim::sync::Arc;
use threadsim::{ClockRef, Digest};

/// The checker's state: the last index applied and a digest of every command up to it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct AppliedChain {
    applied: LogIndex,
    chain: u64,
}

const SNAPSHOT_LEN: usize = 16;

impl AppliedChain {
    /// Applies the next entry.
    fn apply(&mut self, applied: &Applied) {
        assert_eq!(applied.index, self.applied.next(), "entries out of order");
        let mut digest = Digest::from_value(self.chain);
        digest.write_u64(applied.index.0);
        digest.write(&applied.command.0);
        self.chain = digest.value();
        self.applied = applied.index;
    }

    /// The state as a snapshot's bytes: the index, then the chain.
    fn snapshot(&self) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(SNAPSHOT_LEN);
        bytes.extend_from_slice(&self.applied.0.to_le_bytes());
        bytes.extend_from_slice(&self.chain.to_le_bytes());
        bytes
    }

    /// The state a [`AppliedChain::snapshot`] holds.
    fn restore(bytes: &[u8]) -> Option<AppliedChain> {
        let bytes: &[u8; SNAPSHOT_LEN] = bytes.try_into().ok()?;
        let (applied, chain) = bytes.split_at(8);
        Some(AppliedChain {
            applied: LogIndex(u64::from_le_bytes(applied.try_into().ok()?)),
            chain: u64::from_le_bytes(chain.try_into().ok()?),
        })
    }

    /// A digest of the whole state, to compare with other nodes' at the same index.
    fn digest(&self) -> u64 {
        let mut digest = Digest::from_value(self.chain);
        digest.write_u64(self.applied.0);
        digest.value()
    }
}

/// Starts the checker service of `node` on its own thread; it ends when the node closes its
/// apply channel.
pub(super) fn start(
    clock: &ClockRef,
    node: Arc<Node>,
    deliveries: Receiver<Delivery>,
    invariants: Arc<Invariants>,
    snapshot_threshold: Option<usize>,
) -> ClockJoinHandle<()> {
    let id = node.id();
    spawn(clock, format!("{id}-service"), move || {
        let mut state = AppliedChain::default();
        while let Some(delivery) = deliveries.recv() {
            match delivery {
                Delivery::Entry(applied) => {
                    invariants.on_applied(id, &applied);
                    state.apply(&applied);
                }
                Delivery::Snapshot { index, data, .. } => {
                    state = restore(id, index, &data, &invariants);
                }
            }
            if let Some(threshold) = snapshot_threshold {
                if node.log_bytes() > threshold && node.snapshot(state.applied, state.snapshot()) {
                    invariants.on_snapshot_taken(id, state.applied, state.digest());
                }
            }
        }
    })
}

/// Restores a snapshot handed to the service, telling the invariants what it held.
fn restore(id: NodeId, index: LogIndex, data: &[u8], invariants: &Invariants) -> AppliedChain {
    invariants.on_snapshot_delivered(id, index);
    // Bytes that are no snapshot restore the empty state. The digest covers the index the
    // bytes hold: a snapshot whose bytes stop short of the index it claims restores another
    // state than the one at that index, which the invariants catch.
    let restored = AppliedChain::restore(data).unwrap_or_default();
    invariants.on_snapshot_restored(id, index, restored.digest());
    AppliedChain {
        applied: index,
        ..restored
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;
    use node::Command;

    #[test]
    fn a_snapshot_restores_the_same_state_and_other_bytes_are_refused() {
        let mut state = AppliedChain::default();
        for index in 1..=3 {
            state.apply(&Applied {
                index: LogIndex(index),
                term: node::Term(1),
                command: Command::from_text(&format!("c{index}")),
            });
        }
        let restored = AppliedChain::restore(&state.snapshot()).expect("its own snapshot");
        assert_eq!(restored, state);
        assert_eq!(restored.digest(), state.digest());
        assert_ne!(AppliedChain::default().digest(), state.digest());
        assert_eq!(AppliedChain::restore(&[0; 15]), None);
    }
}
