#!/usr/bin/env bash
# Where the load loop's CPU goes (docs/bench.md, "Where the time goes"): one
# `servetop bench` run against tests/bench_paced_server under
# `perf record -e cpu-clock -g`, its loop-thread samples sorted into categories
# by tests/bench/cpu_breakdown.py, with µs of CPU per SSE event.
#
#   usage: tests/bench/cpu_profile.sh BUILD_DIR OUT_DIR [MODE] [STREAMS] [SERVER_CPU] [CLIENT_CPU]
#
# MODE paced (default), staggered or fast, as in paced_bench.sh; STREAMS 1024.
# BUILD_DIR should be configured with CFLAGS=-fno-omit-frame-pointer so the call
# chains are whole. Set LIBCURL_DIR to a libcurl built with symbols and frame
# pointers (e.g. curl 7.88.1 from source, see docs/bench.md) to see inside it;
# with a stripped system libcurl its frames land in "curl: other".
# Needs linux-perf (software cpu-clock events work in a VM). OSL [256],
# PROMPTS_PER_STREAM [4], FREQ [4999] as in paced_bench.sh.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?usage: cpu_profile.sh BUILD_DIR OUT_DIR [MODE] [STREAMS] [SERVER_CPU] [CLIENT_CPU]}" && pwd)
out=${2:?usage: cpu_profile.sh BUILD_DIR OUT_DIR [MODE] [STREAMS] [SERVER_CPU] [CLIENT_CPU]}
mode=${3:-paced}
streams=${4:-1024}
server_cpu=${5:-0}
client_cpu=${6:-1}
OSL=${OSL:-256}
PROMPTS_PER_STREAM=${PROMPTS_PER_STREAM:-4}
FREQ=${FREQ:-4999}
command -v perf >/dev/null || { echo "cpu_profile: needs perf (Debian: linux-perf)" >&2; exit 2; }
mkdir -p "$out"
out=$(cd "$out" && pwd)

args=(--tpot-ms 10 --ttft-ms 10)
[[ $mode == staggered ]] && args+=(--staggered)
[[ $mode == fast ]] && args=(--fast --ttft-ms 0)
rm -f "$out/port"
taskset -c "$server_cpu" "$build/tests/bench_paced_server" --port-file "$out/port" \
  --trace "$out/server.trace" "${args[@]}" 2>"$out/server.log" &
server_pid=$!
trap 'kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true' EXIT
for _ in $(seq 200); do [[ -s $out/port ]] && break; sleep 0.05; done
port=$(cat "$out/port")

echo "# $(date -u +%FT%TZ) $mode x $streams, load: $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$out/profile.md"
env ${LIBCURL_DIR:+LD_LIBRARY_PATH=$LIBCURL_DIR} taskset -c "$client_cpu" \
  perf record -q -e cpu-clock -F "$FREQ" -g -o "$out/perf.data" -- \
  "$build/servetop" bench --model bench --backend vllm --base-url "http://127.0.0.1:$port" \
  --dataset-name random --random-input-len 128 --random-output-len "$OSL" --random-range-ratio 0.8 \
  --num-prompts $((streams * PROMPTS_PER_STREAM)) --max-concurrency "$streams" --request-rate inf \
  --ignore-eos --num-warmups 0 --save-result --result-dir "$out" --result-filename result.json \
  --disable-tqdm >"$out/bench.log" 2>&1
events=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["servetop"]["loop"]["sse_events"])' "$out/result.json")
samples=$(perf script -i "$out/perf.data" --comms st-loadgen -F comm 2>/dev/null | wc -l)
cpu_s=$(python3 -c "print($samples / $FREQ)")
echo "loop: $samples samples at $FREQ Hz = $cpu_s s of CPU, $events SSE events" | tee -a "$out/profile.md"
perf script -i "$out/perf.data" --comms st-loadgen -F comm,ip,sym 2>/dev/null |
  python3 "$here/cpu_breakdown.py" --events "$events" --cpu-s "$cpu_s" | tee -a "$out/profile.md"
