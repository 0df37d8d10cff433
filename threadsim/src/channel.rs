//! A bounded single-producer, single-consumer channel whose waits go through the clock.
//!
//! (The Raft node hands committed entries to its service through one.) A thread blocked in
//! `send` (queue full) or `recv` (queue empty) is durably blocked as far as a fake clock is
//! concerned, so simulated time can advance while a service is idle.

use crate::clock::{ClockRef, Signal, Wake};
use crate::sync::{Arc, Mutex};
use crate::Instant;
use std::collections::VecDeque;

struct State<T> {
    queue: VecDeque<T>,
    capacity: usize,
    sender_alive: bool,
    receiver_alive: bool,
    closed: bool,
}

struct Shared<T> {
    state: Mutex<State<T>>,
    not_empty: Signal,
    not_full: Signal,
}

/// The sending half. Only one thread may send at a time (single producer); any thread may
/// [`close`](Sender::close).
pub struct Sender<T> {
    shared: Arc<Shared<T>>,
}

/// The receiving half. Only one thread may receive at a time (single consumer).
pub struct Receiver<T> {
    shared: Arc<Shared<T>>,
}

/// The channel is closed or the other side is gone; the value that could not be sent is returned.
#[derive(Debug, PartialEq, Eq)]
pub struct Closed<T>(pub T);

/// What [`Receiver::recv_until`] got.
#[derive(Debug, PartialEq, Eq)]
pub enum Received<T> {
    /// A value.
    Value(T),
    /// The channel is closed (or the sender dropped) and drained.
    Closed,
    /// The deadline passed with the channel empty.
    TimedOut,
}

/// A channel holding at most `capacity` values in flight.
pub fn channel<T>(clock: &ClockRef, capacity: usize, label: &str) -> (Sender<T>, Receiver<T>) {
    assert!(capacity > 0, "a channel needs room for at least one value");
    let shared = Arc::new(Shared {
        state: Mutex::new(State {
            queue: VecDeque::with_capacity(capacity),
            capacity,
            sender_alive: true,
            receiver_alive: true,
            closed: false,
        }),
        not_empty: Signal::new(clock, &format!("{label} recv")),
        not_full: Signal::new(clock, &format!("{label} send")),
    });
    (
        Sender {
            shared: shared.clone(),
        },
        Receiver { shared },
    )
}

impl<T> Sender<T> {
    /// Sends `value`, blocking while the channel is full. Fails once the channel is closed or the
    /// receiver is gone.
    pub fn send(&self, value: T) -> Result<(), Closed<T>> {
        loop {
            {
                let mut state = self.shared.state.lock();
                if state.closed || !state.receiver_alive {
                    return Err(Closed(value));
                }
                if state.queue.len() < state.capacity {
                    state.queue.push_back(value);
                    drop(state);
                    self.shared.not_empty.notify();
                    return Ok(());
                }
            }
            self.shared.not_full.wait();
        }
    }

    /// Sends `values` in order, as many at a time as there is room for, with one wake-up of the
    /// receiver per group rather than one per value: a receiver that drains what has arrived
    /// (like a service applying a batch) wakes once for a whole batch. Blocks while the channel
    /// is full. Fails once the channel is closed or the receiver is gone, returning the values
    /// not sent.
    pub fn send_all(&self, values: Vec<T>) -> Result<(), Closed<Vec<T>>> {
        let mut values = VecDeque::from(values);
        while !values.is_empty() {
            {
                let mut state = self.shared.state.lock();
                if state.closed || !state.receiver_alive {
                    return Err(Closed(values.into()));
                }
                let room = state.capacity - state.queue.len();
                if room > 0 {
                    let group = room.min(values.len());
                    state.queue.extend(values.drain(..group));
                    assert!(state.queue.len() <= state.capacity, "channel over capacity");
                    drop(state);
                    self.shared.not_empty.notify();
                    continue;
                }
            }
            self.shared.not_full.wait();
        }
        Ok(())
    }

    /// How many values fit now without blocking (0 once closed or the receiver is gone). With a
    /// single producer, the room can only grow until that producer sends again.
    pub fn room(&self) -> usize {
        let state = self.shared.state.lock();
        if state.closed || !state.receiver_alive {
            0
        } else {
            state.capacity - state.queue.len()
        }
    }

