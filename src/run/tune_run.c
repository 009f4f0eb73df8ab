/* run: the driver of `servetop tune` (run.h, "tune"): the search of src/tune on real launches.
 * One run (points on demand) per server configuration, a measured point per concurrency the
 * search asks for, the point's figures with their 95% intervals as a struct tune_point, the
 * tune folder (tune.json after every point, report.md at the end). docs/tune.md. */
#include "run/run_internal.h"

#include "report/report.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdarg.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* One measured point's place on disk (by probe index). */
struct tune_probe_file {
  char run_dir[1024];
  char result_file[64];
};

struct run_tune {
  struct run_tune_config cfg; /* borrowed pointers, as the caller's */
  const struct eng_ops *engine;
  struct tune_space space;
  int n_gpus;
  char engine_why[512];

  pthread_t thread;
  bool thread_started;
  pthread_mutex_t lock; /* guards st, so_far, cfg_dirs below */
  struct run_tune_status st;
  struct tune_result so_far;
  char (*cfg_dirs)[1024]; /* run folder of each configuration visited (by index) */
  size_t n_cfg_dirs;

  atomic_int stop; /* run_tune_stop (signal handlers) or the budget; lock-free */
  atomic_int budget_hit;
  int64_t started_ns;
  double started_unix_s;

  /* tune thread only */
  struct run *run;          /* the running configuration's run */
  struct tune_config run_cfg;
  long run_index;           /* its index into the result's configs */
  struct tune_probe_file *probe_files;
  size_t n_probe_files;
  struct tune_config *seen; /* the configurations measured, in the search's order */
  size_t n_seen;
  double point_s_sum;       /* measured points' wall time (ETA) */
  int n_point_s;
  struct tune_result final;
  bool have_final;
  char chart_error[sizeof(struct st_err)]; /* tune.png / tune.svg could not be written: why */
};

static double elapsed_s(const struct run_tune *t) {
  return (double)(clock_mono_ns() - t->started_ns) / 1e9;
}

/* ---------------------------------------------------------------- the figures of a point */
static void estimate_of(const struct fig_set *f, enum fig_id id, enum fig_stat stat,
                        struct tune_estimate *e) {
  e->point = fig_get(f, id, stat);
  if (!fig_get_ci(f, id, stat, &e->lo, &e->hi))
    e->lo = e->hi = (double)NAN;
}

/* A saved point as the search reads it: TTFT / TPOT / E2EL / ITL p99 and the tok/s per user
 * (FIG_INTERACTIVITY, as fig_set_derive makes it from TPOT p50, with its interval), each with
 * its 95% interval, and the output throughput (per GPU when n_gpus > 0). A point with failed
 * requests, or cut before its end, never holds: its latencies' upper bounds are infinite. */
void run_tune_point_from_figs(const struct snap_point_result *p, int n_gpus,
                              struct tune_point *out) {
  struct fig_set derived = p->figs; /* per GPU and the tok/s per user: one derivation */
  fig_set_derive(&derived, n_gpus);
  const struct fig_set *f = &derived;
  estimate_of(f, FIG_TTFT, FIG_STAT_P99, &out->figure[TUNE_TTFT_P99_MS]);
  estimate_of(f, FIG_TPOT, FIG_STAT_P99, &out->figure[TUNE_TPOT_P99_MS]);
  estimate_of(f, FIG_E2EL, FIG_STAT_P99, &out->figure[TUNE_E2EL_P99_MS]);
  estimate_of(f, FIG_ITL, FIG_STAT_P99, &out->figure[TUNE_ITL_P99_MS]);
  struct tune_estimate *user = &out->figure[TUNE_MIN_TOK_S_PER_USER];
  estimate_of(f, FIG_INTERACTIVITY, FIG_VALUE, user);
  estimate_of(f, n_gpus > 0 ? FIG_OUTPUT_TPUT_PER_GPU : FIG_OUTPUT_TPUT, FIG_VALUE,
              &out->throughput);
  /* the latencies at p50 / p90 / p99 too, for the Tune screen's switch (tune.h) */
  static const enum fig_id lat[TUNE_MIN_TOK_S_PER_USER] = {FIG_TTFT, FIG_TPOT, FIG_E2EL, FIG_ITL};
  static const enum fig_stat pct[TUNE_N_STATS] = {FIG_STAT_P50, FIG_STAT_P90, FIG_STAT_P99};
  for (int s = 0; s < TUNE_N_STATS; s++)
    for (int k = 0; k < TUNE_MIN_TOK_S_PER_USER; k++)
      estimate_of(f, lat[k], pct[s], &out->by_stat[s][k]);
  out->by_stat_valid = true;
  if (p->failed > 0 || !p->measured_to_end) {
    for (int k = 0; k < TUNE_N_FIGURES; k++)
      if (k != TUNE_MIN_TOK_S_PER_USER) {
        out->figure[k].hi = (double)INFINITY;
        for (int s = 0; s < TUNE_N_STATS; s++)
          out->by_stat[s][k].hi = (double)INFINITY;
      }
    user->lo = -(double)INFINITY;
  }
}

/* ---------------------------------------------------------------- the space */
static bool is_spec_knob(const struct tune_knob *k) {
  return strcmp(k->name, "spec") == 0;
}

static bool spec_value_on(const char *v) {
  return strcmp(v, "on") == 0 || strcmp(v, "mtp") == 0 || strcmp(v, "1") == 0 ||
         strcmp(v, "true") == 0 || strcmp(v, "draft") == 0;
}

/* The recipe's own value of knob name ("" / NULL when it does not set it). */
static char *recipe_value_alloc(const struct recipe *r, const char *name) {
  struct recipe_cmd cmd;
  struct st_err err;
  if (r->n_points == 0 || recipe_server_cmd(r, &r->points[0], &cmd, &err) != 0)
    return NULL;
  const char *v = recipe_cmd_knob(&cmd, name);
  char *out = v ? xstrdup(v) : NULL;
  recipe_cmd_fini(&cmd);
  return out;
}

/* The start: each knob at the recipe's value (the same string, else the nearest number, else
 * the middle of its values); spec at the recipe's own. */
