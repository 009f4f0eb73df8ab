/* Trust: the environment variables that make a launched server load or run
 * code from outside its image (the dynamic loader's, Python's, the shell's).
 * A recipe from a checkout someone else wrote that sets them is shown as such
 * before launch: a doctor finding (lint L24) and a line in the launch form. */
#include "recipe/recipe_internal.h"

#include <stdio.h>
#include <string.h>

static const char *const loader_vars[] = {
    "LD_PRELOAD",  "LD_LIBRARY_PATH", "LD_AUDIT",      "LD_BIND_NOW",   "LD_DEBUG_OUTPUT",
    "LD_PROFILE",  "PYTHONSTARTUP",   "PYTHONPATH",    "PYTHONHOME",    "PYTHONUSERBASE",
    "PYTHONINSPECT", "PYTHONBREAKPOINT", "PYTHONEXECUTABLE", "BASH_ENV", "ENV",
    "PERL5LIB",    "PERL5OPT",        "NODE_OPTIONS",  "GCONV_PATH",    "MALLOC_CONF",
    "HOSTALIASES", "TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR", "PATH",
};

bool recipe_env_is_loader(const char *name_value) {
  size_t len = strcspn(name_value, "=");
  for (size_t i = 0; i < ST_ARRAY_LEN(loader_vars); i++)
    if (strlen(loader_vars[i]) == len && strncmp(loader_vars[i], name_value, len) == 0)
      return true;
  return false;
}

size_t recipe_loader_env(const struct recipe_cmd *cmd, char *buf, size_t n) {
  size_t count = 0, used = 0;
  if (n)
    buf[0] = '\0';
  for (size_t i = 0; i < cmd->n_env; i++) {
    const char *e = cmd->env[i];
    if (!recipe_env_is_loader(e))
      continue;
    int len = (int)strcspn(e, "=");
    bool seen = false; /* once per name (the last assignment wins anyway) */
    for (size_t k = 0; k < i && !seen; k++)
      seen = recipe_env_is_loader(cmd->env[k]) && strncmp(cmd->env[k], e, (size_t)len + 1) == 0;
    if (seen)
      continue;
    count++;
    if (n && used < n) {
      int w = snprintf(buf + used, n - used, "%s%.*s", used ? ", " : "", len, e);
      used += w > 0 ? (size_t)w : 0;
    }
  }
  return count;
}
