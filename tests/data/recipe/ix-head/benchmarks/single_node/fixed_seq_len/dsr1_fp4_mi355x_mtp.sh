#!/usr/bin/env bash
# servetop test data: the MTP half of a script-sibling pair; its memory
# fraction, set in a variable, is above its sibling's.
source "$(dirname "$0")/../../benchmark_lib.sh"
check_env_vars MODEL TP CONC ISL OSL RESULT_FILENAME
MEM_FRACTION=0.9
python3 -m sglang.launch_server \
  --model-path "$MODEL" \
  --port "$PORT" \
  --tp "$TP" \
  --mem-fraction-static $MEM_FRACTION \
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
