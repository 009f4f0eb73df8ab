/* run: the mislabel rule, engine choice, compare and export on recorded run
 * folders (tests/data/launcher/compare: an off/MTP A/B pair from servetop sim). */
#include "run/run.h"

#include <check.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define OFF_DIR TEST_DATA_DIR "/launcher/compare/off"
#define MTP_DIR TEST_DATA_DIR "/launcher/compare/mtp"

START_TEST(mislabel_rule) {
  /* label says MTP, server has none: the guard fires */
  ck_assert(run_spec_mislabelled(RECIPE_SPEC_MTP, true, false));
  ck_assert(run_spec_mislabelled(RECIPE_SPEC_DRAFT_MODEL, true, false));
  /* the reverse too */
  ck_assert(run_spec_mislabelled(RECIPE_SPEC_NONE, true, true));
  /* agreement */
  ck_assert(!run_spec_mislabelled(RECIPE_SPEC_MTP, true, true));
  ck_assert(!run_spec_mislabelled(RECIPE_SPEC_NONE, true, false));
  /* the server said nothing: never a mislabel */
  ck_assert(!run_spec_mislabelled(RECIPE_SPEC_MTP, false, false));
  ck_assert(!run_spec_mislabelled(RECIPE_SPEC_NONE, false, true));
}
END_TEST

START_TEST(engine_falls_back_to_sim_with_a_reason) {
  struct recipe r;
  memset(&r, 0, sizeof(r));
  r.name = "x";
  r.engine = "trt";
  char why[256] = "";
  ck_assert_ptr_eq(run_pick_engine(&r, why, sizeof(why)), eng_sim());
  ck_assert_msg(strstr(why, "trt") != NULL, "%s", why);
  if (access("/dev/nvidia0", F_OK) != 0 && access("/dev/kfd", F_OK) != 0) {
    r.engine = "sglang";
    why[0] = '\0';
    ck_assert_ptr_eq(run_pick_engine(&r, why, sizeof(why)), eng_sim());
    ck_assert_msg(strstr(why, "no GPU") != NULL, "%s", why);
  }
}
END_TEST

START_TEST(compare_sides_load_from_folders_and_files) {
  struct run_compare_side off, mtp, file;
  struct st_err err = {{0}};
  ck_assert_msg(run_compare_side_load(OFF_DIR, &off, &err) == 0, "%s", err.msg);
  ck_assert_msg(run_compare_side_load(MTP_DIR, &mtp, &err) == 0, "%s", err.msg);
  ck_assert_str_eq(off.spec_label, "none");
  ck_assert_str_eq(mtp.spec_label, "mtp");
  ck_assert_str_eq(off.name, "qwen3.5-fp8-h200-sglang");
  ck_assert_int_eq(off.n_gpus, 8);
  ck_assert_uint_eq(off.n_results, 1);
  ck_assert_int_eq(off.results[0].max_concurrency, 8);
  ck_assert(mtp.results[0].accept_length_valid);
  ck_assert_msg(run_compare_side_load(OFF_DIR "/result-conc8.json", &file, &err) == 0, "%s",
                err.msg);
  ck_assert_int_eq(file.n_gpus, 8); /* from recipe.json beside the file */
  ck_assert_str_eq(file.spec_label, "none");
  run_compare_side_fini(&file);

  char *text = run_compare_json_alloc(&off, &mtp);
  cJSON *doc = cJSON_Parse(text);
  ck_assert_ptr_nonnull(doc);
  cJSON *point = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "points"), 0);
  ck_assert_ptr_nonnull(point);
  cJSON *metrics = cJSON_GetObjectItem(point, "metrics");
  cJSON *out_tput = cJSON_GetObjectItem(metrics, "output_throughput");
  double a = off.results[0].output_throughput, b = mtp.results[0].output_throughput;
  ck_assert(fabs(cJSON_GetObjectItem(out_tput, "a")->valuedouble - a) < 1e-6);
  ck_assert(fabs(cJSON_GetObjectItem(out_tput, "delta")->valuedouble - (b - a)) < 1e-6);
  ck_assert(fabs(cJSON_GetObjectItem(out_tput, "ratio")->valuedouble - b / a) < 1e-9);
  cJSON *inter = cJSON_GetObjectItem(metrics, "interactivity");
  ck_assert(fabs(cJSON_GetObjectItem(inter, "a")->valuedouble -
                 1000.0 / off.results[0].median_ms[RESULTS_TPOT]) < 1e-6);
  /* acceptance: only the MTP side has it */
  cJSON *acc = cJSON_GetObjectItem(metrics, "accept_length");
  ck_assert(cJSON_IsNull(cJSON_GetObjectItem(acc, "a")));
  ck_assert(cJSON_IsNumber(cJSON_GetObjectItem(acc, "b")));
  cJSON *speedup = cJSON_GetObjectItem(point, "mtp_speedup");
  ck_assert_str_eq(cJSON_GetObjectItem(speedup, "mtp_side")->valuestring, "b");
  ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(speedup, "per_gpu")));
  ck_assert(fabs(cJSON_GetObjectItem(speedup, "throughput")->valuedouble - b / a) < 1e-9);
  ck_assert(fabs(cJSON_GetObjectItem(speedup, "interactivity")->valuedouble -
                 off.results[0].median_ms[RESULTS_TPOT] / mtp.results[0].median_ms[RESULTS_TPOT]) <
            1e-9);
  cJSON_Delete(doc);
  free(text);

  /* the table names every headline metric and the speedup */
  char *buf = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&buf, &len);
  run_compare_print(mem, &off, &mtp);
  fclose(mem);
  const char *want[] = {"request throughput", "output tok/s per GPU", "TTFT p99", "TPOT median",
                        "ITL mean", "E2EL p99", "accept length", "MTP speedup (B = MTP)"};
  for (size_t i = 0; i < ST_ARRAY_LEN(want); i++)
    ck_assert_msg(strstr(buf, want[i]) != NULL, "table lacks '%s'", want[i]);
  free(buf);
  run_compare_side_fini(&off);
  run_compare_side_fini(&mtp);
}
END_TEST

