/* The help box over a screen (pure; no ncurses): the screen's keys, then
 * the glossary of every figure, from the figures model's table (FIG_TABLE's
 * label and meaning columns: the one place they are written). */
#include "help.h"

#include "metrics/metrics.h"
#include "ui_util.h"

#include <stdio.h>
#include <stdlib.h>

static const struct ui_key_help keys[] = {
    {"any key", "closes this help", "close", "any key", '?', 0},
};

static bool on_key(void *self, int key, struct ui_ctx *ctx) {
  (void)self;
  (void)key;
  ctx->cmd.kind = UI_CMD_CLOSE;
  return true;
}

static bool on_click(void *self, int x, int y, struct ui_ctx *ctx) {
  (void)x;
  (void)y;
  return on_key(self, 0, ctx);
}

static void render(void *self, struct ui_grid *g, const struct ui_ctx *ctx) {
  const struct helpview *h = self;
  if (!h->of || ctx->layout->too_small)
    return;
  /* the keys first (whole at 80 columns), then the glossary in the text
   * column: "label: meaning", cut with "…" where the screen is narrow */
  size_t n = h->of->n_keys + 1 + FIG_N;
  struct ui_key_help *rows = calloc(n, sizeof(*rows));
  char(*text)[160] = calloc(FIG_N, sizeof(*text));
  if (!rows || !text) {
    free(rows);
    free(text);
    return;
  }
  for (size_t i = 0; i < h->of->n_keys; i++)
    rows[i] = h->of->keys[i];
  size_t k = h->of->n_keys;
  rows[k++] = (struct ui_key_help){"", "Figures (docs/figures.md):", NULL, NULL, 0, 0};
  for (int id = 0; id < FIG_N; id++) {
    const struct fig_desc *d = fig_desc((enum fig_id)id);
    snprintf(text[id], sizeof text[id], "%s: %s", d->label, d->meaning);
    rows[k++] = (struct ui_key_help){"", text[id], NULL, NULL, 0, 0};
  }
  ui_help_box(g, ctx->layout->cols, ctx->layout->rows, h->of->help_title, rows, k, ctx->gl);
  free(text);
  free(rows);
}

const struct ui_screen help_screen = {
    .name = "help",
    .help_title = "Help",
    .keys = keys,
    .n_keys = ST_ARRAY_LEN(keys),
    .overlay = true,
    .key = on_key,
    .click = on_click,
    .wheel = NULL,
    .render = render,
};
