//! Every `interleave` command the README and the documents show in a `console` block runs here,
//! from the workspace's root, and must print what the page says (`[..]` and `...` stand for
//! what changes from build to build). Blocks of other languages are not run: the `cargo`
//! commands they show are the ones `./test.sh` runs, or benchmarks.
#![cfg(not(any(loom, shuttle)))]

#[test]
fn every_console_example_in_the_docs_prints_what_the_docs_say() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    std::env::set_current_dir(&root).expect("the workspace's root");
    trycmd::TestCases::new()
        .register_bin(
            "interleave",
            std::path::Path::new(env!("CARGO_BIN_EXE_interleave")),
        )
        .case("README.md")
        .case("docs/*.md");
}

/// The documents' counts that the code determines exactly, computed from the code: a count
/// the code changes and a page keeps fails here, not in a reader's hands.
#[test]
fn every_count_the_code_determines_is_the_documents_count() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let page = |name: &str| std::fs::read_to_string(root.join(name)).expect(name);
    let says = |name: &str, text: &str| {
        assert!(
            page(name).replace('\n', " ").contains(text),
            "{name} should say {text:?}"
        );
    };
    says(
        "docs/exploration.md",
        &format!(
            "(`node::coverage`, {} of them;",
            node::coverage::Point::ALL.len()
        ),
    );
    // Which of the README's seeds 1-10,000 end with the probes: the raft workload, swarmed.
    let probed = (1..=10_000u64)
        .filter(|&seed| {
            let drawn = runspec::RunSpec {
                seed,
                ..runspec::RunSpec::default()
            }
            .swarmed();
            sim::run_end::ends_with_probes(drawn.faults, drawn.nodes as usize)
        })
        .count();
    let probed = format!("{},{:03}", probed / 1000, probed % 1000);
    for name in ["docs/availability.md", "docs/exploration.md"] {
        says(
            name,
            &format!("{probed} of seeds 1-10,000 end with the probes"),
        );
    }
}
