#!/usr/bin/env bash
# servetop test data: honours SCENARIO_SUBDIR (empty for fixed-seq-len here).
SPEC_SUFFIX=$([[ "$SPEC_DECODING" == "mtp" ]] && printf '_mtp' || printf '')
srun --export=ALL bash benchmarks/single_node/${SCENARIO_SUBDIR}${EXP_NAME%%_*}_${PRECISION}_h200${SPEC_SUFFIX}.sh
