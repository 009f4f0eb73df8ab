#!/bin/bash
# servetop gpus against a live `servetop sim` (the sim backend, labelled simulated).
set -u
: "${SERVETOP:?}"
tmp=$(mktemp -d)
sim_pid=
cleanup() {
  if [ -n "$sim_pid" ]; then kill "$sim_pid" 2>/dev/null; wait "$sim_pid" 2>/dev/null; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; [ -f "$tmp/sim.log" ] && tail -5 "$tmp/sim.log"; exit 1; }

"$SERVETOP" sim --port 0 --sim-port-file "$tmp/port" >"$tmp/sim.log" 2>&1 &
sim_pid=$!
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.1; done
[ -s "$tmp/port" ] || fail "sim did not write its port"
url="http://127.0.0.1:$(cat "$tmp/port")"

out=$(timeout 20 "$SERVETOP" gpus --json --telemetry sim --telemetry-url "$url" --pid "$sim_pid") \
  || fail "gpus --telemetry sim exited $?"
grep -q '"backend":[[:space:]]*"sim"' <<<"$out" || fail "backend sim: $out"
grep -q '"simulated":[[:space:]]*true' <<<"$out" || fail "simulated label: $out"
grep -q '"name":[[:space:]]*"NVIDIA H200 (simulated)"' <<<"$out" || fail "gpu name: $out"
grep -q '"simulated_breakdown"' <<<"$out" || fail "breakdown: $out"
grep -q "\"pid\":[[:space:]]*$sim_pid" <<<"$out" || fail "sim pid as the process: $out"
grep -q '"in_server_tree":[[:space:]]*true' <<<"$out" || fail "sim process in the --pid tree: $out"
grep -Eq '"server_mem_bytes":[[:space:]]*[1-9]' <<<"$out" || fail "server memory: $out"

# auto with a URL: dcgm finds no DCGM series there, sim answers.
out=$(timeout 20 "$SERVETOP" gpus --json --telemetry-url "$url") || fail "auto exited $?"
if ! grep -q '"backend":[[:space:]]*"nvml"' <<<"$out"; then  # a GPU machine would pick nvml
  grep -q '"backend":[[:space:]]*"sim"' <<<"$out" || fail "auto should pick sim: $out"
fi
text=$(timeout 20 "$SERVETOP" gpus --telemetry sim --telemetry-url "$url") || fail "text exited $?"
grep -q "SIMULATED" <<<"$text" || fail "text must say simulated: $text"

# The sim gone: the named backend is unavailable, with the HTTP reason.
kill "$sim_pid"; wait "$sim_pid" 2>/dev/null; sim_pid=
err=$(timeout 20 "$SERVETOP" gpus --telemetry sim --telemetry-url "$url" 2>&1 >/dev/null); rc=$?
[ $rc = 1 ] || fail "dead sim: exit $rc"
grep -q "telemetry backend sim: GET $url/sim/gpu_memory" <<<"$err" || fail "dead sim message: $err"
echo "PASS"
