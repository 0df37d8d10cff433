#!/usr/bin/env bash
# The whole test suite: formatting, lints, every crate's tests, the loom and shuttle suites (each in
# its own target dir, release), every benchmark run once in test mode, and the README's first
# command exactly as a user types it. `.ci/run` calls this script.
set -euo pipefail
cd "$(dirname "$0")"

# Each step says how long the one before it took (the suite's time is watched: under 20 min), and
# the end lists every step's time.
step_started=$SECONDS
step_name=""
step_times=()
step() {
  if [ -n "$step_name" ]; then
    step_times+=("$(printf '%5d s  %s' "$((SECONDS - step_started))" "$step_name")")
  fi
  printf '\n=== %s   [the step before took %d s]\n' "$*" "$((SECONDS - step_started))"
  step_started=$SECONDS
  step_name=$*
}

# A test that needs a tool this machine lacks skips here and fails in CI (the `realtools` crate);
# either way it is written to this file, and the end of the suite lists them.
export INTERLEAVE_SKIPPED_TESTS=$PWD/target/skipped-tests.txt
mkdir -p target
: > "$INTERLEAVE_SKIPPED_TESTS"
in_ci() { case "${CI:-}" in "" | 0 | false) return 1 ;; *) return 0 ;; esac; }
# A step whose tool is missing: a failure in CI, a listed skip elsewhere.
skip_step() {
  if in_ci; then
    echo "FAILED: $1 needs $2; in CI a missing tool is a failure (scripts/install-test-tools)" >&2
    exit 1
  fi
  echo "SKIPPED: $2"
  printf '%s\t%s\n' "$1" "$2" >> "$INTERLEAVE_SKIPPED_TESTS"
}

step "format"
cargo fmt --all -- --check

step "lints"
cargo clippy --workspace --all-targets -- -D warnings

step "kept seeds first: every seed of interleave/tests/regressions.txt does what the file says"
# (--workspace: the features the next step builds with, so its build goes on from this one.)
cargo test --workspace --test regressions

