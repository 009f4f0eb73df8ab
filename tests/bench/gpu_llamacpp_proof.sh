#!/usr/bin/env bash
# llama.cpp on a real GPU through servetop (issue 11, point 8), in one command on a GPU host
# without network access (not a ctest test; figures go to the README and docs/telemetry.md):
#
#   1. builds llama-server with CUDA (scripts/setup-llamacpp.sh --cuda 90) from the npm
#      tarball carried beside the checkout, and writes the small model pair (--models small);
#   2. reads the idle GPU (servetop gpus --json, nvidia-smi);
#   3. a short calibration run of small-llamacpp-h200 (its rate sizes the A/B run);
#   4. servetop run small-llamacpp-h200 --ab --conc N --headless: the target alone, then with
#      its draft model; while each server is under load, servetop gpus --json --pid SERVER,
#      nvidia-smi --query-compute-apps and --query-gpu at the same moment, and the server's
#      /props, /slots and /metrics;
#   5. servetop compare, a summary (tests/bench/gpu_llamacpp_summary.py): server GPU memory
#      from servetop against nvidia-smi, throughput, TTFT/TPOT, acceptance off against draft.
#
#   usage: tests/bench/gpu_llamacpp_proof.sh [options] OUTDIR
#
#   --cpu-dry-run   the same steps with a CPU build and the tiny pair (tiny-llamacpp-cpu),
#                   without nvidia-smi: for testing this script on a machine without a GPU
#   --tarball PATH  node-llama-cpp-3.21.1.tgz (default $SERVETOP_LLAMA_TARBALL, else
#                   .carry/node-llama-cpp-3.21.1.tgz); copied into the cache's downloads/,
#                   where the setup script checks its sha512. Needed unless the cache
#                   already has the source.
#   --cache DIR     XDG cache folder to use (default /tmp/servetop-gpu-cache, kept between
#                   calls so that a second call on the same machine builds nothing; with
#                   --cpu-dry-run ${XDG_CACHE_HOME:-$HOME/.cache}, where the CPU build is)
#   --work DIR      scratch folder (default /tmp/servetop-gpu-proof; emptied first)
#   --conc N        concurrency of the runs (default 8; 2 with --cpu-dry-run)
#   --side-s S      seconds of measuring to aim for per side of the A/B (default 45; 6 dry)
#   --prompts N     requests per side of the A/B instead of the calibrated number
#   --deadline S    everything ends within S seconds of the start (default 525; a load
#                   still running then is stopped, its partial results kept)
#
# Environment: SERVETOP (default build/servetop); .carry/lib/ (libyaml-0.so.2,
# libcjson.so.1 of Debian 12) is put first on servetop's LD_LIBRARY_PATH when it exists.
#
# OUTDIR (at most 8 files, none in a subfolder) gets: log.txt (everything, with timestamps),
# summary.md and summary.json, compare.txt (servetop compare of the A/B), readings.tgz (the
# raw gpus/nvidia-smi/server readings, the outcome JSON, build-info, setup output) and
# runs.tgz (the run folders: manifest, recipe, results, server logs).
# Exit status: 0 when the build and both sides of the A/B succeeded, 1 otherwise, 2 usage.
set -uo pipefail
export PYTHONUNBUFFERED=1
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
prog=${0##*/}

usage() { sed -n '/^#   usage:/,/^# Exit status/p' "$0" | sed 's/^# \{0,1\}//'; }

dry=0 tarball=${SERVETOP_LLAMA_TARBALL:-$root/.carry/node-llama-cpp-3.21.1.tgz} cache_arg=""
work=/tmp/servetop-gpu-proof conc="" side_s="" deadline=525 outdir="" fixed_prompts=""
while (( $# )); do
  case $1 in
    --cpu-dry-run) dry=1 ;;
    --tarball) tarball=${2:?--tarball needs a path}; shift ;;
    --cache) cache_arg=${2:?--cache needs a folder}; shift ;;
    --work) work=${2:?--work needs a folder}; shift ;;
    --conc) conc=${2:?--conc needs N}; shift ;;
    --side-s) side_s=${2:?--side-s needs seconds}; shift ;;
    --prompts) fixed_prompts=${2:?--prompts needs N}; shift ;;
    --deadline) deadline=${2:?--deadline needs seconds}; shift ;;
    -h|--help) usage; exit 0 ;;
    -*) echo "$prog: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) [[ -z $outdir ]] || { echo "$prog: one OUTDIR only" >&2; exit 2; }; outdir=$1 ;;
  esac
  shift
