/* ui browser: grouping and pairing, the filter, keys, mouse, header counts
 * that follow the filter, and frames rendered at 80x24 and 200x50 from a
 * fixed recipe file. */
#include "browser.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "help.h"
#include "problems.h"
#include "ui_test.h"

static struct recipe_set *set;
static struct browser b;
static struct ui_layout layout;
static struct ui_grid grid;

static void setup(void) {
  set = ut_fixture_recipes();
  ck_assert_msg(recipe_set_diag_count(set) == 0, "fixture: %s",
                recipe_set_diag_count(set) ? recipe_set_diag_at(set, 0)->message : "");
  browser_init(&b, set);
  ui_layout_compute(80, 24, UI_VIEW_BROWSER, &layout);
  ui_grid_init(&grid, 80, 24);
}

static void teardown(void) {
  ui_grid_fini(&grid);
  browser_fini(&b);
  recipe_set_free(set);
}

/* The whole frame as text, one line per row. */
static char *frame_alloc(void) {
  return ut_grid_text(&grid);
}

static void render_at(int cols, int rows, bool unicode) {
  ui_grid_resize(&grid, cols, rows);
  ui_layout_compute(cols, rows, UI_VIEW_BROWSER, &layout);
  struct ui_ctx ctx = {.layout = &layout, .gl = ui_glyphs_get(unicode)};
  browser_screen.render(&b, &grid, &ctx);
  ui_screen_draw_footer(&browser_screen, &b, &grid, &ctx);
}

#define assert_frame_has ut_assert_has

/* A key; returns the command it asked for. */
static enum ui_cmd_kind key(int k) {
  return ut_press(&browser_screen, &b, k);
}

static bool acts_on(int k) {
  bool acted;
  ut_key(&browser_screen, &b, k, 80, 24, &acted);
  return acted;
}

static bool click(int x, int y, int lines) {
  bool acted;
  ut_mouse(&browser_screen, &b, x, y, lines, layout.cols, layout.rows, &acted);
  return acted;
}

START_TEST(groups_and_pairs) {
  ck_assert_int_eq(b.n_groups, 2);
  ck_assert_str_eq(b.groups[0].first->model_prefix, "demo");
  ck_assert_str_eq(b.groups[1].first->engine, "vllm");
  /* demo: 8k1k off+mtp on one row, 1k1k off alone; other: one lone row */
  ck_assert_int_eq(b.n_pairs, 3);
  const struct browser_pair *p = &b.pairs[0];
  ck_assert_ptr_nonnull(p->off);
  ck_assert_ptr_nonnull(p->spec);
  ck_assert_int_eq(p->off->isl, 8192);
  ck_assert_int_eq(p->spec->spec, RECIPE_SPEC_MTP);
  ck_assert_int_eq(b.pairs[1].off->isl, 1024);
  ck_assert_ptr_null(b.pairs[1].spec);
  ck_assert_ptr_null(b.pairs[2].spec);
  /* lines: heading, two rows, heading, one row; the first row is selected */
  ck_assert_int_eq(b.n_lines, 5);
  ck_assert_ptr_eq(browser_selected(&b), p->off);
}
END_TEST

START_TEST(filter_narrows_and_keeps_selection) {
  key(UI_KEY_RIGHT);
  const struct recipe *mtp = browser_selected(&b);
  ck_assert_int_eq(mtp->spec, RECIPE_SPEC_MTP);
  browser_set_filter(&b, "VLLM");
  ck_assert_int_eq(b.n_lines, 2);
  ck_assert_str_eq(browser_selected(&b)->engine, "vllm");
  /* every word must match one recipe of the pair */
  browser_set_filter(&b, "demo 8k1k");
  ck_assert_int_eq(b.n_lines, 2);
  browser_set_filter(&b, "demo mtp");
  ck_assert_int_eq(b.n_lines, 2);
  ck_assert_ptr_eq(browser_selected(&b), mtp);
  browser_set_filter(&b, "nothing-like-this");
  ck_assert_int_eq(b.n_lines, 0);
  ck_assert_ptr_null(browser_selected(&b));
  ck_assert_int_eq(key(UI_KEY_ENTER), UI_CMD_NONE);
  ck_assert(strstr(b.message, "no recipe selected"));
}
END_TEST

