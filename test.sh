#!/usr/bin/env bash
# The whole test suite: formatting, lints, every crate's tests, the loom and shuttle suites (each in
# its own target dir, release), every benchmark run once in test mode, and the README's first
# command exactly as a user types it. `.ci/run` calls this script.
set -euo pipefail
cd "$(dirname "$0")"

# Each step says how long the one before it took (the suite's time is watched: under 20 min).
step_started=$SECONDS
step() {
  printf '\n=== %s   [the step before took %d s]\n' "$*" "$((SECONDS - step_started))"
  step_started=$SECONDS
}

step "format"
cargo fmt --all -- --check

step "lints"
cargo clippy --workspace --all-targets -- -D warnings

step "kept seeds first: every seed of interleave/tests/regressions.txt does what the file says"
cargo test -p interleave --test regressions

step "tests (workspace)"
cargo test --workspace

# Under `--cfg loom` or `--cfg shuttle` every test that is not a model compiles to nothing, so the
# command a user types at the root runs exactly the models (each mode in its own target dir).
step "loom: exhaustive interleavings of the node's own code and of the example, as users type it"
RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom-root cargo test

step "shuttle: whole clusters under random and PCT schedules, and the example, as users type it"
RUSTFLAGS="--cfg shuttle" CARGO_TARGET_DIR=target/shuttle-root cargo test

step "benchmarks, each run once"
cargo bench -p benches -- --test
cargo bench -p interleave -- --test
RUSTFLAGS="--cfg shuttle" CARGO_TARGET_DIR=target/shuttle cargo bench -p shuttle-tests -- --test

step "the README's first command, as a user types it (deterministic chaos, 100 seeds)"
cargo run --release -p interleave -- chaos

step "coverage gate: every coverage point the raft workload can reach is reached (100 seeds, fault points on)"
cargo run --release -p interleave -- chaos --fault-points --require-coverage --out target/interleave-runs-coverage

step "the shipped binaries refuse every broken variant (built as a user builds them)"
scripts/production-refuses

step "mutation testing: every survivor argued equivalent in .cargo/mutants-equivalent.txt still exists"
if command -v cargo-mutants > /dev/null; then
  scripts/mutants-equivalent
else
  echo "skipped: cargo-mutants is not installed (cargo install cargo-mutants)"
fi

step "fuzzing: every decoder a peer, a client or a file reaches (INTERLEAVE_FUZZ_SECONDS each)"
# Building the fuzz targets takes about 2 minutes, so the short run is asked for by seconds (CI's
# .ci/run asks for 5), and needs cargo-fuzz and a nightly toolchain (scripts/fuzz says what is
# missing).
if [ -n "${INTERLEAVE_FUZZ_SECONDS:-}" ]; then
  scripts/fuzz "$INTERLEAVE_FUZZ_SECONDS"
else
  echo "skipped: set INTERLEAVE_FUZZ_SECONDS (scripts/fuzz 10 runs every target for 10 s)"
fi

step "a sharded run as the CI matrix file runs it, small: 200 seeds in 4 shards, gathered"
CHAOS_FLAGS="--rounds 20" scripts/chaos-shards 200 4 2

echo
echo "(last step $((SECONDS - step_started)) s; the whole suite $SECONDS s)"
echo "all checks passed"
