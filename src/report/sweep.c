/* report: a sweep's table of points (sweep.md) and chart (sweep.png, sweep.svg). */
#include "report/report_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
  const char *title;
  enum fig_id id;
  enum fig_stat stat;
} cols[REPORT_SWEEP_COLS] = {
    {"conc", FIG_N, FIG_VALUE}, /* the point's concurrency, not a figure */
    {"req/s", FIG_REQ_TPUT, FIG_VALUE}, {"output tok/s", FIG_OUTPUT_TPUT, FIG_VALUE},
    {"tok/s/GPU", FIG_OUTPUT_TPUT_PER_GPU, FIG_VALUE}, {"tok/s/user", FIG_INTERACTIVITY, FIG_VALUE},
    {"TTFT p50 (ms)", FIG_TTFT, FIG_STAT_P50}, {"TTFT p99 (ms)", FIG_TTFT, FIG_STAT_P99},
    {"TPOT p50 (ms)", FIG_TPOT, FIG_STAT_P50}, {"TPOT p99 (ms)", FIG_TPOT, FIG_STAT_P99},
};

const char *report_sweep_col_title(size_t col) {
  return col < REPORT_SWEEP_COLS ? cols[col].title : "";
}

/* One value in its figure's format (the table's row). */
static int format_value(enum fig_id id, double v, char *buf, size_t len) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
  return snprintf(buf, len, fig_desc(id)->format, v);
#pragma GCC diagnostic pop
}

void report_sweep_cell(const struct report_sweep_point *p, size_t col, bool with_interval,
                       char *buf, size_t len) {
  if (col >= REPORT_SWEEP_COLS) {
    snprintf(buf, len, "-");
    return;
  }
  if (col == 0) {
    snprintf(buf, len, "%d%s", p->conc, p->interrupted ? "*" : "");
    return;
  }
  enum fig_id id = cols[col].id;
  double v = fig_get(&p->figs, id, cols[col].stat), lo, hi;
  if (!isfinite(v)) {
    snprintf(buf, len, "-");
    return;
  }
  int n = format_value(id, v, buf, len);
  if (!with_interval || n < 0 || (size_t)n >= len ||
      !fig_get_ci(&p->figs, id, cols[col].stat, &lo, &hi))
    return;
  char a[32], b[32];
  format_value(id, lo, a, sizeof a);
  format_value(id, hi, b, sizeof b);
  snprintf(buf + n, len - (size_t)n, " [%s, %s]", a, b);
}

void report_sweep_table(struct sbuf *out, const struct report_sweep *sw) {
  size_t n = sw->n_points;
  char(*cell)[REPORT_SWEEP_COLS][64] = xcalloc(n + 1, sizeof *cell);
  int width[REPORT_SWEEP_COLS];
  for (size_t c = 0; c < REPORT_SWEEP_COLS; c++) {
    width[c] = (int)strlen(cols[c].title);
    for (size_t r = 0; r < n; r++) {
      report_sweep_cell(&sw->points[r], c, true, cell[r][c], sizeof cell[r][c]);
      if ((int)strlen(cell[r][c]) > width[c])
        width[c] = (int)strlen(cell[r][c]);
    }
  }
  for (size_t c = 0; c < REPORT_SWEEP_COLS; c++)
    sbuf_printf(out, "| %*s ", width[c], cols[c].title);
  sbuf_puts(out, "|\n");
  for (size_t c = 0; c < REPORT_SWEEP_COLS; c++) {
    sbuf_puts(out, "|");
    for (int k = 0; k < width[c] + 1; k++)
      sbuf_putc(out, '-');
    sbuf_puts(out, ":"); /* numbers: right-aligned */
  }
  sbuf_puts(out, "|\n");
  for (size_t r = 0; r < n; r++) {
    for (size_t c = 0; c < REPORT_SWEEP_COLS; c++)
      sbuf_printf(out, "| %*s ", width[c], cell[r][c]);
    sbuf_puts(out, "|\n");
  }
  free(cell);
}

static const char *title_of(const struct report_sweep *sw) {
  return sw->title && *sw->title ? sw->title : "servetop run --sweep";
}

