/* servetop engines: the engine table, and whether each engine can run here
 * (its probe, the path of its program where servetop finds it). */
#include "cli/cli.h"
#include "engine/engine.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

int cmd_engines_main(int argc, char **argv) {
  bool json = false;
  const char *llama_server = NULL;
  const struct opt_spec specs[] = {
      {"json", OPT_FLAG, &json, NULL, "machine-readable output", NULL, NULL},
      {"llama-server", OPT_STRING, &llama_server, "PATH", "llama.cpp's llama-server binary",
       NULL, NULL},
  };
  struct opt_parser parser = {
      .usage = "servetop engines [--json] [--llama-server PATH]",
      .description = "Lists the servers servetop launches (the --engine names), whether each can "
                     "run here and why not (probes may take seconds), and where servetop finds "
                     "the program of those it looks up itself. The sim always runs. Exit status "
                     "0 (whatever is available), 2 on usage errors.",
      .specs = specs,
      .n_specs = ST_ARRAY_LEN(specs)};
  struct st_err err = {{0}};
  int rc = cli_parse_options(&parser, "engines", argc - 1, argv + 1, NULL, 0, NULL);
  if (rc != CLI_GO_ON)
    return rc;
  if (llama_server && eng_set_program_path("llama-server", llama_server, &err) != 0)
    return cli_usage_error("engines", "%s", err.msg);
  cJSON *arr = cJSON_CreateArray();
  for (size_t i = 0; i < eng_count(); i++) {
    const struct eng_ops *e = eng_at(i);
    char why[512] = "", path[PATH_MAX] = "", unused[8];
    bool ok = e->probe(why, sizeof why);
    bool located = e->locate && e->locate(path, sizeof path, unused, sizeof unused);
    if (json) {
      cJSON *o = cJSON_CreateObject();
      cJSON_AddStringToObject(o, "name", e->name);
      cJSON_AddStringToObject(o, "title", e->title);
      cJSON_AddBoolToObject(o, "simulated", e->simulated);
      cJSON_AddBoolToObject(o, "available", ok);
      if (!ok)
        cJSON_AddStringToObject(o, "reason", why);
      json_add_string_or_null(o, "program_path", located ? path : NULL);
      cJSON_AddItemToArray(arr, o);
    } else {
      printf("%-9s %-13s %s%s\n", e->name, e->title, ok ? "available" : "unavailable: ",
             ok ? "" : why);
      if (located)
        printf("%-23s %s\n", "", path);
    }
  }
  if (json) {
    char *text = cJSON_Print(arr);
    puts(text);
    free(text);
  }
  cJSON_Delete(arr);
  return EXIT_OK;
}
