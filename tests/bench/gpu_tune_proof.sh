#!/usr/bin/env bash
# servetop tune on a real GPU (issue 20.5), for a GPU host without network access (not a
# ctest test; the figures go to the README and docs/tune.md):
#
#   1. llama-server with CUDA and the small model pair (scripts/setup-llamacpp.sh --cuda 90
#      --models small) from the npm tarball carried beside the checkout; cached, so a second
#      call on the same machine builds nothing (--setup-only stops here);
#   2. servetop tune small-llamacpp-h200 over the slots (-np) and the draft model (spec=off,on,
#      the recipe's twin) against an SLO, within a budget;
#   3. the winner measured again by itself as a plain `servetop run` with its settings, and
#      set beside the SLO (every target at or above the re-run's 95% lower bound).
#
#   usage: tests/bench/gpu_tune_proof.sh [--setup-only] OUTDIR
#
# Environment: SERVETOP [.carry/servetop, else build/servetop]; LIBS [.carry: put first on
# LD_LIBRARY_PATH]; TARBALL [.carry/node-llama-cpp-3.21.1.tgz]; XDG_CACHE_HOME [build-gpu/cache];
# SLO [tpot_p99_ms=12,ttft_p99_ms=200]; KNOBS ["np=8,16 spec=off,on"]; ISL [512]; OSL [64];
# BUDGET [5m]; CONC ["4:64", the searched range]; for a dry run on a CPU: RECIPE
# [small-llamacpp-h200], MODELS [small], CUDA [90; empty: the CPU build].
# OUTDIR gets log.txt, tune.out, tune.json, report.md, tune.png, rerun.out, rerun.json and
# verdict.txt.
# Exit status: 0 a winner that held again, 1 otherwise, 2 usage.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
setup_only=0
[[ ${1:-} == --setup-only ]] && { setup_only=1; shift; }
out=${1:?usage: gpu_tune_proof.sh [--setup-only] OUTDIR}
mkdir -p "$out" && out=$(cd "$out" && pwd) || exit 2
SERVETOP=${SERVETOP:-$root/.carry/servetop}
[[ -x $SERVETOP ]] || SERVETOP=$root/build/servetop
export LD_LIBRARY_PATH=${LIBS:-$root/.carry}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-$root/build-gpu/cache}
tarball=${TARBALL:-$root/.carry/node-llama-cpp-3.21.1.tgz}
slo=${SLO:-tpot_p99_ms=12,ttft_p99_ms=200}
read -ra knobs <<<"${KNOBS:-np=8,16 spec=off,on}"
conc=${CONC:-4:64}
recipe=${RECIPE:-small-llamacpp-h200}
cuda_args=(--cuda "${CUDA-90}")
[[ -z ${CUDA-90} ]] && cuda_args=()
work=$(mktemp -d /tmp/gpu-tune-XXXXXX)
trap 'rm -rf "$work"' EXIT
exec > >(tee "$out/log.txt") 2>&1
t0=$(date +%s)
say() { echo "== +$(( $(date +%s) - t0 ))s $*"; }

say "environment"
uname -srm; nproc
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -2
"$SERVETOP" --version || { ldd "$SERVETOP" | grep 'not found'; exit 1; }

say "setup: llama-server (${cuda_args[*]:-CPU}) and the ${MODELS:-small} pair, cache $XDG_CACHE_HOME/servetop"
mkdir -p "$XDG_CACHE_HOME/servetop/downloads"
dest=$XDG_CACHE_HOME/servetop/downloads/${tarball##*/}
[[ -f $tarball && ! -f $dest ]] && cp "$tarball" "$dest"
bash "$root/scripts/setup-llamacpp.sh" "${cuda_args[@]}" --models "${MODELS:-small}" 2>&1 | tail -8
(( ${PIPESTATUS[0]} == 0 )) || { say "setup failed"; exit 1; }
(( setup_only )) && { say "setup done"; exit 0; }

common=(--isl "${ISL:-512}" --osl "${OSL:-64}" --num-prompts 400 --seed 0)
knob_args=()
for k in "${knobs[@]}"; do knob_args+=(--knob "$k"); done
say "servetop tune $recipe ${knob_args[*]} --slo $slo --budget ${BUDGET:-5m}"
rc=0
"$SERVETOP" tune "$recipe" "${common[@]}" "${knob_args[@]}" --slo "$slo" \
  --conc-min "${conc%%:*}" --conc-max "${conc##*:}" --budget "${BUDGET:-5m}" \
  --results "$work/tune" >"$out/tune.out" 2>&1 || rc=$?
cat "$out/tune.out"
tune_dir=$(dirname "$(ls "$work"/tune/*/tune.json 2>/dev/null | head -1)")
cp "$tune_dir"/tune.json "$tune_dir"/report.md "$tune_dir"/tune.png "$out/" 2>/dev/null
(( rc == 0 )) || { say "tune exited $rc (0: a winner)"; exit 1; }

# the winner's settings as a plain run: the twin when spec=on, --set for every other knob
winner_py=$root/tests/lib/tune_winner.py
mapfile -t run_args < <(python3 "$winner_py" args "$tune_dir/tune.json")
say "re-run of the winner: servetop run ${run_args[*]}"
rc=0
"$SERVETOP" run "${run_args[@]}" "${common[@]}" --headless --quiet --results "$work/rerun" \
  >"$out/rerun.out" 2>&1 || rc=$?
tail -30 "$out/rerun.out"
rerun=$(ls "$work"/rerun/*/result-conc*.json 2>/dev/null | head -1)
[[ -n $rerun ]] && cp "$rerun" "$out/rerun.json"
python3 "$winner_py" verdict "$tune_dir/tune.json" "$out/rerun.json" | tee "$out/verdict.txt"
grep -q "^verdict ok" "$out/verdict.txt" || rc=1
say "done, exit $rc"
exit "$rc"
