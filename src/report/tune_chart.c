/* report: the tune chart (tune.png, tune.svg) from a search's result. */
#include "report/report_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "ttft_p99_ms <= 2000, min_tok_s_per_user >= 20" into sb ("none" when nothing is set). */
static void slo_words(struct sbuf *sb, const struct tune_slo *slo) {
  size_t before = sb->len;
  for (int f = 0; slo && f < TUNE_N_FIGURES; f++) {
    if (!slo->set[f])
      continue;
    sbuf_printf(sb, "%s%s %s %g", sb->len > before ? ", " : "", tune_figure_key((enum tune_figure)f),
                f == TUNE_MIN_TOK_S_PER_USER ? ">=" : "<=", slo->target[f]);
  }
  if (sb->len == before)
    sbuf_puts(sb, "none");
}

static void config_name(const struct tune_space *space, const struct tune_result *res, size_t c,
                        char *buf, size_t n) {
  const struct tune_config_result *cr = &res->configs[c];
  char knobs[160] = "";
  if (space)
    tune_config_describe(space, &cr->cfg, knobs, sizeof knobs);
  if (!knobs[0])
    snprintf(knobs, sizeof knobs, "configuration %zu", c + 1);
  if (cr->status == TUNE_CFG_BEST_FOUND && cr->best_conc > 0)
    snprintf(buf, n, "%s: c=%d", knobs, cr->best_conc);
  else
    snprintf(buf, n, "%s: %s", knobs, tune_status_name(cr->status));
}

int report_tune_charts(const char *dir, const char *title, bool simulated,
                       const struct tune_space *space, const struct tune_slo *slo,
                       const struct tune_result *res, int n_gpus, struct st_err *err) {
  struct plot p;
  memset(&p, 0, sizeof p);
  snprintf(p.title, sizeof p.title, "%s: tune", title && *title ? title : "servetop tune");
  p.simulated = simulated;
  report_plot_axes(&p, n_gpus);
  p.legend = true;
  p.drop_crowded_labels = true;
  p.vline_x = (double)NAN;
  p.best = -1;
  size_t n_configs = res ? res->n_configs : 0, n_probes = res ? res->n_probes : 0;
  p.series = xcalloc(n_configs + 1, sizeof *p.series);
  p.n_series = n_configs;
  for (size_t c = 0; c < n_configs; c++) {
    config_name(space, res, c, p.series[c].name, sizeof p.series[c].name);
    p.series[c].muted = res->configs[c].status == TUNE_CFG_START_FAILED;
  }
  p.points = xcalloc(n_probes + 1, sizeof *p.points);
  p.n_points = n_probes;
  size_t not_drawn = 0;
  for (size_t i = 0; i < n_probes; i++) {
    const struct tune_probe *pr = &res->probes[i];
    const struct tune_estimate *x = &pr->pt.figure[TUNE_MIN_TOK_S_PER_USER], *y = &pr->pt.throughput;
    p.points[i] = (struct plot_point){.x = x->point, .y = y->point, .x_lo = x->lo, .x_hi = x->hi,
                                      .y_lo = y->lo, .y_hi = y->hi,
                                      .series = pr->config < n_configs ? pr->config : 0,
                                      .hollow = !tune_probe_counts(res, i)};
    snprintf(p.points[i].label, sizeof p.points[i].label, "c=%d", pr->concurrency);
    if (!isfinite(x->point) || !isfinite(y->point))
      not_drawn++;
  }
  if (slo && slo->set[TUNE_MIN_TOK_S_PER_USER]) {
    p.vline_x = slo->target[TUNE_MIN_TOK_S_PER_USER];
    snprintf(p.vline_label, sizeof p.vline_label, "SLO: >= %g tok/s per user", p.vline_x);
  }
  size_t *frontier = xcalloc(n_probes + 1, sizeof *frontier);
  p.frontier = frontier;
  p.n_frontier = res ? tune_frontier(res, frontier) : 0;
  /* the probe of the winner's best concurrency */
  p.best = res && res->winner >= 0 ? tune_best_probe(res, (size_t)res->winner) : -1;
  if (p.best >= 0) {
    const struct tune_probe *b = &res->probes[p.best];
    const struct tune_estimate *g = &b->pt.throughput;
    char knobs[160] = "";
    if (space)
      tune_config_describe(space, &res->configs[b->config].cfg, knobs, sizeof knobs);
    if (isfinite(g->lo) && isfinite(g->hi))
      snprintf(p.best_label, sizeof p.best_label, "best: %s c=%d, %.0f [%.0f, %.0f] tok/s%s", knobs,
               b->concurrency, g->point, g->lo, g->hi, n_gpus > 0 ? "/GPU" : "");
    else
      snprintf(p.best_label, sizeof p.best_label, "best: %s c=%d, %.0f tok/s%s", knobs,
               b->concurrency, g->point, n_gpus > 0 ? "/GPU" : "");
  }
  struct sbuf sb = {0};
  sbuf_puts(&sb, "SLO on 95% bounds: ");
  slo_words(&sb, slo);
  sbuf_printf(&sb, " | %zu point%s, %zu configuration%s", n_probes, n_probes == 1 ? "" : "s",
              n_configs, n_configs == 1 ? "" : "s");
  if (res && res->end == TUNE_END_STOPPED)
    sbuf_puts(&sb, " | stopped");
  else if (res && (res->end == TUNE_END_POINT_BUDGET || res->end == TUNE_END_TIME_BUDGET))
    sbuf_puts(&sb, " | budget ran out");
  snprintf(p.subtitle, sizeof p.subtitle, "%s", sb.data);
  sbuf_reset(&sb);
  sbuf_puts(&sb, "hollow: the SLO does not hold on its 95% bounds; bars: 95% intervals; "
                 "labels: concurrency (where there is room)");
  if (not_drawn)
    sbuf_printf(&sb, "; %zu point%s without tok/s per user or throughput not drawn", not_drawn,
                not_drawn == 1 ? "" : "s");
  snprintf(p.note, sizeof p.note, "%s", sb.data);
  sbuf_free(&sb);
  int rc = report_plot_write(&p, dir, "tune", err);
  free(frontier);
  free(p.points);
  free(p.series);
  return rc;
}
