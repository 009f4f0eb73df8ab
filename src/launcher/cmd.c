/* launcher: argv/env vectors and the per-engine command line. */
#include "launcher/launcher.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* This binary by its path, so the recorded command can be run again and a
 * wrapper of this process (valgrind) launches servetop, not itself;
 * /proc/self/exe when the path is gone (binary replaced or deleted). */
static char *self_exe_alloc(void) {
  char path[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n > 0) {
    path[n] = '\0';
    if (path[0] == '/' && access(path, X_OK) == 0)
      return xstrdup(path);
  }
  return xstrdup("/proc/self/exe");
}

const char *launch_engine_name(enum launch_engine engine) {
  switch (engine) {
  case LAUNCH_ENGINE_SGLANG: return "sglang";
  case LAUNCH_ENGINE_VLLM: return "vllm";
  case LAUNCH_ENGINE_SIM: return "sim";
  }
  return "?";
}

int launch_engine_parse(const char *name, enum launch_engine *out) {
  static const enum launch_engine all[] = {LAUNCH_ENGINE_SGLANG, LAUNCH_ENGINE_VLLM,
                                           LAUNCH_ENGINE_SIM};
  for (size_t i = 0; i < ST_ARRAY_LEN(all); i++) {
    if (strcmp(name, launch_engine_name(all[i])) == 0) {
      *out = all[i];
      return 0;
    }
  }
  return -1;
}

void launch_cmd_init(struct launch_cmd *cmd) {
  memset(cmd, 0, sizeof(*cmd));
  cmd->argv_cap_ = 16;
  cmd->argv = xcalloc(cmd->argv_cap_, sizeof(char *));
  cmd->env_cap_ = 8;
  cmd->env = xcalloc(cmd->env_cap_, sizeof(char *));
}

void launch_cmd_fini(struct launch_cmd *cmd) {
  for (size_t i = 0; i < cmd->argc; i++)
    free(cmd->argv[i]);
  for (size_t i = 0; i < cmd->n_env; i++)
    free(cmd->env[i]);
  free(cmd->argv);
  free(cmd->env);
  memset(cmd, 0, sizeof(*cmd));
}

void launch_cmd_add_arg(struct launch_cmd *cmd, const char *arg) {
  if (cmd->argc + 2 > cmd->argv_cap_) {
    cmd->argv_cap_ *= 2;
    cmd->argv = xreallocarray(cmd->argv, cmd->argv_cap_, sizeof(char *));
  }
  cmd->argv[cmd->argc++] = xstrdup(arg);
  cmd->argv[cmd->argc] = NULL;
}

static size_t env_name_len(const char *entry) {
  const char *eq = strchr(entry, '=');
  return eq ? (size_t)(eq - entry) : strlen(entry);
}

void launch_cmd_set_env(struct launch_cmd *cmd, const char *name, const char *value) {
  char *entry = xasprintf("%s=%s", name, value);
  size_t name_len = strlen(name);
  for (size_t i = 0; i < cmd->n_env; i++) {
    if (env_name_len(cmd->env[i]) == name_len && strncmp(cmd->env[i], name, name_len) == 0) {
      free(cmd->env[i]);
      cmd->env[i] = entry;
      return;
    }
  }
  if (cmd->n_env + 2 > cmd->env_cap_) {
    cmd->env_cap_ *= 2;
    cmd->env = xreallocarray(cmd->env, cmd->env_cap_, sizeof(char *));
  }
  cmd->env[cmd->n_env++] = entry;
  cmd->env[cmd->n_env] = NULL;
}

const char *launch_cmd_get_env(const struct launch_cmd *cmd, const char *name) {
  size_t name_len = strlen(name);
  for (size_t i = 0; i < cmd->n_env; i++)
    if (env_name_len(cmd->env[i]) == name_len && strncmp(cmd->env[i], name, name_len) == 0)
      return cmd->env[i] + name_len + 1;
  return NULL;
}

char *launch_cmd_format_alloc(const struct launch_cmd *cmd) {
  struct sbuf sb = {0};
  sbuf_reserve(&sb, 64);
  for (size_t i = 0; i < cmd->n_env; i++) {
    sbuf_put_shell_assignment(&sb, cmd->env[i]);
    sbuf_putc(&sb, ' ');
  }
  for (size_t i = 0; i < cmd->argc; i++) {
    if (i)
      sbuf_putc(&sb, ' ');
    sbuf_put_shell_word(&sb, cmd->argv[i]);
  }
  return sbuf_take(&sb);
}

