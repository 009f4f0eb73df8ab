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

/* The finding of rule at file_suffix:line (any recipe); NULL when none. */
static const struct recipe_finding *find_at(const struct recipe_findings *f, const char *rule,
                                            const char *file_suffix, int line) {
  for (size_t i = 0; i < f->n; i++)
    if (strcmp(f->items[i].rule, rule) == 0 && str_ends_with(f->items[i].file, file_suffix) &&
        f->items[i].line == line)
      return &f->items[i];
  return NULL;
}

/* Finding x names file_suffix:line as a further location. */
static void expect_related(const struct recipe_finding *x, const char *file_suffix, int line) {
  for (size_t i = 0; i < x->n_related; i++)
    if (str_ends_with(x->related[i].file, file_suffix) && x->related[i].line == line) {
      ck_assert(x->related[i].what[0] != '\0');
      return;
    }
  ck_abort_msg("%s %s:%d: no related location %s:%d", x->rule, x->file, x->line, file_suffix,
               line);
}

/* The finding of rule+recipe at file_suffix:line, which must exist. */
static const struct recipe_finding *expect_at(const struct recipe_findings *f, const char *rule,
                                              const char *recipe, enum recipe_severity sev,
                                              const char *file_suffix, int line) {
  const struct recipe_finding *x = find_at(f, rule, file_suffix, line);
  ck_assert_msg(x, "no %s at %s:%d", rule, file_suffix, line);
  ck_assert_msg(strcmp(x->recipe, recipe) == 0, "%s at %s:%d: recipe %s, want %s", rule,
                file_suffix, line, x->recipe, recipe);
  ck_assert_msg(x->severity == sev, "%s: severity %s", rule, recipe_severity_name(x->severity));
  return x;
}

static const char *const nv = "configs/nvidia-master.yaml";
static const char *const amd = "configs/amd-master.yaml";

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

/* No errors or warnings. The one note allowed: SGLANG_ENABLE_SPEC_V2=1 in the
 * bundled SGLang MTP recipe is dead on its v0.5.14 image (SGLang PR #27964),
 * but servetop sim, which stands in for SGLang, still reads it. */
