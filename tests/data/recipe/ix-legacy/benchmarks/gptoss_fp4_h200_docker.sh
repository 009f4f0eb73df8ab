#!/usr/bin/env bash
# Legacy layout fixture: a vLLM script directly under benchmarks/.
vllm serve "$MODEL" --port 8888 --tensor-parallel-size "$TP" --max-num-seqs 512 &
run_benchmark_serving --model "$MODEL" --port 8888 --backend vllm --input-len "$ISL" \
  --output-len "$OSL" --max-concurrency "$CONC" --num-prompts "$((CONC * 10))"
