/* The footer line of every screen: hints from the key table, a status, or a
 * prompt (pure; no ncurses). */
#include "screen.h"

#include <string.h>

#include "ui_util.h"

void ui_screen_footer(const struct ui_screen *s, void *self, struct ui_footer *out) {
  memset(out, 0, sizeof *out);
  out->status_role = THEME_MAIN;
  out->prompt_role = THEME_HOTKEY;
  if (s->footer)
    s->footer(self, out);
  if (!out->keys) {
    out->keys = s->keys;
    out->n_keys = s->n_keys;
  }
}

void ui_screen_draw_footer(const struct ui_screen *s, void *self, struct ui_grid *g,
                           const struct ui_ctx *ctx) {
  if (ctx->layout->too_small)
    return;
  struct ui_footer f;
  ui_screen_footer(s, self, &f);
  ui_footer_draw(g, ctx->layout->slot[UI_SLOT_FOOTER], &f, ctx->gl);
}

void ui_footer_input(struct ui_footer *f, const char *prompt, const char *input, const char *hint) {
  f->prompt = prompt;
  f->input = input;
  f->prompt_hint = hint;
}

const char *ui_footer_hint_keys(const struct ui_key_help *k) {
  return k->hint_keys ? k->hint_keys : k->keys;
}

static int hint_width(const struct ui_key_help *k) {
  return ui_text_cells(ui_footer_hint_keys(k)) + 1 + ui_text_cells(k->hint);
}

/* Width of the shown hints with gap cells between them. */
static int hints_width(const struct ui_footer *f, const bool *shown, int gap) {
  int w = 0, n = 0;
  for (size_t i = 0; i < f->n_keys; i++)
    if (shown[i]) {
      w += hint_width(&f->keys[i]) + (n ? gap : 0);
      n++;
    }
  return w;
}

/* Drops the shown hint with the highest drop (the later one on a tie);
 * false when only drop-0 hints are left. */
static bool drop_one(const struct ui_footer *f, bool *shown) {
  size_t victim = SIZE_MAX;
  for (size_t i = 0; i < f->n_keys; i++)
    if (shown[i] && f->keys[i].drop > 0 &&
        (victim == SIZE_MAX || f->keys[i].drop >= f->keys[victim].drop))
      victim = i;
  if (victim == SIZE_MAX)
    return false;
  shown[victim] = false;
  return true;
}

void ui_footer_plan(const struct ui_footer *f, int x0, int w, struct ui_footer_plan *out) {
  memset(out, 0, sizeof *out);
  if (w <= 0)
    return;
  if (f->prompt) {
    out->status_x = x0;
    return;
  }
  bool shown[UI_FOOTER_MAX_HINTS] = {false};
  size_t n_hints = 0;
  for (size_t i = 0; i < f->n_keys && i < UI_FOOTER_MAX_HINTS; i++)
    if (f->keys[i].hint) {
      shown[i] = true;
      n_hints++;
    }
  /* news (an error, a warning, a change) gets what it needs, the hints make
   * room down to those that never go; a dim note only gets what is left */
  int status_need = f->status && f->status[0] ? ui_text_cells(f->status) : 0;
  int budget = w;
  if (status_need > 0 && f->status_role != THEME_INACTIVE) {
    bool essential[UI_FOOTER_MAX_HINTS] = {false};
    for (size_t i = 0; i < f->n_keys && i < UI_FOOTER_MAX_HINTS; i++)
      essential[i] = shown[i] && f->keys[i].drop == 0;
    int floor = hints_width(f, essential, 1);
    budget = w - status_need - 2;
    if (budget < floor)
      budget = floor;
  }
  int gap = 2;
  for (;;) {
    if (hints_width(f, shown, 2) <= budget) {
      gap = 2;
      break;
    }
    if (hints_width(f, shown, 1) <= budget) {
      gap = 1;
      break;
    }
    if (!drop_one(f, shown)) {
      gap = 1; /* only the ones that never go: draw what fits */
      break;
    }
  }
  int x = x0, end = x0 + w;
  for (size_t i = 0; i < f->n_keys && i < UI_FOOTER_MAX_HINTS; i++) {
    if (!shown[i])
      continue;
    int hw = hint_width(&f->keys[i]);
    if (out->n > 0)
      x += gap;
    if (x + hw > end)
      break;
    out->hint[out->n].key = i;
    out->hint[out->n].x = x;
    out->hint[out->n].key_w = ui_text_cells(ui_footer_hint_keys(&f->keys[i]));
    out->hint[out->n].w = hw;
    out->n++;
    x += hw;
  }
  out->n_dropped = n_hints - out->n;
  if (status_need > 0) {
    out->status_x = out->n ? x + 2 : x0;
    if (out->status_x > end)
      out->status_x = end;
    out->status_w = end - out->status_x;
  }
}

void ui_footer_draw(struct ui_grid *g, struct ui_rect r, const struct ui_footer *f,
                    const struct ui_glyphs *gl) {
  if (!ui_rect_visible(r))
    return;
  int end = r.x + r.w;
  if (f->prompt) {
    int x = ui_put(g, r.x, r.y, end, f->prompt, f->prompt_role, gl);
    if (f->input) {
      x = ui_put(g, x, r.y, end, f->input, THEME_MAIN, gl);
      x = ui_put(g, x, r.y, end, "_", THEME_HOTKEY, gl);
    }
    if (f->prompt_hint)
      ui_put(g, x + 2, r.y, end, f->prompt_hint, THEME_INACTIVE, gl);
    return;
  }
  struct ui_footer_plan plan;
  ui_footer_plan(f, r.x, r.w, &plan);
  for (size_t i = 0; i < plan.n; i++) {
    const struct ui_key_help *k = &f->keys[plan.hint[i].key];
    bool off = plan.hint[i].key < 64 && (f->inactive >> plan.hint[i].key & 1);
    int x = ui_put(g, plan.hint[i].x, r.y, end, ui_footer_hint_keys(k), off ? THEME_INACTIVE : THEME_HOTKEY,
                gl);
    ui_put(g, x + 1, r.y, end, k->hint, off ? THEME_INACTIVE : THEME_MAIN, gl);
  }
  if (plan.status_w > 0)
    ui_put(g, plan.status_x, r.y, plan.status_x + plan.status_w, f->status, f->status_role, gl);
}

/* "+/-", "[ ]": single keys with separators between them. */
static bool single_keys(const char *text) {
  size_t n = strlen(text);
  if (n < 3 || n % 2 == 0)
    return false;
  for (size_t i = 1; i < n; i += 2)
    if (text[i] != '/' && text[i] != ' ')
      return false;
  return true;
}

int ui_footer_key_at(const struct ui_footer *f, struct ui_rect r, int x) {
  if (f->prompt || !ui_rect_visible(r))
    return 0;
  struct ui_footer_plan plan;
  ui_footer_plan(f, r.x, r.w, &plan);
  for (size_t i = 0; i < plan.n; i++) {
    int hx = plan.hint[i].x;
    if (x < hx || x >= hx + plan.hint[i].w)
      continue;
    const struct ui_key_help *k = &f->keys[plan.hint[i].key];
    if (plan.hint[i].key < 64 && (f->inactive >> plan.hint[i].key & 1))
      return 0;
    const char *text = ui_footer_hint_keys(k);
    if (single_keys(text) && x < hx + plan.hint[i].key_w) {
      int c = text[x - hx];
      return c == '/' || c == ' ' ? 0 : c;
    }
    return k->code;
  }
  return 0;
}