static void markdown(struct sbuf *md, const struct report_sweep *sw) {
  bool any_interrupted = false, any_interval = false;
  for (size_t i = 0; i < sw->n_points; i++) {
    any_interrupted |= sw->points[i].interrupted;
    for (size_t c = 1; c < REPORT_SWEEP_COLS; c++) {
      double lo, hi;
      any_interval |= fig_get_ci(&sw->points[i].figs, cols[c].id, cols[c].stat, &lo, &hi);
    }
  }
  sbuf_printf(md, "# Sweep: %s%s\n\n", title_of(sw), sw->simulated ? " (SIMULATED)" : "");
  if (sw->subtitle && *sw->subtitle)
    sbuf_printf(md, "%s\n\n", sw->subtitle);
  if (sw->simulated)
    sbuf_puts(md, "**SIMULATED**: these figures come from servetop sim's model, not hardware.\n\n");
  if (sw->n_points == 0)
    sbuf_puts(md, "No point of the sweep has a result.\n\n");
  report_sweep_table(md, sw);
  sbuf_puts(md, "\n");
  if (sw->n_gpus > 0)
    sbuf_printf(md, "tok/s/user: 1000 / TPOT p50. tok/s/GPU: output tok/s / %d GPU%s.", sw->n_gpus,
                sw->n_gpus == 1 ? "" : "s");
  else
    sbuf_puts(md, "tok/s/user: 1000 / TPOT p50. tok/s/GPU: not known (no GPU count: on the CPU, "
                  "or no recipe.json beside the results).");
  sbuf_puts(md, " \"-\": not known.");
  if (any_interval)
    sbuf_puts(md, " [lo, hi]: the 95% confidence interval.");
  if (any_interrupted)
    sbuf_puts(md, " \"*\": the point was stopped before its end.");
  sbuf_puts(md, "\n\n![throughput against interactivity, one point per concurrency](sweep.png)\n\n"
                "The same chart as a vector image: [sweep.svg](sweep.svg).\n");
}

int report_sweep_write(const char *dir, const struct report_sweep *sw, struct st_err *err) {
  struct plot p;
  memset(&p, 0, sizeof p);
  snprintf(p.title, sizeof p.title, "%s: sweep", title_of(sw));
  snprintf(p.subtitle, sizeof p.subtitle, "%s", sw->subtitle ? sw->subtitle : "");
  p.simulated = sw->simulated;
  report_plot_axes(&p, sw->n_gpus);
  struct plot_series one = {.line = true};
  snprintf(one.name, sizeof one.name, "%s", title_of(sw));
  p.series = &one;
  p.n_series = 1;
  p.vline_x = (double)NAN;
  p.best = -1;
  p.points = xcalloc(sw->n_points + 1, sizeof *p.points);
  p.n_points = sw->n_points;
  enum fig_id yid = sw->n_gpus > 0 ? FIG_OUTPUT_TPUT_PER_GPU : FIG_OUTPUT_TPUT;
  size_t not_drawn = 0;
  for (size_t i = 0; i < sw->n_points; i++) {
    const struct report_sweep_point *s = &sw->points[i];
    struct plot_point *q = &p.points[i];
    q->x = fig_get(&s->figs, FIG_INTERACTIVITY, FIG_VALUE);
    q->y = fig_get(&s->figs, yid, FIG_VALUE);
    q->x_lo = q->x_hi = q->y_lo = q->y_hi = (double)NAN;
    fig_get_ci(&s->figs, FIG_INTERACTIVITY, FIG_VALUE, &q->x_lo, &q->x_hi);
    fig_get_ci(&s->figs, yid, FIG_VALUE, &q->y_lo, &q->y_hi);
    snprintf(q->label, sizeof q->label, "c=%d%s", s->conc, s->interrupted ? "*" : "");
    if (!isfinite(q->x) || !isfinite(q->y))
      not_drawn++;
  }
  struct sbuf sb = {0};
  sbuf_printf(&sb, "one point per concurrency (labels); bars: 95%% intervals where known");
  if (not_drawn)
    sbuf_printf(&sb, "; %zu point%s without tok/s per user or throughput not drawn", not_drawn,
                not_drawn == 1 ? "" : "s");
  snprintf(p.note, sizeof p.note, "%s", sb.data);
  sbuf_reset(&sb);
  markdown(&sb, sw);
  int rc = report_write_file(dir, "sweep.md", sb.data, sb.len, err);
  sbuf_free(&sb);
  if (rc == 0)
    rc = report_plot_write(&p, dir, "sweep", err);
  free(p.points);
  return rc;
}
