/* Placeholder until this subcommand is built; its owner replaces this file. */
#include "cli/cli.h"

#include <stdio.h>

int cmd_gpus_main(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "servetop gpus: not available in this build yet\n");
  return EXIT_USAGE;
}
