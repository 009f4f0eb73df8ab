/* Screen layout as a pure function of size and view. */
#include "layout.h"

#include <stdio.h>
#include <string.h>

static const char *const slot_names[UI_SLOT_COUNT] = {
    [UI_SLOT_HEADER] = "header",         [UI_SLOT_FOOTER] = "footer",
    [UI_SLOT_LIST] = "list",             [UI_SLOT_DETAIL] = "detail",
    [UI_SLOT_PROGRESS] = "progress",     [UI_SLOT_THROUGHPUT] = "throughput",
    [UI_SLOT_ACCEPT] = "accept",         [UI_SLOT_LATENCY] = "latency",
    [UI_SLOT_SERVER_LOAD] = "server_load", [UI_SLOT_GPU] = "gpu",
    [UI_SLOT_LOG] = "log",               [UI_SLOT_ARM_A] = "arm_a",
    [UI_SLOT_RATIO] = "ratio",           [UI_SLOT_ARM_B] = "arm_b",
    [UI_SLOT_CURVE] = "curve",           [UI_SLOT_BODY] = "body",
};

const char *ui_slot_name(enum ui_slot slot) {
  return (unsigned)slot < UI_SLOT_COUNT ? slot_names[slot] : "?";
}

bool ui_rect_visible(struct ui_rect r) {
  return r.w > 0 && r.h > 0;
}

bool ui_rect_contains(struct ui_rect r, int x, int y) {
  return x >= r.x && x < r.x + r.w && y >= r.y && y < r.y + r.h;
}

bool ui_rects_overlap(struct ui_rect a, struct ui_rect b) {
  if (!ui_rect_visible(a) || !ui_rect_visible(b))
    return false;
  return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

static int clamp_int(int v, int lo, int hi) {
  return v < lo ? lo : v > hi ? hi : v;
}

static struct ui_rect rect(int x, int y, int w, int h) {
  return (struct ui_rect){x, y, w, h};
}

/* List beside detail; the list gets 2/5 of the width, within what a
 * grouped recipe row needs and what leaves the command readable. */
static void layout_browser(struct ui_layout *l) {
  int body_y = 1, body_h = l->rows - 2;
  int list_w = clamp_int(l->cols * 2 / 5, 34, 72);
  l->slot[UI_SLOT_LIST] = rect(0, body_y, list_w, body_h);
  l->slot[UI_SLOT_DETAIL] = rect(list_w, body_y, l->cols - list_w, body_h);
}

/* Charts on the left, tables and bars on the right, the log tail across the
 * bottom. The latency table and the server-load box have fixed heights
 * (their row counts are fixed); the charts and the GPU box take the rest. */
enum { LATENCY_BOX_H = 7, SERVER_LOAD_BOX_H = 5 }; /* server: KV use, running vs cap, capacity */

static void layout_run(struct ui_layout *l) {
  l->slot[UI_SLOT_PROGRESS] = rect(0, 1, l->cols, 1);
  int body_y = 2, body_h = l->rows - 3;
  int log_h = clamp_int(body_h / 4, 5, 14);
  int main_h = body_h - log_h;
  int right_w = clamp_int(l->cols * 2 / 5, 36, 80);
  int left_w = l->cols - right_w;
  int accept_h = clamp_int(main_h * 2 / 5, 6, 24);
  l->slot[UI_SLOT_THROUGHPUT] = rect(0, body_y, left_w, main_h - accept_h);
  l->slot[UI_SLOT_ACCEPT] = rect(0, body_y + main_h - accept_h, left_w, accept_h);
  l->slot[UI_SLOT_LATENCY] = rect(left_w, body_y, right_w, LATENCY_BOX_H);
  l->slot[UI_SLOT_SERVER_LOAD] = rect(left_w, body_y + LATENCY_BOX_H, right_w, SERVER_LOAD_BOX_H);
  int gpu_y = body_y + LATENCY_BOX_H + SERVER_LOAD_BOX_H;
  l->slot[UI_SLOT_GPU] = rect(left_w, gpu_y, right_w, body_y + main_h - gpu_y);
  l->slot[UI_SLOT_LOG] = rect(0, body_y + main_h, l->cols, log_h);
}

/* Two arms of equal width around a narrow ratio column; the curve below. */
static void layout_ab(struct ui_layout *l) {
  int body_y = 1, body_h = l->rows - 2;
  int curve_h = clamp_int(body_h * 2 / 5, 8, 40);
  int top_h = body_h - curve_h;
  int ratio_w = 14;
  int arm_a_w = (l->cols - ratio_w) / 2;  /* arm B gets the odd column */
  l->slot[UI_SLOT_ARM_A] = rect(0, body_y, arm_a_w, top_h);
  l->slot[UI_SLOT_RATIO] = rect(arm_a_w, body_y, ratio_w, top_h);
  l->slot[UI_SLOT_ARM_B] = rect(arm_a_w + ratio_w, body_y, l->cols - arm_a_w - ratio_w, top_h);
  l->slot[UI_SLOT_CURVE] = rect(0, body_y + top_h, l->cols, curve_h);
}

void ui_layout_compute(int cols, int rows, enum ui_view view, struct ui_layout *out) {
  memset(out, 0, sizeof *out);
  out->view = view;
  out->cols = cols > 0 ? cols : 0;
  out->rows = rows > 0 ? rows : 0;
  if (cols < UI_MIN_COLS || rows < UI_MIN_ROWS) {
    out->too_small = true;
    out->slot[UI_SLOT_HEADER] = rect(0, 0, out->cols, out->rows);
    return;
  }
  out->slot[UI_SLOT_HEADER] = rect(0, 0, cols, 1);
  out->slot[UI_SLOT_FOOTER] = rect(0, rows - 1, cols, 1);
  switch (view) {
  case UI_VIEW_BROWSER:
    layout_browser(out);
    break;
  case UI_VIEW_RUN:
    layout_run(out);
    break;
  case UI_VIEW_AB:
    layout_ab(out);
    break;
  case UI_VIEW_PAGE:
    out->slot[UI_SLOT_BODY] = rect(0, 1, cols, rows - 2);
    break;
  default:  /* not a view: header and footer only */
    break;
  }
}

bool ui_frame_begin(struct ui_grid *g, const struct ui_layout *l, const struct ui_glyphs *gl) {
  ui_grid_clear(g);
  if (!l->too_small)
    return true;
  char msg[96];
  snprintf(msg, sizeof msg, "terminal %dx%d is too small: servetop needs %dx%d", l->cols, l->rows,
           UI_MIN_COLS, UI_MIN_ROWS);
  ui_grid_text(g, 0, 0, l->cols, msg, THEME_WARNING, gl->braille);
  return false;
}
