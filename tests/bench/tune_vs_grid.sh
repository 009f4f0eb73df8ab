#!/usr/bin/env bash
# The search measured (issue 20.6): `servetop tune` against the full grid over the same space
# (`servetop tune --grid`: every configuration, each concurrency up to its first failure),
# run for real one after the other on the same machine: points and wall time to the answer, as
# ratios, and whether the winners agree (the same configuration, or goodput intervals that
# overlap). A benchmark: it prints, it asserts nothing about time.
#
#   tests/bench/tune_vs_grid.sh sim        # servetop sim (fast; the default)
#   tests/bench/tune_vs_grid.sh llamacpp   # the tiny llama.cpp pair on this CPU (minutes)
#
# SERVETOP: the binary (default build/servetop); PROJECT_DIR: the checkout (default: here).
# Extra arguments after the engine go to both tune runs (e.g. --conc-max 8).
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
PROJECT_DIR=${PROJECT_DIR:-$here}
SERVETOP=${SERVETOP:-$PROJECT_DIR/build/servetop}
engine=${1:-sim}
shift || true
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

case $engine in
sim)
  # SGLang's knobs on the sim's model (docs/sim.md): the batch cap and the KV memory; a
  # short workload at 50x the modelled speed (latencies read 50x short: the TTFT target is
  # 2 s modelled), where requests past the batch cap queue and the TTFT target binds
  args=(qwen3.5-fp8-h200-sglang --sim --configs "$PROJECT_DIR/configs"
    --slo ttft_p99_ms=40 --knob max-running-requests=4,8,16 --knob mem-fraction-static=0.75,0.85
    --conc-min 2 --conc-max 16 --isl 256 --osl 32 --num-prompts 400 --server-arg=--sim-speed=50) ;;
llamacpp)
  # the tiny pair on llama-server (slots, the draft model), the SLO and workload of
  # tests/integration/tune_llamacpp.sh; a small space: every point is 400 requests on a
  # shared 2-core CPU (tens of seconds)
  args=(tiny-llamacpp-cpu --configs "$PROJECT_DIR/configs"
    --slo ttft_p99_ms=300,tpot_p99_ms=25 --knob np=2,4 --knob spec=off,on
    --conc-min 2 --conc-max 6 --isl 64 --osl 32 --num-prompts 400) ;;
*) echo "usage: $0 [sim|llamacpp] [tune options...]" >&2; exit 2 ;;
esac

# one_run MODE [--grid]: runs the tune, prints "seconds" and leaves tune.json in $work/MODE
one_run() {
  local mode=$1; shift
  local t0 t1
  t0=$(date +%s.%N)
  "$SERVETOP" tune "${args[@]}" "$@" --results "$work/$mode" --quiet >"$work/$mode.out" 2>&1
  local rc=$?
  t1=$(date +%s.%N)
  if [[ $rc -ne 0 && $rc -ne 1 ]]; then
    echo "tune ($mode) failed, exit $rc:" >&2; tail -20 "$work/$mode.out" >&2; exit 1
  fi
  python3 -c "print(f'{$t1 - $t0:.1f}')"
}

echo "tune_vs_grid ($engine): servetop tune ${args[*]} $*"
search_s=$(one_run search "$@")
grid_s=$(one_run grid --grid "$@")
python3 - "$work" "$search_s" "$grid_s" "$engine" <<'EOF'
import glob, json, sys
work, search_s, grid_s, engine = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
def load(mode):
    return json.load(open(glob.glob(f"{work}/{mode}/*/tune.json")[0]))
s, g = load("search"), load("grid")
def winner(t):
    if t["winner"] is None or t["winner"] < 0:
        return None
    return t["configs"][t["winner"]]
def desc(c):
    return " ".join(f"{k}={v}" for k, v in c["knobs"].items()) if c else "none"
ws, wg = winner(s), winner(g)
if ws and wg:
    same = ws["knobs"] == wg["knobs"]
    overlap = ws["goodput"]["lo"] <= wg["goodput"]["hi"] and wg["goodput"]["lo"] <= ws["goodput"]["hi"]
    agree = "same configuration" if same else ("within its interval" if overlap else "DIFFERENT")
else:
    agree = "no winner" if not ws and not wg else "DIFFERENT (one has no winner)"
def line(name, t, w, secs):
    gp = w["goodput"] if w else None
    return (f"{name:6} {t['points']:4d} points  {len(t['configs']):3d} configs  {secs:8.1f} s  "
            f"winner {desc(w)} at conc {w['best_conc'] if w else '-'}: "
            + (f"{gp['point']:.1f} [{gp['lo']:.1f}, {gp['hi']:.1f}] {s['throughput']}" if gp else "-"))
print(line("search", s, ws, search_s))
print(line("grid", g, wg, grid_s))
print(f"grid / search: {g['points'] / max(s['points'], 1):.2f}x points, "
      f"{grid_s / max(search_s, 1e-9):.2f}x wall time; winners: {agree}")
print(f"| {engine} | {len(g['configs'])} | {s['points']} ({len(s['configs'])}) | {search_s:.0f} s | "
      f"{g['points']} | {grid_s:.0f} s | {g['points'] / max(s['points'], 1):.2f}x | "
      f"{grid_s / max(search_s, 1e-9):.2f}x | {agree} |")
EOF
