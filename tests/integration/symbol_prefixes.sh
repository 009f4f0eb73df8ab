#!/usr/bin/env bash
# Every symbol a module's library exports carries that module's prefix, or one of the
# sub-prefixes its row below names (issue 18.4; the table is docs/ARCHITECTURE.md's
# "Names"). A new exported function without it fails here, naming it.
source "$(dirname "$0")/../lib/harness.sh"
skip() { echo "skip: $*"; exit 77; }
command -v nm >/dev/null || skip "nm (binutils) is not installed"
libs=$(dirname "$SERVETOP")/src
[ -d "$libs" ] || skip "no module libraries beside $SERVETOP"
declare -A allowed=(
  [util]="x err_ log_ file_ parse_ str_ util_ sbuf_ path_ clock_ opt_ json_ thread_"
  [metrics]="metrics_ prom_ stats_ live_ fig_ ci_"
  [http]="http_"
  [launcher]="launch_ launcher_"
  [engine]="eng_ sig_"
  [recipe]="recipe_ sh_ ix_ ytree_"
  [sim]="sim_"
  [snapshot]="snap_"
  [loadgen]="lg_"
  [results]="results_"
  [measure]="measure_"
  [telemetry]="tm_"
  [run]="run_"
  [tune]="tune_"
  [report]="report_"
)
seen=0
for lib in "$libs"/*/libst_*.a; do
  mod=$(basename "$lib" .a); mod=${mod#libst_}
  [ -n "${allowed[$mod]:-}" ] || fail "module $mod has no row in this test's table (and docs/ARCHITECTURE.md's)"
  while read -r sym; do
    ok=
    for p in ${allowed[$mod]}; do
      case "$sym" in "$p"*) ok=1; break ;; esac
    done
    [ -n "$ok" ] || fail "$mod exports '$sym' without its prefix (${allowed[$mod]})"
    seen=$((seen + 1))
  done < <(nm -g --defined-only "$lib" | awk '$2 ~ /^[TDBRCV]$/ {print $3}' |
           grep -v -e '^__' -e '[.]' | sort -u) # not the compiler's and sanitizers' own (__odr_asan.x)
done
[ "$seen" -gt 300 ] || fail "only $seen exported symbols read: the libraries were not found"
# ... and no two source files share a name (issue 18.4): a name says which file it is
if [ -d "${PROJECT_DIR:-}/src" ]; then
  twins=$(find "$PROJECT_DIR/src" "$PROJECT_DIR/ui" -name '*.[ch]' -printf '%f\n' | sort | uniq -d)
  [ -z "$twins" ] || fail "source files that share a name: $(echo $twins)"
  [ -z "$twins" ] && ok "no two source files in src/ and ui/ share a name"
fi
[ "$FAILS" -eq 0 ] && ok "$seen exported symbols, each with its module's prefix"
finish "symbol prefixes"
