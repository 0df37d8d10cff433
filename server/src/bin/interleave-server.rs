//! `interleave-server`: one node of Interleave's replicated key-value store, on a real disk and
//! real TCP. `interleave-server --help` says how to run it.

use clap::Parser;
use server::ServerArgs;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if args
        .get(1)
        .is_some_and(|first| first == "--new-cluster-key")
    {
        return new_cluster_key(&args[2..]);
    }
    server::serve(&ServerArgs::parse(), "interleave-server")
}

/// `interleave-server --new-cluster-key FILE`: writes a new cluster's key to FILE (which must
/// not exist), readable by its owner only.
fn new_cluster_key(rest: &[std::ffi::OsString]) -> ExitCode {
    let [file] = rest else {
        eprintln!("usage: interleave-server --new-cluster-key FILE");
        return ExitCode::from(2);
    };
    let path = std::path::Path::new(file);
    if path.symlink_metadata().is_ok() {
        eprintln!(
            "interleave-server: error: {} exists; a cluster's key is never overwritten (its members hold it)",
            path.display()
        );
        return ExitCode::from(2);
    }
    match server::tcp::ClusterKey::generate().and_then(|key| key.write(path).map(|()| key)) {
        Ok(key) => {
            println!(
                "wrote the key of cluster {} to {}: give every member a copy (--cluster-key)",
                key.cluster(),
                path.display()
            );
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("interleave-server: error: {error}");
            ExitCode::from(1)
        }
    }
}
