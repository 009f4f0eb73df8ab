#!/usr/bin/env bash
# The fault matrix of docs/hardening.md against `servetop run` on the simulated
# server (`--sim-fault`), signals to servetop, a full and a read-only results
# directory, a planted symlink, a shell-injection recipe, and the terminal
# closed under the dashboard. For every row: the exit status and the saved
# outcome are asserted, every request of the point is accounted for in the
# saved result (completed + failures by kind = num_prompts), and no process
# started by servetop is left. Faults the sim cannot make (1 MB SSE line,
# invalid UTF-8, byte-at-a-time trickle, a server that never closes) are in
# it_fault_server.c.
set -euo pipefail

S=${SERVETOP:?SERVETOP must point at the servetop binary}
RECIPES=${TEST_DATA_DIR:?}/launcher/recipes
FAULT_DATA=$TEST_DATA_DIR/fault
WORK=$(mktemp -d /tmp/servetop-fault.XXXXXX)
RESULTS=$WORK/results
BG_PID=
TMUX_SOCK=servetop-fault-$$
export FAULT_TEST_MARK=$WORK # every process started here inherits it

cleanup() {
  if [[ -n $BG_PID ]] && kill -0 "$BG_PID" 2>/dev/null; then
    kill -KILL "$BG_PID" 2>/dev/null || true
    wait "$BG_PID" 2>/dev/null || true
  fi
  tmux -L "$TMUX_SOCK" kill-server 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }

# The processes carrying FAULT_TEST_MARK still running ("" when none).
leftovers() { python3 "$(dirname "$0")/../lib/marked_procs.py" FAULT_TEST_MARK; }

# No process of this test may be running, other than tmux's server (the
# dashboard row checks its own pane).
assert_no_children() {
  local i
  for i in $(seq 1 100); do
    [[ -z $(leftovers) ]] && return 0
    sleep 0.05
  done
  ps -eo pid,ppid,stat,args | grep -F "servetop" | grep -v grep >&2 || true
  fail "$1: process(es) started by the test survived: $(leftovers)"
}

# Every request of the point is in the result: completed + failures + the
# requests a stop cut == N, and the per-request lists hold N entries. Prints
# "completed failures-dict cut-dict".
assert_accounted() { # RESULT_FILE NUM_PROMPTS WHAT
  python3 - "$@" <<'PY' || fail "$3: requests missing from $1"
import json, sys
path, n, what = sys.argv[1], int(sys.argv[2]), sys.argv[3]
d = json.load(open(path))
fails = d["servetop"]["failures"]
cut = d["servetop"]["cut_by_stop"]
total = d["completed"] + sum(fails.values()) + sum(cut.values())
ok = total == n and len(d["input_lens"]) == n and len(d["output_lens"]) == n \
     and d["num_prompts"] == n and d["servetop"]["failed"] == sum(fails.values())
print(f"  {what}: completed {d['completed']}, failures {fails}, cut by the stop {cut}, "
      f"accounted {total}/{n}")
sys.exit(0 if ok else 1)
PY
}

