/* servetop tune: the best server setting for an SLO, searched on real launches (run.h "tune",
 * src/tune; docs/tune.md). Headless: a line per measured point, the answer at the end. */
#include "cli/cli.h"
#include "run/run.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { EXIT_TUNE_NO_ANSWER = 1, EXIT_TUNE_INTERRUPTED = 130 };

static struct run_tune *volatile active_tune;
static volatile sig_atomic_t tune_signalled;

static void on_tune_signal(int sig) {
  (void)sig;
  tune_signalled = 1;
  struct run_tune *t = active_tune;
  if (t)
    run_tune_stop(t); /* a flag: async-signal-safe */
}

struct tune_opts {
  const char *configs_dir, *inferencex_dir, *engine_name, *results_dir, *llama_server, *gpus;
  const char *slo, *budget, *chat;
  struct opt_list knobs, server_args;
  int isl, osl, conc_min, conc_max, max_points, num_prompts;
  double range_ratio;
  long seed;
  bool sim, quiet, grid;
  bool isl_seen, osl_seen, conc_min_seen, conc_max_seen, max_points_seen, num_prompts_seen;
  bool range_ratio_seen, seed_seen;
};

static const char tune_description[] =
    "Searches the server configurations of RECIPE for the one with the highest goodput: the\n"
    "output throughput (per GPU where the recipe names its GPUs) at the highest concurrency whose\n"
    "SLO holds. \"Holds\" means every latency's 95% upper bound is inside its target and the tok/s\n"
    "per user's lower bound above its minimum: a setting to rely on, not one that met the target\n"
    "by luck. Per configuration (one launch of the server) the concurrency is bracketed by\n"
    "doubling and bisected; configurations are visited by coordinate search from the recipe's own\n"
    "setting, and one that cannot beat the best so far is dropped (docs/tune.md).\n"
    "--slo: any of ttft_p99_ms, tpot_p99_ms, e2el_p99_ms, itl_p99_ms (ceilings) and\n"
    "min_tok_s_per_user (a floor), e.g. --slo ttft_p99_ms=2000,tpot_p99_ms=50.\n"
    "--knob NAME=LO:HI:STEP or NAME=V1,V2,... (repeatable): kv-cache and max-batch (the engine's\n"
    "own flags, as --set maps them), spec=off,on (the recipe's MTP/off twin), or any server flag\n"
    "by name (max-running-requests=8,16,32; on vLLM also a dotted JSON key such as\n"
    "speculative-config.num_speculative_tokens=1,2). Every value is checked against the engine first.\n"
    "A configuration that fails to start is recorded with the server's reason and the search goes\n"
    "on. No point starts after --budget; Ctrl-C stops the search, keeps what was measured and\n"
    "stops the server. Prints a line per point, then the winner, the runner-up and every\n"
    "configuration. The tune folder (<results>/<time>-tune-<recipe>/) holds tune.json, report.md\n"
    "and one run folder per configuration with each point's result; `servetop export` of it\n"
    "turns the winner into a recipe and an InferenceX entry.\n"
    "Exit status: 0 a winner, 1 no configuration held the SLO (or the search failed), 2 usage or\n"
    "input error (found before anything starts), 130 interrupted (the answer so far is kept).";

/* --budget in seconds (parse_duration_s); -1 when it is not a duration. */
static double parse_budget_s(const char *text) {
  double s;
  return parse_duration_s(text, &s) == 0 ? s : -1;
}

