/* run: a sweep's end — the table of points and the chart of a run folder (report/). */
#include "run/run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"

/* The run folder's points (every result its manifest lists, by concurrency) as the report
 * draws them; the words (title, subtitle) live in side and subtitle. */
struct sweep_points {
  struct run_compare_side side;
  struct report_sweep_point *points;
  char subtitle[320];
  struct report_sweep sw;
};

static int sweep_load(const char *run_dir, struct sweep_points *out, struct st_err *err) {
  memset(out, 0, sizeof *out);
  if (run_compare_side_load(run_dir, &out->side, err) != 0) {
    run_compare_side_fini(&out->side);
    return -1;
  }
  const struct run_compare_side *side = &out->side;
  int n_gpus = side->on_cpu ? 0 : side->n_gpus;
  out->points = xcalloc(side->n_results + 1, sizeof *out->points);
  bool simulated = false;
  for (size_t i = 0; i < side->n_results; i++) {
    const struct results_file *rf = &side->results[i];
    out->points[i].conc = rf->max_concurrency;
    out->points[i].interrupted = rf->interrupted;
    out->points[i].figs = rf->figs;
    fig_set_derive(&out->points[i].figs, n_gpus); /* per GPU: the recipe's GPU count */
    simulated |= run_result_simulated(rf) == 1;
  }
  /* what was measured, in words: the facts like-with-like reads from a result */
  struct run_like_facts f;
  run_like_facts_from_result(side, &side->results[0], &f);
  struct sbuf sb = {0};
  sbuf_printf(&sb, "%s", f.model[0] ? f.model : "model unknown");
  if (f.engine[0])
    sbuf_printf(&sb, " | %s", f.engine);
  if (side->on_cpu)
    sbuf_puts(&sb, " | CPU");
  else if (f.gpu_type[0] || n_gpus > 0)
    sbuf_printf(&sb, " | %s x%d", f.gpu_type[0] ? f.gpu_type : "GPU", n_gpus > 0 ? n_gpus : 1);
  if (f.isl > 0 && f.osl > 0)
    sbuf_printf(&sb, " | isl %d, osl %d", f.isl, f.osl);
  if (f.overrides[0])
    sbuf_printf(&sb, " | --set %s", f.overrides);
  snprintf(out->subtitle, sizeof out->subtitle, "%s", sb.data);
  sbuf_free(&sb);
  out->sw = (struct report_sweep){.title = side->name, .subtitle = out->subtitle,
                                  .simulated = simulated, .n_gpus = n_gpus,
                                  .points = out->points, .n_points = side->n_results};
  return 0;
}

static void sweep_free(struct sweep_points *s) {
  free(s->points);
  run_compare_side_fini(&s->side);
}

int run_sweep_report(const char *run_dir, struct st_err *err) {
  struct sweep_points s;
  if (sweep_load(run_dir, &s, err) != 0)
    return -1;
  int rc = report_sweep_write(run_dir, &s.sw, err);
  sweep_free(&s);
  return rc;
}

int run_sweep_table(const char *run_dir, struct sbuf *out, struct st_err *err) {
  struct sweep_points s;
  if (sweep_load(run_dir, &s, err) != 0)
    return -1;
  report_sweep_table(out, &s.sw);
  sweep_free(&s);
  return 0;
}
