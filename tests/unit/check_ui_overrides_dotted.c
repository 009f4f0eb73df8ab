/* ui overrides (the launch form's KEY=VALUE line): vLLM's dotted JSON keys go
 * through the run module's one check (run_check_overrides), and the line
 * saying what each changes names the dotted flag as it reaches the server. */
#include "overrides.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "recipe/recipe.h"
#include "util/util.h"

static const char vllm_yaml[] =
    "v-fp8-h200-vllm:\n  model: Org/M\n  model-prefix: m\n  runner: h200\n"
    "  precision: fp8\n  framework: vllm\n  multinode: false\n"
    "  scenarios:\n    fixed-seq-len:\n    - isl: 1024\n      osl: 1024\n"
    "      search-space:\n      - { tp: 1, conc-list: [4] }\n"
    "  server:\n    engine: vllm\n    argv:\n      - Org/M\n"
    "      - --compilation-config.cudagraph_mode FULL\n";

START_TEST(dotted_keys_in_the_launch_form) {
  struct recipe_set *set = recipe_set_new();
  recipe_set_add_yaml_buffer(set, "v.yaml", vllm_yaml, sizeof vllm_yaml - 1);
  const struct recipe *r = recipe_set_at(set, 0);
  ck_assert_ptr_nonnull(r);
  struct ui_overrides o;
  struct st_err err = {{0}};
  ck_assert_msg(ui_overrides_parse("compilation-config.level=3 "
                                   "compilation-config.cudagraph_mode=PIECEWISE",
                                   r, &o, &err) == 0,
                "%s", err.msg);
  ck_assert_uint_eq(o.n, 2);
  ck_assert_str_eq(o.changes[0], "--compilation-config.level 3 (added)");
  ck_assert_str_eq(o.changes[1], "--compilation-config.cudagraph_mode FULL -> PIECEWISE");
  ui_overrides_fini(&o);
  ck_assert_int_eq(ui_overrides_parse("compilaton-config.level=3", r, &o, &err), -1);
  ck_assert_ptr_nonnull(strstr(err.msg, "did you mean compilation-config.level"));
  ck_assert_uint_eq(o.n, 0);
  recipe_set_free(set);
}
END_TEST

int main(void) {
  Suite *s = suite_create("ui_overrides_dotted");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, dotted_keys_in_the_launch_form);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
