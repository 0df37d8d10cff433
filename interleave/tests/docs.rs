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
