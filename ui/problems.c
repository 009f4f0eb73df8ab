/* The problems list: load errors and doctor's findings (pure; no ncurses). */
#include "problems.h"

#include <stdio.h>
#include <string.h>

#include "ui_util.h"

static const struct ui_key_help keys[] = {
    {"Enter", "the whole message of the selected problem", "message", NULL, UI_KEY_ENTER, 1},
    {"Up/Down k/j", "select a problem", NULL, NULL, 0, 0},
    {"PgUp/PgDn Home/End g/G", "page, first / last problem", NULL, NULL, 0, 0},
    {"mouse", "click selects (twice: the message); wheel scrolls", NULL, NULL, 0, 0},
    UI_KEY_HELP_ROW,
    {"q Esc b", "back to the recipes", "back", "q", 'q', 0},
};

void problems_init(struct problems *p, const struct recipe_findings *findings) {
  memset(p, 0, sizeof *p);
  p->findings = findings;
}

enum theme_role ui_severity_role(enum recipe_severity sev) {
  switch (sev) {
  case RECIPE_SEV_ERROR: return THEME_ERROR;
  case RECIPE_SEV_WARNING: return THEME_WARNING;
  default: return THEME_NOTE;
  }
}

static size_t count(const struct problems *p) {
  return p->findings ? p->findings->n : 0;
}

/* Rows of the list inside the body box: its inner height less the header row. */
static int visible_rows(const struct ui_layout *l) {
  int h = ui_rect_inner(l->slot[UI_SLOT_BODY]).h - 1;
  return h > 1 ? h : 1;
}

static void select_row(struct problems *p, long row, const struct ui_layout *l) {
  ui_list_select(&p->selected, &p->top, count(p), row, (size_t)visible_rows(l));
}

static bool on_key(void *self, int key, struct ui_ctx *ctx) {
  struct problems *p = self;
  if (p->expanded) { /* any key closes the message */
    p->expanded = false;
    return true;
  }
  long sel = (long)p->selected, page = visible_rows(ctx->layout);
  switch (key) {
  case 'q':
  case 'Q':
  case 'b':
  case UI_KEY_ESCAPE:
    ctx->cmd.kind = UI_CMD_CLOSE;
    return true;
  case UI_KEY_UP:
  case 'k': select_row(p, sel - 1, ctx->layout); return true;
  case UI_KEY_DOWN:
  case 'j': select_row(p, sel + 1, ctx->layout); return true;
  case UI_KEY_PAGE_UP: select_row(p, sel - page, ctx->layout); return true;
  case UI_KEY_PAGE_DOWN: select_row(p, sel + page, ctx->layout); return true;
  case UI_KEY_HOME:
  case 'g': select_row(p, 0, ctx->layout); return true;
  case UI_KEY_END:
  case 'G': select_row(p, (long)count(p), ctx->layout); return true;
  case UI_KEY_ENTER:
    p->expanded = count(p) > 0;
    return true;
  default: return false;
  }
}

static bool on_click(void *self, int x, int y, struct ui_ctx *ctx) {
  struct problems *p = self;
  if (p->expanded) {
    p->expanded = false;
    return true;
  }
  struct ui_rect in = ui_rect_inner(ctx->layout->slot[UI_SLOT_BODY]);
  int row = y - in.y - 1; /* below the column header */
  if (!ui_rect_contains(in, x, y) || row < 0 || p->top + (size_t)row >= count(p))
    return false;
  size_t idx = p->top + (size_t)row;
  if (idx == p->selected)
    p->expanded = true;
  p->selected = idx;
  return true;
}

static bool on_wheel(void *self, int x, int y, int lines, struct ui_ctx *ctx) {
  (void)x;
  (void)y;
  struct problems *p = self;
  if (p->expanded)
    return false;
  select_row(p, (long)p->selected + lines, ctx->layout);
  return true;
}

/* ---------------------------------------------------------------- drawing */

/* "file:line" in at most w cells: a long path loses its start, so the file
 * name and the line stay. */