START_TEST(bundled_recipes_have_no_findings) {
  struct recipe_set *set = load_configs(PROJECT_DIR "/configs");
  struct recipe_findings f;
  recipe_lint(set, &f);
  for (size_t i = 0; i < f.n; i++)
    if (f.items[i].severity != RECIPE_SEV_NOTE || strcmp(f.items[i].rule, "SGLANG_SPEC_V2") != 0 ||
        !strstr(f.items[i].message, "no longer reads it"))
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
  /* the line to change: the runner: value, the runners.yaml runner, the
   * launcher line; the entry comes as a further location */
  expect(&f, "RUNNER_LABEL_UNKNOWN", "dsv4-fp8-h200-sglang", RECIPE_SEV_ERROR, nv, 8);
  expect(&f, "NO_LAUNCHER", "qwen3.5-fp4-b300-sglang", RECIPE_SEV_ERROR, "configs/runners.yaml",
         10);
  expect_related(find_at(&f, "NO_LAUNCHER", "configs/runners.yaml", 10), nv, 21);
  expect(&f, "ROUTE_MISSING", "glm5.2-fp8-h200-sglang", RECIPE_SEV_ERROR, nv, 33);
  expect_related(find_at(&f, "ROUTE_MISSING", nv, 33), "runners/launch_h200-cw.sh", 15);
  expect(&f, "MTP_NOT_ROUTED", "qwen3.5-fp8-h100-sglang-mtp", RECIPE_SEV_ERROR,
         "runners/launch_h100-cw.sh", 8);
  expect_related(find_at(&f, "MTP_NOT_ROUTED", "runners/launch_h100-cw.sh", 8), nv, 66);
  /* the non-MTP script it reaches has no spec flags: the same defect */
  ck_assert_ptr_null(find_at(&f, "MTP_SCRIPT_NO_SPEC_FLAGS", "fixed_seq_len/qwen3.5_fp8_h100.sh", 8));
  expect(&f, "MTP_SCRIPT_NO_SPEC_FLAGS", "qwen3.5-fp8-b200-sglang-mtp", RECIPE_SEV_ERROR,
         "fixed_seq_len/qwen3.5_fp8_b200_sglang_mtp.sh", 5);
  expect(&f, "ROUTE_SCENARIO_MISMATCH", "qwen3.5-fp8-h200-sglang-agentic-mtp", RECIPE_SEV_ERROR,
         "runners/launch_h200-nb.sh", 7);
  expect(&f, "STP_SCRIPT_HAS_SPEC", "qwen3.5-fp8-h200-sglang", RECIPE_SEV_ERROR,
         "fixed_seq_len/qwen3.5_fp8_h200.sh", 5);
  expect(&f, "MTP_CHAT_TEMPLATE", "qwen3.5-fp8-h200-sglang-mtp", RECIPE_SEV_ERROR,
         "fixed_seq_len/qwen3.5_fp8_h200_mtp.sh", 16);
  /* the agentic entry that reaches this fixed-seq-len script is judged by
   * ROUTE_SCENARIO_MISMATCH alone, not against the script's flags */
  /* on its v0.5.10.post1 image (V2 not yet the default) the missing prefix
   * is a warning, placed on the launch command's first line where the
   * prefix goes, not at --speculative-algorithm two lines below */
  const struct recipe_finding *v2 =
      find_at(&f, "SGLANG_SPEC_V2", "fixed_seq_len/qwen3.5_fp8_h200_mtp.sh", 10);
  ck_assert_ptr_nonnull(v2);
  /* and a note on the non-MTP script's dead SGLANG_ENABLE_SPEC_V2=1 (v0.5.14) */
  ck_assert_uint_eq(count_rule(&f, "SGLANG_SPEC_V2"), 2);
  expect(&f, "SGLANG_SPEC_V2", "qwen3.5-fp8-h200-sglang", RECIPE_SEV_NOTE,
         "fixed_seq_len/qwen3.5_fp8_h200.sh", 6);
  ck_assert_str_eq(v2->recipe, "qwen3.5-fp8-h200-sglang-mtp");
  ck_assert(v2->severity == RECIPE_SEV_WARNING);
  ck_assert_ptr_nonnull(strstr(v2->message, "v0.5.10.post1"));
  expect_related(v2, nv, 98);
  /* --max-running-requests $MAX_RUNNING_REQUESTS: the value is set at line 5,
   * where the edit goes; the flag's use is a related place */
  expect(&f, "MAX_RUNNING_REQUESTS_LT_CONC", "qwen3.5-fp8-h100-sglang", RECIPE_SEV_ERROR,
         "fixed_seq_len/qwen3.5_fp8_h100.sh", 5);
  expect_related(find_at(&f, "MAX_RUNNING_REQUESTS_LT_CONC", "fixed_seq_len/qwen3.5_fp8_h100.sh", 5),
                 "fixed_seq_len/qwen3.5_fp8_h100.sh", 8);
  /* --cuda-graph-max-bs "$GRAPH_BS": set to 64 in the case arm conc 128
   * takes (line 6), not the default arm (line 7) */
  expect(&f, "CUDA_GRAPH_MAX_BS_LT_CONC", "qwen3.5-fp8-h200-sglang-mtp", RECIPE_SEV_ERROR,
         "fixed_seq_len/qwen3.5_fp8_h200_mtp.sh", 6);
  expect_related(find_at(&f, "CUDA_GRAPH_MAX_BS_LT_CONC", "fixed_seq_len/qwen3.5_fp8_h200_mtp.sh", 6),
                 "fixed_seq_len/qwen3.5_fp8_h200_mtp.sh", 11);
  expect(&f, "CUDA_GRAPH_MAX_BS_LT_CONC", "qwen3.5-fp8-b200-sglang", RECIPE_SEV_ERROR,
         "fixed_seq_len/qwen3.5_fp8_b200_sglang.sh", 6);
  expect(&f, "MAX_NUM_SEQS_LT_CONC", "qwen3.5-fp8-b200-vllm", RECIPE_SEV_ERROR,
         "fixed_seq_len/qwen3.5_fp8_b200_vllm.sh", 5);
  expect(&f, "SCRIPT_SYNTAX", "", RECIPE_SEV_ERROR, "fixed_seq_len/kimik3_fp8_h200.sh", 3);
  expect_related(find_at(&f, "MAX_RUNNING_REQUESTS_LT_CONC", "fixed_seq_len/qwen3.5_fp8_h100.sh", 5),
                 nv, 62); /* the search-space row whose conc is too high */
  expect(&f, "VLLM_EP_CONDITIONAL", "qwen3.5-fp8-b200-vllm", RECIPE_SEV_WARNING,
         "fixed_seq_len/qwen3.5_fp8_b200_vllm.sh", 6);
  expect(&f, "PUBLIC_IMAGE", "glm5.2-fp8-h200-sglang", RECIPE_SEV_ERROR, nv, 33);
  expect(&f, "UPSTREAM_IMAGE", "qwen3.5-fp8-b200-vllm", RECIPE_SEV_ERROR, nv, 114);
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
  /* no image: the version is unknown, so a note that says so, on the server
   * block where the environment goes */
  expect(&f, "SGLANG_SPEC_V2", "mtp-no-chat-template", RECIPE_SEV_NOTE, "lint.yaml", 12);
  ck_assert_ptr_nonnull(
      strstr(find_at(&f, "SGLANG_SPEC_V2", "lint.yaml", 12)->message, "version unknown (no image)"));
  expect(&f, "STP_SCRIPT_HAS_SPEC", "off-with-spec-flags", RECIPE_SEV_ERROR, "lint.yaml", 36);
  expect(&f, "MTP_SCRIPT_NO_SPEC_FLAGS", "mtp-without-flags", RECIPE_SEV_ERROR, "lint.yaml", 47);
  expect(&f, "MAX_NUM_SEQS_LT_CONC", "small-batch", RECIPE_SEV_ERROR, "lint.yaml", 65);
  ck_assert_uint_eq(f.n, 5);
  recipe_findings_fini(&f);
  recipe_set_free(set);
}
END_TEST

/* SGLANG_SPEC_V2 follows the image's SGLang version: a warning where V2 was
 * not yet the default, nothing where it was and the variable still read, a
 * note that the variable is dead where it was retired, a note naming the
 * range where the version is unknown. */
static const char *spec_v2_recipe(char *buf, size_t n, const char *name, const char *image,
                                  bool env_v2) {
  snprintf(buf, n,
           "%s:\n"
           "  image: %s\n"
           "  model: Qwen/Qwen3.5-397B-A17B-FP8\n"
           "  model-prefix: qwen3.5\n"
           "  runner: h200\n"
           "  precision: fp8\n"
           "  framework: sglang\n"
           "  scenarios:\n"
           "    fixed-seq-len:\n"
           "    - { isl: 1024, osl: 1024, search-space: [ { tp: 8, conc-list: [4], "
           "spec-decoding: mtp } ] }\n"
           "  server:\n"
           "    engine: sglang\n"
           "%s"
           "    argv:\n"
           "      - --model-path $MODEL --tp $TP\n"
           "      - --speculative-algorithm EAGLE --speculative-eagle-topk 1\n"
           "  benchmark:\n"
           "    use-chat-template: true\n",
           name, image, env_v2 ? "    env:\n      SGLANG_ENABLE_SPEC_V2: \"1\"\n" : "");
  return buf;
}

