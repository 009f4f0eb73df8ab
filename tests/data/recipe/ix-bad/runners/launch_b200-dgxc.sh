#!/usr/bin/env bash
# Slurm launcher, b200-dgxc (launch_b200-dgxc-slurm.sh is a symlink to this file).
set -euo pipefail

export MODEL_PATH="/lustre/models/${MODEL}"
MODEL_CODE="${EXP_NAME%%_*}"
FRAMEWORK_SUFFIX=$([[ "$FRAMEWORK" == "trt" ]] && printf '_trt' || printf '')
SPEC_SUFFIX=$([[ "$SPEC_DECODING" == "mtp" ]] && printf '_mtp' || printf '')

if [[ "${IS_MULTINODE:-false}" == "true" ]]; then
  srtctl apply -f "$CONFIG_FILE"
else
  B="benchmarks/single_node/${SCENARIO_SUBDIR}${MODEL_CODE}_${PRECISION}_b200"
  SCRIPT_FW="${B}_${FRAMEWORK}${SPEC_SUFFIX}.sh"
  SCRIPT_LEGACY="${B}${FRAMEWORK_SUFFIX}${SPEC_SUFFIX}.sh"
  if [[ -f "$SCRIPT_FW" ]]; then
    SCRIPT="$SCRIPT_FW"
  elif [[ -f "$SCRIPT_LEGACY" ]]; then
    SCRIPT="$SCRIPT_LEGACY"
  else
    echo "no launch script: $SCRIPT_FW or $SCRIPT_LEGACY" >&2
    exit 1
  fi
  srun --export=ALL --container-image="$IMAGE" bash "$SCRIPT"
fi
