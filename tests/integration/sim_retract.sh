#!/usr/bin/env bash
# Integration test of the sim's KV capacity (issue 20.5) on a live `servetop sim`: Llama-3.1-70B
# at TP2 on H200 with --mem-fraction-static 0.60 holds 121,172 KV tokens; 24 clients, each
# sending 3 requests of 8,192 prompt tokens and 1,024 output tokens one after the other (24 x
# 9,216 = 221,184 tokens at once), are admitted optimistically (new_token_ratio decays while the
# first wave decodes, so later arrivals are expected to need little), fill the pool as their
# outputs grow, and SGLang's retraction happens: its log line, its
# metrics (sglang:num_retracted_reqs, sglang:num_retracted_requests_total), server_info, queued
# requests in the Decode log. Every request still completes with all its tokens (the numbers
# match the virtual run of tests/unit/check_sim_capacity.c). The same load
# at 0.85 (351,206 tokens) retracts nothing. Every sim started here is killed and reaped.
source "$(dirname "$0")/../lib/harness.sh"

wait_ready() { # up to 20 s
  for _ in $(seq 400); do
    [[ $(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/health") == 200 ]] && return 0
    sleep 0.05
  done
  return 1
}
stop_sim() {
  kill "$1" 2>/dev/null
  wait "$1" 2>/dev/null
  local rc=$?
  [[ $rc == 0 ]] || fail "sim $1 exited $rc after SIGTERM"
}
wait_jobs() { for j in $(jobs -p); do [[ " ${PIDS[*]} " == *" $j "* ]] || wait "$j"; done; }

# a completion of 8192 token ids and 1024 output tokens
python3 -c 'import json; print(json.dumps({"prompt": [11 + i % 1000 for i in range(8192)], "max_tokens": 1024, "ignore_eos": True}))' \
  >"$WORK/long.json"

# load NAME: 24 clients, 3 requests each in turn; the outputs in $WORK/NAME.C.R.out
load() {
  for c in $(seq 24); do
    for r in 1 2 3; do
      curl -s --max-time 120 "http://127.0.0.1:$PORT/v1/completions" -H 'Content-Type: application/json' \
        -d @"$WORK/long.json" >"$WORK/$1.$c.$r.out"
    done &
  done
  wait_jobs
}
completed() { grep -l '"completion_tokens":1024' "$WORK/$1".*.out 2>/dev/null | wc -l; }

start_sim small --model meta-llama/Llama-3.1-70B-Instruct --tp 2 --mem-fraction-static 0.60 \
  --enable-metrics --decode-log-interval 20 --sim-speed 200
check "sim at mem-fraction 0.60 ready" wait_ready
check "KV capacity 121172 tokens" grep -q 'max_total_num_tokens=121172,' "$WORK/small.log"
load small
check "all 72 requests complete with 1024 tokens despite retraction" test "$(completed small)" = 72
check "SGLang's retraction line" \
  grep -qE 'KV cache pool is full\. Retract requests\. #retracted_reqs: [1-9][0-9]*, #new_token_ratio: [0-9.]+ -> [0-9.]+$' "$WORK/small.log"
check "requests queued (#queue-req > 0 in a Decode line)" grep -qE 'Decode batch, .*#queue-req: [1-9]' "$WORK/small.log"
grep -m3 'Retract requests' "$WORK/small.log"
metrics=$(curl -s "http://127.0.0.1:$PORT/metrics")
total=$(sed -n 's/^sglang:num_retracted_requests_total{[^}]*} \([0-9]*\)$/\1/p' <<<"$metrics")
check "sglang:num_retracted_requests_total counts them ($total)" test "${total:-0}" -gt 0
check "sglang:num_retracted_reqs is published" grep -qE '^sglang:num_retracted_reqs\{' <<<"$metrics"
lines=$(grep -o '#retracted_reqs: [0-9]*' "$WORK/small.log" | awk '{s += $2} END {print s + 0}')
check "the counter equals the log lines' sum ($lines)" test "${total:-0}" = "$lines"
info=$(curl -s "http://127.0.0.1:$PORT/get_server_info")
check "server_info num_retracted_reqs" grep -q "\"num_retracted_reqs\":$total[,}]" <<<"$info"
stop_sim "$SIM_PID"

start_sim large --model meta-llama/Llama-3.1-70B-Instruct --tp 2 --mem-fraction-static 0.85 \
  --enable-metrics --decode-log-interval 20 --sim-speed 200
check "sim at mem-fraction 0.85 ready" wait_ready
load large
check "0.85: all 72 requests complete" test "$(completed large)" = 72
check "0.85: no retraction" test -z "$(grep 'Retract requests' "$WORK/large.log")"
check "0.85: the counter stays 0" \
  grep -qE '^sglang:num_retracted_requests_total\{[^}]*\} 0$' <<<"$(curl -s "http://127.0.0.1:$PORT/metrics")"
stop_sim "$SIM_PID"
finish sim_retract
