#!/usr/bin/env bash
# Qwen3.5 FP8 H200 SGLang MTP (fixture): no chat template, no SPEC_V2, small graphs at 128.
source "$(dirname "$0")/../../benchmark_lib.sh"

case "$CONC" in
  128) GRAPH_BS=64 ;;
  *) GRAPH_BS=$CONC ;;
esac

python3 -m sglang.launch_server --model-path "$MODEL" --port "$PORT" --tp "$TP" \
  --ep-size "$EP_SIZE" --max-running-requests "$CONC" --cuda-graph-max-bs "$GRAPH_BS" \
  --speculative-algorithm EAGLE --speculative-num-steps 3 --speculative-eagle-topk 1 \
  --speculative-num-draft-tokens 4 > /workspace/server.log 2>&1 &
wait_for_server_ready --port "$PORT" --server-log /workspace/server.log --server-pid $!

run_benchmark_serving --model "$MODEL" --port "$PORT" --backend vllm --input-len "$ISL" \
  --output-len "$OSL" --random-range-ratio "$RANDOM_RANGE_RATIO" --num-prompts "$((CONC * 10))" \
  --max-concurrency "$CONC" --result-filename "$RESULT_FILENAME" --result-dir /workspace/
