//! A list-append history (`check --model list-append`, one transaction per line): refused with
//! its line and reason or read, never a panic; what reads writes back to text that reads the same.
#![no_main]

use libfuzzer_sys::fuzz_target;
use models::formats::txn_json::{parse_txns, write_txns};

fuzz_target!(|text: &str| {
    if let Ok(history) = parse_txns("fuzz", text) {
        interleave_fuzz::decoded("txn_history");
        assert_eq!(parse_txns("again", &write_txns(&history)), Ok(history));
    }
});
