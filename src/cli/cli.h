/* cli: the servetop program — main() and one entry point per subcommand.
 * src/cli is the program, not part of the core library: it is the one place
 * that links the core (src/<module>) with the dashboard (ui/). */
#ifndef SERVETOP_CLI_CLI_H
#define SERVETOP_CLI_CLI_H

#include "util/util.h"

/* The subcommands, in the order `servetop --help` lists them:
 * X(name, one-line summary). Each has an entry point cmd_<name>_main that
 * takes the arguments after the subcommand name (argv[0] is the subcommand)
 * and returns the process exit status; main.c tables them from this list. */
#define CLI_COMMANDS(X)                                                                        \
  X(recipes, "list recipes (bundled, --configs DIR or --inferencex DIR)")                      \
  X(show, "one recipe resolved: server command, env, knobs, sweep, script")                   \
  X(lint, "the recipe doctor: find recipe mistakes before GPU hours are spent")               \
  X(sim, "a simulated SGLang-compatible server (takes launch_server flags)")                  \
  X(bench, "headless load run against a server (benchmark_serving.py flags)")                 \
  X(run, "launch a recipe's server, measure it, stop it (--ab: MTP vs off)")                  \
  X(tune, "search a recipe's knobs for the best setting under an SLO")                        \
  X(attach, "measure a server that is already running (any OpenAI URL)")                      \
  X(compare, "two results, runs or sweeps side by side")                                      \
  X(export, "a tuned run as an InferenceX master-config entry + script")                      \
  X(gpus, "GPUs and processes from the telemetry backend")                                    \
  X(engines, "the servers servetop launches, and whether each can run here")

#define CLI_DECLARE_COMMAND(name, summary) int cmd_##name##_main(int argc, char **argv);
CLI_COMMANDS(CLI_DECLARE_COMMAND)
#undef CLI_DECLARE_COMMAND
int cmd_tui_main(int argc, char **argv); /* servetop (no subcommand) */

/* Exit statuses shared by the subcommands. */
enum { EXIT_OK = 0, EXIT_FINDINGS = 1, EXIT_USAGE = 2 };

/* A subcommand's options, parsed as opt_parse does. --help prints the help
 * to stdout and gives EXIT_OK; a bad option prints "servetop CMD: why" to
 * stderr and gives EXIT_USAGE; CLI_GO_ON when the command goes on. cmd is
 * NULL for the dashboard (no subcommand). */
enum { CLI_GO_ON = -1 };
int cli_parse_options(const struct opt_parser *p, const char *cmd, int argc, char **argv,
                      char **pos, size_t max_pos, size_t *n_pos);
/* cli_parse_options for a subcommand (argv[0] is its name) that takes exactly
 * n_want positional arguments into pos (room for max_pos): other counts print
 * "servetop CMD: <wrong>" and give EXIT_USAGE. */
int cli_parse_positionals(const struct opt_parser *p, const char *cmd, int argc, char **argv,
                          char **pos, size_t max_pos, size_t n_want, const char *wrong);
/* SIGINT, SIGTERM and SIGHUP call handler (a stop: run, attach, tune). */
void cli_on_stop_signals(void (*handler)(int));
/* Prints "servetop CMD: <message>" to stderr; returns EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) ST_PRINTF(2, 3);
/* "servetop CMD: no recipe 'NAME' (...)" and the did-you-mean of the names
 * that hold NAME (show and run say the same), to stderr. */
struct recipe_set;
void cli_no_recipe(const char *cmd, const struct recipe_set *set, const char *name);

/* One input check of a command: bad, and the message that names its flag. */
struct cli_check {
  bool bad;
  const char *what;
};
/* The first bad check's message, copied into buf (returned); NULL when none is bad. */
const char *cli_first_bad(const struct cli_check *checks, size_t n_checks, char *buf, size_t n);
/* "FLAG PATH: not a directory" into buf (returned) when path names something
 * that is not a directory; NULL when path is NULL, absent or a directory. */
const char *cli_not_a_directory(const char *flag, const char *path, char *buf, size_t n);
/* Sets --proxy for every request (http_set_proxy); on a bad value "--proxy <why>"
 * into buf (returned), else NULL. */
const char *cli_proxy_error(const char *proxy, char *buf, size_t n);

/* The load's figures on one line (the headless status line of `run`, bench's
 * progress line): every figure of the model shown there (FIG_SHOW_STATUS), in
 * the table's order, each after sep: a rate as "<brief> <window> <unit>
 * (<span>s), <point> (point)" (window NULL: the point's only; the window's
 * output rate followed by " (est.)" when window_estimated: see
 * lg_live.output_estimated), a distribution as "<brief> p50 <point> <unit>". */
struct fig_set;
void cli_figures_line(struct sbuf *sb, const char *sep, const struct fig_set *window,
                      double window_span_s, bool window_estimated, const struct fig_set *point);

#endif
