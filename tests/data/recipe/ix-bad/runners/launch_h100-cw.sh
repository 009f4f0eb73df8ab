#!/usr/bin/env bash
# h100-cw launcher as it was before SPEC_SUFFIX reached the H100 family (fixture).
set -euo pipefail

MODEL_CODE="${EXP_NAME%%_*}"
docker run --rm --network=host --gpus all --ipc=host -v "$GITHUB_WORKSPACE:/workspace/" \
  -w /workspace/ -e MODEL -e TP -e CONC -e ISL -e OSL -e PORT=8888 "$IMAGE" \
  bash benchmarks/single_node/${SCENARIO_SUBDIR}${MODEL_CODE}_${PRECISION}_h100.sh
