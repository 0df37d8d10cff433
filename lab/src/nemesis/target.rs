//! Which node a fault hits: one named in the plan, or the leader of the moment it comes.

use node::NodeId;
use std::fmt;

/// Which node a fault hits, decided when it is injected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// The node that leads then; `otherwise` when none does (or two believe they do).
    Leader {
        /// The node hit when there is no single leader.
        otherwise: NodeId,
    },
    /// This node.
    Node(NodeId),
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Leader { otherwise } => write!(f, "the leader (else {otherwise})"),
            Target::Node(node) => write!(f, "{node}"),
        }
    }
}

/// The nodes, as `n0, n2`.
pub fn names(nodes: &[NodeId]) -> String {
    let names: Vec<String> = nodes.iter().map(NodeId::to_string).collect();
    names.join(", ")
}
