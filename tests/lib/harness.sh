# Shared scaffolding of the shell integration tests (sourced, never run alone):
# a work folder, a cleanup trap that kills and reaps every process the test
# started, check helpers, and start_sim for a `servetop sim` on a free port.
#   source "$(dirname "$0")/../lib/harness.sh"
set -u
SERVETOP=${SERVETOP:?set SERVETOP to the servetop binary}
WORK=$(mktemp -d)
PIDS=()   # every background process of the test; add with PIDS+=("$!")
FAILS=0

harness_cleanup() {
  local p
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
  rm -rf "$WORK"
}
trap harness_cleanup EXIT

fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
ok() { echo "ok: $*"; }
check() { # check "description" command...
  local what=$1; shift
  if "$@"; then ok "$what"; else fail "$what"; fi
}

# start_sim NAME args... : starts `servetop sim --port 0` with args, waits for
# its port file, sets PORT and SIM_PID; its stderr goes to $WORK/NAME.log.
start_sim() {
  local name=$1; shift
  rm -f "$WORK/$name.port"
  "$SERVETOP" sim --port 0 --sim-port-file "$WORK/$name.port" "$@" 2>"$WORK/$name.log" &
  SIM_PID=$!
  PIDS+=("$SIM_PID")
  for _ in $(seq 200); do
    [[ -s $WORK/$name.port ]] && break
    kill -0 "$SIM_PID" 2>/dev/null || break
    sleep 0.05
  done
  PORT=$(cat "$WORK/$name.port" 2>/dev/null)
  [[ -n $PORT ]] || { fail "sim $name did not start"; cat "$WORK/$name.log"; exit 1; }
}

# finish [WHAT]: the test's exit status from the checks that failed.
finish() {
  if (( FAILS > 0 )); then
    echo "$FAILS check(s) failed"
    exit 1
  fi
  echo "all ${1:-} checks passed"
}

# find_llama_server: llama-server found as servetop finds it (`servetop engines`:
# $LLAMA_SERVER, else PATH, else the cache scripts/setup-llamacpp.sh fills) and the
# tiny test models of that cache; sets LLAMA_SERVER, LLAMA_TARGET, LLAMA_DRAFT.
# Returns 1 with LLAMA_MISSING saying what is not there.
find_llama_server() {
  local cache=${XDG_CACHE_HOME:-$HOME/.cache}/servetop engines reason=
  LLAMA_MISSING=
  if engines=$("$SERVETOP" engines --json ${LLAMA_SERVER:+--llama-server "$LLAMA_SERVER"} 2>&1); then
    { read -r LLAMA_SERVER; read -r reason; } < <(python3 -c 'import json, sys
e = {x["name"]: x for x in json.load(sys.stdin)}["llamacpp"]
print(e["program_path"] if e["available"] else "")
print(e.get("reason", ""))' <<<"$engines")
    [[ -n $LLAMA_SERVER ]] || LLAMA_MISSING="llama-server ($reason)"
  else
    LLAMA_MISSING="llama-server ($engines)"
  fi
  LLAMA_TARGET=${LLAMA_TARGET:-$cache/models/tiny-target.gguf}
  LLAMA_DRAFT=${LLAMA_DRAFT:-$cache/models/tiny-draft.gguf}
  [[ -s $LLAMA_TARGET && -s $LLAMA_DRAFT ]] ||
    LLAMA_MISSING="${LLAMA_MISSING:+$LLAMA_MISSING, }the tiny models ($LLAMA_TARGET, $LLAMA_DRAFT)"
  [[ -z $LLAMA_MISSING ]]
}

# skip_without_llama_server WHY: CTest's skip (exit 77) saying why; a failure
# instead when SERVETOP_REQUIRE_LLAMA_SERVER=1 (CI) or when a check already failed.
skip_without_llama_server() {
  if [[ ${SERVETOP_REQUIRE_LLAMA_SERVER:-0} == 1 ]]; then
    fail "SERVETOP_REQUIRE_LLAMA_SERVER=1 but $1"
    finish
  fi
  echo "SKIP: $1"
  (( FAILS == 0 )) || finish
  exit 77
}

# need_llama_server: find_llama_server, else skip (skip_without_llama_server).
need_llama_server() {
  find_llama_server || skip_without_llama_server "no $LLAMA_MISSING; scripts/setup-llamacpp.sh builds them"
}

# start_llama NAME args...: llama-server on a free port with --metrics and
# args; waits for /health; sets PORT and LLAMA_PID; its log is $WORK/NAME.log.
start_llama() {
  local name=$1; shift
  PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  "$LLAMA_SERVER" --host 127.0.0.1 --port "$PORT" --metrics "$@" >"$WORK/$name.log" 2>&1 &
  LLAMA_PID=$!
  PIDS+=("$LLAMA_PID")
  for _ in $(seq 300); do
    curl -sf "http://127.0.0.1:$PORT/health" >/dev/null 2>&1 && return 0
    kill -0 "$LLAMA_PID" 2>/dev/null || break
    sleep 0.1
  done
  fail "llama-server $name did not become ready"; tail -20 "$WORK/$name.log"; exit 1
}
