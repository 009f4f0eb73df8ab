#!/usr/bin/env bash
# A sweep's end (docs/charts.md): `servetop run RECIPE --sweep` on the sim leaves sweep.md,
# sweep.png and sweep.svg in its run folder and prints the table of points and the chart's
# path; a run of one concurrency leaves none; with --json stdout stays the JSON alone.
source "$(dirname "$0")/../lib/harness.sh"
RECIPES=${TEST_DATA_DIR:?}/launcher/recipes
common=(--configs "$RECIPES" --results "$WORK/runs" --num-warmups 0 --isl 128 --osl 16
        --num-prompts 8 --headless)

# ---------------------------------------------------------------- a sweep of two points
rc=0
timeout 300 "$SERVETOP" run llama8b-h200-sglang --sweep --label sweep "${common[@]}" \
  >"$WORK/out" 2>"$WORK/err" || rc=$?
check "the sweep exits 0 (got $rc)" test "$rc" = 0
[[ $rc == 0 ]] || { cat "$WORK/out" "$WORK/err"; }
D=$(ls -d "$WORK"/runs/*-sweep 2>/dev/null | head -n 1)
check "a run folder" test -n "$D"
for f in sweep.md sweep.png sweep.svg; do
  check "the run folder holds $f" test -s "$D/$f"
done
check "sweep.png is a 1200x800 PNG" python3 - "$D/sweep.png" <<'PY'
import struct, sys
b = open(sys.argv[1], 'rb').read()
assert b[:8] == b'\x89PNG\r\n\x1a\n' and b[12:16] == b'IHDR', 'not a PNG'
assert struct.unpack('>II', b[16:24]) == (1200, 800), struct.unpack('>II', b[16:24])
PY
check "sweep.svg is XML with the recipe, SIMULATED and each concurrency" python3 - "$D/sweep.svg" <<'PY'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
ns = '{http://www.w3.org/2000/svg}'
assert root.tag == ns + 'svg', root.tag
title = root.find(ns + 'title').text
desc = root.find(ns + 'desc').text
assert title == 'llama8b-h200-sglang: sweep SIMULATED', title
assert 'x: interactivity (tok/s per user)' in desc, desc
assert 'y: output throughput per GPU (tok/s/GPU)' in desc, desc
for c in (2, 4):
    assert '\nc=%d: x ' % c in desc, desc
PY
check "sweep.md: SIMULATED, the table's header and a row per concurrency" \
  python3 - "$D/sweep.md" <<'PY'
import sys
md = open(sys.argv[1]).read()
assert md.startswith('# Sweep: llama8b-h200-sglang (SIMULATED)\n'), md[:80]
assert '| conc | req/s |' in md and '| TPOT p99 (ms) |' in md, md
rows = [l for l in md.splitlines() if l.startswith('|') and not l.startswith('| conc') and ':|' not in l]
assert [r.split('|')[1].strip() for r in rows] == ['2', '4'], rows
for r in rows:  # every figure known on the sim: no "-"
    assert all(c.strip() not in ('', '-') for c in r.split('|')[1:-1]), r
assert '](sweep.png)' in md
PY
check "the table of points is printed" grep -q '^| conc | req/s | output tok/s |' "$WORK/out"
check "a row per concurrency is printed" test "$(grep -cE '^\|  +(2|4) \|' "$WORK/out")" = 2
check "the chart's path is printed" grep -qF "sweep chart: $D/sweep.png" "$WORK/out"
# the printed table is sweep.md's
grep '^|' "$D/sweep.md" >"$WORK/md_table"
grep '^|' "$WORK/out" >"$WORK/printed_table"
check "the printed table is sweep.md's" cmp -s "$WORK/md_table" "$WORK/printed_table"

# ---------------------------------------------------------------- one concurrency: no sweep files
rc=0
timeout 300 "$SERVETOP" run llama8b-h200-sglang --conc 2 --label one "${common[@]}" \
  >"$WORK/out1" 2>&1 || rc=$?
check "a run of one concurrency exits 0 (got $rc)" test "$rc" = 0
D1=$(ls -d "$WORK"/runs/*-one 2>/dev/null | head -n 1)
check "a run of one concurrency draws no sweep chart" test ! -e "$D1/sweep.png" -a ! -e "$D1/sweep.md"
check "... and prints no sweep table" bash -c "! grep -q 'sweep chart' '$WORK/out1'"

# ---------------------------------------------------------------- --json: stdout is the JSON alone
rc=0
timeout 300 "$SERVETOP" run llama8b-h200-sglang --sweep --json --label json "${common[@]}" \
  >"$WORK/json" 2>"$WORK/json.err" || rc=$?
check "a --json sweep exits 0 (got $rc)" test "$rc" = 0
check "stdout holds the JSON alone" python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$WORK/json"
check "the table and path go to stderr" grep -q "sweep chart: .*-json/sweep.png" "$WORK/json.err"

# ---------------------------------------------------------------- a chart that cannot be written
# fails the run (its results stay), named: a folder where sweep.png goes, made while it runs
timeout 300 "$SERVETOP" run llama8b-h200-sglang --sweep --label blocked "${common[@]}" \
  --num-prompts 32 >"$WORK/blocked" 2>"$WORK/blocked.err" &
RUN_PID=$!
PIDS+=("$RUN_PID")
DB=
for _ in $(seq 500); do
  DB=$(ls -d "$WORK"/runs/*-blocked 2>/dev/null | head -n 1)
  [[ -n $DB ]] && break
  sleep 0.02
done
[[ -n $DB ]] && mkdir "$DB/sweep.png"
rc=0
wait "$RUN_PID" || rc=$?
check "a chart that cannot be written fails the run (exit $rc)" test "$rc" = 1
check "... naming the file" grep -q "$DB/sweep.png" "$WORK/blocked.err"
check "... and saying so in its outcome" grep -q "could not be written" "$WORK/blocked.err"
check "... its results stay" test -s "$DB/result-conc2.json" -a -s "$DB/result-conc4.json"
check "... no chart path is printed" bash -c "! grep -q 'sweep chart' '$WORK/blocked'"
finish "sweep chart"
