#!/usr/bin/env bash
# `servetop bench` as a drop-in for benchmark_serving.py, against `servetop sim`:
# flags and usage errors, result file name and keys, metadata and goodput,
# chat mode sized by calibration, run-scoped acceptance from the server,
# failures (HTTP 500, malformed SSE, resets) with the > 5% exit rule, and
# SIGINT saving an interrupted result. Every process is reaped (trap).
source "$(dirname "$0")/../lib/harness.sh"
has() { grep -qF -- "$2" "$1"; }          # has FILE TEXT
lacks() { ! grep -qF -- "$2" "$1"; }

# Every sim of this test: no warmup, one model name.
start_bench_sim() { # NAME args...
  local name=$1; shift
  start_sim "$name" --skip-server-warmup --model llama-3.1-8b "$@"
}
stop_sim() { kill "$SIM_PID" 2>/dev/null; wait "$SIM_PID" 2>/dev/null; }

bench() { # bench OUT_PREFIX args...: runs servetop bench, sets RC
  local out=$1; shift
  timeout 120 "$SERVETOP" bench --model llama-3.1-8b --base-url "http://127.0.0.1:$PORT" \
    --dataset-name random --quiet "$@" >"$out.out" 2>"$out.err"
  RC=$?
}

# ---------------------------------------------------------------- usage
"$SERVETOP" bench --help >"$WORK/help.txt" 2>&1
check "--help exits 0" test $? -eq 0
check "--help lists InferenceX flags" has "$WORK/help.txt" "--random-range-ratio"
"$SERVETOP" bench --model m --no-such-flag >/dev/null 2>"$WORK/bad.err"
check "unknown flag exits 2" test $? -eq 2
"$SERVETOP" bench --model m --backend tgi >/dev/null 2>"$WORK/bad.err"
check "bad backend exits 2" test $? -eq 2
"$SERVETOP" bench --model m --goodput itl:5 >/dev/null 2>"$WORK/bad.err"
check "goodput on itl is refused" has "$WORK/bad.err" "invalid metric"

# ---------------------------------------------------------------- result file
start_bench_sim fixed --sim-fixed-ttft-ms 5 --sim-fixed-tpot-ms 1
bench "$WORK/r1" --backend vllm --random-input-len 64 --random-output-len 16 --num-prompts 12 \
  --max-concurrency 4 --ignore-eos --num-warmups 8 --save-result --result-dir "$WORK/results" \
  --metadata framework=sglang precision=fp8 --goodput ttft:1000 tpot:100 --request-rate inf
check "plain run exits 0" test "$RC" -eq 0
shopt -s nullglob
files=("$WORK"/results/vllm-infqps-concurrency4-llama-3.1-8b-*.json)
check "default result file name" test "${#files[@]}" -eq 1
f=${files[0]:-/dev/null}
check "summary heading" has "$WORK/r1.out" "============ Serving Benchmark Result ============"
check "goodput line" has "$WORK/r1.out" "Request goodput (req/s):"
for key in '"date"' '"backend": "vllm"' '"model_id": "llama-3.1-8b"' '"num_prompts": 12' \
  '"framework": "sglang"' '"precision": "fp8"' '"request_rate": "inf"' '"max_concurrency": 4' \
  '"input_lens"' '"output_lens"' '"p99.9_ttft_ms"' '"median_e2el_ms"' \
  '"servetop"' '"schema_version": 2' '"connection_reuse": "new connection per request"' \
  '"num_warmups": 8'; do
  check "result has $key" has "$f" "$key"
done
check "goodput is a number" grep -qE '"request_goodput:": [0-9]' "$f"
check "no detailed lists without --save-detailed" lacks "$f" '"generated_texts"'

bench "$WORK/r2" --random-input-len 32 --random-output-len 8 --num-prompts 4 --ignore-eos \
  --percentile-metrics ttft,e2el --metric-percentiles 50,99 --save-result --save-detailed \
  --result-filename "$WORK/named.json" --reuse-connections --num-workers 2
check "named result file" test -s "$WORK/named.json"
bench "$WORK/json" --random-input-len 16 --random-output-len 4 --num-prompts 3 --ignore-eos --json
check "--json: stdout is the result JSON" grep -qE '^\{"date": ".*"servetop": \{' "$WORK/json.out"
check "--json: summary on stderr" has "$WORK/json.err" "Serving Benchmark Result"
check "chosen percentiles" has "$WORK/named.json" '"p50_ttft_ms"'
check "unselected metric absent" lacks "$WORK/named.json" '"mean_tpot_ms"'
check "detailed lists" has "$WORK/named.json" '"generated_texts"'
check "max_concurrency null" has "$WORK/named.json" '"max_concurrency": null'
check "keep-alive recorded" has "$WORK/named.json" '"reuse_connections": true'
check "no /metrics is not an error" has "$WORK/named.json" '"metrics_available": false'

