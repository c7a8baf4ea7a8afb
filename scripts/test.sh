#!/usr/bin/env bash
# Runs the whole test suite: unit, provider, loopback API server and e2e tests. Installs the
# servers the tests need first. Tests that need a cluster use $KUBECONFIG when it is set and
# start the loopback API server otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/eso-target}"
tools_bin="$(bash scripts/test-tools.sh)"
export PATH="$tools_bin:$PATH"
# The e2e tests run the controller binary itself.
cargo build --workspace --all-features --bins
cargo test --workspace --all-features "$@"