step "tests (workspace): the simulation's, the real clusters' and the models' test binaries beside the rest, at once"
# One build, then two halves at the same time: cargo runs test binaries one after another, and
# the longest (the simulation's, the real clusters that wait on sockets and timers) leave a core
# idle. Each half selects test targets with --workspace, so both build with the workspace's
# features (`-p` would unify them otherwise and build again); the second half is every test
# target the build lists that the first does not name, so a new one is never left out. The tests
# that hold every message kind also write the fuzzer's seeds here.
export INTERLEAVE_FUZZ_SEEDS=$PWD/target/fuzz-seeds
rm -rf "$INTERLEAVE_FUZZ_SEEDS"
beside=(main hostile deploy interrupt realtime)
cargo test --workspace --no-run --message-format=json-render-diagnostics > target/test-build.json
rest=$(python3 -c '
import json, sys
beside = set(sys.argv[1:])
names = set()
for line in sys.stdin:
    message = json.loads(line)
    target = message.get("target", {})
    if message.get("reason") == "compiler-artifact" and message.get("executable") and target.get("kind") == ["test"]:
        names.add(target["name"])
missing = beside - names
if missing:
    sys.exit(f"test.sh: no test target named {sorted(missing)} any more")
print(" ".join(f"--test {name}" for name in sorted(names - beside)))
' "${beside[@]}" < target/test-build.json)
cargo test --workspace $(printf -- '--test %s ' "${beside[@]}") > target/tests-beside.log 2>&1 &
beside_tests=$!
rest_status=0
# shellcheck disable=SC2086 # one word per flag
cargo test --workspace --lib --bins $rest || rest_status=$?
# (--doc tests even a lib with `doctest = false`: the twins, which compile another crate's
# sources, are left out, as a plain `cargo test` leaves them; each folder of twins/ is one, named
# as its package, so a new twin is never missed.)
twins=()
for twin in twins/*/Cargo.toml; do
  twins+=(--exclude "$(basename "$(dirname "$twin")")")
done
cargo test --workspace --doc "${twins[@]}" || rest_status=$?
beside_status=0
wait "$beside_tests" || beside_status=$?
echo "--- run beside the above: $(printf -- '--test %s ' "${beside[@]}")"
cat target/tests-beside.log
if [ "$rest_status" -ne 0 ] || [ "$beside_status" -ne 0 ]; then
  echo "FAILED: the tests above (exit $rest_status), the ones beside them (exit $beside_status)" >&2
  exit 1
fi

# Under `--cfg loom` or `--cfg shuttle` every test that is not a model compiles to nothing, so the
# command a user types at the root runs exactly the models (each mode in its own target dir).
# Here the models' packages run them, and every other member is checked to build in the mode:
# the same tests, without code generation for the members that hold no model (on a clean clone
# of 6b02e98 the root's `cargo test` took 221 s and 174 s; this took 130 s and 106 s).
models_in() {
  local mode=$1
  shift
  RUSTFLAGS="--cfg $mode" CARGO_TARGET_DIR=target/$mode-root cargo test "$@"
  RUSTFLAGS="--cfg $mode" CARGO_TARGET_DIR=target/$mode-root cargo check --workspace --all-targets
}

step "loom: exhaustive interleavings of the node's own code and of the example"
models_in loom -p loom-tests -p worker-pool

step "shuttle: whole clusters under random and PCT schedules, and the example"
models_in shuttle -p shuttle-tests -p worker-pool

step "benchmarks, each run once"
# In the test profile (opt-level 1), beside the tests' own build, not in a release build of their
# own: `--test` runs each benchmark once, which is what this step checks (figures come from
# `cargo bench`).
cargo test -p benches -p interleave --benches -- --test
RUSTFLAGS="--cfg shuttle" CARGO_TARGET_DIR=target/shuttle-root cargo test -p shuttle-tests --benches -- --test

step "the README's first command, as a user types it (deterministic chaos, 100 seeds)"
cargo run --release -p interleave -- chaos

step "coverage gate: the README's 100 swarm seeds reach every point a raft swarm can reach (the key-value workload's points are not gated)"
cargo run --release -p interleave -- chaos --require-coverage --out target/interleave-runs-coverage

step "the shipped binaries refuse every broken variant (built as a user builds them)"
scripts/production-refuses

step "mutation testing: every survivor argued equivalent in .cargo/mutants-equivalent.txt still exists"
if command -v cargo-mutants > /dev/null; then
  scripts/mutants-equivalent
else
  skip_step "mutants-equivalent" "cargo-mutants is not installed"
fi

step "bad input: every case of scripts/bad-inputs.cases exits and says what docs/ci.md's table says"
scripts/bad-inputs --check

step "fuzzing: every decoder a peer, a client or a file reaches, ${INTERLEAVE_FUZZ_SECONDS:-5} s a target"
if command -v cargo-fuzz > /dev/null; then
  scripts/fuzz "${INTERLEAVE_FUZZ_SECONDS:-5}"
else
  skip_step "fuzzing (scripts/fuzz)" "cargo-fuzz is not installed"
fi

step "a sharded run as the CI matrix file runs it, small: 200 seeds in 4 shards, gathered"
CHAOS_FLAGS="--rounds 20" scripts/chaos-shards 200 4 2

step "done"
echo "the steps' wall times:"
printf '%s\n' "${step_times[@]}"
echo "the whole suite: $SECONDS s"
if [ -s "$INTERLEAVE_SKIPPED_TESTS" ]; then
  echo
  echo "SKIPPED for want of a tool ($(wc -l < "$INTERLEAVE_SKIPPED_TESTS") tests or steps; CI fails instead):"
  sort -u "$INTERLEAVE_SKIPPED_TESTS" | sed 's/\t/: /; s/^/  /'
  echo "install what they need, as root: scripts/install-test-tools"
fi
echo "all checks passed"
