#!/bin/bash
# What the dashboard costs during a run, and whether it changes what the run
# measures. The same fixed-latency workload (tests/data/ui/bench/fixed.yaml:
# servetop sim with --sim-fixed-ttft-ms 50 --sim-fixed-tpot-ms 10, 80 requests
# of 128 in / 200 out at concurrency 8) runs twice:
#   1. `servetop run RECIPE --headless`
#   2. from the dashboard (Enter on the recipe) in a 200x50 tmux session
# and the result JSONs' headline figures (output throughput, median TTFT and
# TPOT) are compared: they must differ by < 1 %. While run 2 measures, the
# dashboard's UI thread (the main thread; the run, load generator and metrics
# threads are other tasks of the same process) is sampled from
# /proc/<pid>/task/<pid>/stat (utime + stime): its share of one core must be
# <= 3 %. Every thread's share is printed too.
#
# usage: tests/bench/ui_cost.sh [path/to/servetop]   (default: $SERVETOP)
# Exit 0 when both bounds hold, 1 when one does not, 2 on a setup failure.
set -euo pipefail

SERVETOP=${1:-${SERVETOP:?usage: ui_cost.sh path/to/servetop}}
SERVETOP=$(readlink -f "$SERVETOP")
HERE=$(cd "$(dirname "$0")/../.." && pwd)
CONFIGS="$HERE/tests/data/ui/bench"
RECIPE=fixed-bf16-h200-sglang
COLS=200 ROWS=50
command -v tmux >/dev/null || { echo "ui_cost: needs tmux" >&2; exit 2; }
command -v python3 >/dev/null || { echo "ui_cost: needs python3" >&2; exit 2; }

WORK=$(mktemp -d)
tm() { tmux -L "servetop-ui-cost-$$" "$@"; }
cleanup() {
  tm kill-server 2>/dev/null || true
  rm -f "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/servetop-ui-cost-$$"  # tmux leaves its socket file
  rm -rf "$WORK"
}
trap cleanup EXIT INT TERM
screen() { tm capture-pane -p -t cost 2>/dev/null || true; }
wait_for() {  # wait_for TEXT SECONDS
  for _ in $(seq $(($2 * 10))); do
    if screen | grep -qF -- "$1"; then return 0; fi
    sleep 0.1
  done
  echo "ui_cost: the dashboard never showed '$1'" >&2
  screen >&2
  exit 2
}
ticks() {  # ticks STATFILE: utime + stime (fields 14, 15 after the comm)
  sed 's/^.*) //' "$1" | awk '{print $12 + $13}'
}
result_of() { ls "$1"/*/result-conc*.json 2>/dev/null | head -1; }

# ---------------------------------------------------------------- 1. headless
echo "ui_cost: headless run..."
"$SERVETOP" run "$RECIPE" --configs "$CONFIGS" --results "$WORK/headless" --headless --quiet \
  >"$WORK/headless.log" 2>&1 || { cat "$WORK/headless.log" >&2; exit 2; }
HEADLESS=$(result_of "$WORK/headless")
[ -n "$HEADLESS" ] || { echo "ui_cost: the headless run left no result" >&2; exit 2; }

# ---------------------------------------------------------------- 2. dashboard
echo "ui_cost: the same run from the dashboard at ${COLS}x${ROWS}..."
tm new-session -d -s cost -x "$COLS" -y "$ROWS" \
  "env LANG=C.UTF-8 LC_ALL=C.UTF-8 $SERVETOP --configs $CONFIGS --results $WORK/dashboard; sleep 30"
wait_for "Recipes 1" 10
PANE_PID=$(tm display-message -p -t cost '#{pane_pid}')
UI_PID=$(pgrep -P "$PANE_PID" | head -1)
[ -n "$UI_PID" ] || { echo "ui_cost: no dashboard process" >&2; exit 2; }
tm send-keys -t cost Enter
# Enter opens the launch form (its default: the recipe's first point); Enter starts
for _ in $(seq 50); do
  screen | grep -qF "Enter start" && { tm send-keys -t cost Enter; break; }
  screen | grep -qF "SIMULATED" && break # a dashboard without the form
  sleep 0.1
done
wait_for "measuring point 1/1" 60
T0=$(date +%s.%N)
UI0=$(ticks "/proc/$UI_PID/task/$UI_PID/stat")
ALL0=$(ticks "/proc/$UI_PID/stat")
declare -A THREAD0 THREAD1 NAME
for t in /proc/"$UI_PID"/task/*; do
  tid=${t##*/}
  THREAD0[$tid]=$(ticks "$t/stat" 2>/dev/null || echo 0)
  NAME[$tid]=$(cat "$t/comm" 2>/dev/null || echo "?")
