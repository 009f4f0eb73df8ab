/* Past runs: the picker over the run module's list of run folders. */
#include "pastruns.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ui_util.h"

const char *pastruns_fmt_date(double unix_s, char *buf, size_t n) {
  time_t t = (time_t)unix_s;
  struct tm tm_utc;
  if (unix_s <= 0 || !gmtime_r(&t, &tm_utc) || strftime(buf, n, "%Y-%m-%d %H:%M", &tm_utc) == 0)
    snprintf(buf, n, "-");
  return buf;
}

/* ---------------------------------------------------------------- picker */

/* The key table: `?` lists it, the footer shows the hints. */
static const struct ui_key_help keys[] = {
    {"Enter", "load the selected run into that column", "load", NULL, UI_KEY_ENTER, 0},
    {"Tab Left/Right h/l", "which column it goes into: off or MTP", "column", "Tab", UI_KEY_TAB, 1},
    {"o / m", "into the off / the MTP column", NULL, NULL, 0, 0},
    {"Up/Down k/j", "select a past run", NULL, NULL, 0, 0},
    {"PgUp/PgDn Home/End", "page, first / last run", NULL, NULL, 0, 0},
    {"mouse", "click selects (again: loads); wheel scrolls", NULL, NULL, 0, 0},
    UI_KEY_HELP_ROW,
    {"Esc q", "close the list", "close", "Esc", UI_KEY_ESCAPE, 0},
};

void pastpicker_open(struct pastpicker *p, const char *dir, int column) {
  run_summary_list_free(&p->list);
  p->open = true;
  snprintf(p->dir, sizeof p->dir, "%s", dir);
  p->error[0] = '\0';
  p->selected = 0;
  p->top = 0;
  p->column = column == 1 ? 1 : 0;
  struct st_err err = {{0}};
  if (run_list_past(dir, &p->list, &err) != 0)
    snprintf(p->error, sizeof p->error, "%.250s", err.msg);
}

void pastpicker_close(struct pastpicker *p) {
  run_summary_list_free(&p->list);
  p->open = false;
}

const struct run_summary *pastpicker_selected(const struct pastpicker *p) {
  return p->selected < p->list.n ? &p->list.runs[p->selected] : NULL;
}

struct ui_rect pastpicker_box(int cols, int rows) {
  int w = cols - 4 < 120 ? cols - 4 : 120;
  int h = rows - 4;
  return (struct ui_rect){(cols - w) / 2, (rows - h) / 2, w, h};
}

/* Inside the box: the folder line, the column switch, the header, the rows,
 * and a hint line at the bottom. */
enum { PICK_DIR_Y = 0, PICK_COLUMN_Y = 1, PICK_HEADER_Y = 2, PICK_ROWS_Y = 3 };

static int visible_rows(int cols, int rows) {
  struct ui_rect in = ui_rect_inner(pastpicker_box(cols, rows));
  int n = in.h - PICK_ROWS_Y - 1;
  return n > 1 ? n : 1;
}

static void select_row(struct pastpicker *p, long row, int cols, int rows) {
  ui_list_select(&p->selected, &p->top, p->list.n, row, (size_t)visible_rows(cols, rows));
}

/* Asks the program to load the selected run into the chosen column. */
static bool load(struct pastpicker *p, struct ui_ctx *ctx) {
  const struct run_summary *r = pastpicker_selected(p);
  if (!r)
    return false;
  ctx->cmd.kind = UI_CMD_LOAD_PAST;
  ctx->cmd.path = r->dir;
  ctx->cmd.column = p->column;
  return true;
}

static bool close_list(struct pastpicker *p, struct ui_ctx *ctx) {
  pastpicker_close(p);
  ctx->cmd.kind = UI_CMD_CLOSE;
  return true;
}

