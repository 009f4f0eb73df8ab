#!/usr/bin/env bash
# servetop test data: a vLLM MTP script left outside fixed_seq_len/.
source "$(dirname "$0")/../benchmark_lib.sh"
check_env_vars MODEL TP CONC ISL OSL
vllm serve "$MODEL" --port "$PORT" --tensor-parallel-size "$TP" --gpu-memory-utilization 0.85 \
  --max-num-seqs "$CONC" --speculative-config '{"method": "mtp", "num_speculative_tokens": 1}' &
wait_for_server_ready --port "$PORT"
run_benchmark_serving --model "$MODEL" --port "$PORT" --backend vllm --input-len "$ISL" \
  --output-len "$OSL" --max-concurrency "$CONC" --num-prompts "$((CONC * 10))" --use-chat-template
