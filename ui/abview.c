/* The A/B view: two arms, their ratios and the sweep curve (pure; no ncurses). */
#include "abview.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ui_util.h"

void abview_init(struct abview *ab, const struct recipe *off, const struct recipe *mtp) {
  runview_init(&ab->arm[AB_OFF]);
  runview_init(&ab->arm[AB_MTP]);
  ab->recipe[AB_OFF] = off;
  ab->recipe[AB_MTP] = mtp;
  ab->confirm_quit = false;
  ab->help_shown = false;
  ab->status[0] = '\0';
  ab->status_role = THEME_MAIN;
}

static double pct_or_nan(const struct snap_percentiles *p, double v) {
  return p->valid ? v : (double)NAN;
}

size_t abview_rows(const struct abview *ab, struct ab_row *rows, size_t max_rows) {
  static const struct {
    const char *label;
    bool higher_is_better;
    char unit;
  } spec[] = {
      {"output tok/s", true, 'n'}, {"total tok/s", true, 'n'}, {"req/s", true, 'n'},
      {"tok/s/user", true, 'n'},   {"TTFT p50", false, 'm'},   {"TPOT p50", false, 'm'},
      {"ITL p50", false, 'm'},     {"E2EL p50", false, 'm'},   {"accept len", true, 'n'},
      {"KV tokens", true, 'k'},
  };
  size_t n = ST_ARRAY_LEN(spec) < max_rows ? ST_ARRAY_LEN(spec) : max_rows;
  for (size_t i = 0; i < n; i++) {
    rows[i].label = spec[i].label;
    rows[i].higher_is_better = spec[i].higher_is_better;
    rows[i].unit = spec[i].unit;
  }
  for (int a = 0; a < 2; a++) {
    const struct runview *rv = &ab->arm[a];
    const struct snap_run *s = &rv->snap;
    bool have = rv->have_snap;
    const struct snap_rates *w = &s->throughput.run;
    const struct snap_latency *lat = &s->latency;
    double v[] = {
        have && w->valid ? w->output_tok_per_s : (double)NAN,
        have && w->valid ? w->total_tok_per_s : (double)NAN,
        have && w->valid ? w->req_per_s : (double)NAN,
        have && lat->tpot.run.valid && lat->tpot.run.p50_ms > 0 ? 1000.0 / lat->tpot.run.p50_ms
                                                                : (double)NAN,
        have ? pct_or_nan(&lat->ttft.run, lat->ttft.run.p50_ms) : (double)NAN,
        have ? pct_or_nan(&lat->tpot.run, lat->tpot.run.p50_ms) : (double)NAN,
        have ? pct_or_nan(&lat->itl.run, lat->itl.run.p50_ms) : (double)NAN,
        have ? pct_or_nan(&lat->e2el.run, lat->e2el.run.p50_ms) : (double)NAN,
        have && s->spec.accept_length_valid ? s->spec.accept_length : (double)NAN,
        have && s->load.max_total_num_tokens_valid ? (double)s->load.max_total_num_tokens
                                                    : (double)NAN,
    };
    for (size_t i = 0; i < n; i++)
      rows[i].value[a] = v[i];
  }
  return n;
}

size_t abview_curve(const struct abview *ab, int arm, double *x, double *y, size_t max_points) {
  const struct runview *rv = &ab->arm[arm];
  const struct recipe *r = ab->recipe[arm];
  size_t n = 0;
  for (size_t i = 0; i < rv->n_points && n < max_points; i++) {
    const struct runview_point *p = &rv->points[i];
    int gpus = r && p->point_index >= 0 && (size_t)p->point_index < r->n_points
                   ? r->points[p->point_index].tp
                   : 1;
    x[n] = p->tpot_p50_ms > 0 ? 1000.0 / p->tpot_p50_ms : (double)NAN;
    y[n] = p->output_tok_per_s / (gpus > 0 ? gpus : 1);
    n++;
  }
  return n;
}

/* ---------------------------------------------------------------- drawing */

static void fmt_value(double v, char unit, char *buf, size_t n) {
  if (unit == 'm')
    ui_fmt_ms(v, buf, n);
  else
    ui_fmt_si(v, buf, n);
}

static int put(struct ui_grid *g, int x, int y, int x_end, const char *text, enum theme_role role,
               const struct ui_glyphs *gl) {
  if (x >= x_end)
    return x;
  return x + ui_grid_text(g, x, y, x_end - x, text, role, gl->braille);
}

static void put_right(struct ui_grid *g, int x_end, int y, int w, const char *text,
                      enum theme_role role, const struct ui_glyphs *gl) {
  int len = ui_text_cells(text);
  ui_grid_text(g, x_end - (len < w ? len : w), y, w, text, role, gl->braille);
}

enum { ROWS_Y = 1, LABEL_W = 13 };  /* rows start one line into the box */

