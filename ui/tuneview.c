/* The Tune view: the search's points, frontier, table and progress (pure; no ncurses). */
#include "tuneview.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ui_util.h"

static const char *const stat_names[TUNE_N_STATS] = {"p50", "p90", "p99"};

void tuneview_init(struct tuneview *tv, const char *recipe, const struct tune_space *space,
                   const struct tune_slo *slo) {
  memset(tv, 0, sizeof *tv);
  snprintf(tv->recipe, sizeof tv->recipe, "%s", recipe ? recipe : "");
  tv->space = space;
  if (slo)
    tv->slo = *slo;
  tv->stat = TUNE_STAT_P99;
  tv->res.winner = tv->res.runner_up = -1;
  tv->st.config = -1;
}

void tuneview_fini(struct tuneview *tv) {
  tune_result_free(&tv->res);
  memset(tv, 0, sizeof *tv);
}

void tuneview_update(struct tuneview *tv, const struct run_tune_status *st,
                     struct tune_result *res) {
  if (st) {
    tv->st = *st;
    tv->have_status = true;
  }
  if (res) {
    tune_result_free(&tv->res);
    tv->res = *res;
    memset(res, 0, sizeof *res);
    res->winner = res->runner_up = -1;
  }
  if (tv->res.n_configs && tv->sel >= tv->res.n_configs)
    tv->sel = tv->res.n_configs - 1;
}

char tuneview_glyph(size_t config, bool holds) {
  if (config >= 26)
    return holds ? '+' : '.';
  return (char)((holds ? 'A' : 'a') + (int)config);
}

long tuneview_best(const struct tuneview *tv) {
  const struct tune_result *r = &tv->res;
  if (r->winner >= 0 && (size_t)r->winner < r->n_configs)
    return r->winner;
  return tune_best_config(r, -1); /* while it runs: the best so far */
}

bool tuneview_probe_at(const struct tuneview *tv, size_t probe, struct tune_point *out,
                       bool *holds) {
  const struct tune_probe *p = &tv->res.probes[probe];
  *out = p->pt;
  *holds = tune_probe_counts(&tv->res, probe); /* what the search judged */
  if (tv->stat == TUNE_STAT_P99)
    return true;
  if (!p->pt.by_stat_valid)
    return false;
  for (int f = 0; f < TUNE_N_FIGURES; f++) /* the latencies; the tok/s per user is one */
    if (f != TUNE_MIN_TOK_S_PER_USER)
      out->figure[f] = p->pt.by_stat[tv->stat][f];
  /* judged again at this percentile; a configuration that died counts for nothing */
  bool dead = p->config < tv->res.n_configs &&
              tv->res.configs[p->config].status == TUNE_CFG_START_FAILED;
  *holds = !dead && tune_slo_holds(&tv->slo, out);
  return true;
}

/* Whether any probe kept figures at percentiles other than p99. */
static bool have_other_stats(const struct tuneview *tv) {
  for (size_t i = 0; i < tv->res.n_probes; i++)
    if (tv->res.probes[i].pt.by_stat_valid)
      return true;
  return false;
}

/* ---------------------------------------------------------------- layout */

enum { PROGRESS_H = 2, CHART_MIN_H = 11, TABLE_MIN_H = 6 };

void tuneview_layout(struct ui_rect body, size_t n_configs, struct tuneview_layout *out) {
  memset(out, 0, sizeof *out);
  out->progress = (struct ui_rect){body.x, body.y, body.w, PROGRESS_H};
  int avail = body.h - PROGRESS_H;
  int chart_min = avail * 11 / 20 > CHART_MIN_H ? avail * 11 / 20 : CHART_MIN_H;
  int table_max = avail - chart_min;
  if (table_max < TABLE_MIN_H)
    table_max = TABLE_MIN_H;
  /* borders, header, one line per configuration, the selected one's reason */
  int table_h = (int)(n_configs < 64 ? n_configs : 64) + 4;
  if (table_h < TABLE_MIN_H)
    table_h = TABLE_MIN_H;
  if (table_h > table_max)
    table_h = table_max;
  if (table_h > avail)
    table_h = avail > 0 ? avail : 0;
  int chart_h = avail - table_h;
  out->chart = (struct ui_rect){body.x, body.y + PROGRESS_H, body.w, chart_h > 0 ? chart_h : 0};
  out->table = (struct ui_rect){body.x, body.y + PROGRESS_H + out->chart.h, body.w, table_h};
}

