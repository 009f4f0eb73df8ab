#!/bin/bash
# What a newcomer trips on (issue 23), on the dashboard at 80x24: the problems
# view lists every error before the first warning, an unterminated quote at the
# line it was left open.
set -euo pipefail

: "${TEST_DATA_DIR:?tests/data}"
UI_NAME=newcomer
source "$(dirname "$0")/../lib/tmux.sh"

RESULTS=$(mktemp -d)
ui_cleanup_more() { rm -rf "$RESULTS"; }

# ---------------------------------------------------------------- problems first (23.6)
ui_start 80 24 XDG_DATA_HOME="$RESULTS" "$SERVETOP" --inferencex "$TEST_DATA_DIR/recipe/ix-bad"
wait_for "Recipes"
tm send-keys -t "$UI_SESSION" p
wait_for "19 errors, 2 warnings"
# the rows' severities top to bottom, then after End: no error below a warning
sevs() { screen | sed -n 's/^│ \(error\|warning\|note\) .*/\1/p'; }
first=$(sevs | head -1)
[ "$first" = error ] || fail "the first row is '$first', not an error"
screen | grep -q 'kimik3_fp8_h200.sh:3 ' || fail "the unterminated quote is not at line 3"
tm send-keys -t "$UI_SESSION" End
wait_for "3-21/21"
order=$(sevs | uniq | tr '\n' ' ')
[ "$order" = "error warning " ] || fail "rows after End go '$order', not errors then warnings"
tm send-keys -t "$UI_SESSION" q q
wait_for "EXIT=0"
echo "ok: problems first"