done
[[ -n $outdir ]] || { usage >&2; exit 2; }
for v in "${conc:-1}" "${side_s:-1}" "$deadline" "${fixed_prompts:-1}"; do
  [[ $v =~ ^[1-9][0-9]*$ ]] || { echo "$prog: '$v': want a positive whole number" >&2; exit 2; }
done
if (( dry )); then
  recipe=tiny-llamacpp-cpu models=tiny conc=${conc:-2} side_s=${side_s:-6} setup_args=()
else
  recipe=small-llamacpp-h200 models=small conc=${conc:-8} side_s=${side_s:-45} setup_args=(--cuda 90)
fi
SERVETOP=${SERVETOP:-$root/build/servetop}
mkdir -p "$outdir" && outdir=$(cd "$outdir" && pwd) || { echo "$prog: cannot create $outdir" >&2; exit 2; }
rm -rf "$work" && mkdir -p "$work/raw" "$work/runs" || { echo "$prog: cannot make $work" >&2; exit 2; }
raw=$work/raw runs=$work/runs
if [[ -n $cache_arg ]]; then xdg=$cache_arg
elif (( dry )); then xdg=${XDG_CACHE_HOME:-$HOME/.cache}
else xdg=/tmp/servetop-gpu-cache
fi
cache=$xdg/servetop
export XDG_CACHE_HOME=$xdg # the setup script and servetop (its $SERVETOP_CACHE) both use it

# ---- log: every line of this script and its children, stamped, to the console and log.txt
t0=$(date +%s)
stamp() {
  local line now
  while IFS= read -r line; do
    printf -v now '%(%s)T' -1
    printf '%(%H:%M:%S)T +%3ds %s\n' -1 $((now - t0)) "$line"
  done
}
exec 3>&1 4>&2
exec > >(stamp | tee "$outdir/log.txt" >&3) 2>&1
log_pid=$!
section() { echo "== $*"; }
elapsed() { echo $(( $(date +%s) - t0 )); }

# ---- everything started here is stopped on every exit --------------------------------------
run_pid="" run_rc=0 tail_pid="" servetop_pids=()
stop_run() { # stop_run: the running servetop, if any, stopped and waited for (run_rc)
  [[ -n $run_pid ]] || return 0
  if kill -0 "$run_pid" 2>/dev/null; then
    echo "stopping servetop run (pid $run_pid): SIGINT, keeping its partial results"
    kill -INT "$run_pid" 2>/dev/null
    local i
    for i in $(seq 300); do kill -0 "$run_pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$run_pid" 2>/dev/null && { echo "servetop run did not stop in 30 s: SIGKILL"; kill -KILL "$run_pid"; }
  fi
  wait "$run_pid" 2>/dev/null
  run_rc=$?
  run_pid=""
}
# servers_below PID: the llama-server processes whose parent chain reaches PID (servetop ->
# its supervisor -> the server); one pass over /proc/*/stat ("pid (comm) state ppid ...").
servers_below() {
  cat /proc/[0-9]*/stat 2>/dev/null | awk -v root="$1" '{
      c = $0; sub(/^[0-9]+ \(/, "", c); r = c; sub(/\) [^)]*$/, "", c); sub(/^.*\) /, "", r)
      split(r, f, " "); ppid[$1] = f[2]; comm[$1] = c }
    END { for (p in comm) if (comm[p] == "llama-server")
            for (q = ppid[p]; q > 1; q = ppid[q]) if (q == root) { print p; break } }'
}
wait_run() { [[ -z $run_pid ]] || { wait "$run_pid"; run_rc=$?; run_pid=""; }; }
# our_servers: pids of processes launched by one of our servetop runs (servetop marks each
# process of a launch with SERVETOP_LAUNCH_ID=<servetop pid>-<n>).
our_servers() {
  local p id
  for p in /proc/[0-9]*; do
    id=$({ tr '\0' '\n' <"$p/environ"; } 2>/dev/null | sed -n 's/^SERVETOP_LAUNCH_ID=\([0-9]*\)-.*/\1/p')
    [[ -n $id ]] && [[ " ${servetop_pids[*]} " == *" $id "* ]] && echo "${p#/proc/}"
  done
}
cleanup() {
  local rc=$? left
  trap - EXIT INT TERM
  stop_run
  [[ -n $tail_pid ]] && { kill "$tail_pid" 2>/dev/null; wait "$tail_pid" 2>/dev/null; }
  left=$(our_servers | tr '\n' ' ')
  if [[ -n $left ]]; then
    echo "left behind by a run (killed now): $left"
    kill -KILL $left 2>/dev/null
  else
    echo "processes left behind: none"
  fi
  echo "done in $(elapsed) s, exit $rc"
  exec >&3 2>&4
  wait "$log_pid" 2>/dev/null
  exit "$rc"
}
trap cleanup EXIT
trap 'echo "interrupted"; exit 130' INT TERM

