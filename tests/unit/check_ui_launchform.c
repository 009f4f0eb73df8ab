/* ui launch form and overrides: the sweep's concurrencies as choices, the
 * whole sweep, KEY=VALUE overrides checked before a launch (syntax, and the
 * recipe's command with them applied), what Enter asks for, the engine line
 * while the probe runs and after, clicks, frames. */
#include "launchform.h"
#include "run/run.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ui_test.h"

static struct recipe_set *set;
static const struct recipe *off, *mtp, *lone;
static struct launchform f;

static void setup(void) {
  set = ut_fixture_trio(&off, &mtp, &lone);
  memset(&f, 0, sizeof f);
}

static void teardown(void) {
  launchform_fini(&f);
  recipe_set_free(set);
}

static struct ui_cmd key(int k) {
  return ut_key(&launchform_screen, &f, k, 100, 32, NULL);
}

static void type(const char *text) {
  ut_type(&launchform_screen, &f, text, 100, 32);
}

START_TEST(overrides_syntax) {
  char k[16];
  const char *v;
  struct st_err err = {{0}};
  ck_assert_int_eq(run_override_split("--tp=8", k, sizeof k, &v, &err), 0);
  ck_assert_str_eq(k, "tp");
  ck_assert_str_eq(v, "8");
  ck_assert_int_eq(run_override_split("enable-x=", k, sizeof k, &v, &err), 0);
  ck_assert_str_eq(v, ""); /* a flag without a value */
  ck_assert_int_eq(run_override_split("tp", k, sizeof k, &v, &err), -1);
  ck_assert_ptr_nonnull(strstr(err.msg, "write KEY=VALUE"));
  ck_assert_int_eq(run_override_split("=8", k, sizeof k, &v, &err), -1);
  ck_assert_ptr_nonnull(strstr(err.msg, "no flag name"));
  ck_assert_int_eq(run_override_split("t;p=8", k, sizeof k, &v, &err), -1);
  ck_assert_ptr_nonnull(strstr(err.msg, "';' cannot be in a flag name"));
  ck_assert_int_eq(run_override_split("a-very-long-flag-name=1", k, sizeof k, &v, &err), -1);
}
END_TEST

START_TEST(overrides_against_the_recipe) {
  struct ui_overrides o;
  struct st_err err = {{0}};
  ck_assert_int_eq(ui_overrides_parse(" mem-fraction-static=0.7  max-running-requests=64 ", off, &o,
                                      &err),
                   0);
  ck_assert_uint_eq(o.n, 2);
  ck_assert_str_eq(o.items[0], "mem-fraction-static=0.7");
  ck_assert_str_eq(o.changes[0], "--mem-fraction-static 0.85 -> 0.7");
  ck_assert_str_eq(o.changes[1], "--max-running-requests 64 (added)");
  ui_overrides_fini(&o);
  ck_assert_int_eq(ui_overrides_parse("tp=4 oops", off, &o, &err), -1);
  ck_assert_ptr_nonnull(strstr(err.msg, "'oops'"));
  ck_assert_uint_eq(o.n, 0);
  ck_assert_int_eq(ui_overrides_parse("", off, &o, &err), 0);
  ck_assert_uint_eq(o.n, 0);
  ui_overrides_fini(&o);
}
END_TEST

START_TEST(choices_of_one_recipe) {
  launchform_open(&f, off, NULL);
  ck_assert_uint_eq(f.n_concs, 3);
  ck_assert_int_eq(f.concs[0], 4);
  ck_assert_int_eq(f.concs[2], 16);
  ck_assert_uint_eq(f.choice, 0); /* the first point's concurrency */
  /* Enter: one point at conc 4, no overrides */
  struct ui_cmd c = key(UI_KEY_ENTER);
  ck_assert_int_eq(c.kind, UI_CMD_RUN);
  ck_assert_ptr_eq(c.launch.recipe, off);
  ck_assert_ptr_null(c.launch.twin);
  ck_assert_int_eq(c.launch.conc, 4);
  ck_assert(!c.launch.sweep);
  ck_assert_uint_eq(c.launch.n_overrides, 0);
  /* l / Right: the next concurrency, then the whole sweep, no further */
  key('l');
  ck_assert_int_eq(key(UI_KEY_ENTER).launch.conc, 8);
  key(UI_KEY_RIGHT);
  key(UI_KEY_RIGHT);
  key(UI_KEY_RIGHT);
  ck_assert_uint_eq(f.choice, 3);
  c = key(UI_KEY_ENTER);
  ck_assert(c.launch.sweep);
  ck_assert_int_eq(c.launch.conc, 0);
  key('h');
  ck_assert_uint_eq(f.choice, 2);
  ck_assert_int_eq(key(UI_KEY_ESCAPE).kind, UI_CMD_CLOSE);
  ck_assert_int_eq(key('q').kind, UI_CMD_CLOSE);
}
END_TEST

