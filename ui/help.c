/* The help box over a screen (pure; no ncurses). */
#include "help.h"

#include "ui_util.h"

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
  ui_help_box(g, ctx->layout->cols, ctx->layout->rows, h->of->help_title, h->of->keys, h->of->n_keys,
              ctx->gl);
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
