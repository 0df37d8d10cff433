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

use crate::real_time::{now, sleep_until};
use crate::TcpKvTransport;
use models::{History, KvInput, KvOutput, Operation};
use node::kv::{Clerk, ClerkConfig, KvOp, KvReply, KvRequest, KvResult, KvTransport};
use node::{NodeId, TransportError};
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use threadsim::{ClockRef, DetRng, SystemClock};

/// How long the clients use one set of keys before they move to fresh ones.
pub const KEY_LIFETIME: Duration = Duration::from_secs(10);

/// How long a clerk keeps trying one operation before its outcome is unknown.
pub const OPERATION_DEADLINE: Duration = Duration::from_secs(1);

/// The pause between two operations of one client.
const THINK: (Duration, Duration) = (Duration::from_millis(2), Duration::from_millis(12));

/// How many clients of each part, on how many keys at a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Workload {
    /// Clients that put (three in four) and append unique values.
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

/// The nodes the writers cannot reach now: the minority side of a partition.
pub type WritersCutFrom = Arc<Mutex<BTreeSet<NodeId>>>;

/// A writer's view of the network: the nodes in `cut` are out of its reach (a call to one waits
/// its timeout and gets no reply).
struct WriterSide {
    transport: Arc<TcpKvTransport>,
    cut: WritersCutFrom,
}

impl KvTransport for WriterSide {
    fn call(
        &self,
        server: NodeId,
        request: KvRequest,
        timeout: Duration,
    ) -> Result<KvReply, TransportError> {
        if self.cut.lock().expect("not poisoned").contains(&server) {
            sleep_until(now() + timeout);
            return Err(TransportError::NoReply(server));
        }
        self.transport.call(server, request, timeout)
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
    /// Starts the clients on `servers`, each with a random source split from `seed`.
    pub fn start(
        workload: Workload,
        transport: &Arc<TcpKvTransport>,
        cut: &WritersCutFrom,
        seed: u64,
        epoch: Instant,
    ) -> std::io::Result<Clients> {
        let servers: Vec<NodeId> = transport.servers();
        let stop = Arc::new(AtomicBool::new(false));
        let mut threads = Vec::new();
        for client in 0..workload.writers + workload.readers {
            let writer = client < workload.writers;
            let side: Arc<dyn KvTransport> = if writer {
                Arc::new(WriterSide {
                    transport: transport.clone(),
                    cut: cut.clone(),
                })
            } else {
                transport.clone()
            };
            let clock: ClockRef = Arc::new(SystemClock::new());
            let clerk = Clerk::new(servers.clone(), side, clock.clone(), ClerkConfig::default());
            let client = Client {
                id: client.into(),
                writer,
                keys: workload.keys,
                clerk,
                clock,
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
    keys: u32,
    clerk: Clerk,
    /// The clerk's clock, on which its deadlines are set.
    clock: ClockRef,
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
            let (op, input) = if !self.writer {
                (KvOp::Get(key.clone()), KvInput::Get(key))
            } else if self.rng.chance(0.25) {
                let value = format!("{}.{next};", self.id);
                (
                    KvOp::Append(key.clone(), value.clone()),
                    KvInput::Append(key, value),
                )
            } else {
                let value = format!("{}.{next}", self.id);
                (
                    KvOp::Put(key.clone(), value.clone()),
                    KvInput::Put(key, value),
                )
            };
            next += 1;
            operations.push(self.execute(op, input));
            let think = self.rng.duration_ms(THINK.0, THINK.1);
            sleep_until(now() + think);
        }
        operations
    }

    fn execute(&mut self, op: KvOp, input: KvInput) -> Operation<KvInput, KvOutput> {
        let call = micros_since(self.epoch);
        let deadline = self.clock.now() + OPERATION_DEADLINE;
        match self.clerk.execute(op, Some(deadline)) {
            Ok(KvResult::Value(value)) => Operation::returned(
                self.id,
                input,
                KvOutput::Value(value),
                call,
                micros_since(self.epoch),
            ),
            Ok(KvResult::Done) => Operation::returned(
                self.id,
                input,
                KvOutput::Done,
                call,
                micros_since(self.epoch),
            ),
            Err(_) => Operation::unknown(self.id, input, call),
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
