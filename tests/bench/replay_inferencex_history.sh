#!/usr/bin/env bash
# Replays the recipe doctor over InferenceX's history: every commit that
# touched the master configs, runners/, benchmarks/ or the workflow template
# (or every Nth of them) is exported to a scratch folder and linted as a
# checkout. Run by hand (CI has no mirror):
#
#   tests/bench/replay_inferencex_history.sh MIRROR_GIT_DIR [OUT_DIR] [STEP]
#
# MIRROR_GIT_DIR  a clone (bare is fine) of github.com/SemiAnalysisAI/InferenceX
# OUT_DIR         where results go (default /tmp/servetop-replay); one
#                 <commit>.json per state (lint --json), states.tsv, summary.txt
# STEP            replay every STEP-th state (default 1: all of them); "cases":
#                 only the known-answer cases' states
#
# SERVETOP names the binary (default build/servetop). Known-answer cases are
# read from tests/bench/replay_cases.tsv: at the broken commit the doctor must
# report the rule for the file, at the fix commit it must not. A rule written
# RULE:severity counts only findings of that severity (SGLANG_SPEC_V2:warning).
set -euo pipefail
mirror=${1:?usage: replay_inferencex_history.sh MIRROR_GIT_DIR [OUT_DIR] [STEP]}
out=${2:-/tmp/servetop-replay}
step=${3:-1}
here=$(cd "$(dirname "$0")" && pwd)
servetop=${SERVETOP:-$here/../../build/servetop}
cases=$here/replay_cases.tsv
[ -x "$servetop" ] || { echo "no servetop binary at $servetop (set SERVETOP)" >&2; exit 2; }
git -C "$mirror" rev-parse --verify -q HEAD >/dev/null || { echo "$mirror: not a git dir" >&2; exit 2; }
mkdir -p "$out/json"
scratch=$(mktemp -d "${TMPDIR:-/tmp}/replay-state.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

paths=(configs .github/configs .github/workflows/benchmark-tmpl.yml runners benchmarks
       utils/matrix_logic)
# Exports commit $1 (only what the doctor reads) into $scratch/tree.
export_state() {
  rm -rf "$scratch/tree"
  mkdir -p "$scratch/tree"
  local have=()
  for p in "${paths[@]}"; do
    if git -C "$mirror" cat-file -e "$1:$p" 2>/dev/null; then have+=("$p"); fi
  done
  [ ${#have[@]} -gt 0 ] || return 1
  git -C "$mirror" archive "$1" -- "${have[@]}" | tar -x -C "$scratch/tree"
}

# Lints commit $1 once (cached in $out/json/$1.json); prints its TSV row.
lint_state() {
  local c=$1 j="$out/json/$1.json" rc=0
  if [ ! -s "$j" ]; then
    export_state "$c" || return 1
    "$servetop" lint --inferencex "$scratch/tree" --json >"$j.tmp" 2>"$out/json/$c.err" || rc=$?
    [ "$rc" -le 1 ] || { echo "$c: servetop lint exited $rc" >&2; cat "$out/json/$c.err" >&2; }
    # paths inside the scratch tree are reported relative to it
    sed "s#$scratch/tree/##g" "$j.tmp" >"$j" && rm -f "$j.tmp"
  fi
}

mapfile -t states < <(git -C "$mirror" log --first-parent --reverse --format=%H -- \
  .github/configs configs runners benchmarks .github/workflows/benchmark-tmpl.yml)
printf 'commit\tdate\tfindings\terrors\tload_errors\n' >"$out/states.tsv"
n=0
[ "$step" != cases ] || states=()
for ((i = 0; i < ${#states[@]}; i += ${step/cases/1})); do
  c=${states[$i]}
  # only states that have master configs are checkouts
  if ! git -C "$mirror" ls-tree -r --name-only "$c" -- configs .github/configs |
       grep -q -- '-master\.yaml$'; then continue; fi
  lint_state "$c" || continue
  j="$out/json/$c.json"
  printf '%s\t%s\t%s\t%s\t%s\n' "${c:0:12}" "$(git -C "$mirror" log -1 --format=%ad --date=short "$c")" \
    "$(jq length "$j")" "$(jq '[.[] | select(.severity == "error")] | length' "$j")" \
    "$(jq '[.[] | select(.rule == "SCHEMA" or .rule == "SCRIPT_SYNTAX")] | length' "$j")" \
    >>"$out/states.tsv"
  n=$((n + 1))
done

# Transitions: a finding of one state that the next replayed state no longer
# has, where the commit between them changed a file the finding names (its
# file or a related one). Those are the history's own fixes of what the doctor
# reports: the raw material of the known-answer cases below.
key() { # json -> "rule<TAB>recipe<TAB>file" per finding, with its files
  jq -r '.[] | [.rule, .recipe, .file, ([.file] + [(.related // [])[] | .file] | join(" "))] | @tsv' "$1" | sort -u
}
: >"$out/transitions.tsv"
prev=
for c in $(cut -f1 "$out/states.tsv" | tail -n +2); do
  cur=$(ls "$out/json/$c"*.json | head -1)
  if [ -n "$prev" ]; then
    full=$(basename "$cur" .json)
    changed=$(git -C "$mirror" diff --no-renames --name-only "$(basename "$prev" .json)" "$full")
    join -t $'\t' -v1 <(key "$prev" | awk -F'\t' '{ print $1 "|" $2 "|" $3 "\t" $4 }' | sort) \
                      <(key "$cur" | awk -F'\t' '{ print $1 "|" $2 "|" $3 "\t" $4 }' | sort) |
    while IFS=$'\t' read -r k files; do
      for f in $files; do
        if grep -qxF "$f" <<<"$changed"; then
          printf '%s\t%s\t%s\t%s\n' "${full:0:12}" "$k" "$f" \
            "$(git -C "$mirror" log -1 --format=%s "$full" | cut -c1-100)" >>"$out/transitions.tsv"
          break
        fi
      done
    done
  fi
  prev=$cur
done

# Known-answer cases: broken<TAB>fixed<TAB>rule<TAB>path substring<TAB>note
caught=0 missed=0 stale=0
: >"$out/cases.txt"
if [ -f "$cases" ]; then
  while IFS=$'\t' read -r broken fixed rule needle note; do
    [ -n "$broken" ] && [ "${broken:0:1}" != "#" ] || continue
    for c in "$broken" "$fixed"; do
      full=$(git -C "$mirror" rev-parse "$c^{commit}")
      lint_state "$full" || true
    done
    hit() {
      local j="$out/json/$(git -C "$mirror" rev-parse "$1^{commit}").json"
      local r=${rule%%:*} sev=
      [[ $rule != *:* ]] || sev=${rule#*:}
      jq -e --arg r "$r" --arg s "$sev" --arg n "$needle" \
        'any(.[]; .rule == $r and ($s == "" or .severity == $s) and
             ((.file | contains($n)) or (.message | contains($n)) or
              ((.related // []) | any(.file | contains($n)))))' "$j" >/dev/null
    }
    if hit "$broken" && ! hit "$fixed"; then
      caught=$((caught + 1)); verdict=caught
    elif hit "$broken"; then
      stale=$((stale + 1)); verdict="still reported after the fix"
    else
      missed=$((missed + 1)); verdict=missed
    fi
    printf '%s\t%s..%s\t%s\t%s\n' "$verdict" "$(git -C "$mirror" rev-parse --short=9 "$broken")" \
      "$(git -C "$mirror" rev-parse --short=9 "$fixed")" "$rule" "$note" >>"$out/cases.txt"
  done <"$cases"
fi

{
  echo "states replayed: $n (step $step) from $(head -2 "$out/states.tsv" | tail -1 | cut -f2) to $(tail -1 "$out/states.tsv" | cut -f2)"
  echo "states with load errors: $(awk -F'\t' 'NR > 1 && $5 > 0' "$out/states.tsv" | wc -l)"
  echo "load errors in all: $(awk -F'\t' 'NR > 1 { s += $5 } END { print s + 0 }' "$out/states.tsv")"
  echo "findings per rule (summed over states; distinct rule+recipe+file in brackets):"
  cut -f1 "$out/states.tsv" | tail -n +2 | while read -r c; do
    f=$(ls "$out/json/$c"*.json | head -1)
    jq -r '.[] | [.rule, .recipe, .file] | @tsv' "$f"
  done | awk -F'\t' '{ n[$1]++; k = $1 FS $2 FS $3; if (!(k in seen)) { seen[k] = 1; d[$1]++ } }
                     END { for (r in n) printf "  %-32s %6d  [%d]\n", r, n[r], d[r] }' | sort
  echo "findings resolved by a later commit that changed a file they name (per rule):"
  cut -f2 "$out/transitions.tsv" | cut -d'|' -f1 | sort | uniq -c | sort -rn | sed 's/^/  /'
  echo "known-answer cases: $caught caught, $missed missed, $stale still reported after the fix"
  cat "$out/cases.txt"
} | tee "$out/summary.txt"
