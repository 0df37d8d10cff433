//! Node-to-node frames: any bytes are refused or decoded, never a panic, and what decodes
//! encodes back to the same message.
#![no_main]

use server::wire::rpc::{decode_request, decode_response, encode_request, encode_response};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|frame: &[u8]| {
    if let Ok((id, request)) = decode_request(frame) {
        interleave_fuzz::decoded("wire_rpc");
        let again = encode_request(id, &request);
        assert_eq!(decode_request(&again), Ok((id, request)));
    }
    if let Ok((id, response)) = decode_response(frame) {
        interleave_fuzz::decoded("wire_rpc");
        let again = encode_response(id, &response);
        assert_eq!(decode_response(&again), Ok((id, response)));
    }
});