START_TEST(spec_v2_follows_the_image_version) {
  static const struct {
    const char *image;
    bool env_v2;
    int want; /* -1: none, else the severity */
    const char *says;
  } cases[] = {
      {"lmsysorg/sglang:v0.5.9-cu129-amd64", false, RECIPE_SEV_WARNING, "v0.5.9"},
      {"lmsysorg/sglang:v0.5.10.post1", false, RECIPE_SEV_WARNING, "v0.5.10.post1"},
      {"lmsysorg/sglang:nightly-dev-20260402", false, RECIPE_SEV_WARNING, "nightly of 2026-04-02"},
      {"lmsysorg/sglang:v0.5.10.post1", true, -1, NULL},
      {"lmsysorg/sglang:v0.5.12-cu130", false, -1, NULL},
      {"lmsysorg/sglang:v0.5.12-rocm700-mi35x", true, -1, NULL},
      {"lmsysorg/sglang:nightly-dev-cu13-20260605-7dc73766", false, -1, NULL},
      {"lmsysorg/sglang:v0.5.14-cu130", false, -1, NULL},
      {"lmsysorg/sglang:v0.5.14-cu130", true, RECIPE_SEV_NOTE, "no longer reads it"},
      {"lmsysorg/sglang:nightly-dev-cu13-20260815-a5ba081f", true, RECIPE_SEV_NOTE, "#27964"},
      {"lmsysorg/sglang:latest", false, RECIPE_SEV_NOTE, "version unknown"},
      {"lmsysorg/sglang:latest", true, -1, NULL},
  };
  for (size_t i = 0; i < ST_ARRAY_LEN(cases); i++) {
    char buf[2048];
    struct recipe_set *set = recipe_set_new();
    spec_v2_recipe(buf, sizeof buf, "case", cases[i].image, cases[i].env_v2);
    recipe_set_add_yaml_buffer(set, "v2.yaml", buf, strlen(buf));
    ck_assert_uint_eq(recipe_set_diag_count(set), 0);
    struct recipe_findings f;
    recipe_lint(set, &f);
    const struct recipe_finding *x = NULL;
    for (size_t k = 0; k < f.n; k++)
      if (strcmp(f.items[k].rule, "SGLANG_SPEC_V2") == 0)
        x = &f.items[k];
    ck_assert_uint_eq(count_rule(&f, "SGLANG_SPEC_V2"), cases[i].want < 0 ? 0 : 1);
    if (cases[i].want >= 0) {
      ck_assert_msg((int)x->severity == cases[i].want, "%s: %s", cases[i].image,
                    recipe_severity_name(x->severity));
      ck_assert_msg(strstr(x->message, cases[i].says), "%s: %s", cases[i].image, x->message);
      ck_assert_uint_eq(x->line, 11); /* the server block: where the environment goes */
    }
    ck_assert_uint_eq(f.n, count_rule(&f, "SGLANG_SPEC_V2")); /* nothing else */
    recipe_findings_fini(&f);
    recipe_set_free(set);
  }
}
END_TEST

/* Twins by entry name (x / x-mtp) where the model names differ by a suffix
 * (amd/DeepSeek-R1-0528-MXFP4 vs ...-MXFP4-Preview): the sibling memory rule
 * compares them. */
START_TEST(twins_by_entry_name) {
  static const char yaml[] =
      "dsr1-fp4-h200-sglang:\n"
      "  model: amd/DeepSeek-R1-0528-MXFP4-Preview\n"
      "  model-prefix: dsr1\n"
      "  runner: h200\n"
      "  precision: fp4\n"
      "  framework: sglang\n"
      "  scenarios:\n"
      "    fixed-seq-len:\n"
      "    - { isl: 1024, osl: 1024, search-space: [ { tp: 8, conc-list: [4] } ] }\n"
      "  server:\n"
      "    engine: sglang\n"
      "    argv:\n"
      "      - --model-path $MODEL --tp $TP\n"
      "      - --mem-fraction-static 0.8\n"
      "dsr1-fp4-h200-sglang-mtp:\n"
      "  model: amd/DeepSeek-R1-0528-MXFP4\n"
      "  model-prefix: dsr1\n"
      "  runner: h200\n"
      "  precision: fp4\n"
      "  framework: sglang\n"
      "  scenarios:\n"
      "    fixed-seq-len:\n"
      "    - { isl: 1024, osl: 1024, search-space: [ { tp: 8, conc-list: [4], spec-decoding: mtp } ] }\n"
      "  server:\n"
      "    engine: sglang\n"
      "    env:\n"
      "      SGLANG_ENABLE_SPEC_V2: \"1\"\n"
      "    argv:\n"
      "      - --model-path $MODEL --tp $TP\n"
      "      - --mem-fraction-static 0.9\n"
      "      - --speculative-algorithm EAGLE --speculative-eagle-topk 1\n"
      "  benchmark:\n"
      "    use-chat-template: true\n";
  struct recipe_set *set = recipe_set_new();
  recipe_set_add_yaml_buffer(set, "twins.yaml", yaml, strlen(yaml));
  ck_assert_uint_eq(recipe_set_diag_count(set), 0);
  struct recipe_findings f;
  recipe_lint(set, &f);
  expect(&f, "MTP_MEMFRAC_ABOVE_SIBLING", "dsr1-fp4-h200-sglang-mtp", RECIPE_SEV_WARNING,
         "twins.yaml", 30);
  expect_related(find_at(&f, "MTP_MEMFRAC_ABOVE_SIBLING", "twins.yaml", 30), "twins.yaml", 14);
  ck_assert_uint_eq(f.n, 1);
  recipe_findings_fini(&f);
  recipe_set_free(set);
}
END_TEST