# servetop with the carried libraries; st_bg runs it in the background as a direct child, so
# that $! is servetop's own pid (its launches are marked with it; SIGINT stops it cleanly)
st_env=(env "LD_LIBRARY_PATH=$root/.carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$SERVETOP")
st() { "${st_env[@]}" "$@"; }
py=$(command -v python3 || echo /usr/bin/python3)
# http_get URL: the body on stdout (curl, else python3's urllib)
http_get() {
  if command -v curl >/dev/null 2>&1 && curl -s --max-time 5 "$1"; then return 0; fi
  "$py" -c 'import sys, urllib.request as u; sys.stdout.write(u.urlopen(sys.argv[1], timeout=5).read().decode())' \
    "$1" 2>/dev/null
}
have_smi=0
command -v nvidia-smi >/dev/null 2>&1 && (( ! dry )) && have_smi=1
smi_gpu_fields=index,name,memory.total,memory.used,memory.reserved,utilization.gpu,power.draw,power.limit
smi_app_fields=pid,process_name,used_memory

# ---- 1. environment --------------------------------------------------------------------------
section "environment ($( ((dry)) && echo "CPU dry run: $recipe" || echo "GPU: $recipe"), conc $conc, deadline ${deadline} s)"
uname -srm; head -1 /etc/os-release; ldd --version 2>&1 | head -1
echo "cores $(nproc), memory $(free -g | awk '/^Mem:/ {print $2}') GiB, /tmp free $(df -h /tmp | awk 'NR==2 {print $4}')"
"$py" -c 'import sys, numpy; print("python", sys.executable, sys.version.split()[0], "numpy", numpy.__version__)' \
  2>/dev/null || echo "python3 ($py) has no numpy (the setup script looks further)"
if (( have_smi )); then
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  (nvcc --version 2>/dev/null || /usr/local/cuda/bin/nvcc --version) | tail -2
fi
st --version || { ldd "$SERVETOP" 2>&1 | grep -i 'not found'; echo "$prog: $SERVETOP does not run here"; exit 1; }

# ---- 2. llama-server and the models ----------------------------------------------------------
section "setup: scripts/setup-llamacpp.sh ${setup_args[*]} --models $models (cache $cache)"
mkdir -p "$cache/downloads"
if [[ -f $tarball ]]; then
  dest=$cache/downloads/${tarball##*/}
  cmp -s "$tarball" "$dest" 2>/dev/null || cp "$tarball" "$dest"
  echo "tarball $tarball -> $dest ($(stat -c %s "$dest") bytes; the setup script checks its sha512)"
elif (( ! dry )); then
  echo "$prog: no tarball at $tarball (--tarball PATH or SERVETOP_LLAMA_TARBALL; npm pack node-llama-cpp@3.21.1)"
  exit 1
fi
setup_t0=$(date +%s)
bash "$root/scripts/setup-llamacpp.sh" "${setup_args[@]}" --models "$models" 2>&1 | tee "$raw/setup.txt"
setup_rc=${PIPESTATUS[0]}
setup_s=$(( $(date +%s) - setup_t0 ))
echo "setup exit $setup_rc after $setup_s s"
variant=$( ((dry)) && echo cpu || echo cuda90)
cp "$cache"/llama.cpp/*-"$variant"/build-info "$raw/build-info.txt" 2>/dev/null
echo "setup_seconds=$setup_s" >>"$raw/build-info.txt"
if (( setup_rc != 0 )); then
  for f in "$cache"/llama.cpp/build-*-"$variant"/build.log; do
    [[ -f $f ]] && tail -n 200 "$f" >"$raw/build-log-tail.txt"
  done
fi

collect() { # the files of OUTDIR, whatever happened before
  section "collecting into $outdir"
  local dirs
  (cd "$work" && tar czf "$outdir/readings.tgz" raw) && echo "readings.tgz $(stat -c %s "$outdir/readings.tgz") bytes"
  dirs=$(cd "$runs" && ls -d */ 2>/dev/null | tr -d / | tr '\n' ' ')
  if [[ -n $dirs ]]; then
    (cd "$runs" && tar czf "$outdir/runs.tgz" $dirs) && echo "runs.tgz $(stat -c %s "$outdir/runs.tgz") bytes: $dirs"
  fi
}
if (( setup_rc != 0 )); then
  echo "$prog: the setup failed; no runs"
  collect
  exit 1
