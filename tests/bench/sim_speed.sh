#!/usr/bin/env bash
# Speed of `servetop sim`: streamed token events per second with 2000
# concurrent keep-alive streams, sim pinned to CPU 0 and the client to CPU 1.
# Usage: tests/bench/sim_speed.sh BUILD_DIR [DURATION_S]
set -eu
build=${1:?usage: sim_speed.sh BUILD_DIR [DURATION_S]}
dur=${2:-5}
bench=$build/tests/bench_sim
servetop=$build/servetop
for args in "--streams 2000 --max-tokens 256 --tpot-ms 0" \
            "--streams 2000 --max-tokens 1024 --tpot-ms 0" \
            "--streams 2000 --max-tokens 256 --tpot-ms 4" \
            "--streams 4000 --max-tokens 64 --tpot-ms 10"; do
  echo "== bench_sim $args"
  # shellcheck disable=SC2086
  "$bench" --servetop "$servetop" --duration-s "$dur" $args
done
