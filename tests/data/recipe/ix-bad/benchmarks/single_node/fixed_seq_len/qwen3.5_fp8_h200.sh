#!/usr/bin/env bash
# Qwen3.5 FP8 H200 SGLang (fixture): a "baseline" that quietly runs EAGLE.
source "$(dirname "$0")/../../benchmark_lib.sh"

SPEC_ARGS=(--speculative-algorithm EAGLE --speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 4)
SGLANG_ENABLE_SPEC_V2=1 python3 -m sglang.launch_server --model-path "$MODEL" --port "$PORT" \
  --tp "$TP" --ep-size "$EP_SIZE" --max-running-requests "$CONC" --cuda-graph-max-bs "$CONC" \
  "${SPEC_ARGS[@]}" > /workspace/server.log 2>&1 &
wait_for_server_ready --port "$PORT" --server-log /workspace/server.log --server-pid $!

run_benchmark_serving --model "$MODEL" --port "$PORT" --backend vllm --input-len "$ISL" \
  --output-len "$OSL" --random-range-ratio "$RANDOM_RANGE_RATIO" --num-prompts "$((CONC * 10))" \
  --max-concurrency "$CONC" --result-filename "$RESULT_FILENAME" --result-dir /workspace/ \
  --use-chat-template
