/* recipe: native loader, sweep expansion, names, twins, server command, knobs,
 * load errors with file:line:column, and the real InferenceX master configs. */
#include "recipe/recipe.h"
#include "util/util.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct recipe_set *load_buffer(const char *name, const char *yaml) {
  struct recipe_set *set = recipe_set_new();
  recipe_set_add_yaml_buffer(set, name, yaml, strlen(yaml));
  return set;
}

/* A format (a macro, so printf-format checking sees a literal). */
#define MINIMAL_FMT \
    "r:\n" \
    "  model: m/M\n" \
    "  model-prefix: mp\n" \
    "  runner: h200\n" \
    "  precision: fp8\n" \
    "  framework: sglang\n" \
    "  scenarios:\n" \
    "    fixed-seq-len:\n" \
    "    - isl: 8192\n" \
    "      osl: 1024\n" \
    "      search-space:\n" \
    "      - %s\n" \
    "  server:\n" \
    "    engine: sglang\n" \
    "    argv: [--model-path $MODEL, --tp $TP, --max-running-requests $CONC]\n"

static struct recipe_set *load_row(const char *row) {
  char *yaml = xasprintf(MINIMAL_FMT, row);
  struct recipe_set *set = load_buffer("row.yaml", yaml);
  free(yaml);
  return set;
}

static void expect_concs(const char *row, const int *want, size_t n) {
  struct recipe_set *set = load_row(row);
  ck_assert_uint_eq(recipe_set_diag_count(set), 0);
  const struct recipe *r = recipe_set_find(set, "r");
  ck_assert_ptr_nonnull(r);
  ck_assert_uint_eq(r->n_points, n);
  for (size_t i = 0; i < n; i++)
    ck_assert_int_eq(r->points[i].conc, want[i]);
  recipe_set_free(set);
}

START_TEST(sweep_doubling_clamps_last_step) {
  const int a[] = {4, 8, 16, 32, 48};
  expect_concs("{ tp: 8, conc-start: 4, conc-end: 48 }", a, ST_ARRAY_LEN(a));
  const int b[] = {4};
  expect_concs("{ tp: 8, conc-start: 4, conc-end: 4 }", b, 1);
  const int c[] = {1, 2, 4, 8, 16, 32, 64, 128, 256};
  expect_concs("{ tp: 8, conc-start: 1, conc-end: 256 }", c, ST_ARRAY_LEN(c));
  const int d[] = {3, 6, 12, 13};
  expect_concs("{ tp: 8, conc-start: 3, conc-end: 13 }", d, ST_ARRAY_LEN(d));
}
END_TEST

START_TEST(sweep_list_kept_in_order) {
  const int a[] = {16, 32, 64, 12};
  expect_concs("{ tp: 2, ep: 2, conc-list: [16, 32, 64, 12], spec-decoding: none }", a, 4);
}
END_TEST

/* One diagnostic, exactly this text. */
static void expect_diag(const char *row, const char *want) {
  struct recipe_set *set = load_row(row);
  ck_assert_uint_eq(recipe_set_count(set), 0);
  ck_assert_uint_ge(recipe_set_diag_count(set), 1);
  const struct recipe_diag *d = recipe_set_diag_at(set, 0);
  char *got = xasprintf("%s:%d:%d: %s", d->file, d->line, d->col, d->message);
  ck_assert_str_eq(got, want);
  free(got);
  recipe_set_free(set);
}

