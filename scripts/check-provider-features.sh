#!/usr/bin/env bash
# Checks that the providers crate compiles with no backend and with each backend feature alone,
# so code gated by one feature never silently depends on another's. Run it before resolving a
# backend issue (CI checks the no-backend build).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/eso-target}"
features=$(sed -n '/^\[features\]/,/^\[/p' providers/Cargo.toml | grep -E '^[a-z][a-z0-9_-]* = ' | cut -d' ' -f1 | grep -vx default)
# A warning (an import or function only another feature uses) fails the check as an error would.
check() {
  local output
  output=$(cargo check -q -p external-secrets-providers --no-default-features --all-targets "$@" 2>&1) || { echo "$output"; exit 1; }
  if grep -q '^warning' <<<"$output"; then echo "$output"; exit 1; fi
}
echo "check-provider-features: no backend"
check
for feature in $features; do
  echo "check-provider-features: $feature"
  check --features "$feature"
done
