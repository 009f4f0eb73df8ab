#!/usr/bin/env python3
"""The winner of a `servetop tune`, for the scripts that measure it again.

  tune_winner.py args TUNE_JSON          the arguments of a plain `servetop run` with the
                                         winner's settings, one a line: the twin when
                                         spec=on, else the recipe; --conc; --set per knob
  tune_winner.py verdict TUNE_JSON RESULT
                                         the re-run's result against the SLO: a line per
                                         target (held when the target is at or above the
                                         lower bound of the re-run's 95% interval), the
                                         goodput beside the tune's, then "verdict ok" or
                                         "verdict fails"; exit 0 either way
"""
import json
import sys

NAMES = {"ttft_p99_ms": ("ttft", "p99_ttft_ms"), "tpot_p99_ms": ("tpot", "p99_tpot_ms"),
         "e2el_p99_ms": ("e2el", "p99_e2el_ms"), "itl_p99_ms": ("itl", "p99_itl_ms")}


def winner(tune):
    return tune["configs"][tune["winner"]]


def run_args(tune):
    w = winner(tune)
    knobs = w["knobs"]
    out = [tune["twin"] if knobs.get("spec") == "on" else tune["recipe"], "--conc", str(w["best_conc"])]
    for k, v in knobs.items():
        if k != "spec":
            out += ["--set", f"{k}={v}"]
    return out


def verdict(tune, r):
    w = winner(tune)
    ci = r["servetop"]["additions"]["ci"]["figures"]
    ok = True
    for key, target in tune["slo"].items():
        if key not in NAMES:  # a floor (min_tok_s_per_user): not re-checked here
            continue
        fig, field = NAMES[key]
        lo, hi = ci[fig]["p99"]
        est = r[field]
        inside = lo <= target
        ok = ok and inside
        print(f"{key}: target {target}, re-run {est:.1f} [{lo:.1f}, {hi:.1f}]: "
              + ("meets it within its interval" if inside else "FAILS (the whole interval is above)")
              + ("" if est <= target else " (the estimate is above the target)"))
    gp, (lo, hi) = w["goodput"], ci["output_throughput"]["value"]
    print(f"goodput: tune {gp['point']:.1f} [{gp['lo']:.1f}, {gp['hi']:.1f}], re-run "
          f"{r['output_throughput']:.1f} [{lo:.1f}, {hi:.1f}] output tok/s at concurrency "
          f"{r['max_concurrency']}")
    print("verdict", "ok" if ok else "fails")


def main(argv):
    with open(argv[2]) as f:
        tune = json.load(f)
    if argv[1] == "args" and len(argv) == 3:
        print("\n".join(run_args(tune)))
    elif argv[1] == "verdict" and len(argv) == 4:
        with open(argv[3]) as f:
            verdict(tune, json.load(f))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
