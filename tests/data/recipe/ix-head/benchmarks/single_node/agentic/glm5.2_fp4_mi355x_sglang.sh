#!/usr/bin/env bash
# servetop test data: an SGLang agentic launch script.
source "$(dirname "$0")/../../benchmark_lib.sh"
check_env_vars MODEL TP CONC KV_OFFLOADING
CACHE_ARGS=()
if [[ "$KV_OFFLOADING" == "dram" ]]; then
  CACHE_ARGS=(--enable-hierarchical-cache --hicache-ratio 2)
fi
python3 -m sglang.launch_server --model-path "$MODEL" --port "$PORT" --tp "$TP" \
  --mem-fraction-static 0.85 --max-running-requests "$((2 * CONC))" "${CACHE_ARGS[@]}" &
wait_for_server_ready --port "$PORT"
