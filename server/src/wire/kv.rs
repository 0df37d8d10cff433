//! The client protocol on the wire: each frame is a call id (u64) and one [`ClientRequest`]
//! or [`ClientReply`], a tag byte first: a key-value operation and its reply, or a question
//! about the node's state (for operators and the nemesis). Keys and values are UTF-8.

use super::admin::{read_change, read_membership, write_change, write_membership, AdminRequest};
use super::{Reader, WireError, Writer};
use node::kv::{
    ClientId, KvOp, KvReply, KvRequest, KvResult, Part, Refusal, Seq, TxnStep, MAX_TXN_STEPS,
};
use node::{LogIndex, Membership, NodeId, Term};

/// What a client asks a server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClientRequest {
    /// A key-value operation.
    Kv(KvRequest),
    /// The node's term, role and indices.
    Status,
    /// Changes the node's clock (a nemesis's fault; refused unless the server allows it).
    SetClock(ClockChange),
    /// Makes every later write to the node's storage fail with EIO, as a dying disk would (a
    /// nemesis's fault; refused unless the server allows it). The node must stop.
    FailDisk,
    /// An administrator's request: the configuration, a change of it, a transfer.
    Admin(AdminRequest),
}

/// A change to a node's clock: its rate from now on, and a jump forward.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClockChange {
    /// Local seconds per true second, in millionths (1,000,000 runs true; clamped to
    /// 0.1x-10x).
    pub rate_ppm: u64,
    /// How far the clock jumps forward now.
    pub jump: std::time::Duration,
}

/// A server's answer to a [`ClientRequest`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClientReply {
    /// The answer to a key-value operation.
    Kv(KvReply),
    /// The node's state.
    Status(StatusReport),
    /// The server would not do what was asked, and says why.
    Refused(String),
    /// The configuration the node follows (the answer to an [`AdminRequest`]).
    Membership(Membership),
}

/// A node's state as its server reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StatusReport {
    /// Its current term.
    pub term: Term,
    /// Whether it believes it leads.
    pub leader: bool,
    /// Its commit index.
    pub commit_index: LogIndex,
    /// The last index handed to the service.
    pub last_applied: LogIndex,
    /// The last index of its log.
    pub last_log_index: LogIndex,
}

const KV: u8 = 1;
const STATUS: u8 = 2;
const SET_CLOCK: u8 = 3;
const FAIL_DISK: u8 = 4;
const REGISTER: u8 = 5;
const ADMIN_MEMBERSHIP: u8 = 6;
const ADMIN_CHANGE: u8 = 7;
const ADMIN_TRANSFER: u8 = 8;

/// The frame for call `id` carrying `request`.
pub fn encode_client_request(id: u64, request: &ClientRequest) -> Vec<u8> {
    match request {
        ClientRequest::Kv(KvRequest::Register) => Writer::new().u64(id).u8(REGISTER).finish(),
        ClientRequest::Kv(request) => encode_request(id, request),
        ClientRequest::Status => Writer::new().u64(id).u8(STATUS).finish(),
        ClientRequest::SetClock(change) => Writer::new()
            .u64(id)
            .u8(SET_CLOCK)
            .u64(change.rate_ppm)
            .u64(u64::try_from(change.jump.as_micros()).unwrap_or(u64::MAX))
            .finish(),
        ClientRequest::FailDisk => Writer::new().u64(id).u8(FAIL_DISK).finish(),
        ClientRequest::Admin(AdminRequest::Membership) => {
            Writer::new().u64(id).u8(ADMIN_MEMBERSHIP).finish()
        }
        ClientRequest::Admin(AdminRequest::Change(change)) => {
            let mut writer = Writer::new();
            writer.u64(id).u8(ADMIN_CHANGE);
            write_change(&mut writer, *change);
            writer.finish()
        }
        ClientRequest::Admin(AdminRequest::Transfer(target)) => Writer::new()
            .u64(id)
            .u8(ADMIN_TRANSFER)
            .u32(target.0)
            .finish(),
    }
}