/* issue 22.6: loader and interpreter variables in a recipe's environment are
 * shown before launch (a note, as the issue asks: said, never refused); others are not. */
START_TEST(loader_env_is_a_finding) {
  static const char yaml[] =
      "trusted:\n"
      "  model: m/M\n  model-prefix: m\n  runner: h200\n  precision: bf16\n"
      "  framework: sglang\n  multinode: false\n"
      "  scenarios:\n    fixed-seq-len:\n    - isl: 8\n      osl: 8\n"
      "      search-space:\n      - { tp: 1, conc-list: [ 1 ] }\n"
      "  server:\n    engine: sglang\n    env:\n      PYTHONNOUSERSITE: \"1\"\n"
      "    argv:\n      - --model-path $MODEL\n"
      "hostile:\n"
      "  model: m/M\n  model-prefix: m\n  runner: h200\n  precision: bf16\n"
      "  framework: sglang\n  multinode: false\n"
      "  scenarios:\n    fixed-seq-len:\n    - isl: 8\n      osl: 8\n"
      "      search-space:\n      - { tp: 1, conc-list: [ 1 ] }\n"
      "  server:\n    engine: sglang\n    env:\n      LD_PRELOAD: /tmp/x.so\n"
      "      PYTHONSTARTUP: /tmp/x.py\n"
      "    argv:\n      - --model-path $MODEL\n";
  struct recipe_set *set = recipe_set_new();
  recipe_set_add_yaml_buffer(set, "trust.yaml", yaml, strlen(yaml));
  ck_assert_uint_eq(recipe_set_diag_count(set), 0);
  struct recipe_findings f;
  recipe_lint(set, &f);
  size_t n = 0;
  for (size_t i = 0; i < f.n; i++)
    if (strcmp(f.items[i].rule, "LOADER_ENV") == 0) {
      n++;
      ck_assert_str_eq(f.items[i].recipe, "hostile");
      ck_assert_int_eq(f.items[i].severity, RECIPE_SEV_NOTE);
      ck_assert_ptr_nonnull(strstr(f.items[i].message, "LD_PRELOAD, PYTHONSTARTUP"));
    }
  ck_assert_uint_eq(n, 1);
  recipe_findings_fini(&f);
  ck_assert(recipe_env_is_loader("LD_LIBRARY_PATH=/x"));
  ck_assert(recipe_env_is_loader("BASH_ENV"));
  ck_assert(!recipe_env_is_loader("PYTHONNOUSERSITE=1"));
  ck_assert(!recipe_env_is_loader("LD_PRELOADX=1"));
  recipe_set_free(set);
}
END_TEST

/* A vLLM flag by the image's version: --disable-log-requests is a note where
 * it is deprecated and a warning where vLLM no longer has it, at the flag. */
START_TEST(vllm_flag_by_image_version) {
  static const struct {
    const char *image;
    int want;
  } cases[] = {
      {"vllm/vllm-openai:v0.10.1", -1},
      {"vllm/vllm-openai:v0.16.0", RECIPE_SEV_NOTE},
      {"vllm/vllm-openai:v0.17.0", RECIPE_SEV_WARNING},
  };
  for (size_t i = 0; i < ST_ARRAY_LEN(cases); i++) {
    char buf[1024];
    snprintf(buf, sizeof buf,
             "off:\n"
             "  image: %s\n"
             "  model: Qwen/Qwen3.5-397B-A17B-FP8\n"
             "  model-prefix: qwen3.5\n"
             "  runner: h200\n"
             "  precision: fp8\n"
             "  framework: vllm\n"
             "  scenarios:\n"
             "    fixed-seq-len:\n"
             "    - { isl: 1024, osl: 1024, search-space: [ { tp: 8, conc-list: [4] } ] }\n"
             "  server:\n"
             "    engine: vllm\n"
             "    argv:\n"
             "      - $MODEL\n"
             "      - --tensor-parallel-size $TP\n"
             "      - --disable-log-requests\n",
             cases[i].image);
    struct recipe_set *set = recipe_set_new();
    recipe_set_add_yaml_buffer(set, "vllm.yaml", buf, strlen(buf));
    ck_assert_uint_eq(recipe_set_diag_count(set), 0);
    struct recipe_findings f;
    recipe_lint(set, &f);
    ck_assert_uint_eq(f.n, cases[i].want < 0 ? 0 : 1);
    if (cases[i].want >= 0)
      expect(&f, "ENGINE_FLAG_RETIRED", "off", (enum recipe_severity)cases[i].want, "vllm.yaml",
             16);
    recipe_findings_fini(&f);
    recipe_set_free(set);
  }
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
  /* the flat file let an entry name one runner instead of a label */
  const struct recipe *g = recipe_set_find(set, "gptoss-fp4-h200-vllm");
  ck_assert_uint_eq(g->n_routes, 1);
  ck_assert_str_eq(g->routes[0].runner, "h200-nv_1");
  ck_assert_str_eq(g->script_path, "benchmarks/gptoss_fp4_h200_docker.sh");
  struct recipe_findings f;
  recipe_lint(set, &f);
  ck_assert_uint_eq(f.n, 0);
  recipe_findings_fini(&f);
  recipe_set_free(set);
}
END_TEST

