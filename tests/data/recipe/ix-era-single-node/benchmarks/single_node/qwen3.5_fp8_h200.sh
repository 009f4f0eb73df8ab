#!/usr/bin/env bash
# servetop test data: an SGLang launch script.
python3 -m sglang.launch_server --model-path "$MODEL" --port 8888 --tp "$TP" \
  --max-running-requests "$((2 * CONC))" --cuda-graph-max-bs "$CONC" &
run_benchmark_serving --model "$MODEL" --port 8888 --backend vllm --input-len "$ISL" \
  --output-len "$OSL" --max-concurrency "$CONC" --num-prompts "$((CONC * 10))"
