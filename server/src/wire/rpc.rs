//! Node-to-node RPCs on the wire: each frame is a call id (u64) and one [`Request`] or
//! [`Response`], a tag byte first.

use super::{Reader, WireError, Writer};
use node::messages::{
    AppendEntriesArgs, AppendEntriesReply, Conflict, InstallSnapshotArgs, InstallSnapshotReply,
    Request, RequestVoteArgs, RequestVoteReply, Response, TimeoutNowArgs, TimeoutNowReply,
};
use node::{Command, Entry, LogIndex, NodeId, Term};
use std::time::Duration;

const REQUEST_VOTE: u8 = 1;
const APPEND_ENTRIES: u8 = 2;
const INSTALL_SNAPSHOT: u8 = 3;
const TIMEOUT_NOW: u8 = 4;
/// An entry's smallest encoding: its term and an empty command's length.
const MIN_ENTRY_LEN: usize = 8 + 4;

/// The frame for call `id` carrying `request`.
pub fn encode_request(id: u64, request: &Request) -> Vec<u8> {
    let mut writer = Writer::new();
    writer.u64(id);
    match request {
        Request::RequestVote(args) => {
            writer
                .u8(REQUEST_VOTE)
                .u64(args.term.0)
                .u32(args.candidate.0)
                .u64(args.last_log_index.0)
                .u64(args.last_log_term.0)
                .flag(args.pre_vote)
                .flag(args.transfer);
        }
        Request::AppendEntries(args) => {
            writer
                .u8(APPEND_ENTRIES)
                .u64(args.term.0)
                .u32(args.leader.0)
                .u64(args.prev_log_index.0)
                .u64(args.prev_log_term.0)
                .u64(args.entries.len() as u64);
            for entry in &args.entries {
                writer.u64(entry.term.0).bytes(&entry.command.0);
            }
            writer
                .u64(args.leader_commit.0)
                .u64(args.read_round)
                .u64(micros(args.sent_at.since_epoch()));
        }
        Request::InstallSnapshot(args) => {
            writer
                .u8(INSTALL_SNAPSHOT)
                .u64(args.term.0)
                .u32(args.leader.0)
                .u64(args.last_included_index.0)
                .u64(args.last_included_term.0)
                .u64(args.offset)
                .u64(args.total_bytes)
                .u64(args.checksum)
                .bytes(&args.data)
                .u64(args.read_round)
                .u64(micros(args.sent_at.since_epoch()));
        }
        Request::TimeoutNow(args) => {
            writer
                .u8(TIMEOUT_NOW)
                .u64(args.term.0)
                .u32(args.leader.0)
                .u64(args.last_log_index.0)
                .u64(args.last_log_term.0);
        }
    }
    writer.finish()
}

/// The call id and request of a frame from [`encode_request`].
pub fn decode_request(frame: &[u8]) -> Result<(u64, Request), WireError> {
    let mut reader = Reader::new(frame);
    let id = reader.u64("call id")?;
    let request = match reader.u8("request kind")? {
        REQUEST_VOTE => Request::RequestVote(RequestVoteArgs {
            term: Term(reader.u64("term")?),
            candidate: NodeId(reader.u32("candidate")?),
            last_log_index: LogIndex(reader.u64("last log index")?),
            last_log_term: Term(reader.u64("last log term")?),
            pre_vote: reader.flag("pre-vote")?,
            transfer: reader.flag("transfer")?,
        }),
        APPEND_ENTRIES => {
            let term = Term(reader.u64("term")?);
            let leader = NodeId(reader.u32("leader")?);
            let prev_log_index = LogIndex(reader.u64("previous log index")?);
            let prev_log_term = Term(reader.u64("previous log term")?);
            let count = reader.count("entry count", MIN_ENTRY_LEN)?;
            let mut entries = Vec::with_capacity(count);
            for _ in 0..count {
                entries.push(Entry {
                    term: Term(reader.u64("entry term")?),
                    command: Command(reader.bytes("command")?.to_vec()),
                });
            }
            Request::AppendEntries(AppendEntriesArgs {
                term,
                leader,
                prev_log_index,
                prev_log_term,
                entries,
                leader_commit: LogIndex(reader.u64("leader commit")?),
                read_round: reader.u64("read round")?,
                sent_at: threadsim::Instant::from_epoch(Duration::from_micros(
                    reader.u64("sent at")?,
                )),
            })
        }
        INSTALL_SNAPSHOT => Request::InstallSnapshot(InstallSnapshotArgs {
            term: Term(reader.u64("term")?),
            leader: NodeId(reader.u32("leader")?),
            last_included_index: LogIndex(reader.u64("snapshot's last index")?),
            last_included_term: Term(reader.u64("snapshot's last term")?),
            offset: reader.u64("snapshot offset")?,
            total_bytes: reader.u64("snapshot length")?,
            checksum: reader.u64("snapshot checksum")?,
            data: reader.bytes("snapshot chunk")?.to_vec(),
            read_round: reader.u64("read round")?,
            sent_at: threadsim::Instant::from_epoch(Duration::from_micros(reader.u64("sent at")?)),
        }),
        TIMEOUT_NOW => Request::TimeoutNow(TimeoutNowArgs {
            term: Term(reader.u64("term")?),
            leader: NodeId(reader.u32("leader")?),
            last_log_index: LogIndex(reader.u64("last log index")?),
            last_log_term: Term(reader.u64("last log term")?),
        }),
        kind => {
            return Err(WireError::Bad {
                field: "request kind",
                value: kind.into(),
            })
        }
    };
    reader.end()?;
    node::well_formed::check_request(&request)?;
    Ok((id, request))
}