# The command line benchmarks/benchmark_lib.sh (run_benchmark_serving) builds, verbatim.
mkdir -p "$WORK/ix"
timeout 120 "$SERVETOP" bench --model llama-3.1-8b --backend vllm --base-url "http://0.0.0.0:$PORT" \
  --dataset-name random --random-input-len 64 --random-output-len 8 --random-range-ratio 0.8 \
  --num-prompts 20 --max-concurrency 2 --request-rate inf --ignore-eos --save-result \
  --num-warmups 4 --percentile-metrics 'ttft,tpot,itl,e2el' --result-dir "$WORK/ix/" \
  --result-filename dsr1_1k1k_fp8_conc2.json --tokenizer llama-3.1-8b --tokenizer-mode auto \
  --trust-remote-code --disable-tqdm >"$WORK/ix.out" 2>&1
check "InferenceX command line exits 0" test $? -eq 0
check "InferenceX result file" has "$WORK/ix/dsr1_1k1k_fp8_conc2.json" '"total_token_throughput"'
check "input_lens recorded" grep -qE '"input_lens": \[[0-9]+, ' "$WORK/ix/dsr1_1k1k_fp8_conc2.json"

# ---------------------------------------------------------------- chat mode
# openai-chat sends the reference's prompt text as the user message; the
# server applies its template, so its count exceeds the client's by the
# sim's template overhead (8 tokens: docs/sim.md) on every request.
bench "$WORK/chat" --backend openai-chat --endpoint /v1/chat/completions --random-input-len 400 \
  --random-output-len 8 --random-range-ratio 0.5 --num-prompts 8 --max-concurrency 4 --ignore-eos \
  --save-result --result-filename "$WORK/chat.json" --vocab-size 128256
check "chat run exits 0" test "$RC" -eq 0
check "chat api recorded" has "$WORK/chat.json" '"api": "chat"'
check "chat prompts through the server's tokenizer" has "$WORK/chat.json" '"path": "server_tokenizer"'
check "server counts the template on top of the client's count" python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
srv = d['servetop']['tokens']['input_lens_server']
sys.exit(0 if all(s == c + 8 for s, c in zip(srv, d['input_lens'])) else 1)" "$WORK/chat.json"

# Without the server's tokenizer: calibrated text on the chat endpoint.
bench "$WORK/chatcal" --backend openai-chat --endpoint /v1/chat/completions --random-input-len 400 \
  --random-output-len 8 --random-range-ratio 0.5 --num-prompts 8 --max-concurrency 4 --ignore-eos \
  --save-result --result-filename "$WORK/chatcal.json" --no-server-tokenizer
check "calibrated chat run exits 0" test "$RC" -eq 0
check "chat calibration recorded" has "$WORK/chatcal.json" '"chat_calibration"'
check "fallback named in the summary" has "$WORK/chatcal.out" "NOT the reference's prompts"
err=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['servetop']['tokens']['input_max_rel_error'])" "$WORK/chatcal.json")
check "chat prompt sizes within 1% of target (max rel error $err)" \
  awk -v e="$err" 'BEGIN { exit !(e != "" && e <= 0.01) }'

# --use-chat-template: the template rendered through the server (/tokenize
# with messages), its length subtracted as the reference does, the text
# sent to /v1/completions; client and server counts agree.
bench "$WORK/tmpl" --use-chat-template --random-input-len 100 --random-output-len 4 \
  --num-prompts 6 --max-concurrency 3 --ignore-eos --save-result \
  --result-filename "$WORK/tmpl.json" --vocab-size 128256
check "chat-template run exits 0" test "$RC" -eq 0
check "template length recorded (9 - 1)" has "$WORK/tmpl.json" '"chat_template_len": 8'
check "template prompts are exactly the input length" python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
srv = d['servetop']['tokens']['input_lens_server']
sys.exit(0 if d['input_lens'] == [100] * 6 and srv == d['input_lens']
         and d['servetop']['client']['api'] == 'completions' else 1)" "$WORK/tmpl.json"
stop_sim

# ---------------------------------------------------------------- acceptance
start_bench_sim spec --speculative-algorithm EAGLE --speculative-num-steps 3 --speculative-eagle-topk 1 \
  --speculative-num-draft-tokens 4 --enable-metrics --sim-speed 20 --decode-log-interval 1
bench "$WORK/spec" --random-input-len 128 --random-output-len 128 --num-prompts 32 \
  --max-concurrency 8 --ignore-eos --save-result --result-filename "$WORK/spec.json"
check "spec run exits 0" test "$RC" -eq 0
check "spec enabled read from the server" has "$WORK/spec.json" '"spec_enabled": true'
check "run-scoped accept length" grep -qE '"accept_length": [0-9]' "$WORK/spec.json"
check "accept length method named" has "$WORK/spec.json" '"accept_length_method"'
check "accept length in summary" has "$WORK/spec.out" "servetop: accept length (run):"
stop_sim

