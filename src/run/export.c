/* run: `servetop export RUN --inferencex` — a tuned run as an InferenceX
 * master-config entry and a launch-script fragment. */
#include "run/run.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static cJSON *load_json(const char *dir, const char *leaf, struct st_err *err) {
  char *path = path_join_alloc(dir, leaf);
  char *text = file_read_all(path, NULL, err);
  cJSON *doc = text ? cJSON_Parse(text) : NULL;
  if (text && !doc)
    err_setf(err, "%s: not valid JSON", path);
  free(text);
  free(path);
  return doc;
}

static const char *jstr(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int jint(const cJSON *o, const char *key, int fallback) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsNumber(v) ? v->valueint : fallback;
}

/* A YAML scalar: plain when safe, else double-quoted. */
static void put_yaml_scalar(struct sbuf *sb, const char *s) {
  bool plain = *s && !strchr("-?:,[]{}#&*!|>'\"%@`", s[0]);
  for (const char *p = s; *p && plain; p++) {
    bool colon_inside = *p == ':' && p[1] != ' ' && p[1] != '\0'; /* "image:tag" */
    if (!(isalnum((unsigned char)*p) || strchr("._/-+", *p) || colon_inside))
      plain = false;
  }
  if (plain) {
    sbuf_puts(sb, s);
    return;
  }
  sbuf_putc(sb, '"');
  for (const char *p = s; *p; p++) {
    if (*p == '"' || *p == '\\')
      sbuf_putc(sb, '\\');
    sbuf_putc(sb, *p);
  }
  sbuf_putc(sb, '"');
}

/* The InferenceX workflow variable a flag's value stands for, if any. */
static const char *workflow_var_for(const char *flag) {
  static const struct {
    const char *flag, *var;
  } vars[] = {
      {"--model-path", "$MODEL"},   {"--model", "$MODEL"},      {"--port", "$PORT"},
      {"--tp", "$TP"},              {"--tp-size", "$TP"},        {"--tensor-parallel-size", "$TP"},
      {"--ep-size", "$EP_SIZE"},    {"--ep", "$EP_SIZE"},        {"--expert-parallel-size", "$EP_SIZE"},
      {"--context-length", "$MAX_MODEL_LEN"}, {"--max-model-len", "$MAX_MODEL_LEN"},
  };
  for (size_t i = 0; i < ST_ARRAY_LEN(vars); i++)
    if (strcmp(flag, vars[i].flag) == 0)
      return vars[i].var;
  return NULL;
}

/* Whether servetop sim produced the run's figures (manifest's or recipe.json's server). */
static bool run_simulated(const cJSON *recipe, const cJSON *manifest) {
  const cJSON *ms = cJSON_GetObjectItemCaseSensitive(manifest, "server");
  if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ms, "simulated")))
    return true;
  const char *launched = jstr(cJSON_GetObjectItemCaseSensitive(recipe, "server"), "launched_engine");
  const struct eng_ops *e = launched ? eng_find(launched) : NULL;
  return e && e->simulated;
}

/* A manifest result measured to the end with the knobs the run ended with (those
 * recipe.json's command has): a segment before a restart had others (an entry from before
 * segments says none: it counts). */
static bool done_with_run_knobs(const cJSON *item, const cJSON *manifest) {
  const char *end = jstr(item, "end");
  const cJSON *had = cJSON_GetObjectItemCaseSensitive(item, "overrides");
  return end && strcmp(end, "done") == 0 &&
         (!had || cJSON_Compare(had, cJSON_GetObjectItemCaseSensitive(manifest, "overrides"),
                                true));
}

