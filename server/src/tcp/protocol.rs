//! Which messages a connection carries, and how they are framed.

use super::ListenerLimits;
use crate::wire::frame::MAX_FRAME_BYTES;
use crate::wire::kv::{ClientReply, ClientRequest};
use crate::wire::{self, WireError};
use node::messages::{Request, Response};
use std::time::Duration;

/// A request-reply protocol: its messages and their frames (a call id, then the message).
pub trait Protocol: Send + Sync + 'static {
    /// What a caller sends.
    type Request: Send + 'static;
    /// What comes back.
    type Reply: Send + 'static;
    /// What a listener serving it allows its connections.
    const LIMITS: ListenerLimits;
    /// The frame of call `id`.
    fn encode_request(id: u64, request: &Self::Request) -> Vec<u8>;
    /// A call's id and request.
    fn decode_request(frame: &[u8]) -> Result<(u64, Self::Request), WireError>;
    /// The frame answering call `id`.
    fn encode_reply(id: u64, reply: &Self::Reply) -> Vec<u8>;
    /// A reply and the id of the call it answers.
    fn decode_reply(frame: &[u8]) -> Result<(u64, Self::Reply), WireError>;
}

/// Node-to-node RPCs (RequestVote, AppendEntries).
#[derive(Debug)]
pub struct RaftRpc;

impl Protocol for RaftRpc {
    type Request = Request;
    type Reply = Response;
    /// A handful of peers (and the proxies of a test cluster) keep one connection each; an
    /// AppendEntries batch is at most `Config::max_bytes_per_append` of commands plus one, and
    /// a snapshot goes whole, within the frame limit; a paused or slow peer gets half a minute
    /// per frame. Half the connections may come from one address (a test cluster's proxies
    /// all come from loopback; a stranger's connections end at its handshake's deadline).
    const LIMITS: ListenerLimits = ListenerLimits {
        max_connections: 64,
        max_connections_per_address: 32,
        max_request_bytes: MAX_FRAME_BYTES,
        max_buffered_bytes: 4 * MAX_FRAME_BYTES,
        frame_deadline: Duration::from_secs(30),
        idle_timeout: Duration::from_secs(120),
    };
    fn encode_request(id: u64, request: &Request) -> Vec<u8> {
        wire::rpc::encode_request(id, request)
    }
    fn decode_request(frame: &[u8]) -> Result<(u64, Request), WireError> {
        wire::rpc::decode_request(frame)
    }
    fn encode_reply(id: u64, reply: &Response) -> Vec<u8> {
        wire::rpc::encode_response(id, reply)
    }
    fn decode_reply(frame: &[u8]) -> Result<(u64, Response), WireError> {
        wire::rpc::decode_response(frame)
    }
}

/// The largest client request frame.
pub const MAX_CLIENT_REQUEST_BYTES: usize = 1 << 20;
const _: () = assert!(
    node::kv::MAX_KEY_BYTES + node::kv::MAX_VALUE_BYTES + 64 <= MAX_CLIENT_REQUEST_BYTES,
    "the largest put fits a client frame"
);

/// The client protocol: get, put and append, and the node's status.
#[derive(Debug)]
pub struct ClientProtocol;

impl Protocol for ClientProtocol {
    type Request = ClientRequest;
    type Reply = ClientReply;
    /// A request holds at most a key and a value within the store's limits (1 KiB and 256
    /// KiB): 1 MiB a frame leaves room; clients in one process share a connection per server,
    /// so a quarter of the connections is plenty for one address, and one client that holds
    /// all it may leaves three quarters to the others.
    const LIMITS: ListenerLimits = ListenerLimits {
        max_connections: 128,
        max_connections_per_address: 32,
        max_request_bytes: MAX_CLIENT_REQUEST_BYTES,
        max_buffered_bytes: 64 * MAX_CLIENT_REQUEST_BYTES,
        frame_deadline: Duration::from_secs(10),
        idle_timeout: Duration::from_secs(120),
    };
    fn encode_request(id: u64, request: &ClientRequest) -> Vec<u8> {
        wire::kv::encode_client_request(id, request)
    }
    fn decode_request(frame: &[u8]) -> Result<(u64, ClientRequest), WireError> {
        wire::kv::decode_client_request(frame)
    }
    fn encode_reply(id: u64, reply: &ClientReply) -> Vec<u8> {
        wire::kv::encode_client_reply(id, reply)
    }
    fn decode_reply(frame: &[u8]) -> Result<(u64, ClientReply), WireError> {
        wire::kv::decode_client_reply(frame)
    }
}
