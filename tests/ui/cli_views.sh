#!/bin/bash
# The command line opens the dashboard's views in a terminal (tmux, 80x24):
# `servetop attach URL` the run view on a server it did not launch (a
# `servetop sim` this test starts; it is never stopped), `servetop run
# --headless` one status line in place, `servetop run --ab --sweep` the A/B view with each arm's point k/N, the whole job's ETA, the
# curve of every finished point and [ ] over the live points; the exit status
# and the run folder come back to the shell.
set -euo pipefail

: "${TEST_DATA_DIR:?tests/data}"
UI_NAME=views
source "$(dirname "$0")/../lib/tmux.sh"

WORK=$(mktemp -d)
SIM_PID=
ui_cleanup_more() {
  if [[ -n $SIM_PID ]]; then kill "$SIM_PID" 2>/dev/null || true; wait "$SIM_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}

"$SERVETOP" sim --port 0 --sim-port-file "$WORK/port" --enable-metrics --sim-speed 3 2>"$WORK/sim.log" &
SIM_PID=$!
for _ in $(seq 100); do [[ -s $WORK/port ]] && break; sleep 0.05; done
PORT=$(cat "$WORK/port")

ui_start 80 24 XDG_DATA_HOME="$WORK/xdg" "$SERVETOP" attach "http://127.0.0.1:$PORT" --conc 2 \
  --isl 128 --osl 32 --num-prompts 40
wait_for "attached :$PORT"
wait_for "sim SIMULATED"
wait_for "configuration measured" 60
tm send-keys -t "$UI_SESSION" q
wait_for "EXIT=0"
wait_for "run ok: 1 configuration measured: conc 2"
kill -0 "$SIM_PID" 2>/dev/null || fail "the attached server was stopped"

# --headless on a terminal: one status line rewritten in place (never a new
# line per update), a line per saved point, the table at the end
ui_start 100 30 XDG_DATA_HOME="$WORK/xdg" "$SERVETOP" run cap-bf16-h200-sglang --headless --sweep \
  --configs "$TEST_DATA_DIR/run/recipes" --num-prompts 120
wait_for "measuring point 1/2" 30
[ "$(screen | grep -c '] measuring point')" -le 1 ] || fail "more than one live status line"
wait_for "EXIT=0" 60
history=$(tm capture-pane -p -S -400 -t "$UI_SESSION")
grep -q "point 2/2 c=4 done: 120/120 done" <<<"$history" || fail "no line for the second point"
grep -qE "^2 +4 done +120/0 " <<<"$history" || fail "no per-point table"
[ "$(grep -c '] measuring point' <<<"$history")" -eq 0 ] || fail "a status line stayed behind"

ui_start 80 24 XDG_DATA_HOME="$WORK/xdg" "$SERVETOP" run llama8b-h200-sglang --ab --sweep \
  --configs "$TEST_DATA_DIR/launcher/recipes" --isl 128 --osl 64
wait_for "MTP against its non-MTP twin"
wait_for "point 1/2" 30
wait_for "(both arms)" 30 # the job's ETA
wait_for "running the MTP arm" 90
wait_for "both arms measured" 90
screen | grep -q "no finished sweep point yet" && fail "the curve has no point"
# [ : the first concurrency of the sweep, from the arms' own points
tm send-keys -t "$UI_SESSION" '['
wait_for "showing concurrency 2"
wait_for "conc 2 · point 1 done"
tm send-keys -t "$UI_SESSION" Escape
wait_for "the live figures"
tm send-keys -t "$UI_SESSION" q
wait_for "EXIT=0" 30
# (above the comparison table, in the pane's history)
history=$(tm capture-pane -p -S -400 -t "$UI_SESSION")
grep -qF "[off] run ok: 2 configurations measured" <<<"$history" || fail "no outcome of the off arm"
grep -qF "[mtp] run ok: 2 configurations measured" <<<"$history" || fail "no outcome of the MTP arm"
grep -qF "MTP speedup" <<<"$history" || fail "no comparison after the A/B run"

# --ab named from the MTP side: the A/B view still has the off arm in its off column (it once
# put the MTP arm there and inverted every ratio); the outcomes and the comparison after keep
# the command's order (A = the recipe named), as --headless does
ui_start 80 24 XDG_DATA_HOME="$WORK/xdg" "$SERVETOP" run llama8b-h200-sglang-mtp --ab --conc 2 \
  --configs "$TEST_DATA_DIR/launcher/recipes" --isl 128 --osl 32 --num-prompts 40
wait_for "MTP against its non-MTP twin"
wait_for "both arms measured" 90
# (the titles are cut at 80 columns: the acceptance row tells the arms apart)
screen | grep -qE "accept len +- +│.*│ accept len +[0-9.]+ " ||
  fail "the off column does not hold the off arm (acceptance on the wrong side)"
tm send-keys -t "$UI_SESSION" q
wait_for "EXIT=0" 30
history=$(tm capture-pane -p -J -S -400 -t "$UI_SESSION") # -J: long paths wrap
grep -qE "^\[mtp\] run folder: .*-mtp$" <<<"$history" || fail "the MTP arm's outcome is not its own"
grep -qE "^\[off\] run folder: .*-off$" <<<"$history" || fail "the off arm's outcome is not its own"
grep -qF "MTP speedup (A = MTP, B = off)" <<<"$history" || fail "the comparison is not in the command's order"
echo "PASS"
