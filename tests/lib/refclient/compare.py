"""Compares the result JSON of InferenceX's benchmark_serving.py (REF) with
servetop bench's (ST) for the same flags against the same server.

  compare.py REF.json ST.json [--told-ttft-ms X --told-tpot-ms Y --concurrency C]
             [--trace SIM_TRACE.jsonl]

Counts and token totals must be equal. Each timing figure (mean, median, p99
of TTFT, TPOT, ITL, E2EL) must be within 1% or 0.2 ms of the reference, or
nearer than the reference to what a fixed-latency sim was told (--told-*):
TTFT X, TPOT and ITL Y, E2EL X + (out - 1) Y per request; throughputs against
the closed-loop makespan of those told latencies. With --trace (the sim's
--sim-trace of both runs, reference first) the two runs must have sent the
same multiset of prompt texts (by hash). Prints a table; exit 1 when a count,
token total or prompt differs, 2 when only timing figures miss (on a shared
machine a scheduling hiccup moves a p99; the caller may measure again).
"""
import argparse
import collections
import heapq
import json
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def told_figures(st, ttft, tpot, conc):
    """What the sim was told, for the requests servetop completed."""
    outs = [o for o in st["output_lens"] if o > 0]
    e2el = [ttft + (o - 1) * tpot for o in outs]
    e2el_sorted = sorted(e2el)
    n = len(e2el_sorted)

    def pct(v, p):
        h = (len(v) - 1) * p / 100
        lo = int(h)
        return v[lo] if lo + 1 >= len(v) else v[lo] + (h - lo) * (v[lo + 1] - v[lo])

    told = {}
    for stat in ("mean", "median", "p99"):
        told[f"{stat}_ttft_ms"] = ttft
        told[f"{stat}_tpot_ms"] = tpot
        told[f"{stat}_itl_ms"] = tpot
    told["mean_e2el_ms"] = sum(e2el) / n
    told["median_e2el_ms"] = pct(e2el_sorted, 50)
    told["p99_e2el_ms"] = pct(e2el_sorted, 99)
    # closed loop: request i goes to the first free slot, in index order
    slots = [0.0] * conc
    heapq.heapify(slots)
    end = 0.0
    for d in e2el:
        t = heapq.heappop(slots) + d
        end = max(end, t)
        heapq.heappush(slots, t)
    dur_s = end / 1000
    told["request_throughput"] = n / dur_s
    told["output_throughput"] = sum(outs) / dur_s
    told["total_token_throughput"] = (st["total_input_tokens"] + sum(outs)) / dur_s
    return told


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ref")
    ap.add_argument("st")
    ap.add_argument("--told-ttft-ms", type=float)
    ap.add_argument("--told-tpot-ms", type=float)
    ap.add_argument("--concurrency", type=int, default=1)
    ap.add_argument("--trace")
    ap.add_argument("--warmups", type=int, default=0)
    ap.add_argument("--label", default="")
    ap.add_argument("--counts-only", action="store_true",
                    help="timing misses are printed, not failed (sanitizer builds)")
    a = ap.parse_args()
    ref, st = load(a.ref), load(a.st)
    misses = []
    timing_misses = []

    for key in ("completed", "total_input_tokens", "total_output_tokens", "num_prompts"):
        same = ref[key] == st[key]
        print(f"  {key:32s} ref {ref[key]:>12} servetop {st[key]:>12}  {'equal' if same else 'DIFFERENT'}")
        if not same:
            misses.append(key)
    for key in ("input_lens", "output_lens"):
        if ref[key] != st[key]:
            misses.append(key)
            print(f"  {key}: DIFFERENT")
        else:
            print(f"  {key}: equal ({len(ref[key])} requests)")

    told = None
    if a.told_ttft_ms is not None and a.told_tpot_ms is not None:
        told = told_figures(st, a.told_ttft_ms, a.told_tpot_ms, a.concurrency)
    keys = [f"{s}_{m}_ms" for m in ("ttft", "tpot", "itl", "e2el") for s in ("mean", "median", "p99")]
    keys += ["request_throughput", "output_throughput", "total_token_throughput"]
    print(f"  {'figure':24s} {'reference':>12s} {'servetop':>12s} {'told':>12s}  verdict")
    for key in keys:
        r, s = ref[key], st[key]
        close = abs(s - r) <= max(0.01 * abs(r), 0.2 if key.endswith("_ms") else 0.0)
        t = told.get(key) if told else None
        nearer = t is not None and abs(s - t) < abs(r - t)
        ok = close or nearer
        verdict = "within 1%/0.2 ms" if close else "nearer the told value" if nearer else "MISS"
        tt = f"{t:12.3f}" if t is not None else f"{'-':>12s}"
        print(f"  {key:24s} {r:12.3f} {s:12.3f} {tt}  {verdict}")
        if not ok:
            timing_misses.append(key)

    if a.trace:
        rows = [json.loads(line) for line in open(a.trace)]
        n, w = ref["num_prompts"], a.warmups
        runs = [rows[w:w + n], rows[2 * w + n:2 * (w + n)]]
        if len(rows) != 2 * (w + n):
            misses.append("trace")
            print(f"  trace: {len(rows)} requests, want {2 * (w + n)}")
        else:
            ca, cb = (collections.Counter((r["prompt_hash"], r["prompt_tokens"]) for r in run)
                      for run in runs)
            same = ca == cb
            print(f"  prompt texts the server saw: {'the same' if same else 'DIFFERENT'} "
                  f"({len(ca)} distinct)")
            if not same:
                misses.append("prompt texts")
    if a.counts_only and timing_misses:
        print(f"{a.label}: timing not judged (--counts-only): {', '.join(timing_misses)}")
        timing_misses = []
    if misses or timing_misses:
        print(f"{a.label}: MISSES: {', '.join(misses + timing_misses)}")
        sys.exit(1 if misses else 2)
    print(f"{a.label}: conforms")


if __name__ == "__main__":
    main()
