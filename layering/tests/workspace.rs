//! The workspace's own layering (docs/layering.md): no import cycle inside any crate, and no
//! folder importing what its rules forbid.

#![cfg(not(any(loom, shuttle)))]

use layering::{cycles, dependencies, dependencies_of, CrateRule, ModuleGraph, Rule};
use std::path::PathBuf;

/// Every library and binary crate whose modules are checked, by folder.
const CRATES: &[&str] = &[
    "userfiles",
    "realtools",
    "runspec",
    "threadsim",
    "node",
    "sim",
    "models",
    "interleave",
    "storage",
    "server",
    "lab",
    "layering",
];

/// Crates that must not depend on another (their `[dependencies]`; a test may reach above).
const CRATE_RULES: &[CrateRule] = &[
    CrateRule {
        krate: "server",
        forbidden: "lab",
        why: "what ships never holds the lab: the lab drives servers from outside",
    },
    CrateRule {
        krate: "storage",
        forbidden: "server",
        why: "the storage engine sits low enough for the simulation to run it",
    },
    CrateRule {
        krate: "storage",
        forbidden: "lab",
        why: "the storage engine sits low enough for the simulation to run it",
    },
    CrateRule {
        krate: "sim",
        forbidden: "server",
        why: "the simulation may run the storage engine, not the server's sockets",
    },
];

/// What a folder of a crate must not import, and why (docs/layering.md).
const RULES: &[(&str, Rule)] = &[
    (
        "threadsim",
        Rule {
            from: "crate::sync",
            forbidden: "crate::simulation",
            why: "the sync facade is the bottom layer: the runner above it picks the scheduler, \
                  the facade only runs it",
        },
    ),
    (
        "node",
        Rule {
            from: "crate::core",
            forbidden: "crate::shell",
            why: "the protocol core is told the time and returns effects: no threads, locks or \
                  channels",
        },
    ),
    (
        "node",
        Rule {
            from: "crate::core",
            forbidden: "crate::kv",
            why: "the Raft core knows nothing of the service it replicates",
        },
    ),
    (
        "node",
        Rule {
            from: "crate::shell",
            forbidden: "crate::kv",
            why: "the node hands committed entries to a service; it never calls one",
        },
    ),
    (
        "node",
        Rule {
            from: "crate::kv",
            forbidden: "crate::core",
            why: "the service reaches the node through the shell's API only",
        },
    ),
    (
        "models",
        Rule {
            from: "crate::checker",
            forbidden: "crate::formats",
            why: "the checker decides histories; reading files is the formats' job",
        },
    ),
    (
        "models",
        Rule {
            from: "crate::checker",
            forbidden: "crate::cli",
            why: "the checker is a library; the command line is above it",
        },
    ),
    (
        "interleave",
        Rule {
            from: "crate::run_spec",
            forbidden: "crate",
            why: "a run's vocabulary is the bottom of the command: everything takes it, it takes \
                  nothing",
        },
    ),
    (
        "interleave",
        Rule {
            from: "crate::engines",
            forbidden: "crate::cli",
            why: "an engine runs a seed of a run's specification, not a command line",
        },
    ),
    (
        "interleave",
        Rule {
            from: "crate::engines",
            forbidden: "crate::commands",
            why: "the engines are beneath every command",
        },
    ),
    (
        "interleave",
        Rule {
            from: "crate::report",
            forbidden: "crate::commands",
            why: "a report draws an outcome, whichever command produced it",
        },
    ),
    (
        "interleave",
        Rule {
            from: "crate::shrink",
            forbidden: "crate::commands",
            why: "shrinking is a library call of `chaos` and `shrink` alike",
        },
    ),
    (
        "server",
        Rule {
            from: "crate::wire",
            forbidden: "crate::server",
            why: "the wire format is beneath whoever speaks it",
        },
    ),
    (
        "server",
        Rule {
            from: "crate::wire",
            forbidden: "crate::tcp",
            why: "the wire format is beneath the connections that carry it",
        },
    ),
];

/// Folders whose cycles with the rest of their crate are by design, and why.
const CYCLES_ALLOWED: &[(&str, &str, &str)] = &[(
    "node",
    "crate::broken",
    "each deliberately broken variant is the code of its site (a protocol rule, the ticker, the \
     applier) moved to a file of its own, so the site calls it and it uses the site's types; it \
     is compiled into a build only with the `mutations` feature",
)];

fn graph(krate: &str) -> ModuleGraph {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(krate)
        .join("src");
    ModuleGraph::of_crate(&src).unwrap_or_else(|error| panic!("reading {krate}: {error}"))
}

