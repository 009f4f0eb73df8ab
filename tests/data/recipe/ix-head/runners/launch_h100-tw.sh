#!/usr/bin/env bash
# servetop test data: a docker launcher that hands the container an explicit
# variable list (EP_SIZE is not in it).
SPEC_SUFFIX=$([[ "${SPEC_DECODING:-}" == "mtp" ]] && printf '_mtp' || printf '')
docker run --rm --network=host --gpus all \
  -e HF_TOKEN -e MODEL -e TP -e CONC -e ISL -e OSL -e MAX_MODEL_LEN -e RESULT_FILENAME \
  -e RANDOM_RANGE_RATIO -e PORT=8888 \
  --entrypoint=/bin/bash "$IMAGE" \
  benchmarks/single_node/${SCENARIO_SUBDIR}"${EXP_NAME%%_*}_${PRECISION}_h100${SPEC_SUFFIX}.sh"
