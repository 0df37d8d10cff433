//! `interleave admin`: an administrator's request to a running cluster (the configuration, a
//! change of it, a transfer of leadership), sent through `server::administer` to whichever of
//! the servers leads, each connection proving it holds the administrators' key, and the
//! configuration after it printed.

use crate::cli::{AdminAction, AdminArgs};
use node::{MembershipChange, NodeId};
use server::wire::admin::AdminRequest;
use server::{administer, TcpKvTransport};
use std::collections::BTreeMap;
use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

/// Runs `interleave admin`.
pub fn admin(args: &AdminArgs) -> ExitCode {
    // The servers are named by their place in --servers: an answer names the one that gave it.
    let servers: BTreeMap<NodeId, std::net::SocketAddr> = (0u32..)
        .map(NodeId)
        .zip(args.servers.iter().copied())
        .collect();
    let key = match server::tcp::ClusterKey::read(&args.admin_key) {
        Ok(key) => key,
        Err(error) => {
            eprintln!("interleave admin: --admin-key: {error}");
            return ExitCode::FAILURE;
        }
    };
    let transport = TcpKvTransport::administering(&servers, key);
    let request = request(args.action);
    let outcome = administer(&transport, request, Duration::from_secs(args.timeout));
    transport.close();
    match outcome {
        Ok((server, membership)) => {
            let address = servers[&server];
            let line = match args.action {
                AdminAction::Membership => format!("{membership} (as {address} has it)"),
                AdminAction::Transfer { node } => {
                    format!("{address} handed its leadership to n{node}; {membership}")
                }
                _ => format!("{address} committed {}; {membership}", describe(request)),
            };
            match writeln!(std::io::stdout(), "{line}") {
                Ok(()) => ExitCode::SUCCESS,
                Err(error) => {
                    eprintln!("interleave admin: cannot write to stdout ({error}): {line}");
                    ExitCode::from(crate::interrupt::OUTPUT_FAILED_EXIT)
                }
            }
        }
        Err(error) => {
            eprintln!("interleave admin: {}: {error}", describe(request));
            ExitCode::FAILURE
        }
    }
}

fn request(action: AdminAction) -> AdminRequest {
    let change = |change: fn(NodeId) -> MembershipChange, node: u32| {
        AdminRequest::Change(change(NodeId(node)))
    };
    match action {
        AdminAction::Membership => AdminRequest::Membership,
        AdminAction::AddLearner { node } => change(MembershipChange::AddLearner, node),
        AdminAction::Promote { node } => change(MembershipChange::Promote, node),
        AdminAction::Demote { node } => change(MembershipChange::Demote, node),
        AdminAction::Remove { node } => change(MembershipChange::Remove, node),
        AdminAction::Transfer { node } => AdminRequest::Transfer(NodeId(node)),
    }
}

fn describe(request: AdminRequest) -> String {
    match request {
        AdminRequest::Membership => "the configuration".to_string(),
        AdminRequest::Change(change) => change.to_string(),
        AdminRequest::Transfer(node) => format!("transfer to {node}"),
    }
}
