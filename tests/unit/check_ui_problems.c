/* ui problems: load errors and doctor's findings listed with file:line,
 * selection and scrolling, the whole message on Enter, frames. */
#include "problems.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ui_test.h"

static struct recipe_set *set;
static struct recipe_findings findings;
static struct problems p;

/* A recipe file that loads, one that does not, and a long message. */
static const char bad[] = "broken-fp8-h200-sglang:\n  model: Org/Broken\n  runner: h200\n"
                          "  scenarios: [\n";

static void setup(void) {
  set = ut_fixture_recipes();
  recipe_set_add_yaml_buffer(set, "/a/very/long/path/that/does/not/fit/in/the/column/broken.yaml",
                             bad, sizeof bad - 1);
  recipe_lint(set, &findings);
  ck_assert_uint_gt(findings.n, 0);
  problems_init(&p, &findings);
}

static void teardown(void) {
  recipe_findings_fini(&findings);
  recipe_set_free(set);
}

static const struct recipe_finding *load_error(size_t *at) {
  for (size_t i = 0; i < findings.n; i++)
    if (findings.items[i].file && strstr(findings.items[i].file, "broken.yaml")) {
      *at = i;
      return &findings.items[i];
    }
  ck_abort_msg("the broken file has no finding");
  return NULL;
}

START_TEST(list_shows_every_problem_with_file_and_line) {
  char *f = ut_frame(&problems_screen, &p, NULL, NULL, 200, 50, true);
  ut_assert_has(f, "Problems");
  ut_assert_has(f, "severity");
  ut_assert_has(f, "where");
  size_t at;
  const struct recipe_finding *e = load_error(&at);
  ck_assert_int_eq(e->severity, RECIPE_SEV_ERROR);
  char where[64];
  snprintf(where, sizeof where, "broken.yaml:%d", e->line);
  ut_assert_has(f, "/does/not/fit/in/the/column/broken.yaml");
  ut_assert_has(f, where);
  ut_assert_has(f, "error");
  ut_assert_has(f, "SCHEMA");
  ut_assert_has(f, "Enter message  ? help  q back");
  free(f);
  /* at 80 columns a long path keeps its end: the file name and the line; the
   * header counts by severity */
  f = ut_frame(&problems_screen, &p, NULL, NULL, 80, 24, true);
  ut_assert_has(f, "…");
  ut_assert_has(f, where);
  ut_assert_has(f, "problems · 1 error, 0 warnings, 0 notes");
  free(f);
}
END_TEST

START_TEST(enter_shows_the_whole_message) {
  size_t at;
  const struct recipe_finding *e = load_error(&at);
  for (size_t i = 0; i < at; i++)
    ut_press(&problems_screen, &p, UI_KEY_DOWN);
  ck_assert_uint_eq(p.selected, at);
  ut_press(&problems_screen, &p, UI_KEY_ENTER);
  ck_assert(p.expanded);
  char *f = ut_frame(&problems_screen, &p, NULL, NULL, 80, 24, true);
  char line[80];
  snprintf(line, sizeof line, "broken.yaml:%d", e->line);
  ut_assert_has(f, line); /* the whole path, wrapped: its end too */
  ut_assert_has(f, "/a/very/long/path");
  /* the message's first words and last word, wrapped in the box */
  char first[24];
  snprintf(first, sizeof first, "%.12s", e->message);
  ut_assert_has(f, first);
  ut_assert_has(f, "any key closes");
  free(f);
  /* any key closes it and does nothing else */
  ck_assert_int_eq(ut_press(&problems_screen, &p, 'q'), UI_CMD_NONE);
  ck_assert(!p.expanded);
  ck_assert_int_eq(ut_press(&problems_screen, &p, 'q'), UI_CMD_CLOSE);
  ck_assert_int_eq(ut_press(&problems_screen, &p, UI_KEY_ESCAPE), UI_CMD_CLOSE);
}
END_TEST

START_TEST(keys_and_mouse_move_the_selection) {
  ut_press(&problems_screen, &p, UI_KEY_END);
  ck_assert_uint_eq(p.selected, findings.n - 1);
  ut_press(&problems_screen, &p, 'j'); /* stays on the last */
  ck_assert_uint_eq(p.selected, findings.n - 1);
  ut_press(&problems_screen, &p, 'g');
  ck_assert_uint_eq(p.selected, 0);
  ut_press(&problems_screen, &p, UI_KEY_UP);
  ck_assert_uint_eq(p.selected, 0);
  struct ui_layout l;
  ui_layout_compute(80, 24, UI_VIEW_PAGE, &l);
  struct ui_rect in = ui_rect_inner(l.slot[UI_SLOT_BODY]);
  if (findings.n > 1) { /* a click selects; a second click opens it */
    ut_mouse(&problems_screen, &p, in.x + 3, in.y + 2, 0, 80, 24, NULL);
    ck_assert_uint_eq(p.selected, 1);
    ck_assert(!p.expanded);
    ut_mouse(&problems_screen, &p, in.x + 3, in.y + 2, 0, 80, 24, NULL);
    ck_assert(p.expanded);
  }
}
END_TEST

START_TEST(none_says_so) {
  struct recipe_findings none = {0};
  struct problems q;
  problems_init(&q, &none);
  char *f = ut_frame(&problems_screen, &q, NULL, NULL, 80, 24, true);
  ut_assert_has(f, "no problems: every recipe loaded and the doctor found nothing");
  free(f);
  ut_press(&problems_screen, &q, UI_KEY_ENTER);
  ck_assert(!q.expanded);
}
END_TEST

int main(void) {
  Suite *s = suite_create("ui_problems");
  TCase *tc = tcase_create("problems");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, list_shows_every_problem_with_file_and_line);
  tcase_add_test(tc, enter_shows_the_whole_message);
  tcase_add_test(tc, keys_and_mouse_move_the_selection);
  tcase_add_test(tc, none_says_so);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
