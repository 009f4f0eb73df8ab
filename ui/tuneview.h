/* ui tune view: `servetop tune` live, on one screen (what t in the browser
 * starts through the Tune form). Throughput per GPU (up) against tok/s per
 * user (across), the way InferenceX plots its results: every measured point
 * as its configuration's letter (A, B, ...; lower case and dim where the SLO
 * fails), the SLO's tok/s-per-user floor as a vertical line, the frontier of
 * the points that hold, the best configuration so far in reverse video; a
 * table of the configurations visited (goodput at their best concurrency
 * with its 95% interval, status); the search's progress and ETA against the
 * budget. p switches the percentile the latencies are shown and judged at
 * (p99 is what the search judges); q/Esc stops the search (asks first) and
 * keeps what was measured.
 *
 * Pure: it draws a tune_result and a run_tune_status it was handed
 * (tuneview_update); tui.c polls the driver (run_tune_poll) and hands them
 * over, so the screen is tested on a fabricated result. */
#ifndef SERVETOP_UI_TUNEVIEW_H
#define SERVETOP_UI_TUNEVIEW_H

#include <stdbool.h>
#include <stddef.h>

#include "run/run.h"
#include "screen.h"
#include "tune/tune.h"

struct tuneview {
  char recipe[160];                 /* the recipe searched */
  const struct tune_space *space;   /* borrowed (the driver's): describes configurations */
  struct tune_slo slo;
  struct tune_result res;           /* owned: the search so far */
  struct run_tune_status st;
  bool have_status;
  enum tune_stat stat;              /* the percentile shown and judged (p: cycles) */
  size_t sel, top;                  /* the table's selected row and first shown */
  bool confirm_stop;                /* "stop the search? y / n" */
  bool stop_asked;                  /* y was pressed: tui.c stops the driver */
  char status[256];
  enum theme_role status_role;
};

/* Opens the view on a search (space borrowed until tuneview_fini). */
void tuneview_init(struct tuneview *tv, const char *recipe, const struct tune_space *space,
                   const struct tune_slo *slo);
void tuneview_fini(struct tuneview *tv);
/* The driver's progress and (res non-NULL) its result so far, taken over (res is left
 * empty). */
void tuneview_update(struct tuneview *tv, const struct run_tune_status *st,
                     struct tune_result *res);

/* The letter of configuration i ('A'.., lower case where a point fails; '+' / '.' past Z). */
char tuneview_glyph(size_t config, bool holds);
/* The best configuration so far (the result's winner once the search is over), -1: none. */
long tuneview_best(const struct tuneview *tv);
/* A probe's figures at the percentile shown: its own (p99, the SLO's) or the driver's
 * per-percentile ones; *holds as judged on them. False when the driver kept none for it. */
bool tuneview_probe_at(const struct tuneview *tv, size_t probe, struct tune_point *out,
                       bool *holds);

/* Where the parts go inside the body (between header and footer) of a
 * cols x rows screen: the progress lines, the chart box, the table box. */
struct tuneview_layout {
  struct ui_rect progress, chart, table;
};
void tuneview_layout(struct ui_rect body, size_t n_configs, struct tuneview_layout *out);

extern const struct ui_screen tuneview_screen;

#endif
