/* servetop recipes / show / lint: browse, resolve and check recipes. */
#include "cli/cli.h"
#include "engine/engine.h"
#include "recipe/recipe.h"
#include "run/run.h"
#include "util/util.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct source_opts {
  const char *configs_dir;
  const char *inferencex_dir;
  bool json;
};

#define SOURCE_SPECS(o)                                                                           \
  {"configs", OPT_STRING, &(o)->configs_dir, "DIR",                                               \
   "servetop recipe files (*.yaml); default: the bundled recipes", NULL, NULL},                   \
      {"inferencex", OPT_STRING, &(o)->inferencex_dir, "DIR",                                     \
       "an InferenceX checkout (configs/*-master.yaml, runners/, benchmarks/)", NULL, NULL},      \
      {"json", OPT_FLAG, &(o)->json, NULL, "machine-readable output", NULL, NULL}

/* Loads the set the options name; NULL (message printed) on a usage error. */
static struct recipe_set *load_source(const char *cmd, const struct source_opts *o) {
  struct st_err err;
  struct recipe_set *set = recipe_set_load_source(o->configs_dir, o->inferencex_dir, &err);
  if (!set)
    fprintf(stderr, "servetop %s: %s\n", cmd, err.msg);
  return set;
}

static void print_diags(const struct recipe_set *set) {
  for (size_t i = 0; i < recipe_set_diag_count(set); i++) {
    const struct recipe_diag *d = recipe_set_diag_at(set, i);
    if (d->line)
      fprintf(stderr, "%s:%d:%d: %s\n", d->file, d->line, d->col, d->message);
    else
      fprintf(stderr, "%s: %s\n", d->file, d->message);
  }
}

/* "read 2 files (0 failed to load), 208 entries (0 failed to load)" */
static void print_counts(const struct recipe_set *set) {
  struct recipe_counts c;
  recipe_set_counts(set, &c);
  printf("read %zu file%s (%zu failed to load), %zu entr%s (%zu failed to load)", c.files,
         c.files == 1 ? "" : "s", c.files_failed, c.entries, c.entries == 1 ? "y" : "ies",
         c.entries_failed);
}

/* "tp8/ep8" or "tp8/ep8+dpa" for a recipe's distinct topologies. */
static char *topology_alloc(const struct recipe *r) {
  struct sbuf sb = {0};
  for (size_t i = 0; i < r->n_points; i++) {
    const struct recipe_point *p = &r->points[i];
    bool seen = false;
    for (size_t k = 0; k < i && !seen; k++)
      seen = r->points[k].tp == p->tp && r->points[k].ep == p->ep &&
             r->points[k].dp_attn == p->dp_attn;
    if (!seen)
      sbuf_printf(&sb, "%stp%d/ep%d%s", sb.len ? "," : "", p->tp, p->ep, p->dp_attn ? "+dpa" : "");
  }
  return sb.data ? sbuf_take(&sb) : xstrdup("-");
}

static char *concs_alloc(const struct recipe *r) {
  int lo = 0, hi = 0;
  for (size_t i = 0; i < r->n_points; i++) {
    int c = r->points[i].conc;
    lo = i == 0 || c < lo ? c : lo;
    hi = c > hi ? c : hi;
  }
  return xasprintf("%d-%d (%zu)", lo, hi, r->n_points);
}

static cJSON *point_json(const struct recipe_point *p) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "tp", p->tp);
  cJSON_AddNumberToObject(o, "ep", p->ep);
  cJSON_AddBoolToObject(o, "dp_attn", p->dp_attn);
  cJSON_AddNumberToObject(o, "conc", p->conc);
  if (p->kv_offloading)
    cJSON_AddStringToObject(o, "kv_offloading", p->kv_offloading);
  cJSON_AddNumberToObject(o, "line", p->line);
  return o;
}

