#!/usr/bin/env bash
# Issue 19.9 on a many-core host (not a ctest test): does servetop keep up at
# 1,024 paced streams x 10 ms/token? tests/bench_paced_server on the first half
# of the CPUs (one thread per CPU), and on the other half, interleaved in each
# repeat: `servetop bench` with --num-workers auto (the default), the floor
# client (tests/bench_floor_client: epoll + recv, nothing else) and servetop with
# one loop (the behaviour before auto). Per run paced.py measures each client's
# added error against the server's own timestamps; the summary sets servetop's
# p99 TTFT and ITL errors beside the floor client's of the same repeat, as
# differences (the issue: within 0.5 ms of the floor's, at most 1 ms), with
# servetop's own client-health figures (loops, busiest loop, receive lag, its
# client-bound verdict). Needs bash, python3, taskset; no packages, no network.
#
#   usage: tests/bench/paced_device.sh BUILD_DIR [OUT_DIR]
#
# BUILD_DIR holds servetop, tests/bench_paced_server, tests/bench_floor_client
# and any shared libraries they need that the host lacks (it is put first on
# LD_LIBRARY_PATH). OUT_DIR [$OUT, else /tmp/paced-device] gets summary.md
# (also printed), table.md, results.jsonl and machine.txt; the raw traces stay
# in WORK_DIR [/tmp/paced-device-work].
# Environment: POINTS ["paced:1024 paced:256"], CLIENTS ["servetop floor
# servetop@1"], REPEATS [3], BUDGET_S [480: no run starts after it, so one
# 10-minute command holds it], SERVER_CPUS / CLIENT_CPUS [the two halves],
# WITHIN_MS [0.5].
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?usage: paced_device.sh BUILD_DIR [OUT_DIR]}" && pwd)
out=${2:-${OUT:-/tmp/paced-device}}
work=${WORK_DIR:-/tmp/paced-device-work}
mkdir -p "$out" "$work"
export LD_LIBRARY_PATH=$build${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
for bin in servetop tests/bench_paced_server tests/bench_floor_client; do
  [[ -x $build/$bin ]] || { echo "paced_device: no $build/$bin" >&2; exit 2; }
done
if ! "$build/servetop" --version >/dev/null 2>&1 && ! "$build/servetop" --help >/dev/null 2>&1; then
  echo "paced_device: $build/servetop does not start (libraries?):" >&2
  "$build/servetop" --help 2>&1 | head -3 >&2 || true
  exit 2
fi
ncpu=$(nproc)
(( ncpu >= 2 )) || { echo "paced_device: needs 2 CPUs at least" >&2; exit 2; }
half=$((ncpu / 2))
server_cpus=${SERVER_CPUS:-0-$((half - 1))}
client_cpus=${CLIENT_CPUS:-$half-$((ncpu - 1))}
nserver=$(python3 -c "import sys; print(len(set().union(*[range(int(a), int(b or a) + 1) for a, _, b in (p.partition('-') for p in sys.argv[1].split(','))])))" "$server_cpus")
rm -f "$work/results.jsonl"
POINTS=${POINTS:-"paced:1024 paced:256"} CLIENTS=${CLIENTS:-"servetop floor servetop@1"} \
  REPEATS=${REPEATS:-3} BUDGET_S=${BUDGET_S:-480} SERVER_THREADS=$nserver \
  "$here/paced_bench.sh" "$build" "$work" "$server_cpus" "$client_cpus" || true
cp "$work/results.jsonl" "$work/table.md" "$work/machine.txt" "$out/" 2>/dev/null || true
{
  echo "# paced_device: $(date -u +%FT%TZ), $ncpu CPUs, server CPUs $server_cpus ($nserver threads), clients on $client_cpus"
  head -3 "$work/machine.txt" 2>/dev/null || true
  echo
  python3 "$here/paced.py" sidebyside "$work/results.jsonl" --within "${WITHIN_MS:-0.5}"
} | tee "$out/summary.md"
