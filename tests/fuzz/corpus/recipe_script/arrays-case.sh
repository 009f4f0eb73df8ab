#!/usr/bin/env bash
# Qwen3.5 FP8, H200, SGLang with EAGLE MTP (fixture): bash arrays, a case on
# CONC, and the v2 speculative path exported.
source "$(dirname "$0")/../../benchmark_lib.sh"

check_env_vars MODEL TP EP_SIZE CONC ISL OSL MAX_MODEL_LEN RANDOM_RANGE_RATIO RESULT_FILENAME

export SGLANG_ENABLE_SPEC_V2=1
SERVER_LOG=/workspace/server.log
MEM_FRAC=0.80

case "$CONC" in
  4|8|16)
    MAX_RUNNING=32
    ;;
  32|64) MAX_RUNNING=64 ;;
  *)
    MAX_RUNNING="$CONC"
    ;;
esac

PARALLEL_ARGS=(--tp "$TP" --ep-size "$EP_SIZE")
SPEC_ARGS=(
  --speculative-algorithm EAGLE
  --speculative-num-steps 3
  --speculative-eagle-topk 1
  --speculative-num-draft-tokens 4
)

SGLANG_CMD=(
  python3 -m sglang.launch_server
  --model-path "$MODEL"
  --host 0.0.0.0
  --port "$PORT"
  "${PARALLEL_ARGS[@]}"
  --mem-fraction-static "$MEM_FRAC"
  --max-running-requests "$MAX_RUNNING"
  --cuda-graph-max-bs "$MAX_RUNNING"
  --chunked-prefill-size 16384
  --context-length "$MAX_MODEL_LEN"
  --kv-cache-dtype fp8_e4m3
  "${SPEC_ARGS[@]}"
)

PYTHONNOUSERSITE=1 "${SGLANG_CMD[@]}" > "$SERVER_LOG" 2>&1 &
SERVER_PID=$!
wait_for_server_ready --port "$PORT" --server-log "$SERVER_LOG" --server-pid "$SERVER_PID"

run_benchmark_serving --model "$MODEL" --port "$PORT" --backend vllm \
  --input-len "$ISL" --output-len "$OSL" --random-range-ratio "$RANDOM_RANGE_RATIO" \
  --num-prompts "$((CONC * 10))" --max-concurrency "$CONC" \
  --result-filename "$RESULT_FILENAME" --result-dir /workspace/ \
  --use-chat-template
