/* ui help: every key a view acts on is listed in that view's `?` help. Each
 * key is sent to a fresh view; when the view does anything with it, the key
 * must appear among the help's key names ("k/j", "PgUp/PgDn", "+ / -"). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abview.h"
#include "browser.h"
#include "pastruns.h"
#include "runview.h"
#include "ui_util.h"

static const struct {
  int key;
  const char *name;
} named_keys[] = {
    {UI_KEY_UP, "Up"},       {UI_KEY_DOWN, "Down"},       {UI_KEY_LEFT, "Left"},
    {UI_KEY_RIGHT, "Right"}, {UI_KEY_PAGE_UP, "PgUp"},    {UI_KEY_PAGE_DOWN, "PgDn"},
    {UI_KEY_HOME, "Home"},   {UI_KEY_END, "End"},         {UI_KEY_ENTER, "Enter"},
    {UI_KEY_ESCAPE, "Esc"},  {UI_KEY_BACKSPACE, "Bksp"},  {UI_KEY_TAB, "Tab"},
};

/* Every key code the views can receive: printable ASCII and the named keys. */
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

static struct recipe_set *load_recipes(void) {
  struct recipe_set *set = recipe_set_new();
  struct st_err err = {{0}};
  size_t len = 0;
  char *text = file_read_all(TEST_DATA_DIR "/ui/recipes.yaml", &len, &err);
  ck_assert_msg(text != NULL, "%s", err.msg);
  recipe_set_add_yaml_buffer(set, "recipes.yaml", text, len);
  free(text);
  return set;
}

START_TEST(browser_keys_are_in_its_help) {
  struct recipe_set *set = load_recipes();
  struct ui_layout l;
  ui_layout_compute(80, 24, UI_VIEW_BROWSER, &l);
  int keys[256];
  size_t n = all_keys(keys);
  for (size_t i = 0; i < n; i++) {
    struct browser b;
    browser_init(&b, set);
    int action = browser_key(&b, keys[i], &l);
    browser_fini(&b);
    int lower_action = BROWSER_NONE;
    if (keys[i] >= 'A' && keys[i] <= 'Z') {
      browser_init(&b, set);
      lower_action = browser_key(&b, keys[i] | 0x20, &l);
      browser_fini(&b);
    }
    if (action != BROWSER_NONE)
      ck_assert_msg(listed(browser_key_help, browser_key_help_count, keys[i], action, lower_action),
                    "browser acts on key %d ('%c') but its help does not list it", keys[i],
                    keys[i] < 0x7f ? keys[i] : '?');
  }
  recipe_set_free(set);
}
END_TEST

START_TEST(run_view_keys_are_in_its_help) {
  static struct runview rv;
  int keys[256];
  size_t n = all_keys(keys);
  for (size_t i = 0; i < n; i++) {
    struct runview_command cmd;
    runview_init(&rv);
    rv.have_snap = true; /* a run being measured: every key is live */
    rv.snap.progress.phase = SNAP_PHASE_MEASURING;
    rv.snap.server.state = SNAP_SERVER_READY;
    int action = runview_key(&rv, keys[i], &cmd);
    runview_init(&rv);
    rv.have_snap = true;
    rv.snap.progress.phase = SNAP_PHASE_MEASURING;
    rv.snap.server.state = SNAP_SERVER_READY;
    int lower_action = runview_key(&rv, keys[i] < 0x7f ? keys[i] | 0x20 : keys[i], &cmd);
    if (action != RUNVIEW_NONE)
      ck_assert_msg(listed(runview_key_help, runview_key_help_count, keys[i], action, lower_action),
                    "run view acts on key %d but its help does not list it", keys[i]);
  }
}
END_TEST

START_TEST(ab_view_keys_are_in_its_help) {
  static struct abview ab;
  struct ui_layout l;
  ui_layout_compute(80, 24, UI_VIEW_AB, &l);
  int keys[256];
  size_t n = all_keys(keys);
  for (size_t i = 0; i < n; i++) {
    int action[2];
    for (int k = 0; k < 2; k++) {
      abview_init(&ab, NULL, NULL, TEST_DATA_DIR "/ui/past");
      struct st_err err = {{0}};
      /* a past run loaded, so x and [ ] have something to act on */
      ck_assert_int_eq(abview_load_past(&ab, AB_OFF,
                                        TEST_DATA_DIR "/ui/past/"
                                                      "20261201-040000-qwen3.5-fp8-h200-sglang-off",
                                        &err),
                       0);
      int key = k == 0 || keys[i] >= 0x7f ? keys[i] : keys[i] | 0x20;
      action[k] = abview_key(&ab, key, &l);
      abview_fini(&ab);
    }
    if (action[0] != ABVIEW_NONE)
      ck_assert_msg(listed(abview_key_help, abview_key_help_count, keys[i], action[0], action[1]),
                    "A/B view acts on key %d but its help does not list it", keys[i]);
  }
}
END_TEST

START_TEST(past_run_list_keys_are_in_its_help) {
  int keys[256];
  size_t n = all_keys(keys);
  for (size_t i = 0; i < n; i++) {
    int action[2];
    for (int k = 0; k < 2; k++) {
      struct pastpicker p = {0};
      pastpicker_open(&p, TEST_DATA_DIR "/ui/past", 0);
      int key = k == 0 || keys[i] >= 0x7f ? keys[i] : keys[i] | 0x20;
      action[k] = pastpicker_key(&p, key, 80, 24);
      pastpicker_close(&p);
    }
    if (action[0] != PASTPICKER_NONE)
      ck_assert_msg(listed(pastpicker_key_help, pastpicker_key_help_count, keys[i], action[0],
                           action[1]),
                    "past-run list acts on key %d but its help does not list it", keys[i]);
  }
}
END_TEST

/* The checker itself: a key missing from a table is caught. */
START_TEST(an_unlisted_key_is_caught) {
  static const struct ui_key_help help[] = {{"Up/Down k/j", "move"}, {"+ / -", "more / less"}};
  ck_assert(help_lists(help, 2, "k") && help_lists(help, 2, "Down") && help_lists(help, 2, "-"));
  ck_assert(!help_lists(help, 2, "K") && !help_lists(help, 2, "x") && !help_lists(help, 2, "Dow"));
  ck_assert(!listed(help, 2, 'J', 1, 2)); /* J does something else than j */
}
END_TEST

int main(void) {
  Suite *s = suite_create("ui_help");
  TCase *tc = tcase_create("help");
  tcase_add_test(tc, browser_keys_are_in_its_help);
  tcase_add_test(tc, run_view_keys_are_in_its_help);
  tcase_add_test(tc, ab_view_keys_are_in_its_help);
  tcase_add_test(tc, past_run_list_keys_are_in_its_help);
  tcase_add_test(tc, an_unlisted_key_is_caught);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