START_TEST(filter_is_typed_incrementally) {
  ck_assert(acts_on('/'));
  ck_assert(b.filter_editing);
  const char *typed = "b200";
  for (const char *c = typed; *c; c++)
    key(*c);
  ck_assert_str_eq(b.filter, "b200");
  ck_assert_int_eq(b.n_lines, 2);
  /* 'q' while typing is text, not quit */
  ck_assert_int_eq(key('q'), UI_CMD_NONE);
  ck_assert_int_eq(b.n_lines, 0);
  key(UI_KEY_BACKSPACE);
  ck_assert_int_eq(b.n_lines, 2);
  key(UI_KEY_ENTER);
  ck_assert(!b.filter_editing);
  ck_assert_str_eq(b.filter, "b200");
  /* Esc outside the prompt clears the filter */
  key(UI_KEY_ESCAPE);
  ck_assert_str_eq(b.filter, "");
  ck_assert_int_eq(b.n_lines, 5);
}
END_TEST

START_TEST(keys_move_run_and_quit) {
  const struct recipe *first = browser_selected(&b);
  key(UI_KEY_DOWN);
  ck_assert_ptr_eq(browser_selected(&b), b.pairs[1].off);
  /* down skips the heading of the next group */
  key('j');
  ck_assert_ptr_eq(browser_selected(&b), b.pairs[2].off);
  ck_assert_int_eq(b.sel_line, 4);
  key(UI_KEY_DOWN);
  ck_assert_int_eq(b.sel_line, 4);
  /* a row without an MTP side: right keeps the off recipe, a says why */
  key(UI_KEY_RIGHT);
  ck_assert_ptr_eq(browser_selected(&b), b.pairs[2].off);
  ck_assert_int_eq(key('a'), UI_CMD_NONE);
  ck_assert(strstr(b.message, "no MTP twin"));
  key(UI_KEY_HOME);
  ck_assert_ptr_eq(browser_selected(&b), b.pairs[0].spec);
  key(UI_KEY_TAB);
  ck_assert_ptr_eq(browser_selected(&b), first);
  /* Enter: the launch form for the selected recipe; a: for the pair */
  struct ui_cmd c = ut_key(&browser_screen, &b, UI_KEY_ENTER, 80, 24, NULL);
  ck_assert_int_eq(c.kind, UI_CMD_LAUNCH_FORM);
  ck_assert_ptr_eq(c.recipe, first);
  ck_assert_ptr_null(c.twin);
  c = ut_key(&browser_screen, &b, 'a', 80, 24, NULL);
  ck_assert_int_eq(c.kind, UI_CMD_LAUNCH_FORM);
  ck_assert_ptr_eq(c.recipe, b.pairs[0].off);
  ck_assert_ptr_eq(c.twin, b.pairs[0].spec);
  c = ut_key(&browser_screen, &b, 'p', 80, 24, NULL);
  ck_assert_int_eq(c.kind, UI_CMD_OPEN);
  ck_assert_ptr_eq(c.screen, &problems_screen);
  c = ut_key(&browser_screen, &b, 'L', 80, 24, NULL);
  ck_assert_int_eq(c.kind, UI_CMD_PAST_RUNS);
  ck_assert(!acts_on('x'));
  /* '?' is not the browser's: the program opens the help over it */
  ck_assert(!acts_on('?'));
  ck_assert_int_eq(key('q'), UI_CMD_QUIT);
}
END_TEST

