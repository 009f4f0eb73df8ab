#!/usr/bin/env bash
# servetop test data: an ATOM MTP launch script (spec flags in an array).
source "$(dirname "$0")/../../benchmark_lib.sh"
check_env_vars MODEL TP CONC ISL OSL
SPEC_ARGS=(--method eagle3 --draft-model Qwen/Qwen3.5-EAGLE3 --num-speculative-tokens 3)
python3 -m atom.entrypoints.openai_server --model "$MODEL" --server-port "$PORT" -tp "$TP" \
  "${SPEC_ARGS[@]}" --gpu-memory-utilization 0.8 &
wait_for_server_ready --port "$PORT"
run_benchmark_serving --model "$MODEL" --port "$PORT" --backend vllm --input-len "$ISL" \
  --output-len "$OSL" --max-concurrency "$CONC" --num-prompts "$((CONC * 10))" --use-chat-template
if [ "${RUN_EVAL}" = "true" ]; then
  run_eval --framework lm-eval --port "$PORT"
fi