    /// Closes the channel: a blocked or later `send` fails; the receiver drains what is queued
    /// and then sees the end.
    pub fn close(&self) {
        self.shared.state.lock().closed = true;
        self.shared.not_empty.notify();
        self.shared.not_full.notify();
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        self.shared.state.lock().sender_alive = false;
        self.shared.not_empty.notify();
    }
}

impl<T> Receiver<T> {
    /// The next value, blocking while the channel is empty; `None` once it is closed and drained.
    pub fn recv(&self) -> Option<T> {
        match self.recv_until(None) {
            Received::Value(value) => Some(value),
            Received::Closed => None,
            Received::TimedOut => unreachable!("a wait without deadline timed out"),
        }
    }

    /// The next value, waiting until `deadline` at most.
    pub fn recv_until(&self, deadline: Option<Instant>) -> Received<T> {
        loop {
            {
                let mut state = self.shared.state.lock();
                if let Some(value) = state.queue.pop_front() {
                    drop(state);
                    self.shared.not_full.notify();
                    return Received::Value(value);
                }
                if state.closed || !state.sender_alive {
                    return Received::Closed;
                }
            }
            if self.shared.not_empty.wait_until(deadline) == Wake::TimedOut {
                return Received::TimedOut;
            }
        }
    }

    /// The next value if one is queued.
    pub fn try_recv(&self) -> Option<T> {
        let value = self.shared.state.lock().queue.pop_front();
        if value.is_some() {
            self.shared.not_full.notify();
        }
        value
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        self.shared.state.lock().receiver_alive = false;
        self.shared.not_full.notify();
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;
    use crate::clock::{spawn, SystemClock};

    #[test]
    fn values_arrive_in_order_and_close_ends_the_stream() {
        let clock: ClockRef = Arc::new(SystemClock::new());
        let (tx, rx) = channel(&clock, 2, "test");
        let producer = spawn(&clock, "producer", move || {
            for i in 0..100 {
                tx.send(i).expect("receiver alive");
            }
            tx.close();
            assert_eq!(tx.send(100), Err(Closed(100)));
        });
        let received: Vec<i32> = std::iter::from_fn(|| rx.recv()).collect();
        producer.join();
        assert_eq!(received, (0..100).collect::<Vec<_>>());
    }

    #[test]
    fn send_all_delivers_more_values_than_fit_in_order() {
        let clock: ClockRef = Arc::new(SystemClock::new());
        let (tx, rx) = channel(&clock, 3, "test");
        let producer = spawn(&clock, "producer", move || {
            tx.send_all((0..10).collect()).expect("receiver alive");
            tx.send_all(vec![]).expect("nothing to send");
            tx.send_all((10..20).collect()).expect("receiver alive");
            tx.close();
            assert_eq!(tx.send_all(vec![20, 21]), Err(Closed(vec![20, 21])));
        });
        let received: Vec<i32> = std::iter::from_fn(|| rx.recv()).collect();
        producer.join();
        assert_eq!(received, (0..20).collect::<Vec<_>>());
    }

    #[test]
    fn send_all_returns_what_was_not_sent_when_the_receiver_leaves() {
        let clock: ClockRef = Arc::new(SystemClock::new());
        let (tx, rx) = channel(&clock, 2, "test");
        let consumer = spawn(&clock, "consumer", move || {
            assert_eq!(rx.recv(), Some(0));
            drop(rx);
        });
        // Two fit at once; the consumer takes one and leaves, so the rest cannot be sent.
        let Err(Closed(unsent)) = tx.send_all((0..5).collect()) else {
            panic!("the receiver left");
        };
        consumer.join();
        assert!(!unsent.is_empty() && unsent.len() <= 3, "{unsent:?}");
        assert_eq!(unsent.last(), Some(&4));
    }

    #[test]
    fn send_fails_when_receiver_is_gone() {
        let clock: ClockRef = Arc::new(SystemClock::new());
        let (tx, rx) = channel::<u8>(&clock, 1, "test");
        drop(rx);
        assert_eq!(tx.send(1), Err(Closed(1)));
    }
}
