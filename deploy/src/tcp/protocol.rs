//! Which messages a connection carries, and how they are framed.

use crate::wire::{self, WireError};
use node::kv::{KvReply, KvRequest};
use node::messages::{Request, Response};

/// A request-reply protocol: its messages and their frames (a call id, then the message).
pub trait Protocol: Send + Sync + 'static {
    /// What a caller sends.
    type Request: Send + 'static;
    /// What comes back.
    type Reply: Send + 'static;
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

/// The key-value client protocol (get, put, append).
#[derive(Debug)]
pub struct KvProtocol;

impl Protocol for KvProtocol {
    type Request = KvRequest;
    type Reply = KvReply;
    fn encode_request(id: u64, request: &KvRequest) -> Vec<u8> {
        wire::kv::encode_request(id, request)
    }
    fn decode_request(frame: &[u8]) -> Result<(u64, KvRequest), WireError> {
        wire::kv::decode_request(frame)
    }
    fn encode_reply(id: u64, reply: &KvReply) -> Vec<u8> {
        wire::kv::encode_reply(id, reply)
    }
    fn decode_reply(frame: &[u8]) -> Result<(u64, KvReply), WireError> {
        wire::kv::decode_reply(frame)
    }
}