static size_t start_index(const struct recipe *r, const struct tune_knob *k) {
  if (is_spec_knob(k)) {
    for (size_t i = 0; i < k->n_values; i++)
      if (spec_value_on(k->values[i]) == (r->spec != RECIPE_SPEC_NONE))
        return i;
    return 0;
  }
  char *v = recipe_value_alloc(r, k->name);
  size_t best = k->n_values / 2;
  if (v) {
    char *end;
    double x = strtod(v, &end);
    bool numeric = end != v && *end == '\0';
    double dist = (double)INFINITY;
    for (size_t i = 0; i < k->n_values; i++) {
      if (strcmp(k->values[i], v) == 0) {
        best = i;
        break;
      }
      double y = strtod(k->values[i], &end);
      if (numeric && *end == '\0' && fabs(y - x) < dist) {
        dist = fabs(y - x);
        best = i;
      }
    }
  }
  free(v);
  return best;
}

/* The recipe (or its twin, for spec) and the overrides of one configuration. */
static const struct recipe *config_recipe(const struct run_tune *t, const struct tune_config *c,
                                          char **overrides, size_t *n) {
  const struct recipe *r = t->cfg.recipe;
  *n = 0;
  for (size_t k = 0; k < t->space.n_knobs; k++) {
    const struct tune_knob *kn = &t->space.knobs[k];
    const char *v = kn->values[c->idx[k]];
    if (is_spec_knob(kn)) {
      if (spec_value_on(v) != (t->cfg.recipe->spec != RECIPE_SPEC_NONE))
        r = t->cfg.twin;
      continue;
    }
    overrides[(*n)++] = xasprintf("%s=%s", kn->name, v);
  }
  return r;
}

static int check_knobs(const struct run_tune_config *cfg, struct st_err *err) {
  for (size_t k = 0; k < cfg->n_knobs; k++) {
    const struct tune_knob *kn = &cfg->knobs[k];
    if (is_spec_knob(kn)) {
      for (size_t i = 0; i < kn->n_values; i++)
        if (!spec_value_on(kn->values[i]) && strcmp(kn->values[i], "off") != 0 &&
            strcmp(kn->values[i], "none") != 0 && strcmp(kn->values[i], "0") != 0 &&
            strcmp(kn->values[i], "false") != 0)
          return err_setf(err, "--knob spec=%s: expected off or on", kn->values[i]);
      if (!cfg->twin)
        return err_setf(err, "--knob spec: recipe %s has no %s twin (same model, precision, "
                             "GPU, engine, sequence lengths) to switch speculative decoding with",
                        cfg->recipe->name,
                        cfg->recipe->spec == RECIPE_SPEC_NONE ? "MTP (or draft-model)"
                                                              : "non-MTP");
      continue;
    }
    for (size_t j = 0; j < k; j++)
      if (strcmp(cfg->knobs[j].name, kn->name) == 0)
        return err_setf(err, "--knob %s given twice", kn->name);
    const struct recipe *rs[2] = {cfg->recipe, cfg->twin};
    for (size_t i = 0; i < kn->n_values; i++)
      for (size_t w = 0; w < 2; w++) {
        if (!rs[w] || (w == 1 && !cfg->twin))
          continue;
        char *a = xasprintf("%s=%s", kn->name, kn->values[i]);
        int rc = run_check_overrides(rs[w], &a, 1, err);
        free(a);
        if (rc != 0)
          return err_prefixf(err, "--knob %s", kn->name);
      }
  }
  return 0;
}

/* On servetop sim, a knob must move something the sim models (run_sim_models_change between
 * its first two values), else every configuration differs by noise alone and the search would
 * rank noise. Refused before anything starts. */
static int check_knobs_modelled(const struct run_tune_config *cfg, const struct eng_ops *engine,
                                struct st_err *err) {
  for (size_t k = 0; k < cfg->n_knobs; k++) {
    const struct tune_knob *kn = &cfg->knobs[k];
    if (is_spec_knob(kn) || kn->n_values < 2)
      continue;
    char *set[2] = {xasprintf("%s=%s", kn->name, kn->values[0]),
                    xasprintf("%s=%s", kn->name, kn->values[1])};
    int rc = run_sim_models_change(cfg->recipe, engine, set[0], set[1], err);
    free(set[0]);
    free(set[1]);
    if (rc != 0)
      return err_prefixf(err, "--knob %s", kn->name);
  }
  return 0;
}

/* ---------------------------------------------------------------- the tune folder */
static int make_tune_dir(struct run_tune *t, struct st_err *err) {
  char *name = xasprintf("tune-%s", t->cfg.recipe->name);
  char dir[sizeof t->st.dir];
  int rc = run_files_mkdir_stamped(t->cfg.results_dir, name, NULL, dir, sizeof dir, err);
  free(name);
  if (rc == 0) {
    pthread_mutex_lock(&t->lock);
    snprintf(t->st.dir, sizeof t->st.dir, "%s", dir);
    t->st.generation++;
    pthread_mutex_unlock(&t->lock);
  }
  return rc;
}

static void add_estimate(cJSON *o, const char *key, const struct tune_estimate *e) {
  cJSON *x = cJSON_AddObjectToObject(o, key);
  json_add_number_or_null(x, "point", isfinite(e->point), e->point);
  json_add_number_or_null(x, "lo", isfinite(e->lo), e->lo);
  json_add_number_or_null(x, "hi", isfinite(e->hi), e->hi);
}

static void add_config_knobs(cJSON *o, const struct tune_space *s, const struct tune_config *c) {
  cJSON *k = cJSON_AddObjectToObject(o, "knobs");
  for (size_t i = 0; i < s->n_knobs; i++)
    cJSON_AddStringToObject(k, s->knobs[i].name, s->knobs[i].values[c->idx[i]]);
}

static const char *search_state(const struct run_tune *t, const struct tune_result *res,
                                bool over) {
  if (!over)
    return "running";
  if (t->st.failed)
    return "failed";
  switch (res->end) {
  case TUNE_END_DONE:
    return "done";
  case TUNE_END_POINT_BUDGET:
  case TUNE_END_TIME_BUDGET:
    return "budget";
  case TUNE_END_STOPPED:
    return "stopped";
  }
  return "?";
}

