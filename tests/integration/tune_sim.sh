#!/usr/bin/env bash
# `servetop tune` on the sim (issue 20 points 1, 2, 4): the bundled Qwen3.5 FP8 H200 SGLang
# recipe, --knob kv-cache=0.30,0.85 --knob max-batch=4,16 under --slo ttft_p99_ms=250 (isl
# 1024, osl 64, concurrency 4..6). The sim's scheduler queues requests beyond the batch cap
# (docs/sim.md), so TTFT grows past it and the answer moves with max-batch: the winner is
# max-batch=16 at a higher concurrency than the recipe as written (max-batch 4, its first sweep
# point's $CONC); kv-cache=0.30 leaves no room for the KV cache and fails to start with the
# sim's out-of-memory line, recorded, and the search goes on. Also: the tune folder (tune.json,
# report.md, a run folder per configuration with every probe's result), the export of the
# winner, exit codes (0; 1 with no answer; 130 on SIGINT with what was measured kept), the time
# budget (no point starts after it), bad input
# (exit 2, the flag named, nothing made), and no process left behind.
source "$(dirname "$0")/../lib/harness.sh"
export TUNE_TEST_MARK=$WORK
leftovers() { python3 "$(dirname "$0")/../lib/marked_procs.py" TUNE_TEST_MARK; }
CONFIGS=${PROJECT_DIR:?}/configs
R=qwen3.5-fp8-h200-sglang

# ---- bad input: exit 2 before anything starts, the flag and the part named
bad() { # bad WHAT TEXT args...
  local what=$1 text=$2 rc
  shift 2
  "$SERVETOP" tune --configs "$CONFIGS" --results-dir "$WORK/bad" "$@" >"$WORK/bad.out" \
    2>"$WORK/bad.err" && rc=0 || rc=$?
  check "bad input ($what): exit 2" test "$rc" -eq 2
  check "bad input ($what): says '$text'" grep -qF -- "$text" "$WORK/bad.err"
}
bad "no --slo" "--slo is required" $R --sim --knob max-batch=4,8
bad "unknown target" "--slo: unknown target 'ttft_p98_ms'" $R --sim --slo ttft_p98_ms=1 \
  --knob max-batch=4,8
bad "a target's value" "ttft_p99_ms='fast': not a positive number" $R --sim \
  --slo ttft_p99_ms=fast --knob max-batch=4,8
bad "no --knob" "--knob is required" $R --sim --slo ttft_p99_ms=100
bad "knob syntax" "--knob 'max-batch'" $R --sim --slo ttft_p99_ms=100 --knob max-batch
bad "knob range" "HI 0.8 is below LO 0.9" $R --sim --slo ttft_p99_ms=100 --knob kv-cache=0.9:0.8:0.1
bad "a value the engine refuses" "--knob kv-cache: kv-cache=2" $R --sim --slo ttft_p99_ms=100 \
  --knob kv-cache=0.8,2
bad "a flag the engine does not have" "did you mean mem-fraction-static" $R --sim \
  --slo ttft_p99_ms=100 --knob mem-fraction-statc=0.8,0.9
bad "spec value" "--knob spec=maybe" $R --sim --slo ttft_p99_ms=100 --knob spec=off,maybe
bad "budget" "--budget 'soon'" $R --sim --slo ttft_p99_ms=100 --knob max-batch=4 --budget soon
bad "concurrency range" "--conc-min must not be above --conc-max" $R --sim --slo ttft_p99_ms=100 \
  --knob max-batch=4 --conc-min 8 --conc-max 4
bad "too few requests for a p99" "--num-prompts 20: at least 368 with a p99 target (--slo ttft_p99_ms)" \
  $R --sim --slo ttft_p99_ms=100 --knob max-batch=4 --num-prompts 20
# a knob the sim accepts and ignores: every configuration would differ by noise alone
bad "a knob the sim does not model" "--knob block-size: servetop sim does not model --block-size" \
  qwen3.5-fp8-h200-vllm --sim --slo ttft_p99_ms=100 --knob block-size=16,64
bad "a flag the sim takes as it is" "servetop sim does not model --decode-log-interval" $R --sim \
  --slo ttft_p99_ms=100 --knob decode-log-interval=10,40
bad "unknown recipe" "no recipe 'no-such-recipe'" no-such-recipe --sim --slo ttft_p99_ms=100 \
  --knob max-batch=4
check "bad input: nothing made" test ! -e "$WORK/bad"
"$SERVETOP" tune --help >"$WORK/help.out" 2>&1
check "--help: exit 0, names --slo, --knob, --budget" \
  bash -c "grep -q -- --slo '$WORK/help.out' && grep -q -- --knob '$WORK/help.out' && grep -q -- --budget '$WORK/help.out'"

