# Shared scaffolding of the dashboard tests in tests/ui/ (sourced, never run
# alone): the dashboard runs in a detached tmux session on a tmux server of
# the test's own, keys go in with send-keys and the screen comes back with
# capture-pane.
#   UI_NAME=browser; source "$(dirname "$0")/../lib/tmux.sh"
#   ui_start 80 24 "$SERVETOP" --configs DIR   # the pane ends with EXIT=<status>
#   wait_for "Recipes 4"; tm send-keys -t "$UI_SESSION" q; wait_for "EXIT=0"
# A test that adds cleanup of its own defines ui_cleanup_more (called by the
# EXIT trap set here, after the tmux server is gone).
: "${UI_NAME:?set UI_NAME before sourcing tests/lib/tmux.sh}"
: "${SERVETOP:?path of the servetop binary}"
command -v tmux >/dev/null || { echo "SKIP: no tmux"; exit 0; }

UI_SESSION=$UI_NAME
UI_RUN=0 # each start gets its own tmux server: a dying one cannot be reused
tm() { tmux -L "servetop-ui-$UI_NAME-$$-$UI_RUN" "$@"; }

# Ends this test's tmux server (tmux leaves its socket file behind: removed).
ui_stop_tmux() {
  tm kill-server 2>/dev/null || true
  rm -f "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/servetop-ui-$UI_NAME-$$-$UI_RUN"
}

# A server the test saw the dashboard start: the dashboard must have stopped
# it; it is never left behind either way.
server_pid=""

ui_cleanup() {
  ui_stop_tmux
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" 2>/dev/null || true
  fi
  if declare -F ui_cleanup_more >/dev/null; then ui_cleanup_more; fi
}
trap ui_cleanup EXIT INT TERM

screen() { tm capture-pane -p -t "$UI_SESSION"; }

fail() {
  echo "FAIL: $*" >&2
  echo "---- screen ----" >&2
  screen >&2 || true
  exit 1
}

# Waits (up to SECONDS, default 10) until the screen shows the text.
wait_for() { # wait_for TEXT [SECONDS]
  local tenths=$((${2:-10} * 10))
  for _ in $(seq "$tenths"); do
    if screen | grep -qF -- "$1"; then return 0; fi
    sleep 0.1
  done
  fail "screen never showed '$1'"
}

# Waits (up to 5 s) until the text is gone from the screen.
wait_gone() {
  for _ in $(seq 50); do
    if ! screen | grep -qF -- "$1"; then return 0; fi
    sleep 0.1
  done
  fail "screen still shows '$1'"
}

# Starts a command (in a UTF-8 locale; it may begin with VAR=value words) in a
# COLS x ROWS pane of a fresh tmux server; the pane then reports EXIT=<status>
# and stays a minute for the test to read it.
ui_start() { # ui_start COLS ROWS COMMAND...
  local cols=$1 rows=$2
  shift 2
  ui_stop_tmux
  UI_RUN=$((UI_RUN + 1))
  tm new-session -d -s "$UI_SESSION" -x "$cols" -y "$rows" \
    "env LANG=C.UTF-8 LC_ALL=C.UTF-8 $* ; echo \"EXIT=\$?\"; sleep 60"
}

# Fails when a byte outside printable ASCII is on screen (--ascii mode).
ascii_only() { # ascii_only WHAT
  if screen | LC_ALL=C grep -q '[^ -~]'; then fail "a byte outside ASCII on screen ($1)"; fi
}

# An xterm mouse event (X10 encoding, as ncurses reads it under TERM=screen):
# button code, then 1-based column and row, each + 32.
mouse() { # mouse BUTTON COL0 ROW0
  local b=$(($1 + 32)) x=$(($2 + 33)) y=$(($3 + 33))
  tm send-keys -t "$UI_SESSION" -l "$(printf '\033[M%b%b%b' "\\$(printf %03o $b)" \
    "\\$(printf %03o $x)" "\\$(printf %03o $y)")"
}
