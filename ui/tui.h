/* ui: the ncurses dashboard. It reads snapshots published by the core and
 * sends commands; it never touches sockets, processes or files of a run. */
#ifndef SERVETOP_UI_TUI_H
#define SERVETOP_UI_TUI_H

#include <stdbool.h>

/* Options of the dashboard, filled by the program from its command line. */
struct tui_options {
  const char *theme;           /* theme name or path; NULL = default */
  const char *configs_dir;     /* servetop recipes; NULL = bundled */
  const char *inferencex_dir;  /* an InferenceX checkout, or NULL */
  bool ascii;                  /* ASCII boxes and charts even in a UTF-8 locale */
  const char *results_dir;     /* run folders: where runs go and L looks; NULL = XDG data dir/runs */
};

/* Runs the dashboard until the user quits; returns the exit status (130
 * after SIGINT/SIGTERM/SIGHUP). Any server it started is stopped first. Errors
 * found before the screen starts (no such theme, unreadable recipes) are
 * printed to stderr with a non-zero status. */
int tui_run(const struct tui_options *opts);

#endif
