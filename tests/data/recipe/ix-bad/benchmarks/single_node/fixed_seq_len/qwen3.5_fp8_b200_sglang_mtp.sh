#!/usr/bin/env bash
# Qwen3.5 FP8 B200 SGLang "MTP" (fixture): the speculative flags were never added.
source "$(dirname "$0")/../../benchmark_lib.sh"

python3 -m sglang.launch_server --model-path "$MODEL" --port "$PORT" --tp "$TP" \
  --max-running-requests 256 --cuda-graph-max-bs 256 > /workspace/server.log 2>&1 &
run_benchmark_serving --model "$MODEL" --port "$PORT" --backend vllm --use-chat-template \
  --input-len "$ISL" --output-len "$OSL" --max-concurrency "$CONC" --num-prompts "$((CONC * 10))"
