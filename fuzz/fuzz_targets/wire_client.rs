//! Client frames, as a hostile client sends them and as a server answers: refused or decoded,
//! never a panic, and what decodes encodes back to the same message.
#![no_main]

use server::wire::kv::{
    decode_client_reply, decode_client_request, encode_client_reply, encode_client_request,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|frame: &[u8]| {
    if let Ok((id, request)) = decode_client_request(frame) {
        interleave_fuzz::decoded("wire_client");
        let again = encode_client_request(id, &request);
        assert_eq!(decode_client_request(&again), Ok((id, request)));
    }
    if let Ok((id, reply)) = decode_client_reply(frame) {
        interleave_fuzz::decoded("wire_client");
        let again = encode_client_reply(id, &reply);
        assert_eq!(decode_client_reply(&again), Ok((id, reply)));
    }
});
