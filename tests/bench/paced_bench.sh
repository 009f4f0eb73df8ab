#!/usr/bin/env bash
# Side-by-side client benchmark (not a ctest test; figures go to docs/bench.md
# and the README): tests/bench_paced_server on one core streams paced tokens
# (or as fast as it can) and timestamps its own writes; the reference client
# (InferenceX's benchmark_serving.py) and `servetop bench`, with the same flags,
# run one after the other on another core. Per run: events/s, client CPU µs per
# event (schedstat of every client thread over the run's window), and the error
# each client adds (its TTFT and chunk gaps minus the server's).
#
#   usage: tests/bench/paced_bench.sh BUILD_DIR OUT_DIR [SERVER_CPU] [CLIENT_CPU]
#
# Environment (defaults in brackets):
#   POINTS      "MODE:STREAMS ..." ["paced:256 paced:1024 fast:256"]; MODE paced
#               streams a token every TPOT_MS [10] after TTFT_MS [10], fast as
#               fast as the socket takes it
#   CLIENTS     ["reference servetop"]      REPEATS  [3]
#   ISL, OSL    [128, 256]; FAST_OSL [2048] for fast points; range ratio 0.8
#   PROMPTS_PER_STREAM [4]  (num-prompts = streams x this)
#   NUM_WORKERS [1]  servetop --num-workers
#   REFCLIENT   [tests/lib/refclient] PYTHONPATH folder with the tokenizer
#               stand-in (transformers, huggingface_hub) the reference imports
#   REFERENCE_DIR [../shared/data/inferencex/utils/bench_serving]
#   PYTHON      a python3 with aiohttp, numpy, tqdm [python3, else /usr/bin/python3]
# The reference is skipped, with the reason, when any of these is missing.
# OUT_DIR gets raw/ (traces, results, samples, logs), results.jsonl, table.md.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(cd "${1:?usage: paced_bench.sh BUILD_DIR OUT_DIR [SERVER_CPU] [CLIENT_CPU]}" && pwd)
out=${2:?usage: paced_bench.sh BUILD_DIR OUT_DIR [SERVER_CPU] [CLIENT_CPU]}
server_cpu=${3:-0}
client_cpu=${4:-1}
POINTS=${POINTS:-"paced:256 paced:1024 fast:256"}
CLIENTS=${CLIENTS:-"reference servetop"}
REPEATS=${REPEATS:-3}
ISL=${ISL:-128}
OSL=${OSL:-256}
FAST_OSL=${FAST_OSL:-2048}
PROMPTS_PER_STREAM=${PROMPTS_PER_STREAM:-4}
TPOT_MS=${TPOT_MS:-10}
TTFT_MS=${TTFT_MS:-10}
NUM_WORKERS=${NUM_WORKERS:-1}
REFCLIENT=${REFCLIENT:-$root/tests/lib/refclient}
REFERENCE_DIR=${REFERENCE_DIR:-$root/../shared/data/inferencex/utils/bench_serving}

server=$build/tests/bench_paced_server
[[ -x $server && -x $build/servetop ]] || { echo "paced_bench: build $build first" >&2; exit 2; }
mkdir -p "$out/raw"
out=$(cd "$out" && pwd)
helper=(python3 "$here/paced.py")

# The reference client needs aiohttp/numpy/tqdm, the stand-in and the script.
ref_python=
ref_why=
if [[ " $CLIENTS " == *" reference "* ]]; then
  for py in ${PYTHON:-python3 /usr/bin/python3}; do
    if "$py" -c 'import aiohttp, numpy, tqdm' 2>/dev/null; then ref_python=$py; break; fi
  done
  if [[ -z $ref_python ]]; then
    ref_why="no python3 with aiohttp, numpy and tqdm (Debian: python3-aiohttp python3-numpy python3-tqdm)"
  elif [[ ! -f $REFERENCE_DIR/benchmark_serving.py ]]; then
    ref_why="no reference client at $REFERENCE_DIR"
  elif ! PYTHONPATH=$REFCLIENT "$ref_python" -c 'import transformers, huggingface_hub' 2>/dev/null; then
    ref_why="no tokenizer stand-in at REFCLIENT=$REFCLIENT"
  fi
  if [[ -n $ref_why ]]; then
    echo "paced_bench: reference client skipped: $ref_why" | tee "$out/reference-skipped.txt" >&2
  fi
fi