/* How an InferenceX recipe reaches its launch script. */
static cJSON *route_json(const struct recipe_route *rt) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "family", rt->family);
  json_add_string_or_null(o, "launcher", rt->launcher);
  json_add_string_or_null(o, "script", rt->script);
  cJSON_AddBoolToObject(o, "exists", rt->exists);
  cJSON_AddNumberToObject(o, "launcher_line", rt->launcher_line);
  cJSON_AddNumberToObject(o, "run_line", rt->run_line);
  cJSON_AddItemToObject(o, "tried", cJSON_CreateStringArray(rt->tried, (int)rt->n_tried));
  return o;
}

static cJSON *recipe_json(const struct recipe *r, const struct recipe_set *set) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "name", r->name);
  cJSON_AddStringToObject(o, "entry", r->entry);
  cJSON_AddStringToObject(o, "origin", r->origin == RECIPE_ORIGIN_SERVETOP ? "servetop" : "inferencex");
  cJSON_AddStringToObject(o, "model", r->model);
  cJSON_AddStringToObject(o, "model_prefix", r->model_prefix);
  cJSON_AddStringToObject(o, "precision", r->precision);
  cJSON_AddStringToObject(o, "runner", r->runner);
  cJSON_AddStringToObject(o, "gpu", r->gpu);
  cJSON_AddStringToObject(o, "framework", r->framework);
  cJSON_AddStringToObject(o, "engine", r->engine);
  json_add_string_or_null(o, "image", r->image);
  cJSON_AddStringToObject(o, "scenario", recipe_scenario_name(r->scenario));
  cJSON_AddNumberToObject(o, "isl", r->isl);
  cJSON_AddNumberToObject(o, "osl", r->osl);
  cJSON_AddStringToObject(o, "spec_decoding", recipe_spec_name(r->spec));
  const struct recipe *twin = recipe_set_twin(set, r);
  json_add_string_or_null(o, "twin", twin ? twin->name : NULL);
  cJSON *pts = cJSON_AddArrayToObject(o, "points");
  for (size_t i = 0; i < r->n_points; i++)
    cJSON_AddItemToArray(pts, point_json(&r->points[i]));
  cJSON *b = cJSON_AddObjectToObject(o, "benchmark");
  cJSON_AddNumberToObject(b, "random_range_ratio", r->bench.random_range_ratio);
  cJSON_AddBoolToObject(b, "use_chat_template", r->bench.use_chat_template);
  cJSON_AddNumberToObject(b, "num_prompts_factor", r->bench.num_prompts_factor);
  cJSON_AddNumberToObject(b, "num_warmups", r->bench.num_warmups);
  cJSON_AddStringToObject(b, "backend", r->bench.backend ? r->bench.backend : "vllm");
  cJSON_AddStringToObject(o, "file", r->file);
  cJSON_AddNumberToObject(o, "line", r->line);
  json_add_string_or_null(o, "script", r->script_path);
  if (r->origin == RECIPE_ORIGIN_INFERENCEX) {
    cJSON *routes = cJSON_AddArrayToObject(o, "routes");
    for (size_t i = 0; i < r->n_routes; i++)
      cJSON_AddItemToArray(routes, route_json(&r->routes[i]));
  }
  return o;
}

static void print_json(cJSON *j) {
  char *s = cJSON_Print(j);
  if (!s)
    util_die_oom(0);
  puts(s);
  cJSON_free(s);
}

/* ---------------------------------------------------------------- recipes */
/* The shared start of `recipes` and `lint`: parse the source options and load
 * the set. Returns the set, or NULL with *status set (help shown, or usage). */
static struct recipe_set *parse_and_load(const char *cmd, const char *usage,
                                         const char *description, int argc, char **argv,
                                         struct source_opts *o, int *status) {
  const struct opt_spec specs[] = {SOURCE_SPECS(o)};
  const struct opt_parser parser = {.usage = usage, .description = description, .specs = specs,
                                    .n_specs = ST_ARRAY_LEN(specs)};
  *status = cli_parse_options(&parser, cmd, argc - 1, argv + 1, NULL, 0, NULL);
  if (*status != CLI_GO_ON)
    return NULL;
  *status = EXIT_USAGE; /* when the source does not load */
  return load_source(cmd, o);
}