/// The frame answering call `id` with `response`.
pub fn encode_response(id: u64, response: &Response) -> Vec<u8> {
    let mut writer = Writer::new();
    writer.u64(id);
    match response {
        Response::RequestVote(reply) => {
            writer
                .u8(REQUEST_VOTE)
                .u64(reply.term.0)
                .flag(reply.vote_granted);
        }
        Response::AppendEntries(reply) => {
            writer
                .u8(APPEND_ENTRIES)
                .u64(reply.term.0)
                .flag(reply.success)
                .flag(reply.conflict.is_some());
            if let Some(conflict) = reply.conflict {
                writer
                    .flag(conflict.term.is_some())
                    .u64(conflict.term.map_or(0, |term| term.0))
                    .u64(conflict.first_index.0);
            }
            writer.u64(reply.read_round);
        }
        Response::InstallSnapshot(reply) => {
            writer
                .u8(INSTALL_SNAPSHOT)
                .u64(reply.term.0)
                .u64(reply.received)
                .u64(reply.read_round);
        }
        Response::TimeoutNow(reply) => {
            writer.u8(TIMEOUT_NOW).u64(reply.term.0);
        }
    }
    writer.finish()
}

/// The call id and response of a frame from [`encode_response`].
pub fn decode_response(frame: &[u8]) -> Result<(u64, Response), WireError> {
    let mut reader = Reader::new(frame);
    let id = reader.u64("call id")?;
    let response = match reader.u8("response kind")? {
        REQUEST_VOTE => Response::RequestVote(RequestVoteReply {
            term: Term(reader.u64("term")?),
            vote_granted: reader.flag("vote granted")?,
        }),
        APPEND_ENTRIES => {
            let term = Term(reader.u64("term")?);
            let success = reader.flag("success")?;
            let conflict = if reader.flag("conflict present")? {
                let has_term = reader.flag("conflict term present")?;
                let conflict_term = reader.u64("conflict term")?;
                Some(Conflict {
                    term: has_term.then_some(Term(conflict_term)),
                    first_index: LogIndex(reader.u64("conflict first index")?),
                })
            } else {
                None
            };
            Response::AppendEntries(AppendEntriesReply {
                term,
                success,
                conflict,
                read_round: reader.u64("read round")?,
            })
        }
        INSTALL_SNAPSHOT => Response::InstallSnapshot(InstallSnapshotReply {
            term: Term(reader.u64("term")?),
            received: reader.u64("snapshot bytes received")?,
            read_round: reader.u64("read round")?,
        }),
        TIMEOUT_NOW => Response::TimeoutNow(TimeoutNowReply {
            term: Term(reader.u64("term")?),
        }),
        kind => {
            return Err(WireError::Bad {
                field: "response kind",
                value: kind.into(),
            })
        }
    };
    reader.end()?;
    node::well_formed::check_response(&response)?;
    Ok((id, response))
}