server_pid=
cleanup() {
  if [[ -n $server_pid ]]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

start_server() { # TAG MODE
  local tag=$1 mode=$2 args=(--tpot-ms "$TPOT_MS" --ttft-ms "$TTFT_MS")
  [[ $mode == fast ]] && args=(--fast --ttft-ms 0)
  rm -f "$out/raw/$tag.port"
  taskset -c "$server_cpu" "$server" --port-file "$out/raw/$tag.port" --trace "$out/raw/$tag.trace" \
    "${args[@]}" 2>"$out/raw/$tag.server.log" &
  server_pid=$!
  for _ in $(seq 200); do [[ -s $out/raw/$tag.port ]] && break; sleep 0.05; done
  port=$(cat "$out/raw/$tag.port")
}

stop_server() {
  kill -TERM "$server_pid"
  wait "$server_pid" || { echo "paced_bench: server failed, see $out/raw/$tag.server.log" >&2; exit 1; }
  server_pid=
}

run_point() { # MODE STREAMS CLIENT REPEAT
  local mode=$1 streams=$2 client=$3 rep=$4
  local tag=$mode-$streams-$client-$rep osl=$OSL
  [[ $mode == fast ]] && osl=$FAST_OSL
  start_server "$tag" "$mode"
  local flags=(--model bench --backend vllm --base-url "http://127.0.0.1:$port"
    --dataset-name random --random-input-len "$ISL" --random-output-len "$osl"
    --random-range-ratio 0.8 --num-prompts $((streams * PROMPTS_PER_STREAM))
    --max-concurrency "$streams" --request-rate inf --ignore-eos --num-warmups 0
    --percentile-metrics ttft,tpot,itl,e2el --save-result --save-detailed
    --result-dir "$out/raw" --result-filename "$tag.json" --disable-tqdm --seed "$rep")
  local cmd
  if [[ $client == reference ]]; then
    cmd=(env "PYTHONPATH=$REFCLIENT" "$ref_python" "$REFERENCE_DIR/benchmark_serving.py" "${flags[@]}")
  else
    cmd=("$build/servetop" bench "${flags[@]}" --num-workers "$NUM_WORKERS")
  fi
  echo "== $tag ($(cut -d' ' -f1-3 /proc/loadavg))"
  local rc=0
  taskset -c "$server_cpu" "${helper[@]}" run --samples "$out/raw/$tag.samples" --cpus "$client_cpu" \
    --watch "$server_pid" -- "${cmd[@]}" >"$out/raw/$tag.log" 2>&1 || rc=$?
  stop_server
  if (( rc != 0 )) || [[ ! -s $out/raw/$tag.json ]]; then
    echo "paced_bench: $tag failed (exit $rc), see $out/raw/$tag.log" >&2
    tail -5 "$out/raw/$tag.log" >&2
    return 0
  fi
  "${helper[@]}" report --trace "$out/raw/$tag.trace" --result "$out/raw/$tag.json" \
    --samples "$out/raw/$tag.samples" --label "$tag" --client "$client" \
    --point "$mode x $streams" --out "$out/results.jsonl" >/dev/null
  python3 - "$out/results.jsonl" <<'EOF'
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])][-1]
print(f"   {r['events_per_s']:,.0f} events/s  {r['cpu_us_per_event']:.2f} us/event  "
      f"TTFT err p50/p99 {r['ttft_err_ms']['p50']:.3f}/{r['ttft_err_ms']['p99']:.3f} ms  "
      f"ITL err p50/p99 {r['itl_err_ms']['p50']:.3f}/{r['itl_err_ms']['p99']:.3f} ms  "
      f"matched {r['matched']}/{r['completed']}")
EOF
}

{
  echo "# $(date -u +%FT%TZ) $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)),"
  echo "# $(uname -sr), $(curl-config --version 2>/dev/null), server CPU $server_cpu, client CPU $client_cpu"
  echo "# uptime: $(uptime)"
  top -bn1 | head -15
} >"$out/machine.txt"
cat "$out/machine.txt" | head -3
for rep in $(seq "$REPEATS"); do
  for point in $POINTS; do
    for client in $CLIENTS; do
      [[ $client == reference && -n $ref_why ]] && continue
      run_point "${point%%:*}" "${point##*:}" "$client" "$rep"
    done
  done
done
echo "# after: $(uptime)" >>"$out/machine.txt"
"${helper[@]}" table "$out/results.jsonl" | tee "$out/table.md"