START_TEST(schema_errors_name_file_line_column_field) {
  expect_diag("{ tp: 8, conc-list: [4], conc-start: 4, conc-end: 8 }",
              "row.yaml:12:29: r.scenarios.fixed-seq-len[0].search-space[0]: conc-list cannot be "
              "combined with conc-start/conc-end");
  expect_diag("{ tp: 8, conc-start: 64, conc-end: 4 }",
              "row.yaml:12:30: r.scenarios.fixed-seq-len[0].search-space[0]: conc-start 64 > "
              "conc-end 4");
  expect_diag("{ tp: 8, conc-list: [4], spec-decoding: eagle }",
              "row.yaml:12:49: r.scenarios.fixed-seq-len[0].search-space[0].spec-decoding: must be "
              "one of mtp, draft_model, none; got 'eagle'");
  expect_diag("{ tp: 8, conc-list: [4], batch: 3 }",
              "row.yaml:12:34: r.scenarios.fixed-seq-len[0].search-space[0].batch: unknown key "
              "'batch' (allowed: conc-list, conc-start, conc-end, spec-decoding, tp, ep, dp-attn, "
              "kv-offloading, kv-offload-backend, router, kv-p2p-transfer, dcp-size, pp, "
              "pcp-size, prefill, decode)");
  expect_diag("{ tp: eight, conc-list: [4] }",
              "row.yaml:12:15: r.scenarios.fixed-seq-len[0].search-space[0].tp: expected an "
              "integer, got 'eight'");
  expect_diag("{ tp: 8 }",
              "row.yaml:12:9: r.scenarios.fixed-seq-len[0].search-space[0]: needs conc-list or "
              "conc-start/conc-end");
  expect_diag("{ tp: 8, conc-list: [4, -2] }",
              "row.yaml:12:33: r.scenarios.fixed-seq-len[0].search-space[0].conc-list: expected a "
              "positive integer, got -2");
}
END_TEST

START_TEST(bad_files_do_not_stop_the_others) {
  struct recipe_set *set = recipe_set_new();
  struct st_err err;
  ck_assert_int_eq(recipe_set_add_configs_dir(set, TEST_DATA_DIR "/recipe/native-bad", &err), 0);
  /* broken.yaml: one syntax error with its position */
  bool syntax = false, typo = false, type = false;
  for (size_t i = 0; i < recipe_set_diag_count(set); i++) {
    const struct recipe_diag *d = recipe_set_diag_at(set, i);
    char *s = xasprintf("%s:%d:%d: %s", strrchr(d->file, '/') + 1, d->line, d->col, d->message);
    if (strcmp(s, "broken.yaml:9:35: YAML syntax: did not find expected ',' or ']' while "
                  "parsing a flow sequence") == 0)
      syntax = true;
    if (strcmp(s, "schema.yaml:11:3: typo-server.servr: unknown key 'servr' (allowed: image, "
                  "model, model-prefix, runner, precision, framework, multinode, scenarios, "
                  "disagg, router, kv-p2p-transfer, seq-len-configs, server, benchmark, "
                  "description)") == 0)
      typo = true;
    if (strcmp(s, "schema.yaml:26:15: wrong-type.scenarios.fixed-seq-len[0].search-space[0].tp: "
                  "expected an integer, got 'eight'") == 0)
      type = true;
    free(s);
  }
  ck_assert_msg(syntax, "syntax error position");
  ck_assert_msg(typo, "unknown key");
  ck_assert_msg(type, "wrong type");
  ck_assert_ptr_nonnull(recipe_set_find(set, "still-loads"));
  ck_assert_ptr_null(recipe_set_find(set, "typo-server"));
  /* a directory that does not exist is the only fatal error */
  ck_assert_int_eq(recipe_set_add_configs_dir(set, TEST_DATA_DIR "/recipe/nope", &err), -1);
  recipe_set_free(set);
}
END_TEST

START_TEST(aliases_are_refused) {
  struct recipe_set *set = load_buffer("alias.yaml", "a: &x {model: m}\nb: *x\n");
  ck_assert_uint_eq(recipe_set_diag_count(set), 1);
  ck_assert_str_eq(recipe_set_diag_at(set, 0)->message, "YAML aliases are not supported");
  ck_assert_int_eq(recipe_set_diag_at(set, 0)->line, 2);
  ck_assert_int_eq(recipe_set_diag_at(set, 0)->col, 4);
  recipe_set_free(set);
}
END_TEST

