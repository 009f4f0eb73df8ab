/* ui help and footers: every screen of tui.c's screen table keeps one key
 * table, which its `?` help lists whole and its footer shows the hints of.
 *  - every key a screen acts on is in its table: each key is sent to a fresh
 *    state of each screen; when the screen does anything with it, the key
 *    must appear among the table's key names ("k/j", "PgUp/PgDn", "+ / -");
 *  - the help box shows every entry at 80x24;
 *  - the footer fits 80 columns with every hint, shortens gracefully when a
 *    status needs room (the hints that never go stay), never overflows even
 *    at 20 columns, and a click on a hint presses its key. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abview.h"
#include "attachform.h"
#include "browser.h"
#include "help.h"
#include "launchform.h"
#include "logview.h"
#include "pastruns.h"
#include "problems.h"
#include "runview.h"
#include "tui.h"
#include "tuneform.h"
#include "tuneview.h"
#include "ui_test.h"

static const struct {
  int key;
  const char *name;
} named_keys[] = {
    {UI_KEY_UP, "Up"},       {UI_KEY_DOWN, "Down"},       {UI_KEY_LEFT, "Left"},
    {UI_KEY_RIGHT, "Right"}, {UI_KEY_PAGE_UP, "PgUp"},    {UI_KEY_PAGE_DOWN, "PgDn"},
    {UI_KEY_HOME, "Home"},   {UI_KEY_END, "End"},         {UI_KEY_ENTER, "Enter"},
    {UI_KEY_ESCAPE, "Esc"},  {UI_KEY_BACKSPACE, "Bksp"},  {UI_KEY_TAB, "Tab"},
};

/* Every key code the screens can receive: printable ASCII and the named keys. */
static size_t all_keys(int *keys) {
  size_t n = 0;
  for (int c = 0x20; c < 0x7f; c++)
    keys[n++] = c;
  for (size_t i = 0; i < ST_ARRAY_LEN(named_keys); i++)
    keys[n++] = named_keys[i].key;
  return n;
}

static void key_name(int key, char *buf, size_t n) {
  for (size_t i = 0; i < ST_ARRAY_LEN(named_keys); i++)
    if (named_keys[i].key == key) {
      snprintf(buf, n, "%s", named_keys[i].name);
      return;
    }
  snprintf(buf, n, "%c", key);
}

/* Whether name is one of the key names in help: words split on spaces, and
 * words longer than one character split again on '/'. */
static bool help_lists(const struct ui_key_help *help, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++) {
    char keys[128];
    snprintf(keys, sizeof keys, "%s", help[i].keys);
    char *save = NULL;
    for (char *w = strtok_r(keys, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
      if (strlen(w) == 1) {
        if (strcmp(w, name) == 0)
          return true;
        continue;
      }
      char *save2 = NULL;
      for (char *k = strtok_r(w, "/", &save2); k; k = strtok_r(NULL, "/", &save2))
        if (strcmp(k, name) == 0)
          return true;
    }
  }
  return false;
}

/* An upper-case alias of a listed lower-case key that does the same (Q, q). */
static bool listed(const struct ui_key_help *help, size_t n, int key, int action,
                   int lower_action) {
  char name[16];
  key_name(key, name, sizeof name);
  if (help_lists(help, n, name))
    return true;
  char lower[2] = {(char)(key | 0x20), 0};
  return key >= 'A' && key <= 'Z' && action == lower_action && help_lists(help, n, lower);
}

/* ---------------------------------------------------------------- fresh states */

static struct recipe_set *set;
static struct browser browser;
static struct runview rv;
static struct abview ab;
static struct pastpicker picker;
static struct problems problems;
static struct recipe_findings findings;
static struct logview logv;
static struct launchform form;
static struct helpview help;
static struct attachform attach;
static struct tuneform tform;
static struct tuneview tview;

static void load_set(void) {
  set = ut_fixture_recipes(); /* not inside a test yet: exits on failure */
  /* a file that does not load: one load error among the findings */
  static const char bad[] = "broken:\n  model: [\n";
  recipe_set_add_yaml_buffer(set, "broken.yaml", bad, sizeof bad - 1);
  recipe_lint(set, &findings);
}

