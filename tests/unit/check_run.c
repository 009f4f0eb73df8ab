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
/* a real llama-server --ab pair on the CPU (servetop run tiny-llamacpp-cpu --ab) */
#define LLAMA_OFF_DIR TEST_DATA_DIR "/launcher/compare/llamacpp-off"
#define LLAMA_DRAFT_DIR TEST_DATA_DIR "/launcher/compare/llamacpp-draft"

/* --num-prompts below what a p99's interval needs is refused where the SLO has a p99 target,
 * naming the flag, the minimum and why; the default (400) is above that minimum. */
START_TEST(tune_refuses_too_few_prompts_for_a_p99) {
  struct tune_slo slo, floor_only;
  struct st_err err = {{0}};
  ck_assert_int_eq(tune_slo_parse("ttft_p99_ms=2000,min_tok_s_per_user=5", &slo, &err), 0);
  ck_assert_int_eq(tune_slo_parse("min_tok_s_per_user=5", &floor_only, &err), 0);
  int least = run_tune_p99_min_prompts();
  ck_assert_int_eq(least, 368);
  ck_assert_int_ge(RUN_TUNE_P99_MIN_PROMPTS, least);
  ck_assert_int_eq(run_tune_check_prompts(&slo, least - 1, &err), -1);
  ck_assert_str_eq(err.msg, "--num-prompts 367: at least 368 with a p99 target (--slo "
                            "ttft_p99_ms): a p99's 95% interval needs 368 requests a point, and "
                            "with fewer the target can never hold");
  ck_assert_int_eq(run_tune_check_prompts(&slo, least, &err), 0);
  ck_assert_int_eq(run_tune_check_prompts(&slo, 0, &err), 0); /* not given: the default */
  ck_assert_int_eq(run_tune_check_prompts(&floor_only, 20, &err), 0);
}
END_TEST

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
  ck_assert(mtp.results[0].figs.f[FIG_ACCEPT_LENGTH].valid);
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
  double a = fig_get(&off.results[0].figs, FIG_OUTPUT_TPUT, FIG_VALUE),
         b = fig_get(&mtp.results[0].figs, FIG_OUTPUT_TPUT, FIG_VALUE);
  ck_assert(fabs(cJSON_GetObjectItem(out_tput, "a")->valuedouble - a) < 1e-6);
  ck_assert(fabs(cJSON_GetObjectItem(out_tput, "delta")->valuedouble - (b - a)) < 1e-6);
  ck_assert(fabs(cJSON_GetObjectItem(out_tput, "ratio")->valuedouble - b / a) < 1e-9);
  cJSON *inter = cJSON_GetObjectItem(metrics, "interactivity");
  ck_assert(fabs(cJSON_GetObjectItem(inter, "a")->valuedouble -
                 1000.0 / fig_get(&off.results[0].figs, FIG_TPOT, FIG_STAT_P50)) < 1e-6);
  /* acceptance: only the MTP side has it */
  cJSON *acc = cJSON_GetObjectItem(metrics, "accept_length");
  ck_assert(cJSON_IsNull(cJSON_GetObjectItem(acc, "a")));
  ck_assert(cJSON_IsNumber(cJSON_GetObjectItem(acc, "b")));
  cJSON *speedup = cJSON_GetObjectItem(point, "mtp_speedup");
  ck_assert_str_eq(cJSON_GetObjectItem(speedup, "mtp_side")->valuestring, "b");
  ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(speedup, "per_gpu")));
  ck_assert(fabs(cJSON_GetObjectItem(speedup, "throughput")->valuedouble - b / a) < 1e-9);
  ck_assert(fabs(cJSON_GetObjectItem(speedup, "interactivity")->valuedouble -
                 fig_get(&off.results[0].figs, FIG_TPOT, FIG_STAT_P50) / fig_get(&mtp.results[0].figs, FIG_TPOT, FIG_STAT_P50)) <
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
                        "ITL mean", "E2EL p99", "accept length", "MTP speedup (B = MTP, A = off)",
                        "speculative decoding: MTP", "8 GPUs"};
  for (size_t i = 0; i < ST_ARRAY_LEN(want); i++)
    ck_assert_msg(strstr(buf, want[i]) != NULL, "table lacks '%s'", want[i]);
  free(buf);
  run_compare_side_fini(&off);
  run_compare_side_fini(&mtp);
}
END_TEST