/* tune.json: the space, the SLO, the workload, every configuration and every probe. */
static char *tune_json_alloc(const struct run_tune *t, const struct tune_result *res, bool over) {
  const struct run_tune_config *c = &t->cfg;
  cJSON *doc = cJSON_CreateObject();
  cJSON_AddStringToObject(doc, "kind", "servetop-tune");
  cJSON_AddNumberToObject(doc, "schema_version", 1);
  cJSON_AddStringToObject(doc, "servetop_version", SERVETOP_VERSION);
  cJSON_AddStringToObject(doc, "recipe", c->recipe->name);
  json_add_string_or_null(doc, "twin", c->twin ? c->twin->name : NULL);
  cJSON_AddStringToObject(doc, "engine", t->engine->name);
  cJSON_AddBoolToObject(doc, "simulated", t->engine->simulated);
  cJSON_AddStringToObject(doc, "status", search_state(t, res, over));
  cJSON_AddStringToObject(doc, "message", t->st.message);
  cJSON_AddNumberToObject(doc, "started_unix_s", t->started_unix_s);
  cJSON_AddNumberToObject(doc, "elapsed_s", elapsed_s(t));
  cJSON *slo = cJSON_AddObjectToObject(doc, "slo");
  for (int f = 0; f < TUNE_N_FIGURES; f++)
    if (c->slo.set[f])
      cJSON_AddNumberToObject(slo, tune_figure_key((enum tune_figure)f), c->slo.target[f]);
  cJSON *w = cJSON_AddObjectToObject(doc, "workload");
  json_add_number_or_null(w, "isl", true,
                          run_workload_len(c->isl, c->recipe->isl, RUN_DEFAULT_ISL));
  json_add_number_or_null(w, "osl", true,
                          run_workload_len(c->osl, c->recipe->osl, RUN_DEFAULT_OSL));
  json_add_number_or_null(w, "range_ratio", true,
                          c->range_ratio >= 0 ? c->range_ratio
                          : c->recipe->bench.random_range_ratio > 0
                              ? c->recipe->bench.random_range_ratio
                              : 0.8);
  cJSON_AddBoolToObject(w, "chat_template", c->chat_template >= 0
                                                ? c->chat_template != 0
                                                : c->recipe->bench.use_chat_template);
  json_add_number_or_null(w, "num_prompts", c->num_prompts > 0, c->num_prompts);
  cJSON_AddNumberToObject(doc, "conc_min", c->conc_min > 0 ? c->conc_min : 1);
  cJSON_AddNumberToObject(doc, "conc_max", c->conc_max > 0 ? c->conc_max : 1024);
  json_add_number_or_null(doc, "budget_s", c->budget_s > 0, c->budget_s);
  json_add_number_or_null(doc, "max_points", c->max_points > 0, c->max_points);
  cJSON_AddNumberToObject(doc, "n_gpus", t->n_gpus);
  cJSON_AddStringToObject(doc, "throughput", t->n_gpus > 0 ? "output tok/s per GPU"
                                                           : "output tok/s");
  cJSON *space = cJSON_AddObjectToObject(doc, "space");
  cJSON *knobs = cJSON_AddArrayToObject(space, "knobs");
  for (size_t k = 0; k < t->space.n_knobs; k++) {
    cJSON *kn = cJSON_CreateObject();
    cJSON_AddStringToObject(kn, "name", t->space.knobs[k].name);
    cJSON *vals = cJSON_AddArrayToObject(kn, "values");
    for (size_t i = 0; i < t->space.knobs[k].n_values; i++)
      cJSON_AddItemToArray(vals, cJSON_CreateString(t->space.knobs[k].values[i]));
    cJSON_AddItemToArray(knobs, kn);
  }
  add_config_knobs(space, &t->space, &t->space.start);
  cJSON *cfgs = cJSON_AddArrayToObject(doc, "configs");
  for (size_t i = 0; i < res->n_configs; i++) {
    const struct tune_config_result *cr = &res->configs[i];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "index", (double)i);
    add_config_knobs(o, &t->space, &cr->cfg);
    cJSON_AddStringToObject(o, "status", tune_status_name(cr->status));
    json_add_string_or_null(o, "why", cr->why[0] ? cr->why : NULL);
    json_add_number_or_null(o, "best_conc", cr->best_conc > 0, cr->best_conc);
    add_estimate(o, "goodput", &cr->goodput);
    json_add_number_or_null(o, "fail_conc", cr->fail_conc > 0, cr->fail_conc);
    cJSON_AddNumberToObject(o, "points", cr->points);
    json_add_string_or_null(o, "run_dir", i < t->n_cfg_dirs && t->cfg_dirs[i][0]
                                              ? t->cfg_dirs[i] : NULL);
    cJSON_AddItemToArray(cfgs, o);
  }
  cJSON *probes = cJSON_AddArrayToObject(doc, "probes");
  for (size_t i = 0; i < res->n_probes; i++) {
    const struct tune_probe *p = &res->probes[i];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "config", (double)p->config);
    cJSON_AddNumberToObject(o, "concurrency", p->concurrency);
    cJSON_AddBoolToObject(o, "holds", p->holds);
    if (i < t->n_probe_files) {
      cJSON_AddStringToObject(o, "run_dir", t->probe_files[i].run_dir);
      cJSON_AddStringToObject(o, "result_file", t->probe_files[i].result_file);
    }
    cJSON *figs = cJSON_AddObjectToObject(o, "figures");
    for (int f = 0; f < TUNE_N_FIGURES; f++)
      add_estimate(figs, f == TUNE_MIN_TOK_S_PER_USER ? "tok_s_per_user"
                                                      : tune_figure_key((enum tune_figure)f),
                   &p->pt.figure[f]);
    add_estimate(figs, "throughput", &p->pt.throughput);
    cJSON_AddItemToArray(probes, o);
  }
  cJSON_AddNumberToObject(doc, "points", res->points);
  cJSON_AddBoolToObject(doc, "out_of_budget", res->out_of_budget);
  cJSON_AddBoolToObject(doc, "stopped", res->stopped);
  long start = tune_config_find(res, &t->space, &t->space.start);
  json_add_number_or_null(doc, "start_config", start >= 0, (double)start);
  json_add_number_or_null(doc, "winner", over && res->winner >= 0, (double)res->winner);
  json_add_number_or_null(doc, "runner_up", over && res->runner_up >= 0, (double)res->runner_up);
  char *text = cJSON_Print(doc);
  cJSON_Delete(doc);
  return text;
}