static struct recipe_set *bundled(void) {
  struct recipe_set *set = recipe_set_new();
  struct st_err err;
  ck_assert_int_eq(recipe_set_add_configs_dir(set, PROJECT_DIR "/configs", &err), 0);
  for (size_t i = 0; i < recipe_set_diag_count(set); i++)
    ck_abort_msg("%s:%d: %s", recipe_set_diag_at(set, i)->file, recipe_set_diag_at(set, i)->line,
                 recipe_set_diag_at(set, i)->message);
  return set;
}

START_TEST(bundled_recipes_pairs_and_twins) {
  struct recipe_set *set = bundled();
  static const char *const pairs[][2] = {
      {"qwen3.5-fp8-h200-sglang", "qwen3.5-fp8-h200-sglang-mtp"},
      {"qwen3.5-fp8-h100-sglang", "qwen3.5-fp8-h100-sglang-mtp"},
      {"qwen3.5-fp4-b200-sglang", "qwen3.5-fp4-b200-sglang-mtp"},
  };
  for (size_t i = 0; i < ST_ARRAY_LEN(pairs); i++) {
    const struct recipe *off = recipe_set_find(set, pairs[i][0]);
    const struct recipe *mtp = recipe_set_find(set, pairs[i][1]);
    ck_assert_ptr_nonnull(off);
    ck_assert_ptr_nonnull(mtp);
    ck_assert_int_eq(off->spec, RECIPE_SPEC_NONE);
    ck_assert_int_eq(mtp->spec, RECIPE_SPEC_MTP);
    ck_assert_ptr_eq(recipe_set_twin(set, off), mtp);
    ck_assert_ptr_eq(recipe_set_twin(set, mtp), off);
    ck_assert(mtp->bench.use_chat_template);
    ck_assert(!off->bench.use_chat_template);
  }
  const struct recipe *fp4 = recipe_set_find(set, "qwen3.5-fp4-b200-sglang-mtp");
  ck_assert_str_eq(fp4->model, "nvidia/Qwen3.5-397B-A17B-NVFP4-V2");
  ck_assert_uint_eq(fp4->n_points, 1 + 5 + 3); /* 4..4, 4..64, [16, 32, 64] */
  const struct recipe *v = recipe_set_find(set, "qwen3.5-fp8-h200-vllm");
  ck_assert_ptr_nonnull(v);
  ck_assert_str_eq(v->engine, "vllm");
  ck_assert_ptr_null(recipe_set_twin(set, v));
  recipe_set_free(set);
}
END_TEST

