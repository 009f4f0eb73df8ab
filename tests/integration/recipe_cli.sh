#!/usr/bin/env bash
# servetop recipes / show / lint, the real binary on fixture checkouts:
# exit codes (0 clean, 1 findings, 2 usage), --json shape, bundled discovery.
set -euo pipefail

: "${SERVETOP:?}" "${TEST_DATA_DIR:?}" "${PROJECT_DIR:?}"
data="$TEST_DATA_DIR/recipe"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

expect_rc() { # want_rc cmd...
  local want=$1 rc=0
  shift
  "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
  [[ $rc == "$want" ]] || { cat "$tmp/out" "$tmp/err" >&2; fail "$* -> exit $rc, want $want"; }
}

# lint: clean checkout 0, bad checkout 1, usage errors 2
expect_rc 0 "$SERVETOP" lint --inferencex "$data/ix-good" --json
[[ $(tr -d ' \n\t' <"$tmp/out") == "[]" ]] || fail "clean checkout: expected []"
expect_rc 1 "$SERVETOP" lint --inferencex "$data/ix-bad" --json
for rule in ROUTE_MISSING MTP_NOT_ROUTED ROUTE_SCENARIO_MISMATCH MTP_SCRIPT_NO_SPEC_FLAGS \
            STP_SCRIPT_HAS_SPEC MTP_CHAT_TEMPLATE SGLANG_SPEC_V2 MAX_RUNNING_REQUESTS_LT_CONC \
            CUDA_GRAPH_MAX_BS_LT_CONC MAX_NUM_SEQS_LT_CONC RUNNER_LABEL_UNKNOWN NO_LAUNCHER \
            SCHEMA SCRIPT_SYNTAX UPSTREAM_IMAGE PUBLIC_IMAGE VLLM_EP_CONDITIONAL; do
  grep -q "\"rule\":[[:space:]]*\"$rule\"" "$tmp/out" || fail "lint --json: no $rule finding"
done
if command -v python3 >/dev/null; then
  python3 - "$tmp/out" <<'PY' || fail "lint --json shape"
import json, sys
items = json.load(open(sys.argv[1]))
assert items, "no findings"
for f in items:
    for k, t in (("rule", str), ("severity", str), ("recipe", str), ("file", str),
                 ("line", int), ("message", str)):
        assert isinstance(f[k], t), (k, f)
    assert f["severity"] in ("error", "warning", "note"), f
PY
fi
# findings name the line to change; the entry comes as a further location
expect_rc 1 "$SERVETOP" lint --inferencex "$data/ix-head"
grep -q "ix-head/runners/launch_h100-tw.sh:5: error: entry minimaxm3-fp8-h100-vllm: .*EP_SIZE.*\[ENV_NOT_PASSED L21\]" \
  "$tmp/out" || fail "lint: ENV_NOT_PASSED at the launch line"
grep -q "^  .*ix-head/configs/nvidia-master.yaml:120: note: entry minimaxm3-fp8-h100-vllm$" "$tmp/out" ||
  fail "lint: the entry as a note"
# names with dots are never cut
grep -q "\[SCHEMA L19\] qwen3.5-fp4-mi355x-sglang$" "$tmp/out" || fail "lint: recipe name cut at '.'"
grep -q "read 2 files (0 failed to load), 18 entries (1 failed to load)" "$tmp/out" ||
  fail "lint: counts of files and entries"
expect_rc 1 "$SERVETOP" lint --inferencex "$data/ix-head" --json
if command -v python3 >/dev/null; then
  python3 - "$tmp/out" <<'PY' || fail "lint --json related"
import json, sys
items = json.load(open(sys.argv[1]))
for f in items:
    assert isinstance(f["related"], list), f
    for r in f["related"]:
        assert isinstance(r["file"], str) and isinstance(r["line"], int) and r["what"], r
env = [f for f in items if f["rule"] == "ENV_NOT_PASSED"][0]
assert any(r["file"].endswith("configs/nvidia-master.yaml") and r["line"] == 120
           for r in env["related"]), env
