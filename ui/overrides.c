/* KEY=VALUE overrides: the run module's check, and what each one changes (pure). */
#include "overrides.h"

#include <stdlib.h>
#include <string.h>

#include "run/run.h"
#include "ui_util.h"

void ui_overrides_fini(struct ui_overrides *o) {
  for (size_t i = 0; i < o->n; i++) {
    free(o->items[i]);
    free(o->changes[i]);
  }
  free(o->items);
  free(o->changes);
  free(o->bench_line);
  memset(o, 0, sizeof *o);
}

int ui_overrides_parse(const char *text, const struct recipe *recipe, struct ui_overrides *out,
                       struct st_err *err) {
  memset(out, 0, sizeof *out);
  char *words = xstrdup(text);
  char *save = NULL;
  int rc = 0;
  for (char *w = strtok_r(words, " \t", &save); w && rc == 0; w = strtok_r(NULL, " \t", &save)) {
    char key[128];
    const char *value;
    rc = run_override_split(w, key, sizeof key, &value, err);
    if (rc != 0)
      break;
    char which = 0;
    int v = 0;
    int b = run_bench_setting(key, value, &which, &v, err);
    if (b < 0) {
      rc = -1;
      break;
    }
    if (b > 0) { /* a benchmark setting: the run's, not the server's */
      *(which == 'n' ? &out->num_prompts : which == 'i' ? &out->isl : &out->osl) = v;
      continue;
    }
    out->items = xreallocarray(out->items, out->n + 1, sizeof *out->items);
    out->changes = xreallocarray(out->changes, out->n + 1, sizeof *out->changes);
    out->items[out->n] = xstrdup(w);
    out->changes[out->n] = NULL;
    out->n++;
  }
  free(words);
  if (rc == 0 && recipe)
    rc = run_check_overrides(recipe, out->items, out->n, err);
  /* what each changes in the command of the first sweep point, in order */
  struct recipe_cmd cmd;
  bool have_cmd = rc == 0 && recipe && recipe->n_points > 0 &&
                  recipe_server_cmd(recipe, NULL, &cmd, NULL) == 0;
  for (size_t i = 0; rc == 0 && i < out->n; i++) {
    char key[128];
    const char *value;
    run_override_split(out->items[i], key, sizeof key, &value, NULL);
    const char *was = have_cmd ? recipe_cmd_knob(&cmd, key) : NULL;
    const char *now = *value ? value : "(no value)";
    /* the engine's own flag: kv-cache is --gpu-memory-utilization on vLLM */
    const struct eng_flag *row = recipe ? eng_flag_lookup(eng_find(recipe->engine), key,
                                                          strlen(key))
                                        : NULL;
    char *flag = row ? xstrdup(eng_flag_spelling(row, key, strlen(key))) : xasprintf("--%s", key);
    if (!have_cmd)
      out->changes[i] = xasprintf("%s %s", flag, value);
    else if (was)
      out->changes[i] = xasprintf("%s %s -> %s", flag, *was ? was : "(no value)", now);
    else
      out->changes[i] = xasprintf("%s %s (added)", flag, value);
    free(flag);
    if (have_cmd)
      recipe_cmd_apply_override(&cmd, out->items[i], NULL);
  }
  if (have_cmd)
    recipe_cmd_fini(&cmd);
  if (rc == 0 && (out->num_prompts || out->isl || out->osl)) {
    struct sbuf sb = {0};
    sbuf_puts(&sb, "benchmark:");
    if (out->num_prompts)
      sbuf_printf(&sb, " num-prompts %d", out->num_prompts);
    if (out->isl)
      sbuf_printf(&sb, "%s isl %d", out->num_prompts ? "," : "", out->isl);
    if (out->osl)
      sbuf_printf(&sb, "%s osl %d", out->num_prompts || out->isl ? "," : "", out->osl);
    out->bench_line = sbuf_take(&sb);
  }
  if (rc != 0)
    ui_overrides_fini(out);
  return rc;
}