only_dir() { ls -d "$RESULTS"/*-"$1" 2>/dev/null | head -n 1 || true; }

common=(--configs "$RECIPES" --results "$RESULTS" --num-warmups 0 --isl 128 --osl 8 --quiet)

# run_fault LABEL WANT_RC ARGS...: a servetop run to its end; sets D (run folder).
run_fault() {
  local label=$1 want=$2 rc=0
  shift 2
  timeout 120 "$S" run llama8b-h200-sglang "${common[@]}" --label "$label" "$@" \
    >"$WORK/$label.out" 2>&1 || rc=$?
  [[ $rc == "$want" ]] || { cat "$WORK/$label.out"; fail "$label: exit $rc, want $want"; }
  D=$(only_dir "$label")
  [[ -n $D && -s $D/manifest.json ]] || fail "$label: no run folder with a manifest"
  assert_no_children "$label"
}

status_is() { # STATUS WHAT: the manifest of $D says STATUS
  local got
  got=$(json "$D/manifest.json" "d['status']")
  [[ $got == "$1" ]] || fail "$2: manifest status $got, want $1"
}
end_is() { # RESULT_FILE END WHAT: the point in $D ended as END
  local got
  got=$(json "$D/$1" "d['servetop_run']['end']")
  [[ $got == "$2" ]] || fail "$3: point end $got, want $2"
}
failures_of() { json "$D/$1" "d['servetop']['failures'].get('$2', 0)"; } # RESULT_FILE KIND
cut_of() { json "$D/$1" "d['servetop']['cut_by_stop'].get('$2', 0)"; }     # RESULT_FILE KIND
# A stopped point: the requests the stop cut are no failures and not in the failure rate.
no_failures() { # RESULT_FILE WHAT
  [[ $(json "$D/$1" "(d['servetop']['failed'], d['servetop']['failure_rate'], d['servetop']['failures'])") == "(0, 0, {})" ]] ||
    fail "$2: requests cut by the stop counted as failures"
  [[ $(json "$D/$1" "sum(d['servetop']['cut_by_stop'].values()) > 0") == True ]] ||
    fail "$2: no request cut by the stop"
}

# ---------------------------------------------------------------- server faults
run_fault early 1 --conc 2 --num-prompts 8 --set mem-fraction-static=0.05
status_is server_failed early
grep -q "before it was ready" "$WORK/early.out" || fail "early: no 'before it was ready'"
[[ -z $(ls "$D"/result-*.json 2>/dev/null) ]] || fail "early: a result without a measured request"
ok "server crash before ready: exit 1, server_failed, log tail shown, no result file"

run_fault crash 1 --conc 2 --num-prompts 20 --server-arg=--sim-fault=crash-after=6
status_is server_failed crash
end_is result-conc2.json server_died crash
assert_accounted "$D/result-conc2.json" 20 crash
n=$(json "$D/result-conc2.json" "d['completed']")
[[ $n -ge 4 && $n -le 6 ]] || fail "crash: completed $n, want 4..6 (crash at request 7)"
ok "server crash mid-run: exit 1, server_died, $n completed kept"

run_fault badjson 1 --conc 1 --num-prompts 8 --server-arg=--sim-fault=bad-json-after=4
assert_accounted "$D/result-conc1.json" 8 badjson
[[ $(failures_of result-conc1.json malformed_sse) == 4 ]] || fail "badjson: malformed_sse != 4"
[[ $(json "$D/result-conc1.json" "d['completed']") == 4 ]] || fail "badjson: completed != 4"
status_is error badjson
ok "malformed JSON in a line: 4 malformed_sse, 4 completed, saved; > 5% failed: exit 1"

run_fault errevent 1 --conc 1 --num-prompts 8 --server-arg=--sim-fault=error-event-after=4
assert_accounted "$D/result-conc1.json" 8 errevent
[[ $(failures_of result-conc1.json stream_error) == 4 ]] || fail "errevent: stream_error != 4"
[[ $(json "$D/result-conc1.json" "d['completed']") == 4 ]] || fail "errevent: completed != 4"
[[ $(json "$D/result-conc1.json" "sum(1 for o in d['output_lens'] if o) == 4 == d['completed'] and sum(d['output_lens']) == d['total_output_tokens']") == True ]] ||
  fail "errevent: the failed requests' tokens were counted"
json "$D/result-conc1.json" "d['servetop']['failure_examples']['stream_error']" |
  grep -q "Simulated fault error-event" || fail "errevent: the server's message was not kept"
status_is error errevent
ok "error event after HTTP 200: 4 stream_error (the server's words kept), 0 tokens counted for them; exit 1"

run_fault nousage 1 --conc 1 --num-prompts 8 --server-arg=--sim-fault=no-usage-after=6
assert_accounted "$D/result-conc1.json" 8 nousage
[[ $(failures_of result-conc1.json no_usage) == 2 ]] || fail "nousage: no_usage != 2"
ok "stream without a usage chunk: 2 no_usage failures, never 0-token successes; exit 1"

run_fault reset 1 --conc 1 --num-prompts 8 --server-arg=--sim-fault=reset-after=4
assert_accounted "$D/result-conc1.json" 8 reset
[[ $(failures_of result-conc1.json transfer_error) == 4 ]] || fail "reset: transfer_error != 4"
ok "reset mid-stream: 4 transfer_error, 4 completed, saved; exit 1"

for code in 500 503; do
  run_fault "h$code" 1 --conc 4 --num-prompts 40 --server-arg=--sim-fault=http-$code
  assert_accounted "$D/result-conc4.json" 40 "http-$code"
  [[ $(failures_of result-conc4.json http_error) == 40 ]] || fail "http-$code: http_error != 40"
  status_is error "http-$code"
  grep -q "40 of 40 requests failed" "$WORK/h$code.out" || fail "http-$code: no failure line"
  ok "HTTP $code storm: 40 http_error saved, status error, exit 1"
done

run_fault h500half 1 --conc 2 --num-prompts 20 --server-arg=--sim-fault=http-500=2
assert_accounted "$D/result-conc2.json" 20 h500half
[[ $(failures_of result-conc2.json http_error) == 10 ]] || fail "every 2nd 500: http_error != 10"
ok "every 2nd request HTTP 500: 10 failed, 10 completed, saved; exit 1"

run_fault trickle 0 --conc 2 --num-prompts 4 --osl 4 --server-arg=--sim-fault=trickle=8
assert_accounted "$D/result-conc2.json" 4 trickle
[[ $(json "$D/result-conc2.json" "d['completed']") == 4 ]] || fail "trickle: not all completed"
status_is ok trickle
ok "trickle (8 bytes/ms): every request completes, exit 0"

# ---------------------------------------------------------------- signals
# start_bg LABEL ARGS...: a long run in the background, returns once measuring.
start_bg() {
  local label=$1 i
  shift
  "$S" run llama8b-h200-sglang "${common[@]}" --label "$label" "$@" >"$WORK/$label.out" 2>&1 &
  BG_PID=$!
  for i in $(seq 1 300); do
    D=$(only_dir "$label")
    [[ -n $D ]] && grep -q "ready to roll" "$D/server.log" 2>/dev/null && break
    kill -0 "$BG_PID" 2>/dev/null || { cat "$WORK/$label.out"; fail "$label: exited early"; }
    sleep 0.05
  done
  sleep 1.5 # well into the measured requests
}
# stop_bg SIGNAL WANT_RC MAX_S: signal, wait, check the exit status and time.
stop_bg() {
  local sig=$1 want=$2 max_s=$3 rc=0 t0 t1
  t0=$(date +%s%N)
  kill "-$sig" "$BG_PID"
  wait "$BG_PID" || rc=$?
  t1=$(date +%s%N)
  BG_PID=
  [[ $rc == "$want" ]] || fail "SIG$sig: exit $rc, want $want"
  (( (t1 - t0) / 1000000 < max_s * 1000 )) || fail "SIG$sig: took $(( (t1 - t0) / 1000000 )) ms"
}

for sig in INT TERM HUP; do
  start_bg "sig$sig" --conc 2 --num-prompts 400 --osl 256
  stop_bg "$sig" 130 10
  status_is interrupted "SIG$sig"
  end_is result-conc2.json stopped "SIG$sig"
  assert_accounted "$D/result-conc2.json" 400 "SIG$sig"
  no_failures result-conc2.json "SIG$sig"
  [[ $(json "$D/manifest.json" "d['server']['stop_requested']") == True ]] ||
    fail "SIG$sig: the server was not stopped by servetop"
  assert_no_children "SIG$sig"
  ok "SIG$sig: exit 130, partial result saved (end stopped), server stopped"
done

# A stalled stream: nothing times it out (6 h, as the reference); SIGINT
# stops the run within the drain time and keeps what was measured.
start_bg stall --conc 2 --num-prompts 10 --osl 16 --server-arg=--sim-fault=stall-after=4
kill -0 "$BG_PID" 2>/dev/null || fail "stall: the run ended by itself"
stop_bg INT 130 12
end_is result-conc2.json stopped stall
assert_accounted "$D/result-conc2.json" 10 stall
[[ $(json "$D/result-conc2.json" "d['completed']") == 4 ]] || fail "stall: completed != 4"
[[ $(cut_of result-conc2.json interrupted) == 2 ]] || fail "stall: 2 stalled not interrupted"
[[ $(cut_of result-conc2.json not_sent) == 4 ]] || fail "stall: 4 not sent"
no_failures result-conc2.json stall
assert_no_children stall
ok "stalled stream: run waits; SIGINT saves 4 completed + 2 interrupted + 4 not sent"

# The same stall with --request-timeout: each stalled request fails as a timeout
# after 1 s, the run goes on, saves, and fails (> 5% of the requests failed).
run_fault stalltimeout 1 --conc 2 --num-prompts 10 --osl 16 --request-timeout 1 \
  --server-arg=--sim-fault=stall-after=4
assert_accounted "$D/result-conc2.json" 10 stalltimeout
[[ $(json "$D/result-conc2.json" "d['completed']") == 4 ]] || fail "stall timeout: completed != 4"
[[ $(failures_of result-conc2.json timeout) == 6 ]] || fail "stall timeout: 6 stalled not timeouts"
assert_no_children stalltimeout
ok "stalled stream with --request-timeout 1: 4 completed + 6 timeouts saved; exit 1"

# SIGINT while the server is still loading (20 s simulated weight load).
"$S" run llama8b-h200-sglang "${common[@]}" --label loading --conc 2 --num-prompts 8 \
  --server-arg=--sim-warmup-ms=20000 >"$WORK/loading.out" 2>&1 &
BG_PID=$!
for _ in $(seq 200); do
  D=$(only_dir loading)
  [[ -n $D ]] && grep -q "Load weight\|Simulated GPU" "$D/server.log" 2>/dev/null && break
  sleep 0.05
done
stop_bg INT 130 5
status_is interrupted loading
grep -q "waiting for the server to be ready" "$D/manifest.json" || fail "loading: message"
assert_no_children loading
ok "SIGINT while the server loads: exit 130 at once, server stopped, no result"

start_bg sigkill --conc 2 --num-prompts 400 --osl 256
owner=$BG_PID
kill -KILL "$BG_PID"
wait "$BG_PID" 2>/dev/null || true
BG_PID=
assert_no_children "SIGKILL (owner $owner)"
ok "SIGKILL: no result can be written; the supervisor stopped the server, no process left"

# Two servers at once (--ab-parallel: the recipe and its MTP twin).
start_bg abkill --conc 2 --num-prompts 400 --osl 256 --ab-parallel
owner=$BG_PID
kill -KILL "$BG_PID"
wait "$BG_PID" 2>/dev/null || true
BG_PID=
assert_no_children "SIGKILL with --ab-parallel (owner $owner)"
ok "SIGKILL during an --ab-parallel run: both servers stopped, no process left"

# ---------------------------------------------------------------- results directory
# A private mount namespace gives a real full / read-only filesystem; without
# one (no CAP_SYS_ADMIN, or FAULT_NO_NAMESPACE=1), RLIMIT_FSIZE stands in for a
# full disk and an unprivileged user (or a 0555 folder) for a read-only one.
have_ns() { [[ -z ${FAULT_NO_NAMESPACE:-} ]] && unshare -m true 2>/dev/null; }
mkdir -p "$WORK/rescue" # TMPDIR of the run: where a result that cannot be written goes
if have_ns; then
  mkdir -p "$WORK/full"
  rc=0
  TMPDIR=$WORK/rescue unshare -m bash -c 'mount -t tmpfs -o size=12k tmpfs "$1" && shift && exec "$@"' _ "$WORK/full" \
    "$S" run llama8b-h200-sglang "${common[@]}" --results "$WORK/full" --label full --conc 2 \
    --num-prompts 8 >"$WORK/full.out" 2>&1 || rc=$?
  full_how="tmpfs of 12 KiB"
  full_err="No space left on device"
else
  rc=0
  # Through a pipe: the limit must not cut servetop's own stderr (where the
  # result goes when no file can be written), only the files it writes.
  (trap '' XFSZ; ulimit -f 4; TMPDIR=$WORK/rescue exec "$S" run llama8b-h200-sglang "${common[@]}" --label full \
    --conc 2 --num-prompts 8) 2>&1 | cat >"$WORK/full.out" && rc=0 || rc=${PIPESTATUS[0]}
  full_how="RLIMIT_FSIZE 4 KiB"
  full_err="File too large"
fi
[[ $rc == 1 ]] || { cat "$WORK/full.out"; fail "disk full: exit $rc, want 1"; }
grep -q "cannot write .*result-conc2.json: $full_err" "$WORK/full.out" ||
  { cat "$WORK/full.out"; fail "disk full: the failed file and reason are not named"; }
# The measured point is not lost: saved to $TMPDIR instead, or (when that
# cannot be written either) printed on stderr.
rescued=$(ls "$WORK"/rescue/servetop-rescue-*-result-conc2.json 2>/dev/null | head -n 1 || true)
if [[ -n $rescued ]]; then
  grep -q "saved to $rescued instead" "$WORK/full.out" || fail "disk full: the rescue file is not named"
  assert_accounted "$rescued" 8 "disk full (rescued)"
  [[ $(json "$rescued" "d['completed']") == 8 ]] || fail "disk full: rescued result incomplete"
  where="saved to \$TMPDIR"
else
  sed -n '/----- servetop: .*result-conc2.json could not be written/,/----- end of/p' "$WORK/full.out" |
    sed '1d;$d' >"$WORK/full-stderr.json"
  [[ $(json "$WORK/full-stderr.json" "d['completed']") == 8 ]] ||
    { cat "$WORK/full.out"; fail "disk full: the result is neither rescued nor on stderr"; }
  where="printed on stderr"
fi
assert_no_children "disk full"
ok "disk full ($full_how): exit 1 naming the file and '$full_err', the result $where, server stopped"

mkdir -p "$WORK/ro"
rc=0
if have_ns; then
  unshare -m bash -c 'mount -t tmpfs -o ro tmpfs "$1" && shift && exec "$@"' _ "$WORK/ro" \
    "$S" run llama8b-h200-sglang "${common[@]}" --results "$WORK/ro/runs" --label ro --conc 2 \
    --num-prompts 8 >"$WORK/ro.out" 2>&1 || rc=$?
elif [[ $(id -u) != 0 ]]; then
  chmod 0555 "$WORK/ro"
  "$S" run llama8b-h200-sglang "${common[@]}" --results "$WORK/ro/runs" --label ro --conc 2 \
    --num-prompts 8 >"$WORK/ro.out" 2>&1 || rc=$?
  chmod 0755 "$WORK/ro"
else
  chmod 0555 "$WORK/ro"
  chmod 0755 "$WORK" # the unprivileged user must reach the folder
  setpriv --reuid=65534 --regid=65534 --clear-groups "$S" run llama8b-h200-sglang \
    "${common[@]}" --results "$WORK/ro/runs" --label ro --conc 2 --num-prompts 8 \
    >"$WORK/ro.out" 2>&1 || rc=$?
fi
[[ $rc == 1 ]] || { cat "$WORK/ro.out"; fail "read-only results: exit $rc, want 1"; }
grep -q "cannot create directory .*/ro/runs" "$WORK/ro.out" || { cat "$WORK/ro.out"; fail "read-only: message"; }
grep -q "launching\|ready to roll" "$WORK/ro.out" && fail "read-only: a server was launched"
assert_no_children "read-only"
ok "read-only results directory: exit 1 before any server starts, directory named"

# ---------------------------------------------------------------- safety
# Symlinks planted under every run-folder name of the next seconds: the plain
# name dangling, the "-2" name at a victim folder. servetop must not give up
# on the dangling one nor write through either: its folder is "-3".
mkdir -p "$WORK/victim" "$RESULTS"
now=$(date -u +%s)
for s in $(seq 0 15); do
  name=$RESULTS/$(date -u -d "@$((now + s))" +%Y%m%d-%H%M%S)-llama8b-h200-sglang-planted
  ln -s "$WORK/nowhere" "$name"
  ln -s "$WORK/victim" "$name-2"
done
rc=0
"$S" run llama8b-h200-sglang "${common[@]}" --label planted --conc 2 --num-prompts 4 \
  >"$WORK/planted.out" 2>&1 || rc=$?
[[ $rc == 0 ]] || { cat "$WORK/planted.out"; fail "planted symlink: exit $rc"; }
[[ -z $(ls -A "$WORK/victim") && ! -e $WORK/nowhere ]] ||
  fail "planted symlink: servetop wrote through a planted link"
D=$(sed -n 's/^run folder: //p' "$WORK/planted.out")
[[ $D == *-planted-3 && -d $D && ! -L $D && -s $D/result-conc2.json ]] ||
  fail "planted symlink: the run folder '$D' is not a plain folder with the result"
ok "symlink planted at the run folder name: not followed ($(basename "$D"))"

# Modes under a strict umask: results and the server log are 0644.
rc=0
(umask 077; exec "$S" run llama8b-h200-sglang "${common[@]}" --label umask --conc 2 \
  --num-prompts 4) >"$WORK/umask.out" 2>&1 || rc=$?
[[ $rc == 0 ]] || { cat "$WORK/umask.out"; fail "umask run: exit $rc"; }
D=$(only_dir umask)
for f in manifest.json recipe.json result-conc2.json server.log; do
  [[ $(stat -c %a "$D/$f") == 644 ]] || fail "umask 077: $f has mode $(stat -c %a "$D/$f"), want 644"
done
[[ -z $(find "$RESULTS" -name '*.tmp.*') ]] || fail "a temporary file was left in the results"
ok "umask 077: manifest, recipe, result, server.log are 0644; no temp file left"

# `servetop bench --result-filename` onto a planted symlink replaces the link.
echo "precious" >"$WORK/victim/file"
mkdir -p "$WORK/bench"
ln -s "$WORK/victim/file" "$WORK/bench/r.json"
"$S" sim --port 0 --sim-port-file "$WORK/sim.port" --skip-server-warmup --model llama-3.1-8b \
  --sim-fixed-ttft-ms 1 --sim-fixed-tpot-ms 1 2>"$WORK/sim.log" &
BG_PID=$!
for _ in $(seq 200); do [[ -s $WORK/sim.port ]] && break; sleep 0.05; done
port=$(cat "$WORK/sim.port")
# The sim listens on 127.0.0.1 only (/proc/net/tcp: 0100007F:PORT, state 0A).
hexport=$(printf '%04X' "$port")
grep -qE "^ *[0-9]+: 0100007F:$hexport [0-9A-F:]+ 0A " /proc/net/tcp ||
  fail "sim is not listening on 127.0.0.1:$port"
grep -qE "^ *[0-9]+: 00000000:$hexport [0-9A-F:]+ 0A " /proc/net/tcp &&
  fail "sim listens on every address"
timeout 60 "$S" bench --model llama-3.1-8b --base-url "http://127.0.0.1:$port" --num-prompts 2 \
  --random-input-len 8 --random-output-len 2 --quiet --save-result --result-dir "$WORK/bench" \
  --result-filename r.json >/dev/null 2>&1 || fail "bench onto a planted symlink failed"
[[ $(cat "$WORK/victim/file") == precious ]] || fail "bench followed a planted symlink"
[[ -f $WORK/bench/r.json && ! -L $WORK/bench/r.json ]] || fail "bench result is not a plain file"
[[ $(stat -c %a "$WORK/bench/r.json") == 644 ]] || fail "bench result mode"
ok "sim binds 127.0.0.1 only; bench replaces a planted symlink, victim untouched, mode 0644"

# SIGHUP of servetop bench (its terminal closed): saved like Ctrl-C.
"$S" bench --model llama-3.1-8b --base-url "http://127.0.0.1:$port" --num-prompts 200 \
  --max-concurrency 2 --random-input-len 8 --random-output-len 2000 --ignore-eos --quiet \
  --drain-timeout 0.5 --save-result --result-filename "$WORK/hup.json" >/dev/null 2>&1 &
bench_pid=$!
sleep 1.5
kill -HUP "$bench_pid"
rc=0
wait "$bench_pid" || rc=$?
[[ $rc == 130 ]] || fail "bench SIGHUP: exit $rc, want 130"
[[ $(json "$WORK/hup.json" "d['servetop']['interrupted']") == True ]] || fail "bench SIGHUP: result"
assert_accounted "$WORK/hup.json" 200 "bench SIGHUP"
ok "SIGHUP of servetop bench: exit 130, interrupted result saved"
kill -TERM "$BG_PID"
wait "$BG_PID" || fail "sim exit after SIGTERM"
BG_PID=

# Recipe values with shell syntax reach the server as literal arguments
# (tests/data/fault/inject: argv and env; plus --server-arg). The fixture names
# fixed /tmp paths, since a recipe cannot name this test's folder.
pwned=/tmp/servetop-fault-pwned
rm -f "$pwned"-*
run_fault inject 0 --configs "$FAULT_DATA/inject" --conc 2 --num-prompts 2 \
  --server-arg='--x-arg=$(touch '"$pwned"'-arg)'
for f in argv env arg semi tick; do
  [[ ! -e $pwned-$f ]] || { rm -f "$pwned"-*; fail "a recipe value reached a shell ($pwned-$f)"; }
done
grep -qF -- "--x-note '\$(touch $pwned-argv)'" <(json "$D/recipe.json" "d['server']['launch_command']") ||
  fail "inject: the literal value is not in recipe.json's launch command"
grep -qF "unrecognized argument '--x-semi=;touch $pwned-semi;'" "$D/server.log" ||
  fail "inject: the server did not get the value verbatim"
ok "shell syntax in recipe argv/env and --server-arg: passed literally, nothing executed"

# ---------------------------------------------------------------- terminal closed
if command -v tmux >/dev/null; then
  tm() { tmux -L "$TMUX_SOCK" "$@"; }
  mkdir -p "$WORK/xdg"
  tm new-session -d -s dash -x 120 -y 36 \
    "exec env LANG=C.UTF-8 LC_ALL=C.UTF-8 XDG_DATA_HOME=$WORK/xdg $S --configs $FAULT_DATA/dashboard"
  dash_pid=$(tm display-message -p -t dash '#{pane_pid}')
  for _ in $(seq 100); do tm capture-pane -p -t dash | grep -q "llama" && break; sleep 0.1; done
  tm send-keys -t dash Enter # the launch form; Enter again starts the run
  for _ in $(seq 100); do tm capture-pane -p -t dash | grep -q "Enter start" && break; sleep 0.1; done
  tm send-keys -t dash Enter
  runs=$WORK/xdg/servetop/runs
  for _ in $(seq 300); do
    d=$(ls -d "$runs"/*/ 2>/dev/null | head -1 || true)
    [[ -n $d ]] && grep -q "ready to roll" "$d/server.log" 2>/dev/null && break
    sleep 0.1
  done
  [[ -n ${d:-} ]] || fail "dashboard: the run never started"
  for _ in $(seq 300); do tm capture-pane -p -t dash | grep -q "measuring point" && break; sleep 0.1; done
  sleep 1.5 # past the warmups, into the measured requests
  tm kill-server # the terminal goes away: SIGHUP to the dashboard
  for _ in $(seq 150); do kill -0 "$dash_pid" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$dash_pid" 2>/dev/null && fail "dashboard still running 15 s after its terminal closed"
  D=${d%/}
  status_is interrupted "terminal closed"
  r=$(ls "$D"/result-*.json 2>/dev/null | head -1 || true)
  [[ -n $r ]] || fail "terminal closed: no partial result"
  end_is "$(basename "$r")" stopped "terminal closed"
  assert_accounted "$r" "$(json "$r" "d['num_prompts']")" "terminal closed"
  assert_no_children "terminal closed"
  ok "terminal closed under the dashboard: it exits, partial result saved, server stopped"
else
  echo "SKIP: terminal closed under the dashboard (no tmux)"
fi

[[ -z $(leftovers) ]] || fail "processes left at the end: $(leftovers)"
echo "all fault matrix checks passed"
