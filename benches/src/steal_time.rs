//! [`steal_time`]: how long the host ran something else while this virtual machine wanted a CPU.
//!
//! Real-time benchmarks on a shared virtual machine swing with the host's load; printing the
//! steal time a run saw tells a reader whether its figures can be trusted.

use std::time::Duration;

/// Steal time of all CPUs since boot, from the first line of `/proc/stat` (Linux; `None`
/// elsewhere or if the line cannot be read). The counter is in USER_HZ ticks, which Linux fixes at
/// 100 per second for user space.
pub fn steal_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    parse_steal(stat.lines().next()?)
}

/// The steal field (the 8th number) of a `/proc/stat` `cpu` line.
fn parse_steal(line: &str) -> Option<Duration> {
    let mut fields = line.split_whitespace();
    if fields.next()? != "cpu" {
        return None;
    }
    let ticks: u64 = fields.nth(7)?.parse().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

/// Prints the steal time seen since `before` (if both readings exist), with a warning when it is
/// large enough to distort real-time figures.
pub fn report_steal_since(before: Option<Duration>, what: &str) {
    let (Some(before), Some(after)) = (before, steal_time()) else {
        return;
    };
    let stolen = after.saturating_sub(before);
    let warning = if stolen > Duration::from_secs(1) {
        ": the host was busy, so these real-time figures are not trustworthy"
    } else {
        ""
    };
    eprintln!(
        "steal time during {what}: {:.2} s{warning}",
        stolen.as_secs_f64()
    );
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn reads_the_eighth_number_of_the_cpu_line() {
        let line = "cpu  1814552 0 305937 1835873 7213 0 1655 68299 0 0";
        assert_eq!(parse_steal(line), Some(Duration::from_millis(682_990)));
        assert_eq!(parse_steal("cpu0 1 2 3 4 5 6 7 8 9 10"), None);
        assert_eq!(parse_steal("cpu 1 2 3"), None);
    }
}
