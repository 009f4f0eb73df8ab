#!/usr/bin/env python3
"""Helpers of the paced-streaming benchmarks (tests/bench/paced_bench.sh,
tests/bench/paced_scaling.sh); plain python3, no numpy.

  paced.py run --samples FILE [--cpus LIST] [--watch PID]... -- CLIENT ARGS...
      starts the client (pinned to --cpus), samples the CPU time of every
      thread of it and of the watched processes every 0.1 s from
      /proc/PID/task/*/schedstat, and exits with the client's status
      (--timeout S, default 600: the client is stopped after S seconds).
  paced.py report --trace T --result R --samples S --label L [--out JSONL]
      matches the client's requests to the server's trace by the request id
      the server puts in the first token ("r<id>"), and prints one JSON line:
      events/s, CPU us per event, the added error (client minus server
      truth) for TTFT and every chunk gap, the server's own load.
  paced.py quiet [--max-busy CORES] [--wait S]
      waits until the machine is quiet (a shared machine: other users' load
      lands in every timing figure); each run also records the other
      processes' CPU use over its window.
  paced.py table JSONL
      medians and spreads over repeated runs, one row per (point, client).
"""
import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import time


_comms = {}


def task_times(pid):
    """{tid: (comm, ns on CPU, ns runnable but waiting for a CPU)} for every
    live thread of pid (a thread's name
    is read only in its first samples: the sampler shares a core with the
    server)."""
    out = {}
    base = f"/proc/{pid}/task"
    try:
        tids = os.listdir(base)
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"{base}/{tid}/schedstat") as f:
                ns, wait_ns = (int(x) for x in f.read().split()[:2])
            comm, seen = _comms.get((pid, tid), (None, 0))
            if seen < 5:  # a new thread may still be renaming itself
                with open(f"{base}/{tid}/comm") as f:
                    comm = f.read().strip()
            _comms[(pid, tid)] = (comm, seen + 1)
        except (OSError, ValueError, IndexError):
            continue
        out[int(tid)] = (comm, ns, wait_ns)
    return out


TICK_NS = 1e9 / os.sysconf("SC_CLK_TCK")


def machine_busy_ns():
    """CPU time all CPUs spent busy (not idle, not waiting for I/O), ns."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (sum(v[:8]) - v[3] - v[4]) * TICK_NS  # user nice system idle iowait irq softirq steal


def cmd_quiet(args):
    """Waits until the machine is quiet: the other processes' CPU use over
    one second at most --max-busy cores, for at most --wait seconds."""
    deadline = time.monotonic() + args.wait
    while True:
        b0, t0 = machine_busy_ns(), time.monotonic()
        time.sleep(1.0)
        busy = (machine_busy_ns() - b0) / 1e9 / (time.monotonic() - t0)
        if busy <= args.max_busy:
            print(f"quiet: {busy:.2f} cores busy")
            return
        if time.monotonic() > deadline:
            print(f"quiet: still {busy:.2f} cores busy after {args.wait:.0f} s, going on")
            return


def cmd_run(args):
    client = args.client
    if client and client[0] == "--":
        client = client[1:]
    if not client:
        sys.exit("paced.py run: no client command")
    if args.cpus:
        client = ["taskset", "-c", args.cpus] + client
    proc = subprocess.Popen(client)

    def stop(signum, frame):
        proc.terminate()
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    deadline = time.monotonic() + args.timeout
    watched = [("client", proc.pid)] + [("server", p) for p in args.watch]
    with open(args.samples, "w") as out:
        while True:
            done = proc.poll() is not None
            if not done and time.monotonic() > deadline:
                print(f"paced.py run: client still running after {args.timeout:.0f} s, stopped",
                      file=sys.stderr)
                proc.terminate()
                deadline = float("inf")
            wall = time.time()
            out.write(f"{wall:.6f} machine 0 0 all {machine_busy_ns():.0f} 0\n")
            for role, pid in watched:
                for tid, (comm, ns, wait_ns) in task_times(pid).items():
                    out.write(f"{wall:.6f} {role} {pid} {tid} {comm} {ns} {wait_ns}\n")
            if done:
                break
            time.sleep(args.interval)
    sys.exit(proc.returncode)


# ---------------------------------------------------------------- report
def percentile(sorted_v, p):
    """numpy's default ('linear') percentile of an already sorted list."""
    if not sorted_v:
        return float("nan")
    k = (len(sorted_v) - 1) * p / 100.0
    lo = int(k)
    hi = min(lo + 1, len(sorted_v) - 1)
    return sorted_v[lo] + (sorted_v[hi] - sorted_v[lo]) * (k - lo)


