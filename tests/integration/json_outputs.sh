#!/usr/bin/env bash
# Every `--json` of servetop prints one JSON document on stdout and nothing
# else (status lines, tables, "run folder ..." go to stderr): each one here is
# parsed whole by python3's json module. Also: compare and export take run
# names (as the past-runs list shows them) from any directory, and run folders
# never say the spec twice ("...-mtp-mtp").
source "$(dirname "$0")/../lib/harness.sh"
# the bundled recipes from the tree, wherever the binary was built (.ci/run builds outside it)
export SERVETOP_CONFIGS=${SERVETOP_CONFIGS:-$PROJECT_DIR/configs}
export XDG_DATA_HOME=$WORK/xdg     # the default results directory, this test's own
RUNS=$XDG_DATA_HOME/servetop/runs

parses() { # parses WHAT FILE: the file is exactly one JSON document
  if python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$2" 2>"$WORK/parse.err"; then
    ok "$1: stdout is JSON"
  else
    fail "$1: stdout is not one JSON document: $(head -c 300 "$2") ($(tail -1 "$WORK/parse.err"))"; return 1
  fi
}
jrun() { # jrun WHAT args...: servetop args > WHAT.json, stderr to WHAT.err; RC
  local what=$1; shift
  timeout 120 "$SERVETOP" "$@" >"$WORK/$what.json" 2>"$WORK/$what.err"
  RC=$?
  parses "$what" "$WORK/$what.json" || cat "$WORK/$what.err"
}

FAST=(--num-prompts 8 --headless --server-arg=--sim-speed=50)
jrun run run qwen3.5-fp8-h200-sglang --conc 4 "${FAST[@]}" --json
check "run --json: exit 0" test "$RC" -eq 0
check "run --json: the status line went to stderr" grep -q "point 1/1 c=4 done" "$WORK/run.err"
check "run --json: 'run folder' went to stderr" grep -q "run folder: $RUNS/" "$WORK/run.err"
jrun run_quiet run qwen3.5-fp8-h200-sglang --conc 4 "${FAST[@]}" --json --quiet
check "run --json --quiet: exit 0" test "$RC" -eq 0
jrun run_ab run qwen3.5-fp8-h200-sglang --ab --conc 4 "${FAST[@]}" --json
check "run --ab --json: exit 0" test "$RC" -eq 0
check "run --ab --json: the comparison went to stderr" grep -q "speedup\|B/A" "$WORK/run_ab.err"
mapfile -t dirs < <(python3 -c 'import json, sys; [print(x["dir"]) for x in json.load(open(sys.argv[1]))]' "$WORK/run_ab.json")
check "run --ab --json: two runs" test "${#dirs[@]}" -eq 2

# compare and export by name, from another directory; paths still work
cd "$WORK"
A=$(basename "${dirs[0]}") B=$(basename "${dirs[1]}")
jrun compare compare "$A" "$B" --json
check "compare NAME NAME: exit 0" test "$RC" -eq 0
jrun compare_paths compare "${dirs[0]}" "${dirs[1]}/result-conc4.json" --json
check "compare PATH FILE: exit 0" test "$RC" -eq 0
"$SERVETOP" export "$B" --inferencex --allow-simulated >"$WORK/export.out" 2>&1 # a sim run: issue 19.3
check "export NAME: exit 0" test $? -eq 0
check "export NAME: the entry" grep -q "spec-decoding: mtp" "$WORK/export.out"
mkdir -p "$WORK/elsewhere"
mv "${dirs[0]}" "$WORK/elsewhere/"
"$SERVETOP" compare "$A" "$B" >/dev/null 2>"$WORK/missing.err"
check "compare with an unknown name: exit 2" test $? -eq 2
check "compare with an unknown name: says where it looked" grep -q "no run folder of that name in $RUNS" "$WORK/missing.err"
jrun compare_results compare "$A" "$WORK/elsewhere/$A" --results "$WORK/elsewhere" --json
check "compare --results DIR NAME: exit 0" test "$RC" -eq 0

# attach --json
start_sim attach --enable-metrics --sim-speed 20
jrun attach attach "http://127.0.0.1:$PORT" --conc-list 1,2 --isl 64 --osl 16 \
  --num-prompts-factor 2 --headless --json
check "attach --json: exit 0" test "$RC" -eq 0
jrun attach_quiet attach "http://127.0.0.1:$PORT" --conc 2 --isl 64 --osl 16 \
  --num-prompts 4 --headless --json --quiet
check "attach --json --quiet: exit 0" test "$RC" -eq 0
jrun bench bench --model m --base-url "http://127.0.0.1:$PORT" --dataset-name random \
  --random-input-len 16 --random-output-len 4 --num-prompts 3 --json
check "bench --json: exit 0" test "$RC" -eq 0
jrun gpus gpus --json --telemetry sim --telemetry-url "http://127.0.0.1:$PORT"

# the offline ones
jrun engines engines --json
jrun recipes recipes --json
jrun show show qwen3.5-fp8-h200-sglang-mtp --json
jrun lint lint --json

# a label the recipe name ends with (the dashboard's A/B arms are labelled "off"
# and "mtp") is not said twice: "...-sglang-mtp", never "...-mtp-mtp"
jrun labelled run qwen3.5-fp8-h200-sglang-mtp --conc 2 "${FAST[@]}" --label mtp --json
dir=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[0]["dir"])' "$WORK/labelled.json")
check "--label mtp on an -mtp recipe: $dir" grep -qE -- '-sglang-mtp$' <<<"$dir"
finish "--json"
