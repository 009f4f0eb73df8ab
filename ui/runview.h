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
#include "screen.h"
#include "recipe/recipe.h"
#include "snapshot/snapshot.h"
#include "widgets.h"

/* The y / n questions of the run view. */
enum runview_confirm {
  RUNVIEW_CONFIRM_NONE,
  RUNVIEW_CONFIRM_QUIT, /* the server is up: stop it and quit? */
  RUNVIEW_CONFIRM_BACK, /* the run goes on: stop it and go back to the recipes? */
};

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
  RUNVIEW_CONC,           /* the load generator's target concurrency */
  RUNVIEW_RUNNING,        /* requests the server decodes (its metrics or log) */
  RUNVIEW_QUEUED,         /* requests waiting in the server's queue */
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
  const struct recipe *recipe; /* borrowed; names the engine's knob flags (NULL: none) */
  char restart_note[SNAP_MESSAGE_BYTES]; /* the snapshot's, last seen (news when it changes) */
  char status[256];       /* footer status: last change or error */
  enum theme_role status_role;
  enum runview_confirm confirm; /* a y / n question is showing */
  bool editing_knob;      /* m: typing a new KV cache size (kv-cache) or KEY=VALUE */
  char knob_value[96];
  char prompt[96];        /* the m prompt's text (names the engine's flag) */
  char note[256];         /* the footer's batch-cap warning */
  /* the log pane scrolled back this many lines from the newest (0 = follows) */
  int log_back;
};

/* Keys: + / - ask for UI_CMD_SET_CONCURRENCY, m (then Enter) and c (the
 * batch cap raised to the concurrency) for UI_CMD_RESTART_WITH, l for the
 * full log (UI_CMD_OPEN_LOG), b for the
 * recipes (UI_CMD_HOME; while the run goes it asks first: y stops it), q for
 * UI_CMD_QUIT (asks first while a server is up). Mouse: the wheel over the
 * log pane scrolls it; a click on it follows again, or opens the full log. */
extern const struct ui_screen runview_screen;

/* Notes a change the program made on the run view's behalf, for the footer. */
void runview_set_status(struct runview *rv, enum theme_role role, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* recipe names the engine whose flags m and c set (NULL: generic names). */
void runview_init(struct runview *rv, const struct recipe *recipe);
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

/* Whether a server process of the run is up (so quitting must ask and stop
 * it); never for an attached server (servetop did not launch it). */
bool runview_server_up(const struct runview *rv);
/* Whether the run has ended (done, failed or interrupted). */
bool runview_finished(const struct runview *rv);
/* The concurrency is above the server's batch cap (requests queue in it):
 * true with the cap in *cap. */
bool runview_over_cap(const struct runview *rv, int *cap);
/* The engine's flag for a generic knob ("kv-cache" -> "--mem-fraction-static")
 * of the run view's recipe, or the knob's own name. Static or rv's text. */
const char *runview_knob_flag(const struct runview *rv, const char *knob);

#endif
