/* ui probe: the engine probe runs on its own thread — starting it returns
 * before a slow answer, the answers come in order, and the default probe
 * (servetop run's choice) says why it falls back to the simulated server. */
#include "probe.h"

#include <check.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ui_test.h"

static struct recipe_set *set;
static atomic_int release; /* the slow probe waits until the test says go */

static void slow_probe(const struct recipe *r, struct ui_probe_answer *out) {
  while (!atomic_load(&release))
    clock_sleep_us(1000);
  out->engine = eng_sim();
  snprintf(out->text, sizeof out->text, "probed %s", r->name);
}

static void setup(void) {
  set = ut_fixture_recipes();
}

static void teardown(void) {
  recipe_set_free(set);
}

START_TEST(answers_come_from_the_worker) {
  atomic_store(&release, 0);
  const struct recipe *rs[2] = {recipe_set_at(set, 0), recipe_set_at(set, 1)};
  struct ui_probe *p = ui_probe_start(rs, 2, slow_probe);
  /* start returned while the probe is still blocked: the caller never waits */
  ck_assert(!ui_probe_done(p));
  clock_sleep_us(20000);
  ck_assert(!ui_probe_done(p));
  atomic_store(&release, 1);
  for (int i = 0; i < 5000 && !ui_probe_done(p); i++)
    clock_sleep_us(1000);
  ck_assert(ui_probe_done(p));
  char want[300];
  snprintf(want, sizeof want, "probed %s", rs[1]->name);
  ck_assert_str_eq(ui_probe_answer(p, 1)->text, want);
  ck_assert_ptr_null(ui_probe_answer(p, 2));
  ui_probe_free(p);
  ui_probe_free(NULL);
}
END_TEST

/* A probe abandoned while it runs is freed once it answers (no wait lost). */
START_TEST(free_waits_for_the_worker) {
  atomic_store(&release, 0);
  const struct recipe *rs[1] = {recipe_set_at(set, 0)};
  struct ui_probe *p = ui_probe_start(rs, 1, slow_probe);
  atomic_store(&release, 1);
  ui_probe_free(p); /* joins */
}
END_TEST

START_TEST(the_default_probe_says_why) {
  /* the vLLM recipe: without a GPU device (or vllm) it runs on the simulated server */
  const struct recipe *r = recipe_set_find(set, "other-bf16-b200-vllm");
  ck_assert_ptr_nonnull(r);
  struct ui_probe_answer a;
  ui_probe_engine(r, &a);
  ck_assert(str_starts_with(a.text, "engine "));
  if (a.engine == eng_sim())
    ck_assert_ptr_nonnull(strstr(a.text, "engine sim: "));
}
END_TEST

int main(void) {
  Suite *s = suite_create("ui_probe");
  TCase *tc = tcase_create("probe");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, answers_come_from_the_worker);
  tcase_add_test(tc, free_waits_for_the_worker);
  tcase_add_test(tc, the_default_probe_says_why);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