START_TEST(server_cmd_and_knobs) {
  struct recipe_set *set = bundled();
  const struct recipe *r = recipe_set_find(set, "qwen3.5-fp8-h200-sglang-mtp");
  struct recipe_point pt = r->points[3];
  ck_assert_int_eq(pt.conc, 32);
  struct recipe_cmd cmd;
  struct st_err err;
  ck_assert_int_eq(recipe_server_cmd(r, &pt, &cmd, &err), 0);
  ck_assert_str_eq(cmd.engine, "sglang");
  ck_assert_str_eq(cmd.program, "python3 -m sglang.launch_server");
  ck_assert_str_eq(cmd.argv[0], "--model-path");
  ck_assert_str_eq(cmd.argv[1], "Qwen/Qwen3.5-397B-A17B-FP8");
  ck_assert_str_eq(recipe_cmd_knob(&cmd, "tp"), "8");
  ck_assert_str_eq(recipe_cmd_knob(&cmd, "tensor-parallel-size"), "8");
  ck_assert_str_eq(recipe_cmd_knob(&cmd, "expert-parallel-size"), "8");
  ck_assert_str_eq(recipe_cmd_knob(&cmd, "max-running-requests"), "32");
  ck_assert_str_eq(recipe_cmd_knob(&cmd, "context-length"), "9472");
  ck_assert_str_eq(recipe_cmd_knob(&cmd, "enable-metrics"), "");
  ck_assert_ptr_null(recipe_cmd_knob(&cmd, "dp"));
  ck_assert_str_eq(recipe_cmd_env(&cmd, "SGLANG_ENABLE_SPEC_V2"), "1");
  ck_assert(!cmd.has_unresolved);
  size_t argc = cmd.argc;
  recipe_cmd_set_knob(&cmd, "mem-fraction-static", "0.7");
  ck_assert_str_eq(recipe_cmd_knob(&cmd, "mem-fraction-static"), "0.7");
  ck_assert_uint_eq(cmd.argc, argc);
  ck_assert_int_eq(recipe_cmd_apply_override(&cmd, "--new-flag=3", &err), 0);
  ck_assert_str_eq(recipe_cmd_knob(&cmd, "new-flag"), "3");
  ck_assert_uint_eq(cmd.argc, argc + 2);
  recipe_cmd_set_knob(&cmd, "enable-metrics", NULL);
  ck_assert_ptr_null(recipe_cmd_knob(&cmd, "enable-metrics"));
  recipe_cmd_set_knob(&cmd, "speculative-algo", "NEXTN"); /* alias keeps the spelling used */
  ck_assert_str_eq(recipe_cmd_knob(&cmd, "speculative-algorithm"), "NEXTN");
  ck_assert_int_eq(recipe_cmd_apply_override(&cmd, "novalue", &err), -1);
  ck_assert_str_eq(err.msg, "'novalue': expected KEY=VALUE (e.g. mem-fraction-static=0.85)");
  recipe_cmd_fini(&cmd);
  recipe_set_free(set);
}
END_TEST

static char tmp_name[32];
static const char *flag_name(int i) {
  snprintf(tmp_name, sizeof tmp_name, "flag-%d", i);
  return tmp_name;
}

START_TEST(knob_inline_values) {
  struct recipe_cmd cmd = {0};
  const char *args[] = {"--tensor-parallel-size=4", "--enforce-eager", "--max-num-seqs", "8"};
  cmd.argv = xcalloc(8, sizeof *cmd.argv); /* the vector growth rule: 4 items, room for 8 */
  for (size_t i = 0; i < ST_ARRAY_LEN(args); i++)
    cmd.argv[cmd.argc++] = xstrdup(args[i]);
  ck_assert_str_eq(recipe_cmd_knob(&cmd, "tp"), "4");
  recipe_cmd_set_knob(&cmd, "tp", "8");
  ck_assert_str_eq(cmd.argv[0], "--tensor-parallel-size=8");
  ck_assert_str_eq(recipe_cmd_knob(&cmd, "enforce-eager"), "");
  recipe_cmd_set_knob(&cmd, "max-num-seqs", NULL);
  ck_assert_uint_eq(cmd.argc, 2);
  recipe_cmd_set_knob(&cmd, "enforce-eager", "1"); /* a flag that gains a value */
  ck_assert_uint_eq(cmd.argc, 3);
  ck_assert_str_eq(cmd.argv[1], "--enforce-eager");
  ck_assert_str_eq(cmd.argv[2], "1");
  for (int i = 0; i < 20; i++)
    recipe_cmd_set_knob(&cmd, flag_name(i), "v");
  ck_assert_uint_eq(cmd.argc, 3 + 40);
  recipe_cmd_fini(&cmd);
}
END_TEST

START_TEST(mixed_entry_names) {
  struct recipe_set *set = load_row("{ tp: 8, conc-list: [4] }\n"
                                    "      - { tp: 8, conc-list: [8], spec-decoding: mtp }");
  ck_assert_uint_eq(recipe_set_count(set), 2);
  ck_assert_ptr_nonnull(recipe_set_find(set, "r:none"));
  ck_assert_ptr_nonnull(recipe_set_find(set, "r:mtp"));
  ck_assert_ptr_eq(recipe_set_twin(set, recipe_set_find(set, "r:none")),
                   recipe_set_find(set, "r:mtp"));
  recipe_set_free(set);
}
END_TEST

