/* The run view: chart history from snapshots, and drawing (pure; no ncurses). */
#include "runview.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "logview.h"
#include "report/report.h"
#include "run/run.h"
#include "ui_util.h"

void runview_init(struct runview *rv, const struct recipe *recipe) {
  memset(rv, 0, sizeof *rv);
  rv->recipe = recipe;
  rv->last_point_index = -1;
  for (int s = 0; s < RUNVIEW_SERIES_COUNT; s++)
    for (size_t i = 0; i < RUNVIEW_HISTORY; i++)
      rv->ring[s][i] = (double)NAN;
}

static void add_mark(struct runview *rv) {
  size_t cap = ST_ARRAY_LEN(rv->marks);
  if (rv->n_marks == cap) {
    memmove(rv->marks, rv->marks + 1, (cap - 1) * sizeof rv->marks[0]);
    rv->n_marks--;
  }
  rv->marks[rv->n_marks++] = rv->n_samples;
}

static void add_sample(struct runview *rv) {
  const struct snap_run *s = &rv->snap;
  size_t at = rv->n_samples % RUNVIEW_HISTORY;
  const struct fig_set *w = &s->figures.window;
  rv->ring[RUNVIEW_OUTPUT_TOK_S][at] = fig_get(w, FIG_OUTPUT_TPUT, FIG_VALUE);
  rv->ring[RUNVIEW_TOTAL_TOK_S][at] = fig_get(w, FIG_TOTAL_TPUT, FIG_VALUE);
  rv->ring[RUNVIEW_REQ_S][at] = fig_get(w, FIG_REQ_TPUT, FIG_VALUE);
  /* the chart shows what moves now (the latest interval); the number beside it the point's */
  rv->ring[RUNVIEW_ACCEPT_LENGTH][at] = s->spec.interval_accept_length_valid
                                            ? s->spec.interval_accept_length
                                        : s->spec.accept_length_valid ? s->spec.accept_length
                                                                      : (double)NAN;
  rv->ring[RUNVIEW_ACCEPT_RATE][at] = s->spec.accept_rate_valid ? s->spec.accept_rate_frac : (double)NAN;
  rv->ring[RUNVIEW_CONC][at] = s->concurrency.target > 0 ? s->concurrency.target : (double)NAN;
  rv->ring[RUNVIEW_RUNNING][at] = s->load.running_valid ? (double)s->load.num_running : (double)NAN;
  rv->ring[RUNVIEW_QUEUED][at] = s->load.queued_valid ? (double)s->load.num_queued : (double)NAN;
  rv->n_samples++;
}

void runview_push(struct runview *rv, const struct snap_run *snap) {
  /* a log scrolled back stays on the same lines as new ones arrive */
  if (rv->log_back > 0 && rv->have_snap && snap->log.total_lines > rv->snap.log.total_lines)
    rv->log_back += (int)(snap->log.total_lines - rv->snap.log.total_lines);
  /* a restart with new knobs says how it went (once) */
  const struct snap_server *sv = &snap->server;
  if (sv->restart_note[0] && strcmp(sv->restart_note, rv->restart_note) != 0) {
    snprintf(rv->restart_note, sizeof rv->restart_note, "%s", sv->restart_note);
    runview_set_status(rv, sv->restart_failed ? THEME_ERROR : THEME_OK, "%s", sv->restart_note);
  }
  rv->snap = *snap;
  rv->have_snap = true;
  const struct snap_progress *p = &snap->progress;
  /* a new sweep point, or the same point measured again after a restart with
   * new knobs: its elapsed time starts again at 0, the charts go on */
  bool restarted = p->elapsed_s + 0.5 < rv->last_point_elapsed_s;
  if (p->point_index != rv->last_point_index || restarted) {
    if (rv->last_point_index >= 0) {
      rv->run_time_s += rv->last_point_elapsed_s;
      add_mark(rv);
    }
    rv->last_point_index = p->point_index;
    rv->last_point_elapsed_s = 0;
    rv->conc_mark_last_at_s = 0;
  }
  /* concurrency changes not seen yet (the snapshot keeps only the latest);
   * one at the very start of a point is the point's own start */
  const struct snap_concurrency *c = &snap->concurrency;
  for (int i = 0; i < c->n_marks; i++) {
    if (c->marks[i].at_s > rv->conc_mark_last_at_s) {
      add_mark(rv);
      rv->conc_mark_last_at_s = c->marks[i].at_s;
    }
  }
  if (p->elapsed_s > rv->last_point_elapsed_s)
    rv->last_point_elapsed_s = p->elapsed_s;
  if (p->phase != SNAP_PHASE_MEASURING)
    return;
  double now_s = rv->run_time_s + p->elapsed_s;
  if (now_s - rv->next_sample_s > RUNVIEW_HISTORY * RUNVIEW_SAMPLE_S)
    rv->next_sample_s = now_s - RUNVIEW_HISTORY * RUNVIEW_SAMPLE_S;  /* older samples would not show */
  while (rv->next_sample_s <= now_s) {
    add_sample(rv);
    rv->next_sample_s += RUNVIEW_SAMPLE_S;
  }
}

size_t runview_series_copy(const struct runview *rv, enum runview_series s, double *out, size_t n) {
  size_t have = rv->n_samples < RUNVIEW_HISTORY ? rv->n_samples : RUNVIEW_HISTORY;
  if (n > have)
    n = have;
  for (size_t i = 0; i < n; i++)
    out[i] = rv->ring[s][(rv->n_samples - n + i) % RUNVIEW_HISTORY];
  return n;
}

bool runview_server_up(const struct runview *rv) {
  enum snap_server_state st = rv->snap.server.state;
  if (rv->snap.server.attached) /* not ours: quitting never stops it */
    return false;
  return rv->have_snap && (st == SNAP_SERVER_STARTING || st == SNAP_SERVER_READY ||
                           st == SNAP_SERVER_STOPPING);
}

bool runview_finished(const struct runview *rv) {
  enum snap_run_phase ph = rv->snap.progress.phase;
  return rv->have_snap &&
         (ph == SNAP_PHASE_DONE || ph == SNAP_PHASE_FAILED || ph == SNAP_PHASE_INTERRUPTED);
}

bool runview_over_cap(const struct runview *rv, int *cap) {
  const struct snap_server_load *ld = &rv->snap.load;
  if (!rv->have_snap || !ld->batch_cap_valid || ld->batch_cap <= 0 ||
      rv->snap.concurrency.target <= ld->batch_cap)
    return false;
  *cap = ld->batch_cap;
  return true;
}

const char *runview_knob_flag(const struct runview *rv, const char *knob) {
  const struct eng_flag *row =
      rv->recipe ? eng_flag_lookup(eng_find(rv->recipe->engine), knob, strlen(knob)) : NULL;
  return row ? eng_flag_spelling(row, knob, strlen(knob)) : knob;
}

