/* libFuzzer: the static launch-script reader — tokenizer, then the
 * interpreter (expansion, arithmetic, branches) with a workflow-like env. */
#include "recipe/recipe_internal.h"

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct sh_script s;
  if (sh_parse((const char *)data, size, "fuzz.sh", &s, NULL) < 0)
    return 0;
  struct sh_env env = {0};
  static const char *const vars[][2] = {
      {"MODEL", "org/M"}, {"TP", "8"},        {"EP_SIZE", "8"},          {"CONC", "64"},
      {"ISL", "8192"},    {"OSL", "1024"},    {"EXP_NAME", "mp_8k1k"},   {"PRECISION", "fp8"},
      {"FRAMEWORK", "sglang"}, {"SPEC_DECODING", "mtp"}, {"SCENARIO_SUBDIR", "fixed_seq_len/"},
  };
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
    sh_env_set(&env, vars[i][0], vars[i][1]);
  struct sh_result res;
  sh_run(&s, &env, &res);
  sh_result_fini(&res);
  sh_env_fini(&env);
  sh_script_fini(&s);
  return 0;
}