/* ---------------------------------------------------------------- drawing */

/* The role of configuration i's holding points: a colour per configuration, cycled. */
static enum theme_role config_role(size_t i) {
  static const enum theme_role roles[] = {THEME_CHART_OUTPUT, THEME_CHART_TOTAL, THEME_CHART_RPS,
                                          THEME_CHART_ACCEPT, THEME_ARM_OFF, THEME_ARM_MTP};
  return roles[i % ST_ARRAY_LEN(roles)];
}

static void describe(const struct tuneview *tv, size_t i, char *buf, size_t n) {
  if (tv->space && i < tv->res.n_configs)
    tune_config_describe(tv->space, &tv->res.configs[i].cfg, buf, n);
  else
    snprintf(buf, n, "configuration %zu", i + 1);
  if (!buf[0])
    snprintf(buf, n, "as the recipe says");
}

/* A search was started and has not ended (before its first status too). */
static bool running(const struct tuneview *tv) {
  return !tv->have_status || !tv->st.over;
}

/* The search ended on its budget (points or time) rather than by a stop or an answer. */
static bool budget_spent(const struct tuneview *tv) {
  return tv->st.end == TUNE_END_POINT_BUDGET || tv->st.end == TUNE_END_TIME_BUDGET;
}

static bool per_gpu(const struct tuneview *tv) {
  return tv->have_status && tv->st.n_gpus > 0;
}

/* "ttft<=2000ms tpot<=50ms user>=20tok/s" (the SLO's keys are ttft_p99_ms, ...). */
static void slo_text(const struct tune_slo *slo, char *buf, size_t len) {
  size_t used = 0;
  buf[0] = '\0';
  for (int f = 0; f < TUNE_N_FIGURES && used < len; f++) {
    if (!slo->set[f])
      continue;
    const char *key = tune_figure_key((enum tune_figure)f);
    int n = f == TUNE_MIN_TOK_S_PER_USER
                ? snprintf(buf + used, len - used, "%suser>=%gtok/s", used ? " " : "",
                           slo->target[f])
                : snprintf(buf + used, len - used, "%s%.*s<=%gms", used ? " " : "",
                           (int)strcspn(key, "_"), key, slo->target[f]);
    used += n > 0 ? (size_t)n : 0;
  }
}

static void render_header(const struct tuneview *tv, struct ui_grid *g, struct ui_rect h,
                          const struct ui_glyphs *gl) {
  ui_grid_fill(g, h, THEME_HEADER);
  const char *state = !tv->have_status      ? "starting"
                      : !tv->st.over        ? "searching"
                      : tv->st.failed       ? "failed"
                      : budget_spent(tv)    ? "budget spent"
                      : tv->st.end == TUNE_END_STOPPED ? "stopped"
                                            : "done";
  char head[600];
  snprintf(head, sizeof head, " servetop%stune %s%s%s%s%s", gl->separator, tv->recipe,
           gl->separator, state, gl->separator, stat_names[tv->stat]);
  int x = ui_put(g, h.x, h.y, h.x + h.w, head, THEME_HEADER, gl);
  if (tv->have_status && tv->st.simulated) /* as the run view says it */
    ui_put(g, x, h.y, h.x + h.w, "  SIMULATED", THEME_WARNING, gl);
}