/* ---------------------------------------------------------------- drawing helpers */

/* Writes pieces left to right; returns the next column. */
static enum theme_role server_role(enum snap_server_state st) {
  switch (st) {
  case SNAP_SERVER_READY: return THEME_OK;
  case SNAP_SERVER_STARTING:
  case SNAP_SERVER_STOPPING: return THEME_WARNING;
  case SNAP_SERVER_EXITED: return THEME_ERROR;
  default: return THEME_INACTIVE;
  }
}

static void render_header(const struct runview *rv, struct ui_grid *g, struct ui_rect r,
                          const struct ui_glyphs *gl) {
  const struct snap_server *sv = &rv->snap.server;
  ui_grid_fill(g, r, THEME_HEADER);
  int end = r.x + r.w, x = r.x;
  char buf[256];
  /* most important first: a narrow terminal cuts the end */
  snprintf(buf, sizeof buf, " %s%s%s ", sv->recipe_name[0] ? sv->recipe_name : "-", gl->separator,
           sv->engine[0] ? sv->engine : "-");
  x = ui_put(g, x, r.y, end, buf, THEME_HEADER, gl);
  if (sv->simulated)
    x = ui_put(g, x, r.y, end, "SIMULATED ", THEME_WARNING, gl);
  x = ui_put(g, x, r.y, end, gl->separator + 1, THEME_HEADER, gl);
  /* a server servetop stopped at the end "stopped", one that went away by itself "exited" */
  bool stopped_by_us = sv->state == SNAP_SERVER_EXITED && !sv->crashed && !sv->attached;
  snprintf(buf, sizeof buf, "server %s", stopped_by_us ? "stopped" : snap_server_state_name(sv->state));
  bool clean_exit = sv->state == SNAP_SERVER_EXITED && sv->exited_valid && sv->exit_code == 0 &&
                    sv->exit_signal == 0;
  x = ui_put(g, x, r.y, end, buf, clean_exit ? THEME_INACTIVE : server_role(sv->state), gl);
  if (sv->attached) {
    snprintf(buf, sizeof buf, "%sattached :%d, not launched by servetop", gl->separator, sv->port);
    x = ui_put(g, x, r.y, end, buf, THEME_HEADER, gl);
  } else if (sv->pid > 0 && sv->state != SNAP_SERVER_EXITED) {
    char up[16];
    snprintf(buf, sizeof buf, " up %s%spid %d :%d", ui_fmt_duration_s(sv->uptime_s, up, sizeof up),
             gl->separator, sv->pid, sv->port);
    x = ui_put(g, x, r.y, end, buf, THEME_HEADER, gl);
  }
  if (sv->state == SNAP_SERVER_EXITED && sv->exited_valid) {
    if (sv->exit_signal)
      snprintf(buf, sizeof buf, " (killed by signal %d)", sv->exit_signal);
    else
      snprintf(buf, sizeof buf, " (status %d)", sv->exit_code);
    ui_put(g, x, r.y, end, buf, clean_exit ? THEME_INACTIVE : THEME_ERROR, gl);
  }
}

static void render_progress(const struct runview *rv, struct ui_grid *g, struct ui_rect r,
                            const struct ui_glyphs *gl) {
  const struct snap_progress *p = &rv->snap.progress;
  int end = r.x + r.w, x = r.x + 1;
  char buf[160], a[16], b[16];
  enum theme_role phase_role = p->phase == SNAP_PHASE_FAILED        ? THEME_ERROR
                               : p->phase == SNAP_PHASE_DONE        ? THEME_OK
                               : p->phase == SNAP_PHASE_INTERRUPTED ? THEME_WARNING
                                                                    : THEME_TITLE;
  /* between points the label names the next point; a warm-up counts its own requests */
  const char *phase = p->warmup                        ? "warming up"
                      : p->phase == SNAP_PHASE_BETWEEN ? "next"
                                                       : snap_run_phase_name(p->phase);
  x = ui_put(g, x, r.y, end, phase, phase_role, gl);
  snprintf(buf, sizeof buf, " point %d/%d conc %d ", p->point_index + 1,
           p->n_points > 0 ? p->n_points : 1, rv->snap.concurrency.target);
  x = ui_put(g, x, r.y, end, buf, THEME_MAIN, gl);
  char cut[40] = "", sweep[32] = "", c[16];
  if (p->cut_by_stop > 0)
    snprintf(cut, sizeof cut, " %lld cut at the end", (long long)p->cut_by_stop);
  double left_s = 0;
  if (p->n_points > 1 && snap_run_remaining_s(&rv->snap, &left_s))
    snprintf(sweep, sizeof sweep, ", sweep %s", ui_fmt_duration_s(left_s, c, sizeof c));
  if (p->warmup)
    snprintf(buf, sizeof buf, " warm-up %lld/%lld %lld failed %lld in flight %s%s%s",
             (long long)p->done, (long long)p->total, (long long)p->failed,
             (long long)p->in_flight, ui_fmt_duration_s(p->elapsed_s, a, sizeof a),
             sweep[0] ? " ETA -" : "", sweep);
  else
    snprintf(buf, sizeof buf, " %lld/%lld ok %lld failed%s %lld in flight %s ETA %s%s",
             (long long)p->done, (long long)p->total, (long long)p->failed, cut,
             (long long)p->in_flight, ui_fmt_duration_s(p->elapsed_s, a, sizeof a),
             p->eta_valid ? ui_fmt_duration_s(p->eta_s, b, sizeof b) : "-", sweep);
  int text_w = ui_text_cells(buf);
  int bar_w = end - x - text_w - 1;
  if (bar_w > 40)
    bar_w = 40;
  if (bar_w >= 8) {
    struct ui_bar_segment segs[] = {
        {(double)p->done, THEME_OK, '#'},
        {(double)p->failed, THEME_ERROR, 'x'},
    };
    ui_bar(g, x, r.y, bar_w, segs, 2, (double)p->total, THEME_BAR_FREE, gl);
    x += bar_w;
  }
  x = ui_put(g, x, r.y, end, buf, p->failed ? THEME_WARNING : THEME_MAIN, gl);
  if (p->mislabelled)
    x = ui_put(g, x + 2, r.y, end, "MISLABELLED: spec-decoding label disagrees with the server",
               THEME_ERROR, gl);
  if (rv->snap.figures.client_bound[0]) { /* the client's delay is in the latencies */
    x = ui_put(g, x + 2, r.y, end, rv->snap.figures.client_bound, THEME_WARNING, gl);
    return;
  }
  /* the last saved point too short for its intervals (ci_point_short) */
  const struct snap_points *h = &rv->snap.points;
  char why[160];
  if (h->n > 0 && ci_point_short(h->point[h->n - 1].completed, h->point[h->n - 1].duration_s,
                                 h->point[h->n - 1].conc, why, sizeof why)) {
    snprintf(buf, sizeof buf, "point %d %.140s", h->point[h->n - 1].point_index + 1, why);
    ui_put(g, x + 2, r.y, end, buf, THEME_WARNING, gl);
  }
}

