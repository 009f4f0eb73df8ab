#!/usr/bin/env bash
# servetop test data: one script per model, precision and GPU.
srun --export=ALL bash benchmarks/single_node/${SCENARIO_SUBDIR}${EXP_NAME%%_*}_${PRECISION}_h100.sh
