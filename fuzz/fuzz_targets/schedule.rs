//! A schedule file (`replay --schedule`, `shrink`): refused with a message or read, never a
//! panic; what reads prints back to text that reads the same.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sim::schedule::Schedule;

fuzz_target!(|text: &str| {
    if let Ok(schedule) = text.parse::<Schedule>() {
        interleave_fuzz::decoded("schedule");
        let again: Schedule = schedule
            .to_string()
            .parse()
            .expect("a printed schedule reads");
        assert_eq!(again.to_string(), schedule.to_string());
    }
});
