#!/usr/bin/env bash
# servetop test data: builds the fixed-seq-len path for every scenario.
SPEC_SUFFIX=$([[ "$SPEC_DECODING" == "mtp" ]] && printf '_mtp' || printf '')
SCRIPT="benchmarks/single_node/${EXP_NAME%%_*}_${PRECISION}_b200${SPEC_SUFFIX}.sh"
srun --export=ALL bash "$SCRIPT"
