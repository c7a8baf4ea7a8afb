#!/usr/bin/env bash
# The README's main job: syncs a secret from the built-in `fake` provider into a Kubernetes
# Secret, end to end, with no cloud account and no cluster (a loopback API server is started;
# set KUBECONFIG to use a real cluster instead).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/eso-target}"
cargo build --release --quiet --bin external-secrets -p external-secrets
cargo run --release --quiet -p e2e --bin demo
