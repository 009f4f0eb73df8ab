/* Placeholder until this subcommand is built; its owner replaces this file. */
#include "cli/cli.h"

#include <stdio.h>

int cmd_bench_main(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "servetop bench: not available in this build yet\n");
  return EXIT_USAGE;
}
