#!/bin/bash
# Runs from the dashboard against the simulated server, in tmux: Enter on a
# recipe opens the launch form (overrides checked before the launch), Enter
# starts it, the run view shows the live figures and its keys, l shows the
# whole server log with search, + changes the concurrency, the run ends, b
# goes back; a runs the off/MTP pair into the A/B view; a run stopped with b
# leaves the dashboard open and no server behind; a last run is quit with
# q / y and its server must be gone after.
set -euo pipefail

: "${TEST_DATA_DIR:?tests/data}"
UI_NAME=run
source "$(dirname "$0")/../lib/tmux.sh"

RESULTS=$(mktemp -d)
ui_cleanup_more() { rm -rf "$RESULTS"; }

# The pid in the run view's header (the server's), into server_pid.
header_pid() {
  server_pid=$(screen | sed -n 's/.*pid \([0-9][0-9]*\) :.*/\1/p' | head -1)
  [ -n "$server_pid" ] || fail "no server pid in the header"
}

# Enter on the selected recipe, Enter in the launch form: the server comes up.
run_selected() {
  tm send-keys -t "$UI_SESSION" Enter
  wait_for "Enter start"
  tm send-keys -t "$UI_SESSION" Enter
  wait_for "server ready" 30
  header_pid
}

# The server the dashboard started is gone.
server_gone() {
  if kill -0 "$server_pid" 2>/dev/null; then
    fail "server $server_pid still running after $1"
  fi
}

# Results go to a temporary folder (XDG_DATA_HOME), not the user's.
ui_start 120 36 XDG_DATA_HOME="$RESULTS" "$SERVETOP" --configs "$TEST_DATA_DIR/ui/run"
wait_for "llama bf16 · h200 · sglang"
# Enter: the launch form (the engine probe answers on its own thread)
tm send-keys -t "$UI_SESSION" Enter
wait_for "Run llama-bf16-h200-sglang"
wait_for "engine   sim"
wait_for "[conc 4]"
wait_for "Enter start"
# overrides are checked before anything starts: a word without '=' is refused
tm send-keys -t "$UI_SESSION" Tab
tm send-keys -t "$UI_SESSION" -l "max-running-requests"
wait_for "write KEY=VALUE"
wait_for "fix the overrides to start"
tm send-keys -t "$UI_SESSION" Enter
wait_for "Run llama-bf16-h200-sglang" # still the form: nothing started
tm send-keys -t "$UI_SESSION" -l "=8"
wait_for "--max-running-requests 8 (added)"
tm send-keys -t "$UI_SESSION" Enter
wait_for "SIMULATED"
wait_for "engine sim"
wait_for "measuring point 1/1 conc 4" 30
header_pid
# the override reached the server's command line
grep -q '"--max-running-requests"' "$RESULTS"/servetop/runs/*/recipe.json ||
  fail "recipe.json lacks the override"

# the footer lists the run view's keys
wait_for "+/- conc  m knob  c cap  l log  b back  ? help  q quit"

# live figures: throughput, latency in ms, GPU memory from the sim backend
wait_for "tok/s"
wait_for "GiB/"
screen | grep -q "TTFT .*ms" || wait_for "TTFT" 5

# + doubles the concurrency without a restart (a new segment, saved apart): the footer says so
tm send-keys -t "$UI_SESSION" +
wait_for "concurrency 4 -> 8: a new segment, saved apart"
wait_for "conc 8"

# l: the whole server log, searched (while the point runs or after it ended)
tm send-keys -t "$UI_SESSION" l
wait_for "Server log · lines "
wait_for "following"
tm send-keys -t "$UI_SESSION" /
wait_for "search: /_"
tm send-keys -t "$UI_SESSION" -l "ready to roll"
tm send-keys -t "$UI_SESSION" Enter
wait_for "/ready to roll: 1 matching line"
tm send-keys -t "$UI_SESSION" n
wait_for ">[" # the current match is marked
tm send-keys -t "$UI_SESSION" q
wait_for "Throughput (last 10 s)"

# the run ends by itself; b goes back to the recipes and says where its folder is
wait_for "2 configurations measured: conc 4, conc 8" 90
tm send-keys -t "$UI_SESSION" b
wait_for "Recipes 2"
wait_for "run ok: $RESULTS/servetop/runs/"

# a: the launch form for the pair (the whole sweeps), then the off arm, then
# the MTP arm, side by side with their ratios
tm send-keys -t "$UI_SESSION" a
wait_for "A/B run: llama-bf16-h200-sglang, then llama-bf16-h200-sglang-mtp"
wait_for "[whole sweep (1 point)]"
tm send-keys -t "$UI_SESSION" Enter
wait_for "running the off arm, engine sim"
wait_for "running the MTP arm" 90
wait_for "both arms measured" 90
wait_for "MTP/off"
screen | grep -q "output tok/s .*[0-9]" || fail "no output tok/s in the A/B view"
screen | grep -q "[0-9]\.[0-9][0-9]×" || fail "no ratio in the A/B view"
screen | grep -q "accept len *-" || fail "the off arm's acceptance is not unknown"
wait_for "tok/s/user"
tm send-keys -t "$UI_SESSION" b
wait_for "Recipes 2"

# stop a run and stay in the dashboard: b while it runs asks, y stops the
# server, the browser says where the folder (what was measured) is
run_selected
tm send-keys -t "$UI_SESSION" b
wait_for "Stop the run and go back to the recipes? y / n"
tm send-keys -t "$UI_SESSION" y
wait_for "run stopped: $RESULTS/servetop/runs/" 30
wait_for "Recipes 2"
server_gone "stopping the run"

# a last run, quit while the server is up: asks, then stops it
run_selected
tm send-keys -t "$UI_SESSION" q
wait_for "stop it and quit? y / n"
tm send-keys -t "$UI_SESSION" y
wait_for "EXIT=0" 30
server_gone "quitting"

echo "PASS"