static void render_arm(struct abview *ab, int arm, struct ui_grid *g, struct ui_rect box,
                       const struct ab_row *rows, size_t n_rows, double chart_max,
                       const struct ui_glyphs *gl) {
  const struct runview *rv = &ab->arm[arm];
  const struct recipe *r = ab->recipe[arm];
  enum theme_role arm_role = arm == AB_MTP ? THEME_ARM_MTP : THEME_ARM_OFF;
  char title[160];
  snprintf(title, sizeof title, "%s%s%s", arm == AB_MTP ? "MTP" : "off", gl->separator,
           r ? r->name : "not loaded");
  ui_box(g, box, title, THEME_BORDER, arm_role, gl);
  struct ui_rect in = ui_rect_inner(box);
  int end = in.x + in.w;
  if (!rv->have_snap) {
    put(g, in.x + 1, in.y, end, r ? "waiting for its run" : "no recipe: load a past run or pick a twin",
        THEME_INACTIVE, gl);
  } else {
    char buf[96];
    snprintf(buf, sizeof buf, "%s%sserver %s%sconc %d", snap_run_phase_name(rv->snap.progress.phase),
             gl->separator, snap_server_state_name(rv->snap.server.state), gl->separator,
             rv->snap.concurrency.target);
    put(g, in.x + 1, in.y, end, buf, THEME_MAIN, gl);
  }
  for (size_t i = 0; i < n_rows && ROWS_Y + (int)i < in.h; i++) {
    int y = in.y + ROWS_Y + (int)i;
    put(g, in.x + 1, y, end, rows[i].label, THEME_INACTIVE, gl);
    char v[16];
    fmt_value(rows[i].value[arm], rows[i].unit, v, sizeof v);
    put_right(g, in.x + LABEL_W + 9, y, 9, v, isnan(rows[i].value[arm]) ? THEME_INACTIVE : THEME_MAIN,
              gl);
  }
  /* output tok/s over time on the scale both arms share */
  int chart_y = in.y + ROWS_Y + (int)n_rows + 1;
  int chart_h = in.y + in.h - chart_y;
  if (chart_h >= 2 && in.w > 10) {
    double values[RUNVIEW_HISTORY];
    size_t want = (size_t)(in.w - 2) * (size_t)ui_chart_samples_per_col(gl);
    size_t n = runview_series_copy(rv, RUNVIEW_OUTPUT_TOK_S, values,
                                   want < RUNVIEW_HISTORY ? want : RUNVIEW_HISTORY);
    struct ui_series s = {values, n, arm_role};
    struct ui_chart_opts o = {.y_min = 0, .y_max = chart_max};
    ui_chart(g, (struct ui_rect){in.x + 1, chart_y, in.w - 2, chart_h}, &s, 1, &o, gl);
  }
}

static void render_ratio(struct ui_grid *g, struct ui_rect box, const struct ab_row *rows,
                         size_t n_rows, const struct ui_glyphs *gl) {
  ui_box(g, box, "ratio", THEME_BORDER, THEME_TITLE, gl);
  struct ui_rect in = ui_rect_inner(box);
  put_right(g, in.x + in.w - 1, in.y, in.w - 1, "MTP/off", THEME_HEADER, gl);
  for (size_t i = 0; i < n_rows && ROWS_Y + (int)i < in.h; i++) {
    int y = in.y + ROWS_Y + (int)i;
    double a = rows[i].value[AB_OFF], b = rows[i].value[AB_MTP];
    char text[24];
    enum theme_role role = THEME_INACTIVE;
    if (isnan(a) || isnan(b) || a == 0) {
      snprintf(text, sizeof text, "-");
    } else {
      double ratio = b / a;
      snprintf(text, sizeof text, "%.2f%s", ratio, gl->braille ? "×" : "x");
      bool better = rows[i].higher_is_better ? ratio > 1.0 : ratio < 1.0;
      bool same = fabs(ratio - 1.0) < 0.02;
      role = same ? THEME_MAIN : better ? THEME_OK : THEME_WARNING;
    }
    put_right(g, in.x + in.w - 1, y, in.w - 1, text, role, gl);
  }
}