static void put_location(struct ui_grid *g, int x, int y, int w, const struct recipe_finding *f,
                         enum theme_role role, const struct ui_glyphs *gl) {
  char where[1200];
  if (f->line > 0)
    snprintf(where, sizeof where, "%s:%d", f->file ? ui_path_shown(f->file) : "?", f->line);
  else
    snprintf(where, sizeof where, "%s", f->file ? ui_path_shown(f->file) : "?");
  int cells = ui_text_cells(where);
  if (cells <= w || w < 4) {
    ui_grid_text(g, x, y, w, where, role, gl->braille);
    return;
  }
  const char *tail = where;
  for (int skip = cells - (w - 1); skip > 0; skip--) {
    tail++;
    while ((*tail & 0xc0) == 0x80)
      tail++;
  }
  ui_grid_text(g, x, y, 1, gl->ellipsis, role, gl->braille);
  ui_grid_text(g, x + 1, y, w - 1, tail, role, gl->braille);
}

static void render_header(const struct problems *p, struct ui_grid *g, struct ui_rect r,
                          const struct ui_glyphs *gl) {
  ui_grid_fill(g, r, THEME_HEADER);
  size_t by_sev[3] = {0};
  for (size_t i = 0; i < count(p); i++)
    by_sev[p->findings->items[i].severity <= RECIPE_SEV_NOTE ? p->findings->items[i].severity : 2]++;
  char text[200];
  snprintf(text, sizeof text, " servetop%sproblems%s%zu error%s, %zu warning%s, %zu note%s",
           gl->separator, gl->separator, by_sev[0], by_sev[0] == 1 ? "" : "s", by_sev[1],
           by_sev[1] == 1 ? "" : "s", by_sev[2], by_sev[2] == 1 ? "" : "s");
  ui_put(g, r.x, r.y, r.x + r.w, text, THEME_HEADER, gl);
}

/* The selected problem, whole, in a box over the list. */
static void render_expanded(const struct problems *p, struct ui_grid *g, const struct ui_layout *l,
                            const struct ui_glyphs *gl) {
  const struct recipe_finding *f = &p->findings->items[p->selected];
  int w = l->cols - 8 < 100 ? l->cols - 8 : 100;
  int text_w = w - 4;
  const char *msg = f->message ? f->message : "";
  char where[1200];
  if (f->line > 0)
    snprintf(where, sizeof where, "%s:%d", f->file ? ui_path_shown(f->file) : "?", f->line);
  else
    snprintf(where, sizeof where, "%s", f->file ? ui_path_shown(f->file) : "?");
  int where_lines = ui_wrap_text(NULL, 0, 0, 0, 0, text_w - 7, where, 0, THEME_MAIN, gl->braille);
  int msg_lines = ui_wrap_text(NULL, 0, 0, 0, 0, text_w, msg, 0, THEME_MAIN, gl->braille);
  int h = where_lines + msg_lines + 6;
  if (h > l->rows - 4)
    h = l->rows - 4;
  struct ui_rect box = {(l->cols - w) / 2, (l->rows - h) / 2, w, h};
  ui_grid_fill(g, box, THEME_MAIN);
  char title[160];
  snprintf(title, sizeof title, "%s%s%s%s%s", recipe_severity_name(f->severity), gl->separator,
           f->rule ? f->rule : "?", f->rule_id && f->rule_id[0] ? " " : "",
           f->rule_id ? f->rule_id : "");
  ui_box(g, box, title, THEME_BORDER, ui_severity_role(f->severity), gl);
  struct ui_rect in = ui_rect_inner(box);
  int x = in.x + 1, end = in.x + in.w - 1, y = in.y;
  int bottom = in.y + in.h - 1; /* the last line says how to close */
  ui_put(g, x, y, end, "where ", THEME_INACTIVE, gl);
  y += ui_wrap_text(g, x + 7, y, 0, bottom - y, text_w - 7, where, 0, THEME_MAIN, gl->braille);
  if (y < bottom)
    ui_put(g, x, y, end, "recipe", THEME_INACTIVE, gl);
  if (y < bottom)
    ui_put(g, x + 7, y, end, f->recipe && f->recipe[0] ? f->recipe : "(the file as a whole)",
        THEME_MAIN, gl);
  y += 2;
  if (y < bottom)
    ui_wrap_text(g, x, y, 0, bottom - y, text_w, msg, 0, ui_severity_role(f->severity), gl->braille);
  ui_put(g, x, in.y + in.h - 1, end, "any key closes", THEME_INACTIVE, gl);
}