static bool on_key(void *self, int key, struct ui_ctx *ctx) {
  struct pastpicker *p = self;
  int cols = ctx->layout->cols, rows = ctx->layout->rows;
  long page = visible_rows(cols, rows);
  long sel = (long)p->selected;
  switch (key) {
  case UI_KEY_ESCAPE:
  case 'q':
  case 'Q': return close_list(p, ctx);
  case UI_KEY_UP:
  case 'k': select_row(p, sel - 1, cols, rows); break;
  case UI_KEY_DOWN:
  case 'j': select_row(p, sel + 1, cols, rows); break;
  case UI_KEY_PAGE_UP: select_row(p, sel - page, cols, rows); break;
  case UI_KEY_PAGE_DOWN: select_row(p, sel + page, cols, rows); break;
  case UI_KEY_HOME: select_row(p, 0, cols, rows); break;
  case UI_KEY_END: select_row(p, (long)p->list.n, cols, rows); break;
  case UI_KEY_TAB: p->column = !p->column; break;
  case UI_KEY_LEFT:
  case 'h':
  case 'o': p->column = 0; break;
  case UI_KEY_RIGHT:
  case 'l':
  case 'm': p->column = 1; break;
  case UI_KEY_ENTER: return load(p, ctx);
  default: return false;
  }
  return true;
}

/* Columns of the switch line: "into column:  off   MTP" (see render). */
enum { SWITCH_OFF_X = 15, SWITCH_MTP_X = 21, SWITCH_W = 5 };

static bool on_click(void *self, int x, int y, struct ui_ctx *ctx) {
  struct pastpicker *p = self;
  int cols = ctx->layout->cols, rows = ctx->layout->rows;
  struct ui_rect box = pastpicker_box(cols, rows);
  if (!ui_rect_contains(box, x, y))
    return close_list(p, ctx);
  struct ui_rect in = ui_rect_inner(box);
  int rel_x = x - in.x, rel_y = y - in.y;
  if (rel_y == PICK_COLUMN_Y) {
    if (rel_x >= SWITCH_OFF_X && rel_x < SWITCH_OFF_X + SWITCH_W)
      p->column = 0;
    else if (rel_x >= SWITCH_MTP_X && rel_x < SWITCH_MTP_X + SWITCH_W)
      p->column = 1;
    else
      return false;
    return true;
  }
  int row = rel_y - PICK_ROWS_Y;
  if (row < 0 || row >= visible_rows(cols, rows) || p->top + (size_t)row >= p->list.n)
    return false;
  size_t idx = p->top + (size_t)row;
  if (idx == p->selected)
    return load(p, ctx);
  p->selected = idx;
  return true;
}

static bool on_wheel(void *self, int x, int y, int lines, struct ui_ctx *ctx) {
  (void)x;
  (void)y;
  struct pastpicker *p = self;
  size_t vis = (size_t)visible_rows(ctx->layout->cols, ctx->layout->rows);
  size_t max_top = p->list.n > vis ? p->list.n - vis : 0;
  long top = (long)p->top + lines;
  p->top = top < 0 ? 0 : (size_t)top > max_top ? max_top : (size_t)top;
  /* the selection stays on screen */
  if (p->selected < p->top)
    p->selected = p->top;
  if (p->list.n && p->selected >= p->top + vis)
    p->selected = p->top + vis - 1;
  return true;
}

static enum theme_role status_role(const char *status) {
  if (strcmp(status, "ok") == 0)
    return THEME_OK;
  if (strcmp(status, "interrupted") == 0 || strcmp(status, "mislabelled") == 0)
    return THEME_WARNING;
  return status[0] ? THEME_ERROR : THEME_INACTIVE;
}

