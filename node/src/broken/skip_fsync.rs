//! `skip-fsync`: the node writes its state and never syncs it. A process crash keeps the page
//! cache, so nothing is lost; a power loss takes back every write since the disk last synced
//! (here: all of them), and the node comes back having forgotten votes it cast and entries it
//! acknowledged (Raft Figure 2: persist before answering; Jepsen finds this with LazyFS).

use crate::persist::WriteTicket;

/// Where a correct node would sync `ticket` (its write's, or every write before a replicator
/// sends): nothing, and the node goes on as if the write were durable.
pub fn never_synced(_ticket: WriteTicket) {}
