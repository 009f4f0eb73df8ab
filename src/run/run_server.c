/* run: the server side of a run — command from the recipe, launch, readiness,
 * what the server says about itself, and its log lines. */
#include "run/run_internal.h"
#include "sim/sim.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define INFO_TIMEOUT_MS 5000
#define PUBLISH_INTERVAL_US 100000 /* 10 Hz, as while measuring */

void run_server_on_log_line(void *ctx, const char *line, int64_t mono_ns) {
  struct run *run = ctx;
  struct eng_log_record rec;
  if (eng_log_parse_line(run->cfg.engine, line, &rec) == ENG_LOG_OTHER)
    return;
  pthread_mutex_lock(&run->lock);
  eng_log_state_add(&run->log_state, &rec, mono_ns);
  pthread_mutex_unlock(&run->lock);
}

/* The server flags to pass: the recipe's (read as the sim reads them when
 * the sim stands in for the recipe's engine), then --server-arg extras. The
 * model is the recipe's, or the first argument of engines that take it so
 * (`vllm serve MODEL`). Returns a heap array of heap strings. */
static char **server_args_alloc(const struct run *run, size_t *n_out, const char **model_out) {
  const struct recipe_cmd *rc = &run->rcmd;
  const struct eng_ops *recipe_engine = eng_find(rc->engine);
  size_t first = 0;
  *model_out = run->cfg.recipe->model;
  if (recipe_engine && recipe_engine->model_positional && rc->argc > 0 && rc->argv[0][0] != '-') {
    *model_out = rc->argv[0];
    first = 1;
  }
  struct launch_cmd translated;
  launch_cmd_init(&translated);
  char *const *args = rc->argv + first;
  size_t n_args = rc->argc - first;
  if (run->cfg.engine->simulated && recipe_engine && recipe_engine->args_for_sim) {
    recipe_engine->args_for_sim(args, n_args, &translated);
    args = translated.argv;
    n_args = translated.argc;
  }
  size_t n = 0;
  char **out = xcalloc(n_args + run->cfg.n_extra_server_args + 1, sizeof(char *));
  for (size_t i = 0; i < n_args; i++)
    out[n++] = xstrdup(args[i]);
  for (size_t i = 0; i < run->cfg.n_extra_server_args; i++)
    out[n++] = xstrdup(run->cfg.extra_server_args[i]);
  launch_cmd_fini(&translated);
  *n_out = n;
  return out;
}

int run_server_prepare(struct run *run, const struct recipe_point *point, struct launch_cmd *cmd,
                       struct st_err *err) {
  if (run->rcmd_valid)
    recipe_cmd_fini(&run->rcmd);
  run->rcmd_valid = false;
  if (recipe_server_cmd(run->cfg.recipe, point, &run->rcmd, err) != 0)
    return err_prefixf(err, "recipe %s", run->cfg.recipe->name);
  run->rcmd_valid = true;
  for (size_t i = 0; i < run->cfg.n_overrides; i++)
    if (recipe_cmd_apply_override(&run->rcmd, run->cfg.overrides[i], err) != 0)
      return err_prefixf(err, "--set %s", run->cfg.overrides[i]);
  for (size_t i = 0; i < run->rcmd.argc; i++)
    if (strstr(run->rcmd.argv[i], "<unresolved:"))
      return err_setf(err, "%s:%d: server command has a piece servetop cannot resolve: %s",
                      run->rcmd.file ? run->rcmd.file : run->cfg.recipe->file, run->rcmd.line,
                      run->rcmd.argv[i]);
  if (run->port <= 0) {
    run->port = run->cfg.port > 0 ? run->cfg.port : launch_pick_free_port(err);
    if (run->port <= 0)
      return -1;
  }
  size_t n_args;
  const char *model;
  char **args = server_args_alloc(run, &n_args, &model);
  struct eng_target target = {.model = model, .server_args = args, .n_server_args = n_args,
                              .env = run->rcmd.env, .n_env = run->rcmd.n_env, .port = run->port,
                              .gpus = run->cfg.gpus, .servetop_exe = run->cfg.servetop_exe};
  int rc = eng_build_cmd(run->cfg.engine, cmd, &target, err);
  str_vec_free(args, n_args);
  return rc;
}

