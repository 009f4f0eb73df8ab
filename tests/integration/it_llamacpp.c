/* run API on a real engine, llama.cpp's llama-server, as the dashboard drives it:
 * a restart with another KV size (the generic kv-cache knob -> -c) and slot
 * count mid-point; the snapshot carries the new capacity, the one before and
 * the batch cap; a refused knob leaves the server running. Needs llama-server
 * and the tiny models of scripts/setup-llamacpp.sh, found as servetop finds
 * them (the engine's probe); skipped (77) without them unless
 * SERVETOP_REQUIRE_LLAMA_SERVER=1. */
#include "run/run.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/run_check.h"

static bool measuring(const struct snap_run *s) {
  return s->progress.phase == SNAP_PHASE_MEASURING && s->progress.done >= 2;
}

START_TEST(restart_with_another_kv_size_and_slot_count) {
  struct recipe_set *set = run_check_recipes(PROJECT_DIR "/configs");
  struct st_err err = {{0}};
  char *results = run_check_results_dir("it_llamacpp");
  struct run_config cfg;
  run_check_config(&cfg, set, "tiny-llamacpp-cpu", results);
  cfg.conc = 8; /* past the 4 slots: requests queue in the server */
  cfg.num_prompts = 64;
  cfg.num_warmups = 0;
  cfg.isl = 64;
  cfg.osl = 64;
  struct run *run = run_start(&cfg, &err);
  ck_assert_msg(run != NULL, "%s", err.msg);
  struct snap_run *s = malloc(sizeof(*s));
  ck_assert(run_check_wait(run, s, 60000, measuring));
  ck_assert_str_eq(s->server.engine, "llamacpp");
  ck_assert(!s->server.simulated);
  ck_assert(s->load.max_total_num_tokens_valid && s->load.max_total_num_tokens == 4096);
  ck_assert(s->load.kv_per_slot_valid && s->load.kv_per_slot_tokens == 1024);
  ck_assert(s->load.batch_cap_valid && s->load.batch_cap == 4);
  ck_assert(s->concurrency.target > s->load.batch_cap);
  /* refused before anything stops: -c takes tokens, not a fraction */
  ck_assert_int_eq(run_restart_with(run, "mem-fraction", "0.5", &err), -1);
  ck_assert_msg(strstr(err.msg, "--ctx-size"), "%s", err.msg);
  ck_assert_int_eq(run_restart_with(run, "kv-cache", "2048", &err), 0);
  ck_assert(run_wait(run, 120000));
  struct run_outcome out;
  run_get_outcome(run, &out);
  ck_assert_msg(out.status == RUN_STATUS_OK, "%s", out.message);
  ck_assert_int_eq(out.n_points_done, 2); /* the cut point, then the full one */
  ck_assert_int_eq(out.max_total_num_tokens, 2048);
  run_snapshot(run, s, NULL);
  ck_assert_int_eq(s->load.max_total_num_tokens, 2048);
  ck_assert(s->load.max_total_num_tokens_was_valid && s->load.max_total_num_tokens_was == 4096);
  ck_assert(s->load.kv_per_slot_valid && s->load.kv_per_slot_tokens == 512); /* 2048 / 4 */
  ck_assert(s->load.batch_cap == 4);
  ck_assert_int_eq(s->server.state, SNAP_SERVER_EXITED);
  free(s);
  run_free(run);
  recipe_set_free(set);
  run_check_remove_dir(results);
}
END_TEST

int main(void) {
  const struct eng_ops *llama = eng_find("llamacpp");
  char why[512] = "";
  bool required = getenv("SERVETOP_REQUIRE_LLAMA_SERVER") &&
                  strcmp(getenv("SERVETOP_REQUIRE_LLAMA_SERVER"), "1") == 0;
  if (!llama || !llama->probe(why, sizeof why)) {
    printf("%s: llama-server not available: %s\n", required ? "FAIL" : "SKIP", why);
    return required ? EXIT_FAILURE : 77;
  }
  char *cache = path_cache_dir_alloc();
  char *model = path_join_alloc(cache, "models/tiny-target.gguf");
  bool have_model = path_exists(model);
  printf("%s%s\n", have_model ? "" : required ? "FAIL: missing " : "SKIP: missing ",
         have_model ? "" : model);
  free(cache);
  free(model);
  if (!have_model)
    return required ? EXIT_FAILURE : 77;
  Suite *s = suite_create("llamacpp");
  TCase *tc = tcase_create("run");
  tcase_set_timeout(tc, 240);
  tcase_add_test(tc, restart_with_another_kv_size_and_slot_count);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
