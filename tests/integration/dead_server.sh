#!/usr/bin/env bash
# A dead server (issue 19.7): `servetop bench` against a `servetop sim` that
# is killed with SIGKILL mid-run. The requests the server never received
# (their connections refused once it was gone) are not sent (cut_by_stop's
# not_sent, reason "server gone"), not connect_error failures; the failures
# and the failure rate count only requests the server got (those in flight
# when it died). Every request is accounted for. And a server that never
# answered at all (nothing on the port) still fails with connect_error.
source "$(dirname "$0")/../lib/harness.sh"
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }

CONC=4
N=400
start_sim dead --model llama-3.1-8b --enable-metrics --sim-fixed-ttft-ms 20 --sim-fixed-tpot-ms 10
"$SERVETOP" bench --model llama-3.1-8b --base-url "http://127.0.0.1:$PORT" --num-prompts $N \
  --max-concurrency $CONC --random-input-len 16 --random-output-len 40 --num-warmups 0 --quiet \
  --save-result --result-dir "$WORK" --result-filename dead.json >"$WORK/dead.out" 2>&1 &
BENCH_PID=$!
PIDS+=("$BENCH_PID")
# kill the server once some requests have completed (its /metrics counts them)
for _ in $(seq 600); do
  n=$(curl -s --noproxy '*' "http://127.0.0.1:$PORT/metrics" 2>/dev/null |
      awk '/^sglang:num_requests_total/ {print int($2)}' | head -n 1)
  [[ -n $n && $n -ge 12 ]] && break
  sleep 0.05
done
kill -KILL "$SIM_PID"
wait "$BENCH_PID"
echo "bench exit $?"
cat "$WORK/dead.out"
R=$WORK/dead.json
[[ -s $R ]] || { fail "no result saved"; finish; }
python3 - "$R" "$N" "$CONC" <<'PY' || fail "dead server: not-sent vs failures"
import json, sys
d = json.load(open(sys.argv[1])); n = int(sys.argv[2]); conc = int(sys.argv[3])
st = d["servetop"]; fails = st["failures"]; cut = st["cut_by_stop"]
sent = d["completed"] + st["failed"]
print(f"completed {d['completed']}, failures {fails}, cut {cut}, server gone "
      f"{st.get('not_sent_server_gone')}, failure rate {st['failure_rate']}")
ok = True
def need(cond, what):
    global ok
    if not cond:
        print("  not so:", what); ok = False
need(d["completed"] >= 8, "some requests completed before the kill")
need("connect_error" not in fails, "no connect_error: refused requests were never received")
# in flight when it died (conc), plus a request or two whose connection the
# dying process's listening socket still took (the kernel accepted it, then
# reset it: the server may have been handed it, so it stays a failure)
need(st["failed"] <= 2 * conc, "failures: about the requests in flight when it died")
need(set(fails) <= {"transfer_error"}, "the failures are the cut streams")
need(cut.get("not_sent", 0) >= n // 2, "the rest not sent")
need(st.get("not_sent_server_gone") == cut.get("not_sent"), "every not-sent one: server gone")
need(d["completed"] + sum(fails.values()) + sum(cut.values()) == n, "every request accounted for")
need(abs(st["failure_rate"] - (st["failed"] / sent if sent else 0)) < 1e-12,
     "failure rate = failed / sent")
sys.exit(0 if ok else 1)
PY
check "the summary says why they were not sent" grep -q "server gone" "$WORK/dead.out"

# Nothing ever listening: a failure (connect_error), not "server gone".
free=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$SERVETOP" bench --model llama-3.1-8b --base-url "http://127.0.0.1:$free" --num-prompts 4 \
  --random-input-len 8 --random-output-len 2 --num-warmups 0 --quiet --no-server-tokenizer \
  --save-result --result-dir "$WORK" --result-filename never.json >"$WORK/never.out" 2>&1
if [[ -s $WORK/never.json ]]; then
  check "never answered: 4 connect errors" \
    test "$(json "$WORK/never.json" "d['servetop']['failures'].get('connect_error')")" = 4
  check "never answered: nothing not sent" \
    test "$(json "$WORK/never.json" "d['servetop']['cut_by_stop'].get('not_sent', 0)")" = 0
else
  ok "never answered: bench refused before the load ($(tail -n 1 "$WORK/never.out"))"
fi
finish "dead-server"