fi

# ---- 3. the idle GPU -------------------------------------------------------------------------
section "GPUs before the runs"
st gpus
st gpus --json >"$raw/gpus-idle.json"
(( have_smi )) && nvidia-smi --query-gpu=$smi_gpu_fields --format=csv | tee "$raw/nvsmi-gpu-idle.csv"

# ---- 4. calibration: the rate of the off side sizes the A/B ---------------------------------
rate=0 overhead=0 cal_rc=skipped cal_wall=0 cal_result=""
if (( deadline - $(elapsed) < 120 )); then
  section "calibration skipped: $(( deadline - $(elapsed) )) s left"
else
  section "calibration: servetop run $recipe --conc $conc --num-prompts $((2 * conc))"
  cal_t0=$(date +%s.%N)
  "${st_env[@]}" run "$recipe" --conc "$conc" --num-prompts $((2 * conc)) --headless \
    --results "$runs" --label calib >"$raw/calib-run.txt" 2>&1 &
  run_pid=$!
  servetop_pids+=("$run_pid")
  wait_run; cal_rc=$run_rc
  cal_wall=$(awk -v a="$cal_t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  cat "$raw/calib-run.txt"
  cal_result=$(ls "$runs"/*-"$recipe"-calib/result-conc"$conc".json 2>/dev/null | head -1)
  read -r rate overhead < <("$py" - "$cal_result" "$cal_wall" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
    print(f"{r['completed'] / r['duration']:.4f} {max(0.0, float(sys.argv[2]) - r['duration']):.1f}")
except Exception:
    print("0 0")
PY
)
fi
echo "calibration exit $cal_rc in $cal_wall s: $rate requests/s measured, $overhead s of start and warmup"

# num-prompts for side_s seconds of measuring at that rate, within what the deadline leaves
# (the draft side may take up to twice as long as the off side)
left=$(( deadline - $(elapsed) - 30 ))
read -r prompts plan < <("$py" - "$rate" "$overhead" "$side_s" "$left" "$conc" <<'PY'
import sys
rate, overhead, side_s, left, conc = map(float, sys.argv[1:])
rate = rate if rate > 0 else conc / 10.0          # no calibration: assume 10 s a request
fit = (left - 2 * overhead) / 3.0                 # off side + a draft side twice as long
s = max(3.0, min(side_s, fit))
n = max(2 * conc, round(s * rate / conc) * conc)
print(int(n), f"{n / rate:.0f}s_per_side_at_{rate:.2f}_req/s")
PY
)
[[ -n $fixed_prompts ]] && prompts=$fixed_prompts plan="--prompts $fixed_prompts"
echo "A/B plan: $prompts prompts a side ($plan), $left s left for it"

# ---- 5. the A/B run, with readings while each server is under load ---------------------------
section "servetop run $recipe --ab --conc $conc --num-prompts $prompts --headless"
ab_out=$raw/ab-run.txt
"${st_env[@]}" run "$recipe" --ab --conc "$conc" --num-prompts "$prompts" --headless --json \
  --results "$runs" >"$ab_out" 2>&1 &
run_pid=$!
servetop_pids+=("$run_pid")
tail -n +1 -f --pid="$run_pid" "$ab_out" &
tail_pid=$!
stop_at=$(( t0 + deadline - 25 ))

# reading SIDE PID: servetop gpus, nvidia-smi (both queries) at the same moment, then the
# server's own view.
reading() {
  local side=$1 spid=$2 port=$3 p1 p2 p3 p4
  st gpus --json --pid "$spid" >"$raw/$side-gpus.json" 2>&1 & p1=$!
  st gpus --json --pid "$run_pid" >"$raw/$side-gpus-tree.json" 2>&1 & p2=$!
  if (( have_smi )); then
    nvidia-smi --query-compute-apps=$smi_app_fields --format=csv >"$raw/$side-nvsmi-apps.csv" 2>&1 & p3=$!
    nvidia-smi --query-gpu=$smi_gpu_fields --format=csv >"$raw/$side-nvsmi-gpu.csv" 2>&1 & p4=$!
  fi
  wait $p1 $p2 ${p3:-} ${p4:-}
  echo "$spid" >"$raw/$side-pid.txt"
  date -u +%FT%T.%NZ >"$raw/$side-taken-at.txt"
  { tr '\0' ' ' <"/proc/$spid/cmdline"; } >"$raw/$side-cmdline.txt" 2>/dev/null
  local what
  for what in props slots metrics; do
    http_get "http://127.0.0.1:$port/$what" >"$raw/$side-$what.$([[ $what == metrics ]] && echo txt || echo json)"
  done
  echo "reading $side: server pid $spid (port $port), $4"
  st gpus --pid "$spid"
  (( have_smi )) && cat "$raw/$side-nvsmi-apps.csv"
}

sides=(off draft)
side=0 seen=""
declare -A found_at=()
while kill -0 "$run_pid" 2>/dev/null; do
  if (( $(date +%s) >= stop_at )); then
    echo "deadline: stopping the A/B run $((deadline - 25)) s after the start"
    stop_run
    break
  fi
  if (( side < 2 )); then
    for spid in $(servers_below "$run_pid"); do
      [[ " $seen " == *" $spid "* ]] && continue
      port=$({ tr '\0' '\n' <"/proc/$spid/cmdline"; } 2>/dev/null | sed -n '/^--port$/{n;p;q}')
      [[ -n $port ]] || continue
      found_at[$spid]=${found_at[$spid]:-$(date +%s)}
      # under load: llama.cpp counts the requests it decodes (warmups count too: the memory
      # is the same); a server never seen busy is read 30 s after it appeared all the same
      how=""
      if http_get "http://127.0.0.1:$port/metrics" | grep -q '^llamacpp:requests_processing [1-9]'; then
        how="under load"
      elif (( $(date +%s) - ${found_at[$spid]} >= 30 )); then
        how="load not seen in 30 s"
      fi
      if [[ -n $how ]]; then
        [[ $how == "under load" ]] && sleep 2
        reading "${sides[side]}" "$spid" "$port" "$how"
        seen+=" $spid"
        side=$((side + 1))
      fi
    done
  fi
  sleep 0.5
done
wait_run; ab_rc=$run_rc
wait "$tail_pid" 2>/dev/null; tail_pid=""
echo "A/B exit $ab_rc; readings taken: $side of 2"

# ---- 6. compare, summary, files ----------------------------------------------------------------
mapfile -t ab_dirs < <("$py" - "$ab_out" <<'PY'
import json, sys
for line in reversed(open(sys.argv[1], errors="replace").read().splitlines()):
    if line.startswith("[{"):
        for o in json.loads(line):
            if o.get("dir"):
                print(o["dir"])
        break
PY
)
if (( ${#ab_dirs[@]} < 2 )); then # no outcome JSON (stopped): the folders by name
  mapfile -t ab_dirs < <(ls -d "$runs"/*-ab 2>/dev/null)
fi
if (( ${#ab_dirs[@]} == 2 )); then
  st compare "${ab_dirs[@]}" >"$outdir/compare.txt" 2>&1
  st compare "${ab_dirs[@]}" --json >"$raw/compare.json" 2>&1
fi
"$py" "$here/gpu_llamacpp_summary.py" --raw "$raw" --calib "$(dirname "${cal_result:-/x/y}")" \
  --runs "${ab_dirs[@]}" --md "$outdir/summary.md" --json "$outdir/summary.json" &&
  cat "$outdir/summary.md"
collect
(( ab_rc == 0 && ${#ab_dirs[@]} == 2 ))
