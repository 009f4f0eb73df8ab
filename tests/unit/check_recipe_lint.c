/* recipe: the recipe doctor. Every rule has a failing fixture (ix-bad,
 * native-bad/lint.yaml) and passes on the clean ones (ix-good, configs/). */
#include "recipe/recipe.h"
#include "util/util.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct recipe_set *load_ix(const char *name) {
  struct recipe_set *set = recipe_set_new();
  struct st_err err;
  char *dir = xasprintf("%s/recipe/%s", TEST_DATA_DIR, name);
  ck_assert_msg(recipe_set_add_inferencex(set, dir, &err) == 0, "%s", err.msg);
  free(dir);
  return set;
}

static struct recipe_set *load_configs(const char *dir) {
  struct recipe_set *set = recipe_set_new();
  struct st_err err;
  ck_assert_msg(recipe_set_add_configs_dir(set, dir, &err) == 0, "%s", err.msg);
  return set;
}

static size_t count_rule(const struct recipe_findings *f, const char *rule) {
  size_t n = 0;
  for (size_t i = 0; i < f->n; i++)
    n += strcmp(f->items[i].rule, rule) == 0;
  return n;
}

/* The finding for rule+recipe; checks severity, file suffix and line. */
static void expect(const struct recipe_findings *f, const char *rule, const char *recipe,
                   enum recipe_severity sev, const char *file_suffix, int line) {
  for (size_t i = 0; i < f->n; i++) {
    const struct recipe_finding *x = &f->items[i];
    if (strcmp(x->rule, rule) != 0 || strcmp(x->recipe, recipe) != 0)
      continue;
    ck_assert_msg(x->severity == sev, "%s %s: severity %s", rule, recipe,
                  recipe_severity_name(x->severity));
    ck_assert_msg(str_ends_with(x->file, file_suffix), "%s %s: file %s", rule, recipe, x->file);
    ck_assert_msg(x->line == line, "%s %s: line %d, want %d", rule, recipe, x->line, line);
    ck_assert(x->message[0] != '\0');
    return;
  }
  ck_abort_msg("no %s finding for %s", rule, recipe);
}

static const char *const nv = "configs/nvidia-master.yaml";

START_TEST(clean_checkout_has_no_findings) {
  struct recipe_set *set = load_ix("ix-good");
  ck_assert_uint_eq(recipe_set_diag_count(set), 0);
  ck_assert_uint_eq(recipe_set_count(set), 6);
  ck_assert_uint_eq(recipe_set_multinode_count(set), 1);
  struct recipe_findings f;
  recipe_lint(set, &f);
  for (size_t i = 0; i < f.n; i++)
    ck_abort_msg("%s:%d: %s %s", f.items[i].file, f.items[i].line, f.items[i].rule,
                 f.items[i].message);
  recipe_findings_fini(&f);
  recipe_set_free(set);
}
END_TEST

START_TEST(bundled_recipes_have_no_findings) {
  struct recipe_set *set = load_configs(PROJECT_DIR "/configs");
  struct recipe_findings f;
  recipe_lint(set, &f);
  for (size_t i = 0; i < f.n; i++)
    ck_abort_msg("%s:%d: %s %s", f.items[i].file, f.items[i].line, f.items[i].rule,
                 f.items[i].message);
  recipe_findings_fini(&f);
  recipe_set_free(set);
}
END_TEST