/* issue 22.6: a recipe that gives the server loader or interpreter variables
 * says so in the form before anything starts; a typo of a flag is refused
 * with a did-you-mean (issue 19.6, the same check as --set). */
START_TEST(trust_line_and_flag_typos) {
  launchform_open(&f, off, NULL);
  ck_assert_str_eq(f.trust, "");
  char *fr = ut_frame(&launchform_screen, &f, NULL, NULL, 100, 32, true);
  ut_assert_lacks(fr, "trust");
  free(fr);
  static const char yaml[] =
      "hostile:\n"
      "  model: m/M\n  model-prefix: m\n  runner: h200\n  precision: bf16\n"
      "  framework: sglang\n  multinode: false\n"
      "  scenarios:\n    fixed-seq-len:\n    - isl: 8\n      osl: 8\n"
      "      search-space:\n      - { tp: 1, conc-list: [ 1 ] }\n"
      "  server:\n    engine: sglang\n    env:\n      LD_PRELOAD: /tmp/x.so\n"
      "    argv:\n      - --model-path $MODEL\n      - --mem-fraction-static 0.8\n";
  struct recipe_set *hs = recipe_set_new();
  recipe_set_add_yaml_buffer(hs, "trust.yaml", yaml, strlen(yaml));
  launchform_open(&f, recipe_set_find(hs, "hostile"), NULL);
  ck_assert_str_eq(f.trust, "LD_PRELOAD");
  fr = ut_frame(&launchform_screen, &f, NULL, NULL, 100, 32, true);
  ut_assert_has(fr, "sets LD_PRELOAD: code from outside the image runs in the server");
  free(fr);
  key(UI_KEY_TAB);
  type("mem-fraction-statc=0.9");
  ck_assert_ptr_nonnull(strstr(f.error, "did you mean mem-fraction-static"));
  ck_assert_int_eq(key(UI_KEY_ENTER).kind, UI_CMD_NONE);
  /* issue 19.6: prompts, isl, osl are the benchmark's, never server flags */
  launchform_set_text(&f, "num-prompts=16 isl=512 osl=64 mem-fraction-static=0.7");
  ck_assert_str_eq(f.error, "");
  ck_assert_uint_eq(f.overrides.n, 1);
  struct ui_cmd c = key(UI_KEY_ENTER);
  ck_assert_int_eq(c.kind, UI_CMD_RUN);
  ck_assert_uint_eq(c.launch.n_overrides, 1);
  ck_assert_str_eq(c.launch.overrides[0], "mem-fraction-static=0.7");
  ck_assert_int_eq(c.launch.num_prompts, 16);
  ck_assert_int_eq(c.launch.isl, 512);
  ck_assert_int_eq(c.launch.osl, 64);
  fr = ut_frame(&launchform_screen, &f, NULL, NULL, 100, 32, true);
  ut_assert_has(fr, "benchmark: num-prompts 16, isl 512, osl 64");
  free(fr);
  launchform_set_text(&f, "num-prompts=0");
  ck_assert_ptr_nonnull(strstr(f.error, "num-prompts=0"));
  launchform_set_text(&f, "duration=60");
  ck_assert_ptr_nonnull(strstr(f.error, "duration=60"));
  launchform_fini(&f);
  recipe_set_free(hs);
}
END_TEST

START_TEST(overrides_are_checked_before_the_launch) {
  launchform_open(&f, off, NULL);
  key(UI_KEY_TAB);
  ck_assert(f.editing);
  type("mem-fraction-static"); /* h, l, q are text here */
  ck_assert_str_eq(f.text, "mem-fraction-static");
  ck_assert_uint_eq(f.choice, 0);
  ck_assert_ptr_nonnull(strstr(f.error, "write KEY=VALUE"));
  char *fr = ut_frame(&launchform_screen, &f, NULL, NULL, 100, 32, true);
  ut_assert_has(fr, "write KEY=VALUE");
  ut_assert_has(fr, "fix the overrides to start");
  free(fr);
  ck_assert_int_eq(key(UI_KEY_ENTER).kind, UI_CMD_NONE); /* nothing starts */
  type("=0.7");
  ck_assert_str_eq(f.error, "");
  key(UI_KEY_BACKSPACE);
  type("6");
  struct ui_cmd c = key(UI_KEY_ENTER);
  ck_assert_int_eq(c.kind, UI_CMD_RUN);
  ck_assert_uint_eq(c.launch.n_overrides, 1);
  ck_assert_str_eq(c.launch.overrides[0], "mem-fraction-static=0.6");
  fr = ut_frame(&launchform_screen, &f, NULL, NULL, 100, 32, true);
  ut_assert_has(fr, "--mem-fraction-static 0.85 -> 0.6");
  ut_assert_has(fr, "mem-fraction-static=0.6_");
  free(fr);
  key(UI_KEY_TAB);
  ck_assert(!f.editing);
}
END_TEST

