//! Who a connection is: what a listener's [`Admission`] lets in, and the [`Standing`] a
//! connection has once it is in (a stranger, or a holder of the key who proved it with the
//! handshake of [`super::auth`] within [`HANDSHAKE_DEADLINE`] a frame).

use super::auth::{
    answer_handshake, is_hello, AuthError, ClusterKey, Opener, Sealer, MAX_HANDSHAKE_FRAME_BYTES,
};
use super::frame_reader::{read_request_frame, FrameBudget, FrameEnd, Reservation};
use super::limits::ListenerLimits;
use crate::wire::frame::write_frame;
use std::io::{self, BufReader, BufWriter, Write};
use std::net::TcpStream;
use std::time::Duration;
use threadsim::sync::Arc;

/// How long a connection that must prove it holds a key has for each of its handshake's
/// frames: a stranger cannot hold a member's place for the idle timeout.
pub const HANDSHAKE_DEADLINE: Duration = Duration::from_secs(5);

/// Who a listener serves, and as what.
#[derive(Clone, Debug)]
pub enum Admission {
    /// Anyone, as a [`Standing::Stranger`]: a client port without administrators, or the node
    /// port of a cluster on loopback addresses without a key.
    Anyone,
    /// Only a connection that proves it holds the key ([`super::auth`]): a node port.
    KeyHolders(ClusterKey),
    /// Anyone; a connection that begins with the handshake and proves it holds the key is a
    /// [`Standing::KeyHolder`] (the client port, the key the administrators'): a connection
    /// that begins with a handshake and fails it is refused.
    AnyoneAndKeyHolders(ClusterKey),
}

impl From<Option<ClusterKey>> for Admission {
    /// A key's holders only, or anyone without one.
    fn from(key: Option<ClusterKey>) -> Admission {
        key.map_or(Admission::Anyone, Admission::KeyHolders)
    }
}

/// What a connection proved before its requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Standing {
    /// Nothing.
    Stranger,
    /// That it holds the listener's key.
    KeyHolder,
}

/// What a connection sends, and the limits it is read within.
pub(super) struct Incoming<'a, 'r> {
    pub(super) reader: &'a mut BufReader<&'r TcpStream>,
    pub(super) stream: &'a TcpStream,
    pub(super) budget: &'a Arc<FrameBudget>,
    pub(super) limits: &'a ListenerLimits,
}

/// What a connection is served as, once admitted.
pub(super) struct Admitted {
    pub(super) standing: Standing,
    pub(super) sealer: Sealer,
    pub(super) opener: Opener,
    /// A stranger's first request, read to see whether it was a handshake.
    pub(super) first: Option<(Vec<u8>, Reservation)>,
}

/// Lets a connection in as `admission` says (answering a handshake through `writer`), or says
/// why not.
pub(super) fn admit(
    admission: &Admission,
    incoming: &mut Incoming<'_, '_>,
    writer: &mut BufWriter<TcpStream>,
) -> Result<Admitted, AuthError> {
    let stranger = |first| Admitted {
        standing: Standing::Stranger,
        sealer: Sealer::plain(),
        opener: Opener::plain(),
        first,
    };
    let holder = |(sealer, opener)| Admitted {
        standing: Standing::KeyHolder,
        sealer,
        opener,
        first: None,
    };
    match admission {
        Admission::Anyone => Ok(stranger(None)),
        Admission::KeyHolders(key) => {
            let hello = incoming.receive_handshake_frame()?;
            handshake(key, &hello, incoming, writer).map(holder)
        }
        Admission::AnyoneAndKeyHolders(key) => {
            let (first, reserved) = match read_request_frame(
                incoming.reader,
                incoming.stream,
                incoming.budget,
                incoming.limits,
            ) {
                Ok(read) => read,
                Err(FrameEnd::Closed) => {
                    return Err(io::Error::from(io::ErrorKind::UnexpectedEof).into())
                }
                Err(passed) => return Err(io::Error::other(passed.to_string()).into()),
            };
            if is_hello(&first) {
                drop(reserved);
                handshake(key, &first, incoming, writer).map(holder)
            } else {
                Ok(stranger(Some((first, reserved))))
            }
        }
    }
}

impl Incoming<'_, '_> {
    /// One frame of a handshake: at most [`MAX_HANDSHAKE_FRAME_BYTES`], within
    /// [`HANDSHAKE_DEADLINE`].
    fn receive_handshake_frame(&mut self) -> Result<Vec<u8>, io::Error> {
        let limits = ListenerLimits {
            max_request_bytes: MAX_HANDSHAKE_FRAME_BYTES,
            idle_timeout: HANDSHAKE_DEADLINE.min(self.limits.idle_timeout),
            frame_deadline: HANDSHAKE_DEADLINE.min(self.limits.frame_deadline),
            ..*self.limits
        };
        match read_request_frame(self.reader, self.stream, self.budget, &limits) {
            Ok((frame, _reserved)) => Ok(frame),
            Err(FrameEnd::Closed) => Err(io::ErrorKind::UnexpectedEof.into()),
            Err(passed) => Err(io::Error::new(
                io::ErrorKind::InvalidData,
                passed.to_string(),
            )),
        }
    }
}

/// The listener's side of the handshake ([`super::auth`]) that `hello` began.
fn handshake(
    key: &ClusterKey,
    hello: &[u8],
    incoming: &mut Incoming<'_, '_>,
    writer: &mut BufWriter<TcpStream>,
) -> Result<(Sealer, Opener), AuthError> {
    let mut send = |frame: &[u8]| write_frame(writer, frame).and_then(|()| writer.flush());
    answer_handshake(key, hello, &mut send, &mut || {
        incoming.receive_handshake_frame()
    })
}
