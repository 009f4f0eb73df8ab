/* Helpers of the dashboard's unit tests (check_ui_*.c): drive a screen
 * through its ops as tui.c does, and read frames back as text. */
#ifndef SERVETOP_TESTS_UI_TEST_H
#define SERVETOP_TESTS_UI_TEST_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recipe/recipe.h"
#include "screen.h"
#include "ui_util.h"

/* The recipes of tests/data/ui/recipes.yaml, named as the file is (a new set;
 * exits when the file cannot be read: also usable outside a test). */
static inline struct recipe_set *ut_fixture_recipes(void) {
  struct recipe_set *set = recipe_set_new();
  struct st_err err = {{0}};
  size_t len = 0;
  char *text = file_read_all(TEST_DATA_DIR "/ui/recipes.yaml", &len, &err);
  if (!text) {
    fprintf(stderr, "fixture: %s\n", err.msg);
    exit(EXIT_FAILURE);
  }
  /* Named by the path inside the project, not where the checkout lies: the
   * frames under test must not depend on how long the clone's path is. */
  recipe_set_add_yaml_buffer(set, "tests/data/ui/recipes.yaml", text, len);
  free(text);
  return set;
}

/* The fixture recipes and the three the form tests use: a recipe with an MTP twin
 * (*off), the twin (*mtp) and one without (*lone). */
static inline struct recipe_set *ut_fixture_trio(const struct recipe **off,
                                                 const struct recipe **mtp,
                                                 const struct recipe **lone) {
  struct recipe_set *set = ut_fixture_recipes();
  *off = recipe_set_find(set, "demo-fp8-h200-sglang:8192_1024");
  *mtp = recipe_set_find(set, "demo-fp8-h200-sglang-mtp");
  *lone = recipe_set_find(set, "other-bf16-b200-vllm");
  if (!*off || !*mtp || !*lone) {
    fprintf(stderr, "fixture: tests/data/ui/recipes.yaml lacks a recipe the form tests use\n");
    exit(EXIT_FAILURE);
  }
  return set;
}

/* A key to a screen at cols x rows; returns the command it asked for
 * (UI_CMD_NONE also when it did nothing: *acted tells, when not NULL). */
static inline struct ui_cmd ut_key(const struct ui_screen *s, void *self, int key, int cols,
                                   int rows, bool *acted) {
  struct ui_layout l;
  ui_layout_compute(cols, rows, s->overlay ? UI_VIEW_BROWSER : s->view, &l);
  struct ui_ctx ctx = {.layout = &l, .gl = ui_glyphs_get(true)};
  bool a = s->key(self, key, &ctx);
  if (acted)
    *acted = a;
  return ctx.cmd;
}

/* Types text into a screen at cols x rows, a key a character. */
static inline void ut_type(const struct ui_screen *s, void *self, const char *text, int cols,
                           int rows) {
  for (const char *c = text; *c; c++)
    ut_key(s, self, *c, cols, rows, NULL);
}

static inline enum ui_cmd_kind ut_press(const struct ui_screen *s, void *self, int key) {
  return ut_key(s, self, key, 80, 24, NULL).kind;
}

/* A click (lines 0) or a wheel turn at (x, y). */
static inline struct ui_cmd ut_mouse(const struct ui_screen *s, void *self, int x, int y, int lines,
                                     int cols, int rows, bool *acted) {
  struct ui_layout l;
  ui_layout_compute(cols, rows, s->overlay ? UI_VIEW_BROWSER : s->view, &l);
  struct ui_ctx ctx = {.layout = &l, .gl = ui_glyphs_get(true)};
  bool a = false;
  if (lines && s->wheel)
    a = s->wheel(self, x, y, lines, &ctx);
  else if (!lines && s->click)
    a = s->click(self, x, y, &ctx);
  if (acted)
    *acted = a;
  return ctx.cmd;
}

/* The key a click on the footer at column x presses (as tui.c does). */
static inline int ut_footer_key_at(const struct ui_screen *s, void *self, int x, int cols, int rows) {
  struct ui_layout l;
  ui_layout_compute(cols, rows, s->view, &l);
  struct ui_footer f;
  ui_screen_footer(s, self, &f);
  return ui_footer_key_at(&f, l.slot[UI_SLOT_FOOTER], x);
}

/* The grid as text, one line per row (heap). */
static inline char *ut_grid_text(const struct ui_grid *g) {
  struct sbuf sb = {0};
  for (int y = 0; y < g->rows; y++) {
    char *row = ui_grid_row_alloc(g, y);
    sbuf_printf(&sb, "%s\n", row);
    free(row);
  }
  return sbuf_take(&sb);
}

/* A whole frame of a screen with its footer, as text (heap); under is drawn
 * first when the screen is an overlay (NULL: nothing under it). */
static inline char *ut_frame(const struct ui_screen *s, void *self, const struct ui_screen *under,
                             void *under_self, int cols, int rows, bool unicode) {
  struct ui_grid g;
  ui_grid_init(&g, cols, rows);
  struct ui_layout l;
  ui_layout_compute(cols, rows, under ? under->view : s->view, &l);
  struct ui_ctx ctx = {.layout = &l, .gl = ui_glyphs_get(unicode)};
  if (under)
    under->render(under_self, &g, &ctx);
  else if (s->overlay)
    ui_frame_begin(&g, &l, ctx.gl);
  s->render(self, &g, &ctx);
  ui_screen_draw_footer(s, self, &g, &ctx);
  char *text = ut_grid_text(&g);
  ui_grid_fini(&g);
  return text;
}

/* On failure the frame goes to stderr (too long for a check message). */
static inline void ut_assert_has(const char *frame, const char *text) {
  if (!strstr(frame, text))
    fprintf(stderr, "frame:\n%s", frame);
  ck_assert_msg(strstr(frame, text) != NULL, "frame lacks '%s'", text);
}

static inline void ut_assert_lacks(const char *frame, const char *text) {
  if (strstr(frame, text))
    fprintf(stderr, "frame:\n%s", frame);
  ck_assert_msg(strstr(frame, text) == NULL, "frame has '%s'", text);
}

#endif
