#!/usr/bin/env bash
# servetop test data: the workflow's SCENARIO_SUBDIR picks the folder.
srun --export=ALL bash "benchmarks/single_node/${SCENARIO_SUBDIR}${EXP_NAME%%_*}_${PRECISION}_h200.sh"
