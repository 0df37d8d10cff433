//! The end of a nemesis run: once every fault is healed, the cluster must answer a read of
//! every key within [`RECOVERY_BOUND`].

use super::clients::{key_at, micros_since, KEY_LIFETIME};
use super::NemesisConfig;
use crate::real_time::now;
use crate::TcpKvTransport;
use models::{KvInput, KvOutput, Operation};
use node::kv::{Clerk, ClerkConfig};
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};
use threadsim::{ClockRef, SystemClock};

/// How long the cluster has, once every fault is healed, to answer a read of every key.
pub const RECOVERY_BOUND: Duration = Duration::from_secs(10);

/// The client id of the reads that check recovery.
const RECOVERY_CLIENT: u64 = 1_000;

/// Reads every key of the last keys in use with a fresh clerk, within [`RECOVERY_BOUND`]; how
/// long that took, and the reads as operations.
pub fn check_recovery(
    transport: &Arc<TcpKvTransport>,
    config: &NemesisConfig,
    epoch: Instant,
) -> (Option<Duration>, Vec<Operation<KvInput, KvOutput>>) {
    let clock: ClockRef = Arc::new(SystemClock::new());
    let mut clerk = Clerk::new(
        transport.servers(),
        transport.clone(),
        clock.clone(),
        ClerkConfig::default(),
    );
    let started = now();
    let deadline = threadsim::Clock::now(&*clock) + RECOVERY_BOUND;
    let elapsed = now().saturating_duration_since(epoch);
    // The keys in use now, and those of the last period if it only just ended.
    let mut keys: BTreeSet<String> = BTreeSet::new();
    for slot in 0..u64::from(config.workload.keys) {
        keys.insert(key_at(elapsed, slot));
        keys.insert(key_at(elapsed.saturating_sub(KEY_LIFETIME), slot));
    }
    let mut reads = Vec::new();
    let mut recovered = true;
    for key in keys {
        let call = micros_since(epoch);
        match clerk.get(&key, Some(deadline)) {
            Ok(value) => reads.push(Operation::returned(
                RECOVERY_CLIENT,
                KvInput::Get(key),
                KvOutput::Value(value),
                call,
                micros_since(epoch),
            )),
            Err(_) => {
                reads.push(Operation::unknown(RECOVERY_CLIENT, KvInput::Get(key), call));
                recovered = false;
            }
        }
    }
    (
        recovered.then(|| now().saturating_duration_since(started)),
        reads,
    )
}
