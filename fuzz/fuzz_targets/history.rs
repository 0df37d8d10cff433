//! The history formats `check` reads (native JSON for registers and key-value stores, Jepsen's
//! EDN, the 6.5840 key-value log): refused with a message or read, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use models::formats::{jepsen, json, kvlog};

fuzz_target!(|text: &str| {
    let read = [
        json::parse_register("fuzz", text).is_ok(),
        json::parse_kv("fuzz", text).is_ok(),
        jepsen::parse("fuzz", text).is_ok(),
        kvlog::parse("fuzz", text).is_ok(),
    ];
    if read.contains(&true) {
        interleave_fuzz::decoded("history");
    }
});
