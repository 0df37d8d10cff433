//! A writer child process killed with SIGKILL at a point of its run, for the crash tests: the
//! child is this test binary running one ignored test, which saves ever newer states and prints
//! `saved N` once each save returned.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;
use threadsim::DetRng;

/// How a child is started and when it is killed.
pub struct KilledWriter<'a> {
    /// The ignored test that is the child (`module::name`).
    pub child_test: &'a str,
    /// Its environment.
    pub env: &'a [(&'a str, &'a str)],
    /// It is killed after between 1 and this many acknowledged saves...
    pub most_saves_first: u64,
    /// ...and then up to this many microseconds later, at a point of a later save.
    pub most_delay_micros: u64,
}

impl KilledWriter<'_> {
    /// Runs the child once, kills it, and returns the last number it acknowledged (the one
    /// before the run if it acknowledged none).
    pub fn run_once(&self, rng: &mut DetRng, mut last_acknowledged: u64) -> u64 {
        let mut child = Command::new(std::env::current_exe().expect("this test binary"))
            .args(["--exact", self.child_test, "--ignored", "--nocapture"])
            .envs(self.env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the writer starts");
        let mut lines = BufReader::new(child.stdout.take().expect("piped")).lines();
        let mut acknowledge = |line: &str| {
            if let Some(n) = line.strip_prefix("saved ") {
                last_acknowledged = n.parse().expect("a number");
            }
        };
        let saves_first = rng.range_inclusive(1, self.most_saves_first);
        let mut seen = 0;
        while seen < saves_first {
            let line = lines.next().expect("the writer's output").expect("text");
            if line.starts_with("saved ") {
                seen += 1;
            }
            acknowledge(&line);
        }
        #[allow(clippy::disallowed_methods)] // real processes run on real time
        std::thread::sleep(Duration::from_micros(
            rng.range_inclusive(0, self.most_delay_micros),
        ));
        child.kill().expect("SIGKILL");
        child.wait().expect("the writer is gone");
        for line in lines {
            acknowledge(&line.expect("text"));
        }
        last_acknowledged
    }
}
