#!/usr/bin/env bash
# Qwen3.5 FP8, H200, SGLang, no speculative decoding (fixture).
source "$(dirname "$0")/../../benchmark_lib.sh"

check_env_vars MODEL TP EP_SIZE CONC ISL OSL MAX_MODEL_LEN RANDOM_RANGE_RATIO RESULT_FILENAME

hf download "$MODEL"
SERVER_LOG=/workspace/server.log

PYTHONNOUSERSITE=1 python3 -m sglang.launch_server \
  --model-path "$MODEL" \
  --host 0.0.0.0 \
  --port "$PORT" \
  --trust-remote-code \
  --tp "$TP" \
  --ep-size "$EP_SIZE" \
  --mem-fraction-static 0.85 \
  --max-running-requests "$CONC" \
  --cuda-graph-max-bs "$CONC" \
  --chunked-prefill-size 16384 \
  --context-length "$MAX_MODEL_LEN" \
  --kv-cache-dtype fp8_e4m3 \
  --disable-radix-cache \
  --stream-interval 10 \
  --enable-metrics > "$SERVER_LOG" 2>&1 &
SERVER_PID=$!

wait_for_server_ready --port "$PORT" --server-log "$SERVER_LOG" --server-pid "$SERVER_PID"

run_benchmark_serving \
  --model "$MODEL" \
  --port "$PORT" \
  --backend vllm \
  --input-len "$ISL" \
  --output-len "$OSL" \
  --random-range-ratio "$RANDOM_RANGE_RATIO" \
  --num-prompts "$((CONC * 10))" \
  --max-concurrency "$CONC" \
  --result-filename "$RESULT_FILENAME" \
  --result-dir /workspace/
