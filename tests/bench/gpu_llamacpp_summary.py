#!/usr/bin/env python3
"""Summary of tests/bench/gpu_llamacpp_proof.sh: the server's GPU memory from servetop against
nvidia-smi at the same moment, and the A/B run's throughput, latency and acceptance, off
against the draft model. Standard library only (any python3 works).

  gpu_llamacpp_summary.py --raw RAW --calib CALIB_DIR --runs OFF_DIR DRAFT_DIR --md M --json J

RAW holds the proof script's readings ({off,draft}-gpus.json, -nvsmi-apps.csv, ...). Missing
pieces (no GPU, a side that did not run) are '-' in the table and null in the JSON.
"""
import argparse
import glob
import json
import os
import re
import statistics

MIB = 2**20
SIDES = ("off", "draft")


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def read_text(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def csv_rows(path):
    """nvidia-smi --format=csv: a header, then rows; values keep their units ('7142 MiB')."""
    lines = [l for l in read_text(path).splitlines() if l.strip()]
    if len(lines) < 2 or "," not in lines[0]:
        return []
    head = [h.strip() for h in lines[0].split(",")]
    rows = []
    for line in lines[1:]:
        cells = [c.strip() for c in line.split(",")]
        if len(cells) > len(head):  # a process name with commas: first and last are fixed
            cells = [cells[0], ",".join(cells[1:-1]), cells[-1]]
        rows.append(dict(zip(head, cells)))
    return rows


def number(text):
    m = re.match(r"\s*(-?[0-9.]+)", text or "")
    return float(m.group(1)) if m else None


def col(row, prefix):
    for k, v in row.items():
        if k.startswith(prefix):
            return v
    return None


def result_of(run_dir):
    if not run_dir:
        return None, None
    files = sorted(glob.glob(os.path.join(run_dir, "result-conc*.json")))
    return (load_json(files[0]) if files else None), load_json(os.path.join(run_dir, "manifest.json"))


def dig(obj, *keys):
    for k in keys:
        if not isinstance(obj, dict) or k not in obj:
            return None
        obj = obj[k]
    return obj


def side_figures(raw, side, run_dir):
    res, man = result_of(run_dir)
    g = load_json(os.path.join(raw, f"{side}-gpus.json"))
    tree = load_json(os.path.join(raw, f"{side}-gpus-tree.json"))
    apps = csv_rows(os.path.join(raw, f"{side}-nvsmi-apps.csv"))
    smi_gpu = csv_rows(os.path.join(raw, f"{side}-nvsmi-gpu.csv"))
    pid = number(read_text(os.path.join(raw, f"{side}-pid.txt")))
    f = {"run_dir": os.path.basename(run_dir) if run_dir else None,
         "status": dig(man, "status"), "server_pid": int(pid) if pid is not None else None}
    # servetop gpus --json --pid SERVER: the process row and the server's sum on GPU 0
    proc = next((p for p in (dig(g, "processes") or []) if p.get("pid") == f["server_pid"]), None)
    f["servetop_process_mem_bytes"] = proc and proc.get("mem_bytes")
    gpu0 = (dig(g, "gpus") or [None])[0] or {}
    f["servetop_backend"] = dig(g, "backend")
    f["servetop_server_mem_bytes"] = gpu0.get("server_mem_bytes")
    f["servetop_gpu_mem_used_bytes"] = gpu0.get("mem_used_bytes")
    f["servetop_power_w"] = gpu0.get("power_w")
    tree0 = (dig(tree, "gpus") or [None])[0] or {}
    f["servetop_tree_server_mem_bytes"] = tree0.get("server_mem_bytes")  # --pid <servetop run>
    # nvidia-smi at the same moment
    app = next((a for a in apps if number(a.get("pid")) == f["server_pid"]), None)
    f["nvsmi_process_mem_mib"] = number(col(app, "used")) if app else None
    f["nvsmi_processes"] = [{"pid": int(number(a.get("pid")) or 0), "name": a.get("process_name"),
                             "mem_mib": number(col(a, "used"))} for a in apps]
    f["nvsmi_gpu_mem_used_mib"] = number(col(smi_gpu[0], "memory.used")) if smi_gpu else None
    f["nvsmi_power_w"] = number(col(smi_gpu[0], "power.draw")) if smi_gpu else None
    # servetop run's own per-second series for the point (the launcher's pid tree)
    series = [s["gpus"][0].get("server_mem_bytes") for s in dig(res, "servetop_run", "gpu_telemetry",
                                                                   "samples") or [] if s.get("gpus")]
    series = [v for v in series if v is not None]
    f["run_series_server_mem_bytes"] = {"n": len(series), "min": min(series), "max": max(series),
                                        "median": statistics.median(series)} if series else None
    if res:
        for k in ("completed", "num_prompts", "duration", "request_throughput", "output_throughput",
                  "total_token_throughput", "mean_ttft_ms", "median_ttft_ms", "p99_ttft_ms",
                  "mean_tpot_ms", "median_tpot_ms", "p99_tpot_ms", "median_itl_ms", "p99_itl_ms",
                  "median_e2el_ms", "total_output_tokens", "max_concurrency"):
            f[k] = res.get(k)
        f["failure_rate"] = dig(res, "servetop", "failure_rate")
        acc = dig(res, "servetop", "server", "acceptance") or {}
        f["accept_rate"] = acc.get("accept_rate")
        f["accept_length"] = acc.get("accept_length")
        f["accept_method"] = acc.get("accept_rate_method")
        f["per_position_rate"] = acc.get("per_position_rate")
        pra = dig(res, "servetop", "per_request_acceptance") or {}
        f["per_request_accept_rate"] = pra.get("accept_rate")
        f["per_request_draft_tokens"] = pra.get("draft_tokens")
        f["per_request_accepted_tokens"] = pra.get("accepted_tokens")
        srv = dig(res, "servetop_run", "server") or {}
        for k in ("max_total_num_tokens", "kv_per_slot_tokens", "batch_cap", "ready_after_s"):
            f[k] = srv.get(k)
        f["isl"] = dig(res, "servetop", "client", "random_input_len")
        f["osl"] = dig(res, "servetop", "client", "random_output_len")
    return f


def fmt(v, unit="", nd=1):
    if v is None:
        return "-"
    if isinstance(v, float):
        v = f"{v:,.{nd}f}"
    elif isinstance(v, int):
        v = f"{v:,}"
    return f"{v}{unit}"


def mib(b):
    return None if b is None else b / MIB


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--raw", required=True)
    ap.add_argument("--calib")
    ap.add_argument("--runs", nargs="*", default=[])
    ap.add_argument("--md", required=True)
    ap.add_argument("--json", required=True)
    a = ap.parse_args()
    runs = (a.runs + [None, None])[:2]
    sides = {s: side_figures(a.raw, s, d) for s, d in zip(SIDES, runs)}

    info = dict(l.split("=", 1) for l in read_text(os.path.join(a.raw, "build-info.txt")).splitlines()
                if "=" in l)
    setup = read_text(os.path.join(a.raw, "setup.txt"))
    m = re.search(r"^([0-9.]+) MiB in ([0-9.]+) s .*$", setup, re.M)
    idle = csv_rows(os.path.join(a.raw, "nvsmi-gpu-idle.csv"))
    calib_res, _ = result_of(a.calib if a.calib and os.path.isdir(a.calib) else None)
    summary = {
        "build": {k: info.get(k) for k in ("commit", "variant", "build_seconds", "jobs", "host_cpus",
                                           "built_at", "setup_seconds")},
        "models_written": {"mib": float(m.group(1)), "seconds": float(m.group(2))} if m else None,
        "gpu": idle[0].get("name") if idle else None,
        "calibration": {k: calib_res.get(k) for k in ("completed", "duration", "request_throughput",
                                                      "output_throughput")} if calib_res else None,
        "sides": sides,
    }
    off, dr = sides["off"], sides["draft"]

    def ratio(k):
        x, y = off.get(k), dr.get(k)
        return y / x if isinstance(x, (int, float)) and isinstance(y, (int, float)) and x else None
    summary["draft_over_off"] = {k: ratio(k) for k in ("output_throughput", "median_ttft_ms",
                                                      "median_tpot_ms", "median_e2el_ms")}
    with open(a.json, "w") as f:
        json.dump(summary, f, indent=1)

    b = summary["build"]
    out = [f"# llama.cpp on {summary['gpu'] or 'this machine'} through servetop", ""]
    out.append(f"llama-server {b['variant'] or '-'} (commit {(b['commit'] or '-')[:7]}): configure + "
               f"build {fmt(b['build_seconds'])} s with -j{b['jobs'] or '-'} ({b['host_cpus'] or '-'} "
               f"CPUs); setup script in all {fmt(b['setup_seconds'])} s"
               + (f"; models {summary['models_written']['mib']:,.1f} MiB written in "
                  f"{summary['models_written']['seconds']:.1f} s" if m else "") + ".")
    if calib_res:
        c = summary["calibration"]
        out.append(f"Calibration (off): {c['completed']} requests in {c['duration']:.1f} s, "
                   f"{c['request_throughput']:.2f} req/s.")
    out.append(f"A/B: concurrency {fmt(off.get('max_concurrency'))}, {fmt(off.get('num_prompts'))} "
               f"prompts a side, isl {fmt(off.get('isl'))} osl {fmt(off.get('osl'))}.")
    out += ["", "| | off | draft |", "|---|---|---|"]

    def row(label, key=None, unit="", nd=1, conv=None, get=None):
        cells = []
        for s in (off, dr):
            v = get(s) if get else s.get(key)
            cells.append(fmt(conv(v) if conv and v is not None else v, unit, nd))
        out.append(f"| {label} | {cells[0]} | {cells[1]} |")

    row("run status", "status")
    row("server pid", get=lambda s: None if s.get("server_pid") is None else str(s["server_pid"]))
    row("server GPU memory, servetop gpus --pid (%s)" % (off.get("servetop_backend") or "-"),
        get=lambda s: f"{s['servetop_process_mem_bytes']:,} B = {mib(s['servetop_process_mem_bytes']):,.2f} MiB"
        if s.get("servetop_process_mem_bytes") is not None else None)
    row("server GPU memory, nvidia-smi --query-compute-apps", "nvsmi_process_mem_mib", " MiB", 0)
    row("server GPU memory, servetop gpus --pid <servetop run> (tree)",
        "servetop_tree_server_mem_bytes", " MiB", 2, mib)
    row("server GPU memory, servetop run's series (median of samples)",
        get=lambda s: mib(s["run_series_server_mem_bytes"]["median"]) if s.get("run_series_server_mem_bytes") else None,
        unit=" MiB", nd=2)
    row("GPU memory used, servetop", "servetop_gpu_mem_used_bytes", " MiB", 2, mib)
    row("GPU memory used, nvidia-smi", "nvsmi_gpu_mem_used_mib", " MiB", 0)
    row("power, servetop / nvidia-smi",
        get=lambda s: (f"{fmt(s.get('servetop_power_w'))} / {fmt(s.get('nvsmi_power_w'))} W"
                       if s.get("servetop_power_w") is not None or s.get("nvsmi_power_w") is not None else None))
    row("ready after", "ready_after_s", " s", 2)
    row("KV cache (tokens, all slots / per slot)",
        get=lambda s: f"{fmt(s.get('max_total_num_tokens'))} / {fmt(s.get('kv_per_slot_tokens'))}"
        if s.get("max_total_num_tokens") is not None else None)
    row("completed / failure rate",
        get=lambda s: f"{fmt(s.get('completed'))} / {fmt(s.get('failure_rate'), nd=3)}"
        if s.get("completed") is not None else None)
    row("duration", "duration", " s", 1)
    row("output throughput", "output_throughput", " tok/s", 0)
    row("request throughput", "request_throughput", " req/s", 2)
    row("TTFT mean / median / p99 (ms)",
        get=lambda s: " / ".join(fmt(s.get(k), nd=1) for k in ("mean_ttft_ms", "median_ttft_ms", "p99_ttft_ms"))
        if s.get("median_ttft_ms") is not None else None)
    row("TPOT mean / median / p99 (ms)",
        get=lambda s: " / ".join(fmt(s.get(k), nd=2) for k in ("mean_tpot_ms", "median_tpot_ms", "p99_tpot_ms"))
        if s.get("median_tpot_ms") is not None else None)
    row("ITL median / p99 (ms)",
        get=lambda s: " / ".join(fmt(s.get(k), nd=2) for k in ("median_itl_ms", "p99_itl_ms"))
        if s.get("median_itl_ms") is not None else None)
    row("acceptance (llamacpp:spec_decode_* deltas)", "accept_rate", "", 3)
    row("accepted tokens per draft", "accept_length", "", 2)
    row("acceptance per request (timings.draft_n)",
        get=lambda s: f"{fmt(s.get('per_request_accept_rate'), nd=3)} ({fmt(s.get('per_request_accepted_tokens'))}"
                      f" of {fmt(s.get('per_request_draft_tokens'))})"
        if s.get("per_request_draft_tokens") else None)
    row("acceptance by draft position",
        get=lambda s: " ".join(f"{r:.2f}" for r in s["per_position_rate"]) if s.get("per_position_rate") else None)
    r = summary["draft_over_off"]
    out += ["", "draft / off: output throughput " + fmt(r["output_throughput"], "x", 3)
            + ", median TTFT " + fmt(r["median_ttft_ms"], "x", 3)
            + ", median TPOT " + fmt(r["median_tpot_ms"], "x", 3)
            + ", median E2EL " + fmt(r["median_e2el_ms"], "x", 3) + "."]
    with open(a.md, "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