def summary_ms(values):
    v = sorted(values)
    if not v:
        return {"n": 0}
    return {"n": len(v), "mean": statistics.fmean(v), "p50": percentile(v, 50),
            "p99": percentile(v, 99), "max": v[-1], "p1": percentile(v, 1), "min": v[0]}


def read_trace(path):
    meta, reqs = {}, {}
    with open(path) as f:
        for line in f:
            if line.startswith("# "):
                meta = json.loads(line[2:])
                continue
            p = line.split()
            if len(p) < 7:
                continue
            reqs[int(p[0])] = {"recv_ns": int(p[1]), "read_ns": int(p[2]), "prompt": int(p[3]),
                               "max_tokens": int(p[4]), "events": int(p[5]),
                               "complete": p[6] == "1", "t": [int(x) for x in p[7:]]}
    return meta, reqs


def read_samples(path):
    """{(role, tid): [(wall, ns)]}, the same for the time waiting to run, and
    {(role, tid): comm}."""
    series, waits, comms = {}, {}, {}
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) != 7:
                continue
            key = (p[1], int(p[3]))
            series.setdefault(key, []).append((float(p[0]), int(p[5])))
            waits.setdefault(key, []).append((float(p[0]), int(p[6])))
            comms[key] = p[4]
    return series, waits, comms


def cpu_between(points, t0, t1):
    """CPU ns a thread used in [t0, t1], by linear interpolation of its
    samples (0 before its first one: the sampler started the client, so a
    thread first seen late was created then)."""
    def at(t):
        if t < points[0][0]:
            return 0
        for (wa, na), (wb, nb) in zip(points, points[1:]):
            if wa <= t <= wb:
                return na + (nb - na) * (t - wa) / (wb - wa) if wb > wa else nb
        return points[-1][1]
    return max(0.0, at(t1) - at(t0))


# A side is the limit when it could not keep up: the server when it wrote
# tokens later than half a token interval after they were due (p99; a
# batching server writes a step's tokens one after another, so lateness up to
# the time one step's writes take is its normal work) or one of its threads was
# busy more than 90% of the run; the client when one of its loop threads (any
# thread, for a client without named loops) was busy more than 90%; the
# machine when the client's threads waited for a CPU more than 50 ms per
# second (other processes had its core).
BUSY_LIMIT = 0.9
WAIT_LIMIT_MS_PER_S = 50


def late_limit_us(r):
    return max(1000.0, (r.get("server_tpot_ms") or 0) * 1000 / 2)


def limit_of(r):
    sides = []
    late = (r.get("server_late_us") or {}).get("p99", 0)
    if late > late_limit_us(r) or r["server_busiest_thread_core_use"] > BUSY_LIMIT:
        sides.append("server")
    loops = r["client_loop_threads_core_use"] or [r["client_busiest_thread_core_use"]]
    if max(loops) > BUSY_LIMIT:
        sides.append("client")
    if r.get("client_wait_ms_per_s", 0) > WAIT_LIMIT_MS_PER_S:
        sides.append("machine")
    return "+".join(sides) or "neither"


def summary_line(r):
    t, i = r["ttft_err_ms"], r["itl_err_ms"]
    return (f"   {r['events_per_s']:,.0f} events/s  {r['cpu_us_per_event']:.2f} us/event  "
            f"TTFT err p50/p99 {t.get('p50', float('nan')):.3f}/{t.get('p99', float('nan')):.3f} ms  "
            f"ITL err p50/p99 {i.get('p50', float('nan')):.3f}/{i.get('p99', float('nan')):.3f} ms  "
            f"matched {r['matched']}/{r['completed']}  limit: {r['limit']}")