/* A chart with its scale on the left: top value and 0. */
enum { AXIS_W = 6 };

/* level >= 0: a horizontal line there (the batch cap). */
static void chart_with_axis(const struct runview *rv, struct ui_grid *g, struct ui_rect r,
                            const enum runview_series *which, const enum theme_role *roles,
                            size_t n_series, double y_min, double level,
                            const struct ui_glyphs *gl) {
  if (r.w <= AXIS_W + 2 || r.h <= 0)
    return;
  struct ui_rect area = {r.x + AXIS_W, r.y, r.w - AXIS_W, r.h};
  size_t want = (size_t)(area.w * ui_chart_samples_per_col(gl));
  if (want > RUNVIEW_HISTORY)
    want = RUNVIEW_HISTORY;
  double values[RUNVIEW_SERIES_COUNT][RUNVIEW_HISTORY];
  struct ui_series series[RUNVIEW_SERIES_COUNT];
  size_t n_have = 0;
  for (size_t i = 0; i < n_series; i++) {
    size_t n = runview_series_copy(rv, which[i], values[i], want);
    series[i] = (struct ui_series){values[i], n, roles[i]};
    n_have = n > n_have ? n : n_have;
  }
  /* a short run uses the chart's width: its samples spread over all of it */
  bool stretch = n_have >= 2 && n_have * 2 <= want;
  for (size_t i = 0; i < n_series && stretch; i++) {
    if (series[i].n != n_have)
      continue;
    for (size_t t = want; t-- > 0;) /* the source index is never above t */
      values[i][t] = values[i][t * n_have / want];
    series[i].n = want;
  }
  int ages[ST_ARRAY_LEN(rv->marks)];
  size_t n_ages = 0;
  for (size_t m = 0; m < rv->n_marks; m++)
    if (rv->marks[m] < rv->n_samples) {
      size_t age = rv->n_samples - 1 - rv->marks[m];
      if (stretch && age < n_have) { /* the first column of that sample */
        size_t src = n_have - 1 - age, first = (src * want + n_have - 1) / n_have;
        age = want - 1 - first;
      }
      ages[n_ages++] = (int)age;
    }
  struct ui_chart_opts opts = {.y_min = y_min, .y_max = y_min, .mark_ages = ages,
                               .n_marks = n_ages, .mark_role = THEME_CHART_MARK,
                               .level_valid = level >= 0, .level = level,
                               .level_role = THEME_WARNING};
  double top = ui_chart(g, area, series, n_series, &opts, gl);
  char label[16];
  if (r.h >= 4 && n_have >= 2 && area.w >= 16) {
    /* the time axis on the bottom line: how far back the left edge is, and now
     * (a sample a second) */
    char span[16], left[24];
    snprintf(left, sizeof left, "-%s", ui_fmt_duration_s((double)(n_have - 1), span, sizeof span));
    ui_grid_text(g, area.x, r.y + r.h - 1, area.w / 2, left, THEME_INACTIVE, gl->braille);
    ui_grid_text(g, area.x + area.w - 3, r.y + r.h - 1, 3, "now", THEME_INACTIVE, gl->braille);
  }
  ui_grid_text(g, r.x, r.y, AXIS_W - 1, ui_fmt_si(top, label, sizeof label), THEME_INACTIVE,
               gl->braille);
  if (r.h > 1)
    ui_grid_text(g, r.x, r.y + r.h - 1, AXIS_W - 1, ui_fmt_si(y_min, label, sizeof label),
                 THEME_INACTIVE, gl->braille);
}

/* The load against the server's batch cap: the target concurrency, what
 * the server runs and queues, the cap as a line, concurrency changes as
 * marks. Its label says when requests queue because of the cap. */
static void render_conc_chart(const struct runview *rv, struct ui_grid *g, struct ui_rect r,
                              const struct ui_glyphs *gl) {
  const struct snap_server_load *ld = &rv->snap.load;
  int end = r.x + r.w, x = r.x + AXIS_W;
  char buf[128], v[16], q[16];
  snprintf(buf, sizeof buf, "conc %d", rv->snap.concurrency.target);
  x = ui_put(g, x, r.y, end, buf, THEME_CHART_RPS, gl) + 1;
  snprintf(buf, sizeof buf, "run %s",
           ld->running_valid ? (snprintf(v, sizeof v, "%lld", (long long)ld->num_running), v) : "-");
  x = ui_put(g, x, r.y, end, buf, THEME_CHART_OUTPUT, gl) + 1;
  snprintf(buf, sizeof buf, "queue %s",
           ld->queued_valid ? (snprintf(q, sizeof q, "%lld", (long long)ld->num_queued), q) : "-");
  x = ui_put(g, x, r.y, end, buf, THEME_CHART_TOTAL, gl) + 1;
  int cap;
  if (runview_over_cap(rv, &cap))
    snprintf(buf, sizeof buf, "> cap %d", cap);
  else if (ld->batch_cap_valid)
    snprintf(buf, sizeof buf, "cap %d", ld->batch_cap);
  else
    buf[0] = '\0';
  x = ui_put(g, x, r.y, end, buf, runview_over_cap(rv, &cap) ? THEME_WARNING : THEME_INACTIVE, gl);
  if (rv->n_marks > 0) { /* the legend of the marks on both charts, where there is room */
    snprintf(buf, sizeof buf, " %s new point, conc or restart", gl->mark);
    if (x + ui_text_cells(buf) <= end)
      ui_put(g, x + 1, r.y, end, buf, THEME_CHART_MARK, gl);
  }
  if (r.h < 2)
    return;
  static const enum runview_series which[] = {RUNVIEW_QUEUED, RUNVIEW_RUNNING, RUNVIEW_CONC};
  static const enum theme_role roles[] = {THEME_CHART_TOTAL, THEME_CHART_OUTPUT, THEME_CHART_RPS};
  chart_with_axis(rv, g, (struct ui_rect){r.x, r.y + 1, r.w, r.h - 1}, which, roles, 3, 0,
                  ld->batch_cap_valid ? ld->batch_cap : -1, gl);
}

