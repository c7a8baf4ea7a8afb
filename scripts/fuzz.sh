#!/usr/bin/env bash
# Runs every cargo-fuzz target in fuzz/ for a while (default 10 s each; CI's short round), from
# the committed seeds plus a corpus kept beside the build (outside the clone). A crash fails the
# run and leaves its input in fuzz/artifacts/<target>/: make it a regression test.
#   bash scripts/fuzz.sh [seconds-per-target] [target...]
set -euo pipefail
seconds=${1:-10}
shift || true
root=$(cd "$(dirname "$0")/.." && pwd)
export PATH="$HOME/.cargo/bin:$PATH"
if ! cargo fuzz --version >/dev/null 2>&1; then
  cargo install cargo-fuzz --locked --version 0.13.2
fi
# cargo fuzz passes nightly-only flags (-Z); the stable toolchain accepts them this way.
export RUSTC_BOOTSTRAP=1
build_dir=${CARGO_TARGET_DIR:-$HOME/.cache/eso-target}-fuzz
cd "$root/fuzz"
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(cargo fuzz list)
fi
for target in "${targets[@]}"; do
  corpus="$build_dir/corpus/$target"
  mkdir -p "$corpus"
  echo "fuzz: $target for ${seconds}s"
  log="$build_dir/$target.log"
  if ! cargo fuzz run --target-dir "$build_dir" --sanitizer none "$target" "$corpus" "seeds/$target" -- \
    -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=2048 -print_final_stats=1 >"$log" 2>&1; then
    tail -60 "$log"
    echo "fuzz: $target failed; the input is under fuzz/artifacts/$target/" >&2
    exit 1
  fi
  grep -E '^stat::(number_of_executed_units|peak_rss_mb)' "$log" || true
done
