#!/usr/bin/env bash
# Qwen3.5 FP8, B200, vLLM (fixture): expert parallelism gated on EP_SIZE.
source "$(dirname "$0")/../../benchmark_lib.sh"

check_env_vars MODEL TP EP_SIZE CONC ISL OSL MAX_MODEL_LEN RESULT_FILENAME

PARALLEL_ARGS=(--tensor-parallel-size "$TP")
if [[ "$EP_SIZE" -gt 1 ]]; then
  PARALLEL_ARGS+=(--enable-expert-parallel)
fi

vllm serve "$MODEL" --host 0.0.0.0 --port "$PORT" \
  "${PARALLEL_ARGS[@]}" \
  --gpu-memory-utilization 0.90 \
  --max-num-seqs "$CONC" \
  --max-num-batched-tokens "$(( ISL + 256 ))" \
  --max-model-len "$MAX_MODEL_LEN" \
  --kv-cache-dtype fp8 \
  --no-enable-prefix-caching > /workspace/server.log 2>&1 &

wait_for_server_ready --port "$PORT" --server-log /workspace/server.log --server-pid $!

run_benchmark_serving --model "$MODEL" --port "$PORT" --backend vllm --input-len "$ISL" \
  --output-len "$OSL" --random-range-ratio "$RANDOM_RANGE_RATIO" --num-prompts "$((CONC * 10))" \
  --max-concurrency "$CONC" --result-filename "$RESULT_FILENAME" --result-dir /workspace/
