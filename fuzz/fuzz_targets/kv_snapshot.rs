//! A key-value snapshot and a log entry's command, as a leader or a damaged file may send them:
//! refused or decoded, never a panic; a restored store snapshots back to the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use node::kv::{KvCommand, KvStateMachine};
use node::Command;

fuzz_target!(|bytes: &[u8]| {
    if let Ok(machine) = KvStateMachine::restore(bytes) {
        interleave_fuzz::decoded("kv_snapshot");
        assert_eq!(machine.snapshot(), bytes, "one state, one snapshot");
    }
    if let Ok(command) = KvCommand::decode(&Command(bytes.to_vec())) {
        interleave_fuzz::decoded("kv_snapshot");
        assert_eq!(command.encode().0, bytes);
    }
});
