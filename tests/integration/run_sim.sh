#!/usr/bin/env bash
# servetop run on the simulated server: run folder, --set moving the KV
# capacity, sweep, mislabel guard, server crash mid-run, Ctrl-C, SIGKILL of
# servetop (no process of the launch may survive), A/B, compare, export.
set -euo pipefail

S=${SERVETOP:?SERVETOP must point at the servetop binary}
RECIPES=${TEST_DATA_DIR:?}/launcher/recipes
WORK=$(mktemp -d /tmp/servetop-run-test.XXXXXX)
RESULTS=$WORK/results
BG_PID=
# Every process this test starts inherits the mark; none may be left at the end.
export RUN_SIM_TEST_MARK=$WORK

# The processes of this test still running ("" when none).
leftovers() { python3 "$(dirname "$0")/../lib/marked_procs.py" RUN_SIM_TEST_MARK; }

cleanup() {
  if [[ -n $BG_PID ]] && kill -0 "$BG_PID" 2>/dev/null; then
    kill -KILL "$BG_PID" 2>/dev/null || true
    wait "$BG_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }

# Processes whose environment carries SERVETOP_LAUNCH_ID=<owner pid>-N: what a
# servetop process started (the marker is set by the launcher at exec).
launch_procs() {
  local owner=$1 n=0 f
  for f in /proc/[0-9]*/environ; do
    if { tr '\0' '\n' <"$f"; } 2>/dev/null | grep -q "^SERVETOP_LAUNCH_ID=${owner}-[0-9]*$"; then
      n=$((n + 1))
    fi
  done
  echo "$n"
}

wait_no_launch_procs() {
  local owner=$1 i
  for i in $(seq 1 100); do
    [[ $(launch_procs "$owner") == 0 ]] && return 0
    sleep 0.05
  done
  fail "$(launch_procs "$owner") process(es) started by servetop pid $owner survived"
}

json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }

only_dir() { ls -d "$1"/*/ | head -n 1 | sed 's:/$::'; }

# Small, fast runs: short sequences, no warmup.
common=(--configs "$RECIPES" --results "$RESULTS" --num-warmups 0 --isl 128 --osl 32 --quiet)

# ---------------------------------------------------------------- 1. a plain run
"$S" run llama8b-h200-sglang "${common[@]}" --conc 2 --num-prompts 8 --label plain >"$WORK/out1" 2>&1 ||
  { cat "$WORK/out1"; fail "plain run exited non-zero"; }
grep -q "SIMULATED" "$WORK/out1" || fail "the simulated engine was not announced"
D=$(ls -d "$RESULTS"/*-plain)
for f in manifest.json recipe.json server.log result-conc2.json; do
  [[ -s $D/$f ]] || fail "run folder lacks $f"
done
[[ $(json "$D/manifest.json" "d['status']") == ok ]] || fail "manifest status"
[[ $(json "$D/result-conc2.json" "d['completed']") == 8 ]] || fail "completed != 8"
[[ $(json "$D/result-conc2.json" "d['max_concurrency']") == 2 ]] || fail "max_concurrency"
[[ $(json "$D/result-conc2.json" "d['servetop_run']['server']['simulated']") == True ]] ||
  fail "result does not say simulated"
grep -q "The server is fired up and ready to roll!" "$D/server.log" || fail "server.log"
# The point's per-second GPU series (sim telemetry: the modelled memory, labelled simulated).
[[ $(json "$D/result-conc2.json" "len(d['servetop_run']['gpu_telemetry']['samples']) >= 1") == True ]] ||
  fail "result has no GPU telemetry samples"
[[ $(json "$D/result-conc2.json" "d['servetop_run']['gpu_telemetry']['simulated']") == True ]] ||
  fail "GPU telemetry of the sim is not labelled simulated"
[[ $(json "$D/result-conc2.json" "d['servetop_run']['gpu_telemetry']['samples'][0]['gpus'][0]['server_mem_bytes'] > 0") == True ]] ||
  fail "GPU telemetry lacks the server's memory"
grep -q -- "--tp 1" <(json "$D/recipe.json" "d['server']['launch_command']") || fail "recipe.json"
KV_DEFAULT=$(json "$D/result-conc2.json" "d['servetop_run']['server']['max_total_num_tokens']")
ok "plain run: folder, result, manifest, log (KV capacity $KV_DEFAULT tokens)"

# ---------------------------------------------------------------- 2. --set moves max_total_num_tokens
"$S" run llama8b-h200-sglang "${common[@]}" --conc 2 --num-prompts 4 --label mem60 \
  --set mem-fraction-static=0.60 >"$WORK/out2" 2>&1 || { cat "$WORK/out2"; fail "--set run"; }
D=$(ls -d "$RESULTS"/*-mem60)
KV_60=$(json "$D/result-conc2.json" "d['servetop_run']['server']['max_total_num_tokens']")
python3 -c "import sys; a,b=int(sys.argv[1]),int(sys.argv[2]); sys.exit(0 if 0 < b < a else 1)" \
  "$KV_DEFAULT" "$KV_60" || fail "--set mem-fraction-static=0.60: KV $KV_60 not below $KV_DEFAULT"
grep -q -- "--mem-fraction-static 0.60" <(json "$D/recipe.json" "d['server']['launch_command']") ||
  fail "override not in the launch command"
[[ $(json "$D/manifest.json" "d['overrides'][0]") == mem-fraction-static=0.60 ]] ||
  fail "override not in the manifest"
ok "--set mem-fraction-static=0.60: max_total_num_tokens $KV_DEFAULT -> $KV_60"

# ---------------------------------------------------------------- 3. sweep: one result per point
"$S" run llama8b-h200-sglang "${common[@]}" --sweep --num-prompts 4 --label sweep >"$WORK/out3" 2>&1 ||
  { cat "$WORK/out3"; fail "sweep"; }
D=$(ls -d "$RESULTS"/*-sweep)
[[ -s $D/result-conc2.json && -s $D/result-conc4.json ]] || fail "sweep results"
[[ $(grep -c "Simulated GPU" "$D/server.log") == 1 ]] || fail "the server restarted between points"
ok "sweep: 2 points, one server"

# ---------------------------------------------------------------- 4. mislabel guard
set +e
"$S" run llama8b-h200-sglang-mislabelled "${common[@]}" --conc 2 --num-prompts 4 --label mis \
  >"$WORK/out4" 2>&1
rc=$?
set -e
[[ $rc == 1 ]] || { cat "$WORK/out4"; fail "mislabelled run exited $rc, want 1"; }
grep -q "MISLABELLED" "$WORK/out4" || fail "mislabel not shown"
D=$(ls -d "$RESULTS"/*-mis)
[[ $(json "$D/manifest.json" "d['mislabelled']") == True ]] || fail "manifest not mislabelled"
[[ $(json "$D/result-conc2.json" "d['servetop_run']['mislabelled']") == True ]] ||
  fail "result not mislabelled"
"$S" run llama8b-h200-sglang-mislabelled "${common[@]}" --conc 2 --num-prompts 4 --label mis2 \
  --allow-mislabel >"$WORK/out4b" 2>&1 || fail "--allow-mislabel still failed"
"$S" run llama8b-h200-sglang-mtp "${common[@]}" --conc 2 --num-prompts 4 --label mtp \
  >"$WORK/out4c" 2>&1 || { cat "$WORK/out4c"; fail "a correctly labelled MTP run failed"; }
ok "mislabel guard: exit 1 and marked; --allow-mislabel passes; a true MTP run passes"

# ---------------------------------------------------------------- 5. server crash mid-run
set +e
"$S" run llama8b-h200-sglang "${common[@]}" --conc 2 --num-prompts 20 --label crash \
  --server-arg=--sim-fault=crash-after=6 >"$WORK/out5" 2>&1
rc=$?
set -e
[[ $rc == 1 ]] || { cat "$WORK/out5"; fail "crash run exited $rc, want 1"; }
D=$(ls -d "$RESULTS"/*-crash)
[[ $(json "$D/manifest.json" "d['status']") == server_failed ]] || fail "crash status"
grep -q "mid-run" <(json "$D/manifest.json" "d['message']") || fail "crash message"
[[ $(json "$D/manifest.json" "len(d['server_log_tail']) > 0") == True ]] || fail "no log tail"
R=$D/result-conc2.json
[[ -s $R ]] || fail "measured requests were not kept"
[[ $(json "$R" "d['servetop_run']['end']") == server_died ]] || fail "result end"
done_n=$(json "$R" "d['completed']")
[[ $done_n -ge 4 && $done_n -lt 20 ]] || fail "completed $done_n after a crash at request 7"
ok "server crash: status server_failed, $done_n measured requests kept, log tail recorded"

# ---------------------------------------------------------------- 5b. server that never gets ready
set +e
"$S" run llama8b-h200-sglang "${common[@]}" --conc 2 --num-prompts 4 --label nomem \
  --set mem-fraction-static=0.05 >"$WORK/out5b" 2>&1
rc=$?
set -e
[[ $rc == 1 ]] || { cat "$WORK/out5b"; fail "startup failure exited $rc, want 1"; }
grep -q "exited with status 1 before it was ready" "$WORK/out5b" || fail "no early-exit report"
grep -q "Not enough memory" "$WORK/out5b" || fail "the server's last log line was not shown"
D=$(ls -d "$RESULTS"/*-nomem)
[[ $(json "$D/manifest.json" "d['status']") == server_failed ]] || fail "startup failure status"
ok "startup failure: exit status and the server's last log line reported"

# ---------------------------------------------------------------- 5c. A/B back to back
"$S" run llama8b-h200-sglang-mtp "${common[@]}" --conc 2 --num-prompts 4 --ab --label seq \
  >"$WORK/out5c" 2>&1 || { cat "$WORK/out5c"; fail "A/B back to back"; }
grep -q "MTP speedup (A = MTP, B = off)" "$WORK/out5c" || { cat "$WORK/out5c"; fail "no A/B comparison"; }
ok "A/B back to back from the MTP side: twin found, both measured, compared"

# ---------------------------------------------------------------- 6. Ctrl-C: partial results, server stopped
"$S" run llama8b-h200-sglang "${common[@]}" --conc 2 --num-prompts 400 --osl 256 --label int \
  >"$WORK/out6" 2>&1 &
BG_PID=$!
for i in $(seq 1 100); do
  [[ $(launch_procs "$BG_PID") -ge 1 ]] && break
  sleep 0.05
done
sleep 2.5
kill -INT "$BG_PID"
set +e
wait "$BG_PID"
rc=$?
set -e
BG_PID=
[[ $rc == 130 ]] || { cat "$WORK/out6"; fail "Ctrl-C exit $rc, want 130"; }
D=$(ls -d "$RESULTS"/*-int)
[[ $(json "$D/manifest.json" "d['status']") == interrupted ]] || fail "interrupted status"
[[ $(json "$D/result-conc2.json" "d['servetop_run']['end']") == stopped ]] || fail "partial result"
[[ $(json "$D/manifest.json" "d['server']['stop_requested']") == True ]] || fail "server not stopped"
ok "Ctrl-C: exit 130, partial result ($(json "$D/result-conc2.json" "d['completed']") requests)"

# ---------------------------------------------------------------- 7. SIGKILL of servetop leaves no process
"$S" run llama8b-h200-sglang "${common[@]}" --conc 2 --num-prompts 400 --osl 256 --label kill \
  >"$WORK/out7" 2>&1 &
BG_PID=$!
for i in $(seq 1 200); do
  [[ -n $(ls -d "$RESULTS"/*-kill 2>/dev/null) ]] && grep -q "ready to roll" \
    "$(ls -d "$RESULTS"/*-kill)/server.log" 2>/dev/null && break
  sleep 0.05
done
n_before=$(launch_procs "$BG_PID")
[[ $n_before -ge 1 ]] || fail "no server process found before the kill"
kill -KILL "$BG_PID"
wait "$BG_PID" 2>/dev/null || true
owner=$BG_PID
BG_PID=
wait_no_launch_procs "$owner"
ok "SIGKILL of servetop: $n_before server process(es) gone"

# ---------------------------------------------------------------- 8. A/B (parallel), compare, export
"$S" run llama8b-h200-sglang "${common[@]}" --conc 4 --num-prompts 8 --ab-parallel --label ab \
  >"$WORK/out8" 2>&1 || { cat "$WORK/out8"; fail "A/B parallel run"; }
grep -q "MTP speedup (B = MTP, A = off)" "$WORK/out8" || { cat "$WORK/out8"; fail "no A/B comparison"; }
A=$(ls -d "$RESULTS"/*-llama8b-h200-sglang-ab)
B=$(ls -d "$RESULTS"/*-llama8b-h200-sglang-mtp-ab)
"$S" compare "$A" "$B" --json >"$WORK/cmp.json"
[[ $(json "$WORK/cmp.json" "d['points'][0]['mtp_speedup']['mtp_side']") == b ]] || fail "compare json"
json "$WORK/cmp.json" "d['points'][0]['metrics']['output_throughput']['ratio'] > 0" | grep -q True ||
  fail "compare ratio"
"$S" compare "$A/result-conc4.json" "$B/result-conc4.json" | grep -q "interactivity" ||
  fail "compare of two result files"
"$S" export "$A" --inferencex --allow-simulated --out "$WORK/export" >/dev/null
grep -q "conc-list: \[ 4 \]" "$WORK/export/master-entry.yaml" || fail "export conc-list"
grep -q "^llama8b-h200-sglang:" "$WORK/export/master-entry.yaml" || fail "export entry key"
grep -q -- '--model-path "$MODEL"' "$WORK/export/launch-server.sh" || fail "export script"
bash -n "$WORK/export/launch-server.sh" || fail "exported script is not valid bash"
ok "A/B parallel + compare (--json, files) + export --inferencex"

sleep 0.2
left=$(leftovers)
[[ -z $left ]] || fail "process(es) started by this test are still running: $left"
echo "all run_sim checks passed"