START_TEST(compare_rejects_what_is_not_a_result) {
  struct run_compare_side side;
  struct st_err err = {{0}};
  ck_assert_int_eq(run_compare_side_load(TEST_DATA_DIR "/launcher/nope", &side, &err), -1);
  ck_assert(strstr(err.msg, "no such") != NULL);
  run_compare_side_fini(&side);
  ck_assert_int_eq(run_compare_side_load(TEST_DATA_DIR "/launcher/recipes", &side, &err), -1);
  ck_assert_msg(strstr(err.msg, "not a servetop run folder") != NULL, "%s", err.msg);
  run_compare_side_fini(&side);
}
END_TEST

START_TEST(export_inferencex_entry_and_script) {
  char *yaml = NULL, *script = NULL;
  struct st_err err = {{0}};
  ck_assert_msg(run_export_inferencex(MTP_DIR, &yaml, &script, &err) == 0, "%s", err.msg);
  const char *yaml_want[] = {"qwen3.5-fp8-h200-sglang-mtp:\n",
                             "  image: lmsysorg/sglang:v0.5.14-cu130\n",
                             "  model: Qwen/Qwen3.5-397B-A17B-FP8\n", "  runner: h200\n",
                             "    - isl: 8192\n      osl: 1024\n",
                             "      - { tp: 8, ep: 8, conc-list: [ 8 ], spec-decoding: mtp }\n"};
  for (size_t i = 0; i < ST_ARRAY_LEN(yaml_want); i++)
    ck_assert_msg(strstr(yaml, yaml_want[i]) != NULL, "yaml lacks '%s':\n%s", yaml_want[i], yaml);
  const char *sh_want[] = {"export SGLANG_ENABLE_SPEC_V2=1\n", "python3 -m sglang.launch_server",
                           "--model-path \"$MODEL\"", "--tp \"$TP\"", "--port \"$PORT\"",
                           "--speculative-algorithm EAGLE", "> \"$SERVER_LOG\" 2>&1 &"};
  for (size_t i = 0; i < ST_ARRAY_LEN(sh_want); i++)
    ck_assert_msg(strstr(script, sh_want[i]) != NULL, "script lacks '%s':\n%s", sh_want[i],
                  script);
  free(yaml);
  free(script);
  ck_assert_int_eq(run_export_inferencex(TEST_DATA_DIR "/launcher/recipes", &yaml, &script, &err),
                   -1);
  ck_assert(strstr(err.msg, "not an exportable run folder") != NULL);
}
END_TEST

int main(void) {
  Suite *s = suite_create("run");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, mislabel_rule);
  tcase_add_test(tc, engine_falls_back_to_sim_with_a_reason);
  tcase_add_test(tc, compare_sides_load_from_folders_and_files);
  tcase_add_test(tc, compare_rejects_what_is_not_a_result);
  tcase_add_test(tc, export_inferencex_entry_and_script);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
