//! Fault points in the code under test (FoundationDB's BUGGIFY): places where the code may
//! misbehave in a way its environment allows (a slow disk write, a wait that wakes for nothing,
//! a lock held a little longer, a channel with no room), so that a simulation reaches the rare
//! paths that real machines take under load.
//!
//! A run arms its fault points from its seed ([`arm`]): each site is armed with probability
//! 1/4, decided by the seed and the site's name alone (so which sites a seed arms does not depend
//! on the order the run meets them), and an armed site fires one time in four it is passed, from
//! the run's own stream. Every firing goes into the run's trace, so a failure's trace says which
//! faults fired, and on the deterministic engine a seed fires the same faults at the same steps
//! every time: a failure replays exactly.
//!
//! Outside a simulation, or in a run that did not arm them (a production server, a unit test, a
//! loom model), [`fire`] is false after one thread-local lookup.

use crate::context;
use crate::context::{ArmedFaults, Counts};
use crate::{DetRng, Instant, Level, Trace};
use std::time::Duration;

/// The probability that a run arms a given site.
const ARMED: f64 = 0.25;
/// The probability that an armed site fires when passed.
const FIRES: f64 = 0.25;
/// The stream of the arming decisions (split by the site's name).
const ARMING_STREAM: u64 = 0xa53d_0001;
/// The stream of the firing decisions.
const FIRING_STREAM: u64 = 0xa53d_0002;

/// Arms the current run's fault points from `seed`, recording each firing in `trace`. Nothing
/// outside a run.
pub fn arm(seed: u64, trace: &Trace) {
    context::with(|run| {
        let seed = DetRng::new(seed);
        *context::lock(&run.faults) = Some(ArmedFaults {
            firing: seed.split(FIRING_STREAM),
            arming: seed.split(ARMING_STREAM),
            trace: trace.clone(),
            fired: Counts::new(),
        });
    });
}

/// Whether the fault at `site` fires now (`now` dates it in the trace).
pub fn fire(site: &'static str, now: Instant) -> bool {
    context::with(|run| {
        let mut faults = context::lock(&run.faults);
        let Some(armed) = faults.as_mut() else {
            return false;
        };
        if !armed.arming.split(name_hash(site)).chance(ARMED) || !armed.firing.chance(FIRES) {
            return false;
        }
        *armed.fired.entry(site).or_insert(0) += 1;
        armed
            .trace
            .record(now, Level::Info, format!("fault point fired: {site}"));
        true
    })
    .unwrap_or(false)
}

/// If the fault at `site` fires now, a delay of 1 ms to `max` (whole milliseconds) drawn from
/// the run's stream.
pub fn delay(site: &'static str, now: Instant, max: Duration) -> Option<Duration> {
    if !fire(site, now) {
        return None;
    }
    let max_ms = (max.as_millis() as u64).max(1);
    let drawn = context::with(|run| {
        let mut faults = context::lock(&run.faults);
        let armed = faults.as_mut().expect("armed: it just fired");
        armed.firing.range_inclusive(1, max_ms)
    });
    drawn.map(Duration::from_millis)
}

/// How often each site fired in the current run so far.
pub(crate) fn fired() -> Counts {
    context::with(|run| {
        context::lock(&run.faults)
            .as_ref()
            .map(|armed| armed.fired.clone())
    })
    .flatten()
    .unwrap_or_default()
}

/// FNV-1a of a site's name: the site's own arming stream.
fn name_hash(site: &str) -> u64 {
    site.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;
    use crate::context::{enter, RunContext};
    use std::sync::Arc;

    /// How often each of `sites` fires over `passes` passes in a run armed from `seed`, and the
    /// run's trace.
    fn passes(seed: u64, sites: &[&'static str], passes: usize) -> (Counts, Vec<String>) {
        let trace = Trace::with_limit(100_000);
        let _entered = enter(Some(Arc::new(RunContext::default())));
        arm(seed, &trace);
        for _ in 0..passes {
            for &site in sites {
                fire(site, Instant::ZERO);
            }
        }
        let texts = trace.take().events.into_iter().map(|e| e.text).collect();
        (fired(), texts)
    }

    const SITES: [&str; 8] = ["a", "b", "c", "d", "e", "f", "g", "h"];

    #[test]
    fn nothing_fires_outside_an_armed_run() {
        assert!(!fire("a", Instant::ZERO));
        let _entered = enter(Some(Arc::new(RunContext::default())));
        assert!((0..100).all(|_| !fire("a", Instant::ZERO)), "not armed");
    }

    #[test]
    fn a_seed_arms_about_a_quarter_of_the_sites_and_fires_them_a_quarter_of_the_time() {
        let mut armed = 0;
        for seed in 0..40 {
            let (fired, _) = passes(seed, &SITES, 400);
            armed += fired.len();
            for (site, times) in fired {
                assert!((60..=140).contains(&times), "{site} fired {times} of 400");
            }
        }
        assert!((50..=110).contains(&armed), "{armed} of 320 sites armed");
    }

    #[test]
    fn a_seed_fires_the_same_faults_every_time_and_says_so_in_the_trace() {
        let first = passes(7, &SITES, 50);
        assert_eq!(first, passes(7, &SITES, 50));
        let fired: u64 = first.0.values().sum();
        assert_eq!(first.1.len() as u64, fired);
        assert!(first
            .1
            .iter()
            .all(|text| text.starts_with("fault point fired: ")));
    }

    #[test]
    fn which_sites_a_seed_arms_does_not_depend_on_the_order_they_are_met() {
        let (forward, _) = passes(11, &SITES, 200);
        let mut reversed_sites = SITES;
        reversed_sites.reverse();
        let (reversed, _) = passes(11, &reversed_sites, 200);
        let armed = |fired: &Counts| fired.keys().copied().collect::<Vec<_>>();
        assert_eq!(armed(&forward), armed(&reversed));
    }
}
