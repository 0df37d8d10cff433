//! A server's state file as a disk may hand it back: the file's frame (CRC32C) and the node's
//! stored form inside it are refused or decoded, never a panic; a decoded state encodes back to
//! bytes that decode to it again.
#![no_main]

use libfuzzer_sys::fuzz_target;
use node::PersistentState;

fuzz_target!(|file: &[u8]| {
    if let Ok(body) = storage::decode_state_file(file) {
        let _ = PersistentState::decode(body);
    }
    if let Ok(state) = PersistentState::decode(file) {
        interleave_fuzz::decoded("state_file");
        assert_eq!(PersistentState::decode(&state.encode()), Ok(state));
    }
});
