/* The launch form: concurrency, sweep, overrides, engine (pure; no ncurses). */
#include "launchform.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "recipe/recipe.h"
#include "ui_util.h"

enum { KEY_START = 0, KEY_PICK = 1, KEY_HELP = 5 }; /* hints that can be inactive */
static const struct ui_key_help keys[] = {
    {"Enter", "start the run (once the overrides check out)", "start", NULL, UI_KEY_ENTER, 0},
    {"Left/Right h/l", "one concurrency of the sweep, or the whole sweep", "pick", "h/l", 'l', 2},
    {"Tab", "KEY=VALUE server flags; num-prompts= isl= osl= (Tab: back)",
     "overrides", NULL, UI_KEY_TAB, 1},
    {"Bksp", "(overrides) delete a character", NULL, NULL, 0, 0},
    {"mouse", "click a choice, or the overrides field", NULL, NULL, 0, 0},
    UI_KEY_HELP_ROW,
    {"Esc q", "cancel: back to the recipes", "cancel", "Esc", UI_KEY_ESCAPE, 0},
};

static int cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

void launchform_open(struct launchform *f, const struct recipe *recipe, const struct recipe *twin) {
  /* the form checks keys as they are typed, on this (the UI) thread: an engine's
   * --help is read by the probe, never here */
  eng_help_flags_never_run_here();
  ui_overrides_fini(&f->overrides);
  memset(f, 0, sizeof *f);
  f->recipe = recipe;
  f->twin = twin;
  f->probing = true;
  for (size_t i = 0; i < recipe->n_points; i++) {
    bool seen = false;
    for (size_t j = 0; j < f->n_concs; j++)
      seen = seen || f->concs[j] == recipe->points[i].conc;
    if (!seen && f->n_concs < LAUNCHFORM_MAX_CHOICES)
      f->concs[f->n_concs++] = recipe->points[i].conc;
  }
  qsort(f->concs, f->n_concs, sizeof f->concs[0], cmp_int);
  struct recipe_cmd cmd; /* shown before launch: who wrote the recipe is not known */
  if (recipe->n_points > 0 && recipe_server_cmd(recipe, NULL, &cmd, NULL) == 0) {
    recipe_loader_env(&cmd, f->trust, sizeof f->trust);
    recipe_cmd_fini(&cmd);
  }
  f->choice = f->n_concs; /* the whole sweep, unless one recipe: its first point */
  if (!twin && recipe->n_points > 0)
    for (size_t j = 0; j < f->n_concs; j++)
      if (f->concs[j] == recipe->points[0].conc)
        f->choice = j;
  launchform_set_text(f, "");
}

void launchform_fini(struct launchform *f) {
  ui_overrides_fini(&f->overrides);
  memset(f, 0, sizeof *f);
}

void launchform_set_engine(struct launchform *f, bool probing, const char *text) {
  f->probing = probing;
  snprintf(f->engine, sizeof f->engine, "%s", text ? text : "");
  if (!probing && f->recipe && f->text[0]) /* the probe has read the engine's flags: */
    launchform_set_text(f, f->text);       /* check what was typed against them */
}

void launchform_set_text(struct launchform *f, const char *text) {
  if (text != f->text)
    snprintf(f->text, sizeof f->text, "%s", text);
  ui_overrides_fini(&f->overrides);
  f->error[0] = '\0';
  struct st_err err = {{0}};
  struct ui_overrides twin_check;
  if (ui_overrides_parse(f->text, f->recipe, &f->overrides, &err) != 0) {
    snprintf(f->error, sizeof f->error, "%s", err.msg);
  } else if (f->twin) { /* an A/B run applies them to both arms */
    if (ui_overrides_parse(f->text, f->twin, &twin_check, &err) != 0)
      snprintf(f->error, sizeof f->error, "MTP arm: %s", err.msg);
    else
      ui_overrides_fini(&twin_check);
    if (f->error[0])
      ui_overrides_fini(&f->overrides);
  }
}

/* ---------------------------------------------------------------- keys */

static bool start(struct launchform *f, struct ui_ctx *ctx) {
  if (f->error[0])
    return true; /* the error is on screen; nothing starts */
  struct ui_launch *l = &ctx->cmd.launch;
  ctx->cmd.kind = UI_CMD_RUN;
  l->recipe = f->recipe;
  l->twin = f->twin;
  l->sweep = f->choice >= f->n_concs;
  l->conc = l->sweep ? 0 : f->concs[f->choice];
  l->overrides = f->overrides.items;
  l->n_overrides = f->overrides.n;
  l->num_prompts = f->overrides.num_prompts;
  l->isl = f->overrides.isl;
  l->osl = f->overrides.osl;
  return true;
}

static void pick(struct launchform *f, int step) {
  long c = (long)f->choice + step;
  if (c < 0)
    c = 0;
  if (c > (long)f->n_concs)
    c = (long)f->n_concs;
  f->choice = (size_t)c;
}

