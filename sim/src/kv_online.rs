//! The key-value workload's history, checked while the run goes ([`models::OnlineChecker`]):
//! every call and every end goes to the [`Recorder`], which keeps the history and hands each
//! event to the online checker. At the first violation the workload stops where it is: no
//! client calls another operation, the faults end at their next step ([`UntilViolation`]), and
//! the violation goes into the trace and the run's result, where the whole history's check
//! confirms it and draws its counterexample. A key that is never quiet has its open window
//! checked as it stands every [`CHECK_OPEN_WINDOWS_EVERY`].

use crate::cluster::Cluster;
use crate::events::Events;
use crate::timeline::{Snapshot, Timeline};
use models::{
    History, KeyValue, KvInput, KvOutput, Model, OnlineChecker, OnlineFigures, OnlineViolation,
    OpId, Operation,
};
use std::time::Duration;
use threadsim::sync::{Arc, Mutex};
use threadsim::Instant;

/// How often a key that is never quiet has its open window checked as it stands.
pub const CHECK_OPEN_WINDOWS_EVERY: Duration = Duration::from_millis(50);

fn nanos_of(duration: Duration) -> u64 {
    u64::try_from(duration.as_nanos()).expect("a period fits in u64 ns")
}

/// A violation the online checker found, in words, with its times.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FoundOnline {
    /// The window no order explains, one operation a line.
    pub description: String,
    /// The key.
    pub key: String,
    /// When the window closed and the run stopped.
    pub found_at: Duration,
    /// The first moment no order explained the window: the end of the operation that made it
    /// impossible.
    pub impossible_from: Duration,
}

impl FoundOnline {
    /// How long after it became impossible the checker found it.
    pub fn delay(&self) -> Duration {
        self.found_at.saturating_sub(self.impossible_from)
    }
}

struct Recording {
    history: History<KvInput, KvOutput>,
    online: OnlineChecker<KeyValue>,
    found: Option<FoundOnline>,
}

/// The workload's history as it happens, checked online; shared by the clients.
#[derive(Clone)]
pub struct Recorder {
    recording: Arc<Mutex<Recording>>,
    events: Events,
}

/// An operation in flight, as [`Recorder::call`] hands it out.
pub struct Called {
    id: OpId,
    client: u64,
    input: KvInput,
    call: Instant,
}

impl Recorder {
    /// An empty history whose violation goes into `events`' trace.
    pub fn new(events: Events) -> Recorder {
        Recorder {
            recording: Arc::new(Mutex::new(Recording {
                history: Vec::new(),
                online: OnlineChecker::new(KeyValue)
                    .check_open_windows_every(nanos_of(CHECK_OPEN_WINDOWS_EVERY)),
                found: None,
            })),
            events,
        }
    }

    /// `client` calls `input` now; `None` once a violation was found (the client stops).
    pub fn call(&self, client: u64, input: KvInput) -> Option<Called> {
        let call = self.events.clock().now();
        let mut recording = self.recording.lock();
        if recording.found.is_some() {
            return None;
        }
        let key = input.key().to_string();
        match (recording.online).call(&key, client, input.clone(), nanos(call)) {
            Ok(id) => Some(Called {
                id,
                client,
                input,
                call,
            }),
            Err(violation) => {
                self.found(&mut recording, violation);
                None
            }
        }
    }

    /// `called` returned `output` now, or (`None`) its client gave up on it.
    pub fn ended(&self, called: Called, output: Option<KvOutput>) {
        let now = self.events.clock().now();
        let mut recording = self.recording.lock();
        let Called {
            id,
            client,
            input,
            call,
        } = called;
        let checked = match &output {
            Some(output) => recording.online.returned(id, output.clone(), nanos(now)),
            None => recording.online.gave_up(id, nanos(now)),
        };
        let operation = match output {
            Some(output) => Operation::returned(client, input, output, nanos(call), nanos(now)),
            None => Operation::unknown(client, input, nanos(call)),
        };
        recording.history.push(operation);
        if let Err(violation) = checked {
            if recording.found.is_none() {
                self.found(&mut recording, violation);
            }
        }
    }

    /// Whether a violation was found.
    pub fn stopped(&self) -> bool {
        self.recording.lock().found.is_some()
    }

    /// The end of the run: the windows still open are checked. Returns the history (in call
    /// order), what the online checker did, and the violation it found if any.
    pub fn finish(
        &self,
    ) -> (
        History<KvInput, KvOutput>,
        OnlineFigures,
        Option<FoundOnline>,
    ) {
        let now = self.events.clock().now();
        let mut recording = self.recording.lock();
        if recording.found.is_none() {
            if let Err(violation) = recording.online.finish(nanos(now)) {
                self.found(&mut recording, violation);
            }
        }
        let figures = recording.online.figures();
        self.events.info(format!(
            "online check: {} operations, {} windows closed, {} open windows checked as they \
             stood, largest window {}, {} keys left to the whole history's check ({} operations \
             after that)",
            figures.operations,
            figures.windows,
            figures.open_windows_checked,
            figures.largest_window,
            figures.keys_deferred,
            figures.operations_deferred
        ));
        let mut history = std::mem::take(&mut recording.history);
        history.sort_by_key(|operation| operation.call);
        (history, figures, recording.found.clone())
    }

    fn found(&self, recording: &mut Recording, violation: OnlineViolation<KvInput, KvOutput>) {
        let description = violation.describe(
            |input, output| KeyValue.describe(input, output),
            |nanos| format!("{:?}", Duration::from_nanos(nanos)),
        );
        let found = FoundOnline {
            description: description.clone(),
            key: violation.key.clone(),
            found_at: Duration::from_nanos(violation.found_at),
            impossible_from: Duration::from_nanos(violation.impossible_from),
        };
        self.events.info(format!(
            "linearizability violated (found online, {:?} after it became impossible; the \
             workload stops): {description}",
            found.delay()
        ));
        recording.found = Some(found);
    }
}

/// Simulated time as the history's nanoseconds.
pub fn nanos(instant: Instant) -> u64 {
    u64::try_from(instant.since_epoch().as_nanos()).expect("simulated time fits in u64 ns")
}

/// A timeline that ends at its next step once the recorder found a violation.
pub struct UntilViolation<'a> {
    /// The faults.
    pub inner: &'a mut dyn Timeline,
    /// The history being checked.
    pub recorder: Recorder,
}

impl Timeline for UntilViolation<'_> {
    fn wait(&mut self, cluster: &Cluster, elapsed: Duration) -> Option<Duration> {
        if self.recorder.stopped() {
            return None;
        }
        self.inner.wait(cluster, elapsed)
    }

    fn decide(
        &mut self,
        cluster: &Cluster,
        snapshot: &Snapshot,
        elapsed: Duration,
    ) -> Vec<crate::schedule::Event> {
        self.inner.decide(cluster, snapshot, elapsed)
    }
}
