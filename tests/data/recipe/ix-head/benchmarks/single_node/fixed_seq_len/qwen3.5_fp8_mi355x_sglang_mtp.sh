#!/usr/bin/env bash
# servetop test data: an SGLang launch script.
source "$(dirname "$0")/../../benchmark_lib.sh"
check_env_vars MODEL TP CONC ISL OSL RESULT_FILENAME
# the eval would not fit the KV budget at the top concurrency
export EVAL_CONCURRENT_REQUESTS=16
SGLANG_ENABLE_SPEC_V2=1 python3 -m sglang.launch_server \
  --model-path "$MODEL" \
  --port "$PORT" \
  --tp "$TP" \
  --mem-fraction-static 0.85 \
  --max-running-requests "$CONC" \
  --cuda-graph-max-bs "$CONC" \
  --speculative-algorithm EAGLE \
  --speculative-num-steps 3 \
  --speculative-eagle-topk 1 \
  --speculative-num-draft-tokens 4 \
  > /workspace/server.log 2>&1 &
wait_for_server_ready --port "$PORT"
run_benchmark_serving --model "$MODEL" --port "$PORT" --backend vllm \
  --input-len "$ISL" --output-len "$OSL" --max-concurrency "$CONC" \
  --num-prompts "$((CONC * 10))" \
  --use-chat-template
if [ "${RUN_EVAL}" = "true" ]; then
  run_eval --framework lm-eval --port "$PORT"
fi
