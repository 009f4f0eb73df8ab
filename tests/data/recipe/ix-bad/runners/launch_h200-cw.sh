#!/usr/bin/env bash
# Docker launcher, h200-cw nodes: legacy names only (no framework-tagged lookup).
set -euo pipefail

HF_HUB_CACHE_MOUNT="/mnt/hf_hub_cache/"
MODEL_CODE="${EXP_NAME%%_*}"
FRAMEWORK_SUFFIX=$([[ "$FRAMEWORK" == "trt" ]] && printf '_trt' || printf '')
SPEC_SUFFIX=$([[ "$SPEC_DECODING" == "mtp" ]] && printf '_mtp' || printf '')

docker run --rm --network=host --gpus all --ipc=host \
  -v "$HF_HUB_CACHE_MOUNT:$HF_HUB_CACHE" -v "$GITHUB_WORKSPACE:/workspace/" -w /workspace/ \
  -e HF_TOKEN -e MODEL -e TP -e EP_SIZE -e DP_ATTENTION -e CONC -e ISL -e OSL \
  -e MAX_MODEL_LEN -e RANDOM_RANGE_RATIO -e RESULT_FILENAME -e SPEC_DECODING -e PORT=8888 \
  "$IMAGE" \
  bash benchmarks/single_node/${SCENARIO_SUBDIR}${MODEL_CODE}_${PRECISION}_h200${FRAMEWORK_SUFFIX}${SPEC_SUFFIX}.sh
