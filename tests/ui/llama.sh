#!/bin/bash
# The run view on llama.cpp's real llama-server (the setup script's cache; the
# test skips without it), in tmux at 100x32: the launch form says the engine,
# + past the slot count (-np) says requests queue in the server, c restarts
# with more slots (a smaller context each), m with another KV size (-c) shows
# the new capacity "(was N)", the log view and its search, b stops and stays;
# a draft model loaded without --spec-type shows MISLABELLED; a llama-server
# this test starts is attached to from the browser's Attach form.
set -euo pipefail

: "${TEST_DATA_DIR:?tests/data}"
: "${PROJECT_DIR:?the source tree}"
cache=${XDG_CACHE_HOME:-$HOME/.cache}/servetop
LLAMA=${LLAMA_SERVER:-$cache/bin/llama-server}
if [[ ! -x $LLAMA || ! -s $cache/models/tiny-target.gguf || ! -s $cache/models/tiny-draft.gguf ]]; then
  if [[ ${SERVETOP_REQUIRE_LLAMA_SERVER:-0} == 1 ]]; then
    echo "FAIL: SERVETOP_REQUIRE_LLAMA_SERVER=1 but no llama-server in $cache"; exit 1
  fi
  echo "SKIP: no llama-server or tiny models in $cache (scripts/setup-llamacpp.sh)"; exit 77
fi
UI_NAME=llama
source "$(dirname "$0")/../lib/tmux.sh"

