#!/usr/bin/env bash
# h200-nb launcher that predates agentic scenarios: the subdirectory is fixed (fixture).
set -euo pipefail

MODEL_CODE="${EXP_NAME%%_*}"
SPEC_SUFFIX=$([[ "$SPEC_DECODING" == "mtp" ]] && printf '_mtp' || printf '')
SCRIPT="benchmarks/single_node/fixed_seq_len/${MODEL_CODE}_${PRECISION}_h200${SPEC_SUFFIX}.sh"
srun --export=ALL --container-image="$IMAGE" bash "$SCRIPT"