/* The first recipe whose name starts with prefix ("entry:agentic@" names
 * carry a line). */
static const struct recipe *find_prefix(const struct recipe_set *set, const char *prefix) {
  for (size_t i = 0; i < recipe_set_count(set); i++)
    if (str_starts_with(recipe_set_at(set, i)->name, prefix))
      return recipe_set_at(set, i);
  return NULL;
}

static const char *route_of(const struct recipe *r, const char *family) {
  for (size_t i = 0; i < r->n_routes; i++)
    if (strcmp(r->routes[i].family, family) == 0)
      return r->routes[i].script;
  return NULL;
}

/* Today's checkout shape: launchers that build their paths in steps, fall
 * back when a name is missing, stop when none is there, run the script in
 * `bash -c` or in a container with an explicit variable list. */
START_TEST(launchers_resolve_as_they_run) {
  struct recipe_set *set = load_ix("ix-head");
  const char *fx = "benchmarks/single_node/fixed_seq_len/";
  /* BENCH_BASE + BENCH_SCRIPT, the tagged name found */
  const struct recipe *r = recipe_set_find(set, "qwen3.5-fp8-b300-sglang");
  ck_assert_uint_eq(r->n_routes, 1); /* b300-nv_01 and _02: one family */
  char *want = xasprintf("%sqwen3.5_fp8_b300_sglang.sh", fx);
  ck_assert_str_eq(r->routes[0].script, want);
  free(want);
  ck_assert(r->routes[0].exists);
  ck_assert_int_eq(r->routes[0].launcher_line, 13); /* BENCH_SCRIPT=..._${FRAMEWORK}... */
  ck_assert_int_eq(r->routes[0].run_line, 36);      /* srun ... bash "$BENCH_SCRIPT" */
  /* the tagged MTP name is missing: the [[ ! -f ]] branch builds the legacy
   * one, through a subshell whose `|| { ...; exit 1; }` must not end it */
  r = recipe_set_find(set, "qwen3.5-fp8-b300-sglang-mtp");
  want = xasprintf("%sqwen3.5_fp8_b300_mtp.sh", fx);
  ck_assert_str_eq(r->routes[0].script, want);
  free(want);
  ck_assert_int_eq(r->routes[0].launcher_line, 16);
  ck_assert_uint_eq(r->routes[0].n_tried, 1); /* the tagged name it tested first */
  ck_assert_str_eq(r->routes[0].tried[0], "benchmarks/single_node/fixed_seq_len/"
                                          "qwen3.5_fp8_b300_sglang_mtp.sh");
  r = recipe_set_find(set, "dsr1-fp4-b300-trt"); /* legacy _trt */
  ck_assert(r->routes[0].exists);
  ck_assert(str_ends_with(r->routes[0].script, "/dsr1_fp4_b300_trt.sh"));
  /* [ -f ] ... elif [ -f ] ... : the second name */
  r = recipe_set_find(set, "qwen3.5-fp4-rtx6000pro-sglang");
  ck_assert(str_ends_with(route_of(r, "rtx6000pro-lat"), "/qwen3.5_fp4_rtx6000pro_sglang.sh"));
  /* `bash -c "bash benchmarks/...sh; rm ..."` */
  r = recipe_set_find(set, "dsv4-fp8-h200-sglang");
  ck_assert(str_ends_with(route_of(r, "h200-cw"), "/dsv4_fp8_h200.sh"));
  /* ${SCENARIO_SUBDIR:-fixed_seq_len/} with the workflow's agentic/ */
  r = find_prefix(set, "qwen3.5-fp8-mi355x-sglang-agentic-mtp:");
  ck_assert_ptr_nonnull(r);
  ck_assert_str_eq(r->script_path, "benchmarks/single_node/agentic/qwen3.5_fp8_mi355x_sglang_mtp.sh");
  /* both scenario types in one entry */
  ck_assert_ptr_nonnull(recipe_set_find(set, "glm5.2-fp4-mi355x-sglang:8192_1024"));
  const struct recipe *ag = find_prefix(set, "glm5.2-fp4-mi355x-sglang:agentic");
  ck_assert_ptr_nonnull(ag);
  ck_assert_str_eq(ag->script_path, "benchmarks/single_node/agentic/glm5.2_fp4_mi355x_sglang.sh");
  recipe_set_free(set);
}
END_TEST

