#!/usr/bin/env bash
# Docker launcher, h100-cw nodes: one script per (model, precision, GPU, spec).
set -euo pipefail

MODEL_CODE="${EXP_NAME%%_*}"
SPEC_SUFFIX=$([[ "$SPEC_DECODING" == "mtp" ]] && printf '_mtp' || printf '')
SCRIPT="benchmarks/single_node/${SCENARIO_SUBDIR}${MODEL_CODE}_${PRECISION}_h100${SPEC_SUFFIX}.sh"

docker run --rm --network=host --gpus all --ipc=host \
  -v "$GITHUB_WORKSPACE:/workspace/" -w /workspace/ \
  -e HF_TOKEN -e MODEL -e TP -e EP_SIZE -e DP_ATTENTION -e CONC -e ISL -e OSL -e MAX_MODEL_LEN \
  -e RANDOM_RANGE_RATIO -e RESULT_FILENAME -e SPEC_DECODING -e PORT=8888 \
  "$IMAGE" bash "$SCRIPT"
