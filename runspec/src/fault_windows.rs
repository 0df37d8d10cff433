//! How long the faults of a run stopped its commits, per kind of fault: from each fault's start
//! to the next time a leader with a majority committed (`None`: not before the run ended).

use std::collections::BTreeMap;
use std::time::Duration;

/// The unavailability windows of one run (or, summed, of a range of seeds), by kind of fault.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FaultWindows {
    by_kind: BTreeMap<String, Vec<Option<Duration>>>,
}

/// The windows of one kind of fault, summarised.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowStats {
    /// Faults of the kind.
    pub faults: usize,
    /// Of those, faults after which nothing committed before the run ended.
    pub never_closed: usize,
    /// The median window of those that closed (zero if none did).
    pub median: Duration,
    /// The 99th percentile (nearest rank) of those that closed.
    pub p99: Duration,
    /// The longest that closed.
    pub worst: Duration,
}

impl FaultWindows {
    /// Records one fault of `kind` and its window.
    pub fn record(&mut self, kind: &str, window: Option<Duration>) {
        self.by_kind
            .entry(kind.to_string())
            .or_default()
            .push(window);
    }

    /// Adds every window of `other` (another seed's).
    pub fn extend(&mut self, other: &FaultWindows) {
        for (kind, windows) in &other.by_kind {
            self.by_kind
                .entry(kind.clone())
                .or_default()
                .extend(windows);
        }
    }

    /// Whether no fault was recorded.
    pub fn is_empty(&self) -> bool {
        self.by_kind.is_empty()
    }

    /// The kinds recorded, in alphabetical order.
    pub fn kinds(&self) -> impl Iterator<Item = &str> + '_ {
        self.by_kind.keys().map(String::as_str)
    }

    /// Every window of `kind`, in the order recorded.
    pub fn of(&self, kind: &str) -> &[Option<Duration>] {
        self.by_kind.get(kind).map_or(&[], Vec::as_slice)
    }

    /// Each kind with its summary, in the kinds' alphabetical order.
    pub fn stats(&self) -> Vec<(&str, WindowStats)> {
        (self.by_kind.iter())
            .map(|(kind, windows)| (kind.as_str(), WindowStats::of(windows)))
            .collect()
    }
}

impl WindowStats {
    fn of(windows: &[Option<Duration>]) -> WindowStats {
        let mut closed: Vec<Duration> = windows.iter().flatten().copied().collect();
        closed.sort_unstable();
        let rank = |fraction: f64| -> Duration {
            if closed.is_empty() {
                return Duration::ZERO;
            }
            let rank = (fraction * closed.len() as f64).ceil() as usize;
            closed[rank.clamp(1, closed.len()) - 1]
        };
        WindowStats {
            faults: windows.len(),
            never_closed: windows.len() - closed.len(),
            median: rank(0.5),
            p99: rank(0.99),
            worst: closed.last().copied().unwrap_or_default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(ms: u64) -> Option<Duration> {
        Some(Duration::from_millis(ms))
    }

    #[test]
    fn windows_of_two_seeds_summarise_per_kind() {
        let mut one = FaultWindows::default();
        one.record("leader crashed", ms(300));
        one.record("leader crashed", ms(100));
        one.record("leader paused", None);
        let mut two = FaultWindows::default();
        two.record("leader crashed", ms(200));
        let mut total = FaultWindows::default();
        total.extend(&one);
        total.extend(&two);
        let stats = total.stats();
        assert_eq!(stats.len(), 2);
        let (kind, crashed) = stats[0];
        assert_eq!(kind, "leader crashed");
        assert_eq!(
            crashed,
            WindowStats {
                faults: 3,
                never_closed: 0,
                median: Duration::from_millis(200),
                p99: Duration::from_millis(300),
                worst: Duration::from_millis(300),
            }
        );
        let (_, paused) = stats[1];
        assert_eq!((paused.faults, paused.never_closed), (1, 1));
        assert_eq!(paused.worst, Duration::ZERO);
        assert_eq!(total.of("leader crashed").len(), 3);
        assert!(total.of("bridge").is_empty());
    }
}
