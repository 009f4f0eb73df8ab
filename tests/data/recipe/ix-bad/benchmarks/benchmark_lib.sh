#!/usr/bin/env bash
# Helpers sourced by every launch script (fixture: bodies are minimal).

check_env_vars() {
  local missing=0
  for v in "$@"; do
    if [[ -z "${!v:-}" ]]; then
      echo "missing env var: $v" >&2
      missing=1
    fi
  done
  return $missing
}

wait_for_server_ready() {
  local port="" log="" pid=""
  while [[ $# -gt 0 ]]; do
    case "$1" in
      --port) port="$2"; shift 2 ;;
      --server-log) log="$2"; shift 2 ;;
      --server-pid) pid="$2"; shift 2 ;;
      *) shift ;;
    esac
  done
  until curl -sf "http://0.0.0.0:${port}/health" >/dev/null; do
    kill -0 "$pid" || { tail -n 50 "$log"; return 1; }
    sleep 5
  done
}

run_benchmark_serving() {
  python3 utils/bench_serving/benchmark_serving.py --dataset-name random "$@"
}