WORK=$(mktemp -d)
LLAMA_PID=
ui_cleanup_more() {
  if [[ -n $LLAMA_PID ]]; then kill "$LLAMA_PID" 2>/dev/null || true; wait "$LLAMA_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
# the bundled pair, the draft one without --spec-type (the real llama.cpp
# trap); points long enough to act on while they run (stopped by the test)
mkdir -p "$WORK/configs"
grep -v -- "--spec-type draft-simple" "$PROJECT_DIR/configs/llamacpp-tiny-cpu.yaml" |
  sed 's/num-prompts-factor: 4/num-prompts-factor: 400/' >"$WORK/configs/tiny.yaml"
RUN=(XDG_DATA_HOME="$WORK/xdg" "$SERVETOP" --llama-server "$LLAMA" --configs "$WORK/configs")

header_pid() { screen | sed -n 's/.*pid \([0-9][0-9]*\) :.*/\1/p' | head -1; }

cd "$WORK" # the dashboard shows paths below the directory it starts in relative to it
ui_start 100 32 "${RUN[@]}"
wait_for "tiny f16 · cpu · llamacpp"
wait_for "1 group · 1 row · 0 MTP · 1 draft" # a draft-model twin is not counted as MTP
wait_for "configs/tiny.yaml:" && ! screen | grep -q "$WORK/configs/tiny.yaml" ||
  fail "a path below the start directory shown whole"
tm send-keys -t "$UI_SESSION" Enter
wait_for "Run tiny-llamacpp-cpu"
wait_for "engine   llamacpp"
wait_for "KEY=VALUE words: ctx-size=... parallel=..." # llama.cpp's own flags, not SGLang's
tm send-keys -t "$UI_SESSION" l l # conc 4
wait_for "[conc 4]"
tm send-keys -t "$UI_SESSION" Tab
tm send-keys -t "$UI_SESSION" -l "num-prompts-is-not-a-flag"
wait_for "write KEY=VALUE"
for _ in $(seq 25); do tm send-keys -t "$UI_SESSION" BSpace; done
tm send-keys -t "$UI_SESSION" -l -- "-t=1"
wait_for "-t 1 -> 1"
tm send-keys -t "$UI_SESSION" Enter
wait_for "measuring point 1/1 conc 4" 30
wait_for "cap 4"
wait_for "KV 4.10k tok 1.02k/slot"
server_pid=$(header_pid)

# + past the slots: the requests queue in llama-server
tm send-keys -t "$UI_SESSION" +
wait_for "conc 4 -> 8 > cap 4: 4 queue in server; c raises it"
wait_for "cap 4!"
# c: -np 8, the same -c shared by twice the slots
tm send-keys -t "$UI_SESSION" c
wait_for "restarted with max-batch=8" 30
wait_for "cap 8"
wait_for "KV 4.10k tok 512/slot"
wait_for "measuring point 1/1 conc 8"
kill -0 "$server_pid" 2>/dev/null && fail "the old llama-server outlived the restart"
# m: another KV size (-c): the new capacity and the old one
tm send-keys -t "$UI_SESSION" m
wait_for "KV cache (--ctx-size) or KEY=VALUE: _"
tm send-keys -t "$UI_SESSION" -l "8192"
tm send-keys -t "$UI_SESSION" Enter
wait_for "restarted with kv-cache=8192" 30
wait_for "KV 8.19k tok (was 4.10k) 1.02k/slot"
server_pid=$(header_pid)
# the log view, searched, on llama-server's own lines
tm send-keys -t "$UI_SESSION" l
wait_for "Server log · lines "
tm send-keys -t "$UI_SESSION" /
tm send-keys -t "$UI_SESSION" -l "n_ctx_slot"
tm send-keys -t "$UI_SESSION" Enter
wait_for "matching line"
tm send-keys -t "$UI_SESSION" q
wait_for "Throughput (last 10 s)"
# b: stop and stay
tm send-keys -t "$UI_SESSION" b
wait_for "Stop the run and go back to the recipes? y / n"
tm send-keys -t "$UI_SESSION" y
wait_for "run stopped: " 30
kill -0 "$server_pid" 2>/dev/null && fail "llama-server $server_pid still running after b / y"

# the draft model without --spec-type: measured, and MISLABELLED
tm send-keys -t "$UI_SESSION" Tab # the row's draft recipe
tm send-keys -t "$UI_SESSION" Enter
wait_for "Run tiny-llamacpp-cpu-draft"
tm send-keys -t "$UI_SESSION" Enter
wait_for "MISLABELLED" 60
wait_for "label disagrees"
tm send-keys -t "$UI_SESSION" b
wait_for "Stop the run and go back to the recipes? y / n"
tm send-keys -t "$UI_SESSION" y
wait_for "run stopped: " 30

# Attach: a llama-server started here, not by servetop
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$LLAMA" -m "$cache/models/tiny-target.gguf" --alias tiny-target -c 2048 -np 2 -t 1 \
  --host 127.0.0.1 --port "$PORT" --metrics >"$WORK/llama.log" 2>&1 &
LLAMA_PID=$!
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$PORT/health" >/dev/null 2>&1 && break; sleep 0.1; done
wait_for "Recipes 2" 30
tm send-keys -t "$UI_SESSION" A
wait_for "Attach to a running server"
for _ in $(seq 30); do tm send-keys -t "$UI_SESSION" BSpace; done
tm send-keys -t "$UI_SESSION" -l "http://127.0.0.1:$PORT"
tm send-keys -t "$UI_SESSION" Tab
tm send-keys -t "$UI_SESSION" BSpace
tm send-keys -t "$UI_SESSION" -l "4"
tm send-keys -t "$UI_SESSION" Tab
for _ in $(seq 6); do tm send-keys -t "$UI_SESSION" BSpace; done
tm send-keys -t "$UI_SESSION" -l "64"
tm send-keys -t "$UI_SESSION" Tab
for _ in $(seq 6); do tm send-keys -t "$UI_SESSION" BSpace; done
tm send-keys -t "$UI_SESSION" -l "16"
tm send-keys -t "$UI_SESSION" Enter
wait_for "attached :$PORT, not launched by servetop" 30
wait_for "llamacpp"
wait_for "cap 2"
wait_for "conc 4 > cap 2: 2 queue in the server" 30
tm send-keys -t "$UI_SESSION" m
wait_for "cannot restart it"
wait_for "configuration measured" 60
tm send-keys -t "$UI_SESSION" q
wait_for "EXIT=0" 30
kill -0 "$LLAMA_PID" 2>/dev/null || fail "the attached llama-server was stopped"
echo "PASS"
