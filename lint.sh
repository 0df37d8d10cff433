#!/usr/bin/env bash
# Formatting and lints, as test.sh runs them; handy before every commit.
set -euo pipefail
cd "$(dirname "$0")"
cargo fmt --all
cargo clippy --workspace --all-targets -q -- -D warnings