/// The call id and request of a frame from [`encode_client_request`].
pub fn decode_client_request(frame: &[u8]) -> Result<(u64, ClientRequest), WireError> {
    let mut reader = Reader::new(frame);
    let id = reader.u64("call id")?;
    match reader.u8("request kind")? {
        KV => decode_request(frame).map(|(id, request)| (id, ClientRequest::Kv(request))),
        STATUS => reader.end().map(|()| (id, ClientRequest::Status)),
        REGISTER => reader
            .end()
            .map(|()| (id, ClientRequest::Kv(KvRequest::Register))),
        FAIL_DISK => reader.end().map(|()| (id, ClientRequest::FailDisk)),
        SET_CLOCK => {
            let change = ClockChange {
                rate_ppm: reader.u64("clock rate")?,
                jump: std::time::Duration::from_micros(reader.u64("clock jump")?),
            };
            reader.end().map(|()| (id, ClientRequest::SetClock(change)))
        }
        ADMIN_MEMBERSHIP => reader
            .end()
            .map(|()| (id, ClientRequest::Admin(AdminRequest::Membership))),
        ADMIN_CHANGE => {
            let change = read_change(&mut reader)?;
            reader
                .end()
                .map(|()| (id, ClientRequest::Admin(AdminRequest::Change(change))))
        }
        ADMIN_TRANSFER => {
            let target = NodeId(reader.u32("transfer target")?);
            reader
                .end()
                .map(|()| (id, ClientRequest::Admin(AdminRequest::Transfer(target))))
        }
        kind => Err(WireError::Bad {
            field: "request kind",
            value: kind.into(),
        }),
    }
}

/// The frame answering call `id` with `reply`.
pub fn encode_client_reply(id: u64, reply: &ClientReply) -> Vec<u8> {
    match reply {
        ClientReply::Kv(reply) => encode_reply(id, reply),
        ClientReply::Status(status) => Writer::new()
            .u64(id)
            .u8(STATUS_REPORT)
            .u64(status.term.0)
            .flag(status.leader)
            .u64(status.commit_index.0)
            .u64(status.last_applied.0)
            .u64(status.last_log_index.0)
            .finish(),
        ClientReply::Refused(why) => Writer::new()
            .u64(id)
            .u8(REFUSED)
            .bytes(why.as_bytes())
            .finish(),
        ClientReply::Membership(membership) => {
            let mut writer = Writer::new();
            writer.u64(id).u8(MEMBERSHIP);
            write_membership(&mut writer, membership);
            writer.finish()
        }
    }
}

/// The call id and reply of a frame from [`encode_client_reply`].
pub fn decode_client_reply(frame: &[u8]) -> Result<(u64, ClientReply), WireError> {
    let mut reader = Reader::new(frame);
    let id = reader.u64("call id")?;
    match reader.u8("reply")? {
        STATUS_REPORT => {}
        REFUSED => {
            let why = reader.string("reason")?;
            return reader.end().map(|()| (id, ClientReply::Refused(why)));
        }
        MEMBERSHIP => {
            let membership = read_membership(&mut reader)?;
            return reader
                .end()
                .map(|()| (id, ClientReply::Membership(membership)));
        }
        _ => return decode_reply(frame).map(|(id, reply)| (id, ClientReply::Kv(reply))),
    }
    let status = StatusReport {
        term: Term(reader.u64("term")?),
        leader: reader.flag("leader")?,
        commit_index: LogIndex(reader.u64("commit index")?),
        last_applied: LogIndex(reader.u64("last applied")?),
        last_log_index: LogIndex(reader.u64("last log index")?),
    };
    reader.end()?;
    Ok((id, ClientReply::Status(status)))
}

const GET: u8 = 1;
const PUT: u8 = 2;
const APPEND: u8 = 3;
const TXN: u8 = 4;

const VALUE: u8 = 1;
const DONE: u8 = 2;
const WRONG_LEADER: u8 = 3;
const RETRY: u8 = 4;
const TIMEOUT: u8 = 5;
const STATUS_REPORT: u8 = 6;
const REFUSED: u8 = 7;
const TOO_LARGE: u8 = 8;
const REGISTERED: u8 = 9;
const SESSION_EXPIRED: u8 = 10;
const READS: u8 = 11;
const MEMBERSHIP: u8 = 12;

