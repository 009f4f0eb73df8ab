/* launcher: argv/env vectors of a command, and a free port. */
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