START_TEST(mouse_selects_and_scrolls) {
  render_at(80, 24, true);
  struct ui_rect in = ui_rect_inner(layout.slot[UI_SLOT_LIST]);
  int off_x = in.x + 2 + b.tag_cells + 1 + 1, mtp_x = off_x + 5;  /* inside each side's label */
  /* line 4 is the vLLM row; click on its left side */
  ck_assert(click(off_x, in.y + 4, 0));
  ck_assert_ptr_eq(browser_selected(&b), b.pairs[2].off);
  /* a heading or empty space is not a row */
  ck_assert(!click(off_x, in.y + 3, 0));
  ck_assert(!click(off_x, in.y + 12, 0));
  /* the right side of the first row is its MTP recipe */
  click(mtp_x, in.y + 1, 0);
  ck_assert_ptr_eq(browser_selected(&b), b.pairs[0].spec);
  /* the wheel over the detail pane scrolls it and stays in range */
  struct ui_rect d = layout.slot[UI_SLOT_DETAIL];
  render_at(80, 24, true);
  ck_assert(click(d.x + 5, d.y + 5, 3));
  ck_assert_int_eq(b.detail_top, 3);
  click(d.x + 5, d.y + 5, 1000);
  render_at(80, 24, true);
  ck_assert_int_lt(b.detail_top, 1000);
  ck_assert_int_gt(b.detail_top, 0);
  /* the wheel over the list moves the selection */
  click(in.x + 1, in.y + 1, 1);
  ck_assert_ptr_eq(browser_selected_pair(&b), &b.pairs[1]);
}
END_TEST

START_TEST(frame_80x24) {
  render_at(80, 24, true);
  char *f = frame_alloc();
  assert_frame_has(f, "servetop");
  assert_frame_has(f, "demo fp8 · h200 · sglang");
  assert_frame_has(f, "other bf16 · b200 · vllm");
  assert_frame_has(f, "8k1k");
  assert_frame_has(f, " off");
  assert_frame_has(f, " mtp");
  assert_frame_has(f, "tp8 c4-16");
  /* detail of the selected (off) recipe: resolved command and env */
  assert_frame_has(f, "demo-fp8-h200-sglang");
  assert_frame_has(f, "Server command");
  assert_frame_has(f, "--mem-fraction-static 0.85");
  assert_frame_has(f, "Enter");
  assert_frame_has(f, "quit");
  free(f);
  /* the environment is further down the detail pane: J scrolls to it */
  key('J');
  key('J');
  render_at(80, 24, true);
  f = frame_alloc();
  assert_frame_has(f, "PYTHONNOUSERSITE=1");
  free(f);
  /* the selected side is drawn in the selection role */
  struct ui_rect in = ui_rect_inner(layout.slot[UI_SLOT_LIST]);
  int off_x = in.x + 2 + b.tag_cells + 1 + 1, mtp_x = off_x + 5;
  ck_assert_int_eq(ui_grid_at(&grid, off_x, in.y + 1)->role, THEME_SELECTED);
  ck_assert_int_ne(ui_grid_at(&grid, mtp_x, in.y + 1)->role, THEME_SELECTED);
}
END_TEST

START_TEST(frame_200x50_shows_everything_of_mtp) {
  key(UI_KEY_RIGHT);
  render_at(200, 50, true);
  char *f = frame_alloc();
  assert_frame_has(f, "demo-fp8-h200-sglang-mtp");
  assert_frame_has(f, "--speculative-algorithm EAGLE");
  assert_frame_has(f, "SGLANG_ENABLE_SPEC_V2=1");
  assert_frame_has(f, "Sweep (4 points)");
  assert_frame_has(f, "tp8 ep1: conc 4 8 16 32");
  assert_frame_has(f, "Knobs");
  assert_frame_has(f, "tp=8");
  assert_frame_has(f, "mem-fraction-static=0.80");
  assert_frame_has(f, "Doctor's findings");
  assert_frame_has(f, "twin demo-fp8-h200-sglang:8192_1024 ");
  free(f);
}
END_TEST