static void render_progress(const struct tuneview *tv, struct ui_grid *g, struct ui_rect r,
                            const struct ui_glyphs *gl) {
  if (r.h < 1)
    return;
  int end = r.x + r.w;
  char line[1100], a[16], b[16], c[16];
  const struct run_tune_status *st = &tv->st;
  snprintf(line, sizeof line, " %d point%s%s%s elapsed", tv->res.points,
           tv->res.points == 1 ? "" : "s", gl->separator,
           ui_fmt_duration_s(st->elapsed_s, a, sizeof a));
  int x = ui_put(g, r.x, r.y, end, line, THEME_MAIN, gl);
  if (st->budget_s > 0) {
    snprintf(line, sizeof line, " of %s budget", ui_fmt_duration_s(st->budget_s, b, sizeof b));
    x = ui_put(g, x, r.y, end, line, THEME_MAIN, gl);
  }
  if (running(tv)) {
    if (st->eta_valid)
      snprintf(line, sizeof line, "%sETA %s", gl->separator,
               ui_fmt_duration_s(st->eta_s, c, sizeof c));
    else
      snprintf(line, sizeof line, "%sETA -", gl->separator);
    x = ui_put(g, x, r.y, end, line, THEME_MAIN, gl);
  }
  /* a bar of the budget spent, in what is left of the line */
  int bar_w = end - x - 4 < 30 ? end - x - 4 : 30;
  if (st->budget_s > 0 && bar_w >= 8) {
    struct ui_bar_segment seg = {st->elapsed_s, THEME_CHART_OUTPUT, '#'};
    double total = st->budget_s;
    ui_bar(g, end - bar_w - 1, r.y, bar_w, &seg, 1, total, THEME_BAR_FREE, gl);
  }
  if (r.h < 2)
    return;
  /* what it does now, or how it ended */
  enum theme_role role = THEME_INACTIVE;
  char desc[256];
  if (running(tv) && st->config >= 0 && (size_t)st->config < tv->res.n_configs) {
    describe(tv, (size_t)st->config, desc, sizeof desc);
    if (st->concurrency > 0) /* the driver's message says the same in its words */
      snprintf(line, sizeof line, " now %c %s at concurrency %d",
               tuneview_glyph((size_t)st->config, true), desc, st->concurrency);
    else
      snprintf(line, sizeof line, " now %c %s%s%s", tuneview_glyph((size_t)st->config, true), desc,
               st->message[0] ? gl->separator : "", st->message);
  } else if (tv->have_status) {
    snprintf(line, sizeof line, " %s", st->message[0] ? st->message : (st->over ? "over" : ""));
    role = st->failed ? THEME_ERROR : st->over ? THEME_OK : THEME_INACTIVE;
    if (st->over && st->dir[0]) {
      size_t n = strlen(line);
      snprintf(line + n, sizeof line - n, "%s%s", gl->separator, ui_path_shown(st->dir));
    }
  } else {
    snprintf(line, sizeof line, " starting the search...");
  }
  ui_put(g, r.x, r.y + 1, end, line, role, gl);
}

/* Cell of a value on a scale 0..max across n cells. */
static int scale_cell(double v, double max, int n) {
  double f = v / max;
  f = f < 0 ? 0 : f > 1 ? 1 : f;
  return (int)lround(f * (n - 1));
}