START_TEST(ab_run_of_a_pair) {
  launchform_open(&f, off, mtp);
  ck_assert_uint_eq(f.choice, f.n_concs); /* the whole sweep */
  struct ui_cmd c = key(UI_KEY_ENTER);
  ck_assert_ptr_eq(c.launch.twin, mtp);
  ck_assert(c.launch.sweep);
  char *fr = ut_frame(&launchform_screen, &f, NULL, NULL, 100, 32, true);
  ut_assert_has(fr, "A/B run: demo-fp8-h200-sglang:8192_1024, then demo-fp8-h200-sglang-mtp");
  ut_assert_has(fr, "[whole sweep (3 points)]");
  ut_assert_has(fr, "off arm then MTP arm");
  free(fr);
}
END_TEST

START_TEST(override_hint_in_the_engines_flags) {
  launchform_open(&f, lone, NULL); /* vLLM */
  char *fr = ut_frame(&launchform_screen, &f, NULL, NULL, 100, 32, true);
  ut_assert_has(fr, "KEY=VALUE words: gpu-memory-utilization=... max-num-seqs=...");
  ck_assert_msg(!strstr(fr, "mem-fraction-static"), "an SGLang flag offered for vLLM");
  free(fr);
  launchform_fini(&f);
  memset(&f, 0, sizeof f);
  launchform_open(&f, off, NULL); /* SGLang */
  fr = ut_frame(&launchform_screen, &f, NULL, NULL, 100, 32, true);
  ut_assert_has(fr, "KEY=VALUE words: mem-fraction-static=... max-running-requests=...");
  free(fr);
}
END_TEST

START_TEST(engine_line_while_probing_and_after) {
  launchform_open(&f, lone, NULL);
  ck_assert(f.probing);
  char *fr = ut_frame(&launchform_screen, &f, NULL, NULL, 80, 24, true);
  ut_assert_has(fr, "engine   probing...");
  free(fr);
  f.waiting = true;
  fr = ut_frame(&launchform_screen, &f, NULL, NULL, 80, 24, true);
  ut_assert_has(fr, "probing... (starts when it answers)");
  ut_assert_has(fr, "waiting for the engine probe...");
  free(fr);
  f.waiting = false;
  launchform_set_engine(&f, false, "engine sim: no GPU device");
  fr = ut_frame(&launchform_screen, &f, NULL, NULL, 80, 24, true);
  ut_assert_has(fr, "engine   sim: no GPU device");
  ut_assert_has(fr, "[conc 16]");
  ut_assert_has(fr, "one point: tp4 ep1 at concurrency 16");
  ut_assert_has(fr, "Enter start  h/l pick  Tab overrides  ? help  Esc cancel");
  free(fr);
}
END_TEST

START_TEST(clicks_pick_and_focus) {
  launchform_open(&f, off, NULL);
  char *fr = ut_frame(&launchform_screen, &f, NULL, NULL, 100, 32, true); /* lays it out */
  free(fr);
  struct ui_rect sweep = f.choice_at[f.n_concs];
  ck_assert_int_gt(sweep.w, 0);
  ut_mouse(&launchform_screen, &f, sweep.x + 1, sweep.y, 0, 100, 32, NULL);
  ck_assert_uint_eq(f.choice, f.n_concs);
  ut_mouse(&launchform_screen, &f, f.field_at.x + 2, f.field_at.y, 0, 100, 32, NULL);
  ck_assert(f.editing);
  bool acted;
  ut_mouse(&launchform_screen, &f, 0, 0, 0, 100, 32, &acted); /* outside the box */
  ck_assert(!acted);
}
END_TEST

int main(void) {
  Suite *s = suite_create("ui_launchform");
  TCase *tc = tcase_create("launchform");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, overrides_syntax);
  tcase_add_test(tc, overrides_against_the_recipe);
  tcase_add_test(tc, choices_of_one_recipe);
  tcase_add_test(tc, overrides_are_checked_before_the_launch);
  tcase_add_test(tc, ab_run_of_a_pair);
  tcase_add_test(tc, engine_line_while_probing_and_after);
  tcase_add_test(tc, override_hint_in_the_engines_flags);
  tcase_add_test(tc, clicks_pick_and_focus);
  tcase_add_test(tc, trust_line_and_flag_typos);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
