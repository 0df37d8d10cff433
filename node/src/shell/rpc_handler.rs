//! Requests from other nodes, handled on the caller's thread.

use super::state::Shell;
use crate::fault_points::{self, FaultPoint};
use crate::messages::{Request, Response};
use crate::mutation::Mutation;
use crate::observer::NodeEvent;
use crate::transport::RpcHandler;

impl RpcHandler for Shell {
    fn handle(&self, request: Request) -> Option<Response> {
        let mut locked = self.lock();
        if locked.stopped || locked.paused {
            return None;
        }
        let now = self.clock.now();
        // A vote refused within the lease and a pre-vote leave the term as it is, by design: the
        // exceptions to Figure 2's rule that the shell checks below.
        let keeps_term = match &request {
            Request::RequestVote(args) => {
                args.pre_vote || (locked.core.within_lease(now) && !args.transfer)
            }
            Request::AppendEntries(_) | Request::InstallSnapshot(_) | Request::TimeoutNow(_) => {
                false
            }
        };
        let effects = locked.core.handle_request(now, &request);
        // (The apply-with-lock-held node delivers everything through its applier.)
        locked.delivers_itself = !self.config.mutations.has(Mutation::ApplyWithLockHeld);
        let reply = self.execute(&mut locked, effects);
        locked.delivers_itself = false;
        if fault_points::fires(FaultPoint::SwitchInHandler, now) {
            threadsim::sync::thread::yield_now();
        }
        if locked.stopped {
            return None;
        }
        assert!(reply.is_some(), "{}: no reply to {request:?}", self.id);
        if let (Request::RequestVote(args), Some(Response::RequestVote(answer))) =
            (&request, &reply)
        {
            if answer.vote_granted && !args.pre_vote {
                let granted = NodeEvent::VoteGranted {
                    term: args.term,
                    candidate: args.candidate,
                };
                self.observer.on_event(self.id, &granted);
            }
        }
        if !keeps_term {
            self.check_term_adopted(&locked, request.term(), "request");
        }
        self.deliver_on_this_thread(locked);
        reply
    }
}
