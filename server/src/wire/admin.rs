//! The administrator's requests on the client protocol: which configuration a node follows,
//! a change of it one server at a time, and a transfer of leadership. Their frames carry the
//! request kind tags of [`super::kv`]; a configuration travels as the node stores it in its log
//! ([`Membership::encode`]), checked the same way when it is read back.

use super::{Reader, WireError, Writer};
use node::{Command, Membership, MembershipChange, NodeId};

/// What an administrator asks a server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AdminRequest {
    /// The configuration the node follows, if it leads (a node taken out of the configuration
    /// hears of no later change).
    Membership,
    /// As leader, change the configuration by one server; answered once the change commits.
    Change(MembershipChange),
    /// As leader, hand the leadership to this voter; answered once the leader stepped down.
    Transfer(NodeId),
}

const ADD_LEARNER: u8 = 1;
const PROMOTE: u8 = 2;
const DEMOTE: u8 = 3;
const REMOVE: u8 = 4;

/// Writes a change: its kind, then its node.
pub(super) fn write_change(writer: &mut Writer, change: MembershipChange) {
    let (kind, node) = match change {
        MembershipChange::AddLearner(node) => (ADD_LEARNER, node),
        MembershipChange::Promote(node) => (PROMOTE, node),
        MembershipChange::Demote(node) => (DEMOTE, node),
        MembershipChange::Remove(node) => (REMOVE, node),
    };
    writer.u8(kind).u32(node.0);
}

/// Reads a change written by [`write_change`].
pub(super) fn read_change(reader: &mut Reader<'_>) -> Result<MembershipChange, WireError> {
    let kind = reader.u8("change kind")?;
    let node = NodeId(reader.u32("node")?);
    match kind {
        ADD_LEARNER => Ok(MembershipChange::AddLearner(node)),
        PROMOTE => Ok(MembershipChange::Promote(node)),
        DEMOTE => Ok(MembershipChange::Demote(node)),
        REMOVE => Ok(MembershipChange::Remove(node)),
        kind => Err(WireError::Bad {
            field: "change kind",
            value: kind.into(),
        }),
    }
}

/// Writes a configuration as the log stores it.
pub(super) fn write_membership(writer: &mut Writer, membership: &Membership) {
    writer.bytes(&membership.encode().0);
}

/// Reads a configuration written by [`write_membership`].
pub(super) fn read_membership(reader: &mut Reader<'_>) -> Result<Membership, WireError> {
    let bytes = reader.bytes("configuration")?;
    let bad = WireError::Bad {
        field: "configuration",
        value: bytes.len() as u64,
    };
    match Membership::decode(&Command(bytes.to_vec())) {
        Some(Ok(membership)) => Ok(membership),
        Some(Err(_)) | None => Err(bad),
    }
}
