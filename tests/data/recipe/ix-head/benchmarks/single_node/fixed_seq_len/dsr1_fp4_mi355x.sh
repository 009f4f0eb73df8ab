#!/usr/bin/env bash
# servetop test data: the non-MTP half of a script-sibling pair.
source "$(dirname "$0")/../../benchmark_lib.sh"
check_env_vars MODEL TP CONC ISL OSL RESULT_FILENAME
python3 -m sglang.launch_server \
  --model-path "$MODEL" \
  --port "$PORT" \
  --tp "$TP" \
  --mem-fraction-static 0.85 \
  --max-running-requests "$CONC" \
  --cuda-graph-max-bs "$CONC" \
  > /workspace/server.log 2>&1 &
wait_for_server_ready --port "$PORT"
run_benchmark_serving --model "$MODEL" --port "$PORT" --backend vllm \
  --input-len "$ISL" --output-len "$OSL" --max-concurrency "$CONC" \
  --num-prompts "$((CONC * 10))"