static void write_file(const struct run_tune *t, const char *leaf, const char *text) {
  if (!t->st.dir[0] || !text)
    return;
  struct st_err err = {{0}};
  char *path = path_join_alloc(t->st.dir, leaf);
  if (file_write_or_rescue(path, text, strlen(text), 0644, &err) != 0)
    log_msg(LOG_ERROR, "tune: %s", err.msg);
  free(path);
}

/* ---------------------------------------------------------------- one configuration's run */
static void end_run(struct run_tune *t) {
  if (!t->run)
    return;
  run_end_points(t->run);
  run_wait(t->run, -1);
  run_free(t->run);
  t->run = NULL;
  t->run_index = -1;
}

/* Its index in the result's configs: the search visits each once, in this order. */
static long config_index(struct run_tune *t, const struct tune_config *c) {
  for (size_t i = 0; i < t->n_seen; i++)
    if (tune_config_eq(&t->space, &t->seen[i], c))
      return (long)i;
  t->seen = xreallocarray(t->seen, t->n_seen + 1, sizeof *t->seen);
  t->seen[t->n_seen] = *c;
  return (long)t->n_seen++;
}

static void set_cfg_dir(struct run_tune *t, long index, const char *dir) {
  pthread_mutex_lock(&t->lock);
  if ((size_t)index >= t->n_cfg_dirs) {
    t->cfg_dirs = xreallocarray(t->cfg_dirs, (size_t)index + 1, sizeof *t->cfg_dirs);
    for (size_t i = t->n_cfg_dirs; i <= (size_t)index; i++)
      t->cfg_dirs[i][0] = '\0';
    t->n_cfg_dirs = (size_t)index + 1;
  }
  snprintf(t->cfg_dirs[index], sizeof t->cfg_dirs[index], "%s", dir);
  pthread_mutex_unlock(&t->lock);
}

static void note_status(struct run_tune *t, long config, int conc, const char *fmt, ...)
    ST_PRINTF(4, 5);
static void note_status(struct run_tune *t, long config, int conc, const char *fmt, ...) {
  pthread_mutex_lock(&t->lock);
  t->st.config = config;
  t->st.concurrency = conc;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(t->st.message, sizeof t->st.message, fmt, ap);
  va_end(ap);
  t->st.generation++;
  pthread_mutex_unlock(&t->lock);
}

/* Starts the run of configuration c (its folder under the tune folder, "cfgN"). */
static int start_run(struct run_tune *t, const struct tune_config *c, long index, char *why,
                     size_t why_len) {
  char *overrides[TUNE_MAX_KNOBS];
  size_t n = 0;
  const struct recipe *r = config_recipe(t, c, overrides, &n);
  char label[32];
  snprintf(label, sizeof label, "cfg%ld", index + 1);
  struct run_config rc;
  run_config_init(&rc);
  rc.recipe = r;
  rc.engine = t->engine;
  rc.results_dir = t->st.dir;
  rc.label = label;
  rc.servetop_exe = t->cfg.servetop_exe;
  rc.overrides = overrides;
  rc.n_overrides = n;
  rc.extra_server_args = t->cfg.extra_server_args;
  rc.n_extra_server_args = t->cfg.n_extra_server_args;
  rc.num_prompts = t->cfg.num_prompts;
  /* a p99's 95% interval needs run_tune_p99_min_prompts() requests (docs/figures.md): with
   * fewer, a latency target could never hold */
  rc.num_prompts_min = tune_slo_has_p99(&t->cfg.slo, NULL) ? RUN_TUNE_P99_MIN_PROMPTS : 0;
  rc.isl = t->cfg.isl;
  rc.osl = t->cfg.osl;
  rc.range_ratio_set = t->cfg.range_ratio >= 0;
  rc.range_ratio = t->cfg.range_ratio;
  rc.chat_template = t->cfg.chat_template;
  rc.gpus = t->cfg.gpus;
  rc.seed = t->cfg.seed;
  rc.points_on_demand = true;
  /* flags the recipe ties to the concurrency ($CONC) are launched at the highest concurrency
   * searched: one launch per configuration, no cap below what is measured */
  rc.server_conc = t->cfg.conc_max > 0 ? t->cfg.conc_max : 1024;
  rc.allow_mislabel = true; /* the spec knob's twin is labelled as it runs */
  struct st_err err = {{0}};
  t->run = run_start(&rc, &err);
  for (size_t i = 0; i < n; i++)
    free(overrides[i]);
  if (!t->run) {
    snprintf(why, why_len, "%s", err.msg);
    return -1;
  }
  t->run_cfg = *c;
  t->run_index = index;
  return 0;
}

/* A point whose p99 target's interval is unknown cannot hold: why says so (and that too few
 * requests were measured, where they were). */
static void note_unknown_interval(const struct run_tune *t, const struct snap_point_result *p,
                                  const struct tune_point *pt, char *why, size_t why_len) {
  for (int f = 0; f < TUNE_N_FIGURES; f++) {
    if (!t->cfg.slo.set[f] || f == TUNE_MIN_TOK_S_PER_USER || !isnan(pt->figure[f].hi))
      continue;
    int least = run_tune_p99_min_prompts();
    if (p->completed < least)
      snprintf(why, why_len, "p99 interval unknown (%lld requests < %d)", (long long)p->completed,
               least);
    else
      snprintf(why, why_len, "p99 interval unknown");
    return;
  }
}