def cmd_report(args):
    meta, reqs = read_trace(args.trace)
    with open(args.result) as f:
        res = json.load(f)
    texts, ttfts, itls = res.get("generated_texts"), res.get("ttfts"), res.get("itls")
    if texts is None or ttfts is None or itls is None:
        sys.exit(f"{args.result}: no generated_texts/ttfts/itls (run the client with --save-detailed)")
    ttft_err, itl_err, e2el_err, tpot_err = [], [], [], []
    events, unmatched, mismatched, matched = 0, 0, 0, 0
    for text, ttft, gaps in zip(texts, ttfts, itls):
        m = re.match(r"r(\d+)", text or "")
        r = reqs.get(int(m.group(1))) if m else None
        if r is None or not r["t"]:
            unmatched += 1
            continue
        matched += 1
        events += r["events"]
        ttft_err.append(ttft * 1e3 - r["t"][0] / 1e6)
        if len(gaps) != len(r["t"]) - 1:
            mismatched += 1
            continue
        for k, g in enumerate(gaps):
            itl_err.append(g * 1e3 - (r["t"][k + 1] - r["t"][k]) / 1e6)
        # E2EL at the last token chunk; TPOT over the chunks after the first
        # (one token each from this server)
        e2el_err.append((ttft + sum(gaps)) * 1e3 - r["t"][-1] / 1e6)
        if gaps:
            tpot_err.append((sum(gaps) * 1e3 - (r["t"][-1] - r["t"][0]) / 1e6) / len(gaps))
    dur = float(res["duration"])
    t0 = float(res["benchmark_start_time_unix"])
    t1 = t0 + dur
    series, waits, comms = read_samples(args.samples)
    cpu = {"client": 0.0, "server": 0.0, "machine": 0.0}
    busiest = {"client": 0.0, "server": 0.0, "machine": 0.0}
    for key, pts in series.items():
        ns = cpu_between(pts, t0, t1)
        cpu[key[0]] += ns
        busiest[key[0]] = max(busiest[key[0]], ns)
    loop_ns = [cpu_between(p, t0, t1) for k, p in series.items()
               if k[0] == "client" and comms[k] == "st-loadgen"]
    # Time the client's threads were ready to run but another task had their
    # CPU: the shared machine's part of every client-side delay.
    client_wait_ns = sum(cpu_between(p, t0, t1) for k, p in waits.items() if k[0] == "client")
    out = {
        "label": args.label, "client": args.client, "point": args.point,
        "streams": res.get("max_concurrency"), "completed": res.get("completed"),
        "matched": matched, "unmatched": unmatched, "gap_count_mismatch": mismatched,
        "duration_s": dur, "events": events, "events_per_s": events / dur if dur > 0 else 0,
        "client_cpu_s": cpu["client"] / 1e9,
        "cpu_us_per_event": cpu["client"] / 1e3 / events if events else float("nan"),
        "client_core_use": cpu["client"] / 1e9 / dur if dur > 0 else 0,
        "client_busiest_thread_core_use": busiest["client"] / 1e9 / dur if dur > 0 else 0,
        "client_loop_threads_core_use": [ns / 1e9 / dur for ns in loop_ns] if dur > 0 else [],
        "server_core_use": cpu["server"] / 1e9 / dur if dur > 0 else 0,
        "server_busiest_thread_core_use": busiest["server"] / 1e9 / dur if dur > 0 else 0,
        "client_wait_ms_per_s": client_wait_ns / 1e6 / dur if dur > 0 else 0,
        "others_cores": max(0.0, cpu["machine"] - cpu["client"] - cpu["server"]) / 1e9 / dur
        if dur > 0 else 0,
        "server_threads": meta.get("threads"), "server_mode": meta.get("mode"),
        "server_tpot_ms": meta.get("tpot_ms"),
        "server_late_us": meta.get("late_us"),
        "server_read_delay_us_p99": percentile(
            sorted(r["read_ns"] / 1e3 for r in reqs.values()), 99),
        "ttft_err_ms": summary_ms(ttft_err), "itl_err_ms": summary_ms(itl_err),
        "e2el_err_ms": summary_ms(e2el_err), "tpot_err_ms": summary_ms(tpot_err),
        "itl_abs_err_ms_p99": percentile(sorted(abs(x) for x in itl_err), 99),
        "load_avg": os.getloadavg()[0],
    }
    # servetop's own word on whether it kept up (its result's client health),
    # to set beside the errors measured here against the server's truth
    st = res.get("servetop") or {}
    loop, add = st.get("loop") or {}, st.get("additions") or {}
    if "busy_share" in loop:
        out["self_loops"] = len(loop["busy_share"])
        out["self_busy_max"] = max(loop["busy_share"] or [0])
        out["self_recv_lag_ms"] = {k: add.get("recv_lag", {}).get(k) for k in ("median_ms", "p99_ms")}
        out["self_client_bound"] = loop.get("client_bound")
    out["limit"] = limit_of(out)
    line = json.dumps(out)
    if args.summary:
        print(summary_line(out))
    else:
        print(line)
    if args.out:
        with open(args.out, "a") as f:
            f.write(line + "\n")


