#!/bin/bash
# The recipe browser in a real terminal: servetop runs in a detached tmux
# session (its own server socket), keys go in with send-keys and the screen
# comes back with capture-pane. 80x24, a resize to 200x50, and too small;
# header counts that follow the filter; the footer's keys; the problems list
# (a file that does not load, doctor's findings) at 100x32 and in ASCII; the
# launch form opened and cancelled.
set -euo pipefail

: "${TEST_DATA_DIR:?tests/data}"
UI_NAME=browser
source "$(dirname "$0")/../lib/tmux.sh"

# ---------------------------------------------------------------- 80x24
ui_start 80 24 "$SERVETOP" --configs "$TEST_DATA_DIR/ui"
wait_for "Recipes 4"
wait_for "demo fp8 · h200 · sglang"
wait_for "other bf16 · b200 · vllm"
screen | grep -qE "> 8k1k +off +mtp" || fail "the first row is not the 8k1k off/mtp pair"
wait_for "Server command"
wait_for "Enter run"

wait_for "Enter run a A/B Tab off/mtp / filter p lint L past A attach t tune ? help q quit"
wait_for "2 groups · 3 rows · 1 MTP"

# incremental filter: each key narrows the list at once, the counts follow it
tm send-keys -t "$UI_SESSION" / v l
wait_for "filter: /vl_"
wait_gone "demo fp8"
wait_for "other bf16 · b200 · vllm"
wait_for "1 group · 1 row · 0 MTP"
wait_for "Recipes 1/4"
tm send-keys -t "$UI_SESSION" x
wait_for "no recipe matches the filter"
tm send-keys -t "$UI_SESSION" BSpace Enter
wait_for "filter: vl"
tm send-keys -t "$UI_SESSION" Escape
wait_for "demo fp8 · h200 · sglang"
wait_for "other-bf16-b200-vllm"   # the selection stays where the filter left it

# right picks the MTP side; its detail shows the speculative flags
tm send-keys -t "$UI_SESSION" Home Right
wait_for "demo-fp8-h200-sglang-mtp"
tm send-keys -t "$UI_SESSION" J J   # scroll the detail pane to the rest of the command
wait_for "--speculative-algorithm EAGLE"

# help lists the keys; any key closes it
tm send-keys -t "$UI_SESSION" '?'
wait_for "this help (any key closes it)"
tm send-keys -t "$UI_SESSION" x
wait_gone "this help (any key closes it)"

# a row without an MTP twin cannot run as A/B, and says why
tm send-keys -t "$UI_SESSION" End a
wait_for "has no MTP twin: no A/B run"

# Enter: the launch form over the browser; Esc closes it, nothing ran
tm send-keys -t "$UI_SESSION" Enter
wait_for "Run other-bf16-b200-vllm"
wait_for "[conc 16]"
tm send-keys -t "$UI_SESSION" Escape
wait_gone "Run other-bf16-b200-vllm"

# ---------------------------------------------------------------- resize to 200x50
tm resize-window -t "$UI_SESSION" -x 200 -y 50
wait_for "tp4 c16"
wait_for "1024_8192"   # the sequence-tag column fits the longest tag
[ "$(screen | wc -l)" -ge 50 ] || fail "screen is not 50 rows"
screen | awk 'length($0) > 150 { wide = 1 } END { exit !wide }' || fail "not redrawn at 200 columns"
wait_for "Doctor's findings"

# too small: says so, and comes back when the terminal grows again
tm resize-window -t "$UI_SESSION" -x 60 -y 20
wait_for "too small: servetop needs 80x24"
tm resize-window -t "$UI_SESSION" -x 80 -y 24
wait_for "Recipes 4"

# q quits with status 0
tm send-keys -t "$UI_SESSION" q
wait_for "EXIT=0"

# ---------------------------------------------------------------- 200x50 from the start, ASCII, mono, NO_COLOR
ui_start 200 50 NO_COLOR=1 "$SERVETOP" --configs "$TEST_DATA_DIR/ui" --ascii --theme mono
wait_for "+-[ Recipes 4 ]"
wait_for "demo fp8 | h200 | sglang"
screen | grep -q "[╭│·]" && fail "UTF-8 glyphs in --ascii mode"
tm send-keys -t "$UI_SESSION" q
wait_for "EXIT=0"

# ---------------------------------------------------------------- problems, 100x32
ui_start 100 32 "$SERVETOP" --configs "$TEST_DATA_DIR/ui/problems"
wait_for "Recipes 1"
wait_for " findings, " # the header counts them
tm send-keys -t "$UI_SESSION" p
wait_for "Problems "
wait_for "problems · "
wait_for "broken.yaml:6" # a file that does not load: file:line
wait_for "lint.yaml:2"   # the doctor's findings of the recipe that loaded
wait_for "Enter message  ? help  q back"
tm send-keys -t "$UI_SESSION" Home Enter
wait_for "any key closes"
wait_for "recipe (the file as a whole)"
tm send-keys -t "$UI_SESSION" x
wait_gone "any key closes"
tm send-keys -t "$UI_SESSION" q
wait_for "Enter run"
tm resize-window -t "$UI_SESSION" -x 80 -y 24
tm send-keys -t "$UI_SESSION" p
wait_for "broken.yaml:6"
tm send-keys -t "$UI_SESSION" q q
wait_for "EXIT=0"

# ---------------------------------------------------------------- problems, ASCII, NO_COLOR
ui_start 80 24 NO_COLOR=1 "$SERVETOP" --configs "$TEST_DATA_DIR/ui/problems" --ascii
wait_for "+-[ Recipes 1 ]"
tm send-keys -t "$UI_SESSION" p
wait_for "+-[ Problems "
screen | grep -q "[╭│·…]" && fail "UTF-8 glyphs in --ascii mode"
tm send-keys -t "$UI_SESSION" Enter
wait_for "any key closes"
screen | grep -q "[╭│·…]" && fail "UTF-8 glyphs in --ascii mode"
tm send-keys -t "$UI_SESSION" x q q
wait_for "EXIT=0"

# ---------------------------------------------------------------- a theme that does not exist
ui_start 80 24 "$SERVETOP" --configs "$TEST_DATA_DIR/ui" --theme no-such-theme
wait_for "theme 'no-such-theme': no no-such-theme.theme in"
wait_for "EXIT=2"

echo "PASS"
