#!/usr/bin/env bash
# Hostile input (issue 22): every input error exits 2 before anything starts,
# naming its flag (one table for show, run, attach, bench, sim); --set keys
# that are typos of a flag are refused with a did-you-mean (issue 19.6);
# special files in --configs are findings, never a hang; a launch script
# nested past the reader's cap is a finding, never a blow-up.
source "$(dirname "$0")/../lib/harness.sh"
RECIPES=${TEST_DATA_DIR:?}/run/recipes
RESULTS=$WORK/results
export XDG_DATA_HOME=$WORK/xdg

# expect_usage "what" "text the message must hold" command...: exit 2 within
# 20 s, the message on stderr, no run folder anywhere.
expect_usage() {
  local what=$1 want=$2; shift 2
  local out rc=0
  out=$(timeout 20 "$@" 2>&1 >/dev/null) || rc=$?
  if [[ $rc -ne 2 ]]; then fail "$what: exit $rc, not 2 ($out)"; return; fi
  if [[ $out != *"$want"* ]]; then fail "$what: '$out' does not name '$want'"; return; fi
  if [[ -e $RESULTS || -e $XDG_DATA_HOME/servetop/runs ]]; then
    fail "$what: a run folder was made"; return
  fi
  ok "$what"
}

quiet() { "$@" >/dev/null 2>&1; }
R=cap-bf16-h200-sglang
SHOW=("$SERVETOP" show $R --configs "$RECIPES")
RUN=("$SERVETOP" run $R --configs "$RECIPES" --headless --results "$RESULTS")
BENCH=("$SERVETOP" bench --model m --base-url http://127.0.0.1:1)
DEAD=http://127.0.0.1:1
long=$(printf 'x%.0s' $(seq 300))

# what | the message must hold | command
while IFS='|' read -r what want cmd; do
  [[ -z $what || $what == \#* ]] && continue
  eval "args=($cmd)"
  expect_usage "$what" "$want" "${args[@]}"
done <<TABLE
show --conc 0|--conc must be >= 1|"\${SHOW[@]}" --conc 0
show --conc -1|--conc must be >= 1|"\${SHOW[@]}" --conc -1
show --set mem-fraction-static=2|mem-fraction-static=2|"\${SHOW[@]}" --set mem-fraction-static=2
show --set mem-fraction-static=nan|mem-fraction-static=nan|"\${SHOW[@]}" --set mem-fraction-static=nan
show --set mem-fraction-static=inf|mem-fraction-static=inf|"\${SHOW[@]}" --set mem-fraction-static=inf
show --set mem-fraction-static=0x1p-1|mem-fraction-static=0x1p-1|"\${SHOW[@]}" --set mem-fraction-static=0x1p-1
run --set mem-fraction-static=0x1p-1|decimal fraction|"\${RUN[@]}" --set mem-fraction-static=0x1p-1
run --set sim-speed=0|sim-speed=0|"\${RUN[@]}" --set sim-speed=0
show --set sim-speed=0|sim-speed=0|"\${SHOW[@]}" --set sim-speed=0
run --set mem-fraction-statc=0.9|did you mean mem-fraction-static|"\${RUN[@]}" --set mem-fraction-statc=0.9
show --set mem-fraction-statc=0.9|did you mean mem-fraction-static|"\${SHOW[@]}" --set mem-fraction-statc=0.9
run --set max-running-request=8|did you mean max-running-requests|"\${RUN[@]}" --set max-running-request=8
run --set host=0.0.0.0|--set host would be ignored|"\${RUN[@]}" --set host=0.0.0.0
run --set port=8000|--set port would be ignored|"\${RUN[@]}" --set port=8000
sim --sim-fixed-ttft-ms -5|--sim-fixed-ttft-ms -5|"\$SERVETOP" sim --sim-fixed-ttft-ms -5 --sim-fixed-tpot-ms 1 --port 0
sim --sim-fixed-tpot-ms inf|--sim-fixed-tpot-ms|"\$SERVETOP" sim --sim-fixed-ttft-ms 1 --sim-fixed-tpot-ms inf --port 0
sim --context-length 0|--context-length 0|"\$SERVETOP" sim --context-length 0 --port 0
attach --num-prompts-factor 0|--num-prompts-factor|"\$SERVETOP" attach \$DEAD --headless --num-prompts-factor 0
attach --conc-list 1,,2|--conc-list 1,,2|"\$SERVETOP" attach \$DEAD --headless --conc-list 1,,2
attach --conc-list 1,2,|--conc-list|"\$SERVETOP" attach \$DEAD --headless --conc-list 1,2,
attach --request-timeout 0|--request-timeout|"\$SERVETOP" attach \$DEAD --headless --request-timeout 0
run --request-timeout 0|--request-timeout must be > 0|"\${RUN[@]}" --request-timeout 0
run --gpus a,b|--gpus a,b|"\${RUN[@]}" --gpus a,b
run --gpus 0,,1|--gpus 0,,1|"\${RUN[@]}" --gpus 0,,1
bench --base-url port 99999|--base-url http://127.0.0.1:99999|"\$SERVETOP" bench --model m --base-url http://127.0.0.1:99999
bench --result-filename empty|--result-filename|"\${BENCH[@]}" --save-result --result-filename ""
bench --result-filename 300 chars|--result-filename|"\${BENCH[@]}" --save-result --result-filename \$long
bench --num-workers 100000|--num-workers|"\${BENCH[@]}" --num-workers 100000
bench --request-timeout 0|--request-timeout|"\${BENCH[@]}" --request-timeout 0
TABLE

# a value inside the range still passes show (exit 0)
check "show --set mem-fraction-static=0.5 passes" quiet "${SHOW[@]}" --set mem-fraction-static=0.5
check "show --set kv-cache=5e-1 passes" quiet "${SHOW[@]}" --set kv-cache=5e-1

# llama.cpp: every flag of the binary's --help is known; a typo is refused,
# and so is a key no --help line lists (the bundled tiny-llamacpp-cpu recipe)
find_llama_server >/dev/null 2>&1 || true
if [[ -n ${LLAMA_SERVER:-} ]]; then
  LL=("$SERVETOP" show tiny-llamacpp-cpu --configs "$PROJECT_DIR/configs")
  expect_usage "llama.cpp --set ctx-szie" "did you mean ctx-size" "${LL[@]}" --set ctx-szie=512
  expect_usage "llama.cpp --set totally-unknown" "not a flag of llama.cpp (its --help" \
    "${LL[@]}" --set totally-unknown=1
  check "llama.cpp --set flash-attn=on (from --help) passes" quiet "${LL[@]}" --set flash-attn=on
else
  echo "skip: llama-server not built (the --help flag list is not checked)"
fi

# a recipe that failed to load is named with file:line:col and field (issue 22.5)
expect_usage "run on a recipe that failed to load" \
  "schema.yaml:26:15: wrong-type.scenarios.fixed-seq-len[0].search-space[0].tp" \
  "$SERVETOP" run wrong-type --configs "$TEST_DATA_DIR/recipe/native-bad" --headless --results "$RESULTS"

# special files among recipes: a FIFO and a link to /dev/zero are findings
mkdir -p "$WORK/cfg"
cp "$RECIPES"/*.yaml "$WORK/cfg/"
mkfifo "$WORK/cfg/fifo.yaml"
ln -s /dev/zero "$WORK/cfg/zero.yaml"
rc=0
out=$(timeout 20 "$SERVETOP" lint --configs "$WORK/cfg" 2>&1) || rc=$?
check "lint with a FIFO and /dev/zero in --configs ends (exit $rc, not a timeout)" test "$rc" -ne 124
check "the FIFO is named" grep -q "fifo.yaml: a FIFO, not a regular file" <<<"$out"
check "the link to /dev/zero is named" grep -q "zero.yaml: a character device, not a regular file" <<<"$out"
rc=0
timeout 20 "$SERVETOP" recipes --configs "$WORK/cfg" >/dev/null 2>&1 || rc=$?
check "recipes with special files ends (exit $rc)" test "$rc" -ne 124

# a launch script nested past the reader's cap: a finding, in bounded memory
IX=${TEST_DATA_DIR}/recipe/ix-good
if [[ -d $IX ]]; then
  for depth in 25 500 50000; do
    rm -rf "$WORK/ix"; cp -r "$IX" "$WORK/ix"
    script=$(find "$WORK/ix/benchmarks" -name '*.sh' ! -name 'benchmark_lib.sh' | sort | head -1)
    python3 -c "import sys; d=int(sys.argv[1]); print('Z=' + '\$('*d + 'x' + ')'*d)" "$depth" >>"$script"
    rc=0
    # (an AddressSanitizer build reserves terabytes of shadow address space: there the
    # time limit alone holds it, and ASan's own allocator limits catch a blow-up)
    out=$( (nm "$SERVETOP" 2>/dev/null | grep -q ' __asan_init' || ulimit -v 1000000
            timeout 60 "$SERVETOP" lint --inferencex "$WORK/ix") 2>&1) || rc=$?
    check "lint on \$( nested $depth deep ends within 1 GB (exit $rc)" test "$rc" -le 1
    if [[ $depth -gt 64 ]]; then
      check "depth $depth is a finding naming the cap" grep -q "nested more than 64 deep" <<<"$out"
    fi
  done
fi
# exit status never contradicts what happened (issue 22.3): a full disk that
# hits only manifest.json (a tmpfs with one inode too few for its temporary
# file) fails the run and says so last; on a pre-filled disk the failed writes
# to server.log are said once and counted.
if [[ -z ${FAULT_NO_NAMESPACE:-} ]] && unshare -m true 2>/dev/null; then
  LR=${TEST_DATA_DIR}/launcher/recipes
  SIMRUN=(run llama8b-h200-sglang --configs "$LR" --num-warmups 0 --isl 128 --osl 8 --quiet
          --conc 2 --num-prompts 8)
  mkdir -p "$WORK/full" "$WORK/rescue"
  rc=0
  TMPDIR=$WORK/rescue timeout 120 unshare -m bash -c \
    'mount -t tmpfs -o size=1m,nr_inodes=5 tmpfs "$1" && shift && exec "$@"' _ "$WORK/full" \
    "$SERVETOP" "${SIMRUN[@]}" --results "$WORK/full" >"$WORK/manifest.out" 2>&1 || rc=$?
  last=$(grep '^run ' "$WORK/manifest.out" | head -n 1)
  check "manifest.json rescued: exit 1 (was 0), exit $rc" test "$rc" -eq 1
  check "manifest.json rescued: the outcome line says so ($last)" \
    grep -q "^run error: .*manifest.json" <<<"$last"
  check "manifest.json rescued: the rescued copy holds the failed status" \
    grep -qE '"status":[[:space:]]*"error"' "$WORK"/rescue/servetop-rescue-*-manifest.json
  rc=0
  TMPDIR=$WORK/rescue timeout 120 unshare -m bash -c \
    'mount -t tmpfs -o size=64k tmpfs "$1" && mkdir "$1/r" && { dd if=/dev/zero of="$1/fill" bs=4k 2>/dev/null; shift; exec "$@"; }' \
    _ "$WORK/full" "$SERVETOP" "${SIMRUN[@]/--num-prompts/--num-prompts}" --num-prompts 40 \
    --results "$WORK/full/r" >"$WORK/prefilled.out" 2>&1 || rc=$?
  n=$(grep -c 'server log' "$WORK/prefilled.out" || true)
  check "pre-filled disk: exit 1 (exit $rc)" test "$rc" -eq 1
  check "pre-filled disk: the server log's failed writes said once ($n lines), then counted" \
    test "$n" -eq 1
  check "pre-filled disk: the outcome counts them" grep -q "write(s) to server.log failed" "$WORK/prefilled.out"
else
  echo "skip: no private mount namespace (the full-disk rows need one)"
fi
finish