static void build_yaml(struct sbuf *y, const cJSON *recipe, const cJSON *manifest,
                       const char *run_dir) {
  const char *entry = jstr(recipe, "entry") ? jstr(recipe, "entry") : jstr(recipe, "name");
  const cJSON *overrides = cJSON_GetObjectItemCaseSensitive(manifest, "overrides");
  sbuf_printf(y, "# Exported by servetop from run %s\n", run_dir);
  bool simulated = run_simulated(recipe, manifest);
  sbuf_printf(y, "# recipe %s (%s:%d), run status %s%s\n", jstr(recipe, "name"),
              jstr(recipe, "file") ? jstr(recipe, "file") : "?", jint(recipe, "line", 0),
              jstr(manifest, "status") ? jstr(manifest, "status") : "?",
              simulated ? " (SIMULATED)" : "");
  if (simulated)
    sbuf_puts(y, "# SIMULATED: measured on servetop sim, not on hardware: these knobs were not "
                 "tuned on a real server\n");
  /* the workload measured (the run's --isl / --osl), not only the recipe's scenario */
  int isl = jint(recipe, "measured_isl", jint(recipe, "isl", 0));
  int osl = jint(recipe, "measured_osl", jint(recipe, "osl", 0));
  if (isl != jint(recipe, "isl", 0) || osl != jint(recipe, "osl", 0))
    sbuf_printf(y, "# measured at isl %d / osl %d (the recipe's scenario is isl %d / osl %d)\n",
                isl, osl, jint(recipe, "isl", 0), jint(recipe, "osl", 0));
  if (cJSON_GetArraySize(overrides) > 0) {
    sbuf_puts(y, "# knobs changed from the recipe:");
    const cJSON *o;
    cJSON_ArrayForEach(o, overrides) {
      if (cJSON_IsString(o))
        sbuf_printf(y, " %s", o->valuestring);
    }
    sbuf_putc(y, '\n');
  }
  put_yaml_scalar(y, entry ? entry : "servetop-export");
  sbuf_puts(y, ":\n");
  static const char *const keys[][2] = {{"image", "image"},         {"model", "model"},
                                        {"model-prefix", "model_prefix"}, {"runner", "runner"},
                                        {"precision", "precision"}, {"framework", "framework"}};
  for (size_t i = 0; i < ST_ARRAY_LEN(keys); i++) {
    const char *v = jstr(recipe, keys[i][1]);
    if (!v)
      continue;
    sbuf_printf(y, "  %s: ", keys[i][0]);
    put_yaml_scalar(y, v);
    sbuf_putc(y, '\n');
  }
  sbuf_puts(y, "  multinode: false\n  scenarios:\n    fixed-seq-len:\n");
  sbuf_printf(y, "    - isl: %d\n      osl: %d\n      search-space:\n", isl, osl);
  const cJSON *points = cJSON_GetObjectItemCaseSensitive(recipe, "points");
  const cJSON *first = cJSON_GetArrayItem(points, 0);
  sbuf_printf(y, "      - { tp: %d", jint(first, "tp", 1));
  if (jint(first, "ep", 0) > 0)
    sbuf_printf(y, ", ep: %d", jint(first, "ep", 1));
  if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(first, "dp_attn")))
    sbuf_puts(y, ", dp-attn: true");
  sbuf_puts(y, ", conc-list: [");
  /* only the concurrencies this run measured to the end (each once) */
  int n_conc = 0, seen[256];
  const cJSON *results = cJSON_GetObjectItemCaseSensitive(manifest, "results");
  const cJSON *item;
  cJSON_ArrayForEach(item, results) {
    int conc = jint(item, "concurrency", 0);
    bool dup = false;
    for (int k = 0; k < n_conc && !dup; k++)
      dup = seen[k] == conc;
    if (!done_with_run_knobs(item, manifest) || dup || n_conc == (int)ST_ARRAY_LEN(seen))
      continue;
    seen[n_conc] = conc;
    sbuf_printf(y, "%s%d", n_conc++ ? ", " : " ", conc);
  }
  sbuf_puts(y, " ]");
  const char *spec = jstr(recipe, "spec_decoding");
  if (spec && strcmp(spec, "none") != 0)
    sbuf_printf(y, ", spec-decoding: %s", spec);
  sbuf_puts(y, " }\n");
}