/* The real master configs, when this machine has them (reference 1.1). */
START_TEST(real_master_configs_counts) {
  const char *dir = getenv("SHARED_DIR") ? getenv("SHARED_DIR") : SHARED_DIR;
  char *nv = xasprintf("%s/data/inferencex/configs/nvidia-master.yaml", dir);
  char *amd = xasprintf("%s/data/inferencex/configs/amd-master.yaml", dir);
  if (!path_exists(nv) || !path_exists(amd)) {
    fprintf(stderr, "real_master_configs_counts: skipped (%s absent)\n", nv);
    free(nv);
    free(amd);
    return;
  }
  struct recipe_set *set = recipe_set_new();
  const char *files[] = {nv, amd};
  for (size_t i = 0; i < 2; i++) {
    size_t len;
    struct st_err err;
    char *data = file_read_all(files[i], &len, &err);
    ck_assert_ptr_nonnull(data);
    recipe_set_add_master_buffer(set, files[i], data, len);
    free(data);
  }
  for (size_t i = 0; i < recipe_set_diag_count(set); i++)
    ck_abort_msg("%s:%d: %s", recipe_set_diag_at(set, i)->file, recipe_set_diag_at(set, i)->line,
                 recipe_set_diag_at(set, i)->message);
  struct recipe_counts c;
  recipe_set_counts(set, &c);
  ck_assert_uint_eq(c.entries, 208);
  ck_assert_uint_eq(c.single_node, 114);
  ck_assert_uint_eq(c.multinode_agg, 21);
  ck_assert_uint_eq(c.multinode_disagg, 73);
  ck_assert_uint_eq(c.points, 749);
  ck_assert_uint_eq(c.fixed_seq_len, 92 + 41);
  ck_assert_uint_eq(c.agentic, 60 + 15);
  ck_assert_uint_eq(recipe_set_multinode_count(set), 21 + 73);
  const struct recipe *h200 = recipe_set_find(set, "qwen3.5-fp8-h200-sglang-mtp");
  ck_assert_ptr_nonnull(h200);
  ck_assert_int_eq(recipe_max_conc(h200), 128);
  ck_assert_ptr_eq(recipe_set_twin(set, h200), recipe_set_find(set, "qwen3.5-fp8-h200-sglang"));
  recipe_set_free(set);
  free(nv);
  free(amd);
}
END_TEST

START_TEST(bundled_dir_from_env) {
  struct st_err err;
  setenv("SERVETOP_CONFIGS", PROJECT_DIR "/configs", 1);
  char *dir = recipe_bundled_dir_alloc(&err);
  ck_assert_str_eq(dir, PROJECT_DIR "/configs");
  free(dir);
  setenv("SERVETOP_CONFIGS", "/nonexistent/servetop", 1);
  ck_assert_ptr_null(recipe_bundled_dir_alloc(&err));
  unsetenv("SERVETOP_CONFIGS");
}
END_TEST

int main(void) {
  Suite *s = suite_create("recipe");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, sweep_doubling_clamps_last_step);
  tcase_add_test(tc, sweep_list_kept_in_order);
  tcase_add_test(tc, schema_errors_name_file_line_column_field);
  tcase_add_test(tc, bad_files_do_not_stop_the_others);
  tcase_add_test(tc, aliases_are_refused);
  tcase_add_test(tc, bundled_recipes_pairs_and_twins);
  tcase_add_test(tc, server_cmd_and_knobs);
  tcase_add_test(tc, knob_inline_values);
  tcase_add_test(tc, mixed_entry_names);
  tcase_add_test(tc, real_master_configs_counts);
  tcase_add_test(tc, bundled_dir_from_env);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
