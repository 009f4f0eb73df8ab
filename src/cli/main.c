/* servetop: a terminal dashboard for tuning LLM inference servers on one node. */
#include "cli/cli.h"
#include "http/http.h"
#include "util/util.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

struct subcommand {
  const char *name;
  int (*main)(int argc, char **argv);
  const char *summary;
};

#define SUBCOMMAND_ROW(name, summary) {#name, cmd_##name##_main, summary},
static const struct subcommand subcommands[] = {CLI_COMMANDS(SUBCOMMAND_ROW)};
#undef SUBCOMMAND_ROW

static void usage(FILE *out) {
  fprintf(out,
          "usage: servetop [--theme NAME] [--configs DIR | --inferencex DIR]\n"
          "                [--results DIR] [--ascii] [--llama-server PATH]\n"
          "       servetop <command> [options]   (servetop <command> --help)\n"
          "\n");
  opt_print_wrapped(out,
                    "Without a command, servetop opens the dashboard on the bundled recipes; "
                    "where no GPU server can run, SGLang and vLLM recipes run against the "
                    "simulated server; llama.cpp recipes run on llama-server (servetop engines "
                    "says where it is). --theme: default, light, high-contrast, mono or a .theme "
                    "path; --results: run folders (default $XDG_DATA_HOME/servetop/runs); "
                    "--ascii: ASCII boxes and charts; --llama-server: llama.cpp's llama-server "
                    "binary.");
  fprintf(out, "\ncommands:\n");
  for (size_t i = 0; i < ST_ARRAY_LEN(subcommands); i++)
    fprintf(out, "  %-9s %s\n", subcommands[i].name, subcommands[i].summary);
  fprintf(out, "\n  --version  print the version\n  --help     this help\n");
}

int main(int argc, char **argv) {
  /* A peer closing a socket must be an error return, never a signal. */
  signal(SIGPIPE, SIG_IGN);
  http_global_init(); /* libcurl's global state, once, before any thread exists */
  if (argc >= 2) {
    const char *cmd = argv[1];
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
      printf("servetop %s\n", SERVETOP_VERSION);
      return EXIT_OK;
    }
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
      usage(stdout);
      return EXIT_OK;
    }
    for (size_t i = 0; i < ST_ARRAY_LEN(subcommands); i++)
      if (strcmp(cmd, subcommands[i].name) == 0)
        return subcommands[i].main(argc - 1, argv + 1);
    if (cmd[0] != '-') {
      fprintf(stderr, "servetop: unknown command '%s'\n\n", cmd);
      usage(stderr);
      return EXIT_USAGE;
    }
  }
  return cmd_tui_main(argc - 1, argv + 1);
}