START_TEST(routes_follow_each_launcher_family) {
  struct recipe_set *set = load_ix("ix-good");
  const struct recipe *r = recipe_set_find(set, "qwen3.5-fp8-h200-sglang-mtp");
  ck_assert_uint_eq(r->n_routes, 2);
  ck_assert_str_eq(r->routes[0].family, "h200-cw");
  ck_assert_str_eq(r->routes[1].family, "h200-dgxc-slurm");
  for (size_t i = 0; i < 2; i++) {
    ck_assert_str_eq(r->routes[i].script,
                     "benchmarks/single_node/fixed_seq_len/qwen3.5_fp8_h200_mtp.sh");
    ck_assert(r->routes[i].exists);
  }
  /* the tagged-first b200 launcher (and its symlink) find the _vllm script */
  const struct recipe *v = recipe_set_find(set, "qwen3.5-fp8-b200-vllm");
  ck_assert_uint_eq(v->n_routes, 2);
  ck_assert_str_eq(v->routes[1].launcher, "runners/launch_b200-dgxc-slurm.sh");
  ck_assert_str_eq(v->script_path, "benchmarks/single_node/fixed_seq_len/qwen3.5_fp8_b200_vllm.sh");
  const struct recipe *a = recipe_set_find(set, "qwen3.5-fp8-h200-sglang-agentic-mtp");
  ck_assert_str_eq(a->script_path, "benchmarks/single_node/agentic/qwen3.5_fp8_h200_mtp.sh");
  /* agentic: KV_OFFLOADING selects the cache arguments of the script */
  struct recipe_cmd acmd;
  struct st_err aerr;
  ck_assert_int_eq(recipe_server_cmd(a, &a->points[0], &acmd, &aerr), 0);
  ck_assert_ptr_null(recipe_cmd_knob(&acmd, "hicache-ratio"));
  ck_assert(!acmd.has_unresolved);
  recipe_cmd_fini(&acmd);
  ck_assert_str_eq(a->points[a->n_points - 1].kv_offloading, "dram");
  ck_assert_int_eq(recipe_server_cmd(a, &a->points[a->n_points - 1], &acmd, &aerr), 0);
  ck_assert_str_eq(recipe_cmd_knob(&acmd, "hicache-ratio"), "2");
  ck_assert_str_eq(recipe_cmd_env(&acmd, "SGLANG_SIMULATE_ACC_LEN"), "3.39");
  recipe_cmd_fini(&acmd);
  /* case "$CONC" arms and the benchmark flags of the script */
  const struct recipe *m = recipe_set_find(set, "qwen3.5-fp8-h200-sglang-mtp");
  ck_assert(m->bench.use_chat_template);
  ck_assert_int_eq(m->bench.num_prompts_factor, 10);
  struct recipe_cmd cmd;
  struct st_err err;
  struct recipe_point pt = m->points[0];
  ck_assert_int_eq(recipe_server_cmd(m, &pt, &cmd, &err), 0);
  ck_assert_str_eq(recipe_cmd_knob(&cmd, "max-running-requests"), "32"); /* 4|8|16 arm */
  ck_assert_str_eq(recipe_cmd_env(&cmd, "SGLANG_ENABLE_SPEC_V2"), "1");
  ck_assert_int_eq(cmd.line, 45);
  recipe_cmd_fini(&cmd);
  pt.conc = 256;
  ck_assert_int_eq(recipe_server_cmd(m, &pt, &cmd, &err), 0);
  ck_assert_str_eq(recipe_cmd_knob(&cmd, "max-running-requests"), "256"); /* *) arm */
  recipe_cmd_fini(&cmd);
  /* multinode entries are not resolved */
  ck_assert_str_eq(recipe_set_multinode_at(set, 0), "qwen3.5-fp8-h200-dynamo-sglang");
  recipe_set_free(set);
}
END_TEST

START_TEST(every_rule_fires_on_the_bad_checkout) {
  struct recipe_set *set = load_ix("ix-bad");
  struct recipe_findings f;
  recipe_lint(set, &f);
  expect(&f, "RUNNER_LABEL_UNKNOWN", "dsv4-fp8-h200-sglang", RECIPE_SEV_ERROR, nv, 4);
  expect(&f, "NO_LAUNCHER", "qwen3.5-fp4-b300-sglang", RECIPE_SEV_ERROR, nv, 17);
  expect(&f, "ROUTE_MISSING", "glm5.2-fp8-h200-sglang", RECIPE_SEV_ERROR, nv, 33);
  expect(&f, "MTP_NOT_ROUTED", "qwen3.5-fp8-h100-sglang-mtp", RECIPE_SEV_ERROR, nv, 65);
  expect(&f, "MTP_SCRIPT_NO_SPEC_FLAGS", "qwen3.5-fp8-h100-sglang-mtp", RECIPE_SEV_ERROR,
         "fixed_seq_len/qwen3.5_fp8_h100.sh", 1);
  expect(&f, "ROUTE_SCENARIO_MISMATCH", "qwen3.5-fp8-h200-sglang-agentic-mtp", RECIPE_SEV_ERROR,
         nv, 145);
  expect(&f, "STP_SCRIPT_HAS_SPEC", "qwen3.5-fp8-h200-sglang", RECIPE_SEV_ERROR,
         "fixed_seq_len/qwen3.5_fp8_h200.sh", 5);
  expect(&f, "MTP_CHAT_TEMPLATE", "qwen3.5-fp8-h200-sglang-mtp", RECIPE_SEV_ERROR,
         "fixed_seq_len/qwen3.5_fp8_h200_mtp.sh", 16);
  expect(&f, "SGLANG_SPEC_V2", "qwen3.5-fp8-h200-sglang-mtp", RECIPE_SEV_WARNING,
         "fixed_seq_len/qwen3.5_fp8_h200_mtp.sh", 12);
  expect(&f, "MAX_RUNNING_REQUESTS_LT_CONC", "qwen3.5-fp8-h100-sglang", RECIPE_SEV_ERROR,
         "fixed_seq_len/qwen3.5_fp8_h100.sh", 8);
  expect(&f, "CUDA_GRAPH_MAX_BS_LT_CONC", "qwen3.5-fp8-h200-sglang-mtp", RECIPE_SEV_ERROR,
         "fixed_seq_len/qwen3.5_fp8_h200_mtp.sh", 11);
  expect(&f, "CUDA_GRAPH_MAX_BS_LT_CONC", "qwen3.5-fp8-b200-sglang", RECIPE_SEV_ERROR,
         "fixed_seq_len/qwen3.5_fp8_b200_sglang.sh", 6);
  expect(&f, "MAX_NUM_SEQS_LT_CONC", "qwen3.5-fp8-b200-vllm", RECIPE_SEV_ERROR,
         "fixed_seq_len/qwen3.5_fp8_b200_vllm.sh", 5);
  expect(&f, "SCRIPT_SYNTAX", "", RECIPE_SEV_ERROR, "fixed_seq_len/kimik3_fp8_h200.sh", 4);
  expect(&f, "VLLM_EP_CONDITIONAL", "qwen3.5-fp8-b200-vllm", RECIPE_SEV_WARNING,
         "fixed_seq_len/qwen3.5_fp8_b200_vllm.sh", 6);
  expect(&f, "PUBLIC_IMAGE", "glm5.2-fp8-h200-sglang", RECIPE_SEV_ERROR, nv, 33);
  expect(&f, "UPSTREAM_IMAGE", "qwen3.5-fp8-b200-vllm", RECIPE_SEV_ERROR, nv, 113);
  ck_assert_uint_eq(count_rule(&f, "UPSTREAM_IMAGE"), 1); /* digest/-rocm/tag forms pass */
  expect(&f, "SCHEMA", "dsr1-fp8-mi355x-sglang", RECIPE_SEV_ERROR, "configs/amd-master.yaml", 11);
  expect(&f, "SCHEMA", "dsr1-fp4-mi355x-sglang", RECIPE_SEV_ERROR, "configs/amd-master.yaml", 29);
  expect(&f, "SCHEMA", "dsr1-fp8-mi300x-sglang", RECIPE_SEV_ERROR, "configs/amd-master.yaml", 44);
  expect(&f, "SCHEMA", "dsr1-fp8-mi325x-sglang-mtp", RECIPE_SEV_ERROR, "configs/amd-master.yaml",
         59);
  /* the MTP twin of the dp-attention sweep per rank passes: 128/8 and 256/8 <= 32 */
  ck_assert_uint_eq(count_rule(&f, "CUDA_GRAPH_MAX_BS_LT_CONC"), 2);
  ck_assert_uint_eq(recipe_findings_errors(&f),
                    f.n - count_rule(&f, "SGLANG_SPEC_V2") - count_rule(&f, "VLLM_EP_CONDITIONAL"));
  /* sorted by file, then line */
  for (size_t i = 1; i < f.n; i++) {
    int c = strcmp(f.items[i - 1].file, f.items[i].file);
    ck_assert(c < 0 || (c == 0 && f.items[i - 1].line <= f.items[i].line));
  }
  recipe_findings_fini(&f);
  recipe_set_free(set);
}
END_TEST

