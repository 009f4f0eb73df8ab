/* ui: the ncurses dashboard. It reads snapshots published by the core and
 * sends commands; it never touches sockets, processes or files of a run. */
#ifndef SERVETOP_UI_TUI_H
#define SERVETOP_UI_TUI_H

/* Options of the dashboard, filled by the program from its command line. */
struct tui_options {
  const char *theme;           /* theme name or path; NULL = default */
  const char *configs_dir;     /* servetop recipes; NULL = bundled */
  const char *inferencex_dir;  /* an InferenceX checkout, or NULL */
};

/* Runs the dashboard until the user quits; returns the exit status. */
int tui_run(const struct tui_options *opts);

#endif
