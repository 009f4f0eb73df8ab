/* run: the server side of a run — command from the recipe, launch, readiness,
 * what the server says about itself, and its log lines. */
#include "run/run_internal.h"

#include <cjson/cJSON.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define SIM_READY_TIMEOUT_MS 120000
#define REAL_READY_TIMEOUT_MS 1800000 /* big models load for many minutes */
#define INFO_TIMEOUT_MS 5000
#define PUBLISH_INTERVAL_US 100000 /* 10 Hz, as while measuring */

void run_server_on_log_line(void *ctx, const char *line, int64_t mono_ns) {
  struct run *run = ctx;
  struct launch_log_record rec;
  if (launch_log_parse_line(line, &rec) == LAUNCH_LOG_OTHER)
    return;
  pthread_mutex_lock(&run->lock);
  launch_log_state_add(&run->log_state, &rec, mono_ns);
  pthread_mutex_unlock(&run->lock);
}

/* vLLM flags the simulated (SGLang-flavoured) server understands under
 * another name, so a vLLM recipe can run on the sim. */
static const struct {
  const char *vllm;
  const char *sglang;
} vllm_to_sglang_flags[] = {
    {"--gpu-memory-utilization", "--mem-fraction-static"},
    {"--max-num-seqs", "--max-running-requests"},
    {"--tensor-parallel-size", "--tp"},
    {"--max-model-len", "--context-length"},
    {"--max-num-batched-tokens", "--chunked-prefill-size"},
};

/* --speculative-config '{"method":"mtp","num_speculative_tokens":3}' ->
 * --speculative-algorithm NEXTN --speculative-num-steps 3 ... */
static void push_vllm_spec_as_sglang(char ***args, size_t *n, const char *json_text) {
  cJSON *spec = cJSON_Parse(json_text);
  if (!spec)
    return;
  const cJSON *method = cJSON_GetObjectItemCaseSensitive(spec, "method");
  const cJSON *steps = cJSON_GetObjectItemCaseSensitive(spec, "num_speculative_tokens");
  if (cJSON_IsString(method)) {
    bool mtp = strcmp(method->valuestring, "mtp") == 0;
    int n_steps = cJSON_IsNumber(steps) ? steps->valueint : 3;
    *args = xreallocarray(*args, *n + 8, sizeof(char *));
    (*args)[(*n)++] = xstrdup("--speculative-algorithm");
    (*args)[(*n)++] = xstrdup(mtp ? "NEXTN" : "EAGLE");
    (*args)[(*n)++] = xstrdup("--speculative-num-steps");
    (*args)[(*n)++] = xasprintf("%d", n_steps);
    (*args)[(*n)++] = xstrdup("--speculative-eagle-topk");
    (*args)[(*n)++] = xstrdup("1");
    (*args)[(*n)++] = xstrdup("--speculative-num-draft-tokens");
    (*args)[(*n)++] = xasprintf("%d", n_steps + 1);
  }
  cJSON_Delete(spec);
}

/* The server flags to pass: the recipe's (vLLM's translated for the sim),
 * then --server-arg extras. Returns a heap array of heap strings. */
static char **server_args_alloc(const struct run *run, bool recipe_is_vllm, size_t *n_out,
                                const char **model_out) {
  const struct recipe_cmd *rc = &run->rcmd;
  size_t first = 0;
  *model_out = run->cfg.recipe->model;
  if (recipe_is_vllm && rc->argc > 0 && rc->argv[0][0] != '-') {
    *model_out = rc->argv[0]; /* vllm serve MODEL ... */
    first = 1;
  }
  size_t n = 0;
  char **args = xcalloc(rc->argc + run->cfg.n_extra_server_args + 1, sizeof(char *));
  bool translate = recipe_is_vllm && run->cfg.engine == LAUNCH_ENGINE_SIM;
  for (size_t i = first; i < rc->argc; i++) {
    const char *arg = rc->argv[i];
    if (translate && strcmp(arg, "--speculative-config") == 0 && i + 1 < rc->argc) {
      push_vllm_spec_as_sglang(&args, &n, rc->argv[++i]);
      args = xreallocarray(args, n + rc->argc + run->cfg.n_extra_server_args + 1, sizeof(char *));
      continue;
    }
    if (translate) {
      for (size_t t = 0; t < ST_ARRAY_LEN(vllm_to_sglang_flags); t++)
        if (strcmp(arg, vllm_to_sglang_flags[t].vllm) == 0)
          arg = vllm_to_sglang_flags[t].sglang;
    }
    args[n++] = xstrdup(arg);
  }
  for (size_t i = 0; i < run->cfg.n_extra_server_args; i++)
    args[n++] = xstrdup(run->cfg.extra_server_args[i]);
  *n_out = n;
  return args;
}

