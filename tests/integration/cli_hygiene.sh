#!/usr/bin/env bash
# CLI hygiene: every input error is found before anything starts and exits 2
# naming its flag (nothing is launched, no run folder is made); --help of every
# command fits 80 columns; bench against a dead port prints the reasons and no
# zero latencies; a headless sweep shows point k/N and ends with a per-point
# table; export writes only what was measured ($CONC as the recipe writes it)
# and refuses what was not (exit 1).
source "$(dirname "$0")/../lib/harness.sh"
RECIPES=${TEST_DATA_DIR:?}/run/recipes
RESULTS=$WORK/results
export XDG_DATA_HOME=$WORK/xdg

# expect_usage "what" "text the message must hold" command...: exit 2, the
# message on stderr, and no run folder anywhere.
expect_usage() {
  local what=$1 want=$2; shift 2
  local out rc=0
  out=$("$@" 2>&1 >/dev/null) || rc=$?
  if [[ $rc -ne 2 ]]; then fail "$what: exit $rc, not 2 ($out)"; return; fi
  if [[ $out != *"$want"* ]]; then fail "$what: '$out' does not name '$want'"; return; fi
  if [[ -e $RESULTS || -e $XDG_DATA_HOME/servetop/runs ]]; then
    fail "$what: a run folder was made"; return
  fi
  ok "$what"
}

RUN=("$SERVETOP" run cap-bf16-h200-sglang --configs "$RECIPES" --headless --results "$RESULTS")
expect_usage "--conc 0" "--conc must be >= 1" "${RUN[@]}" --conc 0
expect_usage "--conc -3" "--conc must be >= 1" "${RUN[@]}" --conc -3
expect_usage "--conc with --sweep" "--conc N and --sweep" "${RUN[@]}" --conc 2 --sweep
expect_usage "--set without =" "write KEY=VALUE" "${RUN[@]}" --set nonsense
expect_usage "--set out of range" "mem-fraction-static=2" "${RUN[@]}" --set mem-fraction-static=2
expect_usage "--set kv-cache out of range" "kv-cache=1.5" "${RUN[@]}" --set kv-cache=1.5
expect_usage "--num-prompts 0" "--num-prompts" "${RUN[@]}" --num-prompts 0
expect_usage "--port 70000" "--port" "${RUN[@]}" --port 70000
expect_usage "--label with a slash" "--label" "${RUN[@]}" --label ../x
expect_usage "--engine unknown" "--engine nope" "${RUN[@]}" --engine nope
expect_usage "unknown recipe" "no recipe 'nope'" "$SERVETOP" run nope --configs "$RECIPES"
expect_usage "missing configs dir" "$WORK/none" "$SERVETOP" run x --configs "$WORK/none"
: >"$WORK/a-file"
expect_usage "--results is a file" "--results $WORK/a-file: not a directory" \
  "$SERVETOP" run cap-bf16-h200-sglang --configs "$RECIPES" --headless --results "$WORK/a-file"
expect_usage "unknown option" "--nope" "${RUN[@]}" --nope
expect_usage "bench --burstiness 0" "--burstiness" "$SERVETOP" bench --model m --burstiness 0
expect_usage "bench --random-range-ratio 2" "--random-range-ratio" \
  "$SERVETOP" bench --model m --random-range-ratio 2
expect_usage "bench --result-dir is a file" "--result-dir $WORK/a-file" \
  "$SERVETOP" bench --model m --result-dir "$WORK/a-file"
expect_usage "bench --max-concurrency 0" "--max-concurrency" \
  "$SERVETOP" bench --model m --max-concurrency 0
expect_usage "attach https" "http://" "$SERVETOP" attach https://x:1 --headless
expect_usage "attach --conc-list" "--conc-list" "$SERVETOP" attach http://127.0.0.1:1 --conc-list 1,x
expect_usage "gpus --telemetry unknown" "--telemetry nope" "$SERVETOP" gpus --telemetry nope
expect_usage "dashboard --configs missing" "$WORK/none" "$SERVETOP" --configs "$WORK/none"

# every --help within 80 columns
for cmd in "" recipes show lint sim bench run attach compare export gpus engines; do
  width=$("$SERVETOP" $cmd --help | awk '{ if (length > w) w = length } END { print w }')
  check "servetop $cmd --help fits 80 columns ($width)" test "$width" -le 80
done

# bench against a dead port: the reason, no figure of 0 ms
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
out=$("$SERVETOP" bench --model m --port "$PORT" --num-prompts 3 2>&1) && rc=0 || rc=$?
check "bench on a dead port fails (exit 1)" test "$rc" -eq 1
check "bench on a dead port says no request succeeded" grep -q "No request succeeded" <<<"$out"
check "bench on a dead port gives the reason" grep -qi "connect" <<<"$out"
check "bench on a dead port prints no 0.00 latency" bash -c '! grep -q "TTFT (ms):" <<<"$1"' _ "$out"

# a headless sweep (not a terminal: a line a second), then its table
out=$("${RUN[@]}" --sweep 2>&1) || fail "headless sweep: exit $? ($out)"
check "headless sweep shows point k/N" grep -q "point 2/2" <<<"$out"
# (conc x 8 requests, or more: raised from the warm-ups so that a point lasts 5 s)
check "headless sweep: a line per saved point" \
  grep -qE "point 1/2 c=2 done: ([0-9]+)/\1 done" <<<"$out"
check "headless sweep ends with the per-point table" \
  grep -qE "^2 +4 done +[0-9]+/0 " <<<"$out"
dir=$(sed -n 's/^run folder: //p' <<<"$out")
check "the run folder exists" test -d "$dir"
check "headless table marks every simulated row" grep -qE "^2 +4 done .* SIMULATED$" <<<"$out"
check "headless table says where the figures come from" grep -q "^SIMULATED: these figures come from servetop sim" <<<"$out"
check "the result JSON says simulated and the engine" python3 -c '
import json, sys
st = json.load(open(sys.argv[1]))["servetop"]
assert st["simulated"] is True and st["engine"] == "sim", st.get("simulated")' "$dir/result-conc4.json"

# export: $CONC as the recipe writes it, the points measured
"$SERVETOP" export "$dir" --inferencex >"$WORK/sim-export" 2>&1 && rc=0 || rc=$?
check "export refuses a simulated run (exit 1)" test "$rc" -eq 1
check "export says why: SIMULATED, --allow-simulated" grep -q "SIMULATED.*--allow-simulated" "$WORK/sim-export"
out=$("$SERVETOP" export "$dir" --inferencex --allow-simulated 2>&1) || fail "export: exit $? ($out)"
check "export of a simulated run says so" grep -q "^# SIMULATED: measured on servetop sim" <<<"$out"
check "export writes \$CONC, not the last point's number" grep -q -- '--max-running-requests "$CONC"' <<<"$out"
check "export lists the points measured" grep -q "conc-list: \[ 2, 4 \]" <<<"$out"
for refused in failed mislabelled empty attached; do
  "$SERVETOP" export "$TEST_DATA_DIR/run/export/$refused" --inferencex >/dev/null 2>&1 && rc=0 || rc=$?
  check "export refuses the $refused run (exit 1)" test "$rc" -eq 1
done
"$SERVETOP" export "$WORK/none" --inferencex >/dev/null 2>&1 && rc=0 || rc=$?
check "export of a missing folder is an input error (exit 2)" test "$rc" -eq 2
finish "cli hygiene"
