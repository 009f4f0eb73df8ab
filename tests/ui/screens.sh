#!/bin/bash
# The launch form, the run view, the log view and the help over them at the
# three sizes and in the plain modes: in ASCII with NO_COLOR from 80x24, a
# resize to 200x50 while the log view is open, then 100x32; every frame is
# checked for UTF-8 glyphs, and the footer for the screen's keys. The run
# (the simulated server with fixed latencies: 80 requests of 2 s at
# concurrency 8, so it still runs when the test stops it) is stopped with b / y, which leaves the dashboard
# open and no server behind; q quits.
set -euo pipefail

: "${TEST_DATA_DIR:?tests/data}"
UI_NAME=screens
source "$(dirname "$0")/../lib/tmux.sh"

RESULTS=$(mktemp -d)
ui_cleanup_more() { rm -rf "$RESULTS"; }

size_is() { # size_is COLS ROWS: the frame fills the resized window
  local rows cols
  rows=$(screen | wc -l)
  cols=$(screen | awk '{ if (length($0) > m) m = length($0) } END { print m }')
  [ "$rows" -ge "$2" ] && [ "$cols" -ge $(($1 - 1)) ] || fail "frame is ${cols}x$rows, not $1x$2"
}

ui_start 80 24 NO_COLOR=1 XDG_DATA_HOME="$RESULTS" "$SERVETOP" --configs "$TEST_DATA_DIR/ui/bench" --ascii
wait_for "fixed bf16 | h200 | sglang"
ascii_only "browser"

# the launch form at 80x24
tm send-keys -t "$UI_SESSION" Enter
wait_for "+-[ Run fixed-bf16-h200-sglang ]"
wait_for "Enter start  h/l pick  Tab overrides  ? help  Esc cancel"
ascii_only "launch form"
tm send-keys -t "$UI_SESSION" '?'
wait_for "Launch form keys"
ascii_only "launch form help"
tm send-keys -t "$UI_SESSION" x
wait_for "Enter start"
tm send-keys -t "$UI_SESSION" Enter
wait_for "SIMULATED"
wait_for "measuring point 1/1" 30
server_pid=$(screen | sed -n 's/.*pid \([0-9][0-9]*\) :.*/\1/p' | head -1)
[ -n "$server_pid" ] || fail "no server pid in the header"
wait_for "+/- conc  m knob  c cap  l log  b back  ? help  q quit"
ascii_only "run view"

# the log view, then a resize to 200x50 while it is open
tm send-keys -t "$UI_SESSION" l
wait_for "+-[ Server log | lines "
wait_for "f follow  / search  n/N match  ? help  q back"
ascii_only "log view"
tm resize-window -t "$UI_SESSION" -x 200 -y 50
wait_for "ready to roll"
size_is 200 50
tm send-keys -t "$UI_SESSION" '?'
wait_for "Server log keys"
wait_for "the next / the previous match"
ascii_only "log view help at 200x50"
tm send-keys -t "$UI_SESSION" x q
wait_for "Throughput (last 10 s)"
size_is 200 50
ascii_only "run view at 200x50"

# 100x32: the run view, b asks, y stops the run and the browser stays
tm resize-window -t "$UI_SESSION" -x 100 -y 32
wait_for "Latency"
size_is 100 32
tm send-keys -t "$UI_SESSION" b
wait_for "Stop the run and go back to the recipes? y / n"
tm send-keys -t "$UI_SESSION" y
wait_for "run stopped: " 30
wait_for "+-[ Recipes 1 ]"
ascii_only "browser after the run"
kill -0 "$server_pid" 2>/dev/null && fail "server $server_pid still running after stopping the run"
tm send-keys -t "$UI_SESSION" q
wait_for "EXIT=0"
echo "PASS"
