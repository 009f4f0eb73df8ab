#!/usr/bin/env bash
# Docker launcher, h100-cw nodes: one script per (model, precision, GPU, spec).
set -euo pipefail

MODEL_CODE="${EXP_NAME%%_*}"
SPEC_SUFFIX=$([[ "$SPEC_DECODING" == "mtp" ]] && printf '_mtp' || printf '')
SCRIPT="benchmarks/single_node/${SCENARIO_SUBDIR}${MODEL_CODE}_${PRECISION}_h100${SPEC_SUFFIX}.sh"

docker run --rm --network=host --gpus all --ipc=host \
  -v "$GITHUB_WORKSPACE:/workspace/" -w /workspace/ \
  -e HF_TOKEN -e MODEL -e TP -e EP_SIZE -e CONC -e ISL -e OSL -e PORT=8888 \
  "$IMAGE" bash "$SCRIPT"
