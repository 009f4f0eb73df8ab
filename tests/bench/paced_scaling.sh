#!/usr/bin/env bash
# How far one machine's `servetop bench` goes with more loops (issue 15.4; not
# a ctest test): tests/bench_paced_server on its own cores streams STREAMS
# paced streams x TPOT_MS, `servetop bench --num-workers W` runs on the other
# cores for each W of WORKERS; per run the figures of paced_bench.sh (events/s,
# CPU µs per event, TTFT/ITL error against the server's own timestamps) and
# which side could not keep up. servetop only (no reference client needed).
#
#   usage: tests/bench/paced_scaling.sh OUT_DIR [BUILD_DIR]
#
# BUILD_DIR holds servetop and tests/bench_paced_server (LD_LIBRARY_PATH for
# libraries carried with them); without it the project is configured and built
# in OUT_DIR/build (cmake, a C compiler, libcurl, libcjson, libyaml, ncurses).
# Environment (defaults in brackets):
#   STREAMS [4096]  WORKERS ["1 2 4"]  REPEATS [2]  MODE [paced] (or staggered)
#   OSL [256] (range ratio 0.8)  ISL [128]  PROMPTS_PER_STREAM [2]
#   TPOT_MS [10]  TTFT_MS [10]
#   SERVER_CPUS [the first half of the CPUs]  CLIENT_CPUS [the other half]
#   SERVER_THREADS [as many as SERVER_CPUS]
#   QUIET_MAX_BUSY, QUIET_WAIT_S: wait for a quiet machine before each run
#   BUDGET_S [540]: no run starts once this much time has passed (the lead's
#               device command has 10 minutes), RUN_TIMEOUT_S [150] per run
# Writes OUT_DIR/results.jsonl, OUT_DIR/table.md (also printed), machine.txt,
# raw/ (per run: server trace, result JSON, CPU samples, logs).
# Small scale here, e.g.: STREAMS=256 WORKERS="1 2" REPEATS=1 SERVER_CPUS=0 CLIENT_CPUS=1 \
#   tests/bench/paced_scaling.sh /tmp/scaling build
set -euo pipefail
t_start=$SECONDS
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:?usage: paced_scaling.sh OUT_DIR [BUILD_DIR]}
mkdir -p "$out/raw"
out=$(cd "$out" && pwd)
STREAMS=${STREAMS:-4096}
WORKERS=${WORKERS:-"1 2 4"}
REPEATS=${REPEATS:-2}
MODE=${MODE:-paced}
ISL=${ISL:-128}
OSL=${OSL:-256}
PROMPTS_PER_STREAM=${PROMPTS_PER_STREAM:-2}
TPOT_MS=${TPOT_MS:-10}
TTFT_MS=${TTFT_MS:-10}
BUDGET_S=${BUDGET_S:-540}
RUN_TIMEOUT_S=${RUN_TIMEOUT_S:-150}
ncpu=$(nproc)
half=$((ncpu / 2))
if (( ncpu < 2 )); then echo "paced_scaling: needs 2 CPUs at least" >&2; exit 2; fi
SERVER_CPUS=${SERVER_CPUS:-0-$((half - 1))}
CLIENT_CPUS=${CLIENT_CPUS:-$half-$((ncpu - 1))}
count_cpus() { # taskset list -> number of CPUs
  local n=0 part
  IFS=, read -ra parts <<<"$1"
  for part in "${parts[@]}"; do
    if [[ $part == *-* ]]; then n=$((n + ${part#*-} - ${part%-*} + 1)); else n=$((n + 1)); fi
  done
  echo "$n"
}
SERVER_THREADS=${SERVER_THREADS:-$(count_cpus "$SERVER_CPUS")}

if [[ -n ${2:-} ]]; then
  build=$(cd "$2" && pwd)
else
  build=$out/build
  echo "# building in $build"
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$out/raw/cmake.log" 2>&1
  cmake --build "$build" -j"$ncpu" --target servetop bench_paced_server >"$out/raw/build.log" 2>&1 ||
    { tail -20 "$out/raw/build.log" >&2; exit 1; }
fi
server=$build/tests/bench_paced_server
[[ -x $server && -x $build/servetop ]] || { echo "paced_scaling: no servetop / bench_paced_server in $build" >&2; exit 2; }
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
server_cpus=$SERVER_CPUS
source "$here/paced_lib.sh"
trap paced_cleanup EXIT
trap 'exit 130' INT TERM

paced_machine "$out/machine.txt"
echo "# $MODE x $STREAMS streams, ${TPOT_MS} ms/token, server: $SERVER_THREADS threads on CPUs $SERVER_CPUS; servetop on CPUs $CLIENT_CPUS" |
  tee -a "$out/machine.txt"
for rep in $(seq "$REPEATS"); do
  for w in $WORKERS; do
    if (( SECONDS - t_start > BUDGET_S )); then
      echo "paced_scaling: time budget of ${BUDGET_S} s spent; $w worker(s), repeat $rep not run" | tee -a "$out/machine.txt"
      continue
    fi
    tag=$MODE-$STREAMS-w$w-$rep
    paced_start_server "$tag" "$MODE" --threads "$SERVER_THREADS"
    paced_flags "$tag" "$STREAMS" "$OSL" "$rep"
    paced_measure "$tag" "$CLIENT_CPUS" "$MODE x $STREAMS" "servetop --num-workers $w" "$RUN_TIMEOUT_S" -- \
      "$build/servetop" bench "${PACED_FLAGS[@]}" --num-workers "$w" || true
  done
done
echo "# after: $(uptime)" >>"$out/machine.txt"
[[ -s $out/results.jsonl ]] || { echo "paced_scaling: no run completed" >&2; exit 1; }
"${paced_helper[@]}" table "$out/results.jsonl" | tee "$out/table.md"