/* The recipes as a table whose columns are as wide as what they hold. */
enum { RT_NAME, RT_ENGINE, RT_GPU, RT_PREC, RT_SPEC, RT_SEQ, RT_CONC, RT_TOPO, RT_COLS };

static void print_recipe_table(const struct recipe_set *set) {
  static const char *const head[RT_COLS] = {"RECIPE", "ENGINE", "GPU",           "PREC",
                                             "SPEC",   "SEQ",    "CONC (POINTS)", "TOPOLOGY"};
  size_t n = recipe_set_count(set);
  char **cell = xcalloc((n + 1) * RT_COLS, sizeof *cell);
  size_t width[RT_COLS] = {0};
  for (size_t c = 0; c < RT_COLS; c++)
    cell[c] = xstrdup(head[c]);
  for (size_t i = 0; i < n; i++) {
    const struct recipe *r = recipe_set_at(set, i);
    char **row = cell + (i + 1) * RT_COLS;
    row[RT_NAME] = xstrdup(r->name);
    row[RT_ENGINE] = xstrdup(r->engine);
    row[RT_GPU] = xstrdup(r->gpu ? r->gpu : "?");
    row[RT_PREC] = xstrdup(r->precision);
    row[RT_SPEC] = xstrdup(r->spec == RECIPE_SPEC_NONE ? "off" : recipe_spec_name(r->spec));
    row[RT_SEQ] = xstrdup(recipe_seq_tag(r));
    row[RT_CONC] = concs_alloc(r);
    row[RT_TOPO] = topology_alloc(r);
  }
  for (size_t i = 0; i <= n; i++)
    for (size_t c = 0; c < RT_COLS; c++) {
      size_t w = strlen(cell[i * RT_COLS + c]);
      width[c] = w > width[c] ? w : width[c];
    }
  for (size_t i = 0; i <= n; i++) {
    for (size_t c = 0; c < RT_COLS; c++) {
      const char *v = cell[i * RT_COLS + c];
      if (c + 1 < RT_COLS)
        printf("%-*s  ", (int)width[c], v);
      else
        printf("%s\n", v); /* the last column, the longest, is not padded */
      free(cell[i * RT_COLS + c]);
    }
  }
  free(cell);
}

/* The multinode entries servetop lists but does not resolve, as one
 * paragraph of names. */
static void print_multinode(const struct recipe_set *set) {
  size_t n = recipe_set_multinode_count(set);
  if (!n)
    return;
  printf("%zu multinode entr%s not resolved (servetop reads single-node recipes):\n", n,
         n == 1 ? "y" : "ies");
  size_t col = 0;
  for (size_t i = 0; i < n; i++) {
    const char *name = recipe_set_multinode_at(set, i);
    size_t w = strlen(name) + (i + 1 < n ? 1 : 0);
    if (col && col + 1 + w > 100) {
      printf("\n");
      col = 0;
    }
    col += (size_t)printf("%s%s%s", col ? " " : "  ", name, i + 1 < n ? "," : "");
  }
  printf("\n");
}

int cmd_recipes_main(int argc, char **argv) {
  struct source_opts o = {0};
  int status;
  struct recipe_set *set = parse_and_load(
      "recipes", "servetop recipes [--configs DIR | --inferencex DIR] [--json]",
      "Lists recipes: the bundled ones (found via $SERVETOP_CONFIGS, "
      "<exe>/../configs, <exe>/../share/servetop/configs, ./configs), a directory "
      "of servetop recipe files, or an InferenceX checkout. Load problems are "
      "printed to stderr with file:line:column; the other recipes still load.",
      argc, argv, &o, &status);
  if (!set)
    return status;
  print_diags(set);
  if (o.json) {
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; i < recipe_set_count(set); i++)
      cJSON_AddItemToArray(arr, recipe_json(recipe_set_at(set, i), set));
    print_json(arr);
    cJSON_Delete(arr);
  } else {
    print_recipe_table(set);
    printf("\n%zu recipe%s; ", recipe_set_count(set), recipe_set_count(set) == 1 ? "" : "s");
    print_counts(set);
    printf("\n");
    print_multinode(set);
    if (recipe_set_diag_count(set))
      printf("%zu load problems (see stderr)\n", recipe_set_diag_count(set));
  }
  recipe_set_free(set);
  return EXIT_OK;
}

