/* Braille line charts and segmented bars (pure; no ncurses). */
#include "widgets.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ui_util.h"

/* Braille dot bits by (column, row) inside a cell: U+2800 + bits. */
static const uint8_t braille_bit[2][4] = {{0x01, 0x02, 0x04, 0x40}, {0x08, 0x10, 0x20, 0x80}};

static void braille_glyph(uint8_t bits, char out[5]) {
  unsigned cp = 0x2800u + bits;
  out[0] = (char)(0xe0 | (cp >> 12));
  out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
  out[2] = (char)(0x80 | (cp & 0x3f));
  out[3] = '\0';
}

/* ASCII cells hold 3 dot rows (bit 0 top .. bit 2 bottom) of one column. */
static const char *ascii_glyph(uint8_t bits) {
  switch (bits) {
  case 1: return "'";
  case 2: return "-";
  case 4: return ".";
  case 5: return ":";
  default: return "|";
  }
}

int ui_chart_samples_per_col(const struct ui_glyphs *gl) {
  return gl->braille ? 2 : 1;
}

struct dot_canvas {
  int dots_w, dots_h, dx_per_cell, dy_per_cell, cols, rows;
  uint8_t *bits;   /* per cell */
  uint8_t *roles;  /* per cell; THEME_ROLE_COUNT = none */
};

static void canvas_set(struct dot_canvas *c, int dot_x, int dot_y_from_bottom, uint8_t role) {
  if (dot_x < 0 || dot_x >= c->dots_w || dot_y_from_bottom < 0 || dot_y_from_bottom >= c->dots_h)
    return;
  int dot_y = c->dots_h - 1 - dot_y_from_bottom;
  int cell = (dot_y / c->dy_per_cell) * c->cols + dot_x / c->dx_per_cell;
  int sub_x = dot_x % c->dx_per_cell, sub_y = dot_y % c->dy_per_cell;
  c->bits[cell] |= c->dx_per_cell == 2 ? braille_bit[sub_x][sub_y] : (uint8_t)(1u << sub_y);
  c->roles[cell] = role;
}

/* A blank canvas of r's cells: braille cells hold 2x4 dots, ASCII ones 1x3. */
static struct dot_canvas canvas_new(struct ui_rect r, const struct ui_glyphs *gl) {
  struct dot_canvas c = {
      .dx_per_cell = gl->braille ? 2 : 1,
      .dy_per_cell = gl->braille ? 4 : 3,
      .cols = r.w,
      .rows = r.h,
  };
  c.dots_w = r.w * c.dx_per_cell;
  c.dots_h = r.h * c.dy_per_cell;
  c.bits = xcalloc((size_t)(r.w * r.h), 1);
  c.roles = xmalloc((size_t)(r.w * r.h));
  memset(c.roles, THEME_ROLE_COUNT, (size_t)(r.w * r.h));
  return c;
}

/* Puts the canvas's dotted cells into r (the blank ones are left as they are)
 * and frees it. */
static void canvas_draw_free(struct dot_canvas *c, struct ui_grid *g, struct ui_rect r,
                             const struct ui_glyphs *gl) {
  for (int row = 0; row < r.h; row++) {
    for (int col = 0; col < r.w; col++) {
      int cell = row * r.w + col;
      if (!c->bits[cell])
        continue;
      char glyph[5];
      if (gl->braille)
        braille_glyph(c->bits[cell], glyph);
      else
        strcpy(glyph, ascii_glyph(c->bits[cell]));
      ui_grid_put(g, r.x + col, r.y + row, glyph, (enum theme_role)c->roles[cell]);
    }
  }
  free(c->bits);
  free(c->roles);
}

static double visible_max(const struct ui_series *series, size_t n_series, int dots_w) {
  double max = -(double)INFINITY;
  for (size_t s = 0; s < n_series; s++) {
    size_t n = series[s].n;
    size_t first = n > (size_t)dots_w ? n - (size_t)dots_w : 0;
    for (size_t i = first; i < n; i++)
      if (!isnan(series[s].values[i]) && series[s].values[i] > max)
        max = series[s].values[i];
  }
  return max;
}

