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

static const struct subcommand subcommands[] = {
    {"recipes", cmd_recipes_main, "list recipes (bundled, --configs DIR or --inferencex DIR)"},
    {"show", cmd_show_main, "one recipe resolved: server command, env, knobs, sweep, script"},
    {"lint", cmd_lint_main, "the recipe doctor: find recipe mistakes before GPU hours are spent"},
    {"sim", cmd_sim_main, "a simulated SGLang-compatible server (takes launch_server flags)"},
    {"bench", cmd_bench_main, "headless load run against a server (benchmark_serving.py flags)"},
    {"run", cmd_run_main, "launch a recipe's server, measure it, stop it (--ab: MTP vs off)"},
    {"tune", cmd_tune_main, "search a recipe's knobs for the best setting under an SLO"},
    {"attach", cmd_attach_main, "measure a server that is already running (any OpenAI URL)"},
    {"compare", cmd_compare_main, "two results, runs or sweeps side by side"},
    {"export", cmd_export_main, "a tuned run as an InferenceX master-config entry + script"},
    {"gpus", cmd_gpus_main, "GPUs and processes from the telemetry backend"},
    {"engines", cmd_engines_main, "the servers servetop launches, and whether each can run here"},
};

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
