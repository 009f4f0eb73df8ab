#!/bin/bash
# `cmake --install` of this build into a temporary prefix: the binary, the
# bundled recipes, the themes and the docs land where the installed binary
# looks for them (relative to itself), and the installed dashboard starts from
# another directory with a theme from its own share/ folder. The default theme
# needs no file at all: it is built into the binary.
set -euo pipefail

: "${SERVETOP:?path of the servetop binary}"
command -v cmake >/dev/null || { echo "SKIP: no cmake"; exit 0; }
command -v tmux >/dev/null || { echo "SKIP: no tmux"; exit 0; }

BUILD=$(dirname "$(readlink -f "$SERVETOP")")
[ -f "$BUILD/cmake_install.cmake" ] || { echo "SKIP: $BUILD is not a CMake build folder"; exit 0; }
PREFIX=$(mktemp -d)
ELSEWHERE=$(mktemp -d)
RUN=0 # each start gets its own tmux server: a dying one cannot be reused
tm() { tmux -L "servetop-ui-install-$$-$RUN" "$@"; }
stop_tmux() {
  tm kill-server 2>/dev/null || true
  rm -f "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/servetop-ui-install-$$-$RUN" # tmux leaves its socket file
}
cleanup() {
  stop_tmux
  rm -rf "$PREFIX" "$ELSEWHERE"
}
trap cleanup EXIT INT TERM
fail() {
  echo "FAIL: $*" >&2
  tm capture-pane -p -t inst >&2 2>/dev/null || true
  exit 1
}
wait_for() {
  for _ in $(seq 50); do
    if tm capture-pane -p -t inst | grep -qF -- "$1"; then return 0; fi
    sleep 0.1
  done
  fail "screen never showed '$1'"
}

cmake --install "$BUILD" --prefix "$PREFIX" >/dev/null || fail "cmake --install failed"
BIN=$PREFIX/bin/servetop
for f in bin/servetop share/servetop/themes/mono.theme share/servetop/themes/light.theme \
  share/doc/servetop/README.md share/doc/servetop/dashboard.md; do
  [ -e "$PREFIX/$f" ] || fail "not installed: $f"
done
ls "$PREFIX"/share/servetop/configs/*.yaml >/dev/null 2>&1 || fail "no bundled recipes installed"

# the installed themes come first (before the source tree this was built from)
tm new-session -d -s inst -x 300 -y 10 \
  "cd $ELSEWHERE && env -u SERVETOP_THEMES $BIN --theme no-such-theme; echo \"EXIT=\$?\"; sleep 30"
wait_for "EXIT=2"
tm capture-pane -J -p -t inst | grep -qF "no no-such-theme.theme in $PREFIX/bin/../share/servetop/themes, " ||
  fail "the installed themes are not searched first"
stop_tmux
RUN=$((RUN + 1))

# the installed dashboard, started elsewhere: its recipes and a theme of its own
tm new-session -d -s inst -x 80 -y 24 \
  "cd $ELSEWHERE && env -u SERVETOP_THEMES LANG=C.UTF-8 LC_ALL=C.UTF-8 $BIN --theme mono; echo \"EXIT=\$?\"; sleep 30"
wait_for "Recipes "
wait_for "Enter run"
tm send-keys -t inst q
wait_for "EXIT=0"
stop_tmux
RUN=$((RUN + 1))

# no theme files at all: the default theme is the built-in one
rm -f "$PREFIX"/share/servetop/themes/*.theme
tm new-session -d -s inst -x 80 -y 24 \
  "cd $ELSEWHERE && env -u SERVETOP_THEMES LANG=C.UTF-8 LC_ALL=C.UTF-8 $BIN --theme default; echo \"EXIT=\$?\"; sleep 30"
wait_for "Recipes "
tm send-keys -t inst q
wait_for "EXIT=0"
echo "PASS"
