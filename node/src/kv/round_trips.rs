//! [`RoundTrips`]: how long a clerk waits for a reply, adapted to the round trips it has seen
//! (Jacobson and Karels' estimator, as TCP's retransmission timeout: RFC 6298). A lost request
//! or reply then costs a few round trips, not the longest wait a call may ever need; each call
//! that goes unanswered doubles the wait, up to that longest, so a slow or overloaded server
//! is not asked faster than it answers.

use std::time::Duration;

/// Waits never double more than this many times in a row.
const MAX_BACKOFF: u32 = 8;

/// The round trips of one kind of call, as a smoothed estimate and its variation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RoundTrips {
    smoothed: Option<Duration>,
    variation: Duration,
    backoff: u32,
}

impl RoundTrips {
    /// A call was answered after `round_trip`.
    pub fn answered(&mut self, round_trip: Duration) {
        match self.smoothed {
            None => {
                self.smoothed = Some(round_trip);
                self.variation = round_trip / 2;
            }
            Some(smoothed) => {
                let deviation = smoothed.abs_diff(round_trip);
                self.variation = (self.variation * 3 + deviation) / 4;
                self.smoothed = Some((smoothed * 7 + round_trip) / 8);
            }
        }
        self.backoff = 0;
    }

    /// A call went unanswered within its wait.
    pub fn unanswered(&mut self) {
        self.backoff = (self.backoff + 1).min(MAX_BACKOFF);
    }

    /// How long the next call waits: the smoothed round trip plus four times its variation,
    /// doubled for each unanswered call since the last answer, within `shortest..=longest`
    /// (`longest` before any answer).
    pub fn wait(&self, shortest: Duration, longest: Duration) -> Duration {
        let shortest = shortest.min(longest);
        let Some(smoothed) = self.smoothed else {
            return longest;
        };
        let estimate = (smoothed + self.variation * 4).max(shortest);
        estimate
            .saturating_mul(1 << self.backoff)
            .clamp(shortest, longest)
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    const SHORTEST: Duration = Duration::from_millis(20);
    const LONGEST: Duration = Duration::from_millis(200);

    fn ms(millis: u64) -> Duration {
        Duration::from_millis(millis)
    }

    #[test]
    fn before_any_answer_a_call_waits_the_longest() {
        assert_eq!(RoundTrips::default().wait(SHORTEST, LONGEST), LONGEST);
    }

    #[test]
    fn steady_round_trips_bring_the_wait_down_to_a_few_of_them_and_never_below_the_shortest() {
        let mut trips = RoundTrips::default();
        trips.answered(ms(10));
        // 10 + 4 * 5.
        assert_eq!(trips.wait(SHORTEST, LONGEST), ms(30));
        for _ in 0..50 {
            trips.answered(ms(10));
        }
        assert_eq!(trips.wait(SHORTEST, LONGEST), SHORTEST);
        // A longer shortest than longest gives the longest.
        assert_eq!(trips.wait(ms(500), LONGEST), LONGEST);
    }

    #[test]
    fn varying_round_trips_widen_the_wait() {
        let mut steady = RoundTrips::default();
        let mut varying = RoundTrips::default();
        for n in 0..20 {
            steady.answered(ms(20));
            varying.answered(ms(if n % 2 == 0 { 5 } else { 35 }));
        }
        assert!(varying.wait(SHORTEST, LONGEST) > steady.wait(SHORTEST, LONGEST));
    }

    #[test]
    fn unanswered_calls_double_the_wait_up_to_the_longest_and_an_answer_resets_it() {
        let mut trips = RoundTrips::default();
        trips.answered(ms(10));
        trips.unanswered();
        assert_eq!(trips.wait(SHORTEST, LONGEST), ms(60));
        trips.unanswered();
        assert_eq!(trips.wait(SHORTEST, LONGEST), ms(120));
        for _ in 0..20 {
            trips.unanswered();
        }
        assert_eq!(trips.wait(SHORTEST, LONGEST), LONGEST);
        trips.answered(ms(10));
        assert!(trips.wait(SHORTEST, LONGEST) < ms(60));
    }
}
