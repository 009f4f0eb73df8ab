/* run: `servetop export RUN --inferencex` — a tuned run as an InferenceX
 * master-config entry and a launch-script fragment. */
#include "run/run.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

/* The entry's keys (image, model, ...), its scenario with the isl / osl measured, and the start
 * of its search-space row ("{ tp: T, ep: E"), as both exports write them. */
static void put_entry_head(struct sbuf *y, const cJSON *recipe) {
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
  const cJSON *first = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(recipe, "points"), 0);
  sbuf_printf(y, "  multinode: false\n  scenarios:\n    fixed-seq-len:\n    - isl: %d\n      osl: "
                 "%d\n      search-space:\n      - { tp: %d",
              jint(recipe, "measured_isl", jint(recipe, "isl", 0)),
              jint(recipe, "measured_osl", jint(recipe, "osl", 0)), jint(first, "tp", 1));
  if (jint(first, "ep", 0) > 0)
    sbuf_printf(y, ", ep: %d", jint(first, "ep", 1));
}

/* concs (n_concs > 0): the conc-list to write instead of the concurrencies the run measured
 * to the end (a tune's winner: its best concurrency). */
static void build_yaml(struct sbuf *y, const cJSON *recipe, const cJSON *manifest,
                       const char *run_dir, const int *concs, int n_concs) {
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
  put_entry_head(y, recipe);
  const cJSON *first = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(recipe, "points"), 0);
  if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(first, "dp_attn")))
    sbuf_puts(y, ", dp-attn: true");
  sbuf_puts(y, ", conc-list: [");
  /* only the concurrencies this run measured to the end (each once) */
  int n_conc = 0, seen[256];
  const cJSON *results = cJSON_GetObjectItemCaseSensitive(manifest, "results");
  const cJSON *item;
  for (int k = 0; k < n_concs; k++)
    sbuf_printf(y, "%s%d", k ? ", " : " ", concs[k]);
  if (n_concs > 0)
    results = NULL;
  cJSON_ArrayForEach(item, results) {
    const char *end = jstr(item, "end");
    int conc = jint(item, "concurrency", 0);
    bool dup = false;
    for (int k = 0; k < n_conc && !dup; k++)
      dup = seen[k] == conc;
    if (!end || strcmp(end, "done") != 0 || dup || n_conc == (int)ST_ARRAY_LEN(seen))
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

/* Points measured to the end (manifest "results" with end "done"). */
static int points_done(const cJSON *manifest) {
  int n = 0;
  const cJSON *item;
  cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(manifest, "results")) {
    const char *end = jstr(item, "end");
    n += end && strcmp(end, "done") == 0;
  }
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

/* resolved: the arguments as the server was launched (a tune launches each configuration
 * once, its $CONC flags at the highest concurrency searched), else as the recipe writes them. */
static void build_script(struct sbuf *sh, const cJSON *recipe, const cJSON *manifest,
                         const char *run_dir, bool resolved) {
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
  if (resolved) {
    argv = cJSON_GetObjectItemCaseSensitive(server, "argv");
  } else if (!cJSON_IsArray(argv)) {
    argv = cJSON_GetObjectItemCaseSensitive(server, "argv");
    sbuf_puts(sh, "# NOTE: this run folder predates argv_template: values that follow the\n"
                  "# concurrency ($CONC) are the last point's numbers; check them.\n");
  }
  const cJSON *derived = cJSON_GetObjectItemCaseSensitive(server, "conc_derived_flags");
  if (!resolved && cJSON_GetArraySize(derived) > 0) {
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

/* recipe.json and manifest.json of an exportable run: 0 with both, 1 refused (err: why), -1
 * unreadable. */
static int load_exportable(const char *run_dir, bool allow_simulated, cJSON **recipe_out,
                           cJSON **manifest_out, struct st_err *err) {
  cJSON *recipe = load_json(run_dir, "recipe.json", err);
  if (!recipe)
    return err_prefixf(err, "%s: not an exportable run folder", run_dir);
  cJSON *manifest = load_json(run_dir, "manifest.json", err);
  if (!manifest) {
    cJSON_Delete(recipe);
    return err_prefixf(err, "%s: not an exportable run folder", run_dir);
  }
  char why[512];
  int rc = 0;
  if (refusal(recipe, manifest, why, sizeof why)) {
    err_setf(err, "%s: not exported: %s", run_dir, why);
    rc = 1;
  } else if (!allow_simulated && run_simulated(recipe, manifest)) {
    err_setf(err, "%s: not exported: the run is SIMULATED (servetop sim, not hardware): its knobs "
                  "were not tuned on a real server (--allow-simulated exports it, marked as such)",
             run_dir);
    rc = 1;
  }
  if (rc != 0) {
    cJSON_Delete(recipe);
    cJSON_Delete(manifest);
    return rc;
  }
  *recipe_out = recipe;
  *manifest_out = manifest;
  return 0;
}

int run_export_inferencex_opts(const char *run_dir, bool allow_simulated, char **master_yaml_out,
                               char **script_out, struct st_err *err) {
  cJSON *recipe, *manifest;
  int rc = load_exportable(run_dir, allow_simulated, &recipe, &manifest, err);
  if (rc != 0)
    return rc;
  struct sbuf y = {0}, sh = {0};
  build_yaml(&y, recipe, manifest, run_dir, NULL, 0);
  build_script(&sh, recipe, manifest, run_dir, false);
  cJSON_Delete(recipe);
  cJSON_Delete(manifest);
  *master_yaml_out = sbuf_take(&y);
  *script_out = sbuf_take(&sh);
  return 0;
}

/* ---------------------------------------------------------------- a tune's winner */
bool run_is_tune_dir(const char *dir) {
  char *path = path_join_alloc(dir, "tune.json");
  struct stat st;
  bool yes = stat(path, &st) == 0 && S_ISREG(st.st_mode);
  free(path);
  return yes;
}

/* The winner as a servetop recipe (the format of configs/): its server command as launched,
 * the workload measured, its best concurrency as the sweep. */
static void build_recipe(struct sbuf *y, const cJSON *recipe, const cJSON *tune,
                         const cJSON *winner, int best_conc, bool simulated) {
  const cJSON *server = cJSON_GetObjectItemCaseSensitive(recipe, "server");
  const cJSON *good = cJSON_GetObjectItemCaseSensitive(winner, "goodput");
  const cJSON *knobs = cJSON_GetObjectItemCaseSensitive(winner, "knobs");
  sbuf_printf(y, "# servetop tune's winner (tune of %s): ", jstr(tune, "recipe"));
  const cJSON *k;
  cJSON_ArrayForEach(k, knobs) {
    if (cJSON_IsString(k))
      sbuf_printf(y, "%s=%s ", k->string, k->valuestring);
  }
  const cJSON *gp = cJSON_GetObjectItemCaseSensitive(good, "point");
  const cJSON *glo = cJSON_GetObjectItemCaseSensitive(good, "lo");
  const cJSON *ghi = cJSON_GetObjectItemCaseSensitive(good, "hi");
  sbuf_printf(y, "at concurrency %d", best_conc);
  if (cJSON_IsNumber(gp))
    sbuf_printf(y, ", goodput %.1f %s", gp->valuedouble,
                jstr(tune, "throughput") ? jstr(tune, "throughput") : "tok/s");
  if (cJSON_IsNumber(glo) && cJSON_IsNumber(ghi))
    sbuf_printf(y, " [%.1f, %.1f] (95%%)", glo->valuedouble, ghi->valuedouble);
  sbuf_putc(y, '\n');
  if (simulated)
    sbuf_puts(y, "# SIMULATED: measured on servetop sim, not on hardware\n");
  char name[200];
  snprintf(name, sizeof name, "%s-tuned", jstr(recipe, "name") ? jstr(recipe, "name") : "recipe");
  put_yaml_scalar(y, name);
  sbuf_puts(y, ":\n");
  put_entry_head(y, recipe);
  sbuf_printf(y, ", conc-list: [%d]", best_conc);
  const char *spec = jstr(recipe, "spec_decoding");
  if (spec && strcmp(spec, "none") != 0)
    sbuf_printf(y, ", spec-decoding: %s", spec);
  sbuf_printf(y, " }\n  server:\n    engine: %s\n",
              jstr(server, "recipe_engine") ? jstr(server, "recipe_engine") : "?");
  const cJSON *env = cJSON_GetObjectItemCaseSensitive(server, "env");
  if (cJSON_GetArraySize(env) > 0) {
    sbuf_puts(y, "    env:\n");
    const cJSON *e;
    cJSON_ArrayForEach(e, env) {
      const char *eq = cJSON_IsString(e) ? strchr(e->valuestring, '=') : NULL;
      if (!eq)
        continue;
      sbuf_printf(y, "      %.*s: ", (int)(eq - e->valuestring), e->valuestring);
      sbuf_putc(y, '"');
      for (const char *p = eq + 1; *p; p++) {
        if (*p == '"' || *p == '\\')
          sbuf_putc(y, '\\');
        sbuf_putc(y, *p);
      }
      sbuf_puts(y, "\"\n");
    }
  }
  sbuf_puts(y, "    argv:\n");
  const cJSON *argv = cJSON_GetObjectItemCaseSensitive(server, "argv");
  int n = cJSON_GetArraySize(argv);
  for (int i = 0; i < n; i++) {
    const char *arg = cJSON_GetArrayItem(argv, i)->valuestring;
    if (!arg)
      continue;
    const char *next = i + 1 < n ? cJSON_GetArrayItem(argv, i + 1)->valuestring : NULL;
    bool pair = arg[0] == '-' && next && next[0] != '-';
    const char *var = workflow_var_for(arg);
    sbuf_puts(y, "      - ");
    struct sbuf line = {0};
    sbuf_puts(&line, arg);
    if (pair) {
      sbuf_putc(&line, ' ');
      sbuf_puts(&line, strcmp(arg, "--host") == 0 ? "0.0.0.0" : var ? var : next);
      i++;
    }
    put_yaml_scalar(y, line.data);
    sbuf_free(&line);
    sbuf_putc(y, '\n');
  }
  const cJSON *rr = cJSON_GetObjectItemCaseSensitive(recipe, "random_range_ratio");
  sbuf_printf(y, "  benchmark:\n    random-range-ratio: %g\n    use-chat-template: %s\n"
                 "    num-prompts-factor: 10\n    backend: vllm\n",
              cJSON_IsNumber(rr) ? rr->valuedouble : 0.8,
              cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(recipe, "use_chat_template"))
                  ? "true"
                  : "false");
}

int run_export_tune(const char *tune_dir, bool allow_simulated, char **recipe_yaml_out,
                    char **master_yaml_out, char **script_out, struct st_err *err) {
  cJSON *tune = load_json(tune_dir, "tune.json", err);
  if (!tune)
    return err_prefixf(err, "%s: not a tune folder", tune_dir);
  const cJSON *w = cJSON_GetObjectItemCaseSensitive(tune, "winner");
  const cJSON *configs = cJSON_GetObjectItemCaseSensitive(tune, "configs");
  const cJSON *winner = cJSON_IsNumber(w) ? cJSON_GetArrayItem(configs, w->valueint) : NULL;
  const char *run_dir = jstr(winner, "run_dir");
  int best = jint(winner, "best_conc", 0);
  if (!winner || !run_dir || best < 1) {
    err_setf(err, "%s: not exported: the tune has no winner (%s: %s)", tune_dir,
             jstr(tune, "status") ? jstr(tune, "status") : "no status",
             jstr(tune, "message") ? jstr(tune, "message") : "");
    cJSON_Delete(tune);
    return 1;
  }
  /* the configuration's run folder is in the tune folder: found there when it moved */
  const char *leaf = strrchr(run_dir, '/');
  char *inside = path_join_alloc(tune_dir, leaf ? leaf + 1 : run_dir);
  struct stat st;
  if (stat(inside, &st) == 0 && S_ISDIR(st.st_mode))
    run_dir = inside;
  cJSON *recipe, *manifest;
  int rc = load_exportable(run_dir, allow_simulated, &recipe, &manifest, err);
  if (rc != 0) {
    free(inside);
    cJSON_Delete(tune);
    return rc;
  }
  struct sbuf r = {0}, y = {0}, sh = {0};
  bool simulated = run_simulated(recipe, manifest);
  build_recipe(&r, recipe, tune, winner, best, simulated);
  sbuf_printf(&y, "# The winner of servetop tune %s (its best concurrency %d).\n", tune_dir, best);
  build_yaml(&y, recipe, manifest, run_dir, &best, 1);
  build_script(&sh, recipe, manifest, run_dir, true);
  cJSON_Delete(recipe);
  cJSON_Delete(manifest);
  cJSON_Delete(tune);
  free(inside);
  *recipe_yaml_out = sbuf_take(&r);
  *master_yaml_out = sbuf_take(&y);
  *script_out = sbuf_take(&sh);
  return 0;
}
