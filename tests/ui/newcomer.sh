#!/bin/bash
# What a newcomer trips on (issue 23), on the dashboard at 80x24: the problems
# view lists every error before the first warning, an unterminated quote at the
# line it was left open (23.6); the run view's progress: warm-up k/N of its
# own, the label of the next point with its concurrency, the sweep's ETA beside
# the point's, the last wave's ETA only counting down (23.4); `gpus --watch`
# redraws in place (nothing scrolls into the terminal's history); the attach
# form takes a concurrency list as --conc-list does (23.8); an attached server
# with speculative decoding shows its method in past runs and compare (23.5).
set -euo pipefail

: "${TEST_DATA_DIR:?tests/data}"
UI_NAME=newcomer
source "$(dirname "$0")/../lib/tmux.sh"

RESULTS=$(mktemp -d)
SIM_PID=""
SPEC_PID=""
ui_cleanup_more() {
  if [ -n "$SIM_PID" ]; then kill "$SIM_PID" 2>/dev/null || true; wait "$SIM_PID" 2>/dev/null || true; fi
  if [ -n "$SPEC_PID" ]; then kill "$SPEC_PID" 2>/dev/null || true; wait "$SPEC_PID" 2>/dev/null || true; fi
  rm -rf "$RESULTS"
}

# ---------------------------------------------------------------- problems first (23.6)
ui_start 80 24 XDG_DATA_HOME="$RESULTS" "$SERVETOP" --inferencex "$TEST_DATA_DIR/recipe/ix-bad"
wait_for "Recipes"
tm send-keys -t "$UI_SESSION" p
wait_for "19 errors, 2 warnings, 1 note"
# the rows' severities top to bottom, then after End: no error below a warning
sevs() { screen | sed -n 's/^│ \(error\|warning\|note\) .*/\1/p'; }
first=$(sevs | head -1)
[ "$first" = error ] || fail "the first row is '$first', not an error"
screen | grep -q 'kimik3_fp8_h200.sh:3 ' || fail "the unterminated quote is not at line 3"
tm send-keys -t "$UI_SESSION" End
wait_for "4-22/22"
order=$(sevs | uniq | tr '\n' ' ')
[ "$order" = "error warning note " ] || fail "rows after End go '$order', not errors then warnings"
tm send-keys -t "$UI_SESSION" q q
wait_for "EXIT=0"
echo "ok: problems first"

# ---------------------------------------------------------------- progress (23.4)
# two points of 2 s requests: conc 2 then 4, 4 warm-ups each
ui_start 80 24 XDG_DATA_HOME="$RESULTS" "$SERVETOP" run fixed2-bf16-h200-sglang \
  --configs "$TEST_DATA_DIR/ui/newcomer" --sweep --num-warmups 4
wait_for "warming up point 1/2 conc 2" 30
wait_for "warm-up 0/4" 
wait_for "warm-up 2/4" 
screen | grep -q " 0/0 " && fail "the warm-up shows 0/0"
wait_for "measuring point 1/2 conc 2" 
wait_for ", sweep " 
# the last wave (2 left, both in flight; the count is raised from the warm-ups so the point
# lasts 5 s: read from the screen): its ETA never grows
etas=""
for _ in $(seq 60); do
  line=$(screen | sed -n 2p)
  case $line in *"warming up point 2/2"*) break ;; esac
  read -r d t e < <(sed -n 's/.* \([0-9]*\)\/\([0-9]*\) ok .* ETA \([0-9]*\)s.*/\1 \2 \3/p' <<<"$line") || true
  [ -n "${e:-}" ] && [ $((t - d)) -eq 2 ] && etas="$etas $e"
  sleep 0.3
done
prev=999
for e in $etas; do
  [ "$e" -le "$prev" ] || fail "the last wave's ETA grew:$etas"
  prev=$e
done
[ -n "$etas" ] || fail "no ETA seen in the last wave"
wait_for "warming up point 2/2 conc 4" 
wait_for "measuring point 2/2 conc 4" 
wait_for "done point 2/2" 30
# the charts (23.7): a time axis (-Ns ... now); the short run spread over the
# chart's width is checked by check_ui_runview (short_run_uses_the_width)
screen | grep -E -- "│0 +-[0-9]+s.*now│" >/dev/null || fail "no time axis on the throughput chart"
tm send-keys -t "$UI_SESSION" q
wait_for "EXIT=0"
echo "ok: progress tells the truth (last wave ETAs:$etas)"

# ---------------------------------------------------------------- A/B header ETA in the first arm (23.4)
ui_start 80 24 XDG_DATA_HOME="$RESULTS" "$SERVETOP" run fixed2-bf16-h200-sglang \
  --configs "$TEST_DATA_DIR/ui/newcomer" --ab --conc 2 --num-prompts 8 --num-warmups 0
wait_for "waiting for its run" 30
wait_for "(both arms)" 30
screen | grep -q "waiting for its run" || fail "the ETA came only once the MTP arm ran"
screen | grep -E "A/B · running · ETA [0-9]+s \(both arms\)" >/dev/null || fail "no ETA in the header"
tm send-keys -t "$UI_SESSION" q
sleep 0.5
tm send-keys -t "$UI_SESSION" y
wait_for "EXIT=" 30
echo "ok: the A/B header has an ETA during the first arm"

# ---------------------------------------------------------------- gpus --watch (23.4)
"$SERVETOP" sim --port 0 --sim-port-file "$RESULTS/port" >/dev/null 2>&1 &
SIM_PID=$!
for _ in $(seq 100); do [ -s "$RESULTS/port" ] && break; sleep 0.1; done
[ -s "$RESULTS/port" ] || fail "the sim did not start"
ui_start 80 24 "$SERVETOP" gpus --watch --telemetry-interval 0.5 --telemetry sim \
  --telemetry-url "http://127.0.0.1:$(cat "$RESULTS/port")"