/// The frame for call `id` carrying the operation `request` (a registration has a kind of its
/// own).
fn encode_request(id: u64, request: &KvRequest) -> Vec<u8> {
    let KvRequest::Op { client, seq, op } = request else {
        unreachable!("a registration is encoded by its kind")
    };
    let mut writer = Writer::new();
    writer.u64(id).u8(KV).u64(client.0).u64(seq.0);
    match op {
        KvOp::Get(key) => writer.u8(GET).bytes(key.as_bytes()),
        KvOp::Put(key, value) => writer.u8(PUT).bytes(key.as_bytes()).bytes(value.as_bytes()),
        KvOp::Append(key, value) => writer
            .u8(APPEND)
            .bytes(key.as_bytes())
            .bytes(value.as_bytes()),
        KvOp::Txn(steps) => {
            writer.u8(TXN).u32(steps.len() as u32);
            for step in steps {
                match step {
                    TxnStep::Read(key) => writer.u8(GET).bytes(key.as_bytes()),
                    TxnStep::Append(key, value) => writer
                        .u8(APPEND)
                        .bytes(key.as_bytes())
                        .bytes(value.as_bytes()),
                };
            }
            &mut writer
        }
    };
    writer.finish()
}

/// The call id and request of a frame from [`encode_request`].
fn decode_request(frame: &[u8]) -> Result<(u64, KvRequest), WireError> {
    let mut reader = Reader::new(frame);
    let id = reader.u64("call id")?;
    if reader.u8("request kind")? != KV {
        return Err(WireError::Bad {
            field: "request kind",
            value: frame.get(8).copied().unwrap_or_default().into(),
        });
    }
    let client = ClientId(reader.u64("client")?);
    let seq = Seq(reader.u64("sequence number")?);
    let op = match reader.u8("operation")? {
        GET => KvOp::Get(reader.string("key")?),
        PUT => KvOp::Put(reader.string("key")?, reader.string("value")?),
        APPEND => KvOp::Append(reader.string("key")?, reader.string("value")?),
        TXN => KvOp::Txn(decode_steps(&mut reader)?),
        kind => {
            return Err(WireError::Bad {
                field: "operation",
                value: kind.into(),
            })
        }
    };
    reader.end()?;
    Ok((id, KvRequest::Op { client, seq, op }))
}

/// A transaction's steps: a count of at most [`MAX_TXN_STEPS`], then each read's key or each
/// append's key and value.
fn decode_steps(reader: &mut Reader<'_>) -> Result<Vec<TxnStep>, WireError> {
    let count = reader.u32("transaction steps")?;
    if count as usize > MAX_TXN_STEPS {
        return Err(WireError::Bad {
            field: "transaction steps",
            value: count.into(),
        });
    }
    (0..count)
        .map(|_| match reader.u8("transaction step")? {
            GET => Ok(TxnStep::Read(reader.string("key")?)),
            APPEND => Ok(TxnStep::Append(
                reader.string("key")?,
                reader.string("value")?,
            )),
            kind => Err(WireError::Bad {
                field: "transaction step",
                value: kind.into(),
            }),
        })
        .collect()
}

/// The frame answering call `id` with `reply`.
fn encode_reply(id: u64, reply: &KvReply) -> Vec<u8> {
    let mut writer = Writer::new();
    writer.u64(id);
    match reply {
        KvReply::Ok(KvResult::Value(value)) => writer.u8(VALUE).bytes(value.as_bytes()),
        KvReply::Ok(KvResult::Done) => writer.u8(DONE),
        KvReply::Ok(KvResult::Reads(reads)) => {
            writer.u8(READS).u32(reads.len() as u32);
            for read in reads {
                writer.bytes(read.as_bytes());
            }
            &mut writer
        }
        KvReply::WrongLeader { leader_hint } => writer
            .u8(WRONG_LEADER)
            .flag(leader_hint.is_some())
            .u32(leader_hint.map_or(0, |node| node.0)),
        KvReply::Retry => writer.u8(RETRY),
        KvReply::Timeout => writer.u8(TIMEOUT),
        KvReply::Refused(refusal) => writer
            .u8(TOO_LARGE)
            .u8(refusal.part.code())
            .u64(refusal.bytes)
            .u64(refusal.limit),
        KvReply::Registered(client) => writer.u8(REGISTERED).u64(client.0),
        KvReply::SessionExpired => writer.u8(SESSION_EXPIRED),
    };
    writer.finish()
}