#[test]
fn no_crate_has_an_import_cycle() {
    let mut found = Vec::new();
    for krate in CRATES {
        let graph = CYCLES_ALLOWED
            .iter()
            .filter(|(allowed_in, _, _)| allowed_in == krate)
            .fold(graph(krate), |graph, (_, folder, _)| graph.without(folder));
        assert!(
            graph.modules.len() > 1 || *krate == "userfiles",
            "{krate}: no modules read"
        );
        for cycle in cycles(&graph) {
            let edges: Vec<String> = cycle
                .iter()
                .flat_map(|module| {
                    graph
                        .edges_from(module)
                        .filter(|(target, _)| cycle.contains(target))
                        .map(move |(target, path)| format!("    {module} -> {target}: {path}"))
                })
                .collect();
            found.push(format!(
                "{krate}: {}\n{}",
                cycle.join(", "),
                edges.join("\n")
            ));
        }
    }
    assert!(found.is_empty(), "import cycles:\n{}", found.join("\n"));
}

#[test]
fn no_folder_imports_what_its_rules_forbid() {
    let mut breaches = Vec::new();
    for (krate, rule) in RULES {
        assert!(
            CRATES.contains(krate),
            "a rule for {krate}, which is not checked"
        );
        let graph = graph(krate);
        assert!(
            graph
                .modules
                .iter()
                .any(|module| module.starts_with(rule.from)),
            "{krate} has no {}: the rule checks nothing",
            rule.from
        );
        for breach in rule.breaches(&graph) {
            breaches.push(format!(
                "{krate}: {} names {} ({})",
                breach.importer, breach.path, breach.why
            ));
        }
    }
    assert!(
        breaches.is_empty(),
        "layering broken:\n{}",
        breaches.join("\n")
    );
}

#[test]
fn no_crate_depends_on_what_its_rules_forbid() {
    let mut breaches = Vec::new();
    for rule in CRATE_RULES {
        let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join(rule.krate)
            .join("Cargo.toml");
        let names = dependencies_of(&manifest)
            .unwrap_or_else(|error| panic!("reading {}: {error}", manifest.display()));
        assert!(
            names.iter().any(|name| name == "node"),
            "{}: no dependencies read",
            rule.krate
        );
        if names.iter().any(|name| name == rule.forbidden) {
            breaches.push(format!(
                "{} depends on {} ({})",
                rule.krate, rule.forbidden, rule.why
            ));
        }
    }
    assert!(
        breaches.is_empty(),
        "crate layering broken:\n{}",
        breaches.join("\n")
    );
}

/// The crate rule can fail: a server manifest that names the lab among its dependencies.
#[test]
fn a_server_that_depends_on_the_lab_is_caught() {
    let manifest = "[package]\nname = \"server\"\n[dependencies]\nnode.workspace = true\n\
                    lab = { path = \"../lab\" }\n";
    let rule = CRATE_RULES[0];
    assert!(dependencies(manifest)
        .iter()
        .any(|name| name == rule.forbidden));
}

/// The checks can fail: a crate whose checker and search import each other, and whose core
/// imports its shell, is caught on both counts.
#[test]
fn a_crate_with_a_cycle_and_a_forbidden_import_is_caught() {
    let src = std::env::temp_dir().join(format!("layering-broken-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&src);
    let files = [
        (
            "lib.rs",
            "pub mod checker;\npub mod core;\npub mod shell;\n",
        ),
        ("checker/mod.rs", "mod memo;\nmod search;\n"),
        (
            "checker/memo.rs",
            "use super::search::Hasher;\npub struct Memo;\n",
        ),
        (
            "checker/search.rs",
            "// use super::memo::Memo in a comment is not an import\n\
             pub struct Hasher;\nfn f() -> super::memo::Memo { todo!() }\n",
        ),
        ("core/mod.rs", "use crate::shell::{Locked, self};\n"),
        ("shell/mod.rs", "pub struct Locked;\n"),
    ];
    for (name, text) in files {
        let path = src.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let graph = ModuleGraph::of_crate(&src).unwrap();
    assert_eq!(
        cycles(&graph),
        [["crate::checker::memo", "crate::checker::search"]]
    );
    let rule = Rule {
        from: "crate::core",
        forbidden: "crate::shell",
        why: "pure core",
    };
    let breaches = rule.breaches(&graph);
    assert_eq!(breaches.len(), 1, "{breaches:?}");
    assert_eq!(breaches[0].importer, "crate::core");
    std::fs::remove_dir_all(&src).unwrap();
}
