#!/usr/bin/env bash
# vLLM's dotted JSON keys (--set compilation-config.level=3, --knob
# speculative-config.num_speculative_tokens=1,2): checked like every --set
# (refused on SGLang, a did-you-mean for a HEAD that is not a JSON flag, exit
# 2), and they reach the server's command as --HEAD.PATH VALUE: in `show`, in
# `run` on the sim (which logs them as not modelled) and in every configuration
# of `tune` (on the sim only a key it models: a search over one it ignores is refused).
source "$(dirname "$0")/../lib/harness.sh"
export XDG_CACHE_HOME=$WORK/cache XDG_DATA_HOME=$WORK/data
CONFIGS=${PROJECT_DIR:?}/configs
VR=qwen3.5-fp8-h200-vllm

expect_refused() { # expect_refused "what" "text the message must hold" command...
  local what=$1 want=$2 out rc=0; shift 2
  out=$(timeout 20 "$@" 2>&1 >/dev/null) || rc=$?
  if [[ $rc -ne 2 ]]; then fail "$what: exit $rc, not 2 ($out)"; return; fi
  if [[ $out != *"$want"* ]]; then fail "$what: '$out' does not name '$want'"; return; fi
  ok "$what"
}

VL=("$SERVETOP" show $VR --configs "$CONFIGS")
out=$(timeout 20 "${VL[@]}" --set compilation-config.level=3 \
  --set compilation-config.cudagraph_capture_sizes+=1,2,4 2>&1) || fail "show: $out"
check "show: --compilation-config.level 3 in the server command" \
  grep -qF -- "--compilation-config.level 3" <<<"$out"
check "show: --compilation-config.cudagraph_capture_sizes+ 1,2,4 in the server command" \
  grep -qF -- "--compilation-config.cudagraph_capture_sizes+ 1,2,4" <<<"$out"
expect_refused "SGLang: no dotted keys" "SGLang has no dotted (JSON) flags: --set takes a flag name" \
  "$SERVETOP" show qwen3.5-fp8-h200-sglang --configs "$CONFIGS" --set compilation-config.level=3
expect_refused "vLLM: a HEAD that is a typo" "did you mean compilation-config.level" \
  "${VL[@]}" --set compilaton-config.level=3
expect_refused "vLLM: a HEAD that is not JSON" "--max-num-seqs of vLLM takes a plain value" \
  "${VL[@]}" --set max-num-seqs.x=3
expect_refused "vLLM: a member without a value" "takes a value" \
  "${VL[@]}" --set compilation-config.level=

# run on the sim (standing in for vLLM): the flag is passed and logged as not modelled
timeout 120 "$SERVETOP" run $VR --configs "$CONFIGS" --engine sim --headless --conc 4 \
  --num-prompts 8 --isl 128 --osl 16 --results "$WORK/r" --set compilation-config.level=3 \
  --server-arg=--sim-speed=50 >"$WORK/run.out" 2>&1 && rc=0 || rc=$?
check "run on the sim: exit 0" test "$rc" -eq 0
RD=$(ls -d "$WORK"/r/*-$VR 2>/dev/null | head -1)
check "run: the server command holds --compilation-config.level 3" \
  grep -qF -- "--compilation-config.level 3" "$RD/manifest.json"
check "run: the sim says it does not model it" \
  grep -qF -- "unrecognized argument '--compilation-config.level=3': accepted, not modelled" \
  "$RD/server.log"
check "run: servetop says so before it starts (the figures will not move with it)" \
  grep -qF -- "warning: --set compilation-config.level=3: servetop sim does not model --compilation-config.level" \
  "$WORK/run.out"

# tune: each configuration's server command carries its value; on the sim a dotted key it
# models (compilation-config.max_cudagraph_capture_size reaches it as --cuda-graph-max-bs)
timeout 300 "$SERVETOP" tune $VR --configs "$CONFIGS" --sim --slo ttft_p99_ms=100000 \
  --knob compilation-config.max_cudagraph_capture_size=2,64 --isl 128 --osl 16 --conc-min 4 \
  --conc-max 4 --server-arg=--sim-speed=50 --results-dir "$WORK/t" >"$WORK/tune.out" 2>&1 \
  && rc=0 || rc=$?
check "tune: exit 0" test "$rc" -eq 0
[[ $rc -eq 0 ]] || tail -20 "$WORK/tune.out"
for v in 2 64; do
  check "tune: a configuration's command has --cuda-graph-max-bs $v (the dotted key, on the sim)" \
    bash -c "grep -lF -- '--cuda-graph-max-bs $v ' '$WORK'/t/*-tune-$VR/*-cfg*/manifest.json"
done
# ... and one it does not model (speculative-config members without a method) is refused:
# every configuration would differ by noise alone
expect_refused "tune: a dotted key the sim does not model" \
  "servetop sim does not model --speculative-config.num_speculative_tokens" \
  "$SERVETOP" tune $VR --configs "$CONFIGS" --sim --slo ttft_p99_ms=100000 \
  --knob speculative-config.num_speculative_tokens=1,2 --results-dir "$WORK/t2"
check "tune refused: nothing made" test ! -e "$WORK/t2"
finish dotted_keys