/* ---------------------------------------------------------------- no recipe */
void cli_no_recipe(const char *cmd, const struct recipe_set *set, const char *name) {
  bool multinode = false;
  for (size_t i = 0; i < recipe_set_multinode_count(set) && !multinode; i++)
    multinode = strcmp(recipe_set_multinode_at(set, i), name) == 0;
  if (multinode)
    fprintf(stderr, "servetop %s: %s is a multinode entry; servetop reads single-node "
                    "recipes only\n", cmd, name);
  else
    fprintf(stderr, "servetop %s: no recipe '%s' (servetop recipes lists them)\n", cmd, name);
  /* the names that hold what was typed: a prefix, a model, a GPU */
  size_t found = 0;
  for (size_t i = 0; i < recipe_set_count(set) && !multinode; i++) {
    const char *have = recipe_set_at(set, i)->name;
    if (strstr(have, name) && found++ < 8)
      fprintf(stderr, "%s %s", found > 1 ? "," : "  did you mean:", have);
  }
  if (found > 8)
    fprintf(stderr, " (%zu more)", found - 8);
  if (found)
    fprintf(stderr, "\n");
}

/* ---------------------------------------------------------------- show */
/* Prints one shell word, quoted where a shell would expand or split it: the
 * printed command can be pasted into a shell without running anything in it. */
static void print_word(const char *prefix, const char *word, bool assignment) {
  struct sbuf sb = {0};
  sbuf_puts(&sb, prefix);
  if (assignment)
    sbuf_put_shell_assignment(&sb, word);
  else
    sbuf_put_shell_word(&sb, word);
  fputs(sb.data, stdout);
  sbuf_free(&sb);
}

static void print_cmd_text(const struct recipe_cmd *cmd) {
  for (size_t i = 0; i < cmd->n_env; i++) {
    print_word("  ", cmd->env[i], true);
    printf(" \\\n");
  }
  printf("  %s", cmd->program);
  for (size_t i = 0; i < cmd->argc; i++) {
    const char *a = cmd->argv[i];
    bool is_flag = eng_arg_is_flag(eng_find(cmd->engine), a); /* --x, or the engine's -np */
    print_word(is_flag || i == 0 ? " \\\n    " : " ", a, false);
  }
  printf("\n");
}

static cJSON *strv_json(char **v, size_t n) {
  cJSON *a = cJSON_CreateArray();
  for (size_t i = 0; i < n; i++)
    cJSON_AddItemToArray(a, cJSON_CreateString(v[i]));
  return a;
}

