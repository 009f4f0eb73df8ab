/* ui: the ncurses dashboard. It reads snapshots published by the core and
 * sends commands; it never touches sockets or processes of a run, and of its
 * files only reads the server log (the log view). */
#ifndef SERVETOP_UI_TUI_H
#define SERVETOP_UI_TUI_H

#include <stdbool.h>
#include <stddef.h>

#include "run/run.h"

/* A run the command line asks for (`servetop run` / `servetop attach` in a
 * terminal): the dashboard opens on its run view (the A/B view with a twin)
 * instead of the recipes; `b` still goes back to them. */
struct tui_launch {
  const struct recipe *recipe;      /* borrowed (outlives tui_run); NULL with attach_url */
  const struct recipe *twin;        /* the other arm of an A/B run; NULL: one run */
  const struct eng_ops *engine[2];  /* what each arm runs on (the command line picked) */
  const char *engine_text[2];       /* one line each for the footer ("engine sim: ...") */
  struct run_config config;         /* every setting but recipe and engine (borrowed strings);
                                       config.attach_url: the server to attach to */
  int repeats;                      /* with a twin: each arm this many times, interleaved
                                       (A B A B ...: run --ab --repeats N); <= 1: once */
  /* out: the outcome of each run of this launch that ended (arm order) */
  struct run_outcome outcomes[2];
  size_t n_outcomes;
  /* out (when not NULL): the run folders of the repeats both arms finished with a result,
   * repeat_dirs[arm][k] (run_session_repeat_dirs), n_repeat_dirs of them */
  char (*repeat_dirs)[RUN_SESSION_MAX_REPEATS][1024];
  int n_repeat_dirs;
};

/* Options of the dashboard, filled by the program from its command line. */
struct tui_options {
  const char *theme;           /* theme name or path; NULL = default */
  const char *configs_dir;     /* servetop recipes; NULL = bundled */
  const char *inferencex_dir;  /* an InferenceX checkout, or NULL */
  bool ascii;                  /* ASCII boxes and charts even in a UTF-8 locale */
  const char *results_dir;     /* run folders: where runs go and L looks; NULL = XDG data dir/runs */
  struct tui_launch *launch;   /* open on this run; NULL: on the recipes */
};

/* Runs the dashboard until the user quits; returns the exit status (130
 * after SIGINT/SIGTERM/SIGHUP). Any server it started is stopped first. Errors
 * found before the screen starts (no such theme, unreadable recipes) are
 * printed to stderr with status 2. */
int tui_run(const struct tui_options *opts);

/* The screen table (for tests: every screen's keys, help and footer). */
struct ui_screen;
size_t tui_screen_count(void);
const struct ui_screen *tui_screen_at(size_t i);

#endif
