/* cli: the servetop program — main() and one entry point per subcommand.
 * src/cli is the program, not part of the core library: it is the one place
 * that links the core (src/<module>) with the dashboard (ui/). */
#ifndef SERVETOP_CLI_CLI_H
#define SERVETOP_CLI_CLI_H

/* Each takes the arguments after the subcommand name (argv[0] is the
 * subcommand) and returns the process exit status. */
int cmd_recipes_main(int argc, char **argv);  /* servetop recipes */
int cmd_show_main(int argc, char **argv);     /* servetop show */
int cmd_lint_main(int argc, char **argv);     /* servetop lint */
int cmd_sim_main(int argc, char **argv);      /* servetop sim */
int cmd_bench_main(int argc, char **argv);    /* servetop bench */
int cmd_run_main(int argc, char **argv);      /* servetop run */
int cmd_attach_main(int argc, char **argv);   /* servetop attach */
int cmd_compare_main(int argc, char **argv);  /* servetop compare */
int cmd_export_main(int argc, char **argv);   /* servetop export */
int cmd_gpus_main(int argc, char **argv);     /* servetop gpus */
int cmd_engines_main(int argc, char **argv);  /* servetop engines */
int cmd_tui_main(int argc, char **argv);      /* servetop (no subcommand) */

/* Exit statuses shared by the subcommands. */
enum { EXIT_OK = 0, EXIT_FINDINGS = 1, EXIT_USAGE = 2 };

#endif