int cmd_show_main(int argc, char **argv) {
  struct source_opts o = {0};
  int conc = 0;
  bool conc_given = false;
  struct opt_list sets = {0};
  const struct opt_spec specs[] = {
      SOURCE_SPECS(&o),
      {"conc", OPT_INT, &conc, "N",
       "resolve the server command for this concurrency (default: the sweep's first point)",
       NULL, &conc_given},
      {"set", OPT_LIST, &sets, "KEY=VALUE",
       "override a server flag (repeatable; checked as run --set checks it)", NULL, NULL},
  };
  const struct opt_parser parser = {
      .usage = "servetop show RECIPE [--conc N] [--set KEY=VALUE]... "
               "[--configs DIR | --inferencex DIR] [--json]",
      .description = "Shows one recipe resolved: its sweep points, the launch script and the "
                     "route of each launcher family (InferenceX), the server command with its "
                     "environment for one concurrency, the knobs, and the benchmark flags. "
                     "Scripts are read, never run: what depends on something unknown reads "
                     "<unresolved: $NAME>.",
      .specs = specs,
      .n_specs = ST_ARRAY_LEN(specs)};
  struct st_err err;
  char *pos[1];
  size_t n_pos = 0;
  int rc = cli_parse_options(&parser, "show", argc - 1, argv + 1, pos, 1, &n_pos);
  if (rc == CLI_GO_ON && n_pos != 1)
    rc = cli_usage_error("show", "expected one RECIPE name");
  if (rc == CLI_GO_ON && conc_given && conc < 1)
    rc = cli_usage_error("show", "--conc must be >= 1");
  if (rc != CLI_GO_ON) {
    free(sets.items);
    return rc;
  }
  struct recipe_set *set = load_source("show", &o);
  if (!set) {
    free(sets.items);
    return EXIT_USAGE;
  }
  int status = EXIT_OK;
  const struct recipe *r = recipe_set_find(set, pos[0]);
  if (!r) {
    cli_no_recipe("show", set, pos[0]);
    print_diags(set);
    status = EXIT_USAGE;
    goto out;
  }
  /* the same checks as run's, before anything is shown as valid */
  if (sets.n && run_check_overrides(r, sets.items, sets.n, &err) != 0) {
    fprintf(stderr, "servetop show: --set %s\n", err.msg);
    status = EXIT_USAGE;
    goto out;
  }
  struct recipe_point point = r->n_points ? r->points[0] : (struct recipe_point){.tp = 1, .ep = 1};
  bool in_sweep = true;
  if (conc > 0) {
    in_sweep = false;
    for (size_t i = 0; i < r->n_points && !in_sweep; i++)
      if (r->points[i].conc == conc) {
        point = r->points[i];
        in_sweep = true;
      }
    point.conc = conc;
  }
  struct recipe_cmd cmd;
  bool have_cmd = recipe_server_cmd(r, &point, &cmd, &err) == 0;
  if (have_cmd) {
    for (size_t i = 0; i < sets.n; i++) {
      struct st_err oerr;
      if (recipe_cmd_apply_override(&cmd, sets.items[i], &oerr) < 0) {
        fprintf(stderr, "servetop show: --set %s\n", oerr.msg);
        recipe_cmd_fini(&cmd);
        status = EXIT_USAGE;
        goto out;
      }
    }
  }
  if (o.json) {
    cJSON *j = recipe_json(r, set);
    cJSON *pj = cJSON_AddObjectToObject(j, "resolved_for");
    cJSON_AddNumberToObject(pj, "tp", point.tp);
    cJSON_AddNumberToObject(pj, "ep", point.ep);
    cJSON_AddBoolToObject(pj, "dp_attn", point.dp_attn);
    cJSON_AddNumberToObject(pj, "conc", point.conc);
    cJSON_AddBoolToObject(pj, "in_sweep", in_sweep);
    if (have_cmd) {
      cJSON *cj = cJSON_AddObjectToObject(j, "server");
      cJSON_AddStringToObject(cj, "engine", cmd.engine);
      cJSON_AddStringToObject(cj, "program", cmd.program);
      cJSON_AddItemToObject(cj, "argv", strv_json(cmd.argv, cmd.argc));
      cJSON_AddItemToObject(cj, "env", strv_json(cmd.env, cmd.n_env));
      /* knobs: every --flag with its value ("" for a bare flag), last one wins */
      cJSON *knobs = cJSON_AddObjectToObject(cj, "knobs");
      for (size_t i = 0; i < cmd.argc; i++) {
        const char *a = cmd.argv[i];
        if (!eng_arg_is_flag(eng_find(cmd.engine), a) || a[1 + (a[1] == '-')] == '\0')
          continue;
        const char *flag = a + 1 + (a[1] == '-'); /* without its dashes */
        char *name = xstrndup(flag, strcspn(flag, "="));
        const char *v = recipe_cmd_knob(&cmd, name);
        cJSON_DeleteItemFromObjectCaseSensitive(knobs, name);
        cJSON_AddStringToObject(knobs, name, v ? v : "");
        free(name);
      }
      cJSON_AddBoolToObject(cj, "has_unresolved", cmd.has_unresolved);
      cJSON_AddBoolToObject(cj, "conditional", cmd.conditional);
      cJSON_AddStringToObject(cj, "file", cmd.file ? cmd.file : "");
      cJSON_AddNumberToObject(cj, "line", cmd.line);
      cJSON_AddItemToObject(j, "benchmark_argv", strv_json(cmd.bench_argv, cmd.n_bench_argv));
    } else {
      cJSON_AddNullToObject(j, "server");
      cJSON_AddStringToObject(j, "server_error", err.msg);
    }
    print_json(j);
    cJSON_Delete(j);
  } else {
    printf("%s\n", r->name);
    printf("  model       %s (%s, %s)\n", r->model, r->model_prefix, r->precision);
    printf("  runner      %s", r->runner);
    if (r->gpu && strcmp(r->gpu, r->runner) != 0)
      printf(" (gpu %s)", r->gpu);
    printf("   engine %s", r->engine);
    if (r->framework && strcmp(r->framework, r->engine) != 0)
      printf(" (framework %s)", r->framework);
    printf("\n");
    if (r->image)
      printf("  image       %s\n", r->image);
    printf("  scenario    %s", recipe_scenario_name(r->scenario));
    if (r->scenario == RECIPE_SCENARIO_FIXED_SEQ_LEN)
      printf(" isl %d osl %d", r->isl, r->osl);
    printf("   spec-decoding %s\n", recipe_spec_name(r->spec));
    const struct recipe *twin = recipe_set_twin(set, r);
    printf("  twin        %s\n", twin ? twin->name : "(none)");
    printf("  source      %s:%d\n", r->file, r->line);
    printf("  sweep       ");
    for (size_t i = 0; i < r->n_points; i++) {
      const struct recipe_point *p = &r->points[i];
      bool new_row = i == 0 || p->line != r->points[i - 1].line;
      if (new_row)
        printf("%stp%d ep%d%s conc", i ? "\n              " : "", p->tp, p->ep,
               p->dp_attn ? " dp-attn" : "");
      printf(" %d", p->conc);
    }
    printf("\n");
    if (r->origin == RECIPE_ORIGIN_INFERENCEX) {
      printf("  script      %s\n", r->script_path ? r->script_path : "(none resolved)");
      for (size_t i = 0; i < r->n_routes; i++) {
        const struct recipe_route *rt = &r->routes[i];
        printf("    route %-18s %s%s", rt->family,
               rt->launcher ? (rt->script ? rt->script : "(launcher names no script)")
                            : "(no launcher)",
               rt->script && !rt->exists ? "  [missing]" : "");
        if (rt->script)
          printf("  (%s:%d)", rt->launcher, rt->launcher_line);
        printf("\n");
      }
    }
    char warmups[24];
    if (r->bench.num_warmups < 0)
      snprintf(warmups, sizeof warmups, "default");
    else
      snprintf(warmups, sizeof warmups, "%d", r->bench.num_warmups);
    printf("  benchmark   range-ratio %g, chat template %s, num-prompts %d x conc, warmups %s, "
           "backend %s\n",
           r->bench.random_range_ratio, r->bench.use_chat_template ? "yes" : "no",
           r->bench.num_prompts_factor, warmups, r->bench.backend ? r->bench.backend : "vllm");
    printf("\nserver command at tp%d ep%d conc %d%s", point.tp, point.ep, point.conc,
           in_sweep ? "" : " (not a sweep point)");
    if (!have_cmd) {
      printf(":\n  (not available: %s)\n", err.msg);
    } else {
      printf(" (%s:%d)%s:\n", cmd.file ? cmd.file : "?", cmd.line,
             cmd.conditional ? " [inside a branch that cannot be decided statically]" : "");
      print_cmd_text(&cmd);
      if (cmd.n_bench_argv) {
        printf("\nrun_benchmark_serving");
        for (size_t i = 0; i < cmd.n_bench_argv; i++)
          print_word(" ", cmd.bench_argv[i], false);
        printf("\n");
      }
      if (cmd.has_unresolved)
        printf("\nnote: parts marked <unresolved: ...> depend on values not known statically\n");
    }
  }
  if (have_cmd)
    recipe_cmd_fini(&cmd);
out:
  free(sets.items);
  recipe_set_free(set);
  return status;
}

