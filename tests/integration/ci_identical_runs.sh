#!/usr/bin/env bash
# How sure (docs/figures.md): three identical runs on the simulated server, as a user would run
# them (same recipe, settings and seed; one after the other), each fall inside the others'
# 95% output-throughput intervals; compare of two of them finds no difference; a point shorter
# than the minimum is marked short; --num-prompts below the concurrency is refused (exit 2).
# Loopback only; `servetop run` starts and stops its own sim, and harness.sh reaps anything left.
# The sim runs at a quarter speed (decode steps of ~80 ms): each of its steps starts when the
# last one's timer fires, so on a machine this loaded (load average 15-28 on 2 cores) a
# wake-up's delay of a few ms is added to every ~12 ms step at full speed and whole runs differ
# by 5-13%, a difference no interval of one run can see (docs/figures.md, "How sure").
source "$(dirname "$0")/../lib/harness.sh"
RECIPES=${TEST_DATA_DIR:?}/launcher/recipes
RECIPE=llama8b-h200-sglang

run_once() { # run_once NAME args...: a headless run, its folder in $WORK/NAME.dir
  local name=$1; shift
  timeout 300 "$SERVETOP" run "$RECIPE" --configs "$RECIPES" --engine sim --isl 256 --osl 16 \
    --server-arg=--sim-speed=0.25 --results "$WORK/$name" --headless "$@" >"$WORK/$name.out" 2>&1
  local rc=$?
  ls -d "$WORK/$name"/*/ 2>/dev/null | head -1 >"$WORK/$name.dir"
  return $rc
}

# three identical points at concurrency 16, the default length (10 x 16 requests)
for i in 1 2 3; do
  run_once "same$i" --conc 16 || { fail "run $i failed"; cat "$WORK/same$i.out"; }
done
python3 - "$WORK" <<'EOF' || fail "identical runs fall inside each other's intervals"
import json, sys
work = sys.argv[1]
runs = []
for i in (1, 2, 3):
    d = open(f"{work}/same{i}.dir").read().strip()
    r = json.load(open(f"{d}/result-conc16.json"))
    lo, hi = r["servetop"]["additions"]["ci"]["figures"]["output_throughput"]["value"]
    v = r["output_throughput"]
    print(f"run {i}: output {v:.0f} tok/s, 95% [{lo:.0f}, {hi:.0f}], "
          f"short {r['servetop']['additions']['point_length']['short']}")
    assert lo < v < hi, (lo, v, hi)
    assert r["servetop"]["additions"]["point_length"]["short"] is False
    runs.append((v, lo, hi))
bad = [(i + 1, j + 1) for i, (_, lo, hi) in enumerate(runs)
       for j, (v, _, _) in enumerate(runs) if i != j and not lo <= v <= hi]
assert not bad, f"estimate of run b outside the interval of run a, (a, b): {bad}"
EOF
(( FAILS == 0 )) && ok "three identical runs inside each other's output-throughput intervals"

# compare of two identical runs: an interval around 1 and no difference detected
d1=$(cat "$WORK/same1.dir") d2=$(cat "$WORK/same2.dir")
"$SERVETOP" compare "$d1" "$d2" >"$WORK/cmp.txt" 2>&1 || fail "compare exit $?"
"$SERVETOP" compare "$d1" "$d2" --json >"$WORK/cmp.json" 2>&1 || fail "compare --json exit $?"
grep -E '^output throughput \(tok/s\).*\[[0-9.]+, [0-9.]+\] +no difference detected$' \
  "$WORK/cmp.txt" >/dev/null || { fail "compare text: no interval or verdict"; cat "$WORK/cmp.txt"; }
python3 - "$WORK/cmp.json" <<'EOF' || fail "compare json: interval and verdict"
import json, sys
m = json.load(open(sys.argv[1]))["points"][0]["metrics"]["output_throughput"]
lo, hi = m["ratio_ci"]
assert lo <= m["ratio"] <= hi and lo < 1 < hi, m
assert m["ratio_verdict"] == "no difference detected", m
EOF
ok "compare: 95% interval and verdict, text and JSON"

# a short point is marked: in the headless line and table, the result, compare
run_once short --conc 16 --num-prompts 16 || fail "short run failed"
grep -qF '| short: 16 requests < 160 (10 x concurrency)' "$WORK/short.out" ||
  { fail "headless line: no short mark"; cat "$WORK/short.out"; }
grep -qE ' short SIMULATED$' "$WORK/short.out" || fail "point table: no short mark"
ds=$(cat "$WORK/short.dir")
python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["servetop"]["additions"]["point_length"]
assert p["short"] is True and p["min_requests"] == 160 and "16 requests" in p["why"], p' \
  "$ds/result-conc16.json" || fail "result JSON: point_length"
"$SERVETOP" compare "$d1" "$ds" >"$WORK/cmp_short.txt" 2>&1
grep -q '^B short: 16 requests < 160' "$WORK/cmp_short.txt" || fail "compare: no short mark"
ok "a short point is marked"

# fewer prompts than the concurrency: refused before anything starts
run_once refused --conc 16 --num-prompts 8
rc=$?
[[ $rc == 2 ]] || fail "--num-prompts 8 at conc 16: exit $rc (2 expected)"
grep -q 'num-prompts 8 is below concurrency 16' "$WORK/refused.out" || fail "refusal says why"
[[ -z $(ls -A "$WORK/refused" 2>/dev/null) ]] || fail "a refused run made a folder"
ok "--num-prompts below the concurrency is refused"

finish "ci_identical_runs"
