#!/bin/bash
# `servetop run --ab --repeats 2` in the dashboard (tmux, 160x30) on the simulated server: the
# A/B view follows the arms through both repeats (the header and the footer say "repeat 2/2";
# the columns show the second repeat's runs), and once they are over the ratios come from the
# repeats ("ratios: 95% CI from 2 repeats", as `servetop compare` computes them); q quits
# with every server stopped, and the comparison printed after the dashboard rests on both
# repeats too.
set -euo pipefail

UI_NAME=repeats
source "$(dirname "$0")/../lib/tmux.sh"
: "${PROJECT_DIR:?the source tree}" # the bundled recipes (a build outside the tree has none beside it)

WORK=$(mktemp -d)
ui_cleanup_more() { rm -rf "$WORK"; }
leftovers() { REPEATS_UI_TEST_MARK=$WORK python3 "$(dirname "$0")/../lib/marked_procs.py" REPEATS_UI_TEST_MARK; }

ui_start 160 30 REPEATS_UI_TEST_MARK="$WORK" XDG_DATA_HOME="$WORK/xdg" \
  SERVETOP_CONFIGS="$PROJECT_DIR/configs" "$SERVETOP" run qwen3.5-fp8-h200-sglang --ab --repeats 2 \
  --conc 2 --num-prompts 20 --isl 64 --osl 16 --num-warmups 0 --server-arg=--sim-speed=1
wait_for "MTP against its non-MTP twin" 30
screen | grep -q "runs headless" && fail "--repeats did not open the dashboard"
wait_for "running repeat 1/2" 30
wait_for "running repeat 2/2" 60
# the columns follow the second repeat's runs: measuring again, not the first repeat's end
wait_for "measuring · point 1/1" 30
wait_for "both arms measured, repeat 2/2" 60
wait_for "ratios: 95% CI from 2 repeats" 10
screen >"$WORK/end.txt"
[ -n "${REPEATS_SCREEN:-}" ] && cp "$WORK/end.txt" "$REPEATS_SCREEN"
screen | grep -q "running repeat" && fail "the header still says it runs"
# each arm's column shows the second repeat's run: its folder is the -r2 one (the log's title)
tm send-keys -t "$UI_SESSION" l
wait_for "-r2/server.log" 10
tm send-keys -t "$UI_SESSION" Escape
tm send-keys -t "$UI_SESSION" q
wait_for "EXIT=0" 30
history=$(tm capture-pane -p -S -400 -t "$UI_SESSION")
grep -q "means of 2 interleaved repeats" <<<"$history" || fail "the comparison after the dashboard is not from the 2 repeats"
grep -qF "95% CI: from the spread of the 2 repeats' ratios" <<<"$history" || fail "no repeats interval after the dashboard"
[ "$(ls -d "$WORK"/xdg/servetop/runs/*-r[12] | wc -l)" -eq 4 ] || fail "not four repeat folders"
# no process left: servetop and every server it started carry the mark
left=$(leftovers)
[ -z "$left" ] || fail "processes left after the dashboard quit: $left"
echo "PASS"
