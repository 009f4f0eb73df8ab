/* servetop with no subcommand: the dashboard. */
#include "cli/cli.h"
#include "tui.h"
#include "util/util.h"

#include <stdio.h>
#include <unistd.h>

/* Until the run view is in the dashboard, Enter / a on a recipe close the
 * dashboard and hand the recipe to `servetop run` in this terminal. */
static int run_selected(const struct tui_options *o, const struct tui_result *res) {
  const char *argv[8];
  int argc = 0;
  argv[argc++] = "run";
  argv[argc++] = res->run_recipe;
  if (res->run_ab)
    argv[argc++] = "--ab";
  if (o->inferencex_dir) {
    argv[argc++] = "--inferencex";
    argv[argc++] = o->inferencex_dir;
  } else if (o->configs_dir) {
    argv[argc++] = "--configs";
    argv[argc++] = o->configs_dir;
  }
  argv[argc] = NULL;
  fprintf(stderr, "servetop: running %s%s (servetop run chooses the engine: sim where no GPU server)\n",
          res->run_recipe, res->run_ab ? " as an A/B pair" : "");
  /* cmd_run_main takes main()-style argv; it does not modify the strings */
  return cmd_run_main(argc, (char **)argv);
}

int cmd_tui_main(int argc, char **argv) {
  struct tui_result result = {.run_ab = false};
  struct tui_options o = {.result = &result};
  const struct opt_spec specs[] = {
      {"theme", OPT_STRING, &o.theme, "NAME",
       "colour theme: default, light, high-contrast, mono, or a .theme path", NULL, NULL},
      {"configs", OPT_STRING, &o.configs_dir, "DIR", "servetop recipe folder (default: bundled)", NULL, NULL},
      {"inferencex", OPT_STRING, &o.inferencex_dir, "DIR", "an InferenceX checkout", NULL, NULL},
      {"ascii", OPT_FLAG, &o.ascii, NULL, "ASCII boxes and charts (default: UTF-8 when the locale is)",
       NULL, NULL},
  };
  const struct opt_parser p = {
      .usage = "servetop [options]",
      .description = "The dashboard: browse recipes, run them, watch and compare. Themes are looked "
                     "up in $SERVETOP_THEMES, <exe>/../themes, <exe>/../share/servetop/themes and "
                     "./themes; NO_COLOR turns colours off.",
      .specs = specs,
      .n_specs = ST_ARRAY_LEN(specs),
  };
  struct st_err err;
  int rc = opt_parse(&p, argc, argv, NULL, 0, NULL, &err);
  if (rc == OPT_HELP) {
    opt_print_help(&p, stdout);
    return EXIT_OK;
  }
  if (rc != OPT_OK) {
    fprintf(stderr, "servetop: %s\n", err.msg);
    return EXIT_USAGE;
  }
  if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
    fprintf(stderr, "servetop: the dashboard needs a terminal (see servetop --help for commands)\n");
    return EXIT_USAGE;
  }
  rc = tui_run(&o);
  if (rc == 0 && result.run_recipe[0])
    return run_selected(&o, &result);
  return rc;
}