static void render_chart(const struct tuneview *tv, struct ui_grid *g, struct ui_rect box,
                         const struct ui_glyphs *gl) {
  char title[400], slo[256];
  slo_text(&tv->slo, slo, sizeof slo);
  snprintf(title, sizeof title, "Throughput per %s vs interactivity at %s%sSLO %s",
           per_gpu(tv) ? "GPU" : "server", stat_names[tv->stat], gl->separator,
           slo[0] ? slo : "none");
  struct ui_rect in = ui_pane(g, box, title, gl);
  if (in.h < 4 || in.w < 30)
    return;
  int end = in.x + in.w;
  const struct tune_result *r = &tv->res;
  long best = tuneview_best(tv);
  bool floor_set = tv->slo.set[TUNE_MIN_TOK_S_PER_USER];
  double floor_v = tv->slo.target[TUNE_MIN_TOK_S_PER_USER];

  /* the legend line */
  char v[16], text[160];
  int x = ui_put(g, in.x + 1, in.y, end, per_gpu(tv) ? "tok/s/GPU " : "tok/s/server ",
                 THEME_INACTIVE, gl);
  x = ui_put(g, x, in.y, end, "A", THEME_CHART_OUTPUT, gl);
  x = ui_put(g, x, in.y, end, " holds ", THEME_INACTIVE, gl);
  x = ui_put(g, x, in.y, end, "a", THEME_INACTIVE, gl);
  x = ui_put(g, x, in.y, end, " fails  ", THEME_INACTIVE, gl);
  x = ui_put(g, x, in.y, end, gl->braille ? "⠤⠤" : "..", THEME_OK, gl);
  x = ui_put(g, x, in.y, end, " frontier  ", THEME_INACTIVE, gl);
  if (best >= 0) {
    snprintf(text, sizeof text, "%c", tuneview_glyph((size_t)best, true));
    x = ui_put(g, x, in.y, end, text, THEME_SELECTED, gl);
    x = ui_put(g, x, in.y, end, " best  ", THEME_INACTIVE, gl);
  }
  if (floor_set) {
    snprintf(text, sizeof text, "%s SLO %s tok/s/user", gl->vertical,
             ui_fmt_si(floor_v, v, sizeof v));
    ui_put(g, x, in.y, end, text, THEME_WARNING, gl);
  }

  /* the points at the percentile shown */
  size_t n = r->n_probes;
  double *xs = xcalloc(n + 1, sizeof *xs), *ys = xcalloc(n + 1, sizeof *ys);
  bool *hold = xcalloc(n + 1, sizeof *hold), *shown = xcalloc(n + 1, sizeof *shown);
  double x_max = floor_set ? floor_v * 1.15 : 0, y_max = 0;
  size_t n_shown = 0;
  for (size_t i = 0; i < n; i++) {
    struct tune_point pt;
    if (!tuneview_probe_at(tv, i, &pt, &hold[i]))
      continue;
    xs[i] = pt.figure[TUNE_MIN_TOK_S_PER_USER].point;
    ys[i] = pt.throughput.point;
    if (!isfinite(xs[i]) || !isfinite(ys[i]) || r->probes[i].config >= r->n_configs)
      continue;
    shown[i] = true;
    n_shown++;
    x_max = xs[i] * 1.05 > x_max ? xs[i] * 1.05 : x_max;
    y_max = ys[i] * 1.05 > y_max ? ys[i] * 1.05 : y_max;
  }
  enum { AXIS = 7 };
  struct ui_rect area = {in.x + AXIS, in.y + 1, in.w - AXIS - 1, in.h - 2};
  if (n_shown == 0) {
    ui_put(g, in.x + 1, in.y + 1, end,
           n ? "no point measured at this percentile (p: another)" : "no point measured yet",
           THEME_INACTIVE, gl);
  } else {
    if (!(x_max > 0))
      x_max = 1;
    if (!(y_max > 0))
      y_max = 1;
    /* the SLO floor: a vertical line; points draw over it */
    if (floor_set && floor_v > 0 && floor_v <= x_max) {
      int cx = area.x + scale_cell(floor_v, x_max, area.w);
      for (int row = 0; row < area.h; row++)
        ui_grid_put(g, cx, area.y + row, gl->vertical, THEME_WARNING);
    }
    /* the frontier of the points that hold, as the percentile judges them */
    bool *judged = xcalloc(n + 1, sizeof *judged);
    for (size_t i = 0; i < n; i++)
      judged[i] = shown[i] && hold[i];
    size_t *front = xcalloc(n + 1, sizeof *front);
    size_t n_front = tune_frontier_of(xs, ys, judged, n, front);
    double *fx = xcalloc(n_front + 1, sizeof *fx), *fy = xcalloc(n_front + 1, sizeof *fy);
    for (size_t k = 0; k < n_front; k++) {
      fx[k] = xs[front[k]];
      fy[k] = ys[front[k]];
    }
    struct ui_xy_series fs = {fx, fy, n_front, THEME_OK};
    ui_xy_chart(g, area, &fs, 1, x_max, y_max, gl, NULL, NULL);
    /* every point as its configuration's letter; the best's best point last, reversed */
    for (int pass = 0; pass < 2; pass++)
      for (size_t i = 0; i < n; i++) {
        if (!shown[i] || hold[i] != (pass == 1))
          continue; /* failing points first: a holding one wins a shared cell */
        size_t c = r->probes[i].config;
        char glyph[2] = {tuneview_glyph(c, hold[i]), '\0'};
        ui_grid_put(g, area.x + scale_cell(xs[i], x_max, area.w),
                    area.y + area.h - 1 - scale_cell(ys[i], y_max, area.h), glyph,
                    hold[i] ? config_role(c) : THEME_INACTIVE);
      }
    long bp = best >= 0 ? tune_best_probe(r, (size_t)best) : -1;
    if (bp >= 0 && shown[bp]) {
      char glyph[2] = {tuneview_glyph((size_t)best, true), '\0'};
      ui_grid_put(g, area.x + scale_cell(xs[bp], x_max, area.w),
                  area.y + area.h - 1 - scale_cell(ys[bp], y_max, area.h), glyph, THEME_SELECTED);
    }
    free(fx);
    free(fy);
    free(front);
    free(judged);
    /* the scales */
    ui_grid_text(g, in.x + 1, area.y, AXIS - 2, ui_fmt_si(y_max, v, sizeof v), THEME_INACTIVE,
                 gl->braille);
    ui_grid_text(g, in.x + 1, area.y + area.h - 1, AXIS - 2, "0", THEME_INACTIVE, gl->braille);
    ui_put(g, area.x, in.y + in.h - 1, end, "0  tok/s per user", THEME_INACTIVE, gl);
    snprintf(text, sizeof text, "%s tok/s/user", ui_fmt_si(x_max, v, sizeof v));
    int w = ui_text_cells(text);
    ui_grid_text(g, end - 1 - w, in.y + in.h - 1, w, text, THEME_INACTIVE, gl->braille);
  }
  free(xs);
  free(ys);
  free(hold);
  free(shown);
}

