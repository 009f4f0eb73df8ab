#!/usr/bin/env bash
# A real engine: llama.cpp's llama-server on the tiny random-weight models that
# scripts/setup-llamacpp.sh builds and writes. servetop run of the bundled pair, --ab
# with the draft on against off, acceptance equal to the server's own counter deltas
# (scraped here before and after a servetop bench), another KV size and slot count
# with --set, the mislabel trap (a draft model loaded without --spec-type), and no
# process left behind. llama-server is found the way servetop finds it (servetop
# engines); without it the test is skipped (CTest skip code 77) unless
# SERVETOP_REQUIRE_LLAMA_SERVER=1 (CI), where its absence fails.
source "$(dirname "$0")/../lib/harness.sh"
DATA=${TEST_DATA_DIR:?}
# Every process this test starts carries the mark; none may be left at the end.
export LLAMACPP_TEST_MARK=$WORK

not_grep() { ! grep -q "$@"; }
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }

marked_procs() { python3 "$(dirname "$0")/../lib/marked_procs.py" LLAMACPP_TEST_MARK; }

# ---------------------------------------------------------------- without llama-server
# (always checked): the recipes browse and lint; a run says how to get it and exits 2.
empty=$WORK/empty-cache
mkdir -p "$empty"
"$SERVETOP" recipes >"$WORK/recipes.out" 2>&1
check "llama.cpp recipes are listed" grep -q '^tiny-llamacpp-cpu-draft ' "$WORK/recipes.out"
check "bundled recipes lint clean" "$SERVETOP" lint
PATH=/nonexistent XDG_CACHE_HOME=$empty "$SERVETOP" run tiny-llamacpp-cpu --headless \
  --results "$WORK/runs-absent" >"$WORK/absent.out" 2>&1
rc=$?
check "absent llama-server: exit 2 (got $rc)" test "$rc" = 2
check "absent llama-server: says how to get it" grep -q "scripts/setup-llamacpp.sh" "$WORK/absent.out"
check "absent llama-server: no silent simulation" not_grep -i simulated "$WORK/absent.out"
check "absent llama-server: no run folder" test ! -e "$WORK/runs-absent"

# ---------------------------------------------------------------- find it as servetop does
need_llama_server
echo "llama-server: $LLAMA_SERVER"
RUNS=$WORK/runs
small=(--headless --quiet --results "$RUNS" --num-warmups 0 --isl 64 --osl 32)

# ---------------------------------------------------------------- servetop run, draft on
"$SERVETOP" run tiny-llamacpp-cpu-draft "${small[@]}" --conc 2 --num-prompts 8 --label one \
  >"$WORK/one.out" 2>&1 || { cat "$WORK/one.out"; fail "servetop run of the draft recipe"; }