static bool on_key(void *self, int key, struct ui_ctx *ctx) {
  struct launchform *f = self;
  if (key == UI_KEY_ESCAPE) {
    ctx->cmd.kind = UI_CMD_CLOSE;
    return true;
  }
  if (key == UI_KEY_ENTER)
    return start(f, ctx);
  if (key == UI_KEY_TAB) {
    f->editing = !f->editing;
    return true;
  }
  if (f->editing) {
    if (!ui_edit_line(f->text, sizeof f->text, key))
      return false;
    launchform_set_text(f, f->text);
    return true;
  }
  switch (key) {
  case UI_KEY_LEFT:
  case 'h': pick(f, -1); return true;
  case UI_KEY_RIGHT:
  case 'l': pick(f, 1); return true;
  case 'q':
  case 'Q': ctx->cmd.kind = UI_CMD_CLOSE; return true;
  default: return false;
  }
}

static bool on_click(void *self, int x, int y, struct ui_ctx *ctx) {
  struct launchform *f = self;
  struct ui_rect box = launchform_box(f, ctx->layout->cols, ctx->layout->rows);
  if (!ui_rect_contains(box, x, y))
    return false;
  for (size_t i = 0; i <= f->n_concs; i++)
    if (ui_rect_contains(f->choice_at[i], x, y)) {
      f->choice = i;
      f->editing = false;
      return true;
    }
  if (ui_rect_contains(f->field_at, x, y)) {
    f->editing = true;
    return true;
  }
  return false;
}

/* ---------------------------------------------------------------- drawing */

enum { LABEL_W = 9, BOX_MAX_W = 96, MAX_CHANGES = 4 };

/* The overrides field's hint, in the flags of the engine the recipe names
 * (mem-fraction-static on SGLang, gpu-memory-utilization on vLLM, ctx-size on
 * llama.cpp), from the engine table's KV-cache and batch-cap rows. */
static void override_hint(const struct recipe *r, char *buf, size_t n) {
  const struct eng_ops *e = r ? eng_find(r->engine) : NULL;
  const struct eng_flag *kv = e ? eng_knob_row(e, ENG_KNOB_KV_CACHE) : NULL;
  const struct eng_flag *cap = e ? eng_knob_row(e, ENG_KNOB_BATCH_CAP) : NULL;
  if (!kv && !cap) {
    snprintf(buf, n, "(Tab, then KEY=VALUE words: kv-cache=... max-batch=...)");
    return;
  }
  const char *first = kv ? kv->names[0] : cap->names[0];
  const char *second = kv && cap ? cap->names[0] : NULL;
  snprintf(buf, n, "(Tab, then KEY=VALUE words: %s=...%s%s%s)", first + strspn(first, "-"),
           second ? " " : "", second ? second + strspn(second, "-") : "", second ? "=..." : "");
}

static void choice_label(const struct launchform *f, size_t i, char *buf, size_t n) {
  if (i < f->n_concs)
    snprintf(buf, n, "conc %d", f->concs[i]);
  else
    snprintf(buf, n, "whole sweep (%zu point%s)", f->recipe->n_points,
             f->recipe->n_points == 1 ? "" : "s");
}

/* Lays the choices out from (x0, y0) in w cells, wrapping; returns the lines. */
static int layout_choices(struct launchform *f, int x0, int y0, int w) {
  int x = x0, y = y0;
  for (size_t i = 0; i <= f->n_concs; i++) {
    char label[64];
    choice_label(f, i, label, sizeof label);
    int cw = ui_text_cells(label) + 2;
    if (x > x0 && x + cw > x0 + w) {
      x = x0;
      y++;
    }
    f->choice_at[i] = (struct ui_rect){x, y, cw, 1};
    x += cw + 1;
  }
  return y - y0 + 1;
}

static int lower_lines(const struct launchform *f) {
  if (f->error[0])
    return 2;
  int n = f->overrides.n == 0 ? 1 : (int)(f->overrides.n < MAX_CHANGES ? f->overrides.n : MAX_CHANGES);
  return n + (f->overrides.bench_line ? 1 : 0);
}

struct ui_rect launchform_box(const struct launchform *f, int cols, int rows) {
  int w = cols - 4 < BOX_MAX_W ? cols - 4 : BOX_MAX_W;
  struct launchform probe = *f; /* layout_choices writes positions: work on a copy */
  int chip_lines = layout_choices(&probe, 0, 0, w - 4 - LABEL_W);
  /* engine, [trust], blank, choices, parallelism, blank, field, its lines, blank, borders */
  int h = 2 + 1 + (f->trust[0] ? 1 : 0) + 1 + chip_lines + 1 + 1 + 1 + lower_lines(f) + 1;
  if (h > rows - 2)
    h = rows - 2;
  return (struct ui_rect){(cols - w) / 2, (rows - h) / 2, w, h};
}

