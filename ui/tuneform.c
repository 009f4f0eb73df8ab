/* The Tune form: SLO, knobs, workload and budget of a search (pure; no ncurses). */
#include "tuneform.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "run/run.h"
#include "ui_util.h"

enum { KEY_START = 0 }; /* hints that can be inactive */
static const struct ui_key_help keys[] = {
    {"Enter", "start the search (once every field checks out)", "start", NULL, UI_KEY_ENTER, 0},
    {"Tab Up/Down", "the next / previous field", "field", "Tab", UI_KEY_TAB, 1},
    {"Bksp", "delete a character (other keys are typed)", NULL, NULL, 0, 0},
    {"mouse", "click a field to type into it", NULL, NULL, 0, 0},
    UI_KEY_HELP_ROW,
    {"Esc", "cancel: back to the recipes", "cancel", NULL, UI_KEY_ESCAPE, 0},
};

static const char *const labels[TUNEFORM_FIELDS] = {"SLO",   "knob 1", "knob 2", "knob 3",
                                                    "knob 4", "input", "output", "budget"};

static void free_knobs(struct tuneform *f) {
  for (size_t i = 0; i < f->n_knobs; i++)
    tune_knob_free(&f->knobs[i]);
  memset(f->knobs, 0, sizeof f->knobs);
  f->n_knobs = 0;
}

void tuneform_open(struct tuneform *f, const struct recipe *recipe, const struct recipe *twin) {
  tuneform_fini(f);
  f->recipe = recipe;
  f->twin = twin;
  tuneform_set(f, TUNEFORM_SLO, "ttft_p99_ms=2000,tpot_p99_ms=50");
  const struct eng_ops *e = recipe && recipe->engine ? eng_find(recipe->engine) : NULL;
  int k = TUNEFORM_KNOB1;
  if (e && eng_gpu_memory_flag(e)) { /* a GPU engine: its KV cache is a share of memory */
    tuneform_set(f, k++, "max-batch=64,128,256");
    tuneform_set(f, k++, "kv-cache=0.80:0.92:0.04");
  } else {
    tuneform_set(f, k++, "max-batch=1,2,4");
  }
  if (twin)
    tuneform_set(f, k++, "spec=off,on");
  snprintf(f->text[TUNEFORM_ISL], sizeof f->text[0], "%d",
           run_workload_len(0, recipe ? recipe->isl : 0, RUN_DEFAULT_ISL));
  snprintf(f->text[TUNEFORM_OSL], sizeof f->text[0], "%d",
           run_workload_len(0, recipe ? recipe->osl : 0, RUN_DEFAULT_OSL));
  tuneform_set(f, TUNEFORM_BUDGET, "30m");
}

void tuneform_fini(struct tuneform *f) {
  free_knobs(f);
  memset(f, 0, sizeof *f);
  f->error_field = -1;
}

void tuneform_set(struct tuneform *f, int field, const char *text) {
  if (field < 0 || field >= TUNEFORM_FIELDS)
    return;
  if (text != f->text[field])
    snprintf(f->text[field], sizeof f->text[field], "%s", text);
  tuneform_check(f);
}

int tuneform_parse_budget(const char *text, double *out_s, struct st_err *err) {
  const char *t = text + strspn(text, " ");
  if (!*t || strcmp(t, "0") == 0) {
    *out_s = 0; /* none */
    return 0;
  }
  if (parse_duration_s(t, out_s) != 0)
    return err_setf(err, "'%.40s' is not a duration: 30m, 90s, 2h, 1h30m (0: none)", text);
  return 0;
}

/* The error of one field, prefixed by its label. */
static void field_error(struct tuneform *f, int field, const char *msg) {
  snprintf(f->error, sizeof f->error, "%s: %s", labels[field], msg);
  f->error_field = field;
}

void tuneform_check(struct tuneform *f) {
  struct st_err err = {{0}};
  f->error[0] = '\0';
  f->error_field = -1;
  free_knobs(f);
  if (tune_slo_parse(f->text[TUNEFORM_SLO], &f->slo, &err) != 0) {
    field_error(f, TUNEFORM_SLO, err.msg);
    return;
  }
  for (int i = 0; i < TUNEFORM_MAX_KNOBS; i++) {
    const char *t = f->text[TUNEFORM_KNOB1 + i];
    if (!t[strspn(t, " ")])
      continue; /* an empty line: no knob */
    struct tune_knob *k = &f->knobs[f->n_knobs];
    if (tune_knob_parse(t, k, &err) != 0) {
      field_error(f, TUNEFORM_KNOB1 + i, err.msg);
      free_knobs(f);
      return;
    }
    f->n_knobs++;
    for (size_t j = 0; j + 1 < f->n_knobs; j++)
      if (strcmp(f->knobs[j].name, k->name) == 0) {
        char msg[160];
        snprintf(msg, sizeof msg, "knob '%.60s' is on two lines", k->name);
        field_error(f, TUNEFORM_KNOB1 + i, msg);
        free_knobs(f);
        return;
      }
  }
  int *lengths[] = {&f->isl, &f->osl};
  for (int i = TUNEFORM_ISL; i <= TUNEFORM_OSL; i++)
    if (parse_int(f->text[i], lengths[i - TUNEFORM_ISL]) != 0 || *lengths[i - TUNEFORM_ISL] < 1) {
      char msg[120];
      snprintf(msg, sizeof msg, "a whole number of tokens >= 1, not '%.40s'", f->text[i]);
      field_error(f, i, msg);
      return;
    }
  if (tuneform_parse_budget(f->text[TUNEFORM_BUDGET], &f->budget_s, &err) != 0)
    field_error(f, TUNEFORM_BUDGET, err.msg);
}

