//! Jepsen's method on three `interleave-server` processes: clients record a history with real
//! times while the leader is cut off through its links and healed; the linearizability checker
//! decides the history per key. The partition cuts clients too: the writers are on the
//! majority's side (they cannot reach the old leader while it is cut off), the readers on no
//! side (they keep asking whoever answers). Reads by ReadIndex must come out linearizable;
//! unsafe-local reads (a cut-off leader answers from its own state until it notices it lost its
//! majority, 2.4 s) must be rejected.

use crate::processes::{pause, wait_for_leader, Processes};
use deploy::{LinkFault, TcpKvTransport};
use models::{
    check_partitions, partition_by_key, CheckOptions, History, KeyValue, KvInput, KvOutput,
    Operation, Verdict,
};
use node::kv::{Clerk, ClerkConfig, ClientId, KvOp, KvReply, KvRequest, KvResult, KvTransport};
use node::{NodeId, TransportError};
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use threadsim::{Clock, ClockRef, SystemClock};

/// A client's view of the network: the servers in `cut` are out of its reach.
struct ClientSide {
    transport: Arc<TcpKvTransport>,
    cut: Arc<Mutex<BTreeSet<NodeId>>>,
}

impl KvTransport for ClientSide {
    fn call(
        &self,
        server: NodeId,
        request: KvRequest,
        timeout: Duration,
    ) -> Result<KvReply, TransportError> {
        if self.cut.lock().unwrap().contains(&server) {
            SystemClock::new().sleep(timeout);
            return Err(TransportError::NoReply(server));
        }
        self.transport.call(server, request, timeout)
    }
}

/// Runs 2 writers (puts of unique values) and 3 readers (one get every 2 ms) on one key while the leader is cut off
/// for 2 s; returns the history and how many gets returned.
fn history_under_a_cut_leader(read_mode: &str, name: &str) -> (History<KvInput, KvOutput>, usize) {
    let processes = Processes::with_proxies(3, name, &["--read-mode", read_mode]);
    let clock: ClockRef = Arc::new(SystemClock::new());
    let transport = Arc::new(TcpKvTransport::new(&processes.clients));
    let servers: Vec<NodeId> = processes.clients.keys().copied().collect();
    let history = Arc::new(Mutex::new(History::new()));
    let cut_for_writers = Arc::new(Mutex::new(BTreeSet::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let micros = {
        let clock = clock.clone();
        move || clock.now().since_epoch().as_micros() as u64
    };
    let clients: Vec<_> = (0..5u64)
        .map(|client| {
            let writer = client < 2;
            let side: Arc<dyn KvTransport> = if writer {
                Arc::new(ClientSide {
                    transport: transport.clone(),
                    cut: cut_for_writers.clone(),
                })
            } else {
                transport.clone()
            };
            let mut clerk = Clerk::new(
                ClientId(client),
                servers.clone(),
                side,
                clock.clone(),
                ClerkConfig::default(),
            );
            let (clock, stop, history, micros) =
                (clock.clone(), stop.clone(), history.clone(), micros.clone());
            std::thread::spawn(move || {
                let mut i = 0;
                while !stop.load(Ordering::SeqCst) {
                    let (op, input) = if writer {
                        let value = format!("w{client}.{i}");
                        (
                            KvOp::Put("k".into(), value.clone()),
                            KvInput::Put("k".into(), value),
                        )
                    } else {
                        (KvOp::Get("k".into()), KvInput::Get("k".into()))
                    };
                    i += 1;
                    let call = micros();
                    let deadline = clock.now() + Duration::from_secs(1);
                    let operation = match clerk.execute(op, Some(deadline)) {
                        Ok(KvResult::Value(value)) => Operation::returned(
                            client,
                            input,
                            KvOutput::Value(value),
                            call,
                            micros(),
                        ),
                        Ok(KvResult::Done) => {
                            Operation::returned(client, input, KvOutput::Done, call, micros())
                        }
                        Err(_) => Operation::unknown(client, input, call),
                    };
                    history.lock().unwrap().push(operation);
                    if !writer {
                        // A reader asks every few milliseconds, not in a tight loop: a history
                        // of tens of thousands of local reads only slows the check.
                        clock.sleep(Duration::from_millis(2));
                    }
                }
            })
        })
        .collect();
    let leaders = || transport.leaders(Duration::from_millis(200));
    let old_leader = wait_for_leader(&leaders, None);
    pause(500);
    processes.isolate(old_leader, LinkFault::Cut);
    cut_for_writers.lock().unwrap().insert(old_leader);
    pause(2000);
    processes.isolate(old_leader, LinkFault::Healthy);
    cut_for_writers.lock().unwrap().clear();
    pause(1000);
    stop.store(true, Ordering::SeqCst);
    for client in clients {
        client.join().unwrap();
    }
    let mut history = std::mem::take(&mut *history.lock().unwrap());
    history.sort_by_key(|operation| operation.call);
    let gets = history
        .iter()
        .filter(|op| matches!(op.input, KvInput::Get(_)) && op.ret.is_some())
        .count();
    (history, gets)
}

fn verdict(history: &History<KvInput, KvOutput>) -> Verdict {
    let clock = SystemClock::new();
    let started = clock.now();
    let verdict = check_partitions(
        &KeyValue,
        partition_by_key(history),
        &CheckOptions::default(),
    )
    .verdict;
    eprintln!(
        "{} operations ({} unknown): {verdict:?} in {:?}",
        history.len(),
        history.iter().filter(|op| op.ret.is_none()).count(),
        clock.now().saturating_since(started)
    );
    verdict
}

#[test]
fn read_index_reads_on_real_processes_are_linearizable_through_a_cut_off_leader() {
    let (history, gets) = history_under_a_cut_leader("read-index", "lin-read-index");
    assert!(gets >= 100, "only {gets} gets returned");
    assert_eq!(verdict(&history), Verdict::Linearizable);
}

#[test]
fn unsafe_local_reads_on_real_processes_are_rejected() {
    let (history, gets) = history_under_a_cut_leader("unsafe-local", "lin-unsafe-local");
    assert!(gets >= 100, "only {gets} gets returned");
    assert_eq!(verdict(&history), Verdict::NotLinearizable);
}

#[test]
fn log_reads_on_real_processes_are_linearizable_through_a_cut_off_leader() {
    let (history, gets) = history_under_a_cut_leader("log", "lin-log");
    assert!(gets >= 100, "only {gets} gets returned");
    assert_eq!(verdict(&history), Verdict::Linearizable);
}

#[test]
fn lease_reads_on_real_processes_are_linearizable_through_a_cut_off_leader() {
    let (history, gets) = history_under_a_cut_leader("lease", "lin-lease");
    assert!(gets >= 100, "only {gets} gets returned");
    assert_eq!(verdict(&history), Verdict::Linearizable);
}
