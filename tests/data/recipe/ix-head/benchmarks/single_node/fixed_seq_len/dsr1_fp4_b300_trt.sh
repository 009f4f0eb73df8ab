#!/usr/bin/env bash
# servetop test data: a TensorRT-LLM launch script.
source "$(dirname "$0")/../../benchmark_lib.sh"
check_env_vars MODEL TP CONC ISL OSL
cat > /tmp/extra.yaml <<YAML
max_batch_size: $CONC
YAML
trtllm-serve "$MODEL" --port "$PORT" --tp_size "$TP" --extra_llm_api_options /tmp/extra.yaml &
wait_for_server_ready --port "$PORT"
run_benchmark_serving --model "$MODEL" --port "$PORT" --backend openai \
  --input-len "$ISL" --output-len "$OSL" --max-concurrency "$CONC" --num-prompts "$((CONC * 10))"