/* The search's callback: one point of configuration c at conc. */
static int tune_measure(void *ctx, const struct tune_config *c, int conc, struct tune_point *out,
                         char *why, size_t why_len, struct st_err *err) {
  (void)err;
  struct run_tune *t = ctx;
  if (t->cfg.budget_s > 0 && elapsed_s(t) >= t->cfg.budget_s) {
    atomic_store(&t->budget_hit, 1);
    atomic_store(&t->stop, 1);
  }
  if (atomic_load(&t->stop))
    return TUNE_STOPPED;
  long index = config_index(t, c);
  char desc[512];
  tune_config_describe(&t->space, c, desc, sizeof desc);
  if (t->run && !tune_config_eq(&t->space, &t->run_cfg, c))
    end_run(t);
  if (!t->run) {
    note_status(t, index, conc, "starting configuration %ld: %s", index + 1, desc);
    if (start_run(t, c, index, why, why_len) != 0)
      return TUNE_START_FAILED; /* refused before a launch (a command that does not resolve) */
  }
  note_status(t, index, conc, "configuration %ld (%s): measuring concurrency %d", index + 1, desc,
              conc);
  struct snap_point_result p;
  int64_t t0 = clock_mono_ns();
  int rc = run_measure_point(t->run, conc, &t->stop, &p, why, why_len);
  struct run_outcome o;
  run_get_outcome(t->run, &o);
  if (o.dir[0])
    set_cfg_dir(t, index, o.dir);
  if (atomic_load(&t->stop) && (rc != 0 || !p.measured_to_end)) {
    end_run(t);
    return TUNE_STOPPED; /* cut by a stop: not a measurement */
  }
  if (rc != 0) {
    end_run(t); /* it failed to start or died: its server is gone */
    for (char *ch = why; *ch; ch++) /* one line: its log lines joined */
      if (*ch == '\n' || *ch == '\r')
        *ch = ' ';
    return TUNE_START_FAILED;
  }
  t->point_s_sum += (double)(clock_mono_ns() - t0) / 1e9;
  t->n_point_s++;
  run_tune_point_from_figs(&p, t->n_gpus, out);
  why[0] = '\0'; /* measured: no reason, only a note */
  note_unknown_interval(t, &p, out, why, why_len);
  t->probe_files = xreallocarray(t->probe_files, t->n_probe_files + 1, sizeof *t->probe_files);
  struct tune_probe_file *pf = &t->probe_files[t->n_probe_files++];
  snprintf(pf->run_dir, sizeof pf->run_dir, "%s", o.dir);
  snprintf(pf->result_file, sizeof pf->result_file, "%s", p.result_file);
  return 0;
}

/* A rough ETA: the points left of this configuration (at most the per-configuration worst
 * case) and one axis pass's configurations not visited yet at the mean points each, at the
 * mean point time; never past the budget. */
static void update_eta(struct run_tune *t, const struct tune_result *res) {
  if (t->n_point_s == 0 || res->n_configs == 0)
    return;
  struct tune_options o = {.conc_min = t->cfg.conc_min, .conc_max = t->cfg.conc_max};
  double per_cfg = (double)res->points / (double)res->n_configs;
  size_t axis = 1;
  for (size_t k = 0; k < t->space.n_knobs; k++)
    axis += t->space.knobs[k].n_values - 1;
  double left_cfgs = axis > res->n_configs ? (double)(axis - res->n_configs) : 0;
  int cur_left = tune_points_per_config_max(&o) - res->configs[res->n_configs - 1].points;
  double pts = (cur_left > 0 ? cur_left / 2.0 : 0) + left_cfgs * per_cfg;
  if (t->cfg.max_points > 0 && pts > t->cfg.max_points - res->points)
    pts = t->cfg.max_points - res->points;
  double eta = pts * t->point_s_sum / t->n_point_s;
  if (t->cfg.budget_s > 0 && eta > t->cfg.budget_s - elapsed_s(t))
    eta = t->cfg.budget_s - elapsed_s(t);
  t->st.eta_valid = true;
  t->st.eta_s = eta > 0 ? eta : 0;
}

static void on_point(void *ctx, const struct tune_result *so_far) {
  struct run_tune *t = ctx;
  pthread_mutex_lock(&t->lock);
  tune_result_free(&t->so_far);
  tune_result_copy(&t->so_far, so_far);
  update_eta(t, so_far);
  t->st.generation++;
  pthread_mutex_unlock(&t->lock);
  char *text = tune_json_alloc(t, so_far, false);
  write_file(t, "tune.json", text);
  free(text);
  if (t->cfg.budget_s > 0 && elapsed_s(t) >= t->cfg.budget_s) {
    atomic_store(&t->budget_hit, 1);
    atomic_store(&t->stop, 1);
  }
}

/* ---------------------------------------------------------------- the answer */
static void fmt_estimate(char *buf, size_t n, const struct tune_estimate *e) {
  if (!isfinite(e->point))
    snprintf(buf, n, "-");
  else if (isfinite(e->lo) && isfinite(e->hi))
    snprintf(buf, n, "%.1f [%.1f, %.1f]", e->point, e->lo, e->hi);
  else
    snprintf(buf, n, "%.1f [interval unknown]", e->point);
}

static long start_config_index(const struct run_tune *t, const struct tune_result *res) {
  return tune_config_find(res, &t->space, &t->space.start);
}

