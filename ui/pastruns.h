/* ui past runs: the picker that loads a past run folder (listed by the run
 * module, run_list_past) into a column of the A/B view. The picker's keys,
 * mouse and drawing are pure, so they are unit-tested without ncurses. */
#ifndef SERVETOP_UI_PASTRUNS_H
#define SERVETOP_UI_PASTRUNS_H

#include <stdbool.h>
#include <stddef.h>

#include "layout.h"
#include "run/run.h"
#include "screen.h"
#include "widgets.h"

struct st_err;

/* "2026-12-01 04:42" (UTC) or "-" when unknown. */
const char *pastruns_fmt_date(double unix_s, char *buf, size_t n);

/* ---------------------------------------------------------------- picker */
struct pastpicker {
  bool open;
  struct run_summary_list list;  /* owned */
  char dir[512];              /* where it looked */
  char error[256];            /* scan error, shown instead of the list */
  size_t selected;
  size_t top;                 /* first row shown */
  int column;                 /* 0 = off column, 1 = MTP column */
};

/* Opens the picker on dir: scans it, selects the newest run, keeps column. */
void pastpicker_open(struct pastpicker *p, const char *dir, int column);
void pastpicker_close(struct pastpicker *p);
const struct run_summary *pastpicker_selected(const struct pastpicker *p);

/* Where the picker box goes on a cols x rows screen (centred). */
struct ui_rect pastpicker_box(int cols, int rows);

void pastpicker_render(const struct pastpicker *p, struct ui_grid *g, int cols, int rows,
                       const struct ui_glyphs *gl);

/* Drawn over the A/B view. Keys: Enter (or a click on the selected row)
 * asks for UI_CMD_LOAD_PAST of the selected run into the chosen column; Tab,
 * Left / Right, o / m choose the column; Esc, q or a click outside close it. */
extern const struct ui_screen pastpicker_screen;

#endif