fn micros(duration: Duration) -> u64 {
    u64::try_from(duration.as_micros()).expect("an instant within u64 microseconds")
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;
    use threadsim::DetRng;

    fn requests() -> Vec<Request> {
        vec![
            Request::RequestVote(RequestVoteArgs {
                term: Term(7),
                candidate: NodeId(2),
                last_log_index: LogIndex(40),
                last_log_term: Term(6),
                pre_vote: true,
                transfer: true,
            }),
            Request::AppendEntries(AppendEntriesArgs {
                term: Term(9),
                leader: NodeId(1),
                prev_log_index: LogIndex(3),
                prev_log_term: Term(8),
                entries: vec![
                    Entry {
                        term: Term(9),
                        command: Command::from_text("append k x"),
                    },
                    Entry {
                        term: Term(9),
                        command: Command(vec![]),
                    },
                ],
                leader_commit: LogIndex(2),
                read_round: 5,
                sent_at: threadsim::Instant::from_epoch(Duration::from_micros(123_456)),
            }),
            Request::InstallSnapshot(InstallSnapshotArgs {
                term: Term(9),
                leader: NodeId(1),
                last_included_index: LogIndex(300),
                last_included_term: Term(8),
                offset: 4096,
                total_bytes: 9000,
                checksum: 0xfeed,
                data: b"the service's state".to_vec(),
                read_round: 6,
                sent_at: threadsim::Instant::from_epoch(Duration::from_micros(7)),
            }),
            Request::TimeoutNow(TimeoutNowArgs {
                term: Term(12),
                leader: NodeId(3),
                last_log_index: LogIndex(77),
                last_log_term: Term(11),
            }),
        ]
    }

    fn responses() -> Vec<Response> {
        let reply = |conflict: Option<Conflict>| {
            Response::AppendEntries(AppendEntriesReply {
                term: Term(4),
                success: conflict.is_none(),
                conflict,
                read_round: 11,
            })
        };
        vec![
            Response::RequestVote(RequestVoteReply {
                term: Term(3),
                vote_granted: true,
            }),
            reply(None),
            reply(Some(Conflict {
                term: Some(Term(2)),
                first_index: LogIndex(17),
            })),
            reply(Some(Conflict {
                term: None,
                first_index: LogIndex(5),
            })),
            Response::InstallSnapshot(InstallSnapshotReply {
                term: Term(9),
                received: 4096,
                read_round: 6,
            }),
            Response::TimeoutNow(TimeoutNowReply { term: Term(13) }),
        ]
    }

    #[test]
    fn every_message_comes_back_as_sent() {
        for (id, request) in requests().into_iter().enumerate() {
            let frame = encode_request(id as u64, &request);
            realtools::fuzz_seed("wire_rpc", &format!("request-{id}"), &frame);
            assert_eq!(decode_request(&frame), Ok((id as u64, request)));
        }
        for (id, response) in responses().into_iter().enumerate() {
            let frame = encode_response(id as u64, &response);
            realtools::fuzz_seed("wire_rpc", &format!("response-{id}"), &frame);
            assert_eq!(decode_response(&frame), Ok((id as u64, response)));
        }
    }

    #[test]
    fn every_cut_and_every_extra_byte_is_refused() {
        let frames: Vec<Vec<u8>> = requests().iter().map(|r| encode_request(1, r)).collect();
        for frame in &frames {
            for len in 0..frame.len() {
                assert!(decode_request(&frame[..len]).is_err(), "cut at {len}");
            }
            let mut longer = frame.clone();
            longer.push(0);
            assert_eq!(decode_request(&longer), Err(WireError::Trailing(1)));
        }
        for response in responses() {
            let frame = encode_response(1, &response);
            for len in 0..frame.len() {
                assert!(decode_response(&frame[..len]).is_err(), "cut at {len}");
            }
        }
    }

    #[test]
    fn a_forged_term_past_the_ceiling_or_a_log_from_the_future_is_refused() {
        // The RequestVote (38 bytes of it) that once put a whole cluster at the last term for
        // good.
        let forged = Request::RequestVote(RequestVoteArgs {
            term: Term(u64::MAX),
            candidate: NodeId(1),
            last_log_index: LogIndex(0),
            last_log_term: Term(0),
            pre_vote: false,
            transfer: true,
        });
        let frame = encode_request(1, &forged);
        let refused = decode_request(&frame).unwrap_err();
        assert!(matches!(refused, WireError::Malformed(_)), "{refused}");
        assert!(refused.to_string().contains("above the highest term"));
        let Request::AppendEntries(mut append) = requests()[1].clone() else {
            unreachable!("the second request is an append")
        };
        append.entries[1].term = Term(10);
        let refused = decode_request(&encode_request(1, &Request::AppendEntries(append)));
        assert!(matches!(refused, Err(WireError::Malformed(_))));
        let reply = Response::TimeoutNow(TimeoutNowReply {
            term: Term(u64::MAX),
        });
        assert!(matches!(
            decode_response(&encode_response(1, &reply)),
            Err(WireError::Malformed(_))
        ));
    }

    #[test]
    fn random_bytes_and_forged_counts_never_panic() {
        let mut rng = DetRng::new(21);
        let mut forged = encode_request(1, &requests()[1]);
        // The entry count sits after id, kind, term, leader, previous index and term.
        forged[8 + 1 + 8 + 4 + 8 + 8..][..8].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(matches!(
            decode_request(&forged),
            Err(WireError::Bad {
                field: "entry count",
                ..
            })
        ));
        for _ in 0..20_000 {
            let len = rng.range_inclusive(0, 80) as usize;
            let bytes: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
            let _ = decode_request(&bytes);
            let _ = decode_response(&bytes);
        }
    }
}
