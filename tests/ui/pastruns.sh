#!/bin/bash
# Past runs in the A/B view, in a real terminal: L in the browser opens the
# list of run folders under --results (tests/data/ui/past, read only), Enter
# loads one into the off column, Tab + Enter the other into the MTP column,
# the ratio column compares them, [ ] and the mouse wheel step through the
# off sweep's concurrencies, a click selects a column, b goes back, q quits.
set -euo pipefail

: "${SERVETOP:?path of the servetop binary}"
: "${TEST_DATA_DIR:?tests/data}"
command -v tmux >/dev/null || { echo "SKIP: no tmux"; exit 0; }

SESSION=past
tm() { tmux -L "servetop-ui-past-$$" "$@"; }
# tmux leaves its socket file behind after kill-server
cleanup() {
  tm kill-server 2>/dev/null || true
  rm -f "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/servetop-ui-past-$$"
}
trap cleanup EXIT INT TERM

screen() { tm capture-pane -p -t "$SESSION"; }
fail() {
  echo "FAIL: $*" >&2
  echo "---- screen ----" >&2
  screen >&2 || true
  exit 1
}
wait_for() {  # up to 5 s
  for _ in $(seq 50); do
    if screen | grep -qF -- "$1"; then return 0; fi
    sleep 0.1
  done
  fail "screen never showed '$1'"
}
# An xterm mouse event (X10 encoding, as ncurses reads it under TERM=screen):
# button code, then 1-based column and row, each + 32.
mouse() {  # mouse BUTTON COL0 ROW0
  local b=$(( $1 + 32 )) x=$(( $2 + 33 )) y=$(( $3 + 33 ))
  tm send-keys -t "$SESSION" -l "$(printf '\033[M%b%b%b' "\\$(printf %03o $b)" \
    "\\$(printf %03o $x)" "\\$(printf %03o $y)")"
}

PAST="$TEST_DATA_DIR/ui/past"
tm new-session -d -s "$SESSION" -x 100 -y 32 \
  "env LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=screen $SERVETOP --configs $TEST_DATA_DIR/ui --results $PAST; echo \"EXIT=\$?\"; sleep 30"
wait_for "Recipes 4"
wait_for "L past runs"

tm send-keys -t "$SESSION" L
wait_for "Load a past run into the A/B view"
wait_for "from $PAST"
wait_for "> 2026-12-02 04:33  interrupted     2 none  off    qwen3.5-fp8-h200-sglang"
tm send-keys -t "$SESSION" '?'
wait_for "Past-run list keys"
tm send-keys -t "$SESSION" x
tm send-keys -t "$SESSION" Enter
wait_for "off column: loaded 20261201-040000"
wait_for "past run · conc 8 · 2 points"

tm send-keys -t "$SESSION" L
wait_for "Load a past run"
tm send-keys -t "$SESSION" Down Tab Enter
wait_for "MTP column: loaded 20261130-050000"
wait_for "MTP · qwen3.5-fp8-h200-sglang-mtp"
wait_for "1.38×"       # output tok/s, MTP / off at conc 8
screen | grep -q "output tok/s *17.6k" || fail "off column lacks its output tok/s"

# [ shows the off sweep's conc 4 point (MTP has only 8: its nearest)
tm send-keys -t "$SESSION" '['
wait_for "past run · conc 4 · 2 points"
screen | grep -q "output tok/s *10.0k" || fail "conc 4 point not shown"
tm send-keys -t "$SESSION" ']'
wait_for "past run · conc 8 · 2 points"

# the mouse: wheel up over the off column steps back, a click selects a column
mouse 64 10 10
wait_for "past run · conc 4 · 2 points"
screen | grep -qF "MTP · qwen3.5-fp8-h200-sglang-mtp <" || fail "MTP column not selected after loading"
mouse 0 10 10
mouse 3 10 10
wait_for "off · qwen3.5-fp8-h200-sglang <"

tm send-keys -t "$SESSION" '?'
wait_for "A/B view keys"
tm send-keys -t "$SESSION" x b
wait_for "Recipes 4"
tm send-keys -t "$SESSION" q
wait_for "EXIT=0"
echo "PASS"