static const char *tune_input_error(const struct tune_opts *o, char *buf, size_t n) {
  const struct cli_check checks[] = {
      {!o->slo, "--slo is required (e.g. --slo ttft_p99_ms=2000,tpot_p99_ms=50)"},
      {o->knobs.n == 0, "--knob is required (e.g. --knob kv-cache=0.80:0.92:0.04)"},
      {o->knobs.n > TUNE_MAX_KNOBS, "--knob: at most 16 knobs"},
      {o->isl_seen && o->isl < 1, "--isl must be >= 1"},
      {o->osl_seen && o->osl < 1, "--osl must be >= 1"},
      {o->range_ratio_seen && !(o->range_ratio >= 0 && o->range_ratio <= 1),
       "--range-ratio must be from 0 to 1"},
      {o->conc_min_seen && o->conc_min < 1, "--conc-min must be >= 1"},
      {o->conc_max_seen && o->conc_max < 1, "--conc-max must be >= 1"},
      {o->conc_min_seen && o->conc_max_seen && o->conc_min > o->conc_max,
       "--conc-min must not be above --conc-max"},
      {o->max_points_seen && o->max_points < 1, "--max-points must be >= 1"},
      {o->num_prompts_seen && o->num_prompts < 1, "--num-prompts must be >= 1"},
      {o->seed_seen && o->seed < 0, "--seed must be >= 0"},
      {o->sim && o->engine_name && strcmp(o->engine_name, "sim") != 0,
       "--sim and --engine name different engines"},
      {o->chat && strcmp(o->chat, "on") != 0 && strcmp(o->chat, "off") != 0,
       "--chat-template: expected on or off"},
  };
  if (cli_first_bad(checks, ST_ARRAY_LEN(checks), buf, n))
    return buf;
  if (o->budget && parse_budget_s(o->budget) < 0) {
    snprintf(buf, n, "--budget '%.100s': expected a duration such as 30m, 90s, 2h or 1h30m",
             o->budget);
    return buf;
  }
  return cli_not_a_directory("--results-dir", o->results_dir, buf, n);
}

static void fmt_s(char *buf, size_t n, double s) {
  if (s >= 3600)
    snprintf(buf, n, "%dh%02dm", (int)(s / 3600), (int)(s / 60) % 60);
  else if (s >= 60)
    snprintf(buf, n, "%dm%02ds", (int)(s / 60), (int)s % 60);
  else
    snprintf(buf, n, "%.0fs", s);
}

/* One measured point: configuration, concurrency, holds or not with each target's figure and
 * interval, the best so far, the time against the budget. */
static void point_line(FILE *out, const struct run_tune *t, const struct run_tune_config *c,
                       const struct tune_result *res, size_t k, const struct run_tune_status *st) {
  const struct tune_probe *p = &res->probes[k];
  char desc[512];
  tune_config_describe(run_tune_space(t), &res->configs[p->config].cfg, desc, sizeof desc);
  fprintf(out, "point %zu | configuration %zu (%s) | c=%d | %s", k + 1, p->config + 1, desc,
          p->concurrency, p->holds ? "holds" : "FAILS");
  for (int f = 0; f < TUNE_N_FIGURES; f++) {
    if (!c->slo.set[f])
      continue;
    const struct tune_estimate *e = &p->pt.figure[f];
    bool floor = f == TUNE_MIN_TOK_S_PER_USER;
    bool ok = floor ? e->lo >= c->slo.target[f] : e->hi <= c->slo.target[f];
    fprintf(out, " | %s %.1f [%.1f, %.1f] %s %g%s", tune_figure_key((enum tune_figure)f),
            e->point, e->lo, e->hi, floor ? ">=" : "<=", c->slo.target[f], ok ? "" : " no");
  }
  fprintf(out, " | %.1f %s", p->pt.throughput.point,
          st->n_gpus > 0 ? "tok/s/GPU" : "tok/s");
  long best = tune_best_config(res, -1);
  if (best >= 0)
    fprintf(out, " | best so far: configuration %ld c=%d %.1f", best + 1,
            res->configs[best].best_conc, res->configs[best].goodput.point);
  char e[16], b[16], eta[16];
  fmt_s(e, sizeof e, st->elapsed_s);
  fmt_s(b, sizeof b, st->budget_s);
  fmt_s(eta, sizeof eta, st->eta_s);
  fprintf(out, " | %s%s%s%s%s\n", e, st->budget_s > 0 ? " of " : "", st->budget_s > 0 ? b : "",
          st->eta_valid ? ", ETA " : "", st->eta_valid ? eta : "");
  fflush(out);
}

