#!/bin/bash
# `cmake --install` of this build into a temporary prefix: the binary, the
# bundled recipes, the themes and the docs land where the installed binary
# looks for them (relative to itself), and the installed dashboard starts from
# another directory with a theme from its own share/ folder. The default theme
# needs no file at all: it is built into the binary.
set -euo pipefail

command -v cmake >/dev/null || { echo "SKIP: no cmake"; exit 0; }
UI_NAME=install
source "$(dirname "$0")/../lib/tmux.sh"

BUILD=$(dirname "$(readlink -f "$SERVETOP")")
[ -f "$BUILD/cmake_install.cmake" ] || { echo "SKIP: $BUILD is not a CMake build folder"; exit 0; }
PREFIX=$(mktemp -d)
ELSEWHERE=$(mktemp -d)
ui_cleanup_more() { rm -rf "$PREFIX" "$ELSEWHERE"; }
unset SERVETOP_THEMES # only the binary's own places

cmake --install "$BUILD" --prefix "$PREFIX" >/dev/null || fail "cmake --install failed"
BIN=$PREFIX/bin/servetop
for f in bin/servetop share/servetop/themes/mono.theme share/servetop/themes/light.theme \
  share/doc/servetop/README.md share/doc/servetop/dashboard.md; do
  [ -e "$PREFIX/$f" ] || fail "not installed: $f"
done
ls "$PREFIX"/share/servetop/configs/*.yaml >/dev/null 2>&1 || fail "no bundled recipes installed"

# the installed themes come first (before the source tree this was built from)
cd "$ELSEWHERE"
ui_start 300 10 "$BIN" --theme no-such-theme
wait_for "EXIT=2"
tm capture-pane -J -p -t "$UI_SESSION" | grep -qF "no no-such-theme.theme in $PREFIX/bin/../share/servetop/themes, " ||
  fail "the installed themes are not searched first"

# the installed dashboard, started elsewhere: its recipes and a theme of its own
ui_start 80 24 "$BIN" --theme mono
wait_for "Recipes "
wait_for "Enter run"
tm send-keys -t "$UI_SESSION" q
wait_for "EXIT=0"

# no theme files at all: the default theme is the built-in one
rm -f "$PREFIX"/share/servetop/themes/*.theme
ui_start 80 24 "$BIN" --theme default
wait_for "Recipes "
tm send-keys -t "$UI_SESSION" q
wait_for "EXIT=0"
echo "PASS"
