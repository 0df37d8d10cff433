//! [`ListenerLimits`]: what a listener allows its connections, so that no client, however it
//! behaves, can take more than its share of the server: how many connections, how many from one
//! address, how large and how slow a frame, how long a silence, how many bytes in all.

use std::time::Duration;

/// What one listener allows its connections.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListenerLimits {
    /// Connections served at once; one more is closed as soon as it is accepted.
    pub max_connections: usize,
    /// Connections served at once from one IP address; one more from it is closed as soon as it
    /// is accepted, whatever the others hold.
    pub max_connections_per_address: usize,
    /// The largest request frame.
    pub max_request_bytes: usize,
    /// The bytes of request frames being read or handled, on every connection together; a
    /// frame that would pass it closes its connection.
    pub max_buffered_bytes: usize,
    /// How long a frame may take to arrive once its first byte has.
    pub frame_deadline: Duration,
    /// How long a connection may stay silent between frames before it is closed.
    pub idle_timeout: Duration,
}
