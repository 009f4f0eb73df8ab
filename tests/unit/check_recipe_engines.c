/* recipe: what the engine table gives the recipe reader — the bundled llama.cpp
 * pair (twins, $SERVETOP_CACHE), knob edits in llama.cpp's short spellings and
 * the generic knobs, and the doctor's reading of a draft model that is never used. */
#include "recipe/recipe.h"
#include "util/util.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

static struct recipe_set *load_dir(const char *dir) {
  struct recipe_set *set = recipe_set_new();
  struct st_err err;
  ck_assert_msg(recipe_set_add_configs_dir(set, dir, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(recipe_set_diag_count(set), 0);
  return set;
}

static char *argv_line(const struct recipe_cmd *cmd) {
  struct sbuf sb = {0};
  for (size_t i = 0; i < cmd->argc; i++)
    sbuf_printf(&sb, "%s%s", i ? " " : "", cmd->argv[i]);
  return sbuf_take(&sb);
}

START_TEST(bundled_llamacpp_pair) {
  setenv("XDG_CACHE_HOME", "/cache-for-test", 1);
  struct recipe_set *set = load_dir(PROJECT_DIR "/configs");
  const struct recipe *off = recipe_set_find(set, "tiny-llamacpp-cpu");
  const struct recipe *draft = recipe_set_find(set, "tiny-llamacpp-cpu-draft");
  ck_assert_ptr_nonnull(off);
  ck_assert_ptr_nonnull(draft);
  ck_assert_str_eq(off->engine, "llamacpp");
  ck_assert_int_eq(off->spec, RECIPE_SPEC_NONE);
  ck_assert_int_eq(draft->spec, RECIPE_SPEC_DRAFT_MODEL);
  /* off <-> speculative decoding by a draft model, both ways (servetop run --ab) */
  ck_assert_ptr_eq(recipe_set_twin(set, off), draft);
  ck_assert_ptr_eq(recipe_set_twin(set, draft), off);
  struct recipe_cmd cmd;
  struct st_err err;
  ck_assert_int_eq(recipe_server_cmd(draft, NULL, &cmd, &err), 0);
  ck_assert_str_eq(cmd.program, "llama-server");
  char *line = argv_line(&cmd);
  ck_assert_str_eq(line, "-m /cache-for-test/servetop/models/tiny-target.gguf --alias tiny-target "
                         "-c 4096 -np 4 -t 1 -md /cache-for-test/servetop/models/tiny-draft.gguf "
                         "--spec-type draft-simple --spec-draft-n-max 8 -td 1");
  free(line);
  recipe_cmd_fini(&cmd);

  struct recipe_findings f;
  recipe_lint(set, &f);
  for (size_t i = 0; i < f.n; i++)
    ck_assert_msg(strncmp(f.items[i].recipe, "tiny-", 5) != 0, "%s: %s", f.items[i].recipe,
                  f.items[i].message);
  recipe_findings_fini(&f);
  recipe_set_free(set);
}
END_TEST

START_TEST(llamacpp_knob_edits) {
  struct recipe_set *set = load_dir(PROJECT_DIR "/configs");
  const struct recipe *r = recipe_set_find(set, "tiny-llamacpp-cpu");
  struct recipe_cmd cmd;
  struct st_err err;
  ck_assert_int_eq(recipe_server_cmd(r, NULL, &cmd, &err), 0);
  ck_assert_str_eq(recipe_cmd_knob(&cmd, "ctx-size"), "4096"); /* -c by its long name */
  ck_assert_str_eq(recipe_cmd_knob(&cmd, "kv-cache"), "4096");
  ck_assert_str_eq(recipe_cmd_knob(&cmd, "max-batch"), "4");
  /* a restart with another KV size and slot count keeps the spellings written */
  ck_assert_int_eq(recipe_cmd_apply_override(&cmd, "kv-cache=2048", &err), 0);
  ck_assert_int_eq(recipe_cmd_apply_override(&cmd, "parallel=2", &err), 0);
  ck_assert_int_eq(recipe_cmd_apply_override(&cmd, "b=64", &err), 0);       /* new: -b */
  ck_assert_int_eq(recipe_cmd_apply_override(&cmd, "metrics=", &err), 0);   /* a switch */
  ck_assert_int_eq(recipe_cmd_apply_override(&cmd, "t=2", &err), 0);        /* after the switch */
  char *line = argv_line(&cmd);
  ck_assert_msg(strstr(line, "--alias tiny-target -c 2048 -np 2 -t 2 -b 64 --metrics"), "%s", line);
  free(line);
  ck_assert_str_eq(recipe_cmd_knob(&cmd, "metrics"), "");
  ck_assert_int_eq(recipe_cmd_apply_override(&cmd, "metrics", &err), -1);
  recipe_cmd_set_knob(&cmd, "np", NULL); /* removal */
  ck_assert_ptr_null(recipe_cmd_knob(&cmd, "parallel"));
  recipe_cmd_fini(&cmd);
  recipe_set_free(set);
}
END_TEST

START_TEST(unused_draft_model_is_a_finding) {
  struct recipe_set *set = load_dir(TEST_DATA_DIR "/engine");
  struct recipe_findings f;
  recipe_lint(set, &f);
  ck_assert_uint_eq(f.n, 1);
  ck_assert_str_eq(f.items[0].rule, "SPEC_FLAGS_DO_NOTHING");
  ck_assert_int_eq(f.items[0].severity, RECIPE_SEV_ERROR);
  ck_assert_ptr_nonnull(strstr(f.items[0].message, "--spec-type"));
  recipe_findings_fini(&f);
  recipe_set_free(set);
}
END_TEST

int main(void) {
  Suite *s = suite_create("recipe_engines");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, bundled_llamacpp_pair);
  tcase_add_test(tc, llamacpp_knob_edits);
  tcase_add_test(tc, unused_draft_model_is_a_finding);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
