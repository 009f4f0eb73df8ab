#!/usr/bin/env bash
# servetop test data: legacy names only (no framework tag); the script runs
# inside `bash -c` with a cleanup after it.
FRAMEWORK_SUFFIX=$([[ "$FRAMEWORK" == "trt" ]] && printf '_trt' || printf '')
SPEC_SUFFIX=$([[ "$SPEC_DECODING" == "mtp" ]] && printf '_mtp' || printf '')
srun --export=ALL --container-image="$IMAGE" \
bash -c "bash benchmarks/single_node/${SCENARIO_SUBDIR}${EXP_NAME%%_*}_${PRECISION}_h200${FRAMEWORK_SUFFIX}${SPEC_SUFFIX}.sh; rm -rf /dev/shm/sessions"