static void render_curve(struct abview *ab, struct ui_grid *g, struct ui_rect box,
                         const struct ui_glyphs *gl) {
  ui_box(g, box, "Throughput per GPU vs interactivity (one point per concurrency)", THEME_BORDER,
         THEME_TITLE, gl);
  struct ui_rect in = ui_rect_inner(box);
  if (in.h < 3 || in.w < 20)
    return;
  double x[2][RUNVIEW_MAX_POINTS], y[2][RUNVIEW_MAX_POINTS];
  struct ui_xy_series s[2];
  size_t total = 0;
  for (int a = 0; a < 2; a++) {
    size_t n = abview_curve(ab, a, x[a], y[a], RUNVIEW_MAX_POINTS);
    s[a] = (struct ui_xy_series){x[a], y[a], n, a == AB_MTP ? THEME_ARM_MTP : THEME_ARM_OFF};
    total += n;
  }
  int end = in.x + in.w;
  int x0 = in.x + 1;
  x0 = put(g, x0, in.y, end, "tok/s/gpu ", THEME_INACTIVE, gl);
  x0 = put(g, x0 + 1, in.y, end, "off", THEME_ARM_OFF, gl);
  put(g, x0 + 2, in.y, end, "MTP", THEME_ARM_MTP, gl);
  if (total == 0) {
    put(g, in.x + 1, in.y + 1, end, "no finished sweep point yet", THEME_INACTIVE, gl);
    return;
  }
  enum { AXIS = 7 };
  struct ui_rect area = {in.x + AXIS, in.y + 1, in.w - AXIS - 1, in.h - 2};
  double x_max, y_max;
  ui_xy_chart(g, area, s, 2, 0, 0, gl, &x_max, &y_max);
  char label[32];
  ui_grid_text(g, in.x + 1, area.y, AXIS - 2, ui_fmt_si(y_max, label, sizeof label), THEME_INACTIVE,
               gl->braille);
  ui_grid_text(g, in.x + 1, area.y + area.h - 1, AXIS - 2, "0", THEME_INACTIVE, gl->braille);
  char xl[48], v[16];
  snprintf(xl, sizeof xl, "%s tok/s/user", ui_fmt_si(x_max, v, sizeof v));
  put_right(g, end - 1, in.y + in.h - 1, in.w - AXIS, xl, THEME_INACTIVE, gl);
  put(g, area.x, in.y + in.h - 1, end, "0  interactivity", THEME_INACTIVE, gl);
}

const struct ui_key_help abview_key_help[] = {
    {"b", "back to the recipes (when both arms are done)"},
    {"?", "this help (any key closes it)"},
    {"q", "quit; asks first and stops the server when one is up"},
};
const size_t abview_key_help_count = ST_ARRAY_LEN(abview_key_help);

static void render_footer(const struct abview *ab, struct ui_grid *g, struct ui_rect f,
                          const struct ui_glyphs *gl);

void abview_render(struct abview *ab, struct ui_grid *g, const struct ui_layout *l,
                   const struct ui_glyphs *gl) {
  ui_grid_clear(g);
  if (l->too_small) {
    char msg[96];
    snprintf(msg, sizeof msg, "terminal %dx%d is too small: servetop needs %dx%d", l->cols, l->rows,
             UI_MIN_COLS, UI_MIN_ROWS);
    ui_grid_text(g, 0, 0, l->cols, msg, THEME_WARNING, gl->braille);
    return;
  }
  struct ui_rect h = l->slot[UI_SLOT_HEADER];
  ui_grid_fill(g, h, THEME_HEADER);
  char head[256];
  snprintf(head, sizeof head, " servetop%sA/B: MTP against its non-MTP twin, same scales", gl->separator);
  put(g, h.x, h.y, h.x + h.w, head, THEME_HEADER, gl);

  struct ab_row rows[16];
  size_t n_rows = abview_rows(ab, rows, ST_ARRAY_LEN(rows));
  /* one scale for both arms' throughput charts */
  double chart_max = 0;
  for (int a = 0; a < 2; a++) {
    double values[RUNVIEW_HISTORY];
    size_t n = runview_series_copy(&ab->arm[a], RUNVIEW_OUTPUT_TOK_S, values, RUNVIEW_HISTORY);
    for (size_t i = 0; i < n; i++)
      if (!isnan(values[i]) && values[i] > chart_max)
        chart_max = values[i];
  }
  if (chart_max <= 0)
    chart_max = 1;
  render_arm(ab, AB_OFF, g, l->slot[UI_SLOT_ARM_A], rows, n_rows, chart_max, gl);
  render_ratio(g, l->slot[UI_SLOT_RATIO], rows, n_rows, gl);
  render_arm(ab, AB_MTP, g, l->slot[UI_SLOT_ARM_B], rows, n_rows, chart_max, gl);
  render_curve(ab, g, l->slot[UI_SLOT_CURVE], gl);
  render_footer(ab, g, l->slot[UI_SLOT_FOOTER], gl);
  if (ab->help_shown)
    ui_help_box(g, l->cols, l->rows, "A/B view keys", abview_key_help, abview_key_help_count, gl);
}

static void render_footer(const struct abview *ab, struct ui_grid *g, struct ui_rect f,
                          const struct ui_glyphs *gl) {
  int end = f.x + f.w;
  if (ab->confirm_quit) {
    put(g, f.x, f.y, end, "A server is up: stop it and quit? y / n", THEME_WARNING, gl);
    return;
  }
  int x = put(g, f.x, f.y, end, "b", THEME_HOTKEY, gl);
  x = put(g, x + 1, f.y, end, "recipes (when done)", THEME_MAIN, gl);
  x = put(g, x + 2, f.y, end, "q", THEME_HOTKEY, gl);
  x = put(g, x + 1, f.y, end, "quit", THEME_MAIN, gl);
  x = put(g, x + 2, f.y, end, "?", THEME_HOTKEY, gl);
  x = put(g, x + 1, f.y, end, "help", THEME_MAIN, gl);
  put(g, x + 3, f.y, end, ab->status, ab->status_role, gl);
}
