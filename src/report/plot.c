/* report: one scatter plot drawn with cairo, written as PNG and SVG. */
#include "report/report_internal.h"

#include <cairo-svg.h>
#include <cairo.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- style */
/* Tableau 10: distinct at a glance, the usual palette of plotting libraries. */
static const double palette[][3] = {
    {0x4E, 0x79, 0xA7}, {0xF2, 0x8E, 0x2B}, {0xE1, 0x57, 0x59}, {0x76, 0xB7, 0xB2},
    {0x59, 0xA1, 0x4F}, {0xED, 0xC9, 0x48}, {0xB0, 0x7A, 0xA1}, {0xFF, 0x9D, 0xA7},
    {0x9C, 0x75, 0x5F}, {0xBA, 0xB0, 0xAC},
};
enum { N_COLOURS = sizeof palette / sizeof palette[0], N_MARKERS = 6 };
static const char font_face[] = "sans-serif";
enum { MARKER_R = 6, LABEL_FONT = 13, LEGEND_ROW = 22, LEGEND_W = 320 };

static void set_rgb(cairo_t *cr, const double *c, double alpha) {
  cairo_set_source_rgba(cr, c[0] / 255.0, c[1] / 255.0, c[2] / 255.0, alpha);
}

static const double *series_colour(size_t s) { return palette[s % N_COLOURS]; }
/* The colours come round every 10 series; the marker moves on then too. */
static int series_marker(size_t s) { return (int)((s + s / N_COLOURS) % N_MARKERS); }

static void font(cairo_t *cr, double size, bool bold) {
  cairo_select_font_face(cr, font_face, CAIRO_FONT_SLANT_NORMAL,
                         bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, size);
}

static double text_w(cairo_t *cr, const char *s) {
  cairo_text_extents_t e;
  cairo_text_extents(cr, s, &e);
  return e.x_advance;
}

static void text_at(cairo_t *cr, double x, double y, const char *s) {
  cairo_move_to(cr, x, y);
  cairo_show_text(cr, s);
}

/* s cut (at a character boundary) to fit width, with an ellipsis, into buf. */
static void fit_text(cairo_t *cr, const char *s, double width, char *buf, size_t n) {
  snprintf(buf, n, "%s", s);
  size_t len = strlen(buf);
  if (text_w(cr, buf) <= width)
    return;
  while (len > 0) {
    do
      len--;
    while (len > 0 && ((unsigned char)buf[len] & 0xC0) == 0x80);
    char tmp[512];
    snprintf(tmp, sizeof tmp, "%.*s\xE2\x80\xA6", (int)len, buf); /* "…" */
    if (text_w(cr, tmp) <= width || len == 0) {
      snprintf(buf, n, "%s", tmp);
      return;
    }
  }
}

/* The path of marker m of radius r at (x, y). */
static void marker_path(cairo_t *cr, int m, double x, double y, double r) {
  static const struct {
    int sides;
    double turn; /* of the first corner, in turns from straight up */
    double scale;
  } shapes[N_MARKERS] = {{0, 0, 1.0},     {4, 0.125, 1.2}, {3, 0, 1.3},
                         {4, 0, 1.3},     {3, 0.5, 1.3},   {6, 0, 1.15}};
  if (shapes[m].sides == 0) {
    cairo_new_sub_path(cr);
    cairo_arc(cr, x, y, r, 0, 2 * M_PI);
    return;
  }
  double rr = r * shapes[m].scale;
  for (int k = 0; k < shapes[m].sides; k++) {
    double a = 2 * M_PI * (shapes[m].turn + (double)k / shapes[m].sides);
    double px = x + rr * sin(a), py = y - rr * cos(a);
    if (k == 0)
      cairo_move_to(cr, px, py);
    else
      cairo_line_to(cr, px, py);
  }
  cairo_close_path(cr);
}

static void draw_marker(cairo_t *cr, size_t series, double x, double y, double r, bool hollow) {
  const double *c = series_colour(series);
  marker_path(cr, series_marker(series), x, y, r);
  if (hollow)
    cairo_set_source_rgb(cr, 1, 1, 1);
  else
    set_rgb(cr, c, 0.9);
  cairo_fill_preserve(cr);
  set_rgb(cr, c, 1);
  cairo_set_line_width(cr, hollow ? 2.0 : 1.0);
  cairo_stroke(cr);
}

