#!/usr/bin/env bash
# Legacy launcher: scripts lived directly under benchmarks/.
docker run --rm --gpus all -v "$GITHUB_WORKSPACE:/workspace" -w /workspace \
  -e MODEL -e TP -e CONC -e ISL -e OSL "$IMAGE" \
  bash benchmarks/"${EXP_NAME%%_*}"_${PRECISION}_h200_docker.sh
