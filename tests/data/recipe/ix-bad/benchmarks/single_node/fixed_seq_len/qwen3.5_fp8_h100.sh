#!/usr/bin/env bash
# Qwen3.5 FP8 H100 SGLang (fixture): a literal cap on running requests.
source "$(dirname "$0")/../../benchmark_lib.sh"

MAX_RUNNING_REQUESTS=64
python3 -m sglang.launch_server --model-path "$MODEL" --port "$PORT" --tp "$TP" \
  --ep-size "$EP_SIZE" --mem-fraction-static 0.88 \
  --max-running-requests $MAX_RUNNING_REQUESTS --cuda-graph-max-bs "$CONC" \
  --context-length "$MAX_MODEL_LEN" > /workspace/server.log 2>&1 &
wait_for_server_ready --port "$PORT" --server-log /workspace/server.log --server-pid $!

run_benchmark_serving --model "$MODEL" --port "$PORT" --backend vllm --input-len "$ISL" \
  --output-len "$OSL" --random-range-ratio "$RANDOM_RANGE_RATIO" --num-prompts "$((CONC * 10))" \
  --max-concurrency "$CONC" --result-filename "$RESULT_FILENAME" --result-dir /workspace/
