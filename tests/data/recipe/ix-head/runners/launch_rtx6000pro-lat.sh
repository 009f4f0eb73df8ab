#!/usr/bin/env bash
# servetop test data: a docker launcher that tries the tagged name, then the
# untagged one, and stops when neither is there.
set -euo pipefail

SPEC_SUFFIX=$([ "${SPEC_DECODING:-none}" = "mtp" ] && printf '_mtp' || printf '')
BENCH_BASE="benchmarks/single_node/${SCENARIO_SUBDIR}${EXP_NAME%%_*}_${PRECISION}_rtx6000pro"
if [ -f "${BENCH_BASE}_${FRAMEWORK}${SPEC_SUFFIX}.sh" ]; then
    BENCH_SCRIPT="${BENCH_BASE}_${FRAMEWORK}${SPEC_SUFFIX}.sh"
elif [ -f "${BENCH_BASE}${SPEC_SUFFIX}.sh" ]; then
    BENCH_SCRIPT="${BENCH_BASE}${SPEC_SUFFIX}.sh"
else
    echo "no benchmark script for ${EXP_NAME}" >&2
    exit 1
fi

docker run --rm --gpus all \
    --env MODEL --env TP --env EP_SIZE --env CONC --env ISL --env OSL --env MAX_MODEL_LEN \
    --env RANDOM_RANGE_RATIO --env RESULT_FILENAME --env SPEC_DECODING --env PORT=8888 \
    "$IMAGE" bash "$BENCH_SCRIPT"