/* Short status words for the table (the full name and the reason go under it). */
static const char *status_word(const struct tuneview *tv, size_t i) {
  const struct tune_config_result *c = &tv->res.configs[i];
  if (running(tv) && tv->st.config == (long)i)
    return "measuring";
  switch (c->status) {
  case TUNE_CFG_BEST_FOUND: return (long)i == tuneview_best(tv) ? "best" : "done";
  case TUNE_CFG_NONE_HOLDS: return "none holds";
  case TUNE_CFG_PRUNED: return "pruned";
  case TUNE_CFG_START_FAILED: return "no start";
  case TUNE_CFG_OUT_OF_BUDGET: return "budget";
  }
  return "?";
}

/* " · ttft p50 120ms tpot p50 12.0ms": the latencies the SLO names at configuration i's best
 * concurrency, at the percentile shown ("" when it has none). */
static void latencies_at_best(const struct tuneview *tv, size_t i, char *buf, size_t len,
                              const struct ui_glyphs *gl) {
  buf[0] = '\0';
  long k = tune_best_probe(&tv->res, i);
  struct tune_point pt;
  bool holds;
  if (k < 0 || !tuneview_probe_at(tv, (size_t)k, &pt, &holds))
    return;
  size_t used = 0;
  for (int f = 0; f < TUNE_MIN_TOK_S_PER_USER && used < len; f++) {
    if (!tv->slo.set[f])
      continue;
    char v[16];
    const char *key = tune_figure_key((enum tune_figure)f);
    int n = snprintf(buf + used, len - used, "%s%.*s %s %s", used ? " " : gl->separator,
                     (int)strcspn(key, "_"), key, stat_names[tv->stat],
                     ui_fmt_ms(pt.figure[f].point, v, sizeof v));
    used += n > 0 ? (size_t)n : 0;
  }
}

