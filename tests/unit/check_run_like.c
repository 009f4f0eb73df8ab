/* run like: the one decision whether two measurements may be divided
 * (run_like_check), each fact on its own, read from result JSON
 * (run_like_facts_from_result), and compare's use of it on real run folders. */
#include "run/run.h"

#include <check.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define COMPARE_DIR TEST_DATA_DIR "/launcher/compare/"

static void base(struct run_like_facts *f) {
  run_like_facts_init(f);
  snprintf(f->model, sizeof f->model, "Org/M");
  snprintf(f->engine, sizeof f->engine, "sglang");
  snprintf(f->gpu_type, sizeof f->gpu_type, "h200");
  f->n_gpus = 8;
  f->isl = 1024;
  f->osl = 128;
  f->range_ratio = 1.0;
  snprintf(f->chat, sizeof f->chat, "completions, no chat template");
  f->overrides_known = true;
  f->simulated = 0;
  f->schema_version = 2;
  f->concurrency = 8;
}

/* b differs from a in one fact: exactly one difference, named by word. */
static void expect_one(const struct run_like_facts *a, const struct run_like_facts *b,
                       const char *word) {
  char why[512];
  ck_assert_uint_eq(run_like_check(a, b, why, sizeof why), 1);
  ck_assert_msg(strstr(why, word) != NULL, "'%s' lacks '%s'", why, word);
  ck_assert_msg(strstr(why, "differs (A: ") != NULL, "%s", why);
}

START_TEST(like_when_every_fact_agrees) {
  struct run_like_facts a, b;
  base(&a);
  base(&b);
  char why[256] = "x";
  ck_assert_uint_eq(run_like_check(&a, &b, why, sizeof why), 0);
  ck_assert_str_eq(why, "");
}
END_TEST

START_TEST(each_fact_refused_on_its_own) {
  struct run_like_facts a, b;
  base(&a);
  base(&b), snprintf(b.model, sizeof b.model, "Org/Other"), expect_one(&a, &b, "model differs (A: Org/M, B: Org/Other)");
  base(&b), snprintf(b.engine, sizeof b.engine, "sim"), expect_one(&a, &b, "engine differs");
  base(&b), snprintf(b.gpu_type, sizeof b.gpu_type, "b200"), expect_one(&a, &b, "GPU type differs");
  base(&b), b.n_gpus = 4, expect_one(&a, &b, "GPU count differs (A: 8, B: 4)");
  base(&b), b.isl = 8192, expect_one(&a, &b, "isl differs (A: 1024, B: 8192)");
  base(&b), b.osl = 1024, expect_one(&a, &b, "osl differs");
  base(&b), b.range_ratio = 0.8, expect_one(&a, &b, "range ratio differs (A: 1, B: 0.8)");
  base(&b), snprintf(b.chat, sizeof b.chat, "chat, no chat template"), expect_one(&a, &b, "chat template differs");
  base(&b), snprintf(b.overrides, sizeof b.overrides, "kv-cache=0.95"),
      expect_one(&a, &b, "overrides differs (A: none, B: kv-cache=0.95)");
  base(&b), b.simulated = 1, expect_one(&a, &b, "simulated or real differs (A: real, B: SIMULATED)");
  base(&b), b.simulated = -1, expect_one(&a, &b, "simulated or real differs (A: real, B: unknown)");
  base(&b), b.schema_version = 1, expect_one(&a, &b, "result schema differs (A: 2, B: 1)");
  base(&b), b.concurrency = 64, expect_one(&a, &b, "concurrency differs (A: 8, B: 64)");
}
END_TEST

/* A fact one side does not know is not a difference (but provenance is). */
START_TEST(unknown_facts_are_skipped_but_provenance_is_not) {
  struct run_like_facts a, b;
  base(&a);
  base(&b);
  b.model[0] = b.engine[0] = b.gpu_type[0] = b.chat[0] = '\0';
  b.n_gpus = b.isl = b.osl = b.concurrency = -1;
  b.range_ratio = NAN;
  b.overrides_known = false;
  ck_assert_uint_eq(run_like_check(&a, &b, NULL, 0), 0);
  /* several differences: all counted, all named */
  base(&b);
  b.concurrency = 64;
  b.simulated = 1;
  snprintf(b.model, sizeof b.model, "tiny");
  char why[512];
  ck_assert_uint_eq(run_like_check(&a, &b, why, sizeof why), 3);
  ck_assert_msg(strstr(why, "model differs") && strstr(why, "; simulated or real differs") &&
                    strstr(why, "; concurrency differs"), "%s", why);
}
END_TEST

