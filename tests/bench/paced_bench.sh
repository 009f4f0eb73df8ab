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
#               writes a token every TPOT_MS [10] after TTFT_MS [10], all
#               streams on one step clock like a batching server; staggered
#               the same with each stream on its own phase; fast as fast as
#               the socket takes it
#   CLIENTS     ["reference servetop floor"]; floor is tests/bench_floor_client
#               (the least a client can do per event here); baseline is the
#               servetop binary SERVETOP_BASELINE (e.g. main's, for before/after);
#               servetop@N is servetop with --num-workers N (e.g. servetop@1)
#   REPEATS     [3]
#   ISL, OSL    [128, 256]; FAST_OSL [2048] for fast points; range ratio 0.8
#   PROMPTS_PER_STREAM [4]  (num-prompts = streams x this)
#   NUM_WORKERS [auto]  servetop --num-workers (auto: one loop per 128 streams, at
#               most the CPUs of CLIENT_CPU)
#   SERVER_THREADS [1]  the paced server's threads (one epoll loop each)
#   BUDGET_S    [unlimited]  no run starts once this many seconds have passed
#   REFCLIENT   [tests/lib/refclient] PYTHONPATH folder with the tokenizer
#               stand-in (transformers, huggingface_hub) the reference imports
#   REFERENCE_DIR [../shared/data/inferencex/utils/bench_serving]
#   PYTHON      a python3 with aiohttp, numpy, tqdm [python3, else /usr/bin/python3]
#   QUIET_MAX_BUSY, QUIET_WAIT_S: before each run wait (up to QUIET_WAIT_S [300])
#               until the rest of the machine uses at most QUIET_MAX_BUSY cores
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
CLIENTS=${CLIENTS:-"reference servetop floor"}
REPEATS=${REPEATS:-3}
ISL=${ISL:-128}
OSL=${OSL:-256}
FAST_OSL=${FAST_OSL:-2048}
PROMPTS_PER_STREAM=${PROMPTS_PER_STREAM:-4}
TPOT_MS=${TPOT_MS:-10}
TTFT_MS=${TTFT_MS:-10}
NUM_WORKERS=${NUM_WORKERS:-auto}
SERVER_THREADS=${SERVER_THREADS:-1}
BUDGET_S=${BUDGET_S:-0}
t_start=$SECONDS
REFCLIENT=${REFCLIENT:-$root/tests/lib/refclient}
REFERENCE_DIR=${REFERENCE_DIR:-$root/../shared/data/inferencex/utils/bench_serving}

server=$build/tests/bench_paced_server
[[ -x $server && -x $build/servetop ]] || { echo "paced_bench: build $build first" >&2; exit 2; }
mkdir -p "$out/raw"
out=$(cd "$out" && pwd)
server_cpus=$server_cpu
source "$here/paced_lib.sh"
trap paced_cleanup EXIT
trap 'exit 130' INT TERM

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

run_point() { # MODE STREAMS CLIENT REPEAT
  local mode=$1 streams=$2 client=$3 rep=$4
  local tag=$mode-$streams-$client-$rep osl=$OSL
  [[ $mode == fast ]] && osl=$FAST_OSL
  paced_start_server "$tag" "$mode" --threads "$SERVER_THREADS"
  paced_flags "$tag" "$streams" "$osl" "$rep"
  local cmd
  case $client in
  reference) cmd=(env "PYTHONPATH=$REFCLIENT" "$ref_python" "$REFERENCE_DIR/benchmark_serving.py" "${PACED_FLAGS[@]}") ;;
  servetop) cmd=("$build/servetop" bench "${PACED_FLAGS[@]}" --num-workers "$NUM_WORKERS") ;;
  servetop@*) cmd=("$build/servetop" bench "${PACED_FLAGS[@]}" --num-workers "${client#servetop@}") ;;
  baseline) cmd=("${SERVETOP_BASELINE:?set SERVETOP_BASELINE for the baseline client}" bench "${PACED_FLAGS[@]}" --num-workers "$NUM_WORKERS") ;;
  floor) cmd=("$build/tests/bench_floor_client" "${PACED_FLAGS[@]}") ;;
  *) echo "paced_bench: unknown client $client" >&2; exit 2 ;;
  esac
  paced_measure "$tag" "$client_cpu" "$mode x $streams" "$client" 900 -- "${cmd[@]}" || true
}

paced_machine "$out/machine.txt"
for rep in $(seq "$REPEATS"); do
  for point in $POINTS; do
    for client in $CLIENTS; do
      [[ $client == reference && -n $ref_why ]] && continue
      if (( BUDGET_S > 0 && SECONDS - t_start > BUDGET_S )); then
        echo "paced_bench: budget of ${BUDGET_S}s spent: $point $client repeat $rep not run" >&2
        continue
      fi
      run_point "${point%%:*}" "${point##*:}" "$client" "$rep"
    done
  done
done
echo "# after: $(uptime)" >>"$out/machine.txt"
"${paced_helper[@]}" table "$out/results.jsonl" | tee "$out/table.md"