enum { COL_GLYPH, COL_CONFIG, COL_STATUS, COL_CONC, COL_GOODPUT, COL_CI, COL_POINTS, N_COLS };

/* Rows of the table shown in a table box of height h. */
static size_t table_rows(int h) {
  return h > 4 ? (size_t)(h - 4) : 0;
}

static void render_table(struct tuneview *tv, struct ui_grid *g, struct ui_rect box,
                         const struct ui_glyphs *gl) {
  const struct tune_result *r = &tv->res;
  char title[96];
  snprintf(title, sizeof title, "Configurations %zu%sgoodput at the best concurrency, 95%% CI",
           r->n_configs, gl->separator);
  struct ui_rect in = ui_pane(g, box, title, gl);
  if (in.h < 2 || in.w < 30)
    return;
  size_t visible = table_rows(box.h);
  ui_list_select(&tv->sel, &tv->top, r->n_configs, (long)tv->sel, visible);
  if (tv->top + visible > r->n_configs) /* a taller table shows more, not blanks */
    tv->top = r->n_configs > visible ? r->n_configs - visible : 0;
  int fixed = 1 + 10 + 5 + 7 + 15 + 3 + N_COLS; /* every column but the configuration's */
  int config_w = in.w - 1 - fixed;
  if (config_w < 10)
    config_w = 10;
  struct ui_table_col cols[N_COLS] = {
      {" ", 1, false},        {"configuration", config_w, false}, {"status", 10, false},
      {"conc", 5, true},      {"goodput", 7, true},               {"95% CI", 15, false},
      {"pts", 3, true},
  };
  size_t n_rows = r->n_configs - tv->top < visible ? r->n_configs - tv->top : visible;
  char(*text)[N_COLS][160] = xcalloc(n_rows + 1, sizeof *text);
  const char **cells = xcalloc((n_rows + 1) * N_COLS, sizeof *cells);
  uint8_t *roles = xcalloc((n_rows + 1) * N_COLS, 1);
  long best = tuneview_best(tv);
  for (size_t k = 0; k < n_rows; k++) {
    size_t i = tv->top + k;
    const struct tune_config_result *c = &r->configs[i];
    char a[16], b[16];
    snprintf(text[k][COL_GLYPH], sizeof text[k][0], "%c", tuneview_glyph(i, true));
    describe(tv, i, text[k][COL_CONFIG], sizeof text[k][0]);
    snprintf(text[k][COL_STATUS], sizeof text[k][0], "%s", status_word(tv, i));
    bool have = c->best_conc > 0;
    snprintf(text[k][COL_CONC], sizeof text[k][0], "%s", have ? "" : "-");
    if (have)
      snprintf(text[k][COL_CONC], sizeof text[k][0], "%d", c->best_conc);
    snprintf(text[k][COL_GOODPUT], sizeof text[k][0], "%s",
             have ? ui_fmt_si(c->goodput.point, a, sizeof a) : "-");
    if (have && isfinite(c->goodput.lo) && isfinite(c->goodput.hi)) {
      ui_fmt_si(c->goodput.lo, a, sizeof a);
      ui_fmt_si(c->goodput.hi, b, sizeof b);
      snprintf(text[k][COL_CI], sizeof text[k][0], "[%s, %s]", a, b);
    } else {
      snprintf(text[k][COL_CI], sizeof text[k][0], "-");
    }
    snprintf(text[k][COL_POINTS], sizeof text[k][0], "%d", c->points);
    enum theme_role role = c->status == TUNE_CFG_START_FAILED ? THEME_ERROR
                           : (long)i == best                 ? THEME_OK
                           : have                            ? THEME_MAIN
                                                             : THEME_INACTIVE;
    if (i == tv->sel)
      role = THEME_SELECTED;
    for (int col = 0; col < N_COLS; col++) {
      cells[k * N_COLS + (size_t)col] = text[k][col];
      roles[k * N_COLS + (size_t)col] = (uint8_t)role;
    }
    if (i != tv->sel)
      roles[k * N_COLS + COL_GLYPH] = (uint8_t)config_role(i);
  }
  struct ui_rect t = {in.x + 1, in.y, in.w - 1, in.h - 1};
  if (r->n_configs == 0)
    ui_put(g, in.x + 1, in.y + 1, in.x + in.w, "no configuration visited yet", THEME_INACTIVE, gl);
  else
    ui_table(g, t, cols, N_COLS, cells, roles, n_rows, THEME_HEADER, gl->braille);
  /* the selected one: its full status and why, on the last line */
  if (tv->sel < r->n_configs) {
    const struct tune_config_result *c = &r->configs[tv->sel];
    char line[700], a[16];
    if (running(tv) && tv->st.config == (long)tv->sel)
      snprintf(line, sizeof line, "%c being measured; holds up to concurrency %d so far",
               tuneview_glyph(tv->sel, true), c->best_conc);
    else if (c->status == TUNE_CFG_BEST_FOUND)
      snprintf(line, sizeof line, "%c holds up to concurrency %d: goodput %s tok/s%s",
               tuneview_glyph(tv->sel, true), c->best_conc,
               ui_fmt_si(c->goodput.point, a, sizeof a),
               (long)tv->sel == best ? ", the best so far" : "");
    else
      snprintf(line, sizeof line, "%c %s%s%s", tuneview_glyph(tv->sel, true),
               tune_status_name(c->status), c->why[0] ? ": " : "", c->why);
    latencies_at_best(tv, tv->sel, line + strlen(line), sizeof line - strlen(line), gl);
    ui_put(g, in.x + 1, in.y + in.h - 1, in.x + in.w,
           line, c->status == TUNE_CFG_START_FAILED ? THEME_ERROR : THEME_INACTIVE, gl);
  }
  if (tv->top > 0 || tv->top + n_rows < r->n_configs) {
    char more[48];
    snprintf(more, sizeof more, " %zu-%zu of %zu ", tv->top + 1, tv->top + n_rows, r->n_configs);
    int w = ui_text_cells(more);
    ui_grid_text(g, box.x + box.w - 2 - w, box.y + box.h - 1, w, more, THEME_BORDER, gl->braille);
  }
  free(text);
  free(cells);
  free(roles);
}

