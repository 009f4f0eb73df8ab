/* Placeholder until this subcommand is built; its owner replaces this file. */
#include "cli/cli.h"

#include <stdio.h>

int cmd_recipes_main(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "servetop recipes: not available in this build yet\n");
  return EXIT_USAGE;
}

int cmd_show_main(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "servetop show: not available in this build yet\n");
  return EXIT_USAGE;
}

int cmd_lint_main(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "servetop lint: not available in this build yet\n");
  return EXIT_USAGE;
}