# ---- the search: an SLO that binds, knobs where the answer moves
timeout 480 "$SERVETOP" tune $R --configs "$CONFIGS" --sim --slo ttft_p99_ms=250 \
  --knob kv-cache=0.30,0.85 --knob max-batch=4,16 --isl 1024 --osl 64 --conc-min 4 \
  --conc-max 6 --results-dir "$WORK/runs" >"$WORK/tune.out" 2>"$WORK/tune.err" && rc=0 || rc=$?
check "tune: exit 0 (a winner)" test "$rc" -eq 0
[[ $rc -eq 0 ]] || { cat "$WORK/tune.err"; tail -40 "$WORK/tune.out"; }
D=$(ls -d "$WORK"/runs/*-tune-"$R" 2>/dev/null | head -1)
check "tune folder made" test -n "$D"
check "tune: a progress line per point, holds or not, with the best so far" \
  grep -qE '^point 2 \| configuration 1 \(kv-cache=0.85 max-batch=4\) \| c=[0-9]+ \| (holds|FAILS) \| ttft_p99_ms .*best so far' "$WORK/tune.out"
check "tune: the answer printed" grep -q '^Winner: kv-cache=0.85 max-batch=16' "$WORK/tune.out"
check "tune: against the recipe as written" grep -q 'Against the recipe as written' "$WORK/tune.out"
check "tune: says SIMULATED" grep -q SIMULATED "$WORK/tune.out"
check "tune.json: winner, start, failures, probes and their files" python3 - "$D" <<'EOF'
import json, os, sys
d = sys.argv[1]
t = json.load(open(os.path.join(d, "tune.json")))
assert t["kind"] == "servetop-tune" and t["status"] == "done" and t["simulated"] is True, t["status"]
assert t["slo"] == {"ttft_p99_ms": 250}, t["slo"]
assert t["space"]["knobs"] == {"kv-cache": "0.85", "max-batch": "4"}, t["space"]
cfgs = t["configs"]
w, s = cfgs[t["winner"]], cfgs[t["start_config"]]
assert w["knobs"] == {"kv-cache": "0.85", "max-batch": "16"}, w
assert t["start_config"] == 0 and s["knobs"] == {"kv-cache": "0.85", "max-batch": "4"}, s
# the answer moves with the knob: the cap of 4 queues requests past it, 16 does not
assert w["best_conc"] > s["best_conc"] >= 4, (w["best_conc"], s["best_conc"])
assert w["goodput"]["point"] > s["goodput"]["point"], (w["goodput"], s["goodput"])
g = w["goodput"]
assert g["lo"] is not None and g["lo"] <= g["point"] <= g["hi"], g
assert t["runner_up"] is not None and t["runner_up"] != t["winner"]
failed = [c for c in cfgs if c["knobs"]["kv-cache"] == "0.30"]
assert failed and all(c["status"] == "failed to start" for c in failed), failed
assert all("Not enough memory" in c["why"] for c in failed), [c["why"] for c in failed]
probes = t["probes"]
assert len(probes) >= 5 and t["points"] >= len(probes)
for p in probes:
    assert os.path.isfile(os.path.join(p["run_dir"], p["result_file"])), p
    f = p["figures"]["ttft_p99_ms"]
    assert f["point"] is not None and f["hi"] is not None, p
    # holds on the upper bound, not on the estimate
    assert p["holds"] == (f["hi"] <= 250), p
assert any(not p["holds"] for p in probes) and any(p["holds"] for p in probes)
for c in cfgs:
    if c["status"] != "failed to start":
        assert os.path.isfile(os.path.join(c["run_dir"], "manifest.json")), c
EOF
check "report.md: the answer, the table, what was not visited" bash -c "
  grep -q '^## The answer' '$D/report.md' && grep -q 'Winner: \*\*kv-cache=0.85 max-batch=16' '$D/report.md' &&
  grep -q 'Runner-up' '$D/report.md' && grep -q '^## Configurations' '$D/report.md' &&
  grep -q 'failed to start' '$D/report.md' && grep -q '^## Not visited' '$D/report.md'"

check "the charts: tune.png and tune.svg, shown in report.md" bash -c "
  test -s '$D/tune.png' && test -s '$D/tune.svg' && grep -q 'tune.png' '$D/report.md'"

# ---- the winner exported: refused as simulated, then a recipe and an InferenceX entry
"$SERVETOP" export "$D" --inferencex >"$WORK/exp.out" 2>"$WORK/exp.err" && rc=0 || rc=$?
check "export of a simulated tune: refused (exit 1)" test "$rc" -eq 1
check "export refusal says SIMULATED" grep -q SIMULATED "$WORK/exp.err"
"$SERVETOP" export "$D" --inferencex --allow-simulated --out "$WORK/exp" >"$WORK/exp.out" \
  2>"$WORK/exp.err" && rc=0 || rc=$?
check "export --allow-simulated: exit 0" test "$rc" -eq 0
BEST=$(python3 -c 'import json,sys; t=json.load(open(sys.argv[1])); print(t["configs"][t["winner"]]["best_conc"])' "$D/tune.json")
check "export: the entry's conc-list is the winner's concurrency" grep -q "conc-list: \[ $BEST \]" "$WORK/exp/master-entry.yaml"
check "export: the script has the winner's cap" grep -q -- '--max-running-requests 16' "$WORK/exp/launch-server.sh"
check "export: the recipe's sweep is the winner's concurrency" grep -q "conc-list: \[$BEST\]" "$WORK/exp/recipe.yaml"
check "export: marked SIMULATED" grep -q SIMULATED "$WORK/exp/recipe.yaml"
"$SERVETOP" show "$R-tuned" --configs "$WORK/exp" >"$WORK/show.out" 2>&1 && rc=0 || rc=$?
check "export: the recipe loads (servetop show)" test "$rc" -eq 0
check "export: the recipe's command has the winner's knobs" \
  bash -c "grep -q -- '--max-running-requests 16' '$WORK/show.out' && grep -q -- '--mem-fraction-static 0.85' '$WORK/show.out'"

# ---- no configuration holds: exit 1, said (a floor no server reaches; short points: no p99
# target, so 20 requests a point are allowed)
timeout 120 "$SERVETOP" tune $R --configs "$CONFIGS" --sim --slo min_tok_s_per_user=1000000 \
  --knob max-batch=4,8 --isl 64 --osl 4 --num-prompts 20 --max-points 1 \
  --results-dir "$WORK/none" >"$WORK/none.out" 2>&1 && rc=0 || rc=$?
check "no answer: exit 1" test "$rc" -eq 1
check "no answer: said" grep -q '^Winner: none' "$WORK/none.out"

# ---- the time budget: no point starts after it
timeout 120 "$SERVETOP" tune $R --configs "$CONFIGS" --sim --slo min_tok_s_per_user=1000000 \
  --knob max-batch=1:64:1 --isl 64 --osl 4 --num-prompts 20 --budget 1s \
  --results-dir "$WORK/budget" >"$WORK/budget.out" 2>&1 && rc=0 || rc=$?
check "budget: exit 1 (no answer in 1 s)" test "$rc" -eq 1
check "budget: said" grep -q 'the time budget ran out' "$WORK/budget.out"
check "budget: tune.json says budget, at most 2 points" python3 - "$WORK/budget" <<'EOF'
import glob, json, sys
t = json.load(open(glob.glob(sys.argv[1] + "/*-tune-*/tune.json")[0]))
assert t["status"] == "budget" and t["budget_s"] == 1 and 1 <= len(t["probes"]) <= 2, t
EOF

# ---- Ctrl-C: the search stops, keeps what was measured, leaves no server
"$SERVETOP" tune $R --configs "$CONFIGS" --sim --slo min_tok_s_per_user=1000000 \
  --knob max-batch=1:64:1 --isl 64 --osl 4 --num-prompts 20 --results-dir "$WORK/int" >"$WORK/int.out" 2>&1 &
TPID=$!
PIDS+=("$TPID")
for _ in $(seq 600); do
  grep -q '^point 1 |' "$WORK/int.out" 2>/dev/null && break
  kill -0 "$TPID" 2>/dev/null || break
  sleep 0.2
done
kill -INT "$TPID"
wait "$TPID" && rc=0 || rc=$?
check "SIGINT: exit 130" test "$rc" -eq 130
check "SIGINT: the answer so far printed" grep -q '^Winner:' "$WORK/int.out"
check "SIGINT: tune.json says stopped, with what was measured" python3 - "$WORK/int" <<'EOF'
import glob, json, sys
t = json.load(open(glob.glob(sys.argv[1] + "/*-tune-*/tune.json")[0]))
assert t["status"] == "stopped" and t["stopped"] is True and len(t["probes"]) >= 1, t["status"]
EOF

left=$(leftovers)
check "no process left (${left:-none})" test -z "$left"
finish tune_sim