static void strv_free_n(char **v, size_t n) {
  for (size_t i = 0; i < n; i++)
    free(v[i]);
  free(v);
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
  bool recipe_is_vllm = run->rcmd.engine && strcmp(run->rcmd.engine, "vllm") == 0;
  size_t n_args;
  const char *model;
  char **args = server_args_alloc(run, recipe_is_vllm, &n_args, &model);
  struct launch_target target = {.engine = run->cfg.engine, .model = model, .server_args = args,
                                 .n_server_args = n_args, .env = run->rcmd.env,
                                 .n_env = run->rcmd.n_env, .port = run->port,
                                 .gpus = run->cfg.gpus, .servetop_exe = run->cfg.servetop_exe};
  int rc = launch_cmd_build(cmd, &target, err);
  strv_free_n(args, n_args);
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
  launch_log_state_init(&run->log_state);
  pthread_mutex_unlock(&run->lock);
  struct launch_opts opts = {.cmd = cmd, .log_path = log_path, .port = run->port,
                             .engine = run->cfg.engine, .stop_grace_ms = run->cfg.stop_grace_ms,
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
    wait.timeout_ms =
        run->cfg.engine == LAUNCH_ENGINE_SIM ? SIM_READY_TIMEOUT_MS : REAL_READY_TIMEOUT_MS;
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
  launcher_free(run->launcher);
  run->launcher = NULL;
}

void run_server_query_info(struct run *run) {
  struct run_server_info *info = &run->server;
  memset(info, 0, sizeof(*info));
  info->max_total_num_tokens = -1;
  struct st_err err = {{0}};
  char *body = launch_http_get_alloc("127.0.0.1", run->port, "/get_server_info", INFO_TIMEOUT_MS,
                                     &err);
  cJSON *json = body ? cJSON_Parse(body) : NULL;
  if (cJSON_IsObject(json)) {
    info->info_valid = true;
    const cJSON *algo = cJSON_GetObjectItemCaseSensitive(json, "speculative_algorithm");
    if (algo) {
      info->spec_known = true;
      if (cJSON_IsString(algo) && strcmp(algo->valuestring, "None") != 0)
        snprintf(info->spec_algorithm, sizeof(info->spec_algorithm), "%s", algo->valuestring);
    }
    const cJSON *kv = cJSON_GetObjectItemCaseSensitive(json, "max_total_num_tokens");
    if (cJSON_IsNumber(kv))
      info->max_total_num_tokens = (int64_t)kv->valuedouble;
    const cJSON *sim = cJSON_GetObjectItemCaseSensitive(json, "simulated");
    info->simulated = cJSON_IsTrue(sim) || cJSON_IsObject(sim);
  } else {
    log_msg(LOG_INFO, "run: no server info (%s); using the log only", err.msg);
  }
  cJSON_Delete(json);
  free(body);

  body = launch_http_get_alloc("127.0.0.1", run->port, "/v1/models", INFO_TIMEOUT_MS, &err);
  json = body ? cJSON_Parse(body) : NULL;
  const cJSON *data = json ? cJSON_GetObjectItemCaseSensitive(json, "data") : NULL;
  const cJSON *first = cJSON_IsArray(data) ? cJSON_GetArrayItem(data, 0) : NULL;
  const cJSON *id = first ? cJSON_GetObjectItemCaseSensitive(first, "id") : NULL;
  if (cJSON_IsString(id))
    snprintf(info->model_id, sizeof(info->model_id), "%s", id->valuestring);
  cJSON_Delete(json);
  free(body);
}

bool run_spec_mislabelled(enum recipe_spec label, bool server_spec_known, bool server_spec_on) {
  if (!server_spec_known)
    return false;
  bool label_on = label != RECIPE_SPEC_NONE;
  return label_on != server_spec_on;
}

/* Runs argv quietly; true when it exits 0 within timeout_ms. */
static bool command_succeeds(char *const argv[], int64_t timeout_ms) {
  pid_t pid = fork();
  if (pid < 0)
    return false;
  if (pid == 0) {
    int devnull = open("/dev/null", O_RDWR);
    if (devnull >= 0) {
      dup2(devnull, STDIN_FILENO);
      dup2(devnull, STDOUT_FILENO);
      dup2(devnull, STDERR_FILENO);
    }
    execvp(argv[0], argv);
    _exit(127);
  }
  int status = 0;
  for (int64_t waited_ms = 0;; waited_ms += 20) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid)
      return WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (r < 0 || waited_ms >= timeout_ms)
      break;
    clock_sleep_us(20000);
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return false;
}

static bool gpu_device_present(void) {
  return access("/dev/nvidia0", F_OK) == 0 || access("/dev/kfd", F_OK) == 0;
}

enum launch_engine run_pick_engine(const struct recipe *recipe, char *why, size_t why_bytes) {
  const char *engine = recipe->engine ? recipe->engine : "";
  if (strcmp(engine, "sglang") != 0 && strcmp(engine, "vllm") != 0) {
    snprintf(why, why_bytes, "engine '%s' cannot be launched by servetop", engine);
    return LAUNCH_ENGINE_SIM;
  }
  if (!gpu_device_present()) {
    snprintf(why, why_bytes, "no GPU device (/dev/nvidia0, /dev/kfd)");
    return LAUNCH_ENGINE_SIM;
  }
  if (strcmp(engine, "sglang") == 0) {
    const char *argv[] = {"python3", "-c", "import sglang", NULL};
    if (command_succeeds((char *const *)argv, 30000))
      return LAUNCH_ENGINE_SGLANG;
    snprintf(why, why_bytes, "python3 cannot import sglang");
    return LAUNCH_ENGINE_SIM;
  }
  const char *argv[] = {"vllm", "--version", NULL};
  if (command_succeeds((char *const *)argv, 30000))
    return LAUNCH_ENGINE_VLLM;
  snprintf(why, why_bytes, "no working 'vllm' on PATH");
  return LAUNCH_ENGINE_SIM;
}