/* Each finding points at the line to change and names the entry. */
START_TEST(findings_point_at_the_line_to_change) {
  struct recipe_set *set = load_ix("ix-head");
  struct recipe_findings f;
  recipe_lint(set, &f);
  const struct recipe_finding *x;
  /* a script the launchers do not look for: the file is what moves */
  x = expect_at(&f, "ROUTE_MISSING", "dsv4-fp4-mi355x-vllm-mtp", RECIPE_SEV_ERROR,
                "benchmarks/single_node/dsv4_fp4_mi355x_vllm_mtp.sh", 1);
  expect_related(x, "runners/launch_mi355x-amds.sh", 8);
  expect_related(x, amd, 52);
  ck_assert(strstr(x->message, "entry dsv4-fp4-mi355x-vllm-mtp"));
  /* the tagged script exists, the legacy-only launcher builds another name */
  x = expect_at(&f, "ROUTE_MISSING", "kimik3-fp8-h200-sglang", RECIPE_SEV_ERROR,
                "runners/launch_h200-cw.sh", 7);
  ck_assert(strstr(x->message, "kimik3_fp8_h200_sglang.sh"));
  expect_related(x, nv, 88);
  /* the other spec-decoding's script exists and so does its entry (the
   * -mtp twin): this entry lost its script. Restore it or remove the entry,
   * at the entry; never "say spec-decoding: mtp", which would run the MTP
   * script under the non-MTP name (InferenceX #2601 after #2561) */
  x = expect_at(&f, "ROUTE_MISSING", "qwen3.5-fp8-mi355x-sglang-agentic", RECIPE_SEV_ERROR, amd,
                69);
  ck_assert(strstr(x->message, "restore benchmarks/single_node/agentic/qwen3.5_fp8_mi355x.sh"));
  ck_assert(strstr(x->message, "remove this entry"));
  ck_assert(!strstr(x->message, "should say"));
  expect_related(x, amd, 85); /* the twin entry */
  expect_related(x, "runners/launch_mi355x-amds.sh", 8);
  expect_related(x, "runners/launch_mi355x-amds.sh", 9); /* the tagged name it tried */
  /* nothing fits: the entry asks for a script that is not there */
  x = expect_at(&f, "ROUTE_MISSING", "glm5.2-fp8-rtx6000pro-sglang", RECIPE_SEV_ERROR, nv, 55);
  expect_related(x, "runners/launch_rtx6000pro-lat.sh", 10);
  /* the untagged h200 script is vLLM's */
  x = expect_at(&f, "ROUTE_ENGINE_MISMATCH", "dsv4-fp8-h200-sglang", RECIPE_SEV_ERROR,
                "runners/launch_h200-cw.sh", 7);
  expect_related(x, "fixed_seq_len/dsv4_fp8_h200.sh", 9);
  expect_related(x, nv, 104);
  /* docker -e list without EP_SIZE: the launch line */
  x = expect_at(&f, "ENV_NOT_PASSED", "minimaxm3-fp8-h100-vllm", RECIPE_SEV_ERROR,
                "runners/launch_h100-tw.sh", 5);
  ck_assert(strstr(x->message, "EP_SIZE"));
  expect_related(x, "fixed_seq_len/minimaxm3_fp8_h100.sh", 4);
  /* sibling rules name both files and lines */
  x = expect_at(&f, "MTP_MEMFRAC_ABOVE_SIBLING", "qwen3.5-fp8-b300-sglang-mtp", RECIPE_SEV_WARNING,
                "fixed_seq_len/qwen3.5_fp8_b300_mtp.sh", 10);
  expect_related(x, "fixed_seq_len/qwen3.5_fp8_b300_sglang.sh", 10);
  x = find_at(&f, "MTP_MEMFRAC_ABOVE_SIBLING", "agentic/qwen3.5_fp8_mi355x_sglang_mtp.sh", 10);
  ck_assert_ptr_nonnull(x);
  ck_assert(str_starts_with(x->recipe, "qwen3.5-fp8-mi355x-sglang-agentic-mtp:agentic@"));
  ck_assert_uint_eq(count_rule(&f, "MTP_MEMFRAC_ABOVE_SIBLING"), 3); /* one per script */
  expect_related(x, "fixed_seq_len/qwen3.5_fp8_mi355x_sglang_mtp.sh", 11);
  /* twins by script sibling (dsr1_fp4_mi355x.sh / _mtp.sh) where the model
   * names differ by a suffix and the entry names do not pair; the value comes
   * from MEM_FRACTION=0.9, where the finding goes, the flag's use related */
  x = expect_at(&f, "MTP_MEMFRAC_ABOVE_SIBLING", "dsr1-mxfp4-mi355x-sglang-mtp", RECIPE_SEV_WARNING,
                "fixed_seq_len/dsr1_fp4_mi355x_mtp.sh", 6);
  expect_related(x, "fixed_seq_len/dsr1_fp4_mi355x_mtp.sh", 11);
  expect_related(x, "fixed_seq_len/dsr1_fp4_mi355x.sh", 9);
  x = expect_at(&f, "EVAL_CONC_UNCAPPED", "qwen3.5-fp8-b300-sglang-mtp", RECIPE_SEV_WARNING,
                "fixed_seq_len/qwen3.5_fp8_b300_mtp.sh", 24);
  expect_related(x, "fixed_seq_len/qwen3.5_fp8_mi355x_sglang_mtp.sh", 6);
  /* a schema error names its entry in full (no cut at the first '.') */
  expect_at(&f, "SCHEMA", "qwen3.5-fp4-mi355x-sglang", RECIPE_SEV_ERROR, amd, 132);
  /* and nothing else: the clean entries stay clean (array spec flags of the
   * ATOM script, the fallbacks, both scenario types in one entry) */
  /* SGLANG_ENABLE_SPEC_V2=1 on v0.5.14 images: dead since SGLang PR #27964,
   * a note each where it is set */
  expect_at(&f, "SGLANG_SPEC_V2", "qwen3.5-fp8-b300-sglang-mtp", RECIPE_SEV_NOTE,
            "fixed_seq_len/qwen3.5_fp8_b300_mtp.sh", 6);
  ck_assert_uint_eq(count_rule(&f, "SGLANG_SPEC_V2"), 3);
  ck_assert_uint_eq(f.n, 14);
  recipe_findings_fini(&f);
  struct recipe_counts c;
  recipe_set_counts(set, &c);
  ck_assert_uint_eq(c.files, 2);
  ck_assert_uint_eq(c.files_failed, 0);
  ck_assert_uint_eq(c.entries, 18);
  ck_assert_uint_eq(c.entries_failed, 1);
  recipe_set_free(set);
}
END_TEST

/* Spring 2026: single_node/ without fixed_seq_len/, the workflow's empty
 * SCENARIO_SUBDIR, agentic duration:/offloading:, two scenario types in one
 * entry, a flat runners.yaml. */
