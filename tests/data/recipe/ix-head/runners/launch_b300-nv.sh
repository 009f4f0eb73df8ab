#!/usr/bin/bash
# servetop test data: a Slurm launcher that builds its script path in two
# steps, falls back to the untagged name when the framework-tagged one is
# missing, and lets a caller override the choice.
set -x

if [[ "$IS_MULTINODE" == "true" ]]; then
    srtctl apply -f "$CONFIG_FILE"
else
    SQUASH_FILE="/data/squash/$(echo "$IMAGE" | sed 's/[\/:@#]/_/g').sqsh"
    SPEC_SUFFIX=$([[ "$SPEC_DECODING" == "mtp" ]] && printf '_mtp' || printf '')
    BENCH_BASE="benchmarks/single_node/${SCENARIO_SUBDIR}${EXP_NAME%%_*}_${PRECISION}_b300"
    BENCH_SCRIPT="${BENCH_BASE}_${FRAMEWORK}${SPEC_SUFFIX}.sh"
    if [[ ! -f "$BENCH_SCRIPT" ]]; then
        LEGACY_FW_SUFFIX=$([[ "$FRAMEWORK" == "trt" ]] && printf '_trt' || printf '')
        BENCH_SCRIPT="${BENCH_BASE}${LEGACY_FW_SUFFIX}${SPEC_SUFFIX}.sh"
    fi

    if [[ -n "${BENCH_SCRIPT_OVERRIDE:-}" ]]; then
        BENCH_SCRIPT="$BENCH_SCRIPT_OVERRIDE"
    fi

    case "$FRAMEWORK" in
        trt) MOUNT_DIR=/ix ;;
        *) MOUNT_DIR=/workspace ;;
    esac

    # one import at a time; a failed lock ends this subshell only
    (
        exec 9>"${SQUASH_FILE}.lock"
        flock -w 600 9 || { echo "no lock for $SQUASH_FILE" >&2; exit 1; }
        enroot import -o "$SQUASH_FILE" "docker://$IMAGE"
    )

    JOB_ID=$(squeue --name="$RUNNER_NAME" -h -o %A | head -n1)
    srun --jobid=$JOB_ID --container-image=$SQUASH_FILE \
        --container-mounts=$GITHUB_WORKSPACE:$MOUNT_DIR --export=ALL,PORT=8888 \
        bash "$BENCH_SCRIPT"
fi
