/* Placeholder until this subcommand is built; its owner replaces this file. */
#include "cli/cli.h"

#include <stdio.h>

int cmd_run_main(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "servetop run: not available in this build yet\n");
  return EXIT_USAGE;
}

int cmd_compare_main(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "servetop compare: not available in this build yet\n");
  return EXIT_USAGE;
}

int cmd_export_main(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "servetop export: not available in this build yet\n");
  return EXIT_USAGE;
}
