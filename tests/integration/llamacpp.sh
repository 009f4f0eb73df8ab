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

# the bundled recipes of this source tree, wherever the build directory is
# (servetop finds them beside its binary only in a build inside the tree)
export SERVETOP_CONFIGS=$PROJECT_DIR/configs

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
check "--ab: compared as a draft model against off, not as MTP" \
  grep -q "speculative decoding speedup (B = draft model, A = off)" "$WORK/ab.out"
check "--ab: no MTP speedup for a draft model" not_grep -q "MTP speedup" "$WORK/ab.out"

# ---------------------------------------------------------------- the status line's acceptance
# On a terminal (script(1) keeps every in-place update, 5 a second) the line at the
# point's start has no acceptance of the point's own yet: it says so, and never shows
# the log's figure from the warmups; the saved point's line shows what the result saved.
script -qfec "stty cols 400; $SERVETOP run tiny-llamacpp-cpu-draft --headless --results $RUNS --num-warmups 2 \
  --isl 64 --osl 32 --conc 1 --num-prompts 24 --label status" /dev/null >"$WORK/status.tty" 2>&1 ||
  fail "servetop run on a terminal"
ST=$(ls -d "$RUNS"/*-status)
check "status line: the point's start says not measured yet, the end the saved figure" \
  python3 - "$WORK/status.tty" "$ST/result-conc1.json" <<'PY'
import json, re, sys
text = open(sys.argv[1], errors="replace").read()
lines = [l for l in re.split(r"[\r\n]+", re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)) if l.strip()]
live = [l for l in lines if "measuring point" in l and " done " in l]
saved = [l for l in lines if re.search(r"point 1/1 c=1 done:", l)]
acc = json.load(open(sys.argv[2]))["servetop"]["server"]["acceptance"]["accept_length"]
ok = bool(live) and bool(saved)
print(f"  {len(live)} live lines; first: {live[0] if live else None}")
print(f"  saved: {saved[0] if saved else None}; result accept_length {acc}")
ok = ok and "accept not measured yet" in live[0]
ok = ok and not any("(log)" in l for l in lines)
ok = ok and f"accept {acc:.2f}" in saved[0]
sys.exit(0 if ok else 1)
PY

# ---------------------------------------------------------------- Ctrl-C during a point
# The requests the stop cut are neither failures nor in the failure rate.
"$SERVETOP" run tiny-llamacpp-cpu --headless --results "$RUNS" --num-warmups 0 --isl 64 --osl 64 \
  --conc 2 --num-prompts 400 --label sigint >"$WORK/sigint.out" 2>&1 &
BG=$!
PIDS+=("$BG")
for _ in $(seq 300); do grep -q "measuring point" "$WORK/sigint.out" && break; sleep 0.1; done
sleep 1
kill -INT "$BG"
rc=0
wait "$BG" || rc=$?
check "Ctrl-C: exit 130 (got $rc)" test "$rc" = 130
SI=$(ls -d "$RUNS"/*-sigint)
check "Ctrl-C: the requests the stop cut are not failures (result JSON)" \
  python3 - "$SI/result-conc2.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
st = d["servetop"]
cut = sum(st["cut_by_stop"].values())
print(f"  completed {d['completed']}, failed {st['failed']} {st['failures']}, cut {st['cut_by_stop']}, "
      f"failure_rate {st['failure_rate']}")
ok = st["interrupted"] and d["completed"] > 0 and cut > 0 and st["failed"] == 0 \
     and st["failures"] == {} and st["failure_rate"] == 0 \
     and d["completed"] + st["failed"] + cut == d["num_prompts"] == 400
sys.exit(0 if ok else 1)
PY
check "Ctrl-C: the point's line says 0 failed and how many the stop cut" \
  grep -Eq "point 1/1 c=2 stopped: [0-9]+/400 done 0 failed .*[0-9]+ cut when the point ended" "$WORK/sigint.out"

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
