#!/usr/bin/env bash
# servetop test data: a vLLM launch script.
source "$(dirname "$0")/../../benchmark_lib.sh"
check_env_vars MODEL TP CONC EP_SIZE ISL OSL RESULT_FILENAME
EP_ARGS=()
if [ "$EP_SIZE" -gt 1 ]; then
  EP_ARGS=(--enable-expert-parallel)
fi
vllm serve "$MODEL" --port "$PORT" --tensor-parallel-size "$TP" "${EP_ARGS[@]}" \
  --gpu-memory-utilization 0.9 --max-num-seqs "$CONC" &
wait_for_server_ready --port "$PORT"
run_benchmark_serving --model "$MODEL" --port "$PORT" --backend vllm \
  --input-len "$ISL" --output-len "$OSL" --max-concurrency "$CONC" --num-prompts "$((CONC * 10))"