int run_server_cmd_build(const struct run_config *cfg, struct launch_cmd *cmd,
                         struct st_err *err) {
  if (cfg->attach_url || !cfg->engine || !cfg->recipe || cfg->recipe->n_points == 0)
    return 0;
  struct run *probe = xcalloc(1, sizeof *probe);
  probe->cfg = *cfg;
  probe->port = cfg->port > 0 ? cfg->port : 1; /* no port is taken for a check */
  int rc = run_server_prepare(probe, &cfg->recipe->points[0], cmd, err);
  if (probe->rcmd_valid)
    recipe_cmd_fini(&probe->rcmd);
  free(probe);
  return rc;
}

/* Word i of cmd with its value word, if it takes one (as engine e reads its flags): "--tp 8"
 * is one unit. Returns the words it spans (1 or 2). */
static size_t unit_at(const struct eng_ops *e, const struct launch_cmd *cmd, size_t i) {
  return eng_arg_is_flag(e, cmd->argv[i]) && !strchr(cmd->argv[i], '=') &&
                 eng_arg_takes_value(e, cmd->argv, cmd->argc, i)
             ? 2
             : 1;
}

static bool has_unit(const struct eng_ops *e, const struct launch_cmd *cmd,
                     const struct launch_cmd *of, size_t at, size_t len) {
  for (size_t j = 0; j < cmd->argc; j += unit_at(e, cmd, j))
    if (unit_at(e, cmd, j) == len && strcmp(cmd->argv[j], of->argv[at]) == 0 &&
        (len == 1 || strcmp(cmd->argv[j + 1], of->argv[at + 1]) == 0))
      return true;
  return false;
}

/* The flags (without dashes, up to any '=') of cmd's flag units ("--tp 8", "--x=1", "--y")
 * that other does not have. */
static size_t differing_flags(const struct eng_ops *e, const struct launch_cmd *cmd,
                              const struct launch_cmd *other, const char **names, size_t *lens,
                              size_t max) {
  size_t n = 0;
  for (size_t i = 0; i < cmd->argc && n < max; i += unit_at(e, cmd, i)) {
    if (!eng_arg_is_flag(e, cmd->argv[i]) || has_unit(e, other, cmd, i, unit_at(e, cmd, i)))
      continue;
    names[n] = cmd->argv[i] + strspn(cmd->argv[i], "-");
    lens[n] = strcspn(names[n], "=");
    n++;
  }
  return n;
}

int run_sim_models_change(const struct recipe *recipe, const struct eng_ops *engine,
                          const char *set_a, const char *set_b, struct st_err *err) {
  if (!engine || !engine->simulated)
    return 0;
  const char *sets[2] = {set_a, set_b};
  struct launch_cmd cmd[2];
  int rc = 0;
  for (int v = 0; v < 2; v++) {
    launch_cmd_init(&cmd[v]);
    struct run_config cfg;
    run_config_init(&cfg);
    cfg.recipe = recipe;
    cfg.engine = engine;
    cfg.overrides = (char *const *)&sets[v];
    cfg.n_overrides = sets[v] ? 1 : 0;
    if (rc == 0)
      rc = run_server_cmd_build(&cfg, &cmd[v], err);
  }
  const char *names[16];
  size_t lens[16], n = 0;
  bool modelled = false;
  if (rc == 0) {
    n = differing_flags(engine, &cmd[0], &cmd[1], names, lens, ST_ARRAY_LEN(names));
    n += differing_flags(engine, &cmd[1], &cmd[0], names + n, lens + n, ST_ARRAY_LEN(names) - n);
    for (size_t i = 0; i < n && !modelled; i++)
      modelled = sim_flag_modelled(names[i], lens[i]);
    if (n && !modelled) { /* (the same command: nothing to say) */
      rc = 1;
      err_setf(err,
               "servetop sim does not model --%.*s (it accepts it and changes nothing): the "
               "figures would differ by noise alone; measure it on the real engine "
               "(docs/sim.md lists what the sim models)",
               (int)lens[0], names[0]);
    }
  }
  for (int v = 0; v < 2; v++)
    launch_cmd_fini(&cmd[v]);
  return rc;
}

int run_check_server_cmd(const struct run_config *cfg, struct st_err *err) {
  struct launch_cmd cmd;
  launch_cmd_init(&cmd);
  int rc = run_server_cmd_build(cfg, &cmd, err);
  launch_cmd_fini(&cmd);
  return rc;
}

struct ready_wait {
  struct launcher *launcher;
  int64_t timeout_ms;
  int rc;
  struct st_err err;
  atomic_bool done;
};

static void *ready_wait_main(void *arg) {
  pthread_setname_np(pthread_self(), "st-ready-wait"); /* shows in top -H and /proc */
  struct ready_wait *w = arg;
  w->rc = launcher_wait_ready(w->launcher, w->timeout_ms, &w->err);
  atomic_store(&w->done, true);
  return NULL;
}

