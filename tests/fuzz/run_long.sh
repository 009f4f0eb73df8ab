#!/usr/bin/env bash
# Long fuzz runs: every libFuzzer target at once, one process each, for SECONDS
# (default 585), from the seed corpora; prints executions and the outcome per
# target. Build the targets first:
#   CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFUZZ=ON \
#     -DSANITIZE=address,undefined && cmake --build build-fuzz --target $(cd tests/fuzz && ls fuzz_*.c | sed 's/\.c$//')
#   usage: tests/fuzz/run_long.sh BUILD_DIR [SECONDS]
set -u
build=${1:?usage: run_long.sh BUILD_DIR [SECONDS]}
secs=${2:-585}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait; rm -rf "$work"' EXIT
for bin in "$build"/tests/fuzz_*; do
  name=$(basename "$bin"); name=${name#fuzz_}
  mkdir -p "$work/$name"
  cp -r "$here/corpus/$name/." "$work/$name/" 2>/dev/null
  "$bin" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
    -artifact_prefix="$work/crash-$name-" "$work/$name" >"$work/$name.log" 2>&1 &
  pids+=($!)
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=1; done
pids=()
for log in "$work"/*.log; do
  name=$(basename "$log" .log)
  printf '%-20s %s  corpus %s  %s\n' "$name" \
    "$(grep -o 'Done [0-9]* runs in [0-9]* second(s)' "$log")" "$(ls "$work/$name" | wc -l)" \
    "$(grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error' "$log" && echo CRASH || echo clean)"
done
ls "$work"/crash-* >/dev/null 2>&1 && { echo "crash inputs:"; ls "$work"/crash-*; rc=1; }
exit $rc