# ---------------------------------------------------------------- table
def cmd_table(args):
    rows = {}
    with open(args.jsonl) as f:
        for line in f:
            r = json.loads(line)
            rows.setdefault((r["point"], r["client"]), []).append(r)

    def med(v, fmt):
        v = [x for x in v if x == x]
        if not v:
            return "-"
        m = statistics.median(v)
        if len(v) == 1:
            return format(m, fmt)
        return f"{format(m, fmt)} ({format(min(v), fmt)}–{format(max(v), fmt)})"

    nan = float("nan")
    cols = [("events/s", ",.0f", lambda r: r["events_per_s"]),
            ("CPU µs/event", ".2f", lambda r: r["cpu_us_per_event"]),
            ("client core", ".2f", lambda r: r["client_core_use"]),
            ("TTFT err p50 ms", ".3f", lambda r: r["ttft_err_ms"].get("p50", nan)),
            ("TTFT err p99 ms", ".3f", lambda r: r["ttft_err_ms"].get("p99", nan)),
            ("ITL err p50 ms", ".3f", lambda r: r["itl_err_ms"].get("p50", nan)),
            ("ITL err p99 ms", ".3f", lambda r: r["itl_err_ms"].get("p99", nan)),
            ("abs ITL err p99 ms", ".3f", lambda r: r["itl_abs_err_ms_p99"]),
            ("server core", ".2f", lambda r: r["server_core_use"]),
            ("server late p99 µs", ".0f", lambda r: (r["server_late_us"] or {}).get("p99", nan)),
            ("other load (cores)", ".2f", lambda r: r.get("others_cores", nan)),
            ("client waited ms/s", ".1f", lambda r: r.get("client_wait_ms_per_s", nan))]
    limits = {}
    for key, rs in rows.items():
        names = sorted({limit_of(r) for r in rs})
        limits[key] = "/".join(names)
    print("| point | client | runs | " + " | ".join(c for c, _, _ in cols) + " | limit |")
    print("|---" * (len(cols) + 4) + "|")
    for (point, client), rs in rows.items():
        print(f"| {point} | {client} | {len(rs)} | " +
              " | ".join(med([fn(r) for r in rs], fmt) for _, fmt, fn in cols) +
              f" | {limits[(point, client)]} |")
    print("\nmedian (min–max) over the runs; errors are client minus server truth; limit: which side "
          "could not keep up (server: writes later than half a token interval, at least 1 ms, at "
          f"p99 or a thread > {BUSY_LIMIT:.0%} busy; client: a loop thread > {BUSY_LIMIT:.0%} busy; "
          f"machine: the client waited for its CPU > {WAIT_LIMIT_MS_PER_S} ms/s)")