START_TEST(frame_ascii_and_help) {
  struct helpview h = {.of = &browser_screen};
  char *f = ut_frame(&help_screen, &h, &browser_screen, &b, 80, 24, false);
  for (const unsigned char *c = (const unsigned char *)f; *c; c++)
    ck_assert_msg(*c < 0x80, "not ASCII at %ld", (long)((const char *)c - f));
  for (size_t i = 0; i < browser_screen.n_keys; i++)
    assert_frame_has(f, browser_screen.keys[i].what);
  free(f);
  /* too small: one line that says so */
  render_at(60, 20, true);
  f = frame_alloc();
  assert_frame_has(f, "terminal 60x20 is too small: servetop needs 80x24");
  free(f);
}
END_TEST

/* The header counts what the filter shows; the list title says how many of
 * all; a row shows the numbers of the side selected. */
START_TEST(counts_follow_the_filter) {
  render_at(100, 32, true);
  char *f = frame_alloc();
  assert_frame_has(f, "2 groups · 3 rows · 1 MTP");
  assert_frame_has(f, "Recipes 4 ");
  free(f);
  browser_set_filter(&b, "vllm");
  render_at(100, 32, true);
  f = frame_alloc();
  assert_frame_has(f, "1 group · 1 row · 0 MTP");
  assert_frame_has(f, "Recipes 1/4");
  assert_frame_has(f, "filter: vllm");
  free(f);
  browser_set_filter(&b, "");
  /* the 8k1k row: off sweeps conc 4-16, its MTP twin 4-32 */
  render_at(100, 32, true);
  f = frame_alloc();
  assert_frame_has(f, "mtp tp8 c4-16");
  free(f);
  key(UI_KEY_RIGHT);
  render_at(100, 32, true);
  f = frame_alloc();
  assert_frame_has(f, "mtp tp8 c4-32");
  free(f);
}
END_TEST

/* Every hint of the footer fits at 80 columns (one cell apart there); a
 * click on one presses its key. */
START_TEST(footer_lists_the_keys) {
  render_at(80, 24, true);
  char *row = ui_grid_row_alloc(&grid, 23);
  for (size_t i = 0; i < browser_screen.n_keys; i++)
    if (browser_screen.keys[i].hint)
      ck_assert_msg(strstr(row, browser_screen.keys[i].hint), "footer lacks %s: %s",
                    browser_screen.keys[i].hint, row);
  free(row);
  int x = ui_text_cells("Enter run a A/B Tab off/mtp ");
  ck_assert_int_eq(ut_footer_key_at(&browser_screen, &b, x, 80, 24), '/');
  /* no findings in this set: p is dim and presses nothing */
  x = ui_text_cells("Enter run  a A/B  Tab off/mtp  / filter  ");
  ck_assert_int_eq(ut_footer_key_at(&browser_screen, &b, x, 80, 24), 0);
  ck_assert_int_eq(ut_footer_key_at(&browser_screen, &b, 0, 80, 24), UI_KEY_ENTER);
}
END_TEST

START_TEST(filter_prompt_in_footer) {
  key('/');
  key('v');
  render_at(80, 24, true);
  char *row = ui_grid_row_alloc(&grid, 23);
  ck_assert_msg(strstr(row, "filter: /v_"), "footer: %s", row);
  free(row);
}
END_TEST

int main(void) {
  Suite *s = suite_create("ui_browser");
  TCase *tc = tcase_create("browser");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, groups_and_pairs);
  tcase_add_test(tc, filter_narrows_and_keeps_selection);
  tcase_add_test(tc, filter_is_typed_incrementally);
  tcase_add_test(tc, keys_move_run_and_quit);
  tcase_add_test(tc, mouse_selects_and_scrolls);
  tcase_add_test(tc, frame_80x24);
  tcase_add_test(tc, frame_200x50_shows_everything_of_mtp);
  tcase_add_test(tc, frame_ascii_and_help);
  tcase_add_test(tc, filter_prompt_in_footer);
  tcase_add_test(tc, counts_follow_the_filter);
  tcase_add_test(tc, footer_lists_the_keys);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