done
# until the point is over (the last snapshot of the measuring phase)
for _ in $(seq 1200); do
  screen | grep -qF "point(s) measured" && break
  UI1=$(ticks "/proc/$UI_PID/task/$UI_PID/stat")
  ALL1=$(ticks "/proc/$UI_PID/stat")
  T1=$(date +%s.%N)
  for t in /proc/"$UI_PID"/task/*; do
    tid=${t##*/}
    [ -n "${THREAD0[$tid]:-}" ] || { THREAD0[$tid]=0; NAME[$tid]=$(cat "$t/comm" 2>/dev/null || echo "?"); }
    THREAD1[$tid]=$(ticks "$t/stat" 2>/dev/null || echo "${THREAD1[$tid]:-0}")
  done
  sleep 0.5
done
screen | grep -qF "point(s) measured" || { echo "ui_cost: the dashboard run did not end" >&2; exit 2; }
tm send-keys -t cost q
sleep 0.5
DASHBOARD=$(result_of "$WORK/dashboard")
[ -n "$DASHBOARD" ] || { echo "ui_cost: the dashboard run left no result" >&2; exit 2; }

HZ=$(getconf CLK_TCK)
WALL=$(python3 -c "print($T1 - $T0)")
echo
echo "dashboard process $UI_PID at ${COLS}x${ROWS}, ${WALL%.*} s of measuring (CLK_TCK $HZ):"
for tid in "${!THREAD1[@]}"; do
  d=$(( THREAD1[$tid] - THREAD0[$tid] ))
  role=""
  [ "$tid" = "$UI_PID" ] && role="  <- UI thread (main)"
  python3 -c "print('  thread %-7s %-16s %6.2f %% of a core%s' % ('$tid', '${NAME[$tid]}', 100.0 * $d / $HZ / $WALL, '$role'))"
done
python3 - "$HEADLESS" "$DASHBOARD" "$UI0" "$UI1" "$ALL0" "$ALL1" "$HZ" "$WALL" <<'PY'
import json, sys
h, d = (json.load(open(p)) for p in sys.argv[1:3])
ui0, ui1, all0, all1, hz = (int(x) for x in sys.argv[3:8])
wall = float(sys.argv[8])
ui_pct = 100.0 * (ui1 - ui0) / hz / wall
all_pct = 100.0 * (all1 - all0) / hz / wall
print(f"  whole process (UI + run + load generator + metrics): {all_pct:.2f} % of a core")
print(f"UI thread: {ui_pct:.2f} % of a core (bound 3 %)")
print()
print(f"{'':24}{'headless':>12}{'dashboard':>12}{'diff':>9}")
ok = ui_pct <= 3.0
for key, label in (("output_throughput", "output tok/s"), ("median_ttft_ms", "TTFT median ms"),
                   ("median_tpot_ms", "TPOT median ms"), ("completed", "completed")):
    a, b = float(h[key]), float(d[key])
    diff = 100.0 * (b - a) / a if a else 0.0
    ok = ok and abs(diff) < 1.0
    print(f"{label:24}{a:12.3f}{b:12.3f}{diff:+8.2f}%")
print("PASS" if ok else "FAIL: a bound does not hold")
sys.exit(0 if ok else 1)
PY
