#!/usr/bin/env bash
# Qwen3.5 FP8 B200 vLLM (fixture): a fixed sequence cap, expert parallelism hard-coded.
source "$(dirname "$0")/../../benchmark_lib.sh"

vllm serve "$MODEL" --port "$PORT" --tensor-parallel-size "$TP" --max-num-seqs 32 \
  --enable-expert-parallel \
  --max-model-len "$MAX_MODEL_LEN" > /workspace/server.log 2>&1 &
wait_for_server_ready --port "$PORT" --server-log /workspace/server.log --server-pid $!