static void render(void *self, struct ui_grid *g, const struct ui_ctx *ctx) {
  struct launchform *f = self;
  const struct ui_layout *l = ctx->layout;
  const struct ui_glyphs *gl = ctx->gl;
  if (l->too_small || !f->recipe)
    return;
  struct ui_rect box = launchform_box(f, l->cols, l->rows);
  ui_grid_fill(g, box, THEME_MAIN);
  char title[300];
  if (f->twin)
    snprintf(title, sizeof title, "A/B run: %s, then %s", f->recipe->name, f->twin->name);
  else
    snprintf(title, sizeof title, "Run %s", f->recipe->name);
  ui_box(g, box, title, THEME_BORDER, THEME_TITLE, gl);
  struct ui_rect in = ui_rect_inner(box);
  int x = in.x + 1, vx = x + LABEL_W, end = in.x + in.w - 1, y = in.y;
  int bottom = in.y + in.h;

  ui_put(g, x, y, vx, "engine", THEME_INACTIVE, gl);
  if (f->probing)
    ui_put(g, vx, y, end, f->waiting ? "probing... (starts when it answers)" : "probing...",
        THEME_WARNING, gl);
  else /* the label says "engine" already */
    ui_put(g, vx, y, end, str_starts_with(f->engine, "engine ") ? f->engine + 7 : f->engine, THEME_MAIN,
        gl);
  if (f->trust[0] && y + 1 < bottom) {
    char line[320];
    snprintf(line, sizeof line, "sets %s: code from outside the image runs in the server "
             "(lint L23)", f->trust);
    ui_put(g, x, y + 1, vx, "trust", THEME_INACTIVE, gl);
    ui_put(g, vx, y + 1, end, line, THEME_WARNING, gl);
    y++;
  }
  y += 2;

  if (y < bottom)
    ui_put(g, x, y, vx, "measure", f->editing ? THEME_INACTIVE : THEME_HOTKEY, gl);
  int chip_lines = layout_choices(f, vx, y, end - vx);
  for (size_t i = 0; i <= f->n_concs; i++) {
    struct ui_rect r = f->choice_at[i];
    if (r.y >= bottom) {
      f->choice_at[i].w = 0;
      continue;
    }
    char label[64], chip[72];
    choice_label(f, i, label, sizeof label);
    bool sel = i == f->choice;
    snprintf(chip, sizeof chip, "%s%s%s", sel ? "[" : " ", label, sel ? "]" : " ");
    ui_put(g, r.x, r.y, end, chip, sel ? (f->editing ? THEME_TITLE : THEME_SELECTED) : THEME_MAIN, gl);
  }
  y += chip_lines;
  if (y < bottom && f->recipe->n_points > 0) {
    const struct recipe_point *p0 = &f->recipe->points[0];
    char note[160];
    if (f->choice < f->n_concs)
      snprintf(note, sizeof note, "one point: tp%d ep%d%s at concurrency %d", p0->tp, p0->ep,
               p0->dp_attn ? " dp-attn" : "", f->concs[f->choice]);
    else
      snprintf(note, sizeof note, "every point of the sweep, the server kept up between them%s",
               f->twin ? ", off arm then MTP arm" : "");
    ui_put(g, vx, y, end, note, THEME_INACTIVE, gl);
  }
  y += 2;

  if (y < bottom) {
    ui_put(g, x, y, vx, "set", f->editing ? THEME_HOTKEY : THEME_INACTIVE, gl);
    f->field_at = (struct ui_rect){vx, y, end - vx, 1};
    int fx = vx;
    if (f->text[0] || f->editing) {
      fx = ui_put(g, fx, y, end, f->text, THEME_MAIN, gl);
      if (f->editing)
        ui_put(g, fx, y, end, "_", THEME_HOTKEY, gl);
    } else {
      char hint[160];
      override_hint(f->recipe, hint, sizeof hint);
      ui_put(g, fx, y, end, hint, THEME_INACTIVE, gl);
    }
  }
  y++;
  if (f->error[0]) {
    ui_wrap_text(g, vx, y, 0, bottom - y < 2 ? bottom - y : 2, end - vx, f->error, 2, THEME_ERROR,
                 gl->braille);
  } else {
    if (f->overrides.bench_line && y < bottom)
      ui_put(g, vx, y++, end, f->overrides.bench_line, THEME_OK, gl);
    if (f->overrides.n == 0) {
      if (y < bottom)
        ui_put(g, vx, y, end, "the recipe's flags as they are", THEME_INACTIVE, gl);
    } else {
      for (size_t i = 0; i < f->overrides.n && i < MAX_CHANGES && y + (int)i < bottom; i++)
        ui_put(g, vx, y + (int)i, end, f->overrides.changes[i], THEME_OK, gl);
    }
  }
}

static void footer(void *self, struct ui_footer *out) {
  struct launchform *f = self;
  if (f->editing) /* h, l and ? are text in the field */
    out->inactive |= 1u << KEY_PICK | 1u << KEY_HELP;
  if (f->error[0]) {
    ui_footer_blocked(out, KEY_START, "fix the overrides to start");
  } else if (f->waiting) {
    out->status = "waiting for the engine probe...";
    out->status_role = THEME_WARNING;
  }
}

const struct ui_screen launchform_screen = {
    .name = "launch",
    .help_title = "Launch form keys",
    .keys = keys,
    .n_keys = ST_ARRAY_LEN(keys),
    .overlay = true,
    .key = on_key,
    .click = on_click,
    .render = render,
    .footer = footer,
};