# ---------------------------------------------------------------- side by side
def cmd_sidebyside(args):
    """Each client's added error against the floor client's of the same
    point and repeat (runs interleaved: A B A B ...), as differences: the
    issue's measure (client-added TTFT and ITL p99 within X ms of the floor's)."""
    runs = {}
    with open(args.jsonl) as f:
        for line in f:
            r = json.loads(line)
            rep_ = r["label"].rsplit("-", 1)[-1]
            runs.setdefault((r["point"], rep_), {})[r["client"]] = r
    nan = float("nan")
    diffs = {}
    for (point, rep_), by in sorted(runs.items()):
        floor = by.get(args.floor)
        if not floor:
            continue
        for client, r in by.items():
            if client == args.floor:
                continue
            d = diffs.setdefault((point, client), [])
            d.append({"ttft": r["ttft_err_ms"].get("p99", nan), "itl": r["itl_err_ms"].get("p99", nan),
                      "floor_ttft": floor["ttft_err_ms"].get("p99", nan),
                      "floor_itl": floor["itl_err_ms"].get("p99", nan),
                      "d_ttft": r["ttft_err_ms"].get("p99", nan) - floor["ttft_err_ms"].get("p99", nan),
                      "d_itl": r["itl_err_ms"].get("p99", nan) - floor["itl_err_ms"].get("p99", nan),
                      "loops": r.get("self_loops"), "busy": r.get("self_busy_max"),
                      "recv_p99": (r.get("self_recv_lag_ms") or {}).get("p99_ms"),
                      "bound": r.get("self_client_bound"), "limit": r.get("limit")})

    def med(v, fmt):
        v = [x for x in v if isinstance(x, (int, float)) and x == x]
        if not v:
            return "-"
        m = statistics.median(v)
        return format(m, fmt) if len(v) == 1 else f"{format(m, fmt)} ({format(min(v), fmt)}–{format(max(v), fmt)})"

    print(f"| point | client | runs | loops | TTFT err p99 ms | {args.floor} | difference | "
          f"ITL err p99 ms | {args.floor} | difference | busiest loop | own recv lag p99 ms | "
          "said client-bound | limit (paced.py) |")
    print("|---" * 14 + "|")
    worst = {}
    for (point, client), ds in sorted(diffs.items()):
        bound = sum(1 for d in ds if d["bound"])
        print(f"| {point} | {client} | {len(ds)} | {med([d['loops'] for d in ds], '.0f')} | "
              f"{med([d['ttft'] for d in ds], '.3f')} | {med([d['floor_ttft'] for d in ds], '.3f')} | "
              f"{med([d['d_ttft'] for d in ds], '+.3f')} | {med([d['itl'] for d in ds], '.3f')} | "
              f"{med([d['floor_itl'] for d in ds], '.3f')} | {med([d['d_itl'] for d in ds], '+.3f')} | "
              f"{med([d['busy'] for d in ds], '.0%')} | {med([d['recv_p99'] for d in ds], '.3f')} | "
              f"{bound}/{len(ds)} | {'/'.join(sorted({str(d['limit']) for d in ds}))} |")
        worst[(point, client)] = max((max(d["d_ttft"], d["d_itl"]) for d in ds), default=nan)
    print(f"\ndifference: the client's p99 error minus {args.floor}'s in the same repeat "
          "(median, min–max over repeats); errors are client timestamps minus the server's own; "
          "own recv lag: the client's sampled receive lag (its result's servetop.additions.recv_lag)")
    if args.within is not None:
        for (point, client), w in sorted(worst.items()):
            verdict = "within" if w <= args.within else "NOT within"
            print(f"{point} {client}: worst difference over repeats {w:+.3f} ms: {verdict} "
                  f"{args.within} ms of {args.floor}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--samples", required=True)
    r.add_argument("--cpus")
    r.add_argument("--watch", type=int, action="append", default=[])
    r.add_argument("--interval", type=float, default=0.1)
    r.add_argument("--timeout", type=float, default=600)
    r.add_argument("client", nargs=argparse.REMAINDER)
    p = sub.add_parser("report")
    for a in ("--trace", "--result", "--samples", "--label"):
        p.add_argument(a, required=True)
    p.add_argument("--client", default="")
    p.add_argument("--point", default="")
    p.add_argument("--out")
    p.add_argument("--summary", action="store_true", help="print one summary line, not the JSON")
    q = sub.add_parser("quiet")
    q.add_argument("--max-busy", type=float, default=0.3)
    q.add_argument("--wait", type=float, default=300)
    t = sub.add_parser("table")
    t.add_argument("jsonl")
    sb = sub.add_parser("sidebyside", help="each client's p99 errors minus the floor client's")
    sb.add_argument("jsonl")
    sb.add_argument("--floor", default="floor")
    sb.add_argument("--within", type=float, help="say whether every repeat is within this many ms")
    args = ap.parse_args()
    {"run": cmd_run, "report": cmd_report, "quiet": cmd_quiet, "table": cmd_table,
     "sidebyside": cmd_sidebyside}[args.cmd](args)


if __name__ == "__main__":
    main()