void pastpicker_render(const struct pastpicker *p, struct ui_grid *g, int cols, int rows,
                       const struct ui_glyphs *gl) {
  struct ui_rect box = pastpicker_box(cols, rows);
  ui_grid_fill(g, box, THEME_MAIN);
  ui_box(g, box, "Load a past run into the A/B view", THEME_BORDER, THEME_TITLE, gl);
  struct ui_rect in = ui_rect_inner(box);
  int end = in.x + in.w;
  int x = ui_put(g, in.x + 1, in.y + PICK_DIR_Y, end, "from ", THEME_INACTIVE, gl);
  ui_put(g, x, in.y + PICK_DIR_Y, end, p->dir, THEME_MAIN, gl);
  ui_put(g, in.x + 1, in.y + PICK_COLUMN_Y, end, "into column:", THEME_INACTIVE, gl);
  ui_put(g, in.x + SWITCH_OFF_X + 1, in.y + PICK_COLUMN_Y, end, "off",
      p->column == 0 ? THEME_SELECTED : THEME_ARM_OFF, gl);
  ui_put(g, in.x + SWITCH_MTP_X + 1, in.y + PICK_COLUMN_Y, end, "MTP",
      p->column == 1 ? THEME_SELECTED : THEME_ARM_MTP, gl);
  ui_put(g, in.x + SWITCH_MTP_X + SWITCH_W + 2, in.y + PICK_COLUMN_Y, end, "(Tab switches)",
      THEME_INACTIVE, gl);

  if (p->error[0]) {
    ui_put(g, in.x + 1, in.y + PICK_ROWS_Y, end, p->error, THEME_ERROR, gl);
    return;
  }
  if (p->list.n == 0) {
    ui_put(g, in.x + 1, in.y + PICK_ROWS_Y, end, "no run folders here yet (servetop run writes them)",
        THEME_INACTIVE, gl);
    return;
  }
  static const struct ui_table_col head[] = {
      {"date (UTC)", 17, false}, {"status", 12, false}, {"cfg", 4, true},
      {"spec", 5, false},        {"label", 6, false},   {"source", 9, false},
      {"recipe", 60, false},
  };
  int hx = in.x + 2;
  for (size_t c = 0; c < ST_ARRAY_LEN(head); c++) {
    int pad = head[c].align_right ? head[c].width - ui_text_cells(head[c].header) : 0;
    ui_put(g, hx + pad, in.y + PICK_HEADER_Y, end, head[c].header, THEME_HEADER, gl);
    hx += head[c].width + 1;
  }
  int vis = visible_rows(cols, rows);
  for (int i = 0; i < vis && p->top + (size_t)i < p->list.n; i++) {
    size_t idx = p->top + (size_t)i;
    const struct run_summary *r = &p->list.runs[idx];
    int y = in.y + PICK_ROWS_Y + i;
    bool sel = idx == p->selected;
    if (sel)
      ui_grid_fill(g, (struct ui_rect){in.x, y, in.w, 1}, THEME_SELECTED);
    char date[32], pts[16];
    snprintf(pts, sizeof pts, "%d", r->n_configs); /* configurations measured */
    const char *cells[] = {pastruns_fmt_date(r->started_unix_s, date, sizeof date),
                           r->status[0] ? r->status : "-", pts,
                           r->spec_label[0] ? r->spec_label : "-", r->label[0] ? r->label : "-",
                           r->simulated > 0 ? "SIMULATED" : r->simulated == 0 ? "real" : "?",
                           r->recipe[0] ? r->recipe : r->folder};
    int cx = in.x + 2;
    ui_put(g, in.x, y, end, sel ? ">" : " ", sel ? THEME_SELECTED : THEME_MAIN, gl);
    for (size_t c = 0; c < ST_ARRAY_LEN(head) && cx < end; c++) {
      enum theme_role role = sel          ? THEME_SELECTED
                             : c == 1     ? status_role(r->status)
                             : c == 5 && r->simulated > 0 ? THEME_WARNING
                                                          : THEME_MAIN;
      int w = head[c].width < end - cx ? head[c].width : end - cx;
      if (head[c].align_right) {
        int len = ui_text_cells(cells[c]);
        ui_grid_text(g, cx + (len < w ? w - len : 0), y, w, cells[c], role, gl->braille);
      } else {
        ui_grid_text(g, cx, y, w, cells[c], role, gl->braille);
      }
      cx += head[c].width + 1;
    }
  }
}

static void render(void *self, struct ui_grid *g, const struct ui_ctx *ctx) {
  if (!ctx->layout->too_small)
    pastpicker_render(self, g, ctx->layout->cols, ctx->layout->rows, ctx->gl);
}

const struct ui_screen pastpicker_screen = {
    .name = "past runs",
    .help_title = "Past-run list keys",
    .keys = keys,
    .n_keys = ST_ARRAY_LEN(keys),
    .overlay = true,
    .key = on_key,
    .click = on_click,
    .wheel = on_wheel,
    .render = render,
};
