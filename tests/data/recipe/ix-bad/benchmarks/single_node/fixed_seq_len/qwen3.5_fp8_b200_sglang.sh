#!/usr/bin/env bash
# Qwen3.5 FP8 B200 SGLang with DP attention (fixture): graphs too small per rank.
source "$(dirname "$0")/../../benchmark_lib.sh"

python3 -m sglang.launch_server --model-path "$MODEL" --port "$PORT" --tp "$TP" --dp-size "$TP" \
  --enable-dp-attention --max-running-requests 1024 --cuda-graph-max-bs 32 \
  > /workspace/server.log 2>&1 &