static void render_throughput(const struct runview *rv, struct ui_grid *g, struct ui_rect box,
                              const struct ui_glyphs *gl) {
  struct ui_rect in = ui_pane(g, box, "Throughput (last 10 s)", gl);
  if (in.h < 1)
    return;
  const struct snap_figures *t = &rv->snap.figures;
  /* the window's rates of the figures model, each in its chart's colour */
  static const struct {
    enum fig_id id;
    const char *name;   /* before the value ("" for none) */
    enum theme_role role;
  } rates[] = {{FIG_OUTPUT_TPUT, "output ", THEME_CHART_OUTPUT},
               {FIG_TOTAL_TPUT, "total ", THEME_CHART_TOTAL},
               {FIG_REQ_TPUT, "", THEME_CHART_RPS}};
  char v[16], buf[64];
  int end = in.x + in.w, x = in.x + 1;
  for (size_t i = 0; i < ST_ARRAY_LEN(rates); i++) {
    double val = fig_get(&t->window, rates[i].id, FIG_VALUE);
    snprintf(buf, sizeof buf, "%s%s %s%s", rates[i].name,
             isfinite(val) ? ui_fmt_si(val, v, sizeof v) : "-", fig_desc(rates[i].id)->unit,
             t->window_output_estimated && rates[i].id != FIG_REQ_TPUT ? " (est.)" : "");
    x = ui_put(g, x, in.y, end, buf, rates[i].role, gl) + 2;
  }
  if (t->server_gen_valid) {
    snprintf(buf, sizeof buf, "server says %s tok/s", ui_fmt_si(t->server_gen_tok_per_s, v, sizeof v));
    ui_put(g, x, in.y, end, buf, THEME_INACTIVE, gl);
  }
  int chart_h = in.h - 1;
  if (chart_h <= 0)
    return;
  /* below: requests in the server against its batch cap, and the target */
  int conc_h = chart_h >= 6 ? (chart_h / 3 > 2 ? chart_h / 3 : 2) : 0;
  static const enum runview_series tok[] = {RUNVIEW_TOTAL_TOK_S, RUNVIEW_OUTPUT_TOK_S};
  static const enum theme_role tok_roles[] = {THEME_CHART_TOTAL, THEME_CHART_OUTPUT};
  chart_with_axis(rv, g, (struct ui_rect){in.x, in.y + 1, in.w, chart_h - conc_h}, tok, tok_roles,
                  2, 0, -1, gl);
  if (conc_h > 0)
    render_conc_chart(rv, g, (struct ui_rect){in.x, in.y + 1 + chart_h - conc_h, in.w, conc_h}, gl);
}

/* The end of a sweep: its points as a table (sweep.md's columns without intervals, the
 * most telling first: as many as fit) and where the run drew its chart. */
static bool sweep_over(const struct runview *rv) {
  return runview_finished(rv) && rv->snap.points.n > 0 &&
         (rv->snap.points.chart[0] || rv->snap.progress.n_points > 1);
}

static void render_sweep_end(const struct runview *rv, struct ui_grid *g, struct ui_rect box,
                             const struct ui_glyphs *gl) {
  const struct snap_points *h = &rv->snap.points;
  char buf[sizeof h->chart + 64];
  snprintf(buf, sizeof buf, "Sweep: %d point%s", h->n, h->n == 1 ? "" : "s");
  struct ui_rect in = ui_pane(g, box, buf, gl);
  if (in.h < 1)
    return;
  if (h->chart[0])
    snprintf(buf, sizeof buf, "chart %s (and .svg; table: sweep.md)", h->chart);
  else
    snprintf(buf, sizeof buf, "no chart: the run could not draw it (see its message)");
  ui_put(g, in.x + 1, in.y, in.x + in.w, buf, h->chart[0] ? THEME_OK : THEME_WARNING, gl);
  static const size_t order[REPORT_SWEEP_COLS] = {0, 4, 2, 6, 8, 5, 7, 1, 3};
  struct ui_table_col cols[REPORT_SWEEP_COLS];
  char(*text)[REPORT_SWEEP_COLS][32] = xcalloc((size_t)h->n + 1, sizeof *text);
  const char **cells = xcalloc((size_t)h->n * REPORT_SWEEP_COLS + 1, sizeof *cells);
  for (size_t c = 0; c < REPORT_SWEEP_COLS; c++) {
    cols[c] = (struct ui_table_col){report_sweep_col_title(order[c]),
                                    (int)strlen(report_sweep_col_title(order[c])), true};
    for (int r = 0; r < h->n; r++) {
      const struct snap_point_result *pt = &h->point[r];
      struct report_sweep_point p = {.conc = pt->conc, .interrupted = !pt->measured_to_end,
                                     .figs = pt->figs};
      report_sweep_cell(&p, order[c], false, text[r][c], sizeof text[r][c]);
      cells[(size_t)r * REPORT_SWEEP_COLS + c] = text[r][c];
      if ((int)strlen(text[r][c]) > cols[c].width)
        cols[c].width = (int)strlen(text[r][c]);
    }
  }
  ui_table(g, (struct ui_rect){in.x + 1, in.y + 1, in.w - 1, in.h - 1}, cols, REPORT_SWEEP_COLS,
           cells, NULL, (size_t)h->n, THEME_HEADER, gl->braille);
  free(cells);
  free(text);
}

static const char *source_name(enum snap_source s) {
  switch (s) {
  case SNAP_SRC_METRICS: return "from /metrics";
  case SNAP_SRC_SERVER_INFO: return "from /get_server_info";
  case SNAP_SRC_LOG: return "from the server log";
  default: return "";
  }
}

/* The per-request acceptance rates as one bar a tenth wide each (the
 * number of requests in it, tallest = most). Returns the column after. */
