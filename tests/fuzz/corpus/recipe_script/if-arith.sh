#!/usr/bin/env bash
# Qwen3.5 FP8, H100, SGLang (fixture): DP attention on the EP rows, graph
# batch sized per DP rank.
source "$(dirname "$0")/../../benchmark_lib.sh"

check_env_vars MODEL TP EP_SIZE DP_ATTENTION CONC ISL OSL MAX_MODEL_LEN RESULT_FILENAME

if [[ "$DP_ATTENTION" == "true" ]]; then
  DP_ARGS="--enable-dp-attention --dp-size $TP"
  GRAPH_BS=$(( CONC / TP > 8 ? CONC / TP : 8 ))
else
  DP_ARGS=""
  GRAPH_BS=$CONC
fi

if [ "$EP_SIZE" -gt 1 ]; then EP_ARGS="--ep-size $EP_SIZE"; else EP_ARGS=""; fi

python3 -m sglang.launch_server --model-path "$MODEL" --port "$PORT" --tp "$TP" $EP_ARGS $DP_ARGS --mem-fraction-static 0.88 --max-running-requests "$CONC" --cuda-graph-max-bs "$GRAPH_BS" --context-length "$MAX_MODEL_LEN" > /workspace/server.log 2>&1 &

wait_for_server_ready --port "$PORT" --server-log /workspace/server.log --server-pid $!

run_benchmark_serving --model "$MODEL" --port "$PORT" --backend vllm --input-len "$ISL" \
  --output-len "$OSL" --random-range-ratio "$RANDOM_RANGE_RATIO" --num-prompts "$((CONC * 10))" \
  --max-concurrency "$CONC" --result-filename "$RESULT_FILENAME" --result-dir /workspace/
