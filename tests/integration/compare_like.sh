#!/usr/bin/env bash
# `servetop compare` only divides like with like (issue 19 point 2) and says SIMULATED (point 3):
# bench results against `servetop sim` at concurrency 8 and 64 are refused (exit 2, naming the
# difference), --force shows them with the warning, a sim result against a recorded real
# llama.cpp result is refused, and every simulated figure says so (result JSON, compare text
# and JSON). Every process is reaped (harness trap).
source "$(dirname "$0")/../lib/harness.sh"
REAL=${TEST_DATA_DIR:?}/launcher/compare/llamacpp-off/result-conc1.json

start_sim like --skip-server-warmup --model llama-3.1-8b --sim-fixed-ttft-ms 2 --sim-fixed-tpot-ms 1
bench() { # bench CONC FILE [args...]
  local conc=$1 file=$2; shift 2
  timeout 120 "$SERVETOP" bench --model llama-3.1-8b --base-url "http://127.0.0.1:$PORT" \
    --dataset-name random --random-input-len 64 --random-output-len 8 --num-prompts "$conc" \
    --max-concurrency "$conc" --ignore-eos --num-warmups 0 --quiet --save-result \
    --result-dir "$WORK" --result-filename "$file" "$@" >"$WORK/$file.out" 2>&1 ||
    { cat "$WORK/$file.out"; fail "bench at conc $conc"; }
}
bench 8 c8.json
bench 64 c64.json
bench 8 c8-again.json
bench 8 c8-isl.json --random-input-len 32 >/dev/null

# the result says where its figures came from
check "result JSON: servetop.simulated is true, engine sim" python3 -c '
import json, sys
st = json.load(open(sys.argv[1]))["servetop"]
assert st["simulated"] is True and st["engine"] == "sim", (st.get("simulated"), st.get("engine"))' \
  "$WORK/c8.json"

# conc 8 against conc 64: refused, the difference named
"$SERVETOP" compare "$WORK/c8.json" "$WORK/c64.json" >"$WORK/cmp1.out" 2>"$WORK/cmp1.err" && rc=0 || rc=$?
check "conc 8 vs conc 64: exit 2" test "$rc" -eq 2
check "conc 8 vs conc 64: the difference named" grep -q "concurrency differs (A: 8, B: 64)" "$WORK/cmp1.err"
check "conc 8 vs conc 64: no ratio printed" test ! -s "$WORK/cmp1.out"
"$SERVETOP" compare "$WORK/c8.json" "$WORK/c64.json" --json >"$WORK/cmp1.json" 2>/dev/null && rc=0 || rc=$?
check "conc 8 vs conc 64 --json: exit 2 too" test "$rc" -eq 2

# --force: shown, loudly
"$SERVETOP" compare "$WORK/c8.json" "$WORK/c64.json" --force >"$WORK/cmp2.out" 2>&1 && rc=0 || rc=$?
check "--force: exit 0" test "$rc" -eq 0
check "--force: the warning" grep -q "^!!! UNLIKE: concurrency differs (A: 8, B: 64)" "$WORK/cmp2.out"
check "--force: the table" grep -q "concurrency 8 vs 64" "$WORK/cmp2.out"
check "--force: SIMULATED on both sides" test "$(grep -c '^   SIMULATED' "$WORK/cmp2.out")" -eq 2
"$SERVETOP" compare "$WORK/c8.json" "$WORK/c64.json" --force --json >"$WORK/cmp2.json" 2>&1
check "--force --json: like false, why, simulated" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["like"] is False and "concurrency differs" in d["unlike"], d["unlike"]
assert d["simulated"] is True and d["a"]["simulated"] is True and d["b"]["simulated"] is True' \
  "$WORK/cmp2.json"

# a workload difference at one concurrency
"$SERVETOP" compare "$WORK/c8.json" "$WORK/c8-isl.json" >/dev/null 2>"$WORK/cmp3.err" && rc=0 || rc=$?
check "isl 64 vs 32: exit 2, named" bash -c '[[ $1 == 2 ]] && grep -q "isl differs (A: 64, B: 32)" "$2"' _ "$rc" "$WORK/cmp3.err"

# like with like: compared, exit 0, SIMULATED said in text and JSON
"$SERVETOP" compare "$WORK/c8.json" "$WORK/c8-again.json" >"$WORK/cmp4.out" 2>&1 && rc=0 || rc=$?
check "conc 8 vs conc 8: exit 0" test "$rc" -eq 0
check "conc 8 vs conc 8: no warning" bash -c '! grep -q UNLIKE "$1"' _ "$WORK/cmp4.out"
check "conc 8 vs conc 8: SIMULATED said" grep -q "SIMULATED: these figures come from servetop sim" "$WORK/cmp4.out"
"$SERVETOP" compare "$WORK/c8.json" "$WORK/c8-again.json" --json >"$WORK/cmp4.json" 2>&1
check "conc 8 vs conc 8 --json: like, simulated" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["like"] is True and d["unlike"] is None and d["simulated"] is True' "$WORK/cmp4.json"

# simulated against real (a recorded llama.cpp result): refused
"$SERVETOP" compare "$REAL" "$WORK/c8.json" >/dev/null 2>"$WORK/cmp5.err" && rc=0 || rc=$?
check "real vs simulated: exit 2" test "$rc" -eq 2
check "real vs simulated: named" grep -q "simulated or real differs (A: real, B: SIMULATED)" "$WORK/cmp5.err"
finish "compare like-with-like"