/* A shell word; one holding the template's $CONC is double-quoted so the
 * launch script's $CONC expands (every other special character escaped). */
static void put_word(struct sbuf *sh, const char *w) {
  if (!strstr(w, "$CONC")) {
    sbuf_put_shell_word(sh, w);
    return;
  }
  sbuf_putc(sh, '"');
  for (const char *p = w; *p; p++) {
    if (strncmp(p, "$CONC", 5) == 0) {
      sbuf_puts(sh, "$CONC");
      p += 4;
      continue;
    }
    if (strchr("\"\\$`", *p))
      sbuf_putc(sh, '\\');
    sbuf_putc(sh, *p);
  }
  sbuf_putc(sh, '"');
}

/* Points measured to the end with the run's knobs (manifest "results" with end "done"). */
static int points_done(const cJSON *manifest) {
  int n = 0;
  const cJSON *item;
  cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(manifest, "results"))
    n += done_with_run_knobs(item, manifest);
  return n;
}

/* Why this run cannot be exported (NULL: it can): knobs from a run that did
 * not measure, or measured a mislabelled server, are not tuned knobs. */
static const char *refusal(const cJSON *recipe, const cJSON *manifest, char *buf, size_t n) {
  const char *status = jstr(manifest, "status");
  const char *attached = jstr(cJSON_GetObjectItemCaseSensitive(recipe, "server"), "attached_url");
  if (attached) {
    snprintf(buf, n, "servetop did not launch the server of this run (attached to %.200s): it has "
                     "no server command to export", attached);
    return buf;
  }
  const char *message = jstr(manifest, "message");
  if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(manifest, "mislabelled")) ||
      (status && strcmp(status, "mislabelled") == 0)) {
    snprintf(buf, n, "the run is mislabelled (%.300s): its knobs are not the recipe it says",
             message ? message : "the server's speculative decoding disagrees with the label");
    return buf;
  }
  if (!status || (strcmp(status, "ok") != 0 && strcmp(status, "interrupted") != 0)) {
    snprintf(buf, n, "the run %s (%.300s): a failed run's knobs are not tuned ones",
             status ? status : "has no status", message ? message : "no message");
    return buf;
  }
  if (points_done(manifest) == 0) {
    snprintf(buf, n, "no point was measured to the end (%.300s): nothing to export",
             message ? message : status);
    return buf;
  }
  return NULL;
}

