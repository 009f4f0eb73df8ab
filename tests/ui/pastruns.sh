#!/bin/bash
# Past runs in the A/B view, in a real terminal: L in the browser opens the
# list of run folders under --results (tests/data/ui/past, read only), Enter
# loads one into the off column, Tab + Enter the other into the MTP column,
# the ratio column compares them, [ ] and the mouse wheel step through the
# off sweep's concurrencies, a click selects a column, b goes back, q quits.
set -euo pipefail

: "${TEST_DATA_DIR:?tests/data}"
UI_NAME=past
source "$(dirname "$0")/../lib/tmux.sh"

PAST="$TEST_DATA_DIR/ui/past"
ui_start 100 32 TERM=screen "$SERVETOP" --configs "$TEST_DATA_DIR/ui" --results "$PAST"
wait_for "Recipes 4"
wait_for "L past  A attach"

tm send-keys -t "$UI_SESSION" L
wait_for "Load a past run into the A/B view"
wait_for "from $PAST"
wait_for "> 2026-12-02 04:33  interrupted     2 none  off    SIMULATED qwen3.5-fp8-"
tm send-keys -t "$UI_SESSION" '?'
wait_for "Past-run list keys"
tm send-keys -t "$UI_SESSION" x
tm send-keys -t "$UI_SESSION" Enter
wait_for "off column: loaded 20261201-040000"
wait_for "past run · conc 8 · 2 points"

tm send-keys -t "$UI_SESSION" L
wait_for "Load a past run"
tm send-keys -t "$UI_SESSION" Down Tab Enter
wait_for "MTP column: loaded 20261130-050000"
wait_for "MTP SIMULATED · qwen3.5-fp8-h200"
# the recorded MTP run used the chat template, the off run did not: not like with like,
# said in red, no ratio (output tok/s MTP / off at conc 8 would be 1.38×)
wait_for "UNLIKE: chat template differs"
screen | grep -q "1.38×" && fail "a ratio of unlike runs is shown"
screen | grep -q "output tok/s *17.6k" || fail "off column lacks its output tok/s"

# [ shows the off sweep's conc 4 point (MTP has only 8: its nearest)
tm send-keys -t "$UI_SESSION" '['
wait_for "past run · conc 4 · 2 points"
screen | grep -q "output tok/s *10.0k" || fail "conc 4 point not shown"
tm send-keys -t "$UI_SESSION" ']'
wait_for "past run · conc 8 · 2 points"

# the mouse: wheel up over the off column steps back, a click selects a column
mouse 64 10 10
wait_for "past run · conc 4 · 2 points"
screen | grep -qF "MTP SIMULATED · qwen3.5-fp8-h200… <" || fail "MTP column not selected after loading"
mouse 0 10 10
mouse 3 10 10
wait_for "off SIMULATED · qwen3.5-fp8-h200… <"

tm send-keys -t "$UI_SESSION" '?'
wait_for "A/B view keys"
tm send-keys -t "$UI_SESSION" x b
wait_for "Recipes 4"
tm send-keys -t "$UI_SESSION" q
wait_for "EXIT=0"
echo "PASS"
