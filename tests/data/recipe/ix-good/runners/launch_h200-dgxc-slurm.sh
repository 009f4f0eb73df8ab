#!/usr/bin/env bash
# Slurm launcher, h200-dgxc cluster (fixture in InferenceX's style).
set -euo pipefail

export HF_HUB_CACHE_MOUNT="/raid/hf_hub_cache/"
export PORT=8888
SQUASH_FILE="/raid/squash/$(echo "$IMAGE" | tr '/:' '__').sqsh"

MODEL_CODE="${EXP_NAME%%_*}"
FRAMEWORK_SUFFIX=$([[ "$FRAMEWORK" == "trt" ]] && printf '_trt' || printf '')
SPEC_SUFFIX=$([[ "$SPEC_DECODING" == "mtp" ]] && printf '_mtp' || printf '')

if [[ "$IS_MULTINODE" == "true" ]]; then
  srtctl apply -f "$CONFIG_FILE"
else
  BASE="benchmarks/single_node/${SCENARIO_SUBDIR}${MODEL_CODE}_${PRECISION}_h200"
  # framework-tagged script first, then the legacy name
  if [[ -f "${BASE}_${FRAMEWORK}${SPEC_SUFFIX}.sh" ]]; then
    BENCH_SCRIPT="${BASE}_${FRAMEWORK}${SPEC_SUFFIX}.sh"
  else
    BENCH_SCRIPT="${BASE}${FRAMEWORK_SUFFIX}${SPEC_SUFFIX}.sh"
  fi
  # a manual override wins (set by hand on a dispatch, never by the workflow)
  if [[ -n "$BENCH_SCRIPT_OVERRIDE" ]]; then
    BENCH_SCRIPT="$BENCH_SCRIPT_OVERRIDE"
  fi
  JOB_ID=$(salloc --partition=main --gres=gpu:"$TP" --no-shell 2>&1 | grep -oP '\d+' | head -1)
  srun --jobid="$JOB_ID" \
    --container-image="$SQUASH_FILE" \
    --container-mounts="$GITHUB_WORKSPACE:/workspace/,$HF_HUB_CACHE_MOUNT:$HF_HUB_CACHE" \
    --export=ALL,PORT=8888 \
    bash "$BENCH_SCRIPT"
  scancel "$JOB_ID"
fi