double ui_chart(struct ui_grid *g, struct ui_rect r, const struct ui_series *series,
                size_t n_series, const struct ui_chart_opts *opts, const struct ui_glyphs *gl) {
  if (r.w <= 0 || r.h <= 0)
    return opts->y_max;
  struct dot_canvas c = canvas_new(r, gl);
  double y_min = opts->y_min, y_max = opts->y_max;
  if (y_max <= y_min) {
    y_max = visible_max(series, n_series, c.dots_w);
    if (opts->level_valid && opts->level * 1.25 > y_max)
      y_max = opts->level * 1.25; /* the line stays below the top */
    if (!(y_max > y_min))
      y_max = y_min + 1.0;
  }

  double scale = (double)(c.dots_h - 1) / (y_max - y_min);
  for (size_t s = 0; s < n_series; s++) {
    size_t n = series[s].n;
    size_t first = n > (size_t)c.dots_w ? n - (size_t)c.dots_w : 0;
    int prev_y = -1;  /* dot row of the previous sample; -1 after a gap */
    for (size_t i = first; i < n; i++) {
      int x = c.dots_w - (int)(n - i);
      double v = series[s].values[i];
      if (isnan(v)) {
        prev_y = -1;
        continue;
      }
      double clamped = v < y_min ? y_min : v > y_max ? y_max : v;
      int y = (int)lround((clamped - y_min) * scale);
      /* join to the previous sample with a vertical run in this column */
      int from = prev_y < 0 ? y : prev_y < y ? prev_y + 1 : y;
      int to = prev_y < 0 ? y : prev_y < y ? y : prev_y - 1;
      if (to < from)
        to = from;
      for (int yy = from; yy <= to; yy++)
        canvas_set(&c, x, yy, (uint8_t)series[s].role);
      prev_y = y;
    }
  }

  /* the level and the marks first, so a dot in the same cell draws over them */
  if (opts->level_valid && opts->level >= y_min && opts->level <= y_max) {
    int dot_y = (int)lround((opts->level - y_min) * scale);
    int row = r.h - 1 - dot_y / c.dy_per_cell;
    for (int col = 0; col < r.w; col += 2)
      ui_grid_put(g, r.x + col, r.y + row, gl->braille ? "┈" : "-", opts->level_role);
  }
  for (size_t m = 0; m < opts->n_marks; m++) {
    int dot_x = c.dots_w - 1 - opts->mark_ages[m];
    if (dot_x < 0 || opts->mark_ages[m] < 0)
      continue;
    int col = dot_x / c.dx_per_cell;
    for (int row = 0; row < r.h; row++)
      ui_grid_put(g, r.x + col, r.y + row, gl->mark, opts->mark_role);
  }
  canvas_draw_free(&c, g, r, gl);
  return y_max;
}

static double xy_max(const struct ui_xy_series *series, size_t n_series, bool want_x) {
  double max = 0;
  for (size_t s = 0; s < n_series; s++)
    for (size_t i = 0; i < series[s].n; i++) {
      double v = want_x ? series[s].x[i] : series[s].y[i];
      if (!isnan(v) && v > max)
        max = v;
    }
  return max > 0 ? max : 1.0;
}

void ui_xy_chart(struct ui_grid *g, struct ui_rect r, const struct ui_xy_series *series,
                 size_t n_series, double x_max, double y_max, const struct ui_glyphs *gl,
                 double *x_max_out, double *y_max_out) {
  if (x_max <= 0)
    x_max = xy_max(series, n_series, true);
  if (y_max <= 0)
    y_max = xy_max(series, n_series, false);
  if (x_max_out)
    *x_max_out = x_max;
  if (y_max_out)
    *y_max_out = y_max;
  if (r.w <= 0 || r.h <= 0)
    return;
  struct dot_canvas c = canvas_new(r, gl);
  for (size_t s = 0; s < n_series; s++) {
    bool have_prev = false;
    int px = 0, py = 0;
    for (size_t i = 0; i < series[s].n; i++) {
      double xv = series[s].x[i], yv = series[s].y[i];
      if (isnan(xv) || isnan(yv))
        continue;
      int x = (int)lround(fmin(fmax(xv / x_max, 0), 1) * (c.dots_w - 1));
      int y = (int)lround(fmin(fmax(yv / y_max, 0), 1) * (c.dots_h - 1));
      if (have_prev) {
        /* join with a straight line, one dot per step of the longer axis */
        int steps = abs(x - px) > abs(y - py) ? abs(x - px) : abs(y - py);
        for (int k = 1; k < steps; k++)
          canvas_set(&c, px + (int)lround((double)(x - px) * k / steps),
                     py + (int)lround((double)(y - py) * k / steps), (uint8_t)series[s].role);
      }
      canvas_set(&c, x, y, (uint8_t)series[s].role);
      px = x;
      py = y;
      have_prev = true;
    }
  }
  canvas_draw_free(&c, g, r, gl);
}

void ui_bar(struct ui_grid *g, int x, int y, int w, const struct ui_bar_segment *segs,
            size_t n_segs, double total, enum theme_role empty_role, const struct ui_glyphs *gl) {
  if (w <= 0)
    return;
  /* Work in eighths of a cell; segment ends are rounded from the running sum
   * so the segments never add up to more than the bar. */
  int eighths_total = w * 8;
  int pos = 0;  /* eighths drawn */
  double sum = 0;
  for (size_t s = 0; s < n_segs && total > 0; s++) {
    double v = segs[s].value;
    if (isnan(v) || v < 0)
      v = 0;
    sum += v;
    int end = (int)lround(sum / total * eighths_total);
    if (end > eighths_total)
      end = eighths_total;
    if (!gl->braille) /* ASCII has whole cells only */
      end = (end + 4) / 8 * 8;
    char fill[2] = {segs[s].ascii_fill ? segs[s].ascii_fill : '#', '\0'};
    while (pos + 8 <= end) {
      ui_grid_put(g, x + pos / 8, y, gl->braille ? gl->bar_full : fill, segs[s].role);
      pos += 8;
    }
    if (end > pos && gl->braille) {
      /* a partial cell: this segment's share, the next segment starts after it */
      ui_grid_put(g, x + pos / 8, y, gl->bar_partial[end - pos], segs[s].role);
      pos += 8;
    }
  }
  for (int cell = (pos + 7) / 8; cell < w; cell++)
    ui_grid_put(g, x + cell, y, gl->bar_empty, empty_role);
}
