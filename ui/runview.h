/* ui run view: one run drawn from its snapshots. The view keeps the time
 * series for the charts (snapshots carry current values only, as nvtop's
 * collectors do); drawing is a pure function of the view and a layout, so it
 * is tested on fixed snapshots without ncurses or a server. */
#ifndef SERVETOP_UI_RUNVIEW_H
#define SERVETOP_UI_RUNVIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "layout.h"
#include "snapshot/snapshot.h"
#include "widgets.h"

/* Samples kept per series: one per RUNVIEW_SAMPLE_S of run time; enough for
 * a 320-column chart in braille (2 samples per cell). */
#define RUNVIEW_HISTORY 1024
#define RUNVIEW_SAMPLE_S 1.0

enum runview_series {
  RUNVIEW_OUTPUT_TOK_S,
  RUNVIEW_TOTAL_TOK_S,
  RUNVIEW_REQ_S,
  RUNVIEW_ACCEPT_LENGTH,
  RUNVIEW_ACCEPT_RATE,
  RUNVIEW_SERIES_COUNT
};

struct runview {
  struct snap_run snap;   /* the latest snapshot */
  bool have_snap;
  /* ring buffers, oldest first after runview_series_copy() */
  double ring[RUNVIEW_SERIES_COUNT][RUNVIEW_HISTORY];
  size_t n_samples;       /* samples pushed in total */
  double next_sample_s;   /* run time of the next sample */
  double run_time_s;      /* monotonic run time: point elapsed times added up */
  int last_point_index;
  double last_point_elapsed_s;
  /* concurrency changes and point starts, as sample numbers */
  size_t marks[SNAP_MAX_CONC_MARKS * 2];
  size_t n_marks;
  double conc_mark_last_at_s; /* newest concurrency change already marked */
  /* knob edits (m): the KV capacity before the restart, for "new (was old)" */
  int64_t max_total_num_tokens_before;
  char status[256];       /* footer line: last change, prompt or error */
  enum theme_role status_role;
};

void runview_init(struct runview *rv);
/* Takes a new snapshot: keeps it for drawing and adds a chart sample every
 * RUNVIEW_SAMPLE_S of measured time. */
void runview_push(struct runview *rv, const struct snap_run *snap);
/* The last n samples of a series, oldest first, into out (n <= RUNVIEW_HISTORY);
 * returns how many were written. Unknown samples are NaN. */
size_t runview_series_copy(const struct runview *rv, enum runview_series s, double *out, size_t n);

/* Draws the run view (header, progress, charts, latency table, server load,
 * GPUs, log, footer). */
void runview_render(struct runview *rv, struct ui_grid *g, const struct ui_layout *l,
                    const struct ui_glyphs *gl);

/* Whether a server process is up (so quitting must ask and stop it). */
bool runview_server_up(const struct runview *rv);
/* Whether the run has ended (done, failed or interrupted). */
bool runview_finished(const struct runview *rv);

#endif
