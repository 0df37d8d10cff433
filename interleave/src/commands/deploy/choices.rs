//! What a `deploy` run is made of on this machine: the system under test, the network its
//! servers are on, and the faults both allow.

use super::refused::DeployRefused;
use crate::cli::{DeployArgs, FaultList, NetworkChoice, SystemChoice};
use lab::nemesis::FaultKind;
use lab::system::{Etcd, InterleaveServer, System};
use lab::{Network, ServerProgram};
use std::sync::Arc;

/// The network `choice` comes to on this machine for `system`: `auto` takes network
/// namespaces where they can be made and says why not where they cannot; a system whose
/// members share one list of addresses (etcd) cannot go through proxies.
pub(super) fn network(
    choice: NetworkChoice,
    system: &dyn System,
) -> Result<Network, DeployRefused> {
    let available = lab::netns::available();
    if !system.takes_an_address_per_link() {
        let system = system.name().to_string();
        return match (choice, available) {
            (NetworkChoice::Exactly(Network::Proxies), _) => {
                Err(DeployRefused::NoProxyPerLink { system })
            }
            (_, Ok(())) => Ok(Network::Namespaces),
            (_, Err(why)) => Err(DeployRefused::NeitherNetwork { system, why }),
        };
    }
    match (choice, available) {
        (NetworkChoice::Exactly(Network::Namespaces), Err(why)) => {
            Err(DeployRefused::NoNamespaces(why))
        }
        (NetworkChoice::Exactly(network), _) => Ok(network),
        (NetworkChoice::Auto, Ok(())) => Ok(Network::Namespaces),
        (NetworkChoice::Auto, Err(why)) => {
            eprintln!("interleave: links through proxies, not network namespaces: {why}");
            Ok(Network::Proxies)
        }
    }
}

/// The kinds of `faults` this machine, `network` and `system` can inject: those that need
/// lossy disks (FUSE, root), another network or a server that makes them itself are left out of
/// `all` with a note where they cannot be made, and refused when named.
pub(super) fn injectable(
    faults: &FaultList,
    network: Network,
    system: &dyn System,
) -> Result<Vec<FaultKind>, DeployRefused> {
    let (own, kinds): (Vec<FaultKind>, Vec<FaultKind>) = faults
        .kinds
        .iter()
        .partition(|kind| kind.needs_cooperation() && !system.cooperates());
    if !own.is_empty() {
        let names: Vec<&str> = own.iter().map(|kind| kind.name()).collect();
        let why = format!(
            "{} makes no clock or disk faults of its own, and takes no membership changes \
             through this project's administrator's requests",
            system.name()
        );
        if !faults.all {
            return Err(DeployRefused::NotCooperating {
                names: names.join(" and "),
                why,
            });
        }
        eprintln!("interleave: {} left out of all: {why}", names.join(" and "));
    }
    let (elsewhere, kinds): (Vec<FaultKind>, Vec<FaultKind>) =
        kinds.into_iter().partition(|kind| !kind.works_on(network));
    if !elsewhere.is_empty() {
        let names: Vec<&str> = elsewhere.iter().map(|kind| kind.name()).collect();
        let other = match network {
            Network::Namespaces => "--network proxies",
            _ => "--network namespaces",
        };
        if !faults.all {
            return Err(DeployRefused::OtherNetwork {
                names: names.join(" and "),
                network,
                other,
            });
        }
        eprintln!(
            "interleave: {} left out of all: not made through {network} (it takes {other})",
            names.join(" and ")
        );
    }
    let (held, kinds): (Vec<FaultKind>, Vec<FaultKind>) = kinds
        .into_iter()
        .partition(|kind| network == Network::Namespaces && kind.holds_packets());
    let mut kinds = kinds;
    if !held.is_empty() {
        let names: Vec<&str> = held.iter().map(|kind| kind.name()).collect();
        match lab::netns::can_hold_packets() {
            Ok(()) => kinds.extend(held),
            Err(why) if faults.all => {
                eprintln!("interleave: {} left out of all: {why}", names.join(" and "));
            }
            Err(why) => {
                return Err(DeployRefused::CannotHoldPackets {
                    names: names.join(" and "),
                    why,
                })
            }
        }
    }
    let (lossy, mut kinds): (Vec<FaultKind>, Vec<FaultKind>) =
        kinds.into_iter().partition(|kind| kind.needs_lossy_disks());
    if lossy.is_empty() {
        kinds.sort();
        return Ok(kinds);
    }
    let names: Vec<&str> = lossy.iter().map(|kind| kind.name()).collect();
    let available = match system.cannot_use_lossy_disks() {
        Some(why) => Err(why),
        None => lab::lossy_fs::available().map_err(|why| why.to_string()),
    };
    match available {
        Ok(()) => {
            kinds.extend(lossy);
            kinds.sort();
            Ok(kinds)
        }
        Err(why) if faults.all => {
            eprintln!("interleave: {} left out of all: {why}", names.join(" and "));
            Ok(kinds)
        }
        Err(why) => Err(DeployRefused::NoLossyDisks {
            names: names.join(" and "),
            why,
        }),
    }
}

/// The system `args` ask for, or why it cannot run: etcd takes none of the options of this
/// project's server, and must be installed.
pub(super) fn system(args: &DeployArgs) -> Result<Arc<dyn System>, DeployRefused> {
    let reads = match args.system {
        SystemChoice::Interleave => return interleave_server(args),
        SystemChoice::Etcd(reads) => reads,
    };
    let own_options = [
        (
            "--read-mode",
            args.read_mode != node::kv::ReadMode::ReadIndex,
        ),
        ("--storage", args.storage != storage::StorageKind::default()),
        ("--snapshot-threshold", args.snapshot_threshold.is_some()),
        ("--broken-write", args.broken_write.is_some()),
        ("--mutation", !args.mutations.is_empty()),
    ];
    if let Some((option, _)) = own_options.iter().find(|(_, given)| *given) {
        return Err(DeployRefused::NotAnEtcdOption(option));
    }
    let program = args.server.clone().unwrap_or_else(|| "etcd".into());
    Etcd::available(&program).map_err(DeployRefused::NoEtcd)?;
    Ok(Arc::new(Etcd { program, reads }))
}

/// This project's server, with the options `args` give it, and `--allow-faults` for the clock
/// and disk faults.
fn interleave_server(args: &DeployArgs) -> Result<Arc<dyn System>, DeployRefused> {
    let program = match &args.server {
        Some(program) => ServerProgram {
            program: program.clone(),
            leading_args: Vec::new(),
        },
        None => ServerProgram {
            program: std::env::current_exe().map_err(DeployRefused::NoProgram)?,
            leading_args: vec!["server".into()],
        },
    };
    let mut server_args = vec![
        "--read-mode".to_string(),
        args.read_mode.name().to_string(),
        "--storage".to_string(),
        args.storage.name().to_string(),
        "--allow-faults".to_string(),
    ];
    if let Some(bytes) = args.snapshot_threshold {
        server_args.extend(["--snapshot-threshold".to_string(), bytes.to_string()]);
    }
    if let Some(broken) = &args.broken_write {
        server_args.extend(["--broken-write".to_string(), broken.clone()]);
    }
    for mutation in &args.mutations {
        server_args.extend(["--mutation".to_string(), mutation.name().to_string()]);
    }
    InterleaveServer::system(program, server_args).map_err(DeployRefused::AdminKey)
}
