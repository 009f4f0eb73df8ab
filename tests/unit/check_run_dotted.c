/* run: --set with a vLLM dotted JSON key (compilation-config.level=3) passes
 * the one override check and reaches the server's arguments as
 * --compilation-config.level 3: appended, replacing the same dotted flag,
 * never merged into --compilation-config's own value. */
#include "engine/engine.h"
#include "run/run.h"
#include "tune/tune.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

static const char vllm_yaml[] =
    "v-fp8-h200-vllm:\n  model: Org/M\n  model-prefix: m\n  runner: h200\n"
    "  precision: fp8\n  framework: vllm\n  multinode: false\n"
    "  scenarios:\n    fixed-seq-len:\n    - isl: 1024\n      osl: 1024\n"
    "      search-space:\n      - { tp: 1, conc-list: [4] }\n"
    "  server:\n    engine: vllm\n    argv:\n      - Org/M\n"
    "      - --max-num-seqs $CONC\n"
    "      - --compilation-config.cudagraph_mode FULL\n"
    "      - --kv-transfer-config '{\"kv_connector\":\"NixlConnector\"}'\n";

static struct recipe_set *set;
static const struct recipe *r;

static void setup(void) {
  set = recipe_set_new();
  recipe_set_add_yaml_buffer(set, "v.yaml", vllm_yaml, sizeof vllm_yaml - 1);
  r = recipe_set_at(set, 0);
  ck_assert_ptr_nonnull(r);
}

static void teardown(void) { recipe_set_free(set); }

/* Index of word in cmd's argv, or -1. */
static long find(const struct recipe_cmd *cmd, const char *word) {
  for (size_t i = 0; i < cmd->argc; i++)
    if (strcmp(cmd->argv[i], word) == 0)
      return (long)i;
  return -1;
}

static size_t count(const struct recipe_cmd *cmd, const char *word) {
  size_t n = 0;
  for (size_t i = 0; i < cmd->argc; i++)
    n += strcmp(cmd->argv[i], word) == 0;
  return n;
}

START_TEST(dotted_set_reaches_the_argv) {
  struct st_err err = {{0}};
  char *sets[] = {"compilation-config.level=3", "compilation-config.cudagraph_mode=PIECEWISE",
                  "compilation-config.cudagraph_capture_sizes+=1,2,4",
                  "kv-transfer-config.kv_role=kv_both"};
  /* the last one: the recipe gives --kv-transfer-config whole */
  ck_assert_msg(run_check_overrides(r, sets, 3, &err) == 0, "%s", err.msg);
  ck_assert_int_eq(run_check_overrides(r, sets + 3, 1, &err), -1);
  ck_assert_ptr_nonnull(strstr(err.msg, "the recipe gives --kv-transfer-config whole"));

  struct recipe_cmd cmd;
  ck_assert_int_eq(recipe_server_cmd(r, NULL, &cmd, &err), 0);
  for (size_t i = 0; i < 3; i++)
    ck_assert_int_eq(recipe_cmd_apply_override(&cmd, sets[i], &err), 0);
  long at = find(&cmd, "--compilation-config.level");
  ck_assert_int_ge(at, 0);
  ck_assert_str_eq(cmd.argv[at + 1], "3");
  /* the recipe's own dotted flag is replaced, not repeated */
  ck_assert_uint_eq(count(&cmd, "--compilation-config.cudagraph_mode"), 1);
  at = find(&cmd, "--compilation-config.cudagraph_mode");
  ck_assert_str_eq(cmd.argv[at + 1], "PIECEWISE");
  ck_assert_int_eq(find(&cmd, "FULL"), -1);
  at = find(&cmd, "--compilation-config.cudagraph_capture_sizes+");
  ck_assert_int_ge(at, 0);
  ck_assert_str_eq(cmd.argv[at + 1], "1,2,4");
  /* the whole JSON flag is left as it was */
  at = find(&cmd, "--kv-transfer-config");
  ck_assert_int_ge(at, 0);
  ck_assert_str_eq(cmd.argv[at + 1], "{\"kv_connector\":\"NixlConnector\"}");
  ck_assert_uint_eq(count(&cmd, "--compilation-config"), 0);
  /* what the recipe reader reports for the key */
  ck_assert_str_eq(recipe_cmd_knob(&cmd, "compilation-config.level"), "3");
  recipe_cmd_fini(&cmd);
}
END_TEST