wait_for "telemetry: sim"
sleep 2.5 # several frames
history=$(tm display -p -t "$UI_SESSION" '#{history_size}')
[ "$history" -eq 0 ] || fail "gpus --watch pushed $history lines into the history"
[ "$(screen | grep -c 'telemetry: sim')" -eq 1 ] || fail "more than one frame on screen"
echo "ok: gpus --watch redraws in place"

# ---------------------------------------------------------------- attach form: a list (23.8)
PORT=$(cat "$RESULTS/port")
ui_start 80 24 SERVETOP_CONFIGS="$PROJECT_DIR/configs" XDG_DATA_HOME="$RESULTS" "$SERVETOP"
wait_for "Recipes"
tm send-keys -t "$UI_SESSION" A
wait_for "Attach to a running server"
for _ in $(seq 25); do tm send-keys -t "$UI_SESSION" BSpace; done
tm send-keys -t "$UI_SESSION" "http://127.0.0.1:$PORT" Tab BSpace "1,x"
wait_for "conc 1,x: expected up to 64 whole numbers >= 1"
tm send-keys -t "$UI_SESSION" BSpace 2 Tab BSpace BSpace BSpace BSpace 64 Tab BSpace BSpace BSpace 16
wait_for "the engine is told by what it serves"
tm send-keys -t "$UI_SESSION" Enter
wait_for "point 2/2 conc 2" 30
wait_for "done point 2/2" 30
# the charts (23.7): a time axis (-Ns ... now); the short run spread over the
# chart's width is checked by check_ui_runview (short_run_uses_the_width)
screen | grep -E -- "│0 +-[0-9]+s.*now│" >/dev/null || fail "no time axis on the throughput chart"
tm send-keys -t "$UI_SESSION" q
wait_for "EXIT="
echo "ok: the attach form measures a concurrency list"

# ---------------------------------------------------------------- attached spec method (23.5)
"$SERVETOP" sim --port 0 --sim-port-file "$RESULTS/spec.port" --enable-metrics --sim-speed 20 \
  --speculative-algorithm EAGLE --speculative-num-steps 3 --speculative-eagle-topk 1 \
  --speculative-num-draft-tokens 4 >/dev/null 2>&1 &
SPEC_PID=$!
for _ in $(seq 100); do [ -s "$RESULTS/spec.port" ] && break; sleep 0.1; done
[ -s "$RESULTS/spec.port" ] || fail "the speculative sim did not start"
XDG_DATA_HOME="$RESULTS/spec" "$SERVETOP" attach "http://127.0.0.1:$(cat "$RESULTS/spec.port")" \
  --conc 2 --num-prompts 4 --isl 64 --osl 16 --headless --quiet >/dev/null 2>&1 ||
  fail "attach to the speculative sim failed"
run_dir=$(ls -d "$RESULTS"/spec/servetop/runs/*attach*)
"$SERVETOP" compare "$run_dir" "$run_dir" | grep -q "speculative decoding: MTP" ||
  fail "compare does not name the attached server's method"
ui_start 80 24 SERVETOP_CONFIGS="$PROJECT_DIR/configs" XDG_DATA_HOME="$RESULTS/spec" "$SERVETOP"
wait_for "Recipes"
tm send-keys -t "$UI_SESSION" L
wait_for "Load a past run"
screen | grep -E " ok +1 mtp +- +(SIMULATED +)?attach-127" >/dev/null || fail "past runs do not show mtp"
tm send-keys -t "$UI_SESSION" Escape q q
echo "ok: an attached server's speculative method in past runs and compare"

# ---------------------------------------------------------------- llama.cpp knobs (23.8)
ui_start 80 24 SERVETOP_CONFIGS="$PROJECT_DIR/configs" XDG_DATA_HOME="$RESULTS" "$SERVETOP"
wait_for "Recipes"
tm send-keys -t "$UI_SESSION" / tiny-llamacpp Enter Tab
wait_for "tiny-llamacpp-cpu-draft"
for _ in $(seq 8); do tm send-keys -t "$UI_SESSION" J; done
wait_for "-c 4096   -np 4   -md tiny-draft.gguf"
screen | grep -q "Knobs (none)" && fail "Knobs (none) on a llama.cpp recipe"
tm send-keys -t "$UI_SESSION" q
echo "ok: llama.cpp recipes list their knobs"

# ---------------------------------------------------------------- a KV size llama.cpp rounds (23.8)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/servetop
if "$SERVETOP" engines --json 2>/dev/null | python3 -c 'import json, sys
sys.exit(0 if {e["name"]: e for e in json.load(sys.stdin)}["llamacpp"]["available"] else 1)' &&
   [ -s "$cache/models/tiny-target.gguf" ]; then
  # -c 1000 over 4 slots: llama.cpp makes 4 x 256
  ui_start 80 24 SERVETOP_CONFIGS="$PROJECT_DIR/configs" XDG_DATA_HOME="$RESULTS" "$SERVETOP" run tiny-llamacpp-cpu --conc 1 \
    --num-prompts 400 --set kv-cache=1000
  wait_for "KV 1.02k tok (asked 1.00k" 60
  tm send-keys -t "$UI_SESSION" q
  sleep 0.5
  tm send-keys -t "$UI_SESSION" y
  wait_for "EXIT=" 30
  echo "ok: a KV size llama.cpp rounds says so"
else
  echo "note: no llama-server or tiny models (scripts/setup-llamacpp.sh): the KV rounding part skipped"
fi