START_TEST(history_single_node_era) {
  struct recipe_set *set = load_ix("ix-era-single-node");
  for (size_t i = 0; i < recipe_set_diag_count(set); i++)
    ck_abort_msg("%s:%d: %s", recipe_set_diag_at(set, i)->file, recipe_set_diag_at(set, i)->line,
                 recipe_set_diag_at(set, i)->message);
  const struct recipe *r = recipe_set_find(set, "qwen3.5-fp8-h200-sglang:8192_1024");
  ck_assert_str_eq(r->script_path, "benchmarks/single_node/qwen3.5_fp8_h200.sh");
  const struct recipe *a = find_prefix(set, "qwen3.5-fp8-h200-sglang:agentic");
  ck_assert_ptr_nonnull(a);
  ck_assert_str_eq(a->script_path, "benchmarks/single_node/agentic/qwen3.5_fp8_h200.sh");
  ck_assert_str_eq(a->points[a->n_points - 1].kv_offloading, "cpu"); /* offloading: */
  struct recipe_findings f;
  recipe_lint(set, &f);
  expect_at(&f, "ROUTE_SCENARIO_MISMATCH", f.n ? "dsr1-fp4-b200-sglang:agentic@42" : "",
            RECIPE_SEV_ERROR, "runners/launch_b200-cw.sh", 4);
  expect_at(&f, "MTP_NOT_ROUTED", "qwen3.5-fp8-h100-sglang-mtp", RECIPE_SEV_ERROR,
            "runners/launch_h100-cw.sh", 3);
  ck_assert_uint_eq(f.n, 2);
  recipe_findings_fini(&f);
  recipe_set_free(set);
  /* without a workflow file the folders tell: no fixed_seq_len/, so '' */
  set = load_ix("ix-era-noworkflow");
  r = recipe_set_find(set, "dsr1-fp8-h200-sglang");
  ck_assert_str_eq(r->script_path, "benchmarks/single_node/dsr1_fp8_h200.sh");
  recipe_lint(set, &f);
  ck_assert_uint_eq(f.n, 0);
  recipe_findings_fini(&f);
  recipe_set_free(set);
}
END_TEST

/* A rule a later schema added is no error in a checkout of an earlier one;
 * in a checkout that uses the newer form, the retired form is. */
START_TEST(schema_rules_follow_the_checkout) {
  static const char *const both =
      "a-fp8-h200-sglang:\n  image: x\n  model: m\n  model-prefix: a\n  runner: h200\n"
      "  precision: fp8\n  framework: sglang\n  multinode: false\n  scenarios:\n"
      "    fixed-seq-len:\n    - { isl: 1024, osl: 1024, search-space: [ { tp: 8, conc-list: [4] } ] }\n"
      "    agentic-coding:\n    - duration: 1800\n      search-space:\n"
      "      - { tp: 8, offloading: none, conc-list: [1] }\n";
  struct recipe_set *set = recipe_set_new();
  recipe_set_add_master_buffer(set, "spring.yaml", both, strlen(both));
  ck_assert_uint_eq(recipe_set_diag_count(set), 0);
  ck_assert_uint_eq(recipe_set_count(set), 2);
  recipe_set_free(set);
  /* the same entry next to one that uses kv-offloading (AgentX v1.0) */
  char *mixed = xasprintf("%sb-fp8-h200-sglang:\n  image: x\n  model: m\n  model-prefix: b\n"
                          "  runner: cluster:h200\n  precision: fp8\n  framework: sglang\n"
                          "  multinode: false\n  scenarios:\n    agentic-coding:\n"
                          "    - search-space:\n      - { tp: 8, kv-offloading: none, conc-list: [1] }\n",
                          both);
  set = recipe_set_new();
  recipe_set_add_master_buffer(set, "summer.yaml", mixed, strlen(mixed));
  free(mixed);
  ck_assert_uint_eq(recipe_set_diag_count(set), 2); /* duration and offloading */
  for (size_t i = 0; i < 2; i++) {
    ck_assert_str_eq(recipe_set_diag_at(set, i)->entry, "a-fp8-h200-sglang");
    ck_assert(strstr(recipe_set_diag_at(set, i)->message, "unknown key"));
  }
  recipe_set_free(set);
  /* before multinode: existed, an entry without it is fine */
  static const char *const old =
      "a-fp8-h200-sglang:\n  image: x\n  model: m\n  model-prefix: a\n  runner: h200\n"
      "  precision: fp8\n  framework: sglang\n  seq-len-configs:\n"
      "  - { isl: 1024, osl: 1024, search-space: [ { tp: 8, conc-list: [4] } ] }\n";
  set = recipe_set_new();
  recipe_set_add_master_buffer(set, "old.yaml", old, strlen(old));
  ck_assert_uint_eq(recipe_set_diag_count(set), 0);
  recipe_set_free(set);
}
END_TEST

/* The real checkout (reference section 2.2): 156 routes, one missing, four
 * labels not in runners.yaml, and no other error. */
