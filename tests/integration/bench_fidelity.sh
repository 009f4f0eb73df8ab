#!/usr/bin/env bash
# Fidelity of `servetop bench` against the server's own record of what it did.
# tests/bench_paced_server streams a token every 10 ms after 50 ms (all streams
# on one step clock, like a batching server), names each request in its first
# token, and records when each request arrived (the kernel's receive stamp)
# and when it wrote each chunk (CLOCK_MONOTONIC, as the client). Request by
# request, tests/bench/paced.py matches servetop's saved figures to that
# record, so only what the client adds is checked -- never how late a busy
# machine made the server -- at 1, 8 and 256 concurrent streams:
#  - counts and token totals exact; every request matched; one chunk gap per
#    server write; the summary's mean/median/p99 TTFT, TPOT, ITL and E2EL are
#    the reference's formulas over the saved per-request figures (numpy's
#    linear percentiles, TPOT = (E2EL - TTFT) / (output tokens - 1));
#  - never before the server: each request's TTFT and E2EL include the
#    server's (the client stamps its send before the request arrives and its
#    read after the write);
#  - what the client adds is small: the median over requests at most 2 ms
#    above the server's TTFT and E2EL at 1 and 8 streams, the median chunk
#    gap and TPOT within 1 ms and 0.5 ms of the server's. A stamp 10 ms late,
#    a TPOT over the wrong span, a gap per event instead of per token chunk
#    miss these by far; a scheduling hiccup moves a few requests, not the
#    median. At 256 streams on 2 shared cores the client and the server wait
#    for their CPU: the median TTFT may add 5 ms there, and E2EL is printed,
#    not bounded (a server that fell behind writes several chunks at once;
#    the client stamps all but the first of a read when it reaches them, so
#    lateness gathers towards the end of a stream). Measured on the shared
#    2-core VM at load 5-6 with a CPU burner beside it: median added TTFT
#    0.2 / 0.1 / 0.6-1.7 ms, E2EL 0.2 / 0.1 / 1.2-5.2 ms.
# The figures against the told 50 / 10 ms on an idle machine, and the added
# error's p99, are the benchmarks' (tests/bench/paced_bench.sh, docs/bench.md).
# Sanitizer builds check counts and order, not the added error (the client
# there is several times slower).
source "$(dirname "$0")/../lib/harness.sh"

command -v python3 >/dev/null || { echo "SKIP: no python3 (tests/bench/paced.py reads the result)"; exit 77; }
PACED_SERVER=${PACED_SERVER:?set PACED_SERVER to tests/bench_paced_server (CTest does)}
paced_py=$(dirname "$0")/../bench/paced.py

# field FILE LABEL: the value after a summary label ("Mean TTFT (ms):")
field() { awk -v l="$2" 'index($0, l) == 1 { print $(NF) }' "$1"; }
expect_eq() { # what value want
  if [[ $2 == "$3" ]]; then ok "$1 = $2"; else fail "$1 = $2 (want $3)"; fi
}

timing=1
if ldd "$SERVETOP" 2>/dev/null | grep -qE 'lib(a|ub|t)san'; then
  timing=0
  echo "note: sanitizer build: the added-error bounds are skipped, counts and order still checked"
fi

for conc in 1 8 256; do
  prompts=$(( conc == 1 ? 12 : 2 * conc + 8 ))
  # the server writes its record when it stops: one per point
  "$PACED_SERVER" --port-file "$WORK/$conc.port" --trace "$WORK/$conc.trace" --ttft-ms 50 \
    --tpot-ms 10 2>"$WORK/$conc.server.log" &
  server=$!
  PIDS+=("$server")
  for _ in $(seq 200); do [[ -s $WORK/$conc.port ]] && break; sleep 0.05; done
  out=$WORK/bench-$conc.txt
  timeout 120 "$SERVETOP" bench --backend vllm --model bench --base-url "http://127.0.0.1:$(cat "$WORK/$conc.port")" \
    --dataset-name random --random-input-len 128 --random-output-len 32 --random-range-ratio 1.0 \
    --num-prompts "$prompts" --max-concurrency "$conc" --request-rate inf --ignore-eos \
    --num-warmups "$conc" --percentile-metrics ttft,tpot,itl,e2el --save-result --save-detailed \
    --result-dir "$WORK" --result-filename "result-$conc.json" --quiet >"$out" 2>&1
  rc=$?
  kill -TERM "$server"
  wait "$server"
  expect_eq "conc $conc: server stopped cleanly" "$?" 0
  expect_eq "conc $conc: exit status" "$rc" 0
  expect_eq "conc $conc: successful requests" "$(field "$out" "Successful requests:")" "$prompts"
  expect_eq "conc $conc: input tokens" "$(field "$out" "Total input tokens:")" $(( prompts * 128 ))
  expect_eq "conc $conc: generated tokens" "$(field "$out" "Total generated tokens:")" $(( prompts * 32 ))
  : >"$WORK/$conc.samples" # no CPU samples: only the timing part of the report is used
  python3 "$paced_py" report --trace "$WORK/$conc.trace" --result "$WORK/result-$conc.json" \
    --samples "$WORK/$conc.samples" --label "conc $conc" >"$WORK/$conc.report.json" ||
    fail "conc $conc: paced.py report"
  python3 - "$WORK/$conc.report.json" "$prompts" "$conc" "$timing" "$WORK/result-$conc.json" <<'EOF' || FAILS=$((FAILS + 1))
