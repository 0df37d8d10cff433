//! The waiting side of ReadIndex: a reader takes a ticket from the core, waits (on a signal of its
//! own) until the core decides its round, and gets the read index or the reason it failed. The
//! rules are the core's ([`crate::core::RaftCore::request_read`]).

use super::state::{ReadWaiter, Shell};
use crate::core::{ReadIndexError, ReadOutcome};
use crate::LogIndex;
use threadsim::clock::Signal;
use threadsim::sync::Arc;

/// Asks the core for a read index and waits for its round, at most one minimum election
/// timeout: a leader that cannot hear from a majority by then is no leader to read from.
pub(super) fn read_index(shell: &Shell) -> Result<LogIndex, ReadIndexError> {
    let signal = Arc::new(Signal::new(&shell.clock, &format!("{} read", shell.id)));
    let ticket = {
        let mut locked = shell.lock();
        if locked.stopped || locked.paused {
            return Err(ReadIndexError::NotLeader(crate::core::NotLeader {
                leader_hint: None,
            }));
        }
        let (ticket, effects) = locked.core.request_read()?;
        locked.reads.insert(
            ticket,
            ReadWaiter {
                signal: signal.clone(),
                outcome: None,
            },
        );
        shell.execute(&mut locked, effects);
        ticket
    };
    let deadline = shell.clock.now() + shell.config.election_timeout_min;
    loop {
        let mut locked = shell.lock();
        let decided = locked.reads.get(&ticket).and_then(|waiter| waiter.outcome);
        if decided.is_some() || locked.stopped || shell.clock.now() >= deadline {
            locked.reads.remove(&ticket);
            if decided.is_none() && !locked.stopped {
                locked.core.cancel_read(ticket);
            }
            return match decided {
                Some(ReadOutcome::Confirmed(index)) => Ok(index),
                Some(ReadOutcome::Failed(error)) => Err(error),
                None => Err(ReadIndexError::NotConfirmed),
            };
        }
        drop(locked);
        // Woken by the round's outcome, a stop or the deadline: the loop looks at which.
        let _ = signal.wait_until(Some(deadline));
    }
}