/* Matches "--name" and "--name=value"; *inline_value gets the "value" part. */
static bool flag_is(const char *arg, const char *name, bool *has_inline_value) {
  size_t n = strlen(name);
  if (strncmp(arg, name, n) != 0)
    return false;
  if (arg[n] == '\0') {
    *has_inline_value = false;
    return true;
  }
  if (arg[n] == '=') {
    *has_inline_value = true;
    return true;
  }
  return false;
}

static bool args_have_flag(char *const *args, size_t n, const char *name) {
  bool inline_value;
  for (size_t i = 0; i < n; i++)
    if (flag_is(args[i], name, &inline_value))
      return true;
  return false;
}

int launch_cmd_build(struct launch_cmd *cmd, const struct launch_target *t, struct st_err *err) {
  if (t->port <= 0 || t->port > 65535)
    return err_setf(err, "launcher: port %d out of range", t->port);
  const char *host = t->host ? t->host : "127.0.0.1";
  switch (t->engine) {
  case LAUNCH_ENGINE_SGLANG:
    launch_cmd_add_arg(cmd, "python3");
    launch_cmd_add_arg(cmd, "-m");
    launch_cmd_add_arg(cmd, "sglang.launch_server");
    break;
  case LAUNCH_ENGINE_VLLM:
    if (!t->model || !*t->model)
      return err_setf(err, "launcher: vllm serve needs a model");
    launch_cmd_add_arg(cmd, "vllm");
    launch_cmd_add_arg(cmd, "serve");
    launch_cmd_add_arg(cmd, t->model);
    break;
  case LAUNCH_ENGINE_SIM:
    if (t->servetop_exe) {
      launch_cmd_add_arg(cmd, t->servetop_exe);
    } else {
      char *self = self_exe_alloc();
      launch_cmd_add_arg(cmd, self);
      free(self);
    }
    launch_cmd_add_arg(cmd, "sim");
    break;
  }
  if (t->engine != LAUNCH_ENGINE_VLLM && t->model && *t->model &&
      !args_have_flag(t->server_args, t->n_server_args, "--model-path") &&
      !args_have_flag(t->server_args, t->n_server_args, "--model")) {
    launch_cmd_add_arg(cmd, "--model-path");
    launch_cmd_add_arg(cmd, t->model);
  }
  for (size_t i = 0; i < t->n_server_args; i++) {
    const char *arg = t->server_args[i];
    bool inline_value;
    if (flag_is(arg, "--port", &inline_value) || flag_is(arg, "--host", &inline_value)) {
      if (!inline_value)
        i++; /* drop the value too; ours are appended below */
      continue;
    }
    launch_cmd_add_arg(cmd, arg);
  }
  char port_text[16];
  snprintf(port_text, sizeof(port_text), "%d", t->port);
  launch_cmd_add_arg(cmd, "--host");
  launch_cmd_add_arg(cmd, host);
  launch_cmd_add_arg(cmd, "--port");
  launch_cmd_add_arg(cmd, port_text);

  for (size_t i = 0; i < t->n_env; i++) {
    const char *eq = strchr(t->env[i], '=');
    if (!eq || eq == t->env[i])
      return err_setf(err, "launcher: environment entry '%s' is not NAME=VALUE", t->env[i]);
    char *name = xstrndup(t->env[i], (size_t)(eq - t->env[i]));
    launch_cmd_set_env(cmd, name, eq + 1);
    free(name);
  }
  if (t->gpus && *t->gpus) {
    launch_cmd_set_env(cmd, "CUDA_VISIBLE_DEVICES", t->gpus);
    launch_cmd_set_env(cmd, "HIP_VISIBLE_DEVICES", t->gpus);
  }
  return 0;
}

int launch_pick_free_port(struct st_err *err) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return err_setf(err, "launcher: socket: %s", strerror(errno));
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = 0};
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  int port = -1;
  if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0 ||
      getsockname(fd, (struct sockaddr *)&addr, &len) != 0)
    err_setf(err, "launcher: cannot find a free port: %s", strerror(errno));
  else
    port = ntohs(addr.sin_port);
  close(fd);
  return port;
}
