#!/usr/bin/env bash
# The proxy policy: servetop's traffic (load, tokenizer, calibration, profile,
# /metrics, server info, readiness, telemetry) ignores http_proxy, https_proxy,
# all_proxy (either case) and goes through a proxy only when --proxy URL says so.
# bench, run and attach against the sim with every proxy variable set to a dead
# proxy complete every request; with --proxy pointing at the dead proxy every
# request fails, in bounded time, with a reason naming the proxy.
source "$(dirname "$0")/../lib/harness.sh"
has() { grep -qF -- "$2" "$1"; }
lacks() { ! grep -qF -- "$2" "$1"; }
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }

# A port nothing listens on: the dead proxy.
DEAD=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
PROXY=http://127.0.0.1:$DEAD
# Every proxy variable set to it, and nothing exempting loopback.
with_dead_proxy() {
  env -u no_proxy -u NO_PROXY http_proxy="$PROXY" HTTP_PROXY="$PROXY" https_proxy="$PROXY" \
    HTTPS_PROXY="$PROXY" all_proxy="$PROXY" ALL_PROXY="$PROXY" "$@"
}

start_sim px --skip-server-warmup --model llama-3.1-8b --enable-metrics
BASE=http://127.0.0.1:$PORT

# The environment is a trap for a client that honours it.
if command -v curl >/dev/null; then
  with_dead_proxy curl -s -m 10 -o /dev/null "$BASE/health"
  check "curl itself, honouring http_proxy, cannot reach the sim" test $? -ne 0
fi

bench() { # bench NAME args...: servetop bench under the dead proxy variables; sets RC
  local name=$1; shift
  with_dead_proxy timeout 120 "$SERVETOP" bench --model llama-3.1-8b --base-url "$BASE" \
    --random-input-len 64 --random-output-len 8 --num-prompts 8 --max-concurrency 4 \
    --ignore-eos --quiet --save-result --result-filename "$WORK/$name.json" "$@" \
    >"$WORK/$name.out" 2>&1
  RC=$?
}

# ---------------------------------------------------------------- bench, proxy variables set
bench env
check "bench with proxy variables: exits 0" test "$RC" -eq 0
check "bench with proxy variables: 8 completed" test "$(json "$WORK/env.json" "d['completed']")" = 8
check "bench with proxy variables: prompts through the server's tokenizer" \
  lacks "$WORK/env.out" "NOT the reference's prompts"
check "bench with proxy variables: /metrics read" \
  test "$(json "$WORK/env.json" "d['servetop']['server']['metrics_available']")" = True

# The chat endpoint with calibration (no tokenizer) and the profile calls.
bench chat --backend openai-chat --no-server-tokenizer --profile
check "chat, calibration, profile with proxy variables: exits 0" test "$RC" -eq 0
check "chat with proxy variables: 8 completed" test "$(json "$WORK/chat.json" "d['completed']")" = 8
check "chat calibration with proxy variables" has "$WORK/chat.json" '"chat_calibration"'
check "profile calls with proxy variables answered 200" \
  test "$(json "$WORK/chat.json" "[d['servetop']['client']['profile'][k] for k in ('start_profile_http_status', 'stop_profile_http_status')]")" = "[200, 200]"

# ---------------------------------------------------------------- bench --proxy (dead)
bench via --proxy "$PROXY" --request-timeout 30
check "bench --proxy dead: exits 1" test "$RC" -eq 1
check "bench --proxy dead: nothing completed" test "$(json "$WORK/via.json" "d['completed']")" = 0
check "bench --proxy dead: 8 connect errors" \
  test "$(json "$WORK/via.json" "d['servetop']['failures'].get('connect_error')")" = 8
check "bench --proxy dead: the reason names the proxy" has "$WORK/via.out" "127.0.0.1 port $DEAD"
check "bench --proxy dead: the tokenizer failure names the proxy" has "$WORK/via.out" "(through proxy $PROXY)"
check "bench --proxy dead: the /metrics failure names the proxy" \
  grep -q "(through proxy $PROXY)" <<<"$(json "$WORK/via.json" "d['servetop']['server']['metrics_unavailable_reason']")"

"$SERVETOP" bench --model m --proxy ftp://127.0.0.1:21 >/dev/null 2>"$WORK/bad.err"
check "bench --proxy ftp://: exits 2" test $? -eq 2
check "bench --proxy ftp://: says why" has "$WORK/bad.err" "--proxy ftp://127.0.0.1:21: expected http://HOST:PORT"
for cmd in bench run attach; do
  "$SERVETOP" "$cmd" --help >"$WORK/help-$cmd.txt" 2>&1
  check "$cmd --help lists --proxy" has "$WORK/help-$cmd.txt" "--proxy URL"
done

# ---------------------------------------------------------------- run, proxy variables set
RECIPES=${TEST_DATA_DIR:?}/launcher/recipes
run_common=(--configs "$RECIPES" --num-warmups 0 --isl 64 --osl 16 --conc 2 --num-prompts 8
  --headless --quiet)
with_dead_proxy timeout 300 "$SERVETOP" run llama8b-h200-sglang "${run_common[@]}" \
  --results "$WORK/runs" >"$WORK/run.out" 2>&1
check "run with proxy variables: exits 0" test $? -eq 0
R=$(ls "$WORK"/runs/*/result-conc2.json 2>/dev/null | head -n 1)
check "run with proxy variables: 8 completed" test "$(json "${R:-/dev/null}" "d['completed']")" = 8
check "run with proxy variables: GPU telemetry read" \
  test "$(json "${R:-/dev/null}" "len(d['servetop_run']['gpu_telemetry']['samples']) >= 1")" = True

# ---------------------------------------------------------------- attach, proxy variables set
with_dead_proxy timeout 300 "$SERVETOP" attach "$BASE" --conc 2 --num-prompts 8 --num-warmups 0 \
  --isl 64 --osl 16 --headless --quiet --results "$WORK/att" >"$WORK/att.out" 2>&1
check "attach with proxy variables: exits 0" test $? -eq 0
A=$(ls "$WORK"/att/*/result-conc2.json 2>/dev/null | head -n 1)
check "attach with proxy variables: 8 completed" test "$(json "${A:-/dev/null}" "d['completed']")" = 8

# ---------------------------------------------------------------- run --proxy (dead)
timeout 300 "$SERVETOP" run llama8b-h200-sglang "${run_common[@]}" --results "$WORK/runs-via" \
  --proxy "$PROXY" --ready-timeout 60 --request-timeout 30 >"$WORK/run-via.out" 2>&1
RC=$?
check "run --proxy dead: fails (exit 1)" test "$RC" -eq 1
if grep -q "127.0.0.1 port $DEAD\|$PROXY" "$WORK/run-via.out"; then
  ok "run --proxy dead: the reason names the proxy"
else
  fail "run --proxy dead: the reason names the proxy"; cat "$WORK/run-via.out"
fi

finish proxy_env
