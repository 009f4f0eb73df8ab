/* engine: vLLM's dotted JSON keys (--set compilation-config.level=3): taken
 * only by an engine whose parser has them (eng_ops.dotted_json_flags) and only
 * for one of its JSON-valued flags (ENG_VALUE_JSON rows); refused elsewhere
 * with a message that says why, a did-you-mean for a near miss. */
#include "engine/engine.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

static struct st_err err;

/* both checks (value, then name), as run_check_overrides runs them */
static int check(const char *engine, const char *key, const char *value, char *const *argv,
                 size_t argc) {
  const struct eng_ops *e = eng_find(engine);
  memset(&err, 0, sizeof err);
  if (eng_check_knob(e, key, value, &err) != 0)
    return -1;
  return eng_check_knob_name(e, key, argv, argc, &err);
}

static void refused(const char *engine, const char *key, const char *value, const char *why) {
  ck_assert_msg(check(engine, key, value, NULL, 0) == -1, "%s %s=%s passed", engine, key, value);
  ck_assert_msg(strstr(err.msg, why), "%s %s=%s: '%s' does not say '%s'", engine, key, value,
                err.msg, why);
}

START_TEST(vllm_takes_members_of_its_json_flags) {
  static const char *const ok[][2] = {
      {"compilation-config.level", "3"},
      {"--compilation-config.level", "3"},
      {"compilation_config.level", "3"}, /* its parser reads '_' as '-' in the flag name */
      {"speculative-config.num_speculative_tokens", "2"},
      {"speculative-config.method", "mtp"},
      {"kv-transfer-config.kv_connector", "NixlConnector"},
      {"compilation-config.pass_config.enable_fusion", "true"},
      {"compilation-config.cudagraph_capture_sizes+", "1,2,4"},
      {"hf-overrides.rope-theta", "1e6"},
  };
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
    ck_assert_msg(check("vllm", ok[i][0], ok[i][1], NULL, 0) == 0, "%s: %s", ok[i][0], err.msg);
  /* the flag whole still passes, with any text: vLLM parses it */
  ck_assert_msg(check("vllm", "compilation-config", "{\"level\": 3}", NULL, 0) == 0, "%s",
                err.msg);
  refused("vllm", "compilation-config", "", "takes a JSON value");
}
END_TEST

START_TEST(other_engines_have_no_dotted_keys) {
  refused("sglang", "compilation-config.level", "3",
          "SGLang has no dotted (JSON) flags: --set takes a flag name");
  refused("llamacpp", "ctx-size.x", "1", "has no dotted (JSON) flags: --set takes a flag name");
  refused("sim", "speculative-config.num_speculative_tokens", "2",
          "has no dotted (JSON) flags: --set takes a flag name");
  /* an engine servetop does not know */
  struct st_err e2 = {{0}};
  ck_assert_int_eq(eng_check_knob(NULL, "compilation-config.level", "3", &e2), -1);
  ck_assert_ptr_nonnull(strstr(e2.msg, "has no dotted (JSON) flags"));
}
END_TEST

START_TEST(a_head_that_is_not_a_json_flag) {
  refused("vllm", "compilaton-config.level", "3", "did you mean compilation-config.level?");
  refused("vllm", "speculative-confg.num_speculative_tokens", "2",
          "did you mean speculative-config.num_speculative_tokens?");
  /* a real flag, but not JSON: says so and how to set it */
  refused("vllm", "max-num-seqs.x", "3", "--max-num-seqs of vLLM takes a plain value");
  refused("vllm", "max-num-seqs.x", "3", "--set max-num-seqs=VALUE");
  refused("vllm", "enforce-eager.x", "1", "takes a plain value"); /* in the full list only */
  /* nothing near: the JSON flags are listed */
  refused("vllm", "warp-drive.x", "1", "warp-drive is not a JSON flag of vLLM");
  refused("vllm", "warp-drive.x", "1", "compilation-config, speculative-config");
}
END_TEST

