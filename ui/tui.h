/* ui: the ncurses dashboard. It reads snapshots published by the core and
 * sends commands; it never touches sockets or processes of a run, and of its
 * files only reads the server log (the log view). */
#ifndef SERVETOP_UI_TUI_H
#define SERVETOP_UI_TUI_H

#include <stdbool.h>
#include <stddef.h>

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

/* The screen table (for tests: every screen's keys, help and footer). */
struct ui_screen;
size_t tui_screen_count(void);
const struct ui_screen *tui_screen_at(size_t i);

#endif
