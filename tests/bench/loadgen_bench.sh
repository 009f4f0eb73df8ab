#!/usr/bin/env bash
# Load-generator benchmark matrix (not a ctest test; numbers go to docs/bench.md).
# The sim runs pinned to one core, bench_loadgen to another, a fresh sim (and
# trace file) per configuration.
#   usage: tests/bench/loadgen_bench.sh BUILD_DIR [SIM_CPU] [CLIENT_CPUS]
# POINTS="streams:workers ..." overrides the timing-error matrix.
set -euo pipefail
build=${1:?usage: loadgen_bench.sh BUILD_DIR [SIM_CPU] [CLIENT_CPU]}
sim_cpu=${2:-0}
client_cpu=${3:-1}
servetop=$build/servetop
bench=$build/tests/bench_loadgen
work=$(mktemp -d)
sim_pid=
cleanup() {
  if [[ -n $sim_pid ]]; then kill "$sim_pid" 2>/dev/null || true; wait "$sim_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

start_sim() { # TTFT_MS TPOT_MS
  rm -f "$work/port" "$work/trace.jsonl"
  taskset -c "$sim_cpu" "$servetop" sim --port 0 --sim-port-file "$work/port" \
    --sim-fixed-ttft-ms "$1" --sim-fixed-tpot-ms "$2" --skip-server-warmup \
    --max-running-requests 4096 --sim-trace "$work/trace.jsonl" >"$work/sim.log" 2>&1 &
  sim_pid=$!
  for _ in $(seq 100); do [[ -s $work/port ]] && break; sleep 0.05; done
  port=$(cat "$work/port")
}
stop_sim() { kill "$sim_pid"; wait "$sim_pid" 2>/dev/null || true; sim_pid=; }

run() { # label, then bench_loadgen args
  local label=$1; shift
  echo "== $label"
  taskset -c "$client_cpu" "$bench" --url "http://127.0.0.1:$port/v1/completions" "$@"
}

echo "# $(date -u +%FT%TZ) $(nproc) CPUs, load: $(cut -d' ' -f1-3 /proc/loadavg)"
start_sim 0 0
run "max events/s, 64 streams x 2000 tokens, keep-alive" --streams 64 --requests 128 --output-len 2000 --reuse
run "max events/s, 64 streams x 2000 tokens, new connections" --streams 64 --requests 128 --output-len 2000
stop_sim
# streams:workers; several workers need as many client CPUs (CLIENT_CPU may be a list, 1-4).
for point in ${POINTS:-1:1 256:1 1000:1 1000:4}; do
  streams=${point%%:*}
  workers=${point##*:}
  start_sim 10 10
  requests=$(( streams < 20 ? 20 : streams * 2 ))
  run "timing error, $streams streams, 10 ms/token, $workers loop(s)" --streams "$streams" \
    --requests "$requests" --output-len 100 --workers "$workers" --trace "$work/trace.jsonl"
  stop_sim
done