/* The row of the table that starts with title. */
static const char *table_row(const char *text, const char *title, char *row, size_t len) {
  const char *at = strstr(text, title);
  ck_assert_msg(at != NULL, "no row '%s' in\n%s", title, text);
  const char *nl = strchr(at, '\n');
  size_t n = nl ? (size_t)(nl - at) : strlen(at);
  snprintf(row, len, "%.*s", (int)(n < len ? n : len - 1), at);
  return row;
}

START_TEST(compare_says_what_is_compared) {
  struct run_compare_side off, draft;
  struct st_err err = {{0}};
  ck_assert_msg(run_compare_side_load(LLAMA_OFF_DIR, &off, &err) == 0, "%s", err.msg);
  ck_assert_msg(run_compare_side_load(LLAMA_DRAFT_DIR, &draft, &err) == 0, "%s", err.msg);
  ck_assert_int_eq(off.n_gpus, 0);
  char *buf = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&buf, &len);
  run_compare_print(mem, &off, &draft);
  fclose(mem);
  /* the header in words: the method and the GPUs (none: the CPU) */
  ck_assert_msg(strstr(buf, "spec-decoding none") == NULL && strstr(buf, "GPUs known") == NULL,
                "%s", buf);
  ck_assert_msg(strstr(buf, "speculative decoding: off; no GPU (runs on the CPU)") != NULL, "%s",
                buf);
  ck_assert_msg(strstr(buf, "speculative decoding: draft model (recipe: draft_model)") != NULL,
                "%s", buf);
  ck_assert_msg(strstr(buf, "output tok/s per GPU") == NULL, "%s", buf);
  /* a draft model is not MTP; the speedup names both sides' methods */
  ck_assert_msg(strstr(buf, "MTP") == NULL, "%s", buf);
  ck_assert_msg(strstr(buf, "speculative decoding speedup (B = draft model, A = off): throughput "
                            "0.6704x [?] no difference detected, interactivity 0.6673x [?] "
                            "no difference detected") != NULL, /* saved without intervals */
                "%s", buf);
  /* 4 significant digits everywhere: the draft arm's 0.028 ms ITL median is no "0.03" */
  char row[160];
  table_row(buf, "ITL median (ms)", row, sizeof row);
  ck_assert_msg(strstr(row, " 0.7850 ") && strstr(row, " 0.02800 ") && strstr(row, " -0.7570 ") &&
                    strstr(row, " 0.03567x"),
                "%s", row);
  /* ITL is per chunk and the draft arm's tokens come in bursts: a ratio, no verdict */
  ck_assert_msg(strstr(row, "not comparable (per chunk; see TPOT)"), "%s", row);
  table_row(buf, "TPOT median (ms)", row, sizeof row);
  ck_assert_msg(strstr(row, "not comparable") == NULL, "%s", row);
  table_row(buf, "output throughput (tok/s)", row, sizeof row);
  ck_assert_msg(strstr(row, " 1097 ") && strstr(row, " 735.6 ") && strstr(row, " -361.7 "), "%s",
                row);
  table_row(buf, "completed requests", row, sizeof row);
  ck_assert_msg(strstr(row, " 16 ") && strstr(row, " 0 ") && strstr(row, " 1.000x"), "%s", row);
  free(buf);

  char *text = run_compare_json_alloc(&off, &draft);
  cJSON *doc = cJSON_Parse(text);
  cJSON *point = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "points"), 0);
  ck_assert(cJSON_IsNull(cJSON_GetObjectItem(point, "mtp_speedup")));
  cJSON *su = cJSON_GetObjectItem(point, "spec_speedup");
  ck_assert_str_eq(cJSON_GetObjectItem(su, "spec_side")->valuestring, "b");
  ck_assert_str_eq(cJSON_GetObjectItem(su, "spec_method")->valuestring, "draft_model");
  ck_assert_str_eq(cJSON_GetObjectItem(su, "baseline_method")->valuestring, "none");
  ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(su, "per_gpu")));
  cJSON *itl = cJSON_GetObjectItem(cJSON_GetObjectItem(point, "metrics"), "median_itl_ms");
  ck_assert_str_eq(cJSON_GetObjectItem(itl, "ratio_verdict")->valuestring,
                   "not comparable (per chunk; see TPOT)");
  cJSON_Delete(doc);
  free(text);
  run_compare_side_fini(&off);
  run_compare_side_fini(&draft);
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
  /* a run on the sim: refused unless asked, then marked SIMULATED */
  ck_assert_int_eq(run_export_inferencex(MTP_DIR, &yaml, &script, &err), 1);
  ck_assert_msg(strstr(err.msg, "SIMULATED") && strstr(err.msg, "--allow-simulated"), "%s",
                err.msg);
  ck_assert_ptr_null(yaml);
  ck_assert_msg(run_export_inferencex_opts(MTP_DIR, true, &yaml, &script, &err) == 0, "%s",
                err.msg);
  ck_assert_msg(strstr(yaml, "run status ok (SIMULATED)\n# SIMULATED: measured on servetop sim"),
                "%s", yaml);
  ck_assert_msg(strstr(script, "# SIMULATED: measured on servetop sim"), "%s", script);
  /* the workload measured, not the recipe's scenario */
  ck_assert_msg(strstr(yaml, "# measured at isl 512 / osl 128 (the recipe's scenario is isl 8192 "
                             "/ osl 1024)\n"), "%s", yaml);
  const char *yaml_want[] = {"qwen3.5-fp8-h200-sglang-mtp:\n",
                             "  image: lmsysorg/sglang:v0.5.14-cu130\n",
                             "  model: Qwen/Qwen3.5-397B-A17B-FP8\n", "  runner: h200\n",
                             "    - isl: 512\n      osl: 128\n",
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

#define EXPORT_DIR TEST_DATA_DIR "/run/export/"

/* Only what was measured: the points measured to the end, $CONC as the
 * recipe writes it; failed, mislabelled, attached and empty runs refused. */
START_TEST(export_only_what_was_measured) {
  char *yaml = NULL, *script = NULL;
  struct st_err err = {{0}};
  ck_assert_msg(run_export_inferencex_opts(EXPORT_DIR "interrupted", true, &yaml, &script, &err) ==
                    0, "%s", err.msg);
  ck_assert_msg(strstr(yaml, "conc-list: [ 4, 8 ]"), "%s", yaml); /* not 16, 8 once */
  ck_assert_msg(strstr(script, "--max-running-requests \"$CONC\""), "%s", script);
  ck_assert_msg(strstr(script, "\"--cuda-graph-max-bs=$CONC\""), "%s", script);
  ck_assert_msg(strstr(script, "--mem-fraction-static 0.8"), "%s", script); /* the tuned knob */
  ck_assert_ptr_null(strstr(script, " 16"));
  free(yaml);
  free(script);
  /* an old folder: the values it has, and a note that says so */
  ck_assert_int_eq(
      run_export_inferencex_opts(EXPORT_DIR "no-template", true, &yaml, &script, &err), 0);
  ck_assert_ptr_nonnull(strstr(script, "predates argv_template"));
  free(yaml);
  free(script);
  static const struct {
    const char *dir, *why;
  } refused[] = {
      {"failed", "server_failed"},
      {"mislabelled", "mislabelled"},
      {"empty", "no point was measured to the end"},
      {"attached", "did not launch"},
  };
  for (size_t i = 0; i < ST_ARRAY_LEN(refused); i++) {
    char path[512];
    snprintf(path, sizeof path, EXPORT_DIR "%s", refused[i].dir);
    yaml = script = NULL;
    ck_assert_int_eq(run_export_inferencex(path, &yaml, &script, &err), 1);
    ck_assert_msg(strstr(err.msg, refused[i].why), "%s: %s", refused[i].dir, err.msg);
    ck_assert_ptr_null(yaml);
  }
}
END_TEST

/* --set, the launch form and m share one check, against the recipe's engine. */
START_TEST(overrides_checked_against_the_engine) {
  struct recipe_set *set = recipe_set_new();
  static const char vllm[] = "v-fp8-h200-vllm:\n  model: Org/M\n  model-prefix: m\n  runner: h200\n"
                             "  precision: fp8\n  framework: vllm\n  multinode: false\n"
                             "  scenarios:\n    fixed-seq-len:\n    - isl: 1024\n      osl: 1024\n"
                             "      search-space:\n      - { tp: 1, conc-list: [4] }\n"
                             "  server:\n    engine: vllm\n    argv:\n      - Org/M\n"
                             "      - --max-num-seqs $CONC\n";
  recipe_set_add_yaml_buffer(set, "v.yaml", vllm, sizeof vllm - 1);
  const struct recipe *r = recipe_set_at(set, 0);
  ck_assert_ptr_nonnull(r);
  struct st_err err = {{0}};
  char *good[] = {"kv-cache=0.8", "max-batch=64", "--enforce-eager="};
  ck_assert_msg(run_check_overrides(r, good, 3, &err) == 0, "%s", err.msg);
  char *bad[][1] = {{"kv-cache=1.5"}, {"max-batch=0"}, {"nonsense"}, {"=3"}, {"t;p=1"},
                    {"mem-fraction-static=0.8"}, {"max-running-requests=8"}};
  const char *why[] = {"gpu-memory-utilization", ">= 1", "KEY=VALUE", "no flag name", "cannot be",
                       "SGLang's KV cache flag, not vLLM's: vLLM takes --gpu-memory-utilization",
                       "vLLM takes --max-num-seqs"};
  for (size_t i = 0; i < ST_ARRAY_LEN(bad); i++) {
    ck_assert_int_eq(run_check_overrides(r, bad[i], 1, &err), -1);
    ck_assert_msg(strstr(err.msg, why[i]), "%s: %s", bad[i][0], err.msg);
  }
  recipe_set_free(set);
}
END_TEST

START_TEST(attach_url_and_recipe) {
  char host[64];
  int port;
  struct st_err err = {{0}};
  ck_assert_int_eq(run_parse_http_url("http://127.0.0.1:8000/v1", host, sizeof host, &port, &err), 0);
  ck_assert_str_eq(host, "127.0.0.1");
  ck_assert_int_eq(port, 8000);
  ck_assert_int_eq(run_parse_http_url("http://gpu-node-3", host, sizeof host, &port, &err), 0);
  ck_assert_int_eq(port, 80);
  const char *bad[] = {"https://x:1", "127.0.0.1:8000", "http://:80", "http://h:0", "http://h:99999",
                       "http://h:80x", "http://a b"};
  for (size_t i = 0; i < ST_ARRAY_LEN(bad); i++)
    ck_assert_msg(run_parse_http_url(bad[i], host, sizeof host, &port, &err) == -1, "%s", bad[i]);
  int concs[] = {1, 4};
  struct run_attach_load load = {.url = "http://127.0.0.1:8000", .model = "Org/\"odd\" name",
                                 .isl = 64, .osl = 16, .concs = concs, .n_concs = 2, .chat = true};
  struct recipe_set *set = run_attach_recipes_alloc(&load, &err);
  ck_assert_msg(set != NULL, "%s", err.msg);
  const struct recipe *r = recipe_set_at(set, 0);
  ck_assert_str_eq(r->name, "attach-127.0.0.1-8000");
  ck_assert_str_eq(r->model, "Org/\"odd\" name");
  ck_assert_int_eq(r->isl, 64);
  ck_assert_int_eq(r->osl, 16);
  ck_assert_uint_eq(r->n_points, 2);
  ck_assert_int_eq(r->points[1].conc, 4);
  ck_assert_str_eq(r->bench.backend, "openai-chat");
  recipe_set_free(set);
}
END_TEST

int main(void) {
  Suite *s = suite_create("run");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, tune_refuses_too_few_prompts_for_a_p99);
  tcase_add_test(tc, mislabel_rule);
  tcase_add_test(tc, engine_falls_back_to_sim_with_a_reason);
  tcase_add_test(tc, compare_sides_load_from_folders_and_files);
  tcase_add_test(tc, compare_says_what_is_compared);
  tcase_add_test(tc, compare_rejects_what_is_not_a_result);
  tcase_add_test(tc, export_inferencex_entry_and_script);
  tcase_add_test(tc, export_only_what_was_measured);
  tcase_add_test(tc, overrides_checked_against_the_engine);
  tcase_add_test(tc, attach_url_and_recipe);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
