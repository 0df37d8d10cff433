//! The end of a nemesis run: once every fault is healed, the cluster must answer a read of
//! every key within [`RECOVERY_BOUND`].

use super::clients::{key_at, micros_since, KEY_LIFETIME};
use super::NemesisConfig;
use crate::system::Connection;
use models::{KvInput, KvOutput, Operation};
use server::real_time::now;
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

/// How long the cluster has, once every fault is healed, to answer a read of every key.
pub const RECOVERY_BOUND: Duration = Duration::from_secs(10);

/// The client id of the reads that check recovery.
const RECOVERY_CLIENT: u64 = 1_000;

/// Reads every key of the last keys in use with a fresh clerk, within [`RECOVERY_BOUND`]; how
/// long that took, and the reads as operations.
pub fn check_recovery(
    connection: &dyn Connection,
    config: &NemesisConfig,
    epoch: Instant,
) -> (Option<Duration>, Vec<Operation<KvInput, KvOutput>>) {
    let mut client = connection.client(None);
    let started = now();
    let deadline = started + RECOVERY_BOUND;
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
        let input = KvInput::Get(key.clone());
        match client.execute(&input, deadline) {
            Some(output) => reads.push(Operation::returned(
                RECOVERY_CLIENT,
                input,
                output,
                call,
                micros_since(epoch),
            )),
            None => {
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
