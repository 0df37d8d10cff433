//! **State Machine Safety** (Raft §5.4.3, Figure 3): if a server has applied a log entry at a
//! given index to its state machine, no other server will ever apply a different log entry for
//! the same index. Checked on every entry every node applies.

use node::{Command, LogIndex, NodeId};
use std::collections::BTreeMap;

/// The command applied first at every index, and by whom.
#[derive(Default)]
pub(super) struct StateMachineSafety {
    applied: BTreeMap<LogIndex, (Command, NodeId)>,
}

impl StateMachineSafety {
    /// `node` applied `command` at `index`.
    pub fn on_applied(
        &mut self,
        node: NodeId,
        index: LogIndex,
        command: &Command,
    ) -> Result<(), String> {
        match self.applied.get(&index) {
            Some((first, by)) if first != command => Err(format!(
                "State Machine Safety: at index {index} {node} applied {command} but {by} applied {first}"
            )),
            Some(_) => Ok(()),
            None => {
                self.applied.insert(index, (command.clone(), node));
                Ok(())
            }
        }
    }

    /// The command applied at `index`, if any node applied one.
    pub fn command_at(&self, index: LogIndex) -> Option<&Command> {
        self.applied.get(&index).map(|(command, _)| command)
    }

    /// Every command applied, by index.
    pub fn commands(&self) -> BTreeMap<LogIndex, Command> {
        self.applied
            .iter()
            .map(|(&index, (command, _))| (index, command.clone()))
            .collect()
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn different_commands_at_one_index_violate_state_machine_safety() {
        let mut property = StateMachineSafety::default();
        let (a, b) = (Command::from_text("a"), Command::from_text("b"));
        assert!(property.on_applied(NodeId(0), LogIndex(1), &a).is_ok());
        assert!(property.on_applied(NodeId(1), LogIndex(1), &a).is_ok());
        let violation = property.on_applied(NodeId(2), LogIndex(1), &b).unwrap_err();
        assert!(
            violation.contains("State Machine Safety: at index #1 n2"),
            "{violation}"
        );
    }
}
