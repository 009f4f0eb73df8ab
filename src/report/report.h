/* report: the charts of a run folder, drawn with cairo as PNG and SVG (docs/charts.md).
 * Throughput per GPU (y) against interactivity, tok/s per user (x), the way InferenceX plots
 * its results:
 *   - the tune chart: every measured point of a search, a colour and marker per server
 *     configuration, 95% intervals as error bars, the SLO's minimum tok/s per user as a
 *     vertical line (points whose SLO does not hold hollow), the frontier of holding points
 *     as a line, the best point marked, each point labelled with its concurrency;
 *   - the sweep chart: one point per concurrency of a run's sweep, labelled with it, and the
 *     table of points as markdown (sweep.md).
 * Both are 1200 x 800 (pixels in the PNG, points in the SVG). The SVG's text is drawn as
 * glyph outlines (cairo's SVG surface); its <title> and <desc> carry the words (title,
 * axes, legend, every point) for search and screen readers. Files are written atomically;
 * an error names the path. Depends on util, metrics and tune only: what reads a run folder
 * (run/) calls it. */
#ifndef SERVETOP_REPORT_REPORT_H
#define SERVETOP_REPORT_REPORT_H

#include <stdbool.h>
#include <stddef.h>

#include "metrics/metrics.h"
#include "tune/tune.h"
#include "util/util.h"

enum { REPORT_CHART_W = 1200, REPORT_CHART_H = 800 };

/* ---------------------------------------------------------------- tune
 * dir/tune.png and dir/tune.svg from a search's result (so far, or final). title: the
 * recipe (NULL: "servetop tune"); simulated: the figures come from servetop sim (the title
 * says SIMULATED); n_gpus > 0: the throughput is per GPU (the axis says so), else in all.
 * slo may be NULL (no SLO line). Points whose throughput or tok/s per user is unknown (NaN)
 * are not drawn (the chart says how many). Returns 0, or -1 with err naming the file. */
int report_tune_charts(const char *dir, const char *title, bool simulated,
                       const struct tune_space *space, const struct tune_slo *slo,
                       const struct tune_result *res, int n_gpus, struct st_err *err);

/* ---------------------------------------------------------------- sweep */
/* One point of a sweep: a result's figures (derived with the GPU count: fig_set_derive). */
struct report_sweep_point {
  int conc;
  bool interrupted;   /* its load was cut short (a stop): marked "*" */
  struct fig_set figs;
};

struct report_sweep {
  const char *title;     /* the recipe; NULL: "servetop run --sweep" */
  const char *subtitle;  /* model, engine, lengths ("" or NULL: none) */
  bool simulated;        /* servetop sim: SIMULATED in the title and the table */
  int n_gpus;            /* > 0: the chart's throughput per GPU, else in all */
  const struct report_sweep_point *points; /* by concurrency */
  size_t n_points;
};

/* The table's columns: conc, req/s, output tok/s, output tok/s/GPU, tok/s/user, TTFT p50,
 * TTFT p99, TPOT p50, TPOT p99 (ms). */
enum { REPORT_SWEEP_COLS = 9 };
const char *report_sweep_col_title(size_t col);
/* One cell: the value in its figure's format, "-" when unknown, and with with_interval
 * its 95% interval when known ("123 [118, 129]"). */
void report_sweep_cell(const struct report_sweep_point *p, size_t col, bool with_interval,
                       char *buf, size_t len);
/* The table of points as markdown (aligned, so it reads as text too). */
void report_sweep_table(struct sbuf *out, const struct report_sweep *sw);
/* dir/sweep.md (heading, the table, the chart's files), dir/sweep.png, dir/sweep.svg.
 * Returns 0, or -1 with err naming the file that could not be written. */
int report_sweep_write(const char *dir, const struct report_sweep *sw, struct st_err *err);

#endif