PY
fi
# a folder without recipe files is an error, not "0 findings"
mkdir -p "$tmp/empty"
expect_rc 2 "$SERVETOP" lint --configs "$tmp/empty"
grep -q "no recipe files" "$tmp/err" || fail "lint: empty folder message"
expect_rc 2 "$SERVETOP" recipes --configs "$tmp/empty"
expect_rc 1 "$SERVETOP" lint --configs "$data/native-bad"
grep -q "MTP_CHAT_TEMPLATE" "$tmp/out" || fail "native lint: no MTP_CHAT_TEMPLATE"
grep -qE "broken.yaml:9:[0-9]+: error: YAML syntax" "$tmp/out" || fail "native lint: syntax error line"
# lint prints a place as recipes does (file:line:col where the column is known)
place=$(grep -oE "^[^ ]*broken.yaml:[0-9:]+" "$tmp/out")
"$SERVETOP" recipes --configs "$data/native-bad" >/dev/null 2>"$tmp/recipes.err"
grep -qF "$place YAML syntax" "$tmp/recipes.err" || fail "lint and recipes name the place alike ($place)"
# problems first: every error before the first warning (text and --json)
expect_rc 1 "$SERVETOP" lint --inferencex "$data/ix-bad"
grep -oE "^[^ ]+: (error|warning|note):" "$tmp/out" | awk '{print $2}' | uniq | tr '\n' ' ' |
  grep -qxE "error: warning: (note: )?" || fail "lint: errors before warnings (then notes)"
grep -qE "kimik3_fp8_h200.sh:3:46: error: unterminated double quote" "$tmp/out" ||
  fail "lint: an unterminated quote at the line it opens"
expect_rc 1 "$SERVETOP" lint --inferencex "$data/ix-bad" --json
python3 -c 'import json, sys
sev = [f["severity"] for f in json.load(open(sys.argv[1]))]
assert sev == sorted(sev, key=["error", "warning", "note"].index), sev' "$tmp/out" ||
  fail "lint --json: errors before warnings"
# the wrong kind of folder says what to give instead
expect_rc 2 "$SERVETOP" lint --configs "$data/ix-good"
grep -q "an InferenceX checkout, not a folder of servetop recipes; read it with --inferencex" \
  "$tmp/err" || fail "lint --configs CHECKOUT: no hint"
expect_rc 2 "$SERVETOP" lint --inferencex "$data/ix-good/configs"
grep -q "the folder of the master configs; give the checkout's root" "$tmp/err" ||
  fail "lint --inferencex CHECKOUT/configs: no hint"
expect_rc 2 "$SERVETOP" lint --inferencex "$tmp/no/such/dir"
grep -q "no/such/dir: no such directory" "$tmp/err" || fail "lint: missing folder message"
expect_rc 2 "$SERVETOP" lint --configs "$PROJECT_DIR/configs/qwen3.5-fp8-h200-vllm.yaml"
grep -q "a file, not a directory" "$tmp/err" || fail "lint --configs FILE: message"
expect_rc 0 "$SERVETOP" lint --configs "$PROJECT_DIR/configs"
# the bundled SGLang MTP recipes keep SGLANG_ENABLE_SPEC_V2=1 for servetop sim (which reads
# it); on their v0.5.14 images it is dead (SGLang PR #27964): notes only
grep -q "^[0-9]* findings (0 errors, 0 warnings) in [0-9]* recipes; read" "$tmp/out" ||
  fail "lint: clean summary"
expect_rc 2 "$SERVETOP" lint --bogus
expect_rc 2 "$SERVETOP" lint --configs "$data/ix-good" --inferencex "$data/ix-good"
expect_rc 2 "$SERVETOP" lint --inferencex "$tmp/nowhere"
expect_rc 0 "$SERVETOP" lint --help
grep -q -- "--inferencex DIR" "$tmp/out" || fail "lint --help"