import json, statistics, sys

with open(sys.argv[1]) as f:
    r = json.load(f)
with open(sys.argv[5]) as f:
    res = json.load(f)
n, conc, timing = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1"
ADDED_MS = {"TTFT": 2.0 if conc <= 8 else 5.0, "E2EL": 2.0 if conc <= 8 else None}
STAMP_MS = 0.002  # both sides stamp in ns; the result's gaps are whole microseconds
fails = 0


def check(what, good, detail):
    global fails
    print(f"{'ok' if good else 'FAIL'}: conc {conc}: {what} ({detail})")
    fails += not good


def pct(v, q):  # numpy's default (linear) percentile
    v = sorted(v)
    k = (len(v) - 1) * q / 100
    lo = int(k)
    return v[lo] + (v[min(lo + 1, len(v) - 1)] - v[lo]) * (k - lo)


# the summary from the saved figures: the formulas, on this run's own data
ttft = [x * 1e3 for x in res["ttfts"]]
e2el = [(x + sum(g)) * 1e3 for x, g in zip(res["ttfts"], res["itls"])]
tpot = [(b - a) / (o - 1) for a, b, o in zip(ttft, e2el, res["output_lens"]) if o > 1]
itl = [x * 1e3 for g in res["itls"] for x in g]
worst = ""
for name, v in (("ttft", ttft), ("tpot", tpot), ("itl", itl), ("e2el", e2el)):
    for stat, want in (("mean", statistics.fmean(v)), ("median", pct(v, 50)), ("p99", pct(v, 99))):
        got = res[f"{stat}_{name}_ms"]
        if abs(got - want) > 0.02 + 1e-9 * abs(want):  # saved gaps are whole microseconds
            worst += f" {stat}_{name}_ms {got:.4f} != {want:.4f};"
check("summary figures follow from the per-request ones", not worst, worst.strip() or "12 figures")

t, e, i, p = r["ttft_err_ms"], r["e2el_err_ms"], r["itl_err_ms"], r["tpot_err_ms"]
check("every request matched to the server's record", r["matched"] == n and r["unmatched"] == 0,
      f"{r['matched']} of {n}")
check("one chunk gap per server write", r["gap_count_mismatch"] == 0 and i.get("n") == n * 31,
      f"{i.get('n')} gaps, {r['gap_count_mismatch']} requests differ")
for name, s in (("TTFT", t), ("E2EL", e)):
    check(f"{name} never below the server's", s["min"] >= -STAMP_MS * 32,
          f"least client - server {s['min']:+.3f} ms")
    figures = f"client - server p50 {s['p50']:+.3f} ms, p99 {s['p99']:+.3f}, max {s['max']:+.3f}"
    if timing and ADDED_MS[name] is not None:
        check(f"median {name} adds at most {ADDED_MS[name]:g} ms", s["p50"] <= ADDED_MS[name], figures)
    else:
        print(f"note: conc {conc}: {name} {figures}")
for name, s, tol in (("chunk gap", i, 1.0), ("TPOT", p, 0.5)):
    figures = f"client - server p1 {s['p1']:+.3f} ms, p50 {s['p50']:+.3f}, p99 {s['p99']:+.3f}"
    if timing:
        check(f"median {name} within {tol:g} ms of the server's", abs(s["p50"]) <= tol, figures)
    else:
        print(f"note: conc {conc}: {name} {figures}")
sys.exit(1 if fails else 0)
EOF
  [[ $FAILS == 0 ]] || { cat "$out"; tail -5 "$WORK/$conc.server.log"; }
done

finish "fidelity"
