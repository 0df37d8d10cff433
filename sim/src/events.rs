//! [`Events`]: how the harness writes to the run's [`Trace`], each event stamped with simulated
//! time.

use node::NodeId;
use threadsim::{ClockRef, Level, Trace};

/// A handle on the run's trace and clock, shared by the network, the cluster and the invariants.
#[derive(Clone)]
pub struct Events {
    clock: ClockRef,
    trace: Trace,
}

impl Events {
    /// Events written to `trace` at `clock`'s time.
    pub fn new(clock: ClockRef, trace: Trace) -> Events {
        Events { clock, trace }
    }

    /// Records what matters for following the run: roles and terms, faults, violations.
    pub fn info(&self, text: String) {
        self.trace.record(self.clock.now(), Level::Info, text);
    }

    /// Records detail: commits, applied entries, local reads.
    pub fn debug(&self, text: String) {
        self.trace.record(self.clock.now(), Level::Debug, text);
    }

    /// The trace itself.
    pub fn trace(&self) -> &Trace {
        &self.trace
    }

    /// The clock that stamps the events.
    pub fn clock(&self) -> &ClockRef {
        &self.clock
    }
}

/// Nodes as a trace shows them: `[n0 n1 n2]`.
pub fn node_list(nodes: &[NodeId]) -> String {
    let names: Vec<String> = nodes.iter().map(NodeId::to_string).collect();
    format!("[{}]", names.join(" "))
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn a_node_list_reads_like_the_trace_format() {
        assert_eq!(node_list(&[NodeId(0), NodeId(3)]), "[n0 n3]");
        assert_eq!(node_list(&[]), "[]");
    }
}
