# The steps tests/bench/paced_bench.sh and paced_scaling.sh share (sourced):
# start tests/bench_paced_server, run one client under paced.py's CPU sampler,
# stop the server (it writes its trace), report the run. The caller sets
#   out (results folder; raw/ below it), server (the server binary),
#   server_cpus (taskset list for the server and the sampler),
#   TPOT_MS, TTFT_MS, ISL, PROMPTS_PER_STREAM
# and gets server_pid and port from paced_start_server.
paced_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
paced_helper=(python3 "$paced_here/paced.py")
server_pid=

paced_cleanup() {
  if [[ -n $server_pid ]]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  server_pid=
}

# paced_start_server TAG MODE [SERVER ARGS...]: MODE paced, staggered or fast.
# With QUIET_MAX_BUSY set (cores), first waits up to QUIET_WAIT_S [300] for the
# rest of the machine to be that quiet.
paced_start_server() {
  local tag=$1 mode=$2
  if [[ -n ${QUIET_MAX_BUSY:-} ]]; then
    "${paced_helper[@]}" quiet --max-busy "$QUIET_MAX_BUSY" --wait "${QUIET_WAIT_S:-300}"
  fi
  shift 2
  local args=(--tpot-ms "$TPOT_MS" --ttft-ms "$TTFT_MS")
  [[ $mode == staggered ]] && args+=(--staggered)
  [[ $mode == fast ]] && args=(--fast --ttft-ms 0)
  rm -f "$out/raw/$tag.port"
  taskset -c "$server_cpus" "$server" --port-file "$out/raw/$tag.port" --trace "$out/raw/$tag.trace" \
    "${args[@]}" "$@" 2>"$out/raw/$tag.server.log" &
  server_pid=$!
  local _
  for _ in $(seq 200); do [[ -s $out/raw/$tag.port ]] && break; sleep 0.05; done
  port=$(cat "$out/raw/$tag.port")
}

# paced_flags TAG STREAMS OSL SEED: benchmark_serving.py flags, same for every client.
paced_flags() {
  local tag=$1 streams=$2 osl=$3 seed=$4
  PACED_FLAGS=(--model bench --backend vllm --base-url "http://127.0.0.1:$port"
    --dataset-name random --random-input-len "$ISL" --random-output-len "$osl"
    --random-range-ratio 0.8 --num-prompts $((streams * PROMPTS_PER_STREAM))
    --max-concurrency "$streams" --request-rate inf --ignore-eos --num-warmups 0
    --percentile-metrics ttft,tpot,itl,e2el --save-result --save-detailed
    --result-dir "$out/raw" --result-filename "$tag.json" --disable-tqdm --seed "$seed")
}

# paced_measure TAG CLIENT_CPUS POINT CLIENT_LABEL TIMEOUT_S -- COMMAND...: runs
# the client, stops the server, appends the report to $out/results.jsonl and
# prints its summary. Returns 1 when the run failed (the log says why).
paced_measure() {
  local tag=$1 cpus=$2 point=$3 label=$4 timeout_s=$5
  shift 6
  echo "== $tag ($(cut -d' ' -f1-3 /proc/loadavg))"
  local rc=0
  taskset -c "$server_cpus" "${paced_helper[@]}" run --samples "$out/raw/$tag.samples" --cpus "$cpus" \
    --timeout "$timeout_s" --watch "$server_pid" -- "$@" >"$out/raw/$tag.log" 2>&1 || rc=$?
  kill -TERM "$server_pid"
  wait "$server_pid" || { echo "paced: server failed, see $out/raw/$tag.server.log" >&2; rc=1; }
  server_pid=
  if (( rc != 0 )) || [[ ! -s $out/raw/$tag.json ]]; then
    echo "paced: $tag failed (exit $rc), see $out/raw/$tag.log" >&2
    tail -5 "$out/raw/$tag.log" >&2
    return 1
  fi
  "${paced_helper[@]}" report --trace "$out/raw/$tag.trace" --result "$out/raw/$tag.json" \
    --samples "$out/raw/$tag.samples" --label "$tag" --client "$label" --point "$point" \
    --out "$out/results.jsonl" --summary
}

paced_machine() { # FILE: what the machine was and how busy
  {
    echo "# $(date -u +%FT%TZ) $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')),"
    echo "# $(uname -sr), $(curl-config --version 2>/dev/null || echo 'libcurl ?'), server CPUs $server_cpus"
    echo "# uptime: $(uptime)"
    { top -bn1 2>/dev/null || ps -eo pid,pcpu,comm --sort=-pcpu 2>/dev/null; } | head -15 || true
  } >"$1"
  head -3 "$1"
}