START_TEST(the_shape_of_a_dotted_key) {
  static const char *const bad[] = {
      "compilation-config.",        "compilation-config..level", ".level",
      "compilation-config.le$vel",  "compilation-config.a+b",    "compilation-config.+",
      "compilation-config.level++", "compilation-config.a b",    "compilation-config.a/b",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    refused("vllm", bad[i], "3", "dotted JSON key");
  refused("vllm", "max-num-seqs+", "3", "is not a flag name"); /* '+' needs a member */
  /* a member takes a value: an empty one would take the next argument */
  refused("vllm", "compilation-config.level", "", "takes a value");
  /* the name check alone (value NULL) knows the shape too */
  struct st_err e2 = {{0}};
  ck_assert_int_eq(eng_check_knob_name(eng_find("vllm"), "compilation-config..x", NULL, 0, &e2),
                   -1);
  ck_assert_int_eq(eng_check_knob_name(eng_find("sglang"), "a.b", NULL, 0, &e2), -1);
  ck_assert_int_eq(eng_check_knob_name(eng_find("vllm"), "compilation-config.level", NULL, 0, &e2),
                   0);
}
END_TEST

/* A recipe that gives the flag whole: vLLM keeps the last --HEAD, which is
 * the dotted members' JSON, so the recipe's other members would be lost. */
START_TEST(refused_where_the_recipe_gives_the_flag_whole) {
  char *argv[] = {"Org/M", "--speculative-config",
                  "{\"method\": \"mtp\", \"num_speculative_tokens\": 3}", "--max-num-seqs", "8"};
  ck_assert_int_eq(check("vllm", "speculative-config.num_speculative_tokens", "2", argv, 5), -1);
  ck_assert_ptr_nonnull(strstr(err.msg, "the recipe gives --speculative-config whole"));
  ck_assert_ptr_nonnull(strstr(err.msg, "dropped, not merged"));
  char *inline_form[] = {"Org/M", "--speculative-config={\"method\": \"mtp\"}"};
  ck_assert_int_eq(check("vllm", "speculative-config.num_speculative_tokens", "2", inline_form, 2),
                   -1);
  /* dotted members in the recipe, or another JSON flag whole: fine */
  char *dotted[] = {"Org/M", "--speculative-config.method", "mtp", "--compilation-config",
                    "{\"level\": 3}"};
  ck_assert_msg(check("vllm", "speculative-config.num_speculative_tokens", "2", dotted, 5) == 0,
                "%s", err.msg);
}
END_TEST

static long arg_at(const struct launch_cmd *c, const char *word) {
  for (size_t i = 0; i < c->argc; i++)
    if (strcmp(c->argv[i], word) == 0)
      return (long)i;
  return -1;
}

/* The sim standing in for vLLM: dotted speculative-config members with a
 * method are run (as vLLM keeps them over a whole --speculative-config);
 * other dotted flags pass as they are, for the sim to log as not modelled. */
START_TEST(the_sim_reads_dotted_speculative_members) {
  const struct eng_ops *vl = eng_find("vllm");
  char *argv[] = {"Org/M",
                  "--speculative-config",
                  "{\"method\": \"mtp\", \"num_speculative_tokens\": 3}",
                  "--speculative-config.method",
                  "mtp",
                  "--speculative-config.num_speculative_tokens=2",
                  "--compilation-config.level",
                  "3"};
  struct launch_cmd c;
  launch_cmd_init(&c);
  vl->args_for_sim(argv, 8, &c);
  long at = arg_at(&c, "--speculative-num-steps");
  ck_assert_int_ge(at, 0);
  ck_assert_str_eq(c.argv[at + 1], "2"); /* the dotted members, not the whole JSON's 3 */
  ck_assert_uint_eq(arg_at(&c, "--speculative-algorithm") >= 0, 1);
  ck_assert_int_eq(arg_at(&c, "--speculative-config.method"), -1);
  ck_assert_int_eq(arg_at(&c, "mtp"), -1);
  at = arg_at(&c, "--compilation-config.level");
  ck_assert_int_ge(at, 0);
  ck_assert_str_eq(c.argv[at + 1], "3");
  launch_cmd_fini(&c);
  /* no method among the members: passed on as they are */
  char *no_method[] = {"Org/M", "--speculative-config.num_speculative_tokens", "2"};
  launch_cmd_init(&c);
  vl->args_for_sim(no_method, 3, &c);
  ck_assert_int_eq(arg_at(&c, "--speculative-num-steps"), -1);
  at = arg_at(&c, "--speculative-config.num_speculative_tokens");
  ck_assert_int_ge(at, 0);
  ck_assert_str_eq(c.argv[at + 1], "2");
  launch_cmd_fini(&c);
}
END_TEST

int main(void) {
  Suite *s = suite_create("engine_dotted");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, vllm_takes_members_of_its_json_flags);
  tcase_add_test(tc, other_engines_have_no_dotted_keys);
  tcase_add_test(tc, a_head_that_is_not_a_json_flag);
  tcase_add_test(tc, the_shape_of_a_dotted_key);
  tcase_add_test(tc, refused_where_the_recipe_gives_the_flag_whole);
  tcase_add_test(tc, the_sim_reads_dotted_speculative_members);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
