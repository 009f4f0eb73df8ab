/* servetop with no subcommand: the dashboard. */
#include "cli/cli.h"
#include "engine/engine.h"
#include "tui.h"
#include "util/util.h"

#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

int cmd_tui_main(int argc, char **argv) {
  struct tui_options o = {.theme = NULL};
  const char *llama_server = NULL;
  const struct opt_spec specs[] = {
      {"theme", OPT_STRING, &o.theme, "NAME",
       "colour theme: default, light, high-contrast, mono, or a .theme path", NULL, NULL},
      {"configs", OPT_STRING, &o.configs_dir, "DIR", "servetop recipe folder (default: bundled)", NULL, NULL},
      {"inferencex", OPT_STRING, &o.inferencex_dir, "DIR", "an InferenceX checkout", NULL, NULL},
      {"results|results-dir", OPT_STRING, &o.results_dir, "DIR",
       "run folders: where runs go and where L finds past runs (default: XDG data dir/runs)", NULL,
       NULL},
      {"ascii", OPT_FLAG, &o.ascii, NULL, "ASCII boxes and charts (default: UTF-8 when the locale is)",
       NULL, NULL},
      {"llama-server", OPT_STRING, &llama_server, "PATH",
       "llama.cpp's llama-server binary (default: on PATH, else the setup script's cache)", NULL,
       NULL},
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
  int rc = cli_parse_options(&p, NULL, argc, argv, NULL, 0, NULL);
  if (rc != CLI_GO_ON)
    return rc;
  if (llama_server && eng_set_program_path("llama-server", llama_server, &err) != 0)
    return cli_usage_error(NULL, "%s", err.msg);
  const char *dirs[][2] = {{"--configs", o.configs_dir}, {"--inferencex", o.inferencex_dir},
                           {"--results", o.results_dir}};
  for (size_t i = 0; i < ST_ARRAY_LEN(dirs); i++) {
    struct stat st;
    bool missing_ok = i == 2; /* the results folder is made when a run starts */
    if (!dirs[i][1])
      continue;
    if (stat(dirs[i][1], &st) != 0 ? !missing_ok : !S_ISDIR(st.st_mode)) {
      fprintf(stderr, "servetop: %s %s: not a directory\n", dirs[i][0], dirs[i][1]);
      return EXIT_USAGE;
    }
  }
  if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
    fprintf(stderr, "servetop: the dashboard needs a terminal (see servetop --help for commands)\n");
    return EXIT_USAGE;
  }
  return tui_run(&o);
}