static void render(void *self, struct ui_grid *g, const struct ui_ctx *ctx) {
  struct tuneview *tv = self;
  const struct ui_layout *l = ctx->layout;
  if (!ui_frame_begin(g, l, ctx->gl))
    return;
  render_header(tv, g, l->slot[UI_SLOT_HEADER], ctx->gl);
  struct tuneview_layout tl;
  tuneview_layout(l->slot[UI_SLOT_BODY], tv->res.n_configs, &tl);
  render_progress(tv, g, tl.progress, ctx->gl);
  render_chart(tv, g, tl.chart, ctx->gl);
  render_table(tv, g, tl.table, ctx->gl);
}

/* ---------------------------------------------------------------- keys */

enum { KEY_PCT = 0 }; /* hints that can be inactive */
static const struct ui_key_help keys[] = {
    {"p", "latencies at p50/p90/p99 (the search judges p99)", "pctl", NULL, 'p', 2},
    {"Up/Down k/j", "select a configuration (its why under the table)", "select",
     "j/k", 'j', 3},
    {"PgUp/PgDn Home/End", "scroll the table of configurations", NULL, NULL, 0, 0},
    {"y / n", "(stop question) yes / no", NULL, NULL, 0, 0},
    {"b", "back to the recipes (stops the search: asks)", "back", NULL, 'b', 1},
    UI_KEY_HELP_ROW,
    {"q Esc", "stop, keeping what was measured (asks); over: quit", "stop", "q", 'q', 0},
};

