//! The clock strobe: one node's clock flipped between slow and fast many times a second, within
//! the nodes' drift bound, for the whole hold (after Jepsen's `strobe-time`, which jumps a wall
//! clock back and forth; this project's servers keep a monotonic clock, so the strobe flips its
//! rate instead). Every timer the node has armed must be re-armed at each flip: a server that
//! loses a wake-up or counts a lease on the wrong rate shows it here. Healing sets the clock
//! back to 1x.

use super::millis;
use crate::nemesis::error::{Finding, NemesisError};
use crate::nemesis::fault::{fault_boilerplate, Fault, Injected, Injection};
use crate::nemesis::fault::{FaultKind, KindSpec};
use crate::nemesis::inject::{Nemesis, DRIFT_BOUND_PPM, TRUE_RATE_PPM};
use crate::nemesis::target::Target;
use node::NodeId;
use server::real_time::now;
use server::wire::kv::ClockChange;
use std::fmt;
use std::time::{Duration, Instant};

/// A node's clock flipped between slow and fast within the drift bound every 20-100 ms (the run
/// looks every 20 ms).
pub static CLOCK_STROBE: KindSpec = KindSpec {
    name: "clock-strobe",
    describe: "a node's clock flipped between slow and fast (within the drift bound) every \
               20-100 ms",
    needs_cooperation: true,
    draw: |rng, target, _| {
        let period = millis(rng, 20, 100);
        let slow_ppm = rng.range_inclusive(TRUE_RATE_PPM - DRIFT_BOUND_PPM, 950_000);
        let fast_ppm = rng.range_inclusive(1_050_000, TRUE_RATE_PPM + DRIFT_BOUND_PPM);
        let strobe = ClockStrobe {
            target,
            period,
            slow_ppm,
            fast_ppm,
        };
        (Box::new(strobe), millis(rng, 2000, 5000))
    },
    ..KindSpec::PLAIN
};

/// The target's clock flipped between `slow_ppm` and `fast_ppm` every `period`.
#[derive(Clone, Debug, PartialEq)]
pub struct ClockStrobe {
    /// The node.
    pub target: Target,
    /// How long each rate lasts.
    pub period: Duration,
    /// The slow rate, in millionths (within the drift bound).
    pub slow_ppm: u64,
    /// The fast rate, in millionths (within the drift bound).
    pub fast_ppm: u64,
}

/// A strobe under way: the node, its two rates, when it flips next, and the count of flips.
pub struct Strobing {
    node: NodeId,
    rates_ppm: [u64; 2],
    period: Duration,
    next_flip: Instant,
    flips: u64,
    unanswered: u64,
}

impl Fault for ClockStrobe {
    fn kind(&self) -> FaultKind {
        FaultKind::of(&CLOCK_STROBE)
    }

    fn inject(&self, nemesis: &mut Nemesis<'_>) -> Result<Injection, NemesisError> {
        let within = |rate: u64| rate.abs_diff(TRUE_RATE_PPM) <= DRIFT_BOUND_PPM;
        assert!(within(self.slow_ppm) && within(self.fast_ppm), "{self}");
        assert!(!self.period.is_zero(), "a strobe flips after a while");
        let (node, named) = nemesis.resolve(self.target);
        nemesis.set_clock(node, rate(self.slow_ppm))?;
        let strobing = Strobing {
            node,
            rates_ppm: [self.slow_ppm, self.fast_ppm],
            period: self.period,
            next_flip: now() + self.period,
            flips: 0,
            unanswered: 0,
        };
        let what = format!("clock-strobe: the clock of {named} {}", self.flipping());
        Ok(Injection::new(what, strobing))
    }

    fault_boilerplate!();
}

impl ClockStrobe {
    fn flipping(&self) -> String {
        format!(
            "flipped between {:.3}x and {:.3}x every {:?}",
            self.slow_ppm as f64 / 1e6,
            self.fast_ppm as f64 / 1e6,
            self.period
        )
    }
}

impl fmt::Display for ClockStrobe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "clock-strobe: the clock of {} {}",
            self.target,
            self.flipping()
        )
    }
}

/// A clock change to run at `rate_ppm`, with no jump.
fn rate(rate_ppm: u64) -> ClockChange {
    ClockChange {
        rate_ppm,
        jump: Duration::ZERO,
    }
}

impl Injected for Strobing {
    fn heal(self: Box<Self>, nemesis: &mut Nemesis<'_>, _: Instant) -> Result<String, Finding> {
        let node = self.node;
        let back = match nemesis.set_true_clock(node) {
            Ok(()) => "back to 1x".to_string(),
            // Restarted since (a fault through which it strobed), so running true already.
            Err(_) => "not answering at the end: restarted since, so running true".to_string(),
        };
        Ok(format!(
            "{node}'s clock flipped {} times ({} not answered); {back}",
            self.flips, self.unanswered
        ))
    }

    fn tick(&mut self, nemesis: &mut Nemesis<'_>) -> Result<(), Finding> {
        if now() < self.next_flip {
            return Ok(());
        }
        self.flips += 1;
        let rate_ppm = self.rates_ppm[(self.flips % 2) as usize];
        if nemesis.set_clock(self.node, rate(rate_ppm)).is_err() {
            // A node that does not answer is for the run's other checks (it exited, or is
            // paused by a fault it strobes through).
            self.unanswered += 1;
        }
        self.next_flip = now() + self.period;
        Ok(())
    }
}
