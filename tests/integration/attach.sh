#!/usr/bin/env bash
# servetop attach: a server servetop did not launch (a `servetop sim` this
# test starts, and llama.cpp's llama-server when the setup script's cache has
# it) is measured headless with the same pipeline as servetop run: the engine
# told by what it serves, one result per point, the run folder says attached,
# the server is never stopped; export refuses it; nothing answers: exit 1.
source "$(dirname "$0")/../lib/harness.sh"
RESULTS=$WORK/results

start_sim attach --enable-metrics --sim-speed 3
out=$("$SERVETOP" attach "http://127.0.0.1:$PORT" --conc-list 1,2 --isl 128 --osl 32 \
  --num-prompts-factor 4 --headless --results "$RESULTS" --json 2>&1) && rc=0 || rc=$?
check "attach to the sim: exit 0 ($out)" test "$rc" -eq 0
# (factor 4: 8 requests, or more: raised from the warm-ups so that a point lasts 5 s)
check "the engine is told from what it serves (sim)" \
  grep -qE "\[sim SIMULATED\] point 2/2 c=2 done: ([0-9]+)/\1 done" <<<"$out"
check "the per-point table" grep -qE "^2 +2 done +[0-9]+/0 " <<<"$out"
check "--json outcome" grep -q '"status":"ok"' <<<"$out"
dir=$(ls -d "$RESULTS"/*attach-127.0.0.1-"$PORT" 2>/dev/null | head -1)
check "a run folder" test -n "$dir"
check "two results" test -f "$dir/result-conc1.json" -a -f "$dir/result-conc2.json"
check "recipe.json says attached" grep -qE "\"attached_url\":[[:space:]]+\"http://127.0.0.1:$PORT\"" "$dir/recipe.json"
check "the server still runs" kill -0 "$SIM_PID"
"$SERVETOP" export "$dir" --inferencex >/dev/null 2>&1 && rc=0 || rc=$?
check "export refuses an attached run (exit 1)" test "$rc" -eq 1

# nothing answers: a failed run (exit 1), said why, quickly
DEAD=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
out=$("$SERVETOP" attach "http://127.0.0.1:$DEAD" --ready-timeout 1 --headless --results "$RESULTS" 2>&1) && rc=0 || rc=$?
check "attach to nothing fails (exit 1)" test "$rc" -eq 1
check "attach to nothing says what" grep -q "nothing answers GET http://127.0.0.1:$DEAD/v1/models" <<<"$out"

# llama.cpp's llama-server started here, not by servetop (when it is built)
if find_llama_server; then
  start_llama llama -m "$LLAMA_TARGET" --alias tiny-target -c 2048 -np 2 -t 1
  out=$("$SERVETOP" attach "http://127.0.0.1:$PORT" --conc 4 --isl 64 --osl 16 --num-prompts 8 \
    --headless --results "$RESULTS" 2>&1) && rc=0 || rc=$?
  check "attach to llama-server: exit 0 ($out)" test "$rc" -eq 0
  check "llama.cpp told from its /metrics" grep -q "\[llamacpp\] point 1/1 c=4 done: 8/8" <<<"$out"
  check "llama-server still runs" kill -0 "$LLAMA_PID"
  # with a draft model: the method measured is named in past runs and compare
  # (the attached run has no recipe label of its own: issue 23.5)
  start_llama llama-draft -m "$LLAMA_TARGET" -md "$LLAMA_DRAFT" --spec-type draft-simple \
    --alias tiny-target -c 2048 -np 2 -t 1 -td 1
  out=$("$SERVETOP" attach "http://127.0.0.1:$PORT" --conc 2 --isl 32 --osl 16 --num-prompts 4 \
    --headless --results "$RESULTS/draft" 2>&1) && rc=0 || rc=$?
  check "attach to llama-server with a draft model: exit 0 ($out)" test "$rc" -eq 0
  ddir=$(ls -d "$RESULTS"/draft/*attach* 2>/dev/null | head -1)
  check "its manifest names the method (draft_model)" \
    grep -qE '"spec_decoding_label":[[:space:]]+"draft_model"' "$ddir/manifest.json"
  check "compare names it" grep -q "speculative decoding: draft model" \
    <<<"$("$SERVETOP" compare "$ddir" "$ddir" 2>&1)"
else
  echo "note: no $LLAMA_MISSING (scripts/setup-llamacpp.sh): its part skipped"
fi
finish "attach"