void run_tune_answer(const struct run_tune *t, const struct tune_result *res, struct sbuf *sb,
                     bool markdown) {
  const char *unit = t->n_gpus > 0 ? "output tok/s per GPU" : "output tok/s";
  char desc[512], est[96];
  const char *b = markdown ? "**" : "";
  for (int which = 0; which < 2; which++) {
    long i = which == 0 ? res->winner : res->runner_up;
    const char *title = which == 0 ? "Winner" : "Runner-up";
    if (i < 0) {
      sbuf_printf(sb, "%s%s: none%s\n", markdown ? "- " : "", title,
                  which == 0 ? " (no configuration held the SLO at any concurrency measured)"
                             : "");
      continue;
    }
    const struct tune_config_result *c = &res->configs[i];
    tune_config_describe(&t->space, &c->cfg, desc, sizeof desc);
    fmt_estimate(est, sizeof est, &c->goodput);
    sbuf_printf(sb, "%s%s: %s%s%s (configuration %ld) at concurrency %s%d%s: goodput %s %s (95%% "
                "interval)%s\n",
                markdown ? "- " : "", title, b, desc, b, i + 1, b, c->best_conc, b, est, unit,
                c->status == TUNE_CFG_OUT_OF_BUDGET ? ", a lower bound: the budget ran out in its "
                                                      "search"
                                                    : "");
  }
  if (res->winner >= 0 && res->runner_up >= 0) {
    /* a winner by a margin inside the noise is no answer between the two */
    const struct tune_estimate *w = &res->configs[res->winner].goodput,
                               *r = &res->configs[res->runner_up].goodput;
    if (isfinite(w->lo) && isfinite(r->hi) && w->lo <= r->hi)
      sbuf_printf(sb, "%sWinner and runner-up are not told apart: their 95%% intervals overlap "
                  "(measure both again, or with more requests a point, before choosing "
                  "between them).\n", markdown ? "- " : "");
  }
  long s = start_config_index(t, res);
  tune_config_describe(&t->space, &t->space.start, desc, sizeof desc);
  if (s < 0) {
    sbuf_printf(sb, "%sThe recipe as written (%s) was not measured.\n", markdown ? "- " : "",
                desc);
  } else if (res->winner < 0) {
    sbuf_printf(sb, "%sThe recipe as written (%s): %s.\n", markdown ? "- " : "", desc,
                tune_status_name(res->configs[s].status));
  } else if (s == res->winner) {
    sbuf_printf(sb, "%sThe recipe as written (%s) is the winner: no configuration searched beats "
                "it.\n", markdown ? "- " : "", desc);
  } else {
    const struct tune_config_result *w = &res->configs[res->winner], *c = &res->configs[s];
    if (c->best_conc > 0 && c->goodput.point > 0)
      sbuf_printf(sb, "%sAgainst the recipe as written (%s: concurrency %d, %.1f %s): %.2fx the "
                  "goodput (+%.1f %s)%s.\n",
                  markdown ? "- " : "", desc, c->best_conc, c->goodput.point, unit,
                  w->goodput.point / c->goodput.point, w->goodput.point - c->goodput.point, unit,
                  isfinite(w->goodput.lo) && isfinite(c->goodput.hi) &&
                          w->goodput.lo > c->goodput.hi
                      ? "; the intervals do not overlap"
                      : "; the intervals overlap");
    else
      sbuf_printf(sb, "%sThe recipe as written (%s): %s; the winner holds it at concurrency %d.\n",
                  markdown ? "- " : "", desc, tune_status_name(c->status), w->best_conc);
  }
}

void run_tune_config_table(const struct run_tune *t, const struct tune_result *res,
                           struct sbuf *sb) {
  char desc[512], est[96];
  sbuf_puts(sb, "| # | configuration | status | best conc | goodput [95% interval] | fails at | "
                "points | why |\n|---|---|---|---|---|---|---|---|\n");
  long s = start_config_index(t, res);
  for (size_t i = 0; i < res->n_configs; i++) {
    const struct tune_config_result *c = &res->configs[i];
    tune_config_describe(&t->space, &c->cfg, desc, sizeof desc);
    fmt_estimate(est, sizeof est, &c->goodput);
    char conc[16] = "-";
    if (c->best_conc > 0)
      snprintf(conc, sizeof conc, "%d", c->best_conc);
    sbuf_printf(sb, "| %zu%s%s | %s | %s | %s | %s | ", i + 1,
                (long)i == res->winner ? " winner" : (long)i == res->runner_up ? " runner-up" : "",
                (long)i == s ? " (recipe)" : "", desc, tune_status_name(c->status), conc,
                c->best_conc > 0 ? est : "-");
    if (c->fail_conc > 0)
      sbuf_printf(sb, "%d", c->fail_conc);
    else
      sbuf_puts(sb, "-");
    sbuf_printf(sb, " | %d | %s |\n", c->points, c->why[0] ? c->why : "");
  }
}