/* Puts a screen's state where every key it has is live; returns it. */
static void *fresh(const struct ui_screen *s) {
  if (s == &browser_screen) {
    browser_fini(&browser);
    browser_init(&browser, set);
    return &browser;
  }
  if (s == &runview_screen) { /* a run being measured */
    runview_init(&rv, NULL);
    rv.have_snap = true;
    rv.snap.progress.phase = SNAP_PHASE_MEASURING;
    rv.snap.server.state = SNAP_SERVER_READY;
    return &rv;
  }
  if (s == &abview_screen) { /* a past run loaded, so x and [ ] have something to act on */
    abview_fini(&ab);
    abview_init(&ab, NULL, NULL, TEST_DATA_DIR "/ui/past");
    struct st_err err = {{0}};
    ck_assert_int_eq(abview_load_past(&ab, AB_OFF,
                                      TEST_DATA_DIR "/ui/past/"
                                                    "20261201-040000-qwen3.5-fp8-h200-sglang-off",
                                      &err),
                     0);
    ab.arm[AB_OFF].have_snap = true;
    return &ab;
  }
  if (s == &pastpicker_screen) {
    pastpicker_close(&picker);
    pastpicker_open(&picker, TEST_DATA_DIR "/ui/past", 0);
    return &picker;
  }
  if (s == &problems_screen) {
    problems_init(&problems, &findings);
    return &problems;
  }
  if (s == &logview_screen) { /* lines to move over, a search in force */
    logview_fini(&logv);
    for (int i = 0; i < 100; i++) {
      char line[64];
      int n = snprintf(line, sizeof line, "line %d %s\n", i, i % 10 ? "" : "error");
      logview_append(&logv, line, (size_t)n);
    }
    logview_search(&logv, "error");
    return &logv;
  }
  if (s == &launchform_screen) {
    launchform_open(&form, recipe_set_at(set, 0), NULL);
    return &form;
  }
  if (s == &attachform_screen) {
    attachform_open(&attach, NULL);
    return &attach;
  }
  if (s == &tuneform_screen) {
    tuneform_open(&tform, recipe_set_at(set, 0), NULL);
    return &tform;
  }
  if (s == &tuneview_screen) { /* a search running */
    tuneview_fini(&tview);
    tuneview_init(&tview, "demo", NULL, NULL);
    struct run_tune_status st = {.config = -1};
    tuneview_update(&tview, &st, NULL);
    return &tview;
  }
  if (s == &help_screen) {
    help.of = &browser_screen;
    return &help;
  }
  ck_abort_msg("no fresh state for screen %s: add one to check_ui_help.c", s->name);
  return NULL;
}

/* What a key did: 0 nothing, else 1 + the command kind. */
static int action_of(const struct ui_screen *s, int key) {
  void *self = fresh(s);
  bool acted;
  struct ui_cmd c = ut_key(s, self, key, 80, 24, &acted);
  return acted ? 1 + (int)c.kind : 0;
}

START_TEST(every_screen_in_the_table_is_tested) {
  ck_assert_uint_ge(tui_screen_count(), 8);
  ck_assert_uint_gt(findings.n, 0); /* the broken file's load error */
  for (size_t i = 0; i < tui_screen_count(); i++) {
    const struct ui_screen *s = tui_screen_at(i);
    ck_assert_ptr_nonnull(s->name);
    ck_assert_ptr_nonnull(s->help_title);
    ck_assert_ptr_nonnull(s->key);
    ck_assert_ptr_nonnull(s->render);
    ck_assert_uint_gt(s->n_keys, 0);
    ck_assert_ptr_nonnull(fresh(s));
  }
  ck_assert_ptr_null(tui_screen_at(tui_screen_count()));
}
END_TEST

/* Every key a screen acts on is in its table. */
START_TEST(keys_are_in_the_table) {
  const struct ui_screen *s = tui_screen_at((size_t)_i);
  if (s == &help_screen) /* any key closes it, as its one entry says */
    return;
  int keys[256];
  size_t n = all_keys(keys);
  for (size_t i = 0; i < n; i++) {
    if (s->text_input && keys[i] >= 0x20 && keys[i] < 0x7f && keys[i] != '?')
      continue; /* typed into its field */
    int action = action_of(s, keys[i]);
    int lower_action = keys[i] >= 'A' && keys[i] <= 'Z' ? action_of(s, keys[i] | 0x20) : 0;
    if (action)
      ck_assert_msg(listed(s->keys, s->n_keys, keys[i], action, lower_action),
                    "%s acts on key %d ('%c') but its key table does not list it", s->name,
                    keys[i], keys[i] < 0x7f ? keys[i] : '?');
  }
}
END_TEST

