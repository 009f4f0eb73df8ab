/* The option parsing every subcommand starts with, and its usage errors. */
#include "cli/cli.h"

#include <stdarg.h>
#include <stdio.h>

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
