//! A small deterministic random source (SplitMix64) that can be split into independent streams.
//!
//! Every run has one seed; each component (a node, a link, a fault injector) draws from its own stream derived
//! from that seed, so adding draws in one place does not shift the numbers seen elsewhere.

use std::time::Duration;

/// A seeded pseudo-random generator. Never seeded from the clock.
#[derive(Clone, Debug)]
pub struct DetRng {
    state: u64,
}

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl DetRng {
    /// A generator whose whole output is determined by `seed`.
    pub fn new(seed: u64) -> DetRng {
        DetRng {
            state: mix(seed ^ 0x5851_f42d_4c95_7f2d),
        }
    }

    /// An independent stream named by `stream`, derived from this generator's seed without
    /// consuming any of its output.
    pub fn split(&self, stream: u64) -> DetRng {
        DetRng::new(mix(
            self.state ^ mix(stream.wrapping_add(0x9e37_79b9_7f4a_7c15))
        ))
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix(self.state)
    }

    /// A uniform integer in `low..=high`.
    pub fn range_inclusive(&mut self, low: u64, high: u64) -> u64 {
        assert!(low <= high, "empty range {low}..={high}");
        let span = high - low;
        if span == u64::MAX {
            return self.next_u64();
        }
        low + self.next_u64() % (span + 1)
    }

    /// `true` with probability `p` (clamped to `[0, 1]`).
    pub fn chance(&mut self, p: f64) -> bool {
        if p <= 0.0 {
            return false;
        }
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }

    /// A uniform duration in `low..=high`, in whole milliseconds: a coarse grid keeps the number
    /// of distinct time steps (and so the cost of a simulation) small.
    pub fn duration_ms(&mut self, low: Duration, high: Duration) -> Duration {
        let low_ms = low.as_millis() as u64;
        let high_ms = (high.as_millis() as u64).max(low_ms);
        Duration::from_millis(self.range_inclusive(low_ms, high_ms))
    }

    /// A uniform index below `len`.
    pub fn index(&mut self, len: usize) -> usize {
        assert!(len > 0, "index into an empty range");
        (self.next_u64() % len as u64) as usize
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_stream_and_streams_differ() {
        let mut a = DetRng::new(7);
        let mut b = DetRng::new(7);
        assert_eq!(a.next_u64(), b.next_u64());
        let mut s1 = a.split(1);
        let mut s2 = a.split(2);
        assert_ne!(s1.next_u64(), s2.next_u64());
    }

    #[test]
    fn ranges_stay_in_bounds() {
        let mut rng = DetRng::new(1);
        for _ in 0..1000 {
            let x = rng.range_inclusive(3, 5);
            assert!((3..=5).contains(&x));
            let d = rng.duration_ms(Duration::from_millis(1), Duration::from_millis(10));
            assert!(d >= Duration::from_millis(1) && d <= Duration::from_millis(10));
        }
        assert!(!rng.chance(0.0));
        assert!(rng.chance(1.0));
    }
}