static void footer(void *self, struct ui_footer *f) {
  struct tuneview *tv = self;
  if (tv->confirm_stop) {
    f->prompt = tv->stop_asked ? "Stop the search and go back to the recipes? y / n"
                               : "Stop the search? y / n";
    f->prompt_role = THEME_WARNING;
    f->prompt_hint = "(what was measured is kept in the tune folder)";
    return;
  }
  static struct ui_key_help over[ST_ARRAY_LEN(keys)]; /* once over, q quits */
  if (!running(tv) && tv->have_status) {
    memcpy(over, keys, sizeof over);
    over[ST_ARRAY_LEN(keys) - 1] = (struct ui_key_help){"q", "quit", "quit", NULL, 'q', 0};
    f->keys = over;
    f->n_keys = ST_ARRAY_LEN(over);
  }
  if (tv->res.n_probes && !have_other_stats(tv))
    f->inactive |= 1u << KEY_PCT;
  f->status = tv->status;
  f->status_role = tv->status_role;
}

static void say(struct tuneview *tv, enum theme_role role, const char *text) {
  snprintf(tv->status, sizeof tv->status, "%s", text);
  tv->status_role = role;
}

static bool on_key(void *self, int key, struct ui_ctx *ctx) {
  struct tuneview *tv = self;
  size_t n = tv->res.n_configs;
  if (tv->confirm_stop) {
    bool back = tv->stop_asked;
    tv->confirm_stop = tv->stop_asked = false;
    if (key == 'y' || key == 'Y') {
      if (back) {
        ctx->cmd.kind = UI_CMD_HOME;
      } else {
        ctx->cmd.kind = UI_CMD_TUNE_STOP;
        say(tv, THEME_WARNING, "stopping: the point under way ends, then the search");
      }
    }
    return true;
  }
  switch (key) {
  case 'p': {
    if (n && !have_other_stats(tv)) {
      say(tv, THEME_WARNING, "this search kept its points at p99 only");
      tv->stat = TUNE_STAT_P99;
      return true;
    }
    tv->stat = (enum tune_stat)((tv->stat + 1) % TUNE_N_STATS);
    char text[96];
    snprintf(text, sizeof text, "at %s%s", stat_names[tv->stat],
             tv->stat == TUNE_STAT_P99 ? " (as the search judges)" : " (the search judges p99)");
    say(tv, THEME_INACTIVE, text);
    return true;
  }
  case UI_KEY_UP:
  case 'k':
    if (tv->sel > 0)
      tv->sel--;
    return true;
  case UI_KEY_DOWN:
  case 'j':
    if (tv->sel + 1 < n)
      tv->sel++;
    return true;
  case UI_KEY_PAGE_UP: tv->sel = tv->sel > 5 ? tv->sel - 5 : 0; return true;
  case UI_KEY_PAGE_DOWN: tv->sel = n == 0 ? 0 : tv->sel + 5 < n ? tv->sel + 5 : n - 1; return true;
  case UI_KEY_HOME: tv->sel = 0; return true;
  case UI_KEY_END: tv->sel = n ? n - 1 : 0; return true;
  case 'b':
  case 'B':
    if (running(tv)) {
      tv->confirm_stop = tv->stop_asked = true;
    } else {
      ctx->cmd.kind = UI_CMD_HOME;
    }
    return true;
  case UI_KEY_ESCAPE:
  case 'q':
  case 'Q':
    if (running(tv))
      tv->confirm_stop = true;
    else
      ctx->cmd.kind = key == UI_KEY_ESCAPE ? UI_CMD_HOME : UI_CMD_QUIT;
    return true;
  default: return false;
  }
}

const struct ui_screen tuneview_screen = {
    .name = "tune",
    .help_title = "Tune view keys",
    .keys = keys,
    .n_keys = ST_ARRAY_LEN(keys),
    .view = UI_VIEW_PAGE,
    .key = on_key,
    .render = render,
    .footer = footer,
};
