//! Reading one request frame within a listener's limits: the connection may be silent between
//! frames for at most the idle timeout, a frame must arrive whole within the frame deadline once
//! its first byte has, its length must be within the largest request, and its bytes must fit the
//! budget that every connection of the listener shares. Memory grows with the bytes that
//! arrived, not with the length a frame announces.

use super::limits::ListenerLimits;
use crate::real_time::now;
use std::io::{self, BufReader, Read};
use std::net::TcpStream;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use threadsim::sync::Arc;

/// How much of a frame is asked of the socket at once, so a frame that announces many bytes
/// and sends few costs what it sent.
const READ_CHUNK_BYTES: usize = 64 << 10;

/// The bytes of request frames a listener holds at once, over all its connections.
#[derive(Debug)]
pub(super) struct FrameBudget {
    max_bytes: usize,
    used_bytes: AtomicUsize,
}

impl FrameBudget {
    pub(super) fn new(max_bytes: usize) -> FrameBudget {
        FrameBudget {
            max_bytes,
            used_bytes: AtomicUsize::new(0),
        }
    }

    /// Counts `bytes` against the budget until the reservation is dropped; `None` if they do
    /// not fit.
    fn reserve(self: &Arc<Self>, bytes: usize) -> Option<Reservation> {
        let reserved = self
            .used_bytes
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |used| {
                used.checked_add(bytes)
                    .filter(|&total| total <= self.max_bytes)
            });
        debug_assert!(
            self.used_bytes.load(Ordering::SeqCst) <= self.max_bytes,
            "a budget over its limit"
        );
        reserved.ok().map(|_| Reservation {
            budget: self.clone(),
            bytes,
        })
    }

    #[cfg(test)]
    pub(super) fn used_bytes(&self) -> usize {
        self.used_bytes.load(Ordering::SeqCst)
    }
}

/// Bytes counted against a [`FrameBudget`] while a request is read and handled.
#[derive(Debug)]
pub(super) struct Reservation {
    budget: Arc<FrameBudget>,
    bytes: usize,
}

impl Drop for Reservation {
    fn drop(&mut self) {
        let before = self
            .budget
            .used_bytes
            .fetch_sub(self.bytes, Ordering::SeqCst);
        assert!(
            before >= self.bytes,
            "a reservation of {} bytes returned to a budget holding {before}",
            self.bytes
        );
    }
}

/// Why a connection's frames ended.
#[derive(Debug, thiserror::Error)]
pub(super) enum FrameEnd {
    /// The other side closed the connection between frames.
    #[error("closed by the other side")]
    Closed,
    /// Nothing arrived for the idle timeout.
    #[error("idle for {0:?}")]
    Idle(Duration),
    /// The frame announced more than the largest request.
    #[error("a frame of {bytes} bytes is over the limit of {limit}")]
    TooLarge {
        /// The announced length.
        bytes: usize,
        /// The largest request.
        limit: usize,
    },
    /// The frame's bytes do not fit what the listener may hold at once.
    #[error("a frame of {0} bytes does not fit the bytes the server holds at once")]
    OverBudget(usize),
    /// The frame did not arrive whole within the frame deadline.
    #[error("a frame did not arrive whole within {0:?}")]
    TooSlow(Duration),
    /// The connection failed, or ended inside a frame.
    #[error("{0}")]
    Io(io::Error),
}

/// Reads the next request frame of `stream` (through `reader`) within `limits`, with its bytes
/// reserved from `budget`.
pub(super) fn read_request_frame(
    reader: &mut BufReader<&TcpStream>,
    stream: &TcpStream,
    budget: &Arc<FrameBudget>,
    limits: &ListenerLimits,
) -> Result<(Vec<u8>, Reservation), FrameEnd> {
    let mut length = [0u8; 4];
    // The first byte may be a long time coming (an idle connection); the rest of the frame
    // may not.
    stream
        .set_read_timeout(Some(limits.idle_timeout))
        .map_err(FrameEnd::Io)?;
    let first = match reader.read(&mut length[..1]) {
        Ok(0) => return Err(FrameEnd::Closed),
        Ok(_) => 1,
        Err(error) if timed_out(&error) => return Err(FrameEnd::Idle(limits.idle_timeout)),
        Err(error) => return Err(FrameEnd::Io(error)),
    };
    let deadline = now() + limits.frame_deadline;
    read_by(reader, stream, &mut length[first..], deadline, limits)?;
    let bytes = u32::from_le_bytes(length) as usize;
    if bytes > limits.max_request_bytes {
        return Err(FrameEnd::TooLarge {
            bytes,
            limit: limits.max_request_bytes,
        });
    }
    let reservation = budget.reserve(bytes).ok_or(FrameEnd::OverBudget(bytes))?;
    let mut payload = Vec::new();
    while payload.len() < bytes {
        let start = payload.len();
        payload.resize(bytes.min(start + READ_CHUNK_BYTES), 0);
        read_by(reader, stream, &mut payload[start..], deadline, limits)?;
    }
    assert_eq!(
        payload.len(),
        reservation.bytes,
        "the frame is what was reserved"
    );
    Ok((payload, reservation))
}

/// Fills `buffer` from `reader` before `deadline`.
fn read_by(
    reader: &mut BufReader<&TcpStream>,
    stream: &TcpStream,
    buffer: &mut [u8],
    deadline: Instant,
    limits: &ListenerLimits,
) -> Result<(), FrameEnd> {
    let mut filled = 0;
    while filled < buffer.len() {
        let left = deadline.saturating_duration_since(now());
        if left.is_zero() {
            return Err(FrameEnd::TooSlow(limits.frame_deadline));
        }
        stream.set_read_timeout(Some(left)).map_err(FrameEnd::Io)?;
        match reader.read(&mut buffer[filled..]) {
            Ok(0) => {
                return Err(FrameEnd::Io(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the connection ended inside a frame",
                )))
            }
            Ok(read) => filled += read,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) if timed_out(&error) => {
                return Err(FrameEnd::TooSlow(limits.frame_deadline))
            }
            Err(error) => return Err(FrameEnd::Io(error)),
        }
    }
    Ok(())
}

fn timed_out(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn a_budget_refuses_what_does_not_fit_and_gets_back_what_is_dropped() {
        let budget = Arc::new(FrameBudget::new(10));
        let six = budget.reserve(6).expect("fits");
        assert!(budget.reserve(5).is_none(), "6 + 5 is over 10");
        let four = budget.reserve(4).expect("6 + 4 fits");
        assert_eq!(budget.used_bytes(), 10);
        drop(six);
        assert_eq!(budget.used_bytes(), 4);
        assert!(budget.reserve(usize::MAX).is_none(), "no overflow");
        drop(four);
        assert_eq!(budget.used_bytes(), 0);
    }
}
