#!/usr/bin/env bash
# Qwen3.5 FP8, H100, SGLang EAGLE MTP (fixture): multi-line env prefix.
source "$(dirname "$0")/../../benchmark_lib.sh"

check_env_vars MODEL TP EP_SIZE CONC ISL OSL MAX_MODEL_LEN RESULT_FILENAME

SGLANG_ENABLE_SPEC_V2=1 \
PYTHONNOUSERSITE=1 \
python3 -m sglang.launch_server \
  --model-path "$MODEL" --port "$PORT" \
  --tp "$TP" \
  --expert-parallel-size "$EP_SIZE" \
  --mem-fraction-static 0.84 \
  --max-running-requests "$(( CONC < 16 ? 16 : CONC ))" \
  --cuda-graph-max-bs "$(( CONC < 16 ? 16 : CONC ))" \
  --context-length "$MAX_MODEL_LEN" \
  --speculative-algo EAGLE \
  --speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 4 \
  > /workspace/server.log 2>&1 &

wait_for_server_ready --port "$PORT" --server-log /workspace/server.log --server-pid $!

run_benchmark_serving --model "$MODEL" --port "$PORT" --backend vllm --input-len "$ISL" \
  --output-len "$OSL" --random-range-ratio "$RANDOM_RANGE_RATIO" --num-prompts "$((CONC * 10))" \
  --max-concurrency "$CONC" --result-filename "$RESULT_FILENAME" --result-dir /workspace/ \
  --use-chat-template
