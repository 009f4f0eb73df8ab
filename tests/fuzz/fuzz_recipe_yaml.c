/* libFuzzer: servetop's recipe loader (and the master-config loader) on
 * arbitrary bytes, then every derived value: sweep, twin, server command,
 * knob edits and lint. Memory errors and leaks are the findings. */
#include "recipe/recipe.h"
#include "util/util.h"

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct recipe_set *set = recipe_set_new();
  recipe_set_add_yaml_buffer(set, "fuzz.yaml", (const char *)data, size);
  recipe_set_add_master_buffer(set, "fuzz-master.yaml", (const char *)data, size);
  for (size_t i = 0; i < recipe_set_count(set); i++) {
    const struct recipe *r = recipe_set_at(set, i);
    (void)recipe_set_twin(set, r);
    (void)recipe_max_conc(r);
    struct recipe_cmd cmd;
    struct st_err err;
    if (r->n_points && recipe_server_cmd(r, &r->points[0], &cmd, &err) == 0) {
      (void)recipe_cmd_knob(&cmd, "tp");
      recipe_cmd_set_knob(&cmd, "mem-fraction-static", "0.5");
      recipe_cmd_set_knob(&cmd, "speculative-algo", NULL);
      recipe_cmd_fini(&cmd);
    }
  }
  struct recipe_findings f;
  recipe_lint(set, &f);
  recipe_findings_fini(&f);
  recipe_set_free(set);
  return 0;
}