static char *report_alloc(const struct run_tune *t, const struct tune_result *res) {
  struct sbuf sb = {0};
  const struct run_tune_config *c = &t->cfg;
  sbuf_printf(&sb, "# servetop tune: %s\n\n", c->recipe->name);
  if (t->engine->simulated)
    sbuf_puts(&sb, "**SIMULATED**: measured on servetop sim, whose figures are a model's, not "
                   "hardware's.\n\n");
  sbuf_printf(&sb, "Engine %s; status: %s (%s); %d points in %.0f s.\n\n", t->engine->name,
              search_state(t, res, true), t->st.message, res->points, elapsed_s(t));
  sbuf_puts(&sb, "SLO (holds at a point when every latency's 95% upper bound is inside its target "
                 "and the tok/s per user's lower bound above its minimum):");
  for (int f = 0; f < TUNE_N_FIGURES; f++)
    if (c->slo.set[f])
      sbuf_printf(&sb, " %s=%g", tune_figure_key((enum tune_figure)f), c->slo.target[f]);
  sbuf_puts(&sb, "\n\nKnobs:");
  for (size_t k = 0; k < t->space.n_knobs; k++) {
    sbuf_printf(&sb, " %s=", t->space.knobs[k].name);
    for (size_t i = 0; i < t->space.knobs[k].n_values; i++)
      sbuf_printf(&sb, "%s%s", i ? "," : "", t->space.knobs[k].values[i]);
  }
  sbuf_printf(&sb, "; concurrency %d..%d", c->conc_min > 0 ? c->conc_min : 1,
              c->conc_max > 0 ? c->conc_max : 1024);
  if (c->budget_s > 0)
    sbuf_printf(&sb, "; budget %.0f s", c->budget_s);
  if (c->max_points > 0)
    sbuf_printf(&sb, "; at most %d points", c->max_points);
  sbuf_puts(&sb, ".\n\n## The answer\n\n");
  run_tune_answer(t, res, &sb, true);
  if (t->chart_error[0])
    sbuf_printf(&sb, "\nThe chart could not be written: %s\n", t->chart_error);
  else
    sbuf_puts(&sb, "\n![throughput against tok/s per user, every point](tune.png)\n"
                   "(also tune.svg)\n");
  if (res->winner >= 0)
    sbuf_printf(&sb, "\nThe winner as a recipe and an InferenceX entry: `servetop export %s "
                     "--inferencex%s`.\n",
                t->st.dir, t->engine->simulated ? " --allow-simulated" : "");
  sbuf_puts(&sb, "\n## Configurations (in the order visited)\n\n");
  run_tune_config_table(t, res, &sb);
  sbuf_puts(&sb, "\n## Points (in the order measured)\n\n| # | configuration | concurrency | "
                 "holds | TTFT p99 ms | TPOT p99 ms | tok/s/user | throughput | result |\n"
                 "|---|---|---|---|---|---|---|---|---|\n");
  for (size_t i = 0; i < res->n_probes; i++) {
    const struct tune_probe *p = &res->probes[i];
    char a[96], bb[96], u[96], tp[96];
    fmt_estimate(a, sizeof a, &p->pt.figure[TUNE_TTFT_P99_MS]);
    fmt_estimate(bb, sizeof bb, &p->pt.figure[TUNE_TPOT_P99_MS]);
    fmt_estimate(u, sizeof u, &p->pt.figure[TUNE_MIN_TOK_S_PER_USER]);
    fmt_estimate(tp, sizeof tp, &p->pt.throughput);
    const char *leaf = i < t->n_probe_files ? strrchr(t->probe_files[i].run_dir, '/') : NULL;
    sbuf_printf(&sb, "| %zu | %zu | %d | %s | %s | %s | %s | %s | %s/%s |\n", i + 1,
                p->config + 1, p->concurrency, p->holds ? "yes" : "no", a, bb, u, tp,
                leaf ? leaf + 1 : "-", i < t->n_probe_files ? t->probe_files[i].result_file : "");
  }
  size_t total = 1;
  for (size_t k = 0; k < t->space.n_knobs; k++)
    total = total * t->space.knobs[k].n_values > 100000 ? 100000
                                                        : total * t->space.knobs[k].n_values;
  sbuf_printf(&sb, "\n## Not visited\n\n%zu of the %zu configurations of the space were not "
                   "measured",
              total > res->n_configs ? total - res->n_configs : 0, total);
  if (total > res->n_configs && total <= 64) {
    sbuf_puts(&sb, ":\n\n");
    struct tune_config cfg;
    memset(&cfg, 0, sizeof cfg);
    for (size_t n = 0; n < total; n++) {
      size_t rest = n;
      for (size_t k = 0; k < t->space.n_knobs; k++) {
        cfg.idx[k] = rest % t->space.knobs[k].n_values;
        rest /= t->space.knobs[k].n_values;
      }
      if (tune_config_find(res, &t->space, &cfg) >= 0)
        continue;
      char desc[512];
      tune_config_describe(&t->space, &cfg, desc, sizeof desc);
      sbuf_printf(&sb, "- %s\n", desc);
    }
  } else {
    sbuf_puts(&sb, ".\n");
  }
  sbuf_puts(&sb, "\nThe search (docs/tune.md): per configuration, bracket (doubling) and bisect "
                 "the highest concurrency whose SLO holds; across configurations, coordinate "
                 "search from the recipe's setting with a diagonal step; a configuration is "
                 "dropped (pruned) once it cannot beat the best so far.\n");
  return sbuf_take(&sb);
}

/* ---------------------------------------------------------------- the thread */
static void *tune_main(void *arg) {
  pthread_setname_np(pthread_self(), "st-tune");
  struct run_tune *t = arg;
  struct st_err err = {{0}};
  int rc = -1;
  if (make_tune_dir(t, &err) == 0) {
    struct tune_options opt = {.conc_min = t->cfg.conc_min, .conc_max = t->cfg.conc_max,
                               .max_points = t->cfg.max_points, .on_point = on_point,
                               .stop = &t->stop, .grid = t->cfg.grid};
    char *text = tune_json_alloc(t, &t->so_far, false);
    write_file(t, "tune.json", text);
    free(text);
    rc = tune_search(&t->space, &t->cfg.slo, &opt, tune_measure, t, &t->final, &err);
  }
  end_run(t); /* no server outlives the search */
  pthread_mutex_lock(&t->lock);
  if (rc == 0) {
    /* how it ended, set here once: a stop the time budget made is the budget's */
    if (t->final.end == TUNE_END_STOPPED && atomic_load(&t->budget_hit))
      t->final.end = TUNE_END_TIME_BUDGET;
    t->st.end = t->final.end;
    tune_result_free(&t->so_far);
    tune_result_copy(&t->so_far, &t->final);
    t->have_final = true;
    const char *how = t->final.end == TUNE_END_TIME_BUDGET    ? "the time budget ran out"
                      : t->final.end == TUNE_END_STOPPED      ? "stopped"
                      : t->final.end == TUNE_END_POINT_BUDGET ? "the point budget ran out"
                                                              : "the search ended";
    snprintf(t->st.message, sizeof t->st.message, "%s: %d points, %zu configurations", how,
             t->final.points, t->final.n_configs);
  } else {
    t->st.failed = true;
    snprintf(t->st.message, sizeof t->st.message, "%s", err.msg);
  }
  t->st.config = -1;
  t->st.concurrency = 0;
  t->st.eta_valid = true;
  t->st.eta_s = 0;
  t->st.generation++;
  pthread_mutex_unlock(&t->lock);
  if (t->st.dir[0]) {
    char *text = tune_json_alloc(t, &t->so_far, true);
    write_file(t, "tune.json", text);
    free(text);
    if (rc == 0) {
      /* the charts first: report.md shows them, or says why they are not there */
      struct st_err chart_err = {{0}};
      if (report_tune_charts(t->st.dir, t->cfg.recipe->name, t->engine->simulated, &t->space,
                             &t->cfg.slo, &t->so_far, t->n_gpus, &chart_err) != 0) {
        log_msg(LOG_ERROR, "tune: %s", chart_err.msg);
        pthread_mutex_lock(&t->lock);
        snprintf(t->chart_error, sizeof t->chart_error, "%s", chart_err.msg);
        size_t len = strlen(t->st.message);
        snprintf(t->st.message + len, sizeof t->st.message - len, "; the chart could not be "
                 "written: %s", chart_err.msg);
        t->st.generation++;
        pthread_mutex_unlock(&t->lock);
      }
      char *md = report_alloc(t, &t->so_far);
      write_file(t, "report.md", md);
      free(md);
    }
  }
  pthread_mutex_lock(&t->lock);
  t->st.elapsed_s = elapsed_s(t);
  t->st.over = true;
  t->st.generation++;
  pthread_mutex_unlock(&t->lock);
  return NULL;
}