int run_server_start(struct run *run, const struct launch_cmd *cmd, struct st_err *err) {
  free(run->server_cmd_line);
  run->server_cmd_line = launch_cmd_format_alloc(cmd);
  char *log_path = path_join_alloc(run->dir, "server.log");
  pthread_mutex_lock(&run->lock);
  eng_log_state_init(&run->log_state);
  pthread_mutex_unlock(&run->lock);
  struct launch_opts opts = {.cmd = cmd, .log_path = log_path, .port = run->port,
                             .ready_line = run->cfg.engine->ready_line,
                             .stop_grace_ms = run->cfg.stop_grace_ms,
                             .on_line = run_server_on_log_line, .on_line_ctx = run,
                             .cancel = &run->stop_requested};
  run->launcher = launcher_start(&opts, err);
  free(log_path);
  if (!run->launcher)
    return -1;
  if (run->telemetry) {
    struct launch_status st;
    launcher_get_status(run->launcher, &st);
    tm_set_server_pid(run->telemetry, st.pid);
  }
  struct ready_wait wait = {.launcher = run->launcher, .timeout_ms = run->cfg.ready_timeout_ms};
  if (wait.timeout_ms <= 0)
    wait.timeout_ms = run->cfg.engine->ready_timeout_ms;
  /* Loading a model takes minutes: the wait runs on its own thread so this
   * one keeps publishing snapshots (server state, log tail) meanwhile. */
  pthread_t waiter;
  if (pthread_create(&waiter, NULL, ready_wait_main, &wait) != 0) {
    ready_wait_main(&wait);
  } else {
    while (!atomic_load(&wait.done)) {
      run_publish(run);
      clock_sleep_us(PUBLISH_INTERVAL_US);
    }
    pthread_join(waiter, NULL);
  }
  if (wait.rc != 0) {
    if (err)
      *err = wait.err;
    return -1;
  }
  run_server_query_info(run);
  return 0;
}

void run_server_stop(struct run *run) {
  if (!run->launcher)
    return;
  launcher_stop(run->launcher);
}

void run_server_free(struct run *run) {
  if (run->launcher) { /* its failed log writes outlive it (a restart starts another) */
    struct launch_status st;
    launcher_get_status(run->launcher, &st);
    if (st.log_write_failures && !run->log_write_failures)
      run->log_write_errno = st.log_write_errno;
    run->log_write_failures += st.log_write_failures;
  }
  launcher_free(run->launcher);
  run->launcher = NULL;
}

void run_server_info_reset(struct run_server_info *info) {
  memset(info, 0, sizeof(*info));
  info->max_total_num_tokens = info->kv_per_slot_tokens = -1;
  info->batch_cap = -1;
}

void run_server_query_info(struct run *run) {
  struct run_server_info *info = &run->server;
  run_server_info_reset(info);
  struct st_err err = {{0}};
  char base_url[256];
  run_base_url(run, base_url, sizeof base_url);
  struct eng_server_info si;
  if (eng_query_server_info(run->cfg.engine, base_url, INFO_TIMEOUT_MS / 1000.0, &si, &err) == 0) {
    info->info_valid = true;
    info->spec_known = si.spec_valid;
    if (si.spec_on)
      snprintf(info->spec_algorithm, sizeof(info->spec_algorithm), "%s", si.spec_algorithm);
    info->max_total_num_tokens = si.kv_capacity_tokens;
    info->kv_per_slot_tokens = si.kv_per_slot_tokens;
    info->batch_cap = si.batch_cap;
    info->simulated = si.simulated;
  } else {
    log_msg(LOG_INFO, "run: no server info (%s); using the log only", err.msg);
  }

  char *body = launch_http_get_alloc(run->host, run->port, "/v1/models", INFO_TIMEOUT_MS, &err);
  cJSON *json = body ? cJSON_Parse(body) : NULL;
  const cJSON *data = json ? cJSON_GetObjectItemCaseSensitive(json, "data") : NULL;
  const cJSON *first = cJSON_IsArray(data) ? cJSON_GetArrayItem(data, 0) : NULL;
  const cJSON *id = first ? cJSON_GetObjectItemCaseSensitive(first, "id") : NULL;
  if (cJSON_IsString(id))
    snprintf(info->model_id, sizeof(info->model_id), "%s", id->valuestring);
  cJSON_Delete(json);
  free(body);
}