START_TEST(real_checkout_routes) {
  const char *shared = getenv("SHARED_DIR") ? getenv("SHARED_DIR") : SHARED_DIR;
  char *dir = xasprintf("%s/data/inferencex", shared);
  char *master = path_join_alloc(dir, "configs/nvidia-master.yaml");
  bool have = path_exists(master);
  free(master);
  if (!have) {
    fprintf(stderr, "real_checkout_routes: skipped (%s absent)\n", dir);
    free(dir);
    return;
  }
  struct recipe_set *set = recipe_set_new();
  struct st_err err;
  ck_assert_msg(recipe_set_add_inferencex(set, dir, &err) == 0, "%s", err.msg);
  free(dir);
  for (size_t i = 0; i < recipe_set_diag_count(set); i++)
    ck_abort_msg("%s:%d: %s", recipe_set_diag_at(set, i)->file, recipe_set_diag_at(set, i)->line,
                 recipe_set_diag_at(set, i)->message);
  /* entry x scenario type x spec-decoding x launcher family */
  struct sbuf keys = {0};
  size_t routes = 0, missing = 0;
  for (size_t i = 0; i < recipe_set_count(set); i++) {
    const struct recipe *r = recipe_set_at(set, i);
    for (size_t k = 0; k < r->n_routes; k++) {
      char *key = xasprintf("|%s %d %d %s|", r->entry, r->scenario, r->spec, r->routes[k].family);
      if (!keys.data || !strstr(keys.data, key)) {
        sbuf_puts(&keys, key);
        routes++;
        if (!r->routes[k].exists) {
          missing++;
          ck_assert_str_eq(r->entry, "qwen3.5-fp8-h100-sglang-agentic");
          ck_assert_str_eq(r->routes[k].script, "benchmarks/single_node/agentic/qwen3.5_fp8_h100.sh");
        }
      }
      free(key);
    }
  }
  sbuf_free(&keys);
  ck_assert_uint_eq(routes, 156);
  ck_assert_uint_eq(missing, 1);
  struct recipe_findings f;
  recipe_lint(set, &f);
  ck_assert_uint_eq(count_rule(&f, "RUNNER_LABEL_UNKNOWN"), 4);
  ck_assert_uint_eq(count_rule(&f, "ROUTE_MISSING"), 1);
  for (size_t i = 0; i < f.n; i++) {
    const struct recipe_finding *x = &f.items[i];
    ck_assert_msg(x->severity != RECIPE_SEV_ERROR || strcmp(x->rule, "RUNNER_LABEL_UNKNOWN") == 0 ||
                      strcmp(x->rule, "ROUTE_MISSING") == 0,
                  "unexpected error %s:%d: %s %s", x->file, x->line, x->rule, x->message);
  }
  ck_assert_uint_eq(recipe_findings_errors(&f), 5);
  /* the missing script: the row whose spec-decoding is the wrong one */
  const struct recipe_finding *x = NULL;
  for (size_t i = 0; i < f.n && !x; i++)
    if (strcmp(f.items[i].rule, "ROUTE_MISSING") == 0)
      x = &f.items[i];
  ck_assert_ptr_nonnull(x);
  if (!x)
    return;
  /* InferenceX #2601 re-added the entry after #2561 deleted it and its script;
   * its -mtp twin exists: the script is what is missing (at the entry), never
   * "say spec-decoding: mtp", which would file MTP numbers as non-MTP */
  ck_assert(str_ends_with(x->file, "configs/nvidia-master.yaml"));
  ck_assert(strstr(x->message, "qwen3.5_fp8_h100_mtp.sh"));
  ck_assert(strstr(x->message, "twin qwen3.5-fp8-h100-sglang-agentic-mtp"));
  ck_assert(strstr(x->message, "restore benchmarks/single_node/agentic/qwen3.5_fp8_h100.sh"));
  ck_assert(!strstr(x->message, "should say"));
  /* the warnings that remain are real ones (docs/recipes.md says why each):
   * three sibling memory settings and one uncapped eval; no SGLANG_SPEC_V2
   * warning (the images are v0.5.11 and later, or nightlies of June-August
   * 2026: Spec V2 is SGLang's default), a note where the dead variable is set */
  size_t warnings = 0;
  for (size_t i = 0; i < f.n; i++)
    if (f.items[i].severity == RECIPE_SEV_WARNING) {
      warnings++;
      ck_assert_msg(strcmp(f.items[i].rule, "MTP_MEMFRAC_ABOVE_SIBLING") == 0 ||
                        strcmp(f.items[i].rule, "EVAL_CONC_UNCAPPED") == 0,
                    "warning %s:%d: %s", f.items[i].file, f.items[i].line, f.items[i].rule);
    }
  ck_assert_uint_eq(warnings, 4);
  ck_assert_uint_eq(count_rule(&f, "MTP_MEMFRAC_ABOVE_SIBLING"), 3);
  for (size_t i = 0; i < f.n; i++)
    if (strcmp(f.items[i].rule, "SGLANG_SPEC_V2") == 0)
      ck_assert(f.items[i].severity == RECIPE_SEV_NOTE);
  /* a value from a variable: at MEM_FRAC_STATIC="${MEM_FRAC_STATIC:-0.80}" */
  const struct recipe_finding *mem =
      find_at(&f, "MTP_MEMFRAC_ABOVE_SIBLING", "fixed_seq_len/qwen3.5_fp4_rtx6000pro_sglang_mtp.sh", 53);
  ck_assert_ptr_nonnull(mem);
  expect_related(mem, "fixed_seq_len/qwen3.5_fp4_rtx6000pro_sglang_mtp.sh", 99);
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
  tcase_add_test(tc, spec_v2_follows_the_image_version);
  tcase_add_test(tc, twins_by_entry_name);
  tcase_add_test(tc, vllm_flag_by_image_version);
  tcase_add_test(tc, loader_env_is_a_finding);
  tcase_add_test(tc, legacy_checkout_layout);
  tcase_add_test(tc, launchers_resolve_as_they_run);
  tcase_add_test(tc, findings_point_at_the_line_to_change);
  tcase_add_test(tc, history_single_node_era);
  tcase_add_test(tc, schema_rules_follow_the_checkout);
  tcase_add_test(tc, real_checkout_routes);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