/* ---------------------------------------------------------------- lint */
int cmd_lint_main(int argc, char **argv) {
  struct source_opts o = {0};
  int status;
  struct recipe_set *set = parse_and_load(
      "lint", "servetop lint [--configs DIR | --inferencex DIR] [--json]",
      "The recipe doctor: checks routes to launch scripts (as each launcher "
      "builds them), MTP vs non-MTP flags and siblings, chat template on MTP "
      "benchmarks, SGLANG_ENABLE_SPEC_V2 by the engine version the image says, "
      "batch limits vs the sweep's concurrency, "
      "engines and variables a launcher hands a script, runner labels and "
      "launchers, and the schema of the checkout's generation. Each finding names "
      "rule, severity, recipe and the file and line to change, with the entry, "
      "sibling or launcher line as notes (--json: \"related\"); docs/recipes.md "
      "lists the rules. Exit status: 1 when any error-level finding, 0 otherwise, "
      "2 for usage errors and a source without recipe files.",
      argc, argv, &o, &status);
  if (!set)
    return status;
  struct recipe_findings f;
  recipe_lint(set, &f);
  recipe_findings_order(&f); /* errors, then warnings */
  if (o.json) {
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; i < f.n; i++) {
      const struct recipe_finding *x = &f.items[i];
      cJSON *j = cJSON_CreateObject();
      cJSON_AddStringToObject(j, "rule", x->rule);
      cJSON_AddStringToObject(j, "id", x->rule_id);
      cJSON_AddStringToObject(j, "severity", recipe_severity_name(x->severity));
      cJSON_AddStringToObject(j, "recipe", x->recipe);
      cJSON_AddStringToObject(j, "file", x->file);
      cJSON_AddNumberToObject(j, "line", x->line);
      if (x->col > 0)
        cJSON_AddNumberToObject(j, "column", x->col);
      cJSON_AddStringToObject(j, "message", x->message);
      cJSON *rel = cJSON_AddArrayToObject(j, "related");
      for (size_t k = 0; k < x->n_related; k++) {
        cJSON *rj = cJSON_CreateObject();
        cJSON_AddStringToObject(rj, "file", x->related[k].file);
        cJSON_AddNumberToObject(rj, "line", x->related[k].line);
        cJSON_AddStringToObject(rj, "what", x->related[k].what);
        cJSON_AddItemToArray(rel, rj);
      }
      cJSON_AddItemToArray(arr, j);
    }
    print_json(arr);
    cJSON_Delete(arr);
  } else {
    for (size_t i = 0; i < f.n; i++) {
      const struct recipe_finding *x = &f.items[i];
      /* file:line:col as `recipes` prints load problems, where the column is known */
      char col[16] = "";
      if (x->col > 0)
        snprintf(col, sizeof col, ":%d", x->col);
      printf("%s:%d%s: %s: %s [%s %s]%s%s\n", x->file, x->line, col,
             recipe_severity_name(x->severity), x->message, x->rule, x->rule_id,
             x->recipe[0] ? " " : "", x->recipe);
      for (size_t k = 0; k < x->n_related; k++)
        printf("  %s:%d: note: %s\n", x->related[k].file, x->related[k].line, x->related[k].what);
    }
    size_t errors = recipe_findings_errors(&f), warnings = 0;
    for (size_t i = 0; i < f.n; i++)
      warnings += f.items[i].severity == RECIPE_SEV_WARNING;
    if (f.n)
      printf("%zu finding%s (%zu error%s, %zu warning%s)", f.n, f.n == 1 ? "" : "s", errors,
             errors == 1 ? "" : "s", warnings, warnings == 1 ? "" : "s");
    else
      printf("no findings");
    printf(" in %zu recipe%s; ", recipe_set_count(set), recipe_set_count(set) == 1 ? "" : "s");
    print_counts(set);
    if (recipe_set_multinode_count(set))
      printf("; %zu multinode entr%s not resolved", recipe_set_multinode_count(set),
             recipe_set_multinode_count(set) == 1 ? "y" : "ies");
    printf("\n");
  }
  status = recipe_findings_errors(&f) ? EXIT_FINDINGS : EXIT_OK;
  recipe_findings_fini(&f);
  recipe_set_free(set);
  return status;
}
