/* The attach form: URL and concurrency of a server already running (pure). */
#include "attachform.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/run.h"
#include "ui_util.h"

enum { KEY_ATTACH = 0 }; /* hints that can be inactive */
static const struct ui_key_help keys[] = {
    {"Enter", "attach: the run view on that server (no launch, no restarts)", "attach", NULL,
     UI_KEY_ENTER, 0},
    {"Tab Up/Down", "the next / previous field", "field", "Tab", UI_KEY_TAB, 1},
    {"Bksp", "delete a character (other keys are typed)", NULL, NULL, 0, 0},
    UI_KEY_HELP_ROW,
    {"Esc", "cancel: back to the recipes", "cancel", NULL, UI_KEY_ESCAPE, 0},
};

void attachform_open(struct attachform *f, const char *url) {
  memset(f, 0, sizeof *f);
  snprintf(f->text[ATTACH_URL], sizeof f->text[0], "%s", url ? url : "http://127.0.0.1:8000");
  snprintf(f->text[ATTACH_CONC], sizeof f->text[0], "1");
  snprintf(f->text[ATTACH_ISL], sizeof f->text[0], "1024");
  snprintf(f->text[ATTACH_OSL], sizeof f->text[0], "128");
  attachform_check(f);
}

void attachform_check(struct attachform *f) {
  static const char *const names[] = {"URL", "the concurrency", "the input length",
                                      "the output length"};
  char host[128];
  int port;
  struct st_err err = {{0}};
  int *values[] = {NULL, NULL, &f->isl, &f->osl};
  f->error[0] = '\0';
  f->url = f->text[ATTACH_URL];
  if (run_parse_http_url(f->url, host, sizeof host, &port, &err) != 0) {
    snprintf(f->error, sizeof f->error, "%.250s", err.msg);
    return;
  }
  /* a list, as servetop attach --conc-list reads it */
  if (run_parse_conc_list(f->text[ATTACH_CONC], f->concs, ST_ARRAY_LEN(f->concs), &f->n_concs,
                          &err) != 0) {
    snprintf(f->error, sizeof f->error, "conc %.240s", err.msg);
    return;
  }
  for (int i = ATTACH_ISL; i < ATTACH_FIELDS; i++)
    if (parse_int(f->text[i], values[i]) != 0 || *values[i] < 1) {
      snprintf(f->error, sizeof f->error, "%s must be a whole number >= 1, not '%.40s'", names[i],
               f->text[i]);
      return;
    }
}

static bool on_key(void *self, int key, struct ui_ctx *ctx) {
  struct attachform *f = self;
  char *text = f->text[f->field];
  size_t len = strlen(text);
  switch (key) {
  case UI_KEY_ESCAPE: ctx->cmd.kind = UI_CMD_CLOSE; return true;
  case UI_KEY_TAB:
  case UI_KEY_DOWN: f->field = (f->field + 1) % ATTACH_FIELDS; return true;
  case UI_KEY_UP: f->field = (f->field + ATTACH_FIELDS - 1) % ATTACH_FIELDS; return true;
  case UI_KEY_ENTER:
    attachform_check(f);
    if (!f->error[0])
      ctx->cmd.kind = UI_CMD_ATTACH;
    return true;
  case UI_KEY_BACKSPACE:
    if (len)
      text[len - 1] = '\0';
    attachform_check(f);
    return true;
  default:
    if (key < 0x20 || key >= 0x7f || key == '?' || len + 1 >= sizeof f->text[0])
      return false;
    text[len] = (char)key;
    text[len + 1] = '\0';
    attachform_check(f);
    return true;
  }
}

enum { LABEL_W = 8, BOX_W = 76, BOX_H = 11 };

static void render(void *self, struct ui_grid *g, const struct ui_ctx *ctx) {
  struct attachform *f = self;
  const struct ui_layout *l = ctx->layout;
  const struct ui_glyphs *gl = ctx->gl;
  if (l->too_small)
    return;
  int w = l->cols - 4 < BOX_W ? l->cols - 4 : BOX_W;
  struct ui_rect box = {(l->cols - w) / 2, (l->rows - BOX_H) / 2, w, BOX_H};
  ui_grid_fill(g, box, THEME_MAIN);
  ui_box(g, box, "Attach to a running server", THEME_BORDER, THEME_TITLE, gl);
  struct ui_rect in = ui_rect_inner(box);
  int x = in.x + 1, vx = x + LABEL_W, end = in.x + in.w - 1, y = in.y;
  ui_put(g, x, y, end, "Any OpenAI-compatible server: servetop loads it and reads /metrics;",
         THEME_INACTIVE, gl);
  ui_put(g, x, y + 1, end, "it does not launch, restart or stop it.", THEME_INACTIVE, gl);
  static const char *const labels[] = {"URL", "conc", "input", "output"};
  for (int i = 0; i < ATTACH_FIELDS; i++) {
    int fy = y + 3 + i;
    ui_put(g, x, fy, vx, labels[i], f->field == i ? THEME_HOTKEY : THEME_INACTIVE, gl);
    int fx = ui_put(g, vx, fy, end, f->text[i], THEME_MAIN, gl);
    if (f->field == i)
      ui_put(g, fx, fy, end, "_", THEME_HOTKEY, gl);
    if (i >= ATTACH_ISL)
      ui_put(g, fx + 2, fy, end, "tokens a request", THEME_INACTIVE, gl);
    else if (i == ATTACH_CONC)
      ui_put(g, fx + 2, fy, end, "one or a list: 1,4,16", THEME_INACTIVE, gl);
  }
  if (f->error[0])
    ui_put(g, vx, y + 8, end, f->error, THEME_ERROR, gl);
  else
    ui_put(g, vx, y + 8, end, "the engine is told by what it serves", THEME_INACTIVE, gl);
}

static void footer(void *self, struct ui_footer *out) {
  struct attachform *f = self;
  if (f->error[0])
    ui_footer_blocked(out, KEY_ATTACH, "fix the URL or the concurrency to attach");
}

const struct ui_screen attachform_screen = {
    .name = "attach",
    .help_title = "Attach form keys",
    .keys = keys,
    .n_keys = ST_ARRAY_LEN(keys),
    .overlay = true,
    .text_input = true,
    .key = on_key,
    .render = render,
    .footer = footer,
};
