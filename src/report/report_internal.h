/* report: the scatter plot both charts are (plot.c), filled by tune_chart.c and sweep.c. */
#ifndef SERVETOP_REPORT_REPORT_INTERNAL_H
#define SERVETOP_REPORT_REPORT_INTERNAL_H

#include "report/report.h"

/* One point: x, y (NaN: not drawn), their 95% intervals (NaN: no bar). */
struct plot_point {
  double x, y;
  double x_lo, x_hi, y_lo, y_hi;
  size_t series;
  bool hollow;        /* e.g. its SLO does not hold */
  char label[32];     /* beside it: its concurrency */
};

struct plot_series {
  char name[192];     /* the legend's words */
  bool line;          /* join its points in their order (a sweep) */
  bool muted;         /* listed grey: nothing drawn (a configuration that did not start) */
};

struct plot {
  char title[192];
  char subtitle[320];
  bool simulated;
  char x_label[96], y_label[96];
  struct plot_series *series;
  size_t n_series;
  bool legend;                    /* the legend panel on the right */
  struct plot_point *points;
  size_t n_points;
  double vline_x;                 /* NaN: none (the SLO's minimum tok/s per user) */
  char vline_label[96];
  const size_t *frontier;         /* indexes into points, by x ascending */
  size_t n_frontier;
  long best;                      /* index into points, -1: none */
  char best_label[96];
  char note[320];                 /* a line under the chart: what hollow and bars mean */
};

/* The axes' words both charts share: interactivity (x) and output throughput, per GPU when
 * n_gpus > 0 (y). */
void report_plot_axes(struct plot *p, int n_gpus);
/* Writes dir/leaf atomically; err names the path. */
int report_write_file(const char *dir, const char *leaf, const void *data, size_t len,
                      struct st_err *err);
/* Draws p and writes dir/stem.png and dir/stem.svg (atomically). -1 with err naming the
 * file that could not be written. */
int report_plot_write(const struct plot *p, const char *dir, const char *stem, struct st_err *err);

#endif