static void config_line(FILE *out, const struct run_tune *t, const struct tune_result *res,
                        size_t i) {
  const struct tune_config_result *c = &res->configs[i];
  char desc[512];
  tune_config_describe(run_tune_space(t), &c->cfg, desc, sizeof desc);
  fprintf(out, "configuration %zu (%s): %s", i + 1, desc, tune_status_name(c->status));
  if (c->best_conc > 0)
    fprintf(out, ", best concurrency %d, goodput %.1f [%.1f, %.1f]", c->best_conc,
            c->goodput.point, c->goodput.lo, c->goodput.hi);
  if (c->why[0])
    fprintf(out, ": %s", c->why);
  fputc('\n', out);
  fflush(out);
}

/* Watches the search to its end: a line per point and per configuration done. */
static int watch(const struct tune_opts *o, struct run_tune *t, const struct run_tune_config *c) {
  FILE *out = stdout;
  size_t probes_seen = 0, configs_told = 0;
  struct run_tune_status st;
  struct tune_result res;
  char last_msg[512] = "";
  bool told_engine = false;
  for (;;) {
    run_tune_poll(t, &st, &res);
    if (!told_engine) {
      fprintf(stderr, "servetop tune: engine %s%s\n", st.engine,
              st.simulated ? " (the SIMULATED server: a model's figures, not hardware's)" : "");
      told_engine = true;
    }
    for (; !o->quiet && probes_seen < res.n_probes; probes_seen++)
      point_line(out, t, c, &res, probes_seen, &st);
    /* every configuration but the one being measured is done */
    size_t done = st.over ? res.n_configs : res.n_configs ? res.n_configs - 1 : 0;
    for (; !o->quiet && configs_told < done; configs_told++)
      config_line(out, t, &res, configs_told);
    if (!o->quiet && !st.over && strcmp(last_msg, st.message) != 0) {
      snprintf(last_msg, sizeof last_msg, "%s", st.message);
      fprintf(out, "... %s\n", st.message);
      fflush(out);
    }
    if (st.over)
      break;
    tune_result_free(&res);
    clock_sleep_us(200000);
  }
  if (st.failed) {
    fprintf(stderr, "servetop tune: the search failed: %s\n", st.message);
    if (st.dir[0])
      fprintf(stderr, "tune folder: %s\n", st.dir);
    tune_result_free(&res);
    return EXIT_TUNE_NO_ANSWER;
  }
  struct sbuf sb = {0};
  sbuf_printf(&sb, "\n%s\n\n", st.message);
  run_tune_answer(t, &res, &sb, false);
  sbuf_puts(&sb, "\n");
  run_tune_config_table(t, &res, &sb);
  fputs(sb.data, out);
  sbuf_free(&sb);
  if (st.dir[0])
    fprintf(out, "\ntune folder: %s (tune.json, report.md, a run folder per configuration)\n",
            st.dir);
  if (st.simulated)
    fprintf(out, "SIMULATED: these figures come from servetop sim's model, not hardware\n");
  int rc = res.winner >= 0 ? EXIT_OK : EXIT_TUNE_NO_ANSWER;
  if (st.end == TUNE_END_STOPPED)
    rc = EXIT_TUNE_INTERRUPTED;
  tune_result_free(&res);
  return rc;
}

