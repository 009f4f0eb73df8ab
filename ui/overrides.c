/* KEY=VALUE overrides: syntax and a check against the recipe (pure). */
#include "overrides.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "ui_util.h"

int ui_override_split(const char *assignment, char *key, size_t key_n, const char **value,
                      struct st_err *err) {
  const char *eq = strchr(assignment, '=');
  if (!eq)
    return err_setf(err, "'%s': write KEY=VALUE (e.g. max-running-requests=64)", assignment);
  const char *k = assignment;
  while (*k == '-')
    k++;
  size_t len = (size_t)(eq - k);
  if (len == 0)
    return err_setf(err, "'%s': no flag name before '='", assignment);
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)k[i];
    if (!isalnum(c) && c != '-' && c != '_' && c != '.')
      return err_setf(err, "'%s': '%c' cannot be in a flag name", assignment, c);
  }
  if (len >= key_n)
    return err_setf(err, "'%s': flag name longer than %zu characters", assignment, key_n - 1);
  memcpy(key, k, len);
  key[len] = '\0';
  *value = eq + 1;
  return 0;
}

void ui_overrides_fini(struct ui_overrides *o) {
  for (size_t i = 0; i < o->n; i++) {
    free(o->items[i]);
    free(o->changes[i]);
  }
  free(o->items);
  free(o->changes);
  memset(o, 0, sizeof *o);
}

int ui_overrides_parse(const char *text, const struct recipe *recipe, struct ui_overrides *out,
                       struct st_err *err) {
  memset(out, 0, sizeof *out);
  struct recipe_cmd cmd;
  bool have_cmd = false;
  if (recipe && recipe->n_points > 0) {
    if (recipe_server_cmd(recipe, NULL, &cmd, err) != 0)
      return err_prefixf(err, "recipe %s", recipe->name);
    have_cmd = true;
  }
  char *words = xstrdup(text);
  char *save = NULL;
  int rc = 0;
  for (char *w = strtok_r(words, " \t", &save); w && rc == 0; w = strtok_r(NULL, " \t", &save)) {
    char key[128];
    const char *value;
    if (ui_override_split(w, key, sizeof key, &value, err) != 0) {
      rc = -1;
      break;
    }
    char *change;
    if (have_cmd) {
      const char *was = recipe_cmd_knob(&cmd, key);
      change = was ? xasprintf("--%s %s -> %s", key, *was ? was : "(no value)", *value ? value : "(no value)")
                   : xasprintf("--%s %s (added)", key, value);
      if (recipe_cmd_apply_override(&cmd, w, err) != 0) {
        free(change);
        rc = -1;
        break;
      }
    } else {
      change = xasprintf("--%s %s", key, value);
    }
    out->items = xreallocarray(out->items, out->n + 1, sizeof *out->items);
    out->changes = xreallocarray(out->changes, out->n + 1, sizeof *out->changes);
    out->items[out->n] = xstrdup(w);
    out->changes[out->n] = change;
    out->n++;
  }
  if (rc == 0 && have_cmd) {
    for (size_t i = 0; i < cmd.argc; i++)
      if (strstr(cmd.argv[i], "<unresolved:")) {
        rc = err_setf(err, "%s:%d: the server command has a piece servetop cannot resolve: %s",
                      cmd.file ? cmd.file : recipe->file, cmd.line, cmd.argv[i]);
        break;
      }
  }
  free(words);
  if (have_cmd)
    recipe_cmd_fini(&cmd);
  if (rc != 0)
    ui_overrides_fini(out);
  return rc;
}
