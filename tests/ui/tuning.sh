#!/bin/bash
# Tuning in the run view, in tmux at 80x24 then 100x32 and 200x50, on the
# simulated server with the batch cap at the point's concurrency (as every
# bundled SGLang recipe has it): `servetop run` in a terminal opens the run
# view; + past the cap says the requests queue in the server and marks the
# chart; c restarts with the cap raised and the concurrency stays; a value the
# engine refuses stops nothing; a restart whose server cannot start is undone
# and the run goes on; m with another KV size shows the new capacity and
# "(was N)" whole at 80 columns; b stops the run and stays; q quits.
set -euo pipefail

: "${TEST_DATA_DIR:?tests/data}"
UI_NAME=tuning
source "$(dirname "$0")/../lib/tmux.sh"

RESULTS=$(mktemp -d)
ui_cleanup_more() { rm -rf "$RESULTS"; }

header_pid() { screen | sed -n 's/.*pid \([0-9][0-9]*\) :.*/\1/p' | head -1; }

ui_start 80 24 XDG_DATA_HOME="$RESULTS" "$SERVETOP" run cap-bf16-h200-sglang \
  --configs "$TEST_DATA_DIR/run/recipes" --conc 2 --num-prompts 5000
wait_for "measuring point 1/1 conc 2" 30
screen | grep -q "not in this build" && fail "servetop run in a terminal did not open the run view"
wait_for "cap 2"
server_pid=$(header_pid)
[ -n "$server_pid" ] || fail "no server pid in the header"

# + past the batch cap: said where it is seen, marked on the charts
tm send-keys -t "$UI_SESSION" +
wait_for "conc 2 -> 4 > cap 2: 2 queue in server; c raises it"
wait_for "> cap 2"
wait_for "cap 2!"

# a value the engine refuses: nothing stops
tm send-keys -t "$UI_SESSION" m
wait_for "KV cache (--mem-fraction-static) or KEY=VALUE: _"
tm send-keys -t "$UI_SESSION" -l "kv-cache=1.5"
tm send-keys -t "$UI_SESSION" Enter
wait_for "not restarted: kv-cache=1.5: --mem-fraction-static"
[ "$(header_pid)" = "$server_pid" ] || fail "a refused knob restarted the server"

# c: the cap raised to the concurrency; the concurrency stays 4
tm send-keys -t "$UI_SESSION" c
wait_for "restarted with max-batch=4" 30
wait_for "measuring point 1/1 conc 4"
wait_for "cap 4"
kill -0 "$server_pid" 2>/dev/null && fail "the old server $server_pid outlived the restart"
server_pid=$(header_pid)

# a restart whose server cannot start: undone, the run goes on at conc 4
tm send-keys -t "$UI_SESSION" m
tm send-keys -t "$UI_SESSION" -l "sim-fault=nope"
tm send-keys -t "$UI_SESSION" Enter
wait_for "restart with sim-fault=nope failed" 30
wait_for "measuring point 1/1 conc 4" 30
server_pid=$(header_pid)

# another KV size: the new capacity and the old one, whole at 80 columns
tm send-keys -t "$UI_SESSION" m
tm send-keys -t "$UI_SESSION" -l "0.5"
tm send-keys -t "$UI_SESSION" Enter
wait_for "restarted with kv-cache=0.5" 30
wait_for "(was "
screen | grep -qE "KV [0-9.]+k tok \(was [0-9.]+k\)" || fail "(was N) is not whole at 80x24"
server_pid=$(header_pid)

# bigger terminals: the same, with room
tm resize-window -t "$UI_SESSION" -x 100 -y 32
wait_for "(was "
tm resize-window -t "$UI_SESSION" -x 200 -y 50
wait_for "(was "
wait_for "conc 4 run"

# b stops the run and stays in the dashboard
tm send-keys -t "$UI_SESSION" b
wait_for "Stop the run and go back to the recipes? y / n"
tm send-keys -t "$UI_SESSION" y
wait_for "run stopped: $RESULTS/servetop/runs/" 30
kill -0 "$server_pid" 2>/dev/null && fail "server $server_pid still running after b / y"
tm send-keys -t "$UI_SESSION" q
wait_for "run interrupted: stopped at concurrency 4" 10
wait_for "EXIT=130"
manifest=$(ls "$RESULTS"/servetop/runs/*/manifest.json)
grep -q '"max-batch=4"' "$manifest" || fail "the manifest lacks the cap raised"
grep -q 'sim-fault' "$manifest" && fail "the undone restart stayed in the overrides"
echo "PASS"