static int accept_bins(struct ui_grid *g, int x, int y, int end,
                       const struct snap_request_accept *pr, const struct ui_glyphs *gl) {
  static const char *const blocks[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  static const char ascii[] = ".:-=+*#@";
  int64_t most = 0;
  for (int k = 0; k < SNAP_ACCEPT_BINS; k++)
    most = pr->rate_bins[k] > most ? pr->rate_bins[k] : most;
  for (int k = 0; k < SNAP_ACCEPT_BINS && x < end; k++, x++) {
    int64_t n = pr->rate_bins[k];
    if (n == 0 || most == 0) {
      ui_grid_put(g, x, y, gl->braille ? "·" : " ", THEME_INACTIVE);
      continue;
    }
    int level = (int)((n * 8 - 1) / most); /* 0..7 */
    char one[2] = {ascii[level], '\0'};
    ui_grid_put(g, x, y, gl->braille ? blocks[level] : one, THEME_CHART_ACCEPT);
  }
  return x;
}

static void render_accept(const struct runview *rv, struct ui_grid *g, struct ui_rect box,
                          const struct ui_glyphs *gl) {
  struct ui_rect in = ui_pane(g, box, "Speculative decoding", gl);
  if (in.h < 1)
    return;
  const struct snap_spec *sp = &rv->snap.spec;
  int end = in.x + in.w, x = in.x + 1;
  char buf[128], v[16];
  if (!sp->enabled_valid && !sp->accept_length_valid) {
    ui_put(g, x, in.y, end, "unknown: the server has not reported speculative decoding", THEME_INACTIVE, gl);
    return;
  }
  if (rv->snap.progress.mislabelled) {
    /* what is wrong, in full: the run's own words once it has ended */
    const char *why = runview_finished(rv) && strstr(rv->snap.progress.message, "MISLABELLED")
                          ? rv->snap.progress.message
                          : "MISLABELLED: the recipe's spec-decoding label disagrees with what the "
                            "server reports";
    int y = in.y + (sp->enabled_valid ? 1 : 0);
    if (sp->enabled_valid)
      ui_put(g, x, in.y, end,
             sp->enabled ? "on: the server reports speculative decoding"
                         : "off: the server reports no speculative decoding",
             THEME_INACTIVE, gl);
    ui_wrap_text(g, x, y, 0, in.y + in.h - y, in.w - 2, why, 2, THEME_ERROR, gl->braille);
    return;
  }
  if (sp->enabled_valid && !sp->enabled) {
    ui_put(g, x, in.y, end, "off: the server reports no speculative decoding", THEME_INACTIVE, gl);
    return;
  }
  snprintf(buf, sizeof buf, "accept length %s",
           sp->accept_length_valid ? (snprintf(v, sizeof v, "%.2f", sp->accept_length), v) : "-");
  x = ui_put(g, x, in.y, end, buf, THEME_CHART_ACCEPT, gl) + 2;
  snprintf(buf, sizeof buf, "rate %s", sp->accept_rate_valid ? ui_fmt_pct(sp->accept_rate_frac, v, sizeof v) : "-");
  x = ui_put(g, x, in.y, end, buf, THEME_MAIN, gl) + 2;
  snprintf(buf, sizeof buf, "%s %s", sp->algorithm[0] ? sp->algorithm : "", source_name(sp->source));
  ui_put(g, x, in.y, end, buf, THEME_INACTIVE, gl);
  int y = in.y + 1;
  if (sp->n_positions > 0 && in.h >= 3) {
    struct sbuf sb = {0};
    sbuf_puts(&sb, "per position");
    for (int i = 0; i < sp->n_positions && i < SNAP_MAX_SPEC_POSITIONS; i++)
      sbuf_printf(&sb, " %s", ui_fmt_pct(sp->per_position_rate_frac[i], v, sizeof v));
    ui_put(g, in.x + 1, y++, end, sb.data, THEME_MAIN, gl);
    sbuf_free(&sb);
  }
  /* llama.cpp: each request's own acceptance (its final chunk's draft counts) */
  const struct snap_request_accept *pr = &sp->per_request;
  if (pr->valid && y < in.y + in.h) {
    /* the pooled rate, then how the requests spread from 0 to 100% */
    snprintf(buf, sizeof buf, "per request %s  0", ui_fmt_pct(pr->rate_frac, v, sizeof v));
    int bx = ui_put(g, in.x + 1, y, end, buf, THEME_MAIN, gl);
    bx = accept_bins(g, bx, y, end, pr, gl);
    snprintf(buf, sizeof buf, "1  %lld req", (long long)pr->requests);
    ui_put(g, bx, y++, end, buf, THEME_MAIN, gl);
  }
  static const enum runview_series len[] = {RUNVIEW_ACCEPT_LENGTH};
  static const enum theme_role len_roles[] = {THEME_CHART_ACCEPT};
  chart_with_axis(rv, g, (struct ui_rect){in.x, y, in.w, in.y + in.h - y}, len, len_roles, 1, 0, -1,
                  gl);
}

static void latency_cell(const struct fig_set *set, enum fig_id id, enum fig_stat stat, char *buf,
                         size_t n) {
  if (!fig_has(set, id, stat))
    snprintf(buf, n, "-");
  else if (strcmp(fig_desc(id)->unit, "ms") != 0) /* tokens per chunk */
    fig_format(buf, n, set, id, stat);
  else
    ui_fmt_ms(fig_get(set, id, stat), buf, n);
}

enum { LATENCY_ROWS = 5 };

static void render_latency(const struct runview *rv, struct ui_grid *g, struct ui_rect box,
                           const struct ui_glyphs *gl) {
  const struct snap_figures *f = &rv->snap.figures;
  bool client_bound = f->client_bound[0] != '\0'; /* the reason: on the progress line */
  ui_box(g, box, client_bound ? "Latency: CLIENT-BOUND" : "Latency (last 10 s | run)",
         THEME_BORDER, client_bound ? THEME_WARNING : THEME_TITLE, gl);
  struct ui_rect in = ui_rect_inner(box);
  static const struct ui_table_col cols[] = {
      {"", 5, false},       {"p50", 7, true},     {"p90", 7, true},     {"p99", 7, true},
      {"run p50", 8, true}, {"run p90", 8, true}, {"run p99", 8, true},
  };
  static const enum fig_stat stats[] = {FIG_STAT_P50, FIG_STAT_P90, FIG_STAT_P99};
  char text[LATENCY_ROWS][7][16];
  const char *cells[LATENCY_ROWS * 7];
  size_t r = 0;
  /* the rows: the figures the table shows in the latency table, in its order */
  for (int id = 0; id < FIG_N && r < LATENCY_ROWS; id++) {
    const struct fig_desc *d = fig_desc((enum fig_id)id);
    if (!(d->shown & FIG_SHOW_LATENCY))
      continue;
    snprintf(text[r][0], sizeof text[r][0], "%s", d->label);
    for (size_t k = 0; k < ST_ARRAY_LEN(stats); k++) {
      latency_cell(&f->window, d->id, stats[k], text[r][1 + k], sizeof text[r][1 + k]);
      latency_cell(&f->run, d->id, stats[k], text[r][4 + k], sizeof text[r][4 + k]);
    }
    for (size_t c = 0; c < 7; c++)
      cells[r * 7 + c] = text[r][c];
    r++;
  }
  struct ui_rect table = {in.x + 1, in.y, in.w - 1, in.h};
  /* Too narrow for all seven (100 columns): p50 and p99 of both, so the whole
   * point's percentiles show before 200 columns; narrower still (80): the
   * window's three. */
  static const size_t narrow[] = {0, 1, 3, 4, 6};
  static const struct ui_table_col ncols[] = {
      {"", 4, false}, {"p50", 6, true}, {"p99", 6, true}, {"run p50", 7, true}, {"run p99", 7, true},
  };
  int full_w = 0, narrow_w = 0;
  for (size_t c = 0; c < 7; c++)
    full_w += cols[c].width + (c ? 1 : 0);
  for (size_t c = 0; c < ST_ARRAY_LEN(ncols); c++)
    narrow_w += ncols[c].width + (c ? 1 : 0);
  if (table.w < full_w && table.w >= narrow_w) {
    const char *ncells[LATENCY_ROWS * ST_ARRAY_LEN(narrow)];
    for (size_t c = 0; c < ST_ARRAY_LEN(narrow); c++) {
      for (size_t row = 0; row < r; row++)
        ncells[row * ST_ARRAY_LEN(narrow) + c] = cells[row * 7 + narrow[c]];
    }
    ui_table(g, table, ncols, ST_ARRAY_LEN(narrow), ncells, NULL, r, THEME_HEADER, gl->braille);
  } else {
    ui_table(g, table, cols, 7, cells, NULL, r, THEME_HEADER, gl->braille);
  }
}

/* KV use, what the server runs against its cap, and its KV capacity (with
 * the one before a restart with other knobs): three short lines that fit
 * the narrowest right column (80 columns). */
static void render_server_load(const struct runview *rv, struct ui_grid *g, struct ui_rect box,
                               const struct ui_glyphs *gl) {
  struct ui_rect in = ui_pane(g, box, "Server", gl);
  if (in.h < 1)
    return;
  const struct snap_server_load *ld = &rv->snap.load;
  int end = in.x + in.w, x = in.x + 1;
  char buf[160], v[16], w[16];
  x = ui_put(g, x, in.y, end, "KV ", THEME_MAIN, gl);
  int bar_w = in.w - 12;
  if (ld->kv_usage_valid && bar_w > 4) {
    struct ui_bar_segment seg = {ld->kv_usage_frac, THEME_BAR_SERVER, '#'};
    ui_bar(g, x, in.y, bar_w, &seg, 1, 1.0, THEME_BAR_FREE, gl);
    ui_put(g, x + bar_w + 1, in.y, end, ui_fmt_pct(ld->kv_usage_frac, v, sizeof v), THEME_MAIN, gl);
  } else {
    ui_put(g, x, in.y, end, "use unknown", THEME_INACTIVE, gl);
  }
  if (in.h < 2)
    return;
  x = in.x + 1;
  snprintf(buf, sizeof buf, "running %s queued %s ",
           ld->running_valid ? (snprintf(v, sizeof v, "%lld", (long long)ld->num_running), v) : "-",
           ld->queued_valid ? (snprintf(w, sizeof w, "%lld", (long long)ld->num_queued), w) : "-");
  x = ui_put(g, x, in.y + 1, end, buf, THEME_MAIN, gl);
  int cap;
  bool over = runview_over_cap(rv, &cap);
  if (ld->batch_cap_valid) {
    snprintf(buf, sizeof buf, "cap %d%s", ld->batch_cap, over ? "!" : ""); /* warning role too */
    ui_put(g, x, in.y + 1, end, buf, over ? THEME_WARNING : THEME_MAIN, gl);
  }
  if (in.h < 3)
    return;
  x = in.x + 1;
  if (!ld->max_total_num_tokens_valid) {
    if (ld->kv_per_slot_valid)
      snprintf(buf, sizeof buf, "KV %s tok/slot, total unknown",
               ui_fmt_si((double)ld->kv_per_slot_tokens, v, sizeof v));
    ui_put(g, x, in.y + 2, end, ld->kv_per_slot_valid ? buf : "KV capacity unknown", THEME_INACTIVE,
           gl);
    return;
  }
  snprintf(buf, sizeof buf, "KV %s tok", ui_fmt_si((double)ld->max_total_num_tokens, v, sizeof v));
  x = ui_put(g, x, in.y + 2, end, buf, THEME_MAIN, gl);
  if (ld->kv_asked_tokens > 0 && ld->kv_asked_tokens != ld->max_total_num_tokens) {
    /* the engine made another size of the one asked (llama.cpp rounds -c) */
    const struct eng_ops *e = eng_find(rv->snap.server.engine);
    snprintf(buf, sizeof buf, " (asked %s; %s rounds)",
             ui_fmt_si((double)ld->kv_asked_tokens, w, sizeof w), e ? e->title : "the engine");
    x = ui_put(g, x, in.y + 2, end, buf, THEME_WARNING, gl);
  }
  if (ld->max_total_num_tokens_was_valid &&
      ld->max_total_num_tokens_was != ld->max_total_num_tokens) {
    snprintf(buf, sizeof buf, " (was %s)",
             ui_fmt_si((double)ld->max_total_num_tokens_was, w, sizeof w));
    x = ui_put(g, x, in.y + 2, end, buf, THEME_WARNING, gl);
  }
  if (ld->kv_per_slot_valid) {
    snprintf(buf, sizeof buf, " %s/slot", ui_fmt_si((double)ld->kv_per_slot_tokens, v, sizeof v));
    ui_put(g, x, in.y + 2, end, buf, THEME_INACTIVE, gl);
  }
}

static void render_gpus(const struct runview *rv, struct ui_grid *g, struct ui_rect box,
                        const struct ui_glyphs *gl) {
  const struct snap_gpus *gp = &rv->snap.gpus;
  char title[96];
  bool stale = gp->stale && gp->n_gpus > 0; /* the last good figures: the legend gives way */
  snprintf(title, sizeof title, "GPUs%s%s%s", stale ? " (stale)" : ": server|other",
           gp->backend[0] ? gl->separator : "", gp->backend);
  ui_box(g, box, title, THEME_BORDER, stale ? THEME_WARNING : THEME_TITLE, gl);
  struct ui_rect in = ui_rect_inner(box);
  int end = in.x + in.w;
  if (gp->n_gpus == 0) {
    char buf[SNAP_MESSAGE_BYTES + 32];
    snprintf(buf, sizeof buf, "no GPU data: %s",
             gp->unavailable_reason[0] ? gp->unavailable_reason : "unknown");
    ui_put(g, in.x + 1, in.y, end, buf, THEME_INACTIVE, gl);
    return;
  }
  int shown = gp->n_gpus <= in.h ? gp->n_gpus : in.h - 1;
  for (int i = 0; i < shown; i++) {
    const struct snap_gpu *u = &gp->gpu[i];
    int y = in.y + i, x = in.x + 1;
    char buf[96], a[16], b[16], c[16];
    snprintf(buf, sizeof buf, "%d", u->index);
    x = ui_put(g, x, y, end, buf, THEME_MAIN, gl) + 1;
    /* the right side: used/total and power */
    double used = u->valid_mask & SNAP_GPU_MEM_SERVER
                      ? (double)u->mem_server_bytes + (double)u->mem_other_bytes
                      : (double)NAN; /* "-": not split by process (yet) */
    if (u->valid_mask & SNAP_GPU_MEM_TOTAL)
      snprintf(buf, sizeof buf, " %s/%s %s", ui_fmt_bytes(used, a, sizeof a),
               ui_fmt_bytes((double)u->mem_total_bytes, b, sizeof b),
               u->valid_mask & SNAP_GPU_POWER ? (snprintf(c, sizeof c, "%.0fW", u->power_mw / 1000.0), c)
                                               : "-W");
    else
      snprintf(buf, sizeof buf, " memory unknown");
    int bar_w = end - x - ui_text_cells(buf);
    if ((u->valid_mask & SNAP_GPU_MEM_TOTAL) && bar_w >= 6) {
      struct ui_bar_segment segs[] = {
          {u->valid_mask & SNAP_GPU_MEM_SERVER ? (double)u->mem_server_bytes : (double)NAN, THEME_BAR_SERVER, '#'},
          {u->valid_mask & SNAP_GPU_MEM_OTHER ? (double)u->mem_other_bytes : (double)NAN, THEME_BAR_OTHER, '='},
      };
      ui_bar(g, x, y, bar_w, segs, 2, (double)u->mem_total_bytes, THEME_BAR_FREE, gl);
      x += bar_w;
    }
    ui_put(g, x, y, end, buf, THEME_MAIN, gl);
  }
  if (shown < gp->n_gpus) {
    char more[32];
    snprintf(more, sizeof more, "+%d more", gp->n_gpus - shown);
    ui_put(g, in.x + 1, in.y + shown, end, more, THEME_INACTIVE, gl);
  }
}

static void render_log(struct runview *rv, struct ui_grid *g, struct ui_rect box,
                       const struct ui_glyphs *gl) {
  struct ui_rect in = ui_rect_inner(box);
  const struct snap_log_tail *lg = &rv->snap.log;
  int n = lg->n_lines < in.h ? lg->n_lines : in.h;
  int max_back = lg->n_lines - n;
  if (rv->log_back > max_back)
    rv->log_back = max_back;
  if (rv->log_back < 0)
    rv->log_back = 0;
  char title[96];
  if (rv->log_back > 0)
    snprintf(title, sizeof title, "Server log%s%d lines back (End: newest)", gl->separator,
             rv->log_back);
  else
    snprintf(title, sizeof title, "Server log");
  ui_box(g, box, title, THEME_BORDER, rv->log_back > 0 ? THEME_WARNING : THEME_TITLE, gl);
  if (lg->n_lines == 0)
    ui_put(g, in.x + 1, in.y, in.x + in.w,
           rv->snap.server.attached ? "(attached: servetop did not launch this server, so it has "
                                      "no log of it)"
                                    : "(no output yet)",
           THEME_INACTIVE, gl);
  for (int i = 0; i < n; i++) {
    const char *line = lg->lines[lg->n_lines - rv->log_back - n + i];
    ui_put(g, in.x + 1, in.y + i, in.x + in.w, line, ui_log_line_role(line), gl);
  }
}

/* ---------------------------------------------------------------- keys */

/* The key table: `?` lists it, the footer shows the hints. */
enum { KEY_CONC = 0, KEY_KNOB = 1, KEY_CAP = 2 }; /* indexes of hints that can be inactive */
static const struct ui_key_help keys[] = {
    {"+ / -", "double / halve the concurrency (a new segment)", "conc", "+/-", '+', 3},
    {"m", "new KV cache size (or KEY=VALUE): restarts", "knob", NULL, 'm', 2},
    {"c", "raise the batch cap to the concurrency: restarts", "cap", NULL, 'c', 2},
    {"l", "the whole server log, full screen, with search", "log", NULL, 'l', 1},
    {"b", "back to the recipes (stops the run first: asks)", "back", NULL, 'b', 0},
    {"Enter/Esc/Bksp", "(m prompt) restart with it / cancel / delete", NULL, NULL, 0, 0},
    {"y / n", "(stop or quit question) yes / no", NULL, NULL, 0, 0},
    {"PgUp/PgDn Home/End", "scroll the log pane back / forward, oldest / newest", NULL, NULL, 0, 0},
    {"mouse", "wheel scrolls the log pane; a click on it: full log", NULL, NULL, 0, 0},
    UI_KEY_HELP_ROW,
    {"q", "quit; asks first and stops the server when it is up", "quit", NULL, 'q', 0},
};

static void footer(void *self, struct ui_footer *f) {
  struct runview *rv = self;
  if (rv->editing_knob) {
    snprintf(rv->prompt, sizeof rv->prompt, "KV cache (%s) or KEY=VALUE: ",
             runview_knob_flag(rv, "kv-cache"));
    f->prompt = rv->prompt;
    f->input = rv->knob_value;
    f->prompt_hint = "Enter restarts the server, Esc cancels";
    return;
  }
  bool attached = rv->snap.server.attached;
  if (rv->confirm == RUNVIEW_CONFIRM_QUIT) {
    f->prompt = attached ? "Stop the load and quit? y / n (the server stays up)"
                         : "The server is up: stop it and quit? y / n";
    f->prompt_role = THEME_WARNING;
    return;
  }
  if (rv->confirm == RUNVIEW_CONFIRM_BACK) {
    f->prompt = "Stop the run and go back to the recipes? y / n";
    f->prompt_role = THEME_WARNING;
    f->prompt_hint = "(what was measured stays in its run folder)";
    return;
  }
  bool measuring = rv->have_snap && rv->snap.progress.phase == SNAP_PHASE_MEASURING;
  int cap;
  bool over = measuring && runview_over_cap(rv, &cap);
  if (!measuring)
    f->inactive |= 1u << KEY_CONC;
  if (runview_finished(rv) || attached)
    f->inactive |= 1u << KEY_KNOB;
  if (!over || attached)
    f->inactive |= 1u << KEY_CAP;
  /* how the run ended matters more than the last change made to it */
  if (rv->snap.progress.message[0] && runview_finished(rv)) {
    f->status = rv->snap.progress.message;
    f->status_role = rv->snap.progress.phase == SNAP_PHASE_DONE ? THEME_OK : THEME_ERROR;
  } else if (rv->status[0] && rv->status_role != THEME_INACTIVE) {
    f->status = rv->status;
    f->status_role = rv->status_role;
  } else if (over) {
    snprintf(rv->note, sizeof rv->note, "conc %d > cap %d: %d queue in the server%s",
             rv->snap.concurrency.target, cap, rv->snap.concurrency.target - cap,
             attached ? "" : "; c raises it");
    f->status = rv->note;
    f->status_role = THEME_WARNING;
  } else if (attached) {
    f->status = "attached: not launched here, no restarts";
    f->status_role = THEME_INACTIVE;
  } else if (rv->status[0]) {
    f->status = rv->status;
    f->status_role = rv->status_role;
  }
}

void runview_render(struct runview *rv, struct ui_grid *g, const struct ui_layout *l,
                    const struct ui_glyphs *gl) {
  if (!ui_frame_begin(g, l, gl))
    return;
  render_header(rv, g, l->slot[UI_SLOT_HEADER], gl);
  render_progress(rv, g, l->slot[UI_SLOT_PROGRESS], gl);
  render_throughput(rv, g, l->slot[UI_SLOT_THROUGHPUT], gl);
  render_accept(rv, g, l->slot[UI_SLOT_ACCEPT], gl);
  render_latency(rv, g, l->slot[UI_SLOT_LATENCY], gl);
  render_server_load(rv, g, l->slot[UI_SLOT_SERVER_LOAD], gl);
  render_gpus(rv, g, l->slot[UI_SLOT_GPU], gl);
  if (sweep_over(rv)) /* the whole log stays one key away (l) */
    render_sweep_end(rv, g, l->slot[UI_SLOT_LOG], gl);
  else
    render_log(rv, g, l->slot[UI_SLOT_LOG], gl);
}

void runview_set_status(struct runview *rv, enum theme_role role, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(rv->status, sizeof rv->status, fmt, ap);
  va_end(ap);
  rv->status_role = role;
}

/* The m prompt: a bare value is a new KV cache size (the generic kv-cache
 * knob: --mem-fraction-static on SGLang, --gpu-memory-utilization on vLLM,
 * -c tokens on llama.cpp); KEY=VALUE sets any other server flag (as --set
 * does). The run checks it against the engine before anything stops. */
static bool knob_key(struct runview *rv, int key, struct ui_cmd *cmd) {
  size_t len = strlen(rv->knob_value);
  if (key == UI_KEY_ESCAPE) {
    rv->editing_knob = false;
  } else if (key == UI_KEY_BACKSPACE) {
    if (len)
      rv->knob_value[len - 1] = '\0';
  } else if (key == UI_KEY_ENTER) {
    rv->editing_knob = false;
    if (!rv->knob_value[0])
      return true;
    if (strchr(rv->knob_value, '=')) {
      struct st_err err = {{0}};
      const char *value;
      if (run_override_split(rv->knob_value, cmd->knob, sizeof cmd->knob, &value, &err) != 0) {
        runview_set_status(rv, THEME_ERROR, "%s", err.msg);
        return true;
      }
      snprintf(cmd->value, sizeof cmd->value, "%s", value);
    } else {
      snprintf(cmd->knob, sizeof cmd->knob, "kv-cache");
      snprintf(cmd->value, sizeof cmd->value, "%s", rv->knob_value);
    }
    cmd->kind = UI_CMD_RESTART_WITH;
  } else if (key > 0x20 && key < 0x7f && len + 1 < sizeof rv->knob_value) {
    rv->knob_value[len] = (char)key;
    rv->knob_value[len + 1] = '\0';
  } else {
    return false;
  }
  return true;
}

static bool on_key(void *self, int key, struct ui_ctx *ctx) {
  struct runview *rv = self;
  struct ui_cmd *cmd = &ctx->cmd;
  if (rv->confirm != RUNVIEW_CONFIRM_NONE) {
    enum runview_confirm asked = rv->confirm;
    rv->confirm = RUNVIEW_CONFIRM_NONE;
    if (key == 'y' || key == 'Y')
      cmd->kind = asked == RUNVIEW_CONFIRM_QUIT ? UI_CMD_QUIT : UI_CMD_HOME;
    return true;
  }
  if (rv->editing_knob)
    return knob_key(rv, key, cmd);
  bool measuring = rv->have_snap && rv->snap.progress.phase == SNAP_PHASE_MEASURING;
  bool attached = rv->snap.server.attached;
  int target = rv->snap.concurrency.target;
  int cap;
  switch (key) {
  case '+':
  case '-':
    if (!measuring) {
      runview_set_status(rv, THEME_WARNING, "concurrency changes while a point is measured");
      return true;
    }
    cmd->kind = UI_CMD_SET_CONCURRENCY;
    cmd->conc = key == '+' ? (target > 0 ? target * 2 : 1) : (target > 1 ? target / 2 : 1);
    return true;
  case 'm':
  case 'c':
    if (attached) {
      runview_set_status(rv, THEME_WARNING,
                         "attached: servetop did not launch this server, so it cannot restart it");
      return true;
    }
    if (runview_finished(rv)) {
      runview_set_status(rv, THEME_WARNING, "the run is over: no server to restart");
      return true;
    }
    if (key == 'm') {
      rv->editing_knob = true;
      rv->knob_value[0] = '\0';
      return true;
    }
    /* over the cap (between two segments too: the run takes it at the next) */
    if (!runview_over_cap(rv, &cap)) {
      runview_set_status(rv, THEME_WARNING, "the concurrency is within the batch cap: nothing to raise");
      return true;
    }
    cmd->kind = UI_CMD_RESTART_WITH;
    snprintf(cmd->knob, sizeof cmd->knob, "max-batch");
    snprintf(cmd->value, sizeof cmd->value, "%d", target);
    return true;
  case 'l':
    cmd->kind = UI_CMD_OPEN_LOG;
    return true;
  case 'b':
    if (runview_finished(rv) || !rv->have_snap)
      cmd->kind = UI_CMD_HOME;
    else
      rv->confirm = RUNVIEW_CONFIRM_BACK;
    return true;
  case UI_KEY_PAGE_UP:
  case UI_KEY_PAGE_DOWN:
    rv->log_back += key == UI_KEY_PAGE_UP ? 5 : -5; /* clamped when drawn */
    if (rv->log_back < 0)
      rv->log_back = 0;
    return true;
  case UI_KEY_HOME:
    rv->log_back = SNAP_LOG_LINES;
    return true;
  case UI_KEY_END:
    rv->log_back = 0;
    return true;
  case 'q':
  case 'Q':
    if (runview_server_up(rv) || (rv->have_snap && !runview_finished(rv)))
      rv->confirm = RUNVIEW_CONFIRM_QUIT;
    else
      cmd->kind = UI_CMD_QUIT;
    return true;
  default:
    return false;
  }
}

static bool on_click(void *self, int x, int y, struct ui_ctx *ctx) {
  struct runview *rv = self;
  if (rv->confirm != RUNVIEW_CONFIRM_NONE || rv->editing_knob)
    return false;
  if (!ui_rect_contains(ctx->layout->slot[UI_SLOT_LOG], x, y))
    return false;
  if (rv->log_back > 0)
    rv->log_back = 0; /* follows again */
  else
    ctx->cmd.kind = UI_CMD_OPEN_LOG;
  return true;
}

static bool on_wheel(void *self, int x, int y, int lines, struct ui_ctx *ctx) {
  struct runview *rv = self;
  if (!ui_rect_contains(ctx->layout->slot[UI_SLOT_LOG], x, y))
    return false;
  rv->log_back -= lines; /* wheel up (negative) goes back in time */
  if (rv->log_back < 0)
    rv->log_back = 0;
  return true;
}

static void render(void *self, struct ui_grid *g, const struct ui_ctx *ctx) {
  runview_render(self, g, ctx->layout, ctx->gl);
}

const struct ui_screen runview_screen = {
    .name = "run",
    .help_title = "Run view keys",
    .keys = keys,
    .n_keys = ST_ARRAY_LEN(keys),
    .view = UI_VIEW_RUN,
    .key = on_key,
    .click = on_click,
    .wheel = on_wheel,
    .render = render,
    .footer = footer,
};
