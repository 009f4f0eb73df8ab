#!/usr/bin/env bash
# Hints that fit (issue 23.3): a llama.cpp recipe whose setup-script models are
# not there says which --models to give the setup script, exits 2 and makes no
# run folder (also --ab); `run` offers the same did-you-mean as `show`;
# --llama-server errors name the flag once.
source "$(dirname "$0")/../lib/harness.sh"
# the bundled recipes from the tree, wherever the binary was built (.ci/run builds outside it)
export SERVETOP_CONFIGS=${SERVETOP_CONFIGS:-$PROJECT_DIR/configs}
export XDG_DATA_HOME=$WORK/xdg XDG_CACHE_HOME=$WORK/cache   # an empty cache: no models
RUNS=$XDG_DATA_HOME/servetop/runs
# a stand-in llama-server: the models are checked before it would ever start
fake=$WORK/llama-server
printf '#!/bin/sh\necho "version: 1 (fake)"\n' >"$fake"
chmod +x "$fake"

expect_usage() { # "what" "text the message must hold" command...
  local what=$1 want=$2; shift 2
  local out rc=0
  out=$("$@" 2>&1 >/dev/null) || rc=$?
  if [[ $rc -ne 2 ]]; then fail "$what: exit $rc, not 2 ($out)"; return; fi
  if [[ $out != *"$want"* ]]; then fail "$what: '$out' does not name '$want'"; return; fi
  if [[ -n $(ls -A "$RUNS" 2>/dev/null) ]]; then fail "$what: a run folder was made"; return; fi
  ok "$what"
}

expect_usage "small models missing: the setup script's --models small" \
  "scripts/setup-llamacpp.sh --models small" \
  "$SERVETOP" run small-llamacpp-h200 --headless --llama-server "$fake"
expect_usage "small draft pair missing, --ab: the same hint" \
  "--models small" "$SERVETOP" run small-llamacpp-h200-draft --ab --headless --llama-server "$fake"
expect_usage "tiny models missing: --models tiny" "scripts/setup-llamacpp.sh --models tiny" \
  "$SERVETOP" run tiny-llamacpp-cpu --headless --llama-server "$fake" --json

# did-you-mean: run says what show says
show=$("$SERVETOP" show tiny-llamacpp 2>&1 >/dev/null)
expect_usage "run: did-you-mean" "did you mean: tiny-llamacpp-cpu, tiny-llamacpp-cpu-draft" \
  "$SERVETOP" run tiny-llamacpp --headless
run=$("$SERVETOP" run tiny-llamacpp 2>&1 >/dev/null)
check "run and show offer the same names" test "${run#servetop run}" = "${show#servetop show}"

# --llama-server: the flag named once
out=$("$SERVETOP" run tiny-llamacpp-cpu --llama-server "$WORK/none" 2>&1) && rc=0 || rc=$?
check "--llama-server missing: exit 2" test "$rc" -eq 2
check "--llama-server named once: $out" test "$(grep -o -- '--llama-server' <<<"$out" | wc -l)" -eq 1
for cmd in engines; do
  out=$("$SERVETOP" $cmd --llama-server "$WORK/none" 2>&1) && rc=0 || rc=$?
  check "$cmd --llama-server named once: $out" test "$(grep -o -- '--llama-server' <<<"$out" | wc -l)" -eq 1
done
finish "hint"
