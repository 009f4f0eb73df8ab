#!/usr/bin/env bash
# Conformance against the reference client itself: InferenceX's
# benchmark_serving.py (../shared/data/inferencex/utils/bench_serving, run with
# Debian's python3-aiohttp and python3-numpy and the tokenizer stand-in of
# tests/lib/refclient) and `servetop bench` with the same flags against the
# same fixed-latency `servetop sim`. Counts, token totals and the prompt texts
# the server saw must be equal; every timing within 1% / 0.2 ms of the
# reference or nearer than it to what the sim was told (compare.py).
# Skips (77) when the reference or its Python packages are absent.
source "$(dirname "$0")/../lib/harness.sh"
REF=${SHARED_DIR:-}/data/inferencex/utils/bench_serving/benchmark_serving.py
REFCLIENT=$(cd "$(dirname "$0")/../lib/refclient" && pwd)
PY=/usr/bin/python3
[[ -f $REF ]] || { echo "SKIP: no reference client at $REF"; exit 77; }
"$PY" -c 'import aiohttp, numpy' 2>/dev/null ||
  { echo "SKIP: python3-aiohttp / python3-numpy not installed (.ci/run installs them)"; exit 77; }
export PYTHONDONTWRITEBYTECODE=1

TTFT=50 TPOT=10
# Sanitizer builds (CI runs every test there too) are several times slower:
# counts, tokens and prompts are still compared, timings are not judged.
judge=()
if ldd "$SERVETOP" 2>/dev/null | grep -qE 'lib(a|ub|t)san'; then
  judge=(--counts-only)
  echo "note: sanitizer build: timings printed, not judged"
fi
# one_pair LABEL SIM_ARGS... -- BENCH_ARGS...: both clients, one after the
# other, against one sim; then compare.py (its exit status).
one_pair() {
  local label=$1; shift
  local sim_args=() bench_args=()
  while [[ $1 != -- ]]; do sim_args+=("$1"); shift; done
  shift
  bench_args=("$@")
  start_sim "$label" --model llama-3.1-8b --skip-server-warmup --enable-metrics \
    --sim-fixed-ttft-ms $TTFT --sim-fixed-tpot-ms $TPOT --sim-trace "$WORK/$label.trace" "${sim_args[@]}"
  local tok=$WORK/$label.tok
  mkdir -p "$tok"
  printf '{"base_url": "http://127.0.0.1:%s", "model": "llama-3.1-8b", "vocab_size": 128256}\n' \
    "$PORT" >"$tok/servetop-tokenizer.json"
  echo '{"tokenizer_class": "ServetopServerTokenizer"}' >"$tok/tokenizer_config.json"
  local common=(--model llama-3.1-8b --tokenizer "$tok" --base-url "http://127.0.0.1:$PORT"
                --dataset-name random --save-result --result-dir "$WORK" --disable-tqdm
                "${bench_args[@]}")
  local rc=0
  (cd "$WORK" && PYTHONPATH=$REFCLIENT timeout 300 "$PY" "$REF" "${common[@]}" \
     --result-filename "$label.ref.json") >"$WORK/$label.ref.out" 2>&1 || rc=$?
  if (( rc != 0 )); then
    echo "$label: the reference failed (exit $rc)"; tail -20 "$WORK/$label.ref.out"; return 1
  fi
  timeout 300 "$SERVETOP" bench "${common[@]}" --vocab-size 128256 --quiet \
    --result-filename "$label.st.json" >"$WORK/$label.st.out" 2>&1 || rc=$?
  kill "$SIM_PID"; wait "$SIM_PID" 2>/dev/null
  if (( rc != 0 )); then
    echo "$label: servetop bench failed (exit $rc)"; tail -20 "$WORK/$label.st.out"; return 1
  fi
  local conc warm=0
  conc=$(sed -n 's/.*--max-concurrency \([0-9]*\).*/\1/p' <<<"${bench_args[*]}")
  [[ ${bench_args[*]} =~ --num-warmups\ ([0-9]+) ]] && warm=${BASH_REMATCH[1]}
  echo "--- $label"
  "$PY" "$REFCLIENT/compare.py" "$WORK/$label.ref.json" "$WORK/$label.st.json" --label "$label" \
    --told-ttft-ms $TTFT --told-tpot-ms $TPOT --concurrency "${conc:-1}" \
    --trace "$WORK/$label.trace" --warmups "$warm" "${judge[@]}"
}

# run_pair: one_pair; a timing-only miss is measured again (up to 3 tries in
# all: a shared 2-core machine moves a p99 now and then), a count, token or
# prompt difference fails at once.
run_pair() {
  local try rc
  for try in 1 2 3; do
    rc=0
    one_pair "$@" || rc=$?
    (( rc == 0 )) && { ok "$1: servetop conforms to benchmark_serving.py (try $try)"; return; }
    (( rc == 2 )) || break
    echo "$1: timing miss on try $try, measuring again"
  done
  fail "$1: servetop differs from benchmark_serving.py"
}

# What benchmarks/benchmark_lib.sh runs (range ratio 0.8, warmups 2 x conc), 16 streams.
run_pair closed16 -- --random-input-len 128 --random-output-len 32 --random-range-ratio 0.8 \
  --num-prompts 64 --max-concurrency 16 --request-rate inf --ignore-eos --num-warmups 32 \
  --percentile-metrics ttft,tpot,itl,e2el --seed 3
# Open loop (numpy's gamma arrivals), a shared prefix, the padding RNG in 3 chunks.
run_pair poisson -- --random-input-len 96 --random-output-len 16 --random-range-ratio 0.5 \
  --random-prefix-len 7 --num-prompts 40 --max-concurrency 8 --request-rate 40 --ignore-eos \
  --random-num-workers 3 --seed 11
# The chat template rendered on the client's side (the sim's /tokenize with messages). 64
# prompts, as closed16: with 24 (360 gaps) the p99 ITL was the 4th largest gap, which one
# scheduling hiccup of either client decided (CI missed by 0.2-0.4 ms three tries running).
run_pair template -- --random-input-len 64 --random-output-len 16 --num-prompts 64 \
  --max-concurrency 4 --ignore-eos --use-chat-template --random-num-workers 1
finish "reference conformance"