static bool on_key(void *self, int key, struct ui_ctx *ctx) {
  struct tuneform *f = self;
  if (key == UI_KEY_ESCAPE) {
    ctx->cmd.kind = UI_CMD_CLOSE;
    return true;
  }
  if (key == UI_KEY_ENTER) { /* start, or go to the field at fault */
    tuneform_check(f);
    if (!f->error[0])
      ctx->cmd.kind = UI_CMD_TUNE;
    else if (f->error_field >= 0)
      f->field = f->error_field;
    return true;
  }
  int r = ui_form_field_key(&f->field, TUNEFORM_FIELDS, f->text[f->field], sizeof f->text[0], key);
  if (r == 2)
    tuneform_check(f);
  return r != 0;
}

enum { LABEL_W = 8, BOX_W = 96, ERROR_LINES = 2 };

/* What the field with the keys takes, under the fields. */
static const char *const hints[TUNEFORM_FIELDS] = {
    "ttft/tpot/e2el/itl_p99_ms=MS (ceilings), min_tok_s_per_user=N (a floor)",
    "NAME=LO:HI:STEP or NAME=V1,V2,...: kv-cache, max-batch, spec, any flag",
    "NAME=LO:HI:STEP or NAME=V1,V2,...: kv-cache, max-batch, spec, any flag",
    "NAME=LO:HI:STEP or NAME=V1,V2,... (an empty line: no knob)",
    "NAME=LO:HI:STEP or NAME=V1,V2,... (an empty line: no knob)",
    "input tokens a request",
    "output tokens a request",
    "no point starts after it: 30m, 90s, 2h, 1h30m (0: none)",
};

/* Where the form's box goes on a cols x rows screen; its fields are on rows y + 3 .. */
static struct ui_rect form_box(int cols, int rows) {
  int w = cols - 4 < BOX_W ? cols - 4 : BOX_W;
  int h = 2 + 2 + TUNEFORM_FIELDS + 1 + ERROR_LINES;
  return (struct ui_rect){(cols - w) / 2, (rows - h) / 2, w, h};
}

static bool on_click(void *self, int x, int y, struct ui_ctx *ctx) {
  struct tuneform *f = self;
  struct ui_rect box = form_box(ctx->layout->cols, ctx->layout->rows);
  int field = y - (box.y + 3);
  if (!ui_rect_contains(box, x, y) || field < 0 || field >= TUNEFORM_FIELDS)
    return false;
  f->field = field; /* a click on a field gives it the keys */
  return true;
}

static void render(void *self, struct ui_grid *g, const struct ui_ctx *ctx) {
  struct tuneform *f = self;
  const struct ui_glyphs *gl = ctx->gl;
  if (ctx->layout->too_small || !f->recipe)
    return;
  struct ui_rect box = form_box(ctx->layout->cols, ctx->layout->rows);
  ui_grid_fill(g, box, THEME_MAIN);
  char title[220];
  snprintf(title, sizeof title, "Tune %s", f->recipe->name);
  ui_box(g, box, title, THEME_BORDER, THEME_TITLE, gl);
  struct ui_rect in = ui_rect_inner(box);
  int x = in.x + 1, vx = x + LABEL_W, end = in.x + in.w - 1, y = in.y;
  ui_put(g, x, y, end,
         "Each setting of the knobs: the highest load whose SLO holds. The best wins.",
         THEME_INACTIVE, gl);
  for (int i = 0; i < TUNEFORM_FIELDS; i++) {
    int fy = y + 2 + i;
    bool bad = f->error_field == i;
    ui_put(g, x, fy, vx, labels[i], f->field == i ? THEME_HOTKEY : bad ? THEME_ERROR
                                                                       : THEME_INACTIVE, gl);
    int fx = ui_put(g, vx, fy, end, f->text[i], bad ? THEME_ERROR : THEME_MAIN, gl);
    if (f->field == i)
      ui_put(g, fx, fy, end, "_", THEME_HOTKEY, gl);
  }
  ui_put(g, vx, y + 2 + TUNEFORM_FIELDS, end, hints[f->field], THEME_INACTIVE, gl);
  int ey = y + 2 + TUNEFORM_FIELDS + 1;
  if (f->error[0])
    ui_wrap_text(g, x, ey, 0, ERROR_LINES, end - x, f->error, 2, THEME_ERROR, gl->braille);
  else {
    char line[200];
    size_t space = 1;
    for (size_t i = 0; i < f->n_knobs; i++)
      space *= f->knobs[i].n_values;
    snprintf(line, sizeof line, "%zu knob%s, %zu setting%s; each searched over concurrency",
             f->n_knobs, f->n_knobs == 1 ? "" : "s", space, space == 1 ? "" : "s");
    ui_put(g, x, ey, end, line, THEME_OK, gl);
  }
}

static void footer(void *self, struct ui_footer *out) {
  struct tuneform *f = self;
  ui_form_footer(out, f->error[0] != '\0', f->waiting, KEY_START, "fix the field in red to start");
}

const struct ui_screen tuneform_screen = {
    .name = "tuneform",
    .help_title = "Tune form keys",
    .keys = keys,
    .n_keys = ST_ARRAY_LEN(keys),
    .overlay = true,
    .text_input = true,
    .key = on_key,
    .click = on_click,
    .render = render,
    .footer = footer,
};
