#!/usr/bin/env python3
"""Where the load loop's CPU goes: reads `perf script` output (samples of
`perf record -e cpu-clock -g` on servetop bench, built with frame pointers)
and sorts each sample of the loop threads (comm st-loadgen) into one
category by the functions on its stack, first match in the order below.

  perf script -i perf.data --comms st-loadgen -F comm,ip,sym | cpu_breakdown.py [--events N]

With --events N (SSE events the run handled), prints µs of CPU per event per
category as well, scaled from the share of samples and --cpu-s (the loop's
CPU seconds over the same span, e.g. from schedstat).
tests/bench/cpu_profile.sh records a run and calls this."""
import argparse
import re
import sys

# (category, regex on a frame's symbol); a sample goes to the first category
# whose pattern matches any of its frames. Order matters: specific first.
CATEGORIES = [
    ("clock reads", r"^(clock_gettime|__vdso_clock_gettime|__clock_gettime|Curl_now|read_tsc|clock_mono_ns)"),
    ("allocation", r"^(malloc|free|calloc|realloc|_int_malloc|_int_free|_int_realloc|__libc_malloc|"
                   r"__libc_free|__libc_calloc|__libc_realloc|cfree|tcache_|malloc_consolidate|"
                   r"__mprotect|sysmalloc|xmalloc|xcalloc|xrealloc|xreallocarray|Curl_cfree|Curl_ccalloc|"
                   r"Curl_cmalloc|Curl_crealloc|Curl_dyn_)"),
    ("SSE parsing and chunk scan", r"^(lg_sse_feed|on_sse_line|lg_chunk_scan|scan_|top_member|"
                                   r"lg_json_unescape_append|lg_sse_finish)"),
    ("body callback bookkeeping (on_body)", r"^(on_body|live_hist_record_us|record_detail)"),
    ("per-request: connect, send, close, completion",
     r"^(start_request|dispatch_ready|claim_next|finish_request|reap_done|xfer_get|xfer_put|"
     r"active_add|active_remove|live_record_completion|curl_multi_add_handle|"
     r"curl_multi_remove_handle|curl_easy_setopt|Curl_vsetopt|curl_easy_getinfo|Curl_getinfo|"
     r"Curl_connect|create_conn|allocate_conn|Curl_conn_connect|cf_.*connect|cf_socket_open|"
     r"cf_he_|cf_setup_|Curl_.*[Dd]isconnect|Curl_conncache|conncache_|multi_done|multi_do|"
     r"Curl_http$|Curl_http_done|Curl_buffer_send|Curl_add_buffer_send|Curl_add_custom_headers|"
     r"Curl_pretransfer|Curl_init_do|Curl_posttransfer|Curl_http_connect|Curl_resolv|"
     r"Curl_close|Curl_free_request|Curl_conn_close|__libc_connect|__connect|__socket|socket$|"
     r"__close|close$|Curl_http_readwrite_headers|Curl_http_header|Curl_http_statusline|"
     r"Curl_client_write_header|Curl_http_firstwrite|Curl_http_req_|Curl_dynhds|Curl_headers)"),
    ("epoll_wait (sleep, wake-up, ready list)", r"^(epoll_wait|__epoll_wait|do_epoll_wait|__x64_sys_epoll_wait)"),
    ("timers (curl splay, timerfd)", r"^(Curl_expire|Curl_splay|add_next_timeout|Curl_update_timer|"
                                     r"on_curl_timer|timerfd_arm_ns|timerfd_settime|__x64_sys_timerfd_settime|"
                                     r"multi_deltimeout|multi_addtimeout|Curl_expire_done|expire_ex|"
                                     r"Curl_expire_clear|multi_timeout)"),
    ("curl: poll() for pending data after each read", r"^(cf_socket_data_pending|Curl_socket_check|"
                                                       r"Curl_poll|__poll|poll$|cf_he_data_pending|"
                                                       r"Curl_conn_data_pending)"),
    ("recv syscall (kernel TCP receive, ACKs)", r"^(__libc_recv|recv$|__recv|cf_socket_recv|__x64_sys_recvfrom|"
                                                 r"__sys_recvfrom)"),
    ("curl: chunked decoding", r"^(Curl_httpchunk_read)"),
    ("curl: socket hash, socket callback, epoll_ctl", r"^(singlesocket|on_curl_socket|epoll_ctl|__x64_sys_epoll_ctl|"
                                                      r"Curl_hash_|sh_getentry|multi_getsock|Curl_multi_getsock|"
                                                      r"curl_multi_assign)"),
    ("curl: progress, speed checks", r"^(Curl_pgrs|Curl_speedcheck|progress_calc)"),
    ("curl: other (multi_runsingle, readwrite, client write)", r"^(Curl_|curl_|multi_|cf_|readwrite)"),
    ("loop: other (worker_main, publish, dispatch)", r"^(worker_main|publish|hist_|live_)"),
]


def classify(frames, compiled):
    for name, rx in compiled:
        for f in frames:
            if rx.match(f):
                return name
    return "kernel without a user frame / unknown" if frames else "unknown"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", type=float, help="SSE events handled during the recorded span")
    ap.add_argument("--cpu-s", type=float, help="loop CPU seconds during the recorded span")
    args = ap.parse_args()
    compiled = [(n, re.compile(p)) for n, p in CATEGORIES]
    counts, total = {}, 0
    frames = []
    header = re.compile(r"^\S")

    def flush():
        nonlocal total
        if frames is None:
            return
        c = classify(frames, compiled)
        counts[c] = counts.get(c, 0) + 1
        total += 1

    started = False
    for line in sys.stdin:
        if not line.strip():
            continue
        if header.match(line):
            if started:
                flush()
            started = True
            frames = []
            continue
        parts = line.split(None, 1)
        if len(parts) == 2:
            sym = parts[1].strip()
            sym = re.sub(r"\+0x[0-9a-f]+$", "", sym)
            sym = re.sub(r"\.(isra|part|constprop|cold)\.\d+.*$", "", sym)
            frames.append(sym)
    if started:
        flush()
    if not total:
        sys.exit("cpu_breakdown: no samples")
    per_event = args.events and args.cpu_s
    print(f"| category | share of loop samples |{' µs per event |' if per_event else ''}")
    print(f"|---|---|{'---|' if per_event else ''}")
    for name, n in sorted(counts.items(), key=lambda kv: -kv[1]):
        row = f"| {name} | {100.0 * n / total:.1f}% |"
        if per_event:
            row += f" {args.cpu_s * 1e6 * n / total / args.events:.2f} |"
        print(row)
    tail = f" ({args.cpu_s * 1e6 / args.events:.2f} µs per event)" if per_event else ""
    print(f"\n{total} samples{tail}")


if __name__ == "__main__":
    main()
