//! The clients of a nemesis run: clerks on threads that put, append and get on a few keys and
//! record every operation with its call and return time (real, monotonic, in microseconds from
//! the start of the run), or with no return when the clerk gave up: an outcome the checker must
//! treat as unknown.
//!
//! Writers and readers play different parts, as in the partition tests: writers are on the
//! majority's side of a partition (they cannot reach the nodes it cuts off) and so move to the
//! new leader; readers reach every node and keep asking the one they last found leading. A node
//! that serves reads it must not then answers them with what the writers have already replaced.
//! Keys change every [`KEY_LIFETIME`], so values and the checker's partitions stay small.

use crate::system::{Connection, KvClient, Unreachable};
use models::{History, KvInput, KvOutput, Operation};
use server::real_time::{now, sleep_until};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use threadsim::DetRng;

/// How long the clients use one set of keys before they move to fresh ones.
pub const KEY_LIFETIME: Duration = Duration::from_secs(10);

/// How long a clerk keeps trying one operation before its outcome is unknown.
pub const OPERATION_DEADLINE: Duration = Duration::from_secs(1);

/// The pause between two operations of one client.
const THINK: (Duration, Duration) = (Duration::from_millis(2), Duration::from_millis(12));

/// How many clients of each part, on how many keys at a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Workload {
    /// Clients that put (three in four, or all for a system without append) and append unique
    /// values.
    pub writers: u32,
    /// Clients that get.
    pub readers: u32,
    /// Keys in use at a time.
    pub keys: u32,
}

impl Default for Workload {
    fn default() -> Self {
        Workload {
            writers: 2,
            readers: 3,
            keys: 3,
        }
    }
}

/// The running clients; [`Clients::stop`] stops them and gives their history.
pub struct Clients {
    threads: Vec<JoinHandle<Vec<Operation<KvInput, KvOutput>>>>,
    stop: Arc<AtomicBool>,
}

/// Microseconds from `epoch` to now.
pub fn micros_since(epoch: Instant) -> u64 {
    u64::try_from(now().saturating_duration_since(epoch).as_micros()).unwrap_or(u64::MAX)
}

impl Clients {
    /// Starts the clients through `connection`, each with a random source split from `seed`;
    /// the writers append only if `appends`.
    pub fn start(
        workload: Workload,
        connection: &dyn Connection,
        appends: bool,
        cut: &Unreachable,
        seed: u64,
        epoch: Instant,
    ) -> std::io::Result<Clients> {
        let stop = Arc::new(AtomicBool::new(false));
        let mut threads = Vec::new();
        for client in 0..workload.writers + workload.readers {
            let writer = client < workload.writers;
            let client = Client {
                id: client.into(),
                writer,
                appends,
                keys: workload.keys,
                system: connection.client(writer.then(|| cut.clone())),
                rng: DetRng::new(seed).split(u64::from(client) + 1),
                epoch,
            };
            let stopping = stop.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("client-{}", client.id))
                .spawn(move || client.run(&stopping));
            match spawned {
                Ok(thread) => threads.push(thread),
                Err(error) => {
                    stop.store(true, Ordering::SeqCst);
                    for thread in threads {
                        let _ = thread.join();
                    }
                    return Err(error);
                }
            }
        }
        Ok(Clients { threads, stop })
    }

    /// Stops every client after its operation under way and returns every operation, ordered
    /// by call time.
    pub fn stop(self) -> History<KvInput, KvOutput> {
        self.stop.store(true, Ordering::SeqCst);
        let mut history: History<KvInput, KvOutput> = History::new();
        for thread in self.threads {
            match thread.join() {
                Ok(operations) => history.extend(operations),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        history.sort_by_key(|operation| operation.call);
        history
    }
}

/// The key in use at `elapsed` in slot `slot`.
pub fn key_at(elapsed: Duration, slot: u64) -> String {
    format!("k{}.{slot}", elapsed.as_secs() / KEY_LIFETIME.as_secs())
}

struct Client {
    id: u64,
    writer: bool,
    /// Whether a writer appends (one time in four) as well as puts.
    appends: bool,
    keys: u32,
    system: Box<dyn KvClient>,
    rng: DetRng,
    epoch: Instant,
}

impl Client {
    fn run(mut self, stop: &AtomicBool) -> Vec<Operation<KvInput, KvOutput>> {
        let mut operations = Vec::new();
        let mut next = 0u64;
        while !stop.load(Ordering::SeqCst) {
            let slot = self.rng.range_inclusive(0, u64::from(self.keys) - 1);
            let key = key_at(now().saturating_duration_since(self.epoch), slot);
            // The draw is made whether or not the system appends, so a seed's other draws
            // stay the same.
            let append = self.rng.chance(0.25) && self.appends;
            let input = if !self.writer {
                KvInput::Get(key)
            } else if append {
                KvInput::Append(key, format!("{}.{next};", self.id))
            } else {
                KvInput::Put(key, format!("{}.{next}", self.id))
            };
            next += 1;
            operations.push(self.execute(input));
            let think = self.rng.duration_ms(THINK.0, THINK.1);
            sleep_until(now() + think);
        }
        operations
    }

    fn execute(&mut self, input: KvInput) -> Operation<KvInput, KvOutput> {
        let call = micros_since(self.epoch);
        match self.system.execute(&input, now() + OPERATION_DEADLINE) {
            Some(output) => {
                Operation::returned(self.id, input, output, call, micros_since(self.epoch))
            }
            None => Operation::unknown(self.id, input, call),
        }
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn keys_change_every_lifetime() {
        assert_eq!(key_at(Duration::from_secs(9), 2), "k0.2");
        assert_eq!(key_at(Duration::from_secs(10), 2), "k1.2");
        assert_eq!(key_at(Duration::from_secs(25), 0), "k2.0");
    }
}
