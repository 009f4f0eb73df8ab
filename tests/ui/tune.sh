#!/bin/bash
# The Tune form and the Tune view at 80x24, against the simulated server: t in
# the browser opens the form; a bad SLO and a bad knob are refused with the
# error in the form (Enter starts nothing); a short search (one knob, short
# requests, a budget) starts the Tune view, whose chart, table and progress
# fill; p switches the percentile; q asks, y stops the search and keeps what was
# measured on screen and in its tune folder; Esc goes back to the recipes,
# which say where the folder is; q quits, and no process the dashboard started
# is left.
set -euo pipefail

: "${TEST_DATA_DIR:?tests/data}"
UI_NAME=tune
source "$(dirname "$0")/../lib/tmux.sh"

RESULTS=$(mktemp -d)
# every process the dashboard starts inherits the mark
leftovers() { TUNE_UI_TEST_MARK=$RESULTS python3 "$(dirname "$0")/../lib/marked_procs.py" TUNE_UI_TEST_MARK; }
ui_cleanup_more() {
  local left
  left=$(leftovers)
  for p in $left; do # comm(pid): the dashboard's children, if a failure left any
    p=${p##*(}
    kill -KILL "${p%)}" 2>/dev/null || true
  done
  rm -rf "$RESULTS"
}

key() { tm send-keys -t "$UI_SESSION" "$@"; }
# Empties the field that has the keys (40 backspaces) and types text into it.
retype() {
  for _ in $(seq 40); do key BSpace; done
  [ -z "$1" ] || key -l "$1"
}

ui_start 80 24 TUNE_UI_TEST_MARK="$RESULTS" XDG_DATA_HOME="$RESULTS" "$SERVETOP" \
  --configs "$TEST_DATA_DIR/ui/run"
wait_for "llama bf16 · h200 · sglang"
wait_for "t tune"

# t: the form, with defaults for the recipe's engine and its MTP twin
key t
wait_for "Tune llama-bf16-h200-sglang"
wait_for "ttft_p99_ms=2000,tpot_p99_ms=50"
wait_for "spec=off,on"
wait_for "Enter start"

# a bad SLO: the error in the form, Enter starts nothing
retype "ttft_p98_ms=5"
wait_for "unknown target"
wait_for "fix the field in red to start"
key Enter
sleep 0.5
wait_for "Tune llama-bf16-h200-sglang" # still the form
retype "min_tok_s_per_user=100"
wait_gone "unknown target"

# a bad knob, then the search: one knob, short requests, a budget
key Tab
retype "max-batch=8:4:2"
wait_for "knob 1: "
retype "max-batch=4,8"
for _ in 1 2; do key Tab; retype ""; done # no KV-cache knob, no spec
key Tab Tab
retype 64
key Tab
retype 32
key Tab
retype "2m"
wait_for "1 knob, 2 settings"
key Enter

# the Tune view fills: progress against the budget, points, the table
wait_for "servetop · tune llama-bf16-h200-sglang · searching" 30
wait_for "SIMULATED"
wait_for "of 2m00s budget"
wait_for "Throughput per GPU vs interactivity at p99"
wait_for "SLO 100 tok/s/user"
wait_for "A max-batch=8" 30
wait_for "now A max-batch=8 at concurrency" 30
screen | grep -qE " [2-9] points " || wait_for " 2 points " 60
screen | grep -qE "max-batch=8 +measuring +[0-9]+ +[0-9.]+k? \[" ||
  fail "no goodput with its interval in the table"
ls "$RESULTS"/servetop/runs/*-tune-llama-bf16-h200-sglang >/dev/null ||
  fail "no tune folder"

# p: the percentile switch: the driver keeps each point's latencies at every percentile
# (tune_point.by_stat), so p shows them at p50
key p
screen | grep -qF "p99 only" && fail "the driver kept only p99: no p50/p90 to switch to"
wait_for "at p50 (the search judges p99)" 5
wait_for "interactivity at p50"

# q asks; y stops the search and keeps what was measured on screen
key q
wait_for "Stop the search? y / n"
key y
wait_for "· stopped" 60
wait_for "q quit"
screen | grep -qE "A max-batch=8 +[a-z]+ +[0-9]+ +[0-9.]+k? \[" ||
  fail "the table lost what was measured"
tune_dir=$(ls -d "$RESULTS"/servetop/runs/*-tune-llama-bf16-h200-sglang)
[ -s "$tune_dir/tune.json" ] || fail "no tune.json in $tune_dir"
grep -q '"probes"' "$tune_dir/tune.json" || fail "tune.json lacks its probes"
# the search is over: the dashboard has no child left (its server is down)
dash=$(pgrep -P "$(tm list-panes -t "$UI_SESSION" -F '#{pane_pid}')" servetop || true)
[ -n "$dash" ] || fail "no dashboard process"
children=$(pgrep -P "$dash" || true)
[ -z "$children" ] || fail "the dashboard still has children after the stop: $children"

# Esc: back to the recipes, which say where the folder is
key Escape
wait_for "tune stopped:"
key q
wait_for "EXIT=0" 30
left=$(leftovers)
[ -z "$left" ] || fail "left behind after quitting: $left"
echo "PASS"