D=$(ls -d "$RUNS"/*-one)
R=$D/result-conc2.json
check "run: 8 requests completed" test "$(json "$R" "d['completed']")" = 8
check "run: output tokens counted" test "$(json "$R" "d['total_output_tokens'] == sum(d['output_lens']) > 0")" = True
check "run: real engine, not simulated" test "$(json "$R" "d['servetop_run']['server']['simulated']")" = False
check "run: engine read from /metrics" test "$(json "$R" "d['servetop']['server']['engine']")" = llamacpp
check "run: acceptance from the counters" \
  test "$(json "$R" "d['servetop']['server']['acceptance']['accept_length_method']")" = llamacpp_counter_deltas
check "run: accept length > 1" test "$(json "$R" "d['servetop']['server']['acceptance']['accept_length'] > 1")" = True
check "run: KV capacity -c 4096" test "$(json "$R" "d['servetop_run']['server']['max_total_num_tokens']")" = 4096
check "run: 1024 KV tokens a slot" test "$(json "$R" "d['servetop_run']['server']['kv_per_slot_tokens']")" = 1024
check "run: batch cap = 4 slots" test "$(json "$R" "d['servetop_run']['server']['batch_cap']")" = 4
check "run: --metrics always on" grep -q -- "--metrics" <(json "$D/recipe.json" "d['server']['launch_command']")
check "run: not mislabelled" test "$(json "$D/manifest.json" "d['mislabelled']")" = False

# ---------------------------------------------------------------- --ab: draft on against off
"$SERVETOP" run tiny-llamacpp-cpu "${small[@]}" --conc 2 --num-prompts 8 --ab --label ab \
  >"$WORK/ab.out" 2>&1 || { cat "$WORK/ab.out"; fail "servetop run --ab"; }
OFF=$(ls -d "$RUNS"/*-tiny-llamacpp-cpu-ab)
ON=$(ls -d "$RUNS"/*-tiny-llamacpp-cpu-draft-ab)
check "--ab: off arm reports no acceptance" \
  test "$(json "$OFF/result-conc2.json" "d['servetop']['server']['acceptance']['accept_length']")" = None
check "--ab: off arm: the server says speculative decoding is off" \
  test "$(json "$OFF/result-conc2.json" "d['servetop']['server']['acceptance']['spec_enabled']")" = False
check "--ab: draft arm accepts" \
  test "$(json "$ON/result-conc2.json" "d['servetop']['server']['acceptance']['accept_length'] > 1")" = True
check "--ab: compared" grep -q "accept length" "$WORK/ab.out"

# ---------------------------------------------------------------- acceptance = the server's own deltas
start_llama llama -m "$LLAMA_TARGET" -md "$LLAMA_DRAFT" --spec-type draft-simple \
  --spec-draft-n-max 8 -td 1 -c 4096 -np 4 -t 1
port=$PORT
curl -sf "http://127.0.0.1:$port/metrics" >"$WORK/before.prom" || fail "scrape before"
"$SERVETOP" bench --base-url "http://127.0.0.1:$port" --model tiny --dataset-name random \
  --random-input-len 64 --random-output-len 32 --num-prompts 12 --max-concurrency 3 --ignore-eos \
  --num-warmups 0 --save-result --result-dir "$WORK" --result-filename bench.json --quiet \
  >"$WORK/bench.out" 2>&1 || { cat "$WORK/bench.out"; fail "servetop bench against llama-server"; }
curl -sf "http://127.0.0.1:$port/metrics" >"$WORK/after.prom" || fail "scrape after"
if python3 - "$WORK/before.prom" "$WORK/after.prom" "$WORK/bench.json" <<'PY'
import json, re, sys
def read(path):
    v = {}
    for line in open(path):
        m = re.match(r'llamacpp:(spec_decode_\w+?)(?:\{position="(\d+)"\})? (\S+)$', line)
        if m:
            v[(m.group(1), m.group(2))] = float(m.group(3))
    return v
a, b = read(sys.argv[1]), read(sys.argv[2])
d = lambda k, pos=None: b.get((k, pos), 0.0) - a.get((k, pos), 0.0)
drafts = d("spec_decode_num_drafts_total")
want_len = 1 + d("spec_decode_num_accepted_tokens_total") / drafts
want_rate = d("spec_decode_num_accepted_tokens_total") / d("spec_decode_num_draft_tokens_total")
want_pos = [d("spec_decode_num_accepted_tokens_per_pos_total", str(p)) / drafts for p in range(8)]
acc = json.load(open(sys.argv[3]))["servetop"]["server"]["acceptance"]
got = [acc["accept_length"], acc["accept_rate"]] + acc["per_position_rate"]
want = [want_len, want_rate] + want_pos
print("server deltas:", " ".join(f"{x:.4f}" for x in want))
print("servetop     :", " ".join(f"{x:.4f}" for x in got))
sys.exit(0 if len(got) == len(want) and all(round(g, 2) == round(w, 2) for g, w in zip(got, want)) else 1)
PY
then ok "acceptance (length, rate, 8 positions) = the server's counter deltas to 2 decimals"
else fail "acceptance differs from the server's counter deltas"; fi
kill "${PIDS[-1]}" 2>/dev/null; wait "${PIDS[-1]}" 2>/dev/null

# ---------------------------------------------------------------- tuning: another KV size and slot count
"$SERVETOP" run tiny-llamacpp-cpu "${small[@]}" --conc 4 --num-prompts 8 --label tuned \
  --set kv-cache=2048 --set max-batch=2 >"$WORK/tuned.out" 2>&1 ||
  { cat "$WORK/tuned.out"; fail "run with --set kv-cache=2048 --set max-batch=2"; }
R=$(ls -d "$RUNS"/*-tuned)/result-conc4.json
check "--set kv-cache=2048: KV capacity 2048" test "$(json "$R" "d['servetop_run']['server']['max_total_num_tokens']")" = 2048
check "--set max-batch=2: 2 slots" test "$(json "$R" "d['servetop_run']['server']['batch_cap']")" = 2
check "--set: -c and -np in the command" \
  grep -q -- "-c 2048 -np 2" <(json "$R" "d['servetop_run']['server']['command']")
"$SERVETOP" run tiny-llamacpp-cpu "${small[@]}" --set mem-fraction=0.5 >"$WORK/bad.out" 2>&1
rc=$?
check "--set mem-fraction=0.5 on llama.cpp: refused before starting (exit $rc)" test "$rc" = 2
check "--set refusal names -c" grep -q -- "--ctx-size" "$WORK/bad.out"

# ---------------------------------------------------------------- the mislabel trap
"$SERVETOP" run tiny-unused-draft --configs "$DATA/engine" "${small[@]}" --conc 2 --num-prompts 4 \
  --label mis >"$WORK/mis.out" 2>&1
rc=$?
check "draft model without --spec-type: exit 1 (got $rc)" test "$rc" = 1
check "draft model without --spec-type: MISLABELLED" grep -q "MISLABELLED" "$WORK/mis.out"
check "draft model without --spec-type: says why" grep -q -- "--spec-type" "$WORK/mis.out"
"$SERVETOP" lint --configs "$DATA/engine" >"$WORK/lint.out" 2>&1
check "the doctor finds it too" grep -q SPEC_FLAGS_DO_NOTHING "$WORK/lint.out"

# ---------------------------------------------------------------- nothing left behind
left=$(marked_procs)
check "no process left behind${left:+ (left: $left)}" test -z "$left"
finish "llama.cpp"