START_TEST(rules_apply_to_servetop_recipes) {
  struct recipe_set *set = recipe_set_new();
  struct st_err err;
  size_t len;
  char *data = file_read_all(TEST_DATA_DIR "/recipe/native-bad/lint.yaml", &len, &err);
  ck_assert_ptr_nonnull(data);
  recipe_set_add_yaml_buffer(set, "lint.yaml", data, len);
  free(data);
  ck_assert_uint_eq(recipe_set_diag_count(set), 0);
  struct recipe_findings f;
  recipe_lint(set, &f);
  expect(&f, "MTP_CHAT_TEMPLATE", "mtp-no-chat-template", RECIPE_SEV_ERROR, "lint.yaml", 20);
  expect(&f, "SGLANG_SPEC_V2", "mtp-no-chat-template", RECIPE_SEV_WARNING, "lint.yaml", 17);
  expect(&f, "STP_SCRIPT_HAS_SPEC", "off-with-spec-flags", RECIPE_SEV_ERROR, "lint.yaml", 36);
  expect(&f, "MTP_SCRIPT_NO_SPEC_FLAGS", "mtp-without-flags", RECIPE_SEV_ERROR, "lint.yaml", 47);
  expect(&f, "MAX_NUM_SEQS_LT_CONC", "small-batch", RECIPE_SEV_ERROR, "lint.yaml", 65);
  ck_assert_uint_eq(f.n, 5);
  recipe_findings_fini(&f);
  recipe_set_free(set);
}
END_TEST

/* The legacy layout: .github/configs, seq-len-configs, flat runners.yaml. */
START_TEST(legacy_checkout_layout) {
  struct recipe_set *set = load_ix("ix-legacy");
  ck_assert_uint_eq(recipe_set_diag_count(set), 0);
  const struct recipe *r = recipe_set_find(set, "dsr1-fp8-h200-sglang");
  ck_assert_ptr_nonnull(r);
  ck_assert_int_eq(r->isl, 1024);
  ck_assert_str_eq(r->script_path, "benchmarks/dsr1_fp8_h200_docker.sh");
  struct recipe_findings f;
  recipe_lint(set, &f);
  ck_assert_uint_eq(f.n, 0);
  recipe_findings_fini(&f);
  recipe_set_free(set);
}
END_TEST

int main(void) {
  Suite *s = suite_create("recipe_lint");
  TCase *tc = tcase_create("lint");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, clean_checkout_has_no_findings);
  tcase_add_test(tc, bundled_recipes_have_no_findings);
  tcase_add_test(tc, routes_follow_each_launcher_family);
  tcase_add_test(tc, every_rule_fires_on_the_bad_checkout);
  tcase_add_test(tc, rules_apply_to_servetop_recipes);
  tcase_add_test(tc, legacy_checkout_layout);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