/* ---------------------------------------------------------------- axes */
/* 1, 2 or 5 times a power of ten, near range / n. */
static double nice_step(double range, int n) {
  double raw = range / n;
  double mag = pow(10, floor(log10(raw)));
  double f = raw / mag;
  return (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * mag;
}

struct axis {
  double max, step; /* from 0 to max, a tick every step */
  bool kilo;        /* tick labels in thousands ("12k") */
};

static void axis_fit(struct axis *a, double data_max) {
  if (!(data_max > 0) || !isfinite(data_max))
    data_max = 1;
  a->step = nice_step(data_max * 1.08, 5);
  a->max = ceil(data_max * 1.08 / a->step) * a->step;
  a->kilo = a->max >= 10000;
}

static void tick_text(const struct axis *a, double v, char *buf, size_t n) {
  double step = a->kilo ? a->step / 1000 : a->step;
  double x = a->kilo ? v / 1000 : v;
  int decimals = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
  if (decimals > 6)
    decimals = 6;
  snprintf(buf, n, "%.*f%s", decimals, fabs(x) < step / 2 ? 0.0 : x, a->kilo ? "k" : "");
}

struct frame {
  double left, top, right, bottom; /* the plot area */
  struct axis xa, ya;
};

static double px(const struct frame *f, double x) {
  return f->left + x / f->xa.max * (f->right - f->left);
}
static double py(const struct frame *f, double y) {
  return f->bottom - y / f->ya.max * (f->bottom - f->top);
}

static bool drawable(const struct plot_point *p) { return isfinite(p->x) && isfinite(p->y); }

static void fit_frame(const struct plot *p, struct frame *f) {
  f->left = 100;
  f->top = 96;
  f->right = REPORT_CHART_W - (p->legend ? LEGEND_W + 30 : 40);
  f->bottom = REPORT_CHART_H - 100;
  double xm = isfinite(p->vline_x) ? p->vline_x : 0, ym = 0;
  for (size_t i = 0; i < p->n_points; i++) {
    const struct plot_point *q = &p->points[i];
    if (!drawable(q))
      continue;
    double xs[] = {q->x, q->x_hi}, ys[] = {q->y, q->y_hi};
    for (size_t k = 0; k < 2; k++) {
      if (isfinite(xs[k]) && xs[k] > xm)
        xm = xs[k];
      if (isfinite(ys[k]) && ys[k] > ym)
        ym = ys[k];
    }
  }
  axis_fit(&f->xa, xm);
  axis_fit(&f->ya, ym);
}

static void draw_axes(cairo_t *cr, const struct plot *p, const struct frame *f) {
  char buf[64];
  font(cr, 13, false);
  cairo_set_line_width(cr, 1);
  for (int k = 0; k * f->xa.step <= f->xa.max * (1 + 1e-9); k++) {
    double v = k * f->xa.step, x = round(px(f, v)) + 0.5;
    cairo_set_source_rgb(cr, 0.88, 0.88, 0.88);
    cairo_move_to(cr, x, f->top);
    cairo_line_to(cr, x, f->bottom);
    cairo_stroke(cr);
    tick_text(&f->xa, v, buf, sizeof buf);
    cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
    text_at(cr, x - text_w(cr, buf) / 2, f->bottom + 20, buf);
  }
  for (int k = 0; k * f->ya.step <= f->ya.max * (1 + 1e-9); k++) {
    double v = k * f->ya.step, y = round(py(f, v)) + 0.5;
    cairo_set_source_rgb(cr, 0.88, 0.88, 0.88);
    cairo_move_to(cr, f->left, y);
    cairo_line_to(cr, f->right, y);
    cairo_stroke(cr);
    tick_text(&f->ya, v, buf, sizeof buf);
    cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
    text_at(cr, f->left - 8 - text_w(cr, buf), y + 4.5, buf);
  }
  cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
  cairo_set_line_width(cr, 1.5);
  cairo_rectangle(cr, f->left, f->top, f->right - f->left, f->bottom - f->top);
  cairo_stroke(cr);
  font(cr, 15, true);
  text_at(cr, (f->left + f->right) / 2 - text_w(cr, p->x_label) / 2, f->bottom + 48, p->x_label);
  cairo_save(cr);
  cairo_translate(cr, 30, (f->top + f->bottom) / 2);
  cairo_rotate(cr, -M_PI / 2);
  text_at(cr, -text_w(cr, p->y_label) / 2, 0, p->y_label);
  cairo_restore(cr);
}

/* The SLO's minimum tok/s per user: the side that fails shaded, a dashed line, its words. */
static void draw_vline(cairo_t *cr, const struct plot *p, const struct frame *f) {
  if (!isfinite(p->vline_x))
    return;
  double x = px(f, p->vline_x);
  cairo_set_source_rgba(cr, 0.85, 0.1, 0.1, 0.06);
  cairo_rectangle(cr, f->left, f->top, x - f->left, f->bottom - f->top);
  cairo_fill(cr);
  static const double dash[] = {8, 5};
  cairo_set_dash(cr, dash, 2, 0);
  cairo_set_source_rgb(cr, 0.72, 0, 0.1);
  cairo_set_line_width(cr, 2);
  cairo_move_to(cr, x, f->top);
  cairo_line_to(cr, x, f->bottom);
  cairo_stroke(cr);
  cairo_set_dash(cr, NULL, 0, 0);
  font(cr, 13, true);
  double w = text_w(cr, p->vline_label);
  /* on the right of the line, or its left when there is no room */
  double tx = x + 6 + w <= f->right ? x + 6 : x - 6 - w;
  /* at the bottom: low throughput at low tok/s per user is where no point lies (and the
   * top right holds the best's words) */
  text_at(cr, tx, f->bottom - 10, p->vline_label);
}

static void draw_watermark(cairo_t *cr, const struct frame *f) {
  cairo_save(cr);
  font(cr, 110, true);
  cairo_set_source_rgba(cr, 0.8, 0.1, 0.1, 0.07);
  cairo_translate(cr, (f->left + f->right) / 2, (f->top + f->bottom) / 2);
  cairo_rotate(cr, -atan2(f->bottom - f->top, f->right - f->left));
  const char *w = "SIMULATED";
  text_at(cr, -text_w(cr, w) / 2, 40, w);
  cairo_restore(cr);
}

static void draw_polyline(cairo_t *cr, const struct frame *f, const struct plot_point *pts,
                          const size_t *idx, size_t n) {
  bool started = false;
  for (size_t k = 0; k < n; k++) {
    const struct plot_point *q = &pts[idx ? idx[k] : k];
    if (!drawable(q))
      continue;
    if (started)
      cairo_line_to(cr, px(f, q->x), py(f, q->y));
    else
      cairo_move_to(cr, px(f, q->x), py(f, q->y));
    started = true;
  }
  cairo_stroke(cr);
}

static void draw_lines(cairo_t *cr, const struct plot *p, const struct frame *f) {
  size_t *idx = xcalloc(p->n_points + 1, sizeof *idx);
  for (size_t s = 0; s < p->n_series; s++) {
    if (!p->series[s].line)
      continue;
    size_t n = 0;
    for (size_t i = 0; i < p->n_points; i++)
      if (p->points[i].series == s)
        idx[n++] = i;
    set_rgb(cr, series_colour(s), 0.6);
    cairo_set_line_width(cr, 2);
    draw_polyline(cr, f, p->points, idx, n);
  }
  free(idx);
  if (p->n_frontier > 0) {
    cairo_set_source_rgba(cr, 0.1, 0.1, 0.1, 0.75);
    cairo_set_line_width(cr, 2.5);
    cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
    draw_polyline(cr, f, p->points, p->frontier, p->n_frontier);
  }
}

static void bar(cairo_t *cr, double x0, double y0, double x1, double y1, bool vertical) {
  cairo_move_to(cr, x0, y0);
  cairo_line_to(cr, x1, y1);
  double c = 3.5; /* caps */
  if (vertical) {
    cairo_move_to(cr, x0 - c, y0);
    cairo_line_to(cr, x0 + c, y0);
    cairo_move_to(cr, x1 - c, y1);
    cairo_line_to(cr, x1 + c, y1);
  } else {
    cairo_move_to(cr, x0, y0 - c);
    cairo_line_to(cr, x0, y0 + c);
    cairo_move_to(cr, x1, y1 - c);
    cairo_line_to(cr, x1, y1 + c);
  }
  cairo_stroke(cr);
}

static void draw_error_bars(cairo_t *cr, const struct plot *p, const struct frame *f) {
  cairo_set_line_width(cr, 1.2);
  for (size_t i = 0; i < p->n_points; i++) {
    const struct plot_point *q = &p->points[i];
    if (!drawable(q))
      continue;
    set_rgb(cr, series_colour(q->series), 0.65);
    if (isfinite(q->y_lo) && isfinite(q->y_hi))
      bar(cr, px(f, q->x), py(f, q->y_lo), px(f, q->x), py(f, q->y_hi), true);
    if (isfinite(q->x_lo) && isfinite(q->x_hi))
      bar(cr, px(f, q->x_lo), py(f, q->y), px(f, q->x_hi), py(f, q->y), false);
  }
}

/* ---------------------------------------------------------------- labels */
struct box {
  double x0, y0, x1, y1;
};

static bool overlaps(const struct box *a, const struct box *b) {
  return a->x0 < b->x1 && b->x0 < a->x1 && a->y0 < b->y1 && b->y0 < a->y1;
}

/* Each point's label beside it: the first of a few places that covers no marker and no
 * label placed before, inside the plot (else the first place). */
static void draw_labels(cairo_t *cr, const struct plot *p, const struct frame *f) {
  struct box *taken = xcalloc(2 * p->n_points + 1, sizeof *taken);
  size_t n_taken = 0;
  for (size_t i = 0; i < p->n_points; i++) {
    const struct plot_point *q = &p->points[i];
    if (drawable(q))
      taken[n_taken++] = (struct box){px(f, q->x) - MARKER_R, py(f, q->y) - MARKER_R,
                                      px(f, q->x) + MARKER_R, py(f, q->y) + MARKER_R};
  }
  font(cr, LABEL_FONT, false);
  for (size_t i = 0; i < p->n_points; i++) {
    const struct plot_point *q = &p->points[i];
    if (!drawable(q) || !q->label[0])
      continue;
    double x = px(f, q->x), y = py(f, q->y), w = text_w(cr, q->label), h = LABEL_FONT;
    const double d = MARKER_R + 3;
    const double at[][2] = {{x + d, y - d},         {x + d, y + d + h},     {x - d - w, y - d},
                            {x - d - w, y + d + h}, {x - w / 2, y - d - 2}, {x - w / 2, y + d + h + 2},
                            {x + d, y + h / 2 - 1}, {x - d - w, y + h / 2 - 1}};
    size_t pick = 0;
    for (size_t k = 0; k < sizeof at / sizeof at[0]; k++) {
      struct box b = {at[k][0] - 1, at[k][1] - h, at[k][0] + w + 1, at[k][1] + 2};
      bool ok = b.x0 >= f->left && b.x1 <= f->right && b.y0 >= f->top && b.y1 <= f->bottom;
      for (size_t t = 0; ok && t < n_taken; t++)
        ok = !overlaps(&b, &taken[t]);
      if (ok) {
        pick = k;
        break;
      }
    }
    taken[n_taken++] =
        (struct box){at[pick][0] - 1, at[pick][1] - h, at[pick][0] + w + 1, at[pick][1] + 2};
    cairo_set_source_rgb(cr, 0.15, 0.15, 0.15);
    text_at(cr, at[pick][0], at[pick][1], q->label);
  }
  free(taken);
}

static void draw_best(cairo_t *cr, const struct plot *p, const struct frame *f) {
  if (p->best < 0 || (size_t)p->best >= p->n_points || !drawable(&p->points[p->best]))
    return;
  const struct plot_point *q = &p->points[p->best];
  double x = px(f, q->x), y = py(f, q->y);
  cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
  cairo_set_line_width(cr, 2.5);
  cairo_new_sub_path(cr);
  cairo_arc(cr, x, y, MARKER_R + 7, 0, 2 * M_PI);
  cairo_stroke(cr);
  if (!p->best_label[0])
    return;
  /* the words in the plot's top right corner (where a frontier never goes: high throughput
   * and high interactivity at once), on white, with a leader to the ring */
  font(cr, 13, true);
  double w = text_w(cr, p->best_label), h = 13;
  double tx = fmax(f->right - 10 - w, f->left + 4), ty = f->top + 10 + h;
  cairo_set_source_rgba(cr, 1, 1, 1, 0.85);
  cairo_rectangle(cr, tx - 5, ty - h - 4, w + 10, h + 10);
  cairo_fill(cr);
  double lx = fmin(fmax(x, tx), tx + w), ly = ty + 6, dx = lx - x, dy = ly - y;
  double d = hypot(dx, dy), r = MARKER_R + 7;
  cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
  if (d > r) {
    static const double dots[] = {2, 3};
    cairo_set_dash(cr, dots, 2, 0);
    cairo_move_to(cr, lx, ly);
    cairo_line_to(cr, x + dx / d * r, y + dy / d * r);
    cairo_set_line_width(cr, 1);
    cairo_stroke(cr);
    cairo_set_dash(cr, NULL, 0, 0);
  }
  text_at(cr, tx, ty, p->best_label);
}

static void draw_legend(cairo_t *cr, const struct plot *p, const struct frame *f) {
  if (!p->legend)
    return;
  double x = f->right + 24, y = f->top + 4, width = REPORT_CHART_W - x - 12;
  char buf[256];
  font(cr, 13, true);
  cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
  text_at(cr, x, y + 10, "configurations");
  y += LEGEND_ROW + 4;
  int extra_rows = (p->n_frontier > 0) + (p->best >= 0);
  int room = (int)((f->bottom - y) / LEGEND_ROW) - extra_rows;
  font(cr, 12, false);
  for (size_t s = 0; s < p->n_series; s++) {
    if ((int)s >= room - 1 && s + 1 < p->n_series) {
      snprintf(buf, sizeof buf, "+%zu more", p->n_series - s);
      cairo_set_source_rgb(cr, 0.4, 0.4, 0.4);
      text_at(cr, x + 22, y + 4, buf);
      y += LEGEND_ROW;
      break;
    }
    if (!p->series[s].muted)
      draw_marker(cr, s, x + 7, y, MARKER_R, false);
    fit_text(cr, p->series[s].name, width - 22, buf, sizeof buf);
    if (p->series[s].muted)
      cairo_set_source_rgb(cr, 0.55, 0.55, 0.55);
    else
      cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
    text_at(cr, x + 22, y + 4, buf);
    y += LEGEND_ROW;
  }
  if (p->n_frontier > 0) {
    cairo_set_source_rgba(cr, 0.1, 0.1, 0.1, 0.75);
    cairo_set_line_width(cr, 2.5);
    cairo_move_to(cr, x, y);
    cairo_line_to(cr, x + 16, y);
    cairo_stroke(cr);
    cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
    text_at(cr, x + 22, y + 4, "frontier (SLO holds)");
    y += LEGEND_ROW;
  }
  if (p->best >= 0) {
    cairo_set_line_width(cr, 2);
    cairo_new_sub_path(cr);
    cairo_arc(cr, x + 7, y, MARKER_R + 2, 0, 2 * M_PI);
    cairo_stroke(cr);
    text_at(cr, x + 22, y + 4, "best (highest goodput)");
  }
}

static void draw_titles(cairo_t *cr, const struct plot *p) {
  font(cr, 24, true);
  cairo_set_source_rgb(cr, 0.05, 0.05, 0.05);
  double x = 30;
  text_at(cr, x, 40, p->title);
  if (p->simulated) {
    x += text_w(cr, p->title) + 14;
    cairo_set_source_rgb(cr, 0.8, 0.05, 0.05);
    text_at(cr, x, 40, "SIMULATED");
  }
  font(cr, 14, false);
  cairo_set_source_rgb(cr, 0.35, 0.35, 0.35);
  char buf[512];
  fit_text(cr, p->subtitle, REPORT_CHART_W - 60, buf, sizeof buf);
  text_at(cr, 30, 68, buf);
  font(cr, 12, false);
  fit_text(cr, p->note, REPORT_CHART_W - 60, buf, sizeof buf);
  text_at(cr, 30, REPORT_CHART_H - 18, buf);
}

static void draw(cairo_t *cr, const struct plot *p) {
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_paint(cr);
  struct frame f;
  fit_frame(p, &f);
  draw_vline(cr, p, &f);
  draw_axes(cr, p, &f);
  if (p->simulated)
    draw_watermark(cr, &f);
  cairo_save(cr);
  cairo_rectangle(cr, f.left, f.top, f.right - f.left, f.bottom - f.top);
  cairo_clip(cr);
  draw_lines(cr, p, &f);
  draw_error_bars(cr, p, &f);
  size_t shown = 0;
  for (size_t i = 0; i < p->n_points; i++) {
    const struct plot_point *q = &p->points[i];
    if (!drawable(q))
      continue;
    draw_marker(cr, q->series, px(&f, q->x), py(&f, q->y), MARKER_R, q->hollow);
    shown++;
  }
  cairo_restore(cr);
  draw_labels(cr, p, &f);
  draw_best(cr, p, &f);
  if (shown == 0) {
    font(cr, 18, false);
    cairo_set_source_rgb(cr, 0.4, 0.4, 0.4);
    const char *none = p->n_points ? "no point with both figures known" : "no measured point yet";
    text_at(cr, (f.left + f.right) / 2 - text_w(cr, none) / 2, (f.top + f.bottom) / 2, none);
  }
  draw_legend(cr, p, &f);
  draw_titles(cr, p);
}

void report_plot_axes(struct plot *p, int n_gpus) {
  snprintf(p->x_label, sizeof p->x_label, "interactivity (tok/s per user)");
  snprintf(p->y_label, sizeof p->y_label, "%s",
           n_gpus > 0 ? "output throughput per GPU (tok/s/GPU)"
                      : "output throughput (tok/s, all GPUs)");
}

/* ---------------------------------------------------------------- files */
static cairo_status_t to_sbuf(void *closure, const unsigned char *data, unsigned int length) {
  sbuf_append(closure, data, length);
  return CAIRO_STATUS_SUCCESS;
}

static void xml_text(struct sbuf *sb, const char *s) {
  for (; *s; s++) {
    switch (*s) {
    case '&': sbuf_puts(sb, "&amp;"); break;
    case '<': sbuf_puts(sb, "&lt;"); break;
    case '>': sbuf_puts(sb, "&gt;"); break;
    case '"': sbuf_puts(sb, "&quot;"); break;
    default:
      if ((unsigned char)*s >= 0x20 || *s == '\n')
        sbuf_putc(sb, *s);
    }
  }
}

static void number(struct sbuf *sb, double v) {
  if (isfinite(v))
    sbuf_printf(sb, "%.4g", v);
  else
    sbuf_puts(sb, "unknown");
}

/* The chart's words: <title> and <desc> (cairo draws text as glyph outlines). */
static void svg_words(struct sbuf *sb, const struct plot *p) {
  sbuf_puts(sb, "\n<title>");
  xml_text(sb, p->title);
  if (p->simulated)
    sbuf_puts(sb, " SIMULATED");
  sbuf_puts(sb, "</title>\n<desc>");
  struct sbuf d = {0};
  sbuf_printf(&d, "%s\n", p->subtitle);
  sbuf_printf(&d, "x: %s\ny: %s\n", p->x_label, p->y_label);
  if (isfinite(p->vline_x))
    sbuf_printf(&d, "%s\n", p->vline_label);
  for (size_t s = 0; s < p->n_series && p->legend; s++)
    sbuf_printf(&d, "series %zu: %s\n", s + 1, p->series[s].name);
  if (p->best >= 0 && p->best_label[0])
    sbuf_printf(&d, "%s\n", p->best_label);
  for (size_t i = 0; i < p->n_points; i++) {
    const struct plot_point *q = &p->points[i];
    if (p->legend)
      sbuf_printf(&d, "series %zu ", q->series + 1);
    sbuf_printf(&d, "%s: x ", q->label);
    number(&d, q->x);
    sbuf_puts(&d, ", y ");
    number(&d, q->y);
    sbuf_printf(&d, "%s\n", q->hollow ? " (SLO does not hold)" : "");
  }
  sbuf_printf(&d, "%s", p->note);
  xml_text(sb, d.data ? d.data : "");
  sbuf_free(&d);
  sbuf_puts(sb, "</desc>");
}

int report_write_file(const char *dir, const char *leaf, const void *data, size_t len,
                      struct st_err *err) {
  char *path = path_join_alloc(dir, leaf);
  int rc = file_write_atomic(path, data, len, 0644, err);
  if (rc != 0 && err && !strstr(err->msg, path))
    err_prefixf(err, "%s", path);
  free(path);
  return rc;
}

static int write_file(const char *dir, const char *stem, const char *ext, const void *data,
                      size_t len, struct st_err *err) {
  char leaf[128];
  snprintf(leaf, sizeof leaf, "%s.%s", stem, ext);
  return report_write_file(dir, leaf, data, len, err);
}

static int cairo_failed(cairo_status_t st, const char *dir, const char *stem, const char *ext,
                        struct st_err *err) {
  return err_setf(err, "%s/%s.%s: cairo could not draw the chart: %s", dir, stem, ext,
                  cairo_status_to_string(st));
}

int report_plot_write(const struct plot *p, const char *dir, const char *stem, struct st_err *err) {
  /* PNG */
  cairo_surface_t *img =
      cairo_image_surface_create(CAIRO_FORMAT_ARGB32, REPORT_CHART_W, REPORT_CHART_H);
  cairo_t *cr = cairo_create(img);
  draw(cr, p);
  cairo_status_t st = cairo_status(cr);
  cairo_destroy(cr);
  struct sbuf png = {0};
  if (st == CAIRO_STATUS_SUCCESS)
    st = cairo_surface_write_to_png_stream(img, to_sbuf, &png);
  cairo_surface_destroy(img);
  int rc = st == CAIRO_STATUS_SUCCESS ? write_file(dir, stem, "png", png.data, png.len, err)
                                      : cairo_failed(st, dir, stem, "png", err);
  sbuf_free(&png);
  if (rc != 0)
    return rc;
  /* SVG */
  struct sbuf svg = {0};
  cairo_surface_t *vec =
      cairo_svg_surface_create_for_stream(to_sbuf, &svg, REPORT_CHART_W, REPORT_CHART_H);
  cairo_svg_surface_restrict_to_version(vec, CAIRO_SVG_VERSION_1_1);
  cr = cairo_create(vec);
  draw(cr, p);
  st = cairo_status(cr);
  cairo_destroy(cr);
  cairo_surface_finish(vec);
  if (st == CAIRO_STATUS_SUCCESS)
    st = cairo_surface_status(vec);
  cairo_surface_destroy(vec);
  if (st != CAIRO_STATUS_SUCCESS) {
    sbuf_free(&svg);
    return cairo_failed(st, dir, stem, "svg", err);
  }
  /* the words go right after the <svg ...> tag */
  struct sbuf out = {0};
  const char *text = svg.data ? svg.data : "";
  const char *open = strstr(text, "<svg");
  const char *gt = open ? strchr(open, '>') : NULL;
  if (gt) {
    sbuf_append(&out, text, (size_t)(gt + 1 - text));
    svg_words(&out, p);
    sbuf_puts(&out, gt + 1);
  } else {
    sbuf_puts(&out, text);
  }
  rc = write_file(dir, stem, "svg", out.data, out.len, err);
  sbuf_free(&out);
  sbuf_free(&svg);
  return rc;
}
