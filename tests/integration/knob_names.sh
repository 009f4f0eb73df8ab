#!/usr/bin/env bash
# --set keys checked against the engine's full flag list before anything starts
# (issue 19.6): a typo on an SGLang, a vLLM and a llama.cpp recipe is refused
# with a did-you-mean and exit 2; real long flags pass. llama.cpp's list is
# its binary's --help, kept on disk per binary (path, mtime, size): a second
# check does not run the binary again, a rebuilt binary is read again. The
# llama-server here is a fake that counts its --help runs.
source "$(dirname "$0")/../lib/harness.sh"
export XDG_CACHE_HOME=$WORK/cache XDG_DATA_HOME=$WORK/data
CONFIGS=${PROJECT_DIR:?}/configs

# expect_refused "what" "text the message must hold" command...
expect_refused() {
  local what=$1 want=$2 out rc=0; shift 2
  out=$(timeout 20 "$@" 2>&1 >/dev/null) || rc=$?
  if [[ $rc -ne 2 ]]; then fail "$what: exit $rc, not 2 ($out)"; return; fi
  if [[ $out != *"$want"* ]]; then fail "$what: '$out' does not name '$want'"; return; fi
  ok "$what"
}
passes() {
  local what=$1 out; shift
  if out=$(timeout 20 "$@" 2>&1 >/dev/null); then ok "$what"; else fail "$what: $out"; fi
}

SG=("$SERVETOP" show qwen3.5-fp8-h200-sglang --configs "$CONFIGS")
VL=("$SERVETOP" show qwen3.5-fp8-h200-vllm --configs "$CONFIGS")
expect_refused "SGLang typo" "did you mean speculative-num-draft-tokens" \
  "${SG[@]}" --set speculative-num-draft-tokns=4
expect_refused "SGLang key it does not have" "is not a flag of SGLang" "${SG[@]}" --set warp-speed=9
passes "SGLang --speculative-num-draft-tokens" "${SG[@]}" --set speculative-num-draft-tokens=4
passes "SGLang --enable-dp-attention" "${SG[@]}" --set enable-dp-attention=
passes "SGLang --schedule-conservativeness" "${SG[@]}" --set schedule-conservativeness=1.3
expect_refused "vLLM typo" "did you mean max-num-batched-tokens" \
  "${VL[@]}" --set max-num-batchd-tokens=8192
expect_refused "vLLM: SGLang's flag" "is not a flag of vLLM" "${VL[@]}" --set enable-dp-attention=
passes "vLLM --max-num-batched-tokens" "${VL[@]}" --set max-num-batched-tokens=8192
passes "vLLM --enable-chunked-prefill" "${VL[@]}" --set enable-chunked-prefill=
passes "vLLM --no-enable-prefix-caching (its parser's --no-)" "${VL[@]}" --set no-enable-prefix-caching=
passes "vLLM --max_num_seqs (its parser's underscores)" "${VL[@]}" --set max_num_seqs=8
# run refuses before anything starts, with exit 2 (the same check)
expect_refused "run: SGLang typo" "did you mean mem-fraction-static" "$SERVETOP" run \
  qwen3.5-fp8-h200-sglang --configs "$CONFIGS" --headless --results "$WORK/r" \
  --set mem-fraction-statc=0.9
[[ -e $WORK/r ]] && fail "run made a results folder for a refused --set"

# llama.cpp: a fake llama-server on PATH that counts its --help runs
mkdir -p "$WORK/bin"
cat >"$WORK/bin/llama-server" <<EOF
#!/bin/sh
case "\$1" in
--help) echo x >>"$WORK/help-runs"
  printf '%s\n' '-c,    --ctx-size N     size of the prompt context' \
    '-np,   --parallel N     number of slots' '-b,    --batch-size N   logical batch' \
    '-ub,   --ubatch-size N  physical batch' '-m,    --model FNAME    model path' \
    '-md,   --model-draft FNAME' '--alias STRING' '-t,    --threads N' \
    '--spec-type TYPE' '--spec-draft-n-max N' '-td,   --threads-draft N' '-fa,   --flash-attn [on|off|auto]' ;;
--version) echo 'version: 1 (fake)' ;;
*) exit 1 ;;
esac
EOF
chmod +x "$WORK/bin/llama-server"
LL=(env PATH="$WORK/bin:$PATH" "$SERVETOP" show tiny-llamacpp-cpu --configs "$CONFIGS")
runs() { [[ -f $WORK/help-runs ]] && wc -l <"$WORK/help-runs" || echo 0; }
expect_refused "llama.cpp typo" "did you mean ctx-size" "${LL[@]}" --set ctx-szie=512
check "llama.cpp: --help ran once" test "$(runs)" -eq 1
check "llama.cpp: the list is kept on disk" \
  bash -c "ls '$XDG_CACHE_HOME'/servetop/help/llama-server-*.flags >/dev/null"
expect_refused "llama.cpp typo again" "did you mean ubatch-size" "${LL[@]}" --set ubatch-sizee=64
passes "llama.cpp --flash-attn (from its --help)" "${LL[@]}" --set flash-attn=on
check "llama.cpp: the kept list is reused (no second --help run)" test "$(runs)" -eq 1
touch -d '2001-01-01' "$WORK/bin/llama-server" # a rebuilt binary: another key
expect_refused "llama.cpp after a rebuild" "did you mean batch-size" "${LL[@]}" --set batch-sise=64
check "llama.cpp: a rebuilt binary is read again" test "$(runs)" -eq 2
finish knob_names