# recipes: bundled recipes are found without flags (build tree: <exe>/../configs
# may not exist for an out-of-tree build dir, so name them through the env too)
SERVETOP_CONFIGS="$PROJECT_DIR/configs" expect_rc 0 "$SERVETOP" recipes
grep -q "qwen3.5-fp4-b200-sglang-mtp" "$tmp/out" || fail "recipes: bundled MTP recipe missing"
expect_rc 0 "$SERVETOP" recipes --inferencex "$data/ix-good" --json
grep -q '"script":[[:space:]]*"benchmarks/single_node/fixed_seq_len/qwen3.5_fp8_h200_mtp.sh"' \
  "$tmp/out" || fail "recipes --json: script path"
# columns are as wide as what they hold: every cell starts where its header does
expect_rc 0 "$SERVETOP" recipes --configs "$PROJECT_DIR/configs"
awk 'NR == 1 { n = split("ENGINE GPU PREC SPEC SEQ CONC TOPOLOGY", h, " ")
               for (i = 1; i <= n; i++) at[i] = index($0, h[i]) }
     /^$/ { exit bad }
     NR > 1 { for (i = 1; i <= n; i++) if (substr($0, at[i] - 2, 3) !~ /^  [^ ]/) bad = 1 }
     END { exit bad }' "$tmp/out" || fail "recipes: columns not aligned"
grep -q "^tiny-llamacpp-cpu-draft  *llamacpp  *cpu  *f16  *draft_model " "$tmp/out" ||
  fail "recipes: llama.cpp row"
expect_rc 0 "$SERVETOP" recipes --configs "$data/native-bad"
grep -q "schema.yaml:26:15: wrong-type" "$tmp/err" || fail "recipes: error position on stderr"
grep -q "still-loads" "$tmp/out" || fail "recipes: the good entry did not load"

# show: case "$CONC" arms resolve per concurrency
expect_rc 0 "$SERVETOP" show qwen3.5-fp8-h200-sglang-mtp --inferencex "$data/ix-good" --conc 8
grep -q -- "--max-running-requests 32" "$tmp/out" || fail "show --conc 8: case arm"
expect_rc 0 "$SERVETOP" show qwen3.5-fp8-h200-sglang-mtp --inferencex "$data/ix-good" --conc 256 --json
grep -q '"256"' "$tmp/out" || fail "show --conc 256 --json"
SERVETOP_CONFIGS="$PROJECT_DIR/configs" expect_rc 0 "$SERVETOP" show qwen3.5-fp8-h200-sglang \
  --set mem-fraction-static=0.7
grep -q -- "--mem-fraction-static 0.7" "$tmp/out" || fail "show --set"
# show: the printed command is safe to paste. Shell syntax in recipe values stays
# quoted: run the printed command with `true` as the program and nothing happens.
expect_rc 0 "$SERVETOP" show llama8b-h200-sglang --configs "$TEST_DATA_DIR/fault/inject"
grep -qF -- "--x-semi ';touch /tmp/servetop-fault-pwned-semi;'" "$tmp/out" || fail "show: argv value not quoted"
rm -f /tmp/servetop-fault-pwned-*
sed -n '/^server command/,/^$/p' "$tmp/out" | sed '1d; s/python3 -m sglang.launch_server/true/' >"$tmp/pasted.sh"
bash "$tmp/pasted.sh" || fail "show: the printed command is not valid shell"
ls /tmp/servetop-fault-pwned-* >/dev/null 2>&1 && fail "show: pasting the printed command ran recipe text"
expect_rc 2 "$SERVETOP" show no-such-recipe --inferencex "$data/ix-good"
# a name that is part of some: they are offered
expect_rc 2 "$SERVETOP" show qwen3.5-fp8-h200 --inferencex "$data/ix-good"
grep -q "did you mean: .*qwen3.5-fp8-h200-sglang-mtp" "$tmp/err" || fail "show: no suggestions"
expect_rc 0 "$SERVETOP" show tiny-llamacpp-cpu-draft --configs "$PROJECT_DIR/configs"
grep -q "^  runner      cpu   engine llamacpp$" "$tmp/out" || fail "show: runner line"
grep -q "warmups 2," "$tmp/out" || fail "show: warmups count"
expect_rc 2 "$SERVETOP" show
echo "recipe_cli: ok"
