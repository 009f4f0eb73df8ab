/* ui layout: where each part of a screen goes, as a pure function of the
 * terminal size and the view. Screens draw into the rectangles; tests check
 * that they never overlap, cover the screen and keep their minimum sizes
 * from 80x24 up (the shape of nvtop's interface layout tests). */
#ifndef SERVETOP_UI_LAYOUT_H
#define SERVETOP_UI_LAYOUT_H

#include <stdbool.h>

#include "widgets.h"

#define UI_MIN_COLS 80
#define UI_MIN_ROWS 24

enum ui_view {
  UI_VIEW_BROWSER, /* recipe list + detail pane */
  UI_VIEW_RUN,     /* one run: charts, latency, server, GPUs, log */
  UI_VIEW_AB,      /* two arms side by side + throughput/interactivity curve */
  UI_VIEW_PAGE,    /* one body between header and footer: the log view, the problems list */
  UI_VIEW_COUNT
};

enum ui_slot {
  UI_SLOT_HEADER,      /* top line: program, view, server state */
  UI_SLOT_FOOTER,      /* bottom line: keys, filter prompt, messages */
  UI_SLOT_LIST,        /* browser: grouped recipes */
  UI_SLOT_DETAIL,      /* browser: the selected recipe */
  UI_SLOT_PROGRESS,    /* run: one line of request progress and ETA */
  UI_SLOT_THROUGHPUT,  /* run: tok/s and req/s chart */
  UI_SLOT_ACCEPT,      /* run: acceptance chart */
  UI_SLOT_LATENCY,     /* run: TTFT/TPOT/ITL/E2EL table */
  UI_SLOT_SERVER_LOAD, /* run: KV use, running/queued */
  UI_SLOT_GPU,         /* run: memory bars and power per GPU */
  UI_SLOT_LOG,         /* run: server log tail */
  UI_SLOT_ARM_A,       /* A/B: first arm (off) */
  UI_SLOT_RATIO,       /* A/B: ratio column */
  UI_SLOT_ARM_B,       /* A/B: second arm (MTP) */
  UI_SLOT_CURVE,       /* A/B: throughput per GPU vs interactivity */
  UI_SLOT_BODY,        /* page: everything between header and footer */
  UI_SLOT_COUNT
};

struct ui_layout {
  enum ui_view view;
  int cols, rows;
  /* Below UI_MIN_COLS x UI_MIN_ROWS only the header is laid out (the whole
   * screen), where the screen says the terminal is too small. */
  bool too_small;
  struct ui_rect slot[UI_SLOT_COUNT];  /* w == 0 or h == 0: not in this view */
};

void ui_layout_compute(int cols, int rows, enum ui_view view, struct ui_layout *out);
/* "list", "throughput", ... for messages and tests. */
const char *ui_slot_name(enum ui_slot slot);
bool ui_rect_visible(struct ui_rect r);
bool ui_rect_contains(struct ui_rect r, int x, int y);
bool ui_rects_overlap(struct ui_rect a, struct ui_rect b);
/* Starts a frame of any view: clears the grid and, when the terminal is below
 * the minimum size, writes the "too small" message. Returns true when the view
 * has room to draw. */
bool ui_frame_begin(struct ui_grid *g, const struct ui_layout *l, const struct ui_glyphs *gl);

#endif
