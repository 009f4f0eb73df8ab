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

# need_llama_server: finds llama-server (LLAMA_SERVER, PATH, or the cache
# scripts/setup-llamacpp.sh fills) and its tiny test models; sets
# LLAMA_SERVER, LLAMA_TARGET, LLAMA_DRAFT. When absent: exit 77 (CTest's skip)
# with the reason, or fail when SERVETOP_REQUIRE_LLAMA_SERVER=1.
need_llama_server() {
  local cache=${XDG_CACHE_HOME:-$HOME/.cache}/servetop
  LLAMA_SERVER=${LLAMA_SERVER:-$(command -v llama-server 2>/dev/null || echo "$cache/bin/llama-server")}
  LLAMA_TARGET=${LLAMA_TARGET:-$cache/models/tiny-target.gguf}
  LLAMA_DRAFT=${LLAMA_DRAFT:-$cache/models/tiny-draft.gguf}
  local missing=
  [[ -f $LLAMA_SERVER && -x $LLAMA_SERVER ]] || missing="llama-server ($LLAMA_SERVER)"
  [[ -s $LLAMA_TARGET && -s $LLAMA_DRAFT ]] || missing="${missing:+$missing, }the tiny models ($LLAMA_TARGET)"
  [[ -z $missing ]] && return 0
  if [[ ${SERVETOP_REQUIRE_LLAMA_SERVER:-0} == 1 ]]; then
    echo "FAIL: SERVETOP_REQUIRE_LLAMA_SERVER=1 but no $missing (scripts/setup-llamacpp.sh)"
    exit 1
  fi
  echo "SKIP: no $missing; scripts/setup-llamacpp.sh builds them"
  exit 77
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