/* ---------------------------------------------------------------- public */
int run_tune_p99_min_prompts(void) {
  return (int)ci_quantile_min_n(0.99);
}

int run_tune_check_prompts(const struct tune_slo *slo, int num_prompts, struct st_err *err) {
  const char *key = NULL;
  int least = run_tune_p99_min_prompts();
  if (num_prompts <= 0 || num_prompts >= least || !tune_slo_has_p99(slo, &key))
    return 0;
  return err_setf(err, "--num-prompts %d: at least %d with a p99 target (--slo %s): a p99's "
                       "95%% interval needs %d requests a point, and with fewer the target can "
                       "never hold",
                  num_prompts, least, key, least);
}

struct run_tune *run_tune_start(const struct run_tune_config *cfg, struct st_err *err) {
  if (!cfg->recipe) {
    err_setf(err, "tune: no recipe");
    return NULL;
  }
  bool any = false;
  for (int f = 0; f < TUNE_N_FIGURES; f++)
    any = any || cfg->slo.set[f];
  if (!any) {
    err_setf(err, "--slo: no target (e.g. --slo ttft_p99_ms=2000,tpot_p99_ms=50)");
    return NULL;
  }
  if (cfg->n_knobs == 0 || cfg->n_knobs > TUNE_MAX_KNOBS) {
    err_setf(err, "--knob: %s (at most %d)", cfg->n_knobs ? "too many knobs" : "no knob to search",
             TUNE_MAX_KNOBS);
    return NULL;
  }
  if (check_knobs(cfg, err) != 0 || run_tune_check_prompts(&cfg->slo, cfg->num_prompts, err) != 0)
    return NULL;
  struct run_tune *t = xcalloc(1, sizeof *t);
  t->cfg = *cfg;
  t->engine = cfg->engine;
  if (!t->engine) {
    t->engine = run_pick_engine(cfg->recipe, t->engine_why, sizeof t->engine_why);
    if (!t->engine) {
      err_setf(err, "%s: %s", cfg->recipe->name, t->engine_why);
      free(t);
      return NULL;
    }
  }
  struct run_config probe;
  run_config_init(&probe);
  probe.recipe = cfg->recipe;
  probe.engine = t->engine;
  if (run_check_server_cmd(&probe, err) != 0) {
    err_prefixf(err, "%s", cfg->recipe->name);
    free(t);
    return NULL;
  }
  if (check_knobs_modelled(cfg, t->engine, err) != 0) {
    free(t);
    return NULL;
  }
  t->space.knobs = cfg->knobs;
  t->space.n_knobs = cfg->n_knobs;
  for (size_t k = 0; k < cfg->n_knobs; k++)
    t->space.start.idx[k] = start_index(cfg->recipe, &cfg->knobs[k]);
  bool cpu = cfg->recipe->runner && strcmp(cfg->recipe->runner, "cpu") == 0;
  t->n_gpus = cpu || cfg->recipe->n_points == 0 ? 0 : cfg->recipe->points[0].tp;
  t->run_index = -1;
  t->so_far.winner = t->so_far.runner_up = -1;
  t->final.winner = t->final.runner_up = -1;
  t->st.config = -1;
  t->st.budget_s = cfg->budget_s;
  t->st.n_gpus = t->n_gpus;
  snprintf(t->st.engine, sizeof t->st.engine, "%s", t->engine->name);
  t->st.simulated = t->engine->simulated;
  snprintf(t->st.message, sizeof t->st.message, "starting");
  t->st.generation = 1;
  t->started_ns = clock_mono_ns();
  t->started_unix_s = clock_real_s();
  pthread_mutex_init(&t->lock, NULL);
  if (pthread_create(&t->thread, NULL, tune_main, t) != 0) {
    err_setf(err, "tune: cannot start its thread");
    pthread_mutex_destroy(&t->lock);
    free(t);
    return NULL;
  }
  t->thread_started = true;
  return t;
}

const struct tune_space *run_tune_space(const struct run_tune *t) {
  return &t->space;
}

void run_tune_poll(struct run_tune *t, struct run_tune_status *st, struct tune_result *res) {
  (void)run_tune_poll_changed(t, 0, st, res); /* generations start at 1: always copied */
}

bool run_tune_poll_changed(struct run_tune *t, unsigned long seen, struct run_tune_status *st,
                           struct tune_result *res) {
  pthread_mutex_lock(&t->lock);
  if (!t->st.over)
    t->st.elapsed_s = elapsed_s(t);
  *st = t->st;
  bool changed = t->st.generation != seen;
  if (changed && res)
    tune_result_copy(res, &t->so_far);
  pthread_mutex_unlock(&t->lock);
  return changed;
}

void run_tune_stop(struct run_tune *t) {
  atomic_store(&t->stop, 1);
}

bool run_tune_wait(struct run_tune *t, int64_t timeout_ms) {
  int64_t until = clock_mono_ns() + timeout_ms * 1000000;
  for (;;) {
    pthread_mutex_lock(&t->lock);
    bool over = t->st.over;
    pthread_mutex_unlock(&t->lock);
    if (over || (timeout_ms >= 0 && clock_mono_ns() >= until))
      return over;
    clock_sleep_us(50000);
  }
}

void run_tune_free(struct run_tune *t) {
  if (!t)
    return;
  if (t->thread_started) {
    run_tune_stop(t);
    pthread_join(t->thread, NULL);
  }
  tune_result_free(&t->so_far);
  tune_result_free(&t->final);
  free(t->cfg_dirs);
  free(t->probe_files);
  free(t->seen);
  pthread_mutex_destroy(&t->lock);
  free(t);
}
