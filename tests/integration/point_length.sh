#!/usr/bin/env bash
# Issue 19.4: a default point of `servetop run` lasts at least CI_MIN_POINT_S (5 s) after
# the warmups. On the simulated server at its own speed, conc 2, isl 128 / osl 32, a request
# takes about 0.2 s: conc x 10 = 20 requests would be over in about 2 s (a short point).
# Without --num-prompts the count is sized from the warmups; with it the count is exact
# (and that point is marked short).
source "$(dirname "$0")/../lib/harness.sh"
RECIPES=${TEST_DATA_DIR:?}/launcher/recipes
export POINT_LENGTH_TEST_MARK=$WORK # every process the runs start inherits it
common=(llama8b-h200-sglang --configs "$RECIPES" --engine sim --conc 2 --isl 128 --osl 32
        --headless)

result() { ls "$1"/*/result-conc2.json 2>/dev/null | head -n 1; }
field() { python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(eval(sys.argv[2], {"d": d, "pl": d["servetop"]["additions"]["point_length"]}))' "$@"; }

# ---------------------------------------------------------------- the default count: sized
timeout 120 "$SERVETOP" run "${common[@]}" --results "$WORK/sized" >"$WORK/sized.out" 2>&1
check "default point: exit 0" test $? -eq 0
R=$(result "$WORK/sized")
if [[ -z $R ]]; then
  fail "default point: no result saved"; cat "$WORK/sized.out"
else
  n=$(field "$R" 'd["num_prompts"]')
  done_=$(field "$R" 'd["completed"]')
  min_req=$(field "$R" 'pl["min_requests"]')
  echo "default point: $done_ of $n requests in $(field "$R" 'd["duration"]') s"
  check "default point: more than conc x 10 = 20 requests" test "$n" -gt 20
  check "default point: the saved num_prompts is the count measured" test "$done_" -eq "$n"
  check "default point: at least ci_point_min_requests ($min_req)" test "$done_" -ge "$min_req"
  check "default point: lasts at least 5 s" field "$R" 'd["duration"] >= 5 or sys.exit(1)'
  check "default point: not marked short" test "$(field "$R" 'pl["short"]')" = False
  check "default point: the point line says the count was raised" \
    grep -q "| $n requests, not 20, to last 5 s" "$WORK/sized.out"
fi

# ---------------------------------------------------------------- --num-prompts: exact
timeout 120 "$SERVETOP" run "${common[@]}" --num-prompts 20 --results "$WORK/exact" \
  >"$WORK/exact.out" 2>&1
check "--num-prompts 20: exit 0" test $? -eq 0
R=$(result "$WORK/exact")
if [[ -z $R ]]; then
  fail "--num-prompts 20: no result saved"; cat "$WORK/exact.out"
else
  check "--num-prompts 20: exactly 20 requests" test "$(field "$R" 'd["num_prompts"]')" -eq 20
  check "--num-prompts 20: 20 completed" test "$(field "$R" 'd["completed"]')" -eq 20
  check "--num-prompts 20: marked short" test "$(field "$R" 'pl["short"]')" = True
  check "--num-prompts 20: the summary says short" grep -q " short " "$WORK/exact.out"
  check "--num-prompts 20: not raised" bash -c '! grep -q "to last 5 s" "$1"' _ "$WORK/exact.out"
fi

# ---------------------------------------------------------------- no warmups: no estimate
timeout 120 "$SERVETOP" run "${common[@]}" --num-warmups 0 --results "$WORK/cold" \
  >"$WORK/cold.out" 2>&1
check "--num-warmups 0: exit 0" test $? -eq 0
R=$(result "$WORK/cold")
if [[ -z $R ]]; then
  fail "--num-warmups 0: no result saved"; cat "$WORK/cold.out"
else
  check "--num-warmups 0: nothing to size from, conc x 10 = 20 requests" \
    test "$(field "$R" 'd["num_prompts"]')" -eq 20
fi

# every process these runs started is gone (servetop reaps its server)
left=$(python3 "$(dirname "$0")/../lib/marked_procs.py" POINT_LENGTH_TEST_MARK)
check "no process left${left:+: $left}" test -z "$left"
finish point_length
