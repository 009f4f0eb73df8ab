#!/usr/bin/env bash
# Qwen3.5 FP8, H200, agentic trace replay with EAGLE MTP and pinned acceptance (fixture).
source "$(dirname "$0")/../../benchmark_lib.sh"

check_env_vars MODEL TP CONC RESULT_DIR KV_OFFLOADING

export SGLANG_SIMULATE_ACC_LEN=3.39
CACHE_ARGS=()
if [[ "$KV_OFFLOADING" == "dram" ]]; then
  CACHE_ARGS=(--enable-hierarchical-cache --hicache-ratio 2)
fi

SGLANG_ENABLE_SPEC_V2=1 python3 -m sglang.launch_server --model-path "$MODEL" --port "$PORT" \
  --tp "$TP" --ep-size "$EP_SIZE" "${CACHE_ARGS[@]}" \
  --max-running-requests 64 --cuda-graph-max-bs 64 \
  --speculative-algorithm EAGLE --speculative-num-steps 3 --speculative-eagle-topk 1 \
  --speculative-num-draft-tokens 4 > /workspace/server.log 2>&1 &

wait_for_server_ready --port "$PORT" --server-log /workspace/server.log --server-pid $!
