//! Which messages a connection carries, and how they are framed.

use crate::wire::kv::{ClientReply, ClientRequest};
use crate::wire::{self, WireError};
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

/// The client protocol: get, put and append, and the node's status.
#[derive(Debug)]
pub struct ClientProtocol;

impl Protocol for ClientProtocol {
    type Request = ClientRequest;
    type Reply = ClientReply;
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