/* `?` shows the whole table at the smallest size: each entry, whole. */
START_TEST(help_shows_the_whole_table) {
  const struct ui_screen *s = tui_screen_at((size_t)_i);
  struct helpview h = {.of = s};
  char *f = ut_frame(&help_screen, &h, NULL, NULL, 80, 24, true);
  for (size_t k = 0; k < s->n_keys; k++) {
    ut_assert_has(f, s->keys[k].keys);
    ut_assert_has(f, s->keys[k].what);
  }
  free(f);
}
END_TEST

/* The footer's hints: all of them at 80 columns; with a long status the ones
 * that never go; inside the line at any width; a click presses the key. */
START_TEST(footer_fits_and_clicks) {
  const struct ui_screen *s = tui_screen_at((size_t)_i);
  struct ui_footer f = {.keys = s->keys, .n_keys = s->n_keys};
  struct ui_footer_plan plan;
  size_t n_hints = 0;
  for (size_t k = 0; k < s->n_keys; k++) {
    if (!s->keys[k].hint)
      continue;
    n_hints++;
    const char *text = ui_footer_hint_keys(&s->keys[k]);
    ck_assert_msg(s->keys[k].code != 0 || strlen(text) == 3, "%s: hint '%s' presses no key", s->name,
                  s->keys[k].hint);
  }
  ck_assert_msg(n_hints > 0, "%s: the footer would list no key", s->name);
  ui_footer_plan(&f, 0, 80, &plan);
  ck_assert_msg(plan.n == n_hints && plan.n_dropped == 0, "%s: %zu of %zu hints fit 80 columns",
                s->name, plan.n, n_hints);
  for (size_t k = 0; k < plan.n; k++) {
    const struct ui_key_help *h = &s->keys[plan.hint[k].key];
    ck_assert_int_le(plan.hint[k].x + plan.hint[k].w, 80);
    struct ui_rect line = {0, 23, 80, 1};
    int pressed = ui_footer_key_at(&f, line, plan.hint[k].x + plan.hint[k].w - 1); /* its label */
    ck_assert_msg(pressed == h->code, "%s: a click on '%s' presses %d, not %d", s->name, h->hint,
                  pressed, h->code);
  }
  /* a long status: hints shorten, the essential ones stay, nothing overflows */
  f.status = "a status line long enough to need most of the eighty columns there";
  ui_footer_plan(&f, 0, 80, &plan);
  for (size_t k = 0; k < s->n_keys; k++) {
    if (!s->keys[k].hint || s->keys[k].drop != 0)
      continue;
    bool shown = false;
    for (size_t j = 0; j < plan.n; j++)
      shown = shown || plan.hint[j].key == k;
    ck_assert_msg(shown, "%s: '%s' left the footer", s->name, s->keys[k].hint);
  }
  ck_assert_int_le(plan.status_x + plan.status_w, 80);
  for (int w = 20; w <= 200; w++) {
    ui_footer_plan(&f, 0, w, &plan);
    for (size_t j = 0; j < plan.n; j++)
      ck_assert_int_le(plan.hint[j].x + plan.hint[j].w, w);
    ck_assert_int_le(plan.status_x + plan.status_w, w);
  }
}
END_TEST

