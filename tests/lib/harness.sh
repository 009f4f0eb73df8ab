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