static void build_script(struct sbuf *sh, const cJSON *recipe, const cJSON *manifest,
                         const char *run_dir) {
  const cJSON *server = cJSON_GetObjectItemCaseSensitive(recipe, "server");
  const char *program = jstr(server, "program");
  const char *engine = jstr(server, "recipe_engine");
  const struct eng_ops *recipe_engine = eng_find(engine);
  bool model_positional = recipe_engine && recipe_engine->model_positional; /* vllm serve MODEL */
  if (!program)
    program = eng_program_of(engine);
  sbuf_printf(sh, "# Server launch exported by servetop from run %s (recipe %s).\n", run_dir,
              jstr(recipe, "name"));
  sbuf_puts(sh, "# Paste in place of the launch script's server command; values are the tuned\n"
                "# ones, topology and ports come from the workflow's environment.\n");
  if (run_simulated(recipe, manifest))
    sbuf_puts(sh, "# SIMULATED: measured on servetop sim, not on hardware.\n");
  const cJSON *env = cJSON_GetObjectItemCaseSensitive(server, "env");
  const cJSON *e;
  cJSON_ArrayForEach(e, env) {
    if (!cJSON_IsString(e))
      continue;
    sbuf_puts(sh, "export ");
    sbuf_put_shell_assignment(sh, e->valuestring);
    sbuf_putc(sh, '\n');
  }
  sbuf_puts(sh, program);
  /* the arguments with the sweep's concurrency as $CONC (what the recipe
   * writes), not the number of the point that ran last */
  const cJSON *argv = cJSON_GetObjectItemCaseSensitive(server, "argv_template");
  if (!cJSON_IsArray(argv)) {
    argv = cJSON_GetObjectItemCaseSensitive(server, "argv");
    sbuf_puts(sh, "# NOTE: this run folder predates argv_template: values that follow the\n"
                  "# concurrency ($CONC) are the last point's numbers; check them.\n");
  }
  const cJSON *derived = cJSON_GetObjectItemCaseSensitive(server, "conc_derived_flags");
  if (cJSON_GetArraySize(derived) > 0) {
    sbuf_puts(sh, "# NOTE: these follow the concurrency in the recipe in a way servetop writes as\n"
                  "# the last point's value:");
    const cJSON *d;
    cJSON_ArrayForEach(d, derived) {
      if (cJSON_IsString(d))
        sbuf_printf(sh, " %s", d->valuestring);
    }
    sbuf_putc(sh, '\n');
  }
  int n = cJSON_GetArraySize(argv);
  for (int i = 0; i < n; i++) {
    const char *arg = cJSON_GetArrayItem(argv, i)->valuestring;
    if (!arg)
      continue;
    sbuf_puts(sh, " \\\n  ");
    if (i == 0 && model_positional && arg[0] != '-') {
      sbuf_puts(sh, "\"$MODEL\"");
      continue;
    }
    const char *var = workflow_var_for(arg);
    if (strcmp(arg, "--host") == 0 && i + 1 < n) {
      sbuf_puts(sh, "--host 0.0.0.0");
      i++;
      continue;
    }
    put_word(sh, arg);
    if (arg[0] == '-' && i + 1 < n) {
      const char *next = cJSON_GetArrayItem(argv, i + 1)->valuestring;
      if (next && next[0] != '-') {
        sbuf_putc(sh, ' ');
        if (var)
          sbuf_printf(sh, "\"%s\"", var);
        else
          put_word(sh, next);
        i++;
      }
    }
  }
  sbuf_puts(sh, " \\\n  > \"$SERVER_LOG\" 2>&1 &\nSERVER_PID=$!\n");
}

int run_export_inferencex(const char *run_dir, char **master_yaml_out, char **script_out,
                          struct st_err *err) {
  return run_export_inferencex_opts(run_dir, false, master_yaml_out, script_out, err);
}

int run_export_inferencex_opts(const char *run_dir, bool allow_simulated, char **master_yaml_out,
                               char **script_out, struct st_err *err) {
  cJSON *recipe = load_json(run_dir, "recipe.json", err);
  if (!recipe)
    return err_prefixf(err, "%s: not an exportable run folder", run_dir);
  cJSON *manifest = load_json(run_dir, "manifest.json", err);
  if (!manifest) {
    cJSON_Delete(recipe);
    return err_prefixf(err, "%s: not an exportable run folder", run_dir);
  }
  char why[512];
  if (refusal(recipe, manifest, why, sizeof why)) {
    err_setf(err, "%s: not exported: %s", run_dir, why);
    cJSON_Delete(recipe);
    cJSON_Delete(manifest);
    return 1;
  }
  if (!allow_simulated && run_simulated(recipe, manifest)) {
    err_setf(err, "%s: not exported: the run is SIMULATED (servetop sim, not hardware): its knobs "
                  "were not tuned on a real server (--allow-simulated exports it, marked as such)",
             run_dir);
    cJSON_Delete(recipe);
    cJSON_Delete(manifest);
    return 1;
  }
  struct sbuf y = {0}, sh = {0};
  build_yaml(&y, recipe, manifest, run_dir);
  build_script(&sh, recipe, manifest, run_dir);
  cJSON_Delete(recipe);
  cJSON_Delete(manifest);
  *master_yaml_out = sbuf_take(&y);
  *script_out = sbuf_take(&sh);
  return 0;
}