static void render(void *self, struct ui_grid *g, const struct ui_ctx *ctx) {
  struct problems *p = self;
  const struct ui_layout *l = ctx->layout;
  const struct ui_glyphs *gl = ctx->gl;
  if (!ui_frame_begin(g, l, gl))
    return;
  render_header(p, g, l->slot[UI_SLOT_HEADER], gl);
  struct ui_rect box = l->slot[UI_SLOT_BODY];
  char title[64];
  snprintf(title, sizeof title, "Problems %zu", count(p));
  ui_box(g, box, title, THEME_BORDER, THEME_TITLE, gl);
  struct ui_rect in = ui_rect_inner(box);
  int end = in.x + in.w;
  if (count(p) == 0) {
    ui_put(g, in.x + 1, in.y, end, "no problems: every recipe loaded and the doctor found nothing",
        THEME_OK, gl);
    return;
  }
  /* columns: severity, where (up to 3/10 of the line), rule (when there is
   * room: Enter shows it anyway), message */
  int sev_w = 9, where_w = 0, rule_w = 0;
  for (size_t i = 0; i < count(p); i++) {
    const struct recipe_finding *f = &p->findings->items[i];
    char where[1200];
    snprintf(where, sizeof where, "%s:%d", f->file ? ui_path_shown(f->file) : "?", f->line);
    int w = ui_text_cells(where), r = f->rule ? ui_text_cells(f->rule) : 1;
    where_w = w > where_w ? w : where_w;
    rule_w = r > rule_w ? r : rule_w;
  }
  if (where_w > in.w * 3 / 10)
    where_w = in.w * 3 / 10;
  if (rule_w > 26)
    rule_w = 26;
  bool show_rule = in.w >= 110;
  int x_sev = in.x + 1, x_where = x_sev + sev_w, x_rule = x_where + where_w + 2,
      x_msg = show_rule ? x_rule + rule_w + 2 : x_rule;
  ui_put(g, x_sev, in.y, end, "severity", THEME_HEADER, gl);
  ui_put(g, x_where, in.y, end, "where", THEME_HEADER, gl);
  if (show_rule)
    ui_put(g, x_rule, in.y, end, "rule", THEME_HEADER, gl);
  ui_put(g, x_msg, in.y, end, "message", THEME_HEADER, gl);
  int vis = visible_rows(l);
  if (p->selected >= count(p))
    p->selected = count(p) - 1;
  if (p->top > p->selected)
    p->top = p->selected;
  if (p->selected >= p->top + (size_t)vis)
    p->top = p->selected - (size_t)vis + 1;
  for (int i = 0; i < vis && p->top + (size_t)i < count(p); i++) {
    size_t idx = p->top + (size_t)i;
    const struct recipe_finding *f = &p->findings->items[idx];
    int y = in.y + 1 + i;
    bool sel = idx == p->selected;
    if (sel)
      ui_grid_fill(g, (struct ui_rect){in.x, y, in.w, 1}, THEME_SELECTED);
    enum theme_role role = sel ? THEME_SELECTED : THEME_MAIN;
    ui_put(g, x_sev, y, x_where - 1, recipe_severity_name(f->severity),
        sel ? THEME_SELECTED : ui_severity_role(f->severity), gl);
    put_location(g, x_where, y, where_w, f, role, gl);
    if (show_rule)
      ui_put(g, x_rule, y, x_rule + rule_w, f->rule ? f->rule : "?", sel ? role : THEME_INACTIVE, gl);
    ui_put(g, x_msg, y, end, f->message ? f->message : "", role, gl);
  }
  if (count(p) > (size_t)vis) {
    char pos[48];
    size_t last = p->top + (size_t)vis < count(p) ? p->top + (size_t)vis : count(p);
    snprintf(pos, sizeof pos, " %zu-%zu/%zu ", p->top + 1, last, count(p));
    int w = ui_text_cells(pos);
    ui_put(g, box.x + box.w - w - 2, box.y + box.h - 1, box.x + box.w - 1, pos, THEME_INACTIVE, gl);
  }
  if (p->expanded)
    render_expanded(p, g, l, gl);
}

static void footer(void *self, struct ui_footer *f) {
  const struct problems *p = self;
  if (p->expanded) {
    f->prompt = "any key closes the message";
    f->prompt_role = THEME_INACTIVE;
    return;
  }
  if (count(p) == 0)
    f->inactive |= 1u << 0;
}

const struct ui_screen problems_screen = {
    .name = "problems",
    .help_title = "Problems keys",
    .keys = keys,
    .n_keys = ST_ARRAY_LEN(keys),
    .view = UI_VIEW_PAGE,
    .key = on_key,
    .click = on_click,
    .wheel = on_wheel,
    .render = render,
    .footer = footer,
};