START_TEST(split_takes_dots_and_plus) {
  char key[128];
  const char *value;
  struct st_err err = {{0}};
  ck_assert_int_eq(
      run_override_split("--compilation-config.cudagraph_capture_sizes+=8", key, sizeof key,
                         &value, &err),
      0);
  ck_assert_str_eq(key, "compilation-config.cudagraph_capture_sizes+");
  ck_assert_str_eq(value, "8");
  ck_assert_int_eq(run_override_split("compilation-config.a$b=1", key, sizeof key, &value, &err),
                   -1);
  /* tune's --knob takes them too */
  struct tune_knob k;
  ck_assert_msg(tune_knob_parse("speculative-config.num_speculative_tokens=1,2", &k, &err) == 0,
                "%s", err.msg);
  ck_assert_str_eq(k.name, "speculative-config.num_speculative_tokens");
  ck_assert_uint_eq(k.n_values, 2);
  tune_knob_free(&k);
  ck_assert_msg(tune_knob_parse("compilation-config.cudagraph_capture_sizes+=8,16", &k, &err) == 0,
                "%s", err.msg);
  ck_assert_str_eq(k.name, "compilation-config.cudagraph_capture_sizes+");
  tune_knob_free(&k);
  /* SGLang: refused by the engine check, with the reason */
  char *sets[] = {"compilation-config.level=3"};
  static const char sg_yaml[] =
      "s-fp8-h200-sglang:\n  model: Org/M\n  model-prefix: m\n  runner: h200\n"
      "  precision: fp8\n  framework: sglang\n  multinode: false\n"
      "  scenarios:\n    fixed-seq-len:\n    - isl: 1024\n      osl: 1024\n"
      "      search-space:\n      - { tp: 1, conc-list: [4] }\n"
      "  server:\n    engine: sglang\n    argv:\n      - --model-path Org/M\n";
  struct recipe_set *s2 = recipe_set_new();
  recipe_set_add_yaml_buffer(s2, "s.yaml", sg_yaml, sizeof sg_yaml - 1);
  ck_assert_int_eq(run_check_overrides(recipe_set_at(s2, 0), sets, 1, &err), -1);
  ck_assert_ptr_nonnull(strstr(err.msg, "SGLang has no dotted (JSON) flags"));
  recipe_set_free(s2);
}
END_TEST

/* On servetop sim, a knob's change must move what the sim models: --max-num-seqs reaches it
 * as --max-running-requests (modelled), a dotted compilation-config key does not reach it at
 * all (accepted, not modelled), --block-size is passed and ignored. On a real engine every
 * change counts. */
START_TEST(sim_says_which_changes_it_models) {
  struct st_err err = {{0}};
  const struct eng_ops *sim = eng_find("sim");
  ck_assert_int_eq(run_sim_models_change(r, sim, "max-num-seqs=8", "max-num-seqs=16", &err), 0);
  ck_assert_int_eq(run_sim_models_change(r, sim, NULL, "max-num-seqs=16", &err), 0);
  ck_assert_int_eq(run_sim_models_change(r, sim, NULL, "kv-cache=0.8", &err), 0);
  ck_assert_int_eq(run_sim_models_change(r, sim, "block-size=16", "block-size=64", &err), 1);
  ck_assert_msg(strstr(err.msg, "servetop sim does not model --block-size"), "%s", err.msg);
  ck_assert_int_eq(run_sim_models_change(r, sim, NULL, "compilation-config.level=3", &err), 1);
  ck_assert_msg(strstr(err.msg, "does not model --compilation-config.level"), "%s", err.msg);
  ck_assert_int_eq(run_sim_models_change(r, eng_find("vllm"), NULL, "block-size=16", &err), 0);
  ck_assert_int_eq(run_sim_models_change(r, sim, NULL, "no-such-thing", &err), -1);
}
END_TEST

int main(void) {
  Suite *s = suite_create("run_dotted");
  TCase *tc = tcase_create("core");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, dotted_set_reaches_the_argv);
  tcase_add_test(tc, sim_says_which_changes_it_models);
  tcase_add_test(tc, split_takes_dots_and_plus);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