# ---------------------------------------------------------------- failures
start_bench_sim h500 --sim-fixed-ttft-ms 2 --sim-fixed-tpot-ms 1 --sim-fault http-500=2
bench "$WORK/h500" --random-input-len 16 --random-output-len 4 --num-prompts 10 --ignore-eos \
  --save-result --result-filename "$WORK/h500.json"
check "50% HTTP 500 exits 1" test "$RC" -eq 1
check "failures by kind in the summary" has "$WORK/h500.out" "servetop: 5 of 10 requests failed: http_error 5"
check "FAIL line" has "$WORK/h500.err" "FAIL: request failure rate"
check "result saved before failing" has "$WORK/h500.json" '"http_error": 5'
stop_sim

start_bench_sim badjson --sim-fixed-ttft-ms 2 --sim-fixed-tpot-ms 1 --sim-fault bad-json-after=8
bench "$WORK/badjson" --random-input-len 16 --random-output-len 4 --num-prompts 40 --max-concurrency 1 \
  --ignore-eos --save-result --result-filename "$WORK/badjson.json"
check "malformed SSE counted" has "$WORK/badjson.json" '"malformed_sse": 32'
check "malformed run exits 1" test "$RC" -eq 1
stop_sim

# An error event after HTTP 200 fails the request with the server's words,
# never a 0-token success (the reference counts it as one).
start_bench_sim errev --sim-fixed-ttft-ms 2 --sim-fixed-tpot-ms 1 --sim-fault error-event-after=6
bench "$WORK/errev" --random-input-len 16 --random-output-len 4 --num-prompts 10 --max-concurrency 1 \
  --ignore-eos --save-result --result-filename "$WORK/errev.json"
check "error events counted" has "$WORK/errev.json" '"stream_error": 4'
check "their tokens are not counted" has "$WORK/errev.json" '"total_output_tokens": 24'
check "the server's message in the summary" has "$WORK/errev.out" "stream_error, first: server error event after HTTP 200"
check "error-event run exits 1" test "$RC" -eq 1
stop_sim

start_bench_sim reset --sim-fixed-ttft-ms 2 --sim-fixed-tpot-ms 1 --sim-fault reset-after=39
bench "$WORK/reset" --random-input-len 16 --random-output-len 4 --num-prompts 40 --max-concurrency 1 \
  --ignore-eos --save-result --result-filename "$WORK/reset.json"
check "one reset (2.5%) exits 0" test "$RC" -eq 0
check "reset counted" has "$WORK/reset.json" '"transfer_error": 1'
stop_sim

start_bench_sim stall --sim-fixed-ttft-ms 2 --sim-fixed-tpot-ms 1 --sim-fault stall-after=0
bench "$WORK/stall" --random-input-len 16 --random-output-len 4 --num-prompts 2 --ignore-eos \
  --request-timeout 1 --save-result --result-filename "$WORK/stall.json"
check "stalled requests time out (exit 1)" test "$RC" -eq 1
check "timeouts counted" has "$WORK/stall.json" '"timeout": 2'
stop_sim

# ---------------------------------------------------------------- SIGINT
start_bench_sim slow --sim-fixed-ttft-ms 5 --sim-fixed-tpot-ms 50
"$SERVETOP" bench --model llama-3.1-8b --base-url "http://127.0.0.1:$PORT" --random-input-len 16 \
  --random-output-len 1000 --num-prompts 8 --max-concurrency 2 --ignore-eos --quiet \
  --drain-timeout 0.5 --save-result --result-filename "$WORK/int.json" >"$WORK/int.out" 2>&1 &
BPID=$!
PIDS+=("$BPID")
sleep 1.5
t0=$(date +%s%N)
kill -INT "$BPID"
wait "$BPID"
RC=$?
t1=$(date +%s%N)
check "SIGINT exits 130" test "$RC" -eq 130
check "SIGINT stops within 5 s" test $(( (t1 - t0) / 1000000 )) -lt 5000
check "interrupted result saved" has "$WORK/int.json" '"interrupted": true'
check "in-flight requests marked" has "$WORK/int.json" '"interrupted": 2'
check "the requests SIGINT cut are no failures" python3 -c "import json,sys
st = json.load(open(sys.argv[1]))['servetop']
sys.exit(0 if st['failed'] == 0 and st['failure_rate'] == 0 and st['failures'] == {}
         and st['cut_by_stop']['interrupted'] == 2 else 1)" "$WORK/int.json"
check "the summary says so" grep -q "cut when the run ended (2 in flight" "$WORK/int.out"
check "no FAIL line for an interrupted run" lacks "$WORK/int.out" "FAIL: request failure rate"
stop_sim

finish "bench CLI"