/* Shortening: first one blank between hints, then the highest drop goes. */
START_TEST(footer_shortens_in_order) {
  static const struct ui_key_help keys[] = {
      {"a", "", "alpha", NULL, 'a', 0}, {"b", "", "bravo", NULL, 'b', 2},
      {"c", "", "charlie", NULL, 'c', 1}, {"?", "", "help", NULL, '?', 0},
  };
  struct ui_footer f = {.keys = keys, .n_keys = 4};
  struct ui_footer_plan plan;
  /* "a alpha  b bravo  c charlie  ? help" is 35 cells */
  ui_footer_plan(&f, 0, 35, &plan);
  ck_assert_uint_eq(plan.n, 4);
  ck_assert_int_eq(plan.hint[1].x, 9);
  ui_footer_plan(&f, 0, 32, &plan); /* one blank apart: 32 */
  ck_assert_uint_eq(plan.n, 4);
  ck_assert_int_eq(plan.hint[1].x, 8);
  ui_footer_plan(&f, 0, 31, &plan); /* bravo (drop 2) goes first */
  ck_assert_uint_eq(plan.n, 3);
  ck_assert_uint_eq(plan.n_dropped, 1);
  ck_assert_uint_eq(plan.hint[1].key, 2);
  ui_footer_plan(&f, 0, 14, &plan); /* only the two that never go */
  ck_assert_uint_eq(plan.n, 2);
  ck_assert_uint_eq(plan.hint[1].key, 3);
  /* a status takes what it needs; the hints make room down to those that never go */
  f.status = "0123456789";
  ui_footer_plan(&f, 0, 48, &plan);
  ck_assert_uint_eq(plan.n, 4);
  ck_assert_int_eq(plan.status_x, 37);
  ck_assert_int_eq(plan.status_w, 11);
  ui_footer_plan(&f, 0, 40, &plan); /* 32 + 2 + 10 > 40: bravo goes */
  ck_assert_uint_eq(plan.n, 3);
  ck_assert_int_eq(plan.status_w, 40 - plan.status_x);
  ck_assert_int_ge(plan.status_w, 10);
  f.status = "a status far longer than the whole footer line of forty cells";
  ui_footer_plan(&f, 0, 40, &plan); /* alpha and help stay, the status is cut */
  ck_assert_uint_eq(plan.n, 2);
  ck_assert_int_eq(plan.status_x, 16);
  ck_assert_int_eq(plan.status_w, 24);
  f.status_role = THEME_INACTIVE; /* a note: the hints first */
  ui_footer_plan(&f, 0, 40, &plan);
  ck_assert_uint_eq(plan.n, 4);
  ck_assert_int_eq(plan.status_x, 37);
  /* a hint of single keys presses the one clicked */
  static const struct ui_key_help pm[] = {{"+ / -", "", "conc", "+/-", '+', 0}};
  struct ui_footer g = {.keys = pm, .n_keys = 1};
  struct ui_rect line = {0, 0, 80, 1};
  ck_assert_int_eq(ui_footer_key_at(&g, line, 0), '+');
  ck_assert_int_eq(ui_footer_key_at(&g, line, 1), 0);
  ck_assert_int_eq(ui_footer_key_at(&g, line, 2), '-');
  ck_assert_int_eq(ui_footer_key_at(&g, line, 5), '+');
  ck_assert_int_eq(ui_footer_key_at(&g, line, 9), 0);
  g.inactive = 1;
  ck_assert_int_eq(ui_footer_key_at(&g, line, 0), 0);
}
END_TEST

/* The checker itself: a key missing from a table is caught. */
START_TEST(an_unlisted_key_is_caught) {
  static const struct ui_key_help help_[] = {{"Up/Down k/j", "move", NULL, NULL, 0, 0},
                                             {"+ / -", "more / less", NULL, NULL, 0, 0}};
  ck_assert(help_lists(help_, 2, "k") && help_lists(help_, 2, "Down") && help_lists(help_, 2, "-"));
  ck_assert(!help_lists(help_, 2, "K") && !help_lists(help_, 2, "x") && !help_lists(help_, 2, "Dow"));
  ck_assert(!listed(help_, 2, 'J', 1, 2)); /* J does something else than j */
}
END_TEST

int main(void) {
  load_set();
  logview_init(&logv);
  Suite *s = suite_create("ui_help");
  TCase *tc = tcase_create("help");
  tcase_set_timeout(tc, 60);
  int n = (int)tui_screen_count();
  tcase_add_test(tc, every_screen_in_the_table_is_tested);
  tcase_add_loop_test(tc, keys_are_in_the_table, 0, n);
  tcase_add_loop_test(tc, help_shows_the_whole_table, 0, n);
  tcase_add_loop_test(tc, footer_fits_and_clicks, 0, n);
  tcase_add_test(tc, footer_shortens_in_order);
  tcase_add_test(tc, an_unlisted_key_is_caught);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  recipe_findings_fini(&findings);
  tuneform_fini(&tform);
  tuneview_fini(&tview);
  recipe_set_free(set);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