/// The call id and reply of a frame from [`encode_reply`].
fn decode_reply(frame: &[u8]) -> Result<(u64, KvReply), WireError> {
    let mut reader = Reader::new(frame);
    let id = reader.u64("call id")?;
    let reply = match reader.u8("reply")? {
        VALUE => KvReply::Ok(KvResult::Value(reader.string("value")?)),
        DONE => KvReply::Ok(KvResult::Done),
        READS => {
            let count = reader.u32("reads")?;
            if count as usize > MAX_TXN_STEPS {
                return Err(WireError::Bad {
                    field: "reads",
                    value: count.into(),
                });
            }
            let reads: Result<Vec<String>, WireError> =
                (0..count).map(|_| reader.string("read")).collect();
            KvReply::Ok(KvResult::Reads(reads?))
        }
        WRONG_LEADER => {
            let known = reader.flag("leader known")?;
            let leader = NodeId(reader.u32("leader")?);
            KvReply::WrongLeader {
                leader_hint: known.then_some(leader),
            }
        }
        RETRY => KvReply::Retry,
        TIMEOUT => KvReply::Timeout,
        TOO_LARGE => KvReply::Refused(Refusal {
            part: {
                let code = reader.u8("refused part")?;
                Part::from_code(code).ok_or(WireError::Bad {
                    field: "refused part",
                    value: code.into(),
                })?
            },
            bytes: reader.u64("refused length")?,
            limit: reader.u64("limit")?,
        }),
        REGISTERED => KvReply::Registered(ClientId(reader.u64("client")?)),
        SESSION_EXPIRED => KvReply::SessionExpired,
        kind => {
            return Err(WireError::Bad {
                field: "reply",
                value: kind.into(),
            })
        }
    };
    reader.end()?;
    Ok((id, reply))
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;
    use threadsim::DetRng;

    fn requests() -> Vec<KvRequest> {
        let request = |op| KvRequest::Op {
            client: ClientId(12),
            seq: Seq(345),
            op,
        };
        vec![
            request(KvOp::Get("k".into())),
            request(KvOp::Put("k".into(), "v é".into())),
            request(KvOp::Append("".into(), "x".into())),
            request(KvOp::Txn(vec![
                TxnStep::Read("a".into()),
                TxnStep::Append("b".into(), "1 ".into()),
            ])),
            request(KvOp::Txn(Vec::new())),
        ]
    }

    fn replies() -> Vec<KvReply> {
        vec![
            KvReply::Ok(KvResult::Value("abc".into())),
            KvReply::Ok(KvResult::Done),
            KvReply::Ok(KvResult::Reads(vec!["1 2 ".into(), String::new()])),
            KvReply::WrongLeader {
                leader_hint: Some(NodeId(3)),
            },
            KvReply::WrongLeader { leader_hint: None },
            KvReply::Retry,
            KvReply::Timeout,
            KvReply::Refused(Refusal {
                part: Part::Value,
                bytes: 300_000,
                limit: 262_144,
            }),
            KvReply::Refused(Refusal {
                part: Part::Key,
                bytes: 2_000,
                limit: 1_024,
            }),
            KvReply::Refused(Refusal {
                part: Part::Store,
                bytes: 70_000_000,
                limit: 67_108_864,
            }),
            KvReply::Registered(ClientId(u64::MAX)),
            KvReply::SessionExpired,
        ]
    }

    #[test]
    fn every_message_comes_back_as_sent() {
        for (number, request) in requests().into_iter().enumerate() {
            let client = ClientRequest::Kv(request.clone());
            let frame = encode_client_request(9, &client);
            realtools::fuzz_seed("wire_client", &format!("kv-request-{number}"), &frame);
            assert_eq!(decode_client_request(&frame), Ok((9, client)));
            assert_eq!(
                decode_request(&encode_request(9, &request)),
                Ok((9, request))
            );
        }
        for (number, reply) in replies().into_iter().enumerate() {
            let client = ClientReply::Kv(reply.clone());
            let frame = encode_client_reply(9, &client);
            realtools::fuzz_seed("wire_client", &format!("kv-reply-{number}"), &frame);
            assert_eq!(decode_client_reply(&frame), Ok((9, client)));
            assert_eq!(decode_reply(&encode_reply(9, &reply)), Ok((9, reply)));
        }
    }

    #[test]
    fn every_registration_and_nemesis_request_comes_back_as_sent_and_refuses_extra_bytes() {
        let change = ClockChange {
            rate_ppm: 1_100_000,
            jump: std::time::Duration::from_millis(1500),
        };
        for (number, request) in [
            ClientRequest::Kv(KvRequest::Register),
            ClientRequest::Status,
            ClientRequest::SetClock(change),
            ClientRequest::FailDisk,
            ClientRequest::Admin(AdminRequest::Membership),
            ClientRequest::Admin(AdminRequest::Transfer(NodeId(2))),
            ClientRequest::Admin(AdminRequest::Change(node::MembershipChange::AddLearner(
                NodeId(3),
            ))),
            ClientRequest::Admin(AdminRequest::Change(node::MembershipChange::Promote(
                NodeId(3),
            ))),
            ClientRequest::Admin(AdminRequest::Change(node::MembershipChange::Demote(
                NodeId(1),
            ))),
            ClientRequest::Admin(AdminRequest::Change(node::MembershipChange::Remove(
                NodeId(4),
            ))),
        ]
        .into_iter()
        .enumerate()
        {
            let frame = encode_client_request(4, &request);
            realtools::fuzz_seed("wire_client", &format!("request-{number}"), &frame);
            assert_eq!(decode_client_request(&frame), Ok((4, request)));
            let mut longer = frame;
            longer.push(0);
            assert_eq!(decode_client_request(&longer), Err(WireError::Trailing(1)));
        }
    }

    #[test]
    fn a_configuration_comes_back_as_sent_and_a_damaged_one_is_refused() {
        let membership = Membership::new([NodeId(0), NodeId(1)], [NodeId(3)])
            .expect("voters and learners apart");
        let reply = ClientReply::Membership(membership);
        let frame = encode_client_reply(5, &reply);
        realtools::fuzz_seed("wire_client", "membership-reply", &frame);
        assert_eq!(decode_client_reply(&frame), Ok((5, reply)));
        for len in 9..frame.len() {
            assert!(decode_client_reply(&frame[..len]).is_err(), "cut at {len}");
        }
        let mut unknown_change = encode_client_request(
            1,
            &ClientRequest::Admin(AdminRequest::Change(node::MembershipChange::Remove(
                NodeId(1),
            ))),
        );
        unknown_change[9] = 9;
        assert!(matches!(
            decode_client_request(&unknown_change),
            Err(WireError::Bad {
                field: "change kind",
                ..
            })
        ));
    }

    #[test]
    fn cuts_extra_bytes_bad_text_and_random_bytes_are_refused_without_panic() {
        for request in requests() {
            let frame = encode_request(1, &request);
            for len in 0..frame.len() {
                assert!(decode_request(&frame[..len]).is_err(), "cut at {len}");
            }
            let mut longer = frame.clone();
            longer.push(7);
            assert_eq!(decode_request(&longer), Err(WireError::Trailing(1)));
        }
        let mut bad_text = encode_request(1, &requests()[0]);
        let last = bad_text.len() - 1;
        bad_text[last] = 0xff;
        assert!(matches!(
            decode_request(&bad_text),
            Err(WireError::Bad { field: "key", .. })
        ));
        let mut rng = DetRng::new(7);
        for _ in 0..20_000 {
            let len = rng.range_inclusive(0, 40) as usize;
            let bytes: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
            let _ = decode_client_request(&bytes);
            let _ = decode_client_reply(&bytes);
        }
    }
}