int cmd_tune_main(int argc, char **argv) {
  struct tune_opts o = {0};
  char engine_help[160];
  snprintf(engine_help, sizeof engine_help, "server to launch: %s (default: as `servetop run`)",
           eng_names(false));
  char prompts_help[240];
  snprintf(prompts_help, sizeof prompts_help,
           "requests per point, exactly when given (default: concurrency x 10, at least %d with "
           "a p99 target, raised so a point lasts 5 s; given with a p99 target, at least %d: a "
           "p99's 95%% interval needs them)",
           RUN_TUNE_P99_MIN_PROMPTS, run_tune_p99_min_prompts());
  const struct opt_spec specs[] = {
      {"slo", OPT_STRING, &o.slo, "K=V,...", "the targets: ttft_p99_ms, tpot_p99_ms, e2el_p99_ms, "
       "itl_p99_ms, min_tok_s_per_user", NULL, NULL},
      {"knob", OPT_LIST, &o.knobs, "NAME=LO:HI:STEP|V1,V2",
       "a knob to search (repeatable): kv-cache, max-batch, spec=off,on, or a server flag", NULL,
       NULL},
      {"budget", OPT_STRING, &o.budget, "DURATION",
       "wall-clock budget (30m, 2h, 90s): no point starts after it", NULL, NULL},
      {"max-points", OPT_INT, &o.max_points, "N", "at most N measured points", NULL,
       &o.max_points_seen},
      {"conc-min", OPT_INT, &o.conc_min, "N", "lowest concurrency searched (default 1)", NULL,
       &o.conc_min_seen},
      {"conc-max", OPT_INT, &o.conc_max, "N", "highest concurrency searched (default 1024)",
       NULL, &o.conc_max_seen},
      {"isl", OPT_INT, &o.isl, "N", "input length (default: the recipe's)", NULL, &o.isl_seen},
      {"osl", OPT_INT, &o.osl, "N", "output length (default: the recipe's)", NULL, &o.osl_seen},
      {"range-ratio", OPT_DOUBLE, &o.range_ratio, "R",
       "random length range ratio (default: the recipe's, else 0.8)", NULL, &o.range_ratio_seen},
      {"chat-template", OPT_STRING, &o.chat, "on|off",
       "measure with the chat template (default: as the recipe's benchmark says)", NULL, NULL},
      {"num-prompts", OPT_INT, &o.num_prompts, "N", prompts_help, NULL, &o.num_prompts_seen},
      {"engine", OPT_STRING, &o.engine_name, "NAME", engine_help, NULL, NULL},
      {"sim", OPT_FLAG, &o.sim, NULL, "run on the simulated server (--engine sim)", NULL, NULL},
      {"llama-server", OPT_STRING, &o.llama_server, "PATH",
       "llama.cpp's llama-server binary (default: on PATH, else the setup script's cache)", NULL,
       NULL},
      {"server-arg", OPT_LIST, &o.server_args, "ARG",
       "append ARG to every server command as is (repeatable)", NULL, NULL},
      {"results-dir|results", OPT_STRING, &o.results_dir, "DIR",
       "results directory (default $XDG_DATA_HOME/servetop/runs)", NULL, NULL},
      {"configs", OPT_STRING, &o.configs_dir, "DIR", "servetop recipe files (default: bundled)",
       NULL, NULL},
      {"inferencex", OPT_STRING, &o.inferencex_dir, "DIR", "an InferenceX checkout", NULL, NULL},
      {"gpus", OPT_STRING, &o.gpus, "LIST", "CUDA_VISIBLE_DEVICES for the server", NULL, NULL},
      {"seed", OPT_LONG, &o.seed, "N", "dataset seed (default 0)", NULL, &o.seed_seen},
      {"quiet", OPT_FLAG, &o.quiet, NULL, "no progress lines; only the answer", NULL, NULL},
      {"grid", OPT_FLAG, &o.grid, NULL,
       "measure the full grid instead of searching (every configuration, each concurrency up "
       "to its first failure): the reference the search is measured against", NULL, NULL},
  };
  struct opt_parser parser = {.usage = "servetop tune RECIPE --slo K=V,... --knob NAME=... "
                                       "[options]",
                              .description = tune_description, .specs = specs,
                              .n_specs = ST_ARRAY_LEN(specs)};
  char *pos[2];
  int rc = cli_parse_positionals(&parser, "tune", argc, argv, pos, ST_ARRAY_LEN(pos), 1,
                                 "expected one RECIPE");
  if (rc != CLI_GO_ON) {
    free(o.knobs.items);
    free(o.server_args.items);
    return rc;
  }
  rc = EXIT_USAGE;
  struct st_err err = {{0}};
  char bad[512];
  struct recipe_set *set = NULL;
  struct tune_knob knobs[TUNE_MAX_KNOBS];
  size_t n_knobs = 0;
  struct run_tune_config c;
  memset(&c, 0, sizeof c);
  if (tune_input_error(&o, bad, sizeof bad)) {
    fprintf(stderr, "servetop tune: %s\n", bad);
    goto out;
  }
  if (tune_slo_parse(o.slo, &c.slo, &err) != 0 ||
      run_tune_check_prompts(&c.slo, o.num_prompts_seen ? o.num_prompts : 0, &err) != 0) {
    fprintf(stderr, "servetop tune: %s\n", err.msg);
    goto out;
  }
  for (size_t i = 0; i < o.knobs.n; i++) {
    if (tune_knob_parse(o.knobs.items[i], &knobs[n_knobs], &err) != 0) {
      fprintf(stderr, "servetop tune: %s\n", err.msg);
      goto out;
    }
    n_knobs++;
  }
  if (o.llama_server && eng_set_program_path("llama-server", o.llama_server, &err) != 0) {
    fprintf(stderr, "servetop tune: %s\n", err.msg);
    goto out;
  }
  const char *engine_name = o.sim ? "sim" : o.engine_name;
  const struct eng_ops *engine = NULL;
  if (engine_name) {
    engine = eng_find(engine_name);
    char path[4096], why[512] = "";
    if (!engine) {
      fprintf(stderr, "servetop tune: --engine %s: expected %s\n", engine_name, eng_names(false));
      goto out;
    }
    if (engine->locate && !engine->locate(path, sizeof path, why, sizeof why)) {
      fprintf(stderr, "servetop tune: --engine %s: %s\n", engine_name, why);
      goto out;
    }
  }
  set = recipe_set_load_source(o.configs_dir, o.inferencex_dir, &err);
  if (!set) {
    fprintf(stderr, "servetop tune: %s\n", err.msg);
    goto out;
  }
  c.recipe = recipe_set_find(set, pos[0]);
  if (!c.recipe) {
    cli_no_recipe("tune", set, pos[0]);
    goto out;
  }
  c.twin = recipe_set_twin(set, c.recipe);
  c.engine = engine;
  c.results_dir = o.results_dir;
  c.knobs = knobs;
  c.n_knobs = n_knobs;
  c.conc_min = o.conc_min;
  c.conc_max = o.conc_max;
  c.budget_s = o.budget ? parse_budget_s(o.budget) : 0;
  c.max_points = o.max_points;
  c.grid = o.grid;
  c.num_prompts = o.num_prompts;
  c.isl = o.isl;
  c.osl = o.osl;
  c.range_ratio = o.range_ratio_seen ? o.range_ratio : -1;
  c.chat_template = !o.chat ? -1 : strcmp(o.chat, "on") == 0;
  c.gpus = o.gpus;
  c.seed = (uint64_t)o.seed;
  c.extra_server_args = o.server_args.items;
  c.n_extra_server_args = o.server_args.n;
  cli_on_stop_signals(on_tune_signal);
  struct run_tune *t = run_tune_start(&c, &err);
  if (!t) {
    fprintf(stderr, "servetop tune: %s\n", err.msg);
    goto out;
  }
  active_tune = t;
  if (tune_signalled)
    run_tune_stop(t);
  rc = watch(&o, t, &c);
  active_tune = NULL;
  run_tune_free(t);
out:
  for (size_t i = 0; i < n_knobs; i++)
    tune_knob_free(&knobs[i]);
  recipe_set_free(set);
  free(o.knobs.items);
  free(o.server_args.items);
  return rc;
}