int run_batch_cap(const struct run *run, const struct eng_log_state *ls) {
  if (run->server.batch_cap > 0)
    return run->server.batch_cap;
  if (ls->max_running_valid && ls->max_running_requests > 0 && ls->max_running_requests <= INT_MAX)
    return (int)ls->max_running_requests;
  if (!run->rcmd_valid)
    return -1;
  return eng_batch_cap_from_args(eng_find(run->rcmd.engine), run->rcmd.argv, run->rcmd.argc);
}

int run_override_split(const char *assignment, char *key, size_t key_n, const char **value,
                       struct st_err *err) {
  const char *eq = strchr(assignment, '=');
  if (!eq)
    return err_setf(err, "'%s': write KEY=VALUE (e.g. max-batch=64, or one of the engine's own flags)",
                    assignment);
  const char *k = assignment;
  while (*k == '-')
    k++;
  size_t len = eq > k ? (size_t)(eq - k) : 0;
  if (len == 0)
    return err_setf(err, "'%s': no flag name before '='", assignment);
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)k[i];
    if (!isalnum(c) && c != '-' && c != '_' && c != '.' && c != '+') /* '.', '+': vLLM's
                                                                          dotted JSON keys */
      return err_setf(err, "'%s': '%c' cannot be in a flag name", assignment, c);
  }
  if (len >= key_n)
    return err_setf(err, "'%s': flag name longer than %zu characters", assignment, key_n - 1);
  memcpy(key, k, len);
  key[len] = '\0';
  *value = eq + 1;
  return 0;
}

int run_check_overrides(const struct recipe *recipe, char *const *assignments, size_t n,
                        struct st_err *err) {
  const struct eng_ops *engine = eng_find(recipe->engine);
  struct recipe_cmd cmd;
  bool have_cmd = recipe->n_points > 0 && recipe_server_cmd(recipe, NULL, &cmd, err) == 0;
  if (recipe->n_points > 0 && !have_cmd)
    return err_prefixf(err, "recipe %s", recipe->name);
  int rc = 0;
  for (size_t i = 0; i < n && rc == 0; i++) {
    char key[128];
    const char *value;
    if (run_override_split(assignments[i], key, sizeof key, &value, err) != 0 ||
        eng_check_knob(engine, key, value, err) != 0 || /* names the knob and the value */
        eng_check_knob_name(engine, key, have_cmd ? cmd.argv : NULL, have_cmd ? cmd.argc : 0,
                            err) != 0)
      rc = -1;
  }
  if (!have_cmd)
    return rc;
  for (size_t i = 0; i < n && rc == 0; i++)
    rc = recipe_cmd_apply_override(&cmd, assignments[i], err);
  for (size_t i = 0; i < cmd.argc && rc == 0; i++)
    if (strstr(cmd.argv[i], "<unresolved:"))
      rc = err_setf(err, "%s:%d: the server command has a piece servetop cannot resolve: %s",
                    cmd.file ? cmd.file : recipe->file, cmd.line, cmd.argv[i]);
  recipe_cmd_fini(&cmd);
  return rc;
}

int run_bench_setting(const char *key, const char *value, char *which, int *value_out,
                      struct st_err *err) {
  char w = strcmp(key, "num-prompts") == 0 || strcmp(key, "prompts") == 0 ? 'n'
         : strcmp(key, "isl") == 0                                         ? 'i'
         : strcmp(key, "osl") == 0                                         ? 'o'
         : strcmp(key, "duration") == 0                                    ? 'd'
                                                                           : 0;
  if (!w)
    return 0;
  if (w == 'd')
    return err_setf(err, "duration=%s: a benchmark setting servetop run does not take (a point "
                    "is a number of requests: num-prompts=N)", value);
  int v;
  if (parse_int(value, &v) != 0 || v < 1)
    return err_setf(err, "%s=%s: a benchmark setting, a whole number >= 1", key, value);
  *which = w;
  *value_out = v;
  return 1;
}

bool run_spec_mislabelled(enum recipe_spec label, bool server_spec_known, bool server_spec_on) {
  if (!server_spec_known)
    return false;
  bool label_on = label != RECIPE_SPEC_NONE;
  return label_on != server_spec_on;
}

const struct eng_ops *run_pick_engine(const struct recipe *recipe, char *why, size_t why_bytes) {
  const char *name = recipe->engine ? recipe->engine : "";
  const struct eng_ops *e = eng_find(name);
  if (!e || !e->recipe_engine) {
    snprintf(why, why_bytes, "engine '%s' cannot be launched by servetop", name);
    return eng_sim();
  }
  if (e->probe(why, why_bytes))
    return e;
  return e->sim_stands_in ? eng_sim() : NULL;
}
