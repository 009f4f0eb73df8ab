/* The option parsing every subcommand starts with, and its usage errors. */
#include "cli/cli.h"

#include "http/http.h"

#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <stdio.h>
#include <sys/stat.h>

static void vusage_error(const char *cmd, const char *fmt, va_list ap) {
  if (cmd)
    fprintf(stderr, "servetop %s: ", cmd);
  else
    fputs("servetop: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
}

int cli_usage_error(const char *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vusage_error(cmd, fmt, ap);
  va_end(ap);
  return EXIT_USAGE;
}

int cli_parse_options(const struct opt_parser *p, const char *cmd, int argc, char **argv,
                      char **pos, size_t max_pos, size_t *n_pos) {
  struct st_err err = {{0}};
  int rc = opt_parse(p, argc, argv, pos, max_pos, n_pos, &err);
  if (rc == OPT_HELP) {
    opt_print_help(p, stdout);
    return EXIT_OK;
  }
  if (rc != OPT_OK)
    return cli_usage_error(cmd, "%s", err.msg);
  return CLI_GO_ON;
}

const char *cli_first_bad(const struct cli_check *checks, size_t n_checks, char *buf, size_t n) {
  for (size_t i = 0; i < n_checks; i++)
    if (checks[i].bad) {
      snprintf(buf, n, "%s", checks[i].what);
      return buf;
    }
  return NULL;
}

const char *cli_not_a_directory(const char *flag, const char *path, char *buf, size_t n) {
  struct stat st;
  if (!path || stat(path, &st) != 0 || S_ISDIR(st.st_mode))
    return NULL;
  snprintf(buf, n, "%s %.300s: not a directory", flag, path);
  return buf;
}

const char *cli_proxy_error(const char *proxy, char *buf, size_t n) {
  struct st_err err;
  if (http_set_proxy(proxy, &err) == 0)
    return NULL;
  snprintf(buf, n, "--proxy %s", err.msg);
  return buf;
}

int cli_parse_positionals(const struct opt_parser *p, const char *cmd, int argc, char **argv,
                          char **pos, size_t max_pos, size_t n_want, const char *wrong) {
  size_t n_pos = 0;
  int rc = cli_parse_options(p, cmd, argc - 1, argv + 1, pos, max_pos, &n_pos);
  if (rc != CLI_GO_ON)
    return rc;
  if (n_pos != n_want)
    return cli_usage_error(cmd, "%s", wrong);
  return CLI_GO_ON;
}

void cli_on_stop_signals(void (*handler)(int)) {
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
}