/* Each fact is read where the result records it. */
START_TEST(facts_from_result_json) {
  const char *text =
      "{\"model_id\":\"Org/M\",\"max_concurrency\":8,"
      "\"servetop\":{\"schema_version\":2,\"simulated\":true,\"engine\":\"sim\","
      "\"client\":{\"api\":\"chat\",\"random_input_len\":1024,\"random_output_len\":128,"
      "\"random_range_ratio\":0.5,\"prompts\":{\"chat_template\":\"{{x}}\"}}},"
      "\"servetop_run\":{\"overrides\":[\"kv-cache=0.95\",\"tp=4\"],"
      "\"server\":{\"engine\":\"sim\",\"simulated\":true}}}";
  struct results_file rf;
  memset(&rf, 0, sizeof rf);
  rf.json = cJSON_Parse(text);
  rf.max_concurrency = 8;
  struct run_compare_side side;
  memset(&side, 0, sizeof side);
  side.gpu_type = "h200";
  side.n_gpus = 8;
  struct run_like_facts f;
  run_like_facts_from_result(&side, &rf, &f);
  ck_assert_str_eq(f.model, "Org/M");
  ck_assert_str_eq(f.engine, "sim");
  ck_assert_str_eq(f.gpu_type, "h200");
  ck_assert_int_eq(f.n_gpus, 8);
  ck_assert_int_eq(f.isl, 1024);
  ck_assert_int_eq(f.osl, 128);
  ck_assert(f.range_ratio == 0.5);
  ck_assert_msg(strncmp(f.chat, "chat, chat template of 5 chars #", 32) == 0, "%s", f.chat);
  ck_assert(f.overrides_known);
  ck_assert_str_eq(f.overrides, "kv-cache=0.95,tp=4");
  ck_assert_int_eq(f.simulated, 1);
  ck_assert_int_eq(run_result_simulated(&rf), 1);
  ck_assert_int_eq(f.schema_version, 2);
  ck_assert_int_eq(f.concurrency, 8);
  cJSON_Delete(rf.json);
  /* an older result: no servetop.simulated, the run's server says; a bench result: no
   * overrides of its own, provenance unknown */
  rf.json = cJSON_Parse("{\"servetop\":{\"schema_version\":1},\"servetop_run\":{\"server\":"
                        "{\"simulated\":false}}}");
  ck_assert_int_eq(run_result_simulated(&rf), 0);
  cJSON_Delete(rf.json);
  rf.json = cJSON_Parse("{\"servetop\":{\"schema_version\":2,\"simulated\":null}}");
  run_like_facts_from_result(NULL, &rf, &f);
  ck_assert_int_eq(f.simulated, -1);
  ck_assert(f.overrides_known);
  ck_assert_str_eq(f.overrides, "");
  ck_assert_int_eq(f.n_gpus, -1);
  cJSON_Delete(rf.json);
}
END_TEST

/* compare's use: the sim's Qwen on 8 GPUs against llama.cpp on the CPU is refused, each
 * difference named; a run and its own result are alike. */
START_TEST(compare_refuses_unlike_run_folders) {
  struct run_compare_side a, b;
  struct st_err err = {{0}};
  ck_assert_msg(run_compare_side_load(COMPARE_DIR "off", &a, &err) == 0, "%s", err.msg);
  ck_assert_msg(run_compare_side_load(COMPARE_DIR "mtp", &b, &err) == 0, "%s", err.msg);
  char why[1024];
  /* the recorded MTP arm sent chat requests (InferenceX's spec-decoding recipes use the chat
   * template), the off arm plain completions: different prompts, one difference */
  ck_assert_uint_eq(run_compare_unlike(&a, &b, why, sizeof why), 1);
  ck_assert_msg(strstr(why, "chat template differs (A: completions"), "%s", why);
  run_compare_side_fini(&b);
  /* a run folder and its own result: alike */
  ck_assert(run_compare_side_load(COMPARE_DIR "off/result-conc8.json", &b, &err) == 0);
  ck_assert_msg(run_compare_unlike(&a, &b, why, sizeof why) == 0, "%s", why);
  run_compare_side_fini(&b);
  ck_assert_msg(run_compare_side_load(COMPARE_DIR "llamacpp-off", &b, &err) == 0, "%s", err.msg);
  ck_assert_uint_gt(run_compare_unlike(&a, &b, why, sizeof why), 0);
  /* conc 8 against conc 1: no concurrency on both sides */
  ck_assert_msg(strstr(why, "concurrency"), "%s", why);
  char *json = run_compare_json_alloc(&a, &b);
  cJSON *doc = cJSON_Parse(json);
  ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(doc, "like")));
  ck_assert(cJSON_IsString(cJSON_GetObjectItem(doc, "unlike")));
  ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(doc, "simulated")));
  ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "a"), "simulated")));
  cJSON_Delete(doc);
  free(json);
  /* one result each: paired, and every other difference is named */
  run_compare_side_fini(&a);
  run_compare_side_fini(&b);
  ck_assert(run_compare_side_load(COMPARE_DIR "off/result-conc8.json", &a, &err) == 0);
  ck_assert(run_compare_side_load(COMPARE_DIR "llamacpp-off/result-conc1.json", &b, &err) == 0);
  ck_assert_uint_gt(run_compare_unlike(&a, &b, why, sizeof why), 2);
  ck_assert_msg(strstr(why, "model differs") && strstr(why, "engine differs") &&
                    strstr(why, "concurrency differs (A: 8, B: 1)"), "%s", why);
  char *buf = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&buf, &len);
  run_compare_print(mem, &a, &b);
  fclose(mem);
  ck_assert_msg(strstr(buf, "!!! UNLIKE: ") && strstr(buf, "SIMULATED"), "%s", buf);
  free(buf);
  run_compare_side_fini(&a);
  run_compare_side_fini(&b);
}
END_TEST

int main(void) {
  Suite *s = suite_create("run_like");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, like_when_every_fact_agrees);
  tcase_add_test(tc, each_fact_refused_on_its_own);
  tcase_add_test(tc, unknown_facts_are_skipped_but_provenance_is_not);
  tcase_add_test(tc, facts_from_result_json);
  tcase_add_test(tc, compare_refuses_unlike_run_folders);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
