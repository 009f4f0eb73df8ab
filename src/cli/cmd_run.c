/* servetop run / compare / export: launch a recipe's server, measure it, stop
 * it; put two results side by side; hand a tuned run back to InferenceX. */
#include "cli/cli.h"
#include "run/run.h" /* includes util/util.h */

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { EXIT_RUN_FAILED = 1, EXIT_INTERRUPTED = 130 };

/* ---------------------------------------------------------------- signals */
static struct run *volatile active_runs[2];

static void on_stop_signal(int sig) {
  (void)sig;
  for (size_t i = 0; i < ST_ARRAY_LEN(active_runs); i++)
    if (active_runs[i])
      run_stop(active_runs[i]); /* sets a flag: async-signal-safe */
}

static void install_stop_handlers(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
}

/* ---------------------------------------------------------------- options */
struct run_opts {
  const char *configs_dir, *inferencex_dir, *engine_name, *results_dir, *gpus, *label;
  const char *llama_server;
  struct opt_list sets, server_args;
  int conc, num_prompts, num_warmups, isl, osl, port;
  double ready_timeout_s;
  double request_timeout_s;
  long seed;
  bool sweep, ab, ab_parallel, headless, allow_mislabel, json, quiet;
};

static const char run_description[] =
    "Launches the recipe's server (its own process group, stopped with servetop even on SIGKILL),\n"
    "waits until it is ready, drives it with the load generator at --conc N or over the recipe's\n"
    "sweep (--sweep: one result per point; the server stays up while its command does not change),\n"
    "then stops it. Each run is a folder under the results directory: manifest.json, recipe.json\n"
    "(the resolved server command), server.log and one result-conc<N>.json per point.\n"
    "\n"
    "Engine: --engine, else the recipe's own where it can run here (sglang: python3 can import\n"
    "sglang and a GPU exists; vllm: `vllm` on PATH and a GPU), else the simulated server (said so).\n"
    "llama.cpp recipes run on llama-server (--llama-server PATH, else PATH, else the cache the\n"
    "setup script in scripts/ fills); when it is absent the run says how to get it and exits 2\n"
    "(the sim only with --engine sim).\n"
    "--set KEY=VALUE takes the engine's flags (mem-fraction-static=0.8, np=8) or a generic knob:\n"
    "kv-cache (alias mem-fraction: the KV cache in the engine's unit, a fraction of GPU memory\n"
    "or llama.cpp's -c tokens) and max-batch (alias batch-cap: requests decoded at once);\n"
    "values are checked before anything starts.\n"
    "A run whose recipe says spec-decoding mtp while the server reports no speculative decoding (or\n"
    "the reverse) is MISLABELLED and exits 1 unless --allow-mislabel.\n"
    "--ab runs the recipe and its MTP/off twin back to back (--ab-parallel: at the same time, the\n"
    "GPUs of --gpus split in halves), then compares them.\n"
    "Ctrl-C stops the load, keeps every measured request and stops the server.\n"
    "Exit status: 0 ok, 1 failed or mislabelled, 2 usage, 130 interrupted.\n"
    "The status line is printed once a second (this build's `servetop run` is headless).";

#define RUN_SPECS(o)                                                                               \
  {                                                                                                \
    {"configs", OPT_STRING, &(o)->configs_dir, "DIR", "servetop recipe files (default: bundled)", \
     NULL, NULL},                                                                                  \
        {"inferencex", OPT_STRING, &(o)->inferencex_dir, "DIR", "an InferenceX checkout", NULL,    \
         NULL},                                                                                    \
        {"engine", OPT_STRING, &(o)->engine_name, "NAME", engine_help, NULL, NULL},                \
        {"llama-server", OPT_STRING, &(o)->llama_server, "PATH",                                   \
         "llama.cpp's llama-server binary (default: on PATH, else the setup script's cache)",     \
         NULL, NULL},                                                                              \
        {"conc", OPT_INT, &(o)->conc, "N", "one point at concurrency N", NULL, NULL},              \
        {"sweep", OPT_FLAG, &(o)->sweep, NULL, "every point of the recipe's sweep", NULL, NULL},   \
        {"set", OPT_LIST, &(o)->sets, "KEY=VALUE",                                                 \
         "override a server knob, e.g. mem-fraction-static=0.85 (repeatable)", NULL, NULL},        \
        {"server-arg", OPT_LIST, &(o)->server_args, "ARG",                                         \
         "append ARG to the server command as is (repeatable; e.g. --server-arg=--sim-speed=20)",  \
         NULL, NULL},                                                                              \
        {"num-prompts", OPT_INT, &(o)->num_prompts, "N", "requests per point (default conc x 10)", \
         NULL, NULL},                                                                              \
        {"num-warmups", OPT_INT, &(o)->num_warmups, "N", "warmup requests (default 2 x conc)",     \
         NULL, NULL},                                                                              \
        {"isl", OPT_INT, &(o)->isl, "N", "input length (default: the recipe's)", NULL, NULL},      \
        {"osl", OPT_INT, &(o)->osl, "N", "output length (default: the recipe's)", NULL, NULL},     \
        {"results", OPT_STRING, &(o)->results_dir, "DIR",                                          \
         "results directory (default $XDG_DATA_HOME/servetop/runs)", NULL, NULL},                  \
        {"gpus", OPT_STRING, &(o)->gpus, "LIST", "CUDA_VISIBLE_DEVICES for the server, e.g. 0,1",  \
         NULL, NULL},                                                                              \
        {"port", OPT_INT, &(o)->port, "N", "server port (default: a free one)", NULL, NULL},       \
        {"ready-timeout", OPT_DOUBLE, &(o)->ready_timeout_s, "S",                                  \
         "readiness timeout (default 1800 s, sim 120 s)", NULL, NULL},                            \
        {"request-timeout", OPT_DOUBLE, &(o)->request_timeout_s, "S",                              \
         "per-request timeout; a stalled stream fails after S (default 21600, as the reference)", \
         NULL, NULL},                                                                              \
        {"seed", OPT_LONG, &(o)->seed, "N", "dataset seed (default 0)", NULL, NULL},               \
        {"label", OPT_STRING, &(o)->label, "TEXT", "run folder suffix", NULL, NULL},               \
        {"ab", OPT_FLAG, &(o)->ab, NULL, "also run the MTP/off twin and compare", NULL, NULL},     \
        {"ab-parallel", OPT_FLAG, &(o)->ab_parallel, NULL, "--ab with both runs at the same time", \
         NULL, NULL},                                                                              \
        {"allow-mislabel", OPT_FLAG, &(o)->allow_mislabel, NULL,                                   \
         "a mislabelled run does not fail", NULL, NULL},                                           \
        {"headless", OPT_FLAG, &(o)->headless, NULL, "status line instead of the dashboard", NULL, \
         NULL},                                                                                    \
        {"json", OPT_FLAG, &(o)->json, NULL, "print the outcome as JSON at the end", NULL, NULL},  \
        {"quiet", OPT_FLAG, &(o)->quiet, NULL, "no status line", NULL, NULL},                      \
  }

static struct recipe_set *load_recipes(const struct run_opts *o) {
  struct st_err err;
  struct recipe_set *set = recipe_set_load_source(o->configs_dir, o->inferencex_dir, &err);
  if (!set)
    fprintf(stderr, "servetop run: %s\n", err.msg);
  return set;
}

/* ---------------------------------------------------------------- status line */
static void format_ms(char *buf, size_t len, const struct snap_percentiles *p) {
  if (p->valid)
    snprintf(buf, len, "%.1f", p->p50_ms);
  else
    snprintf(buf, len, "-");
}

/* The point's figures: live while it is measured, the saved result's once
 * it has ended (result: the line printed when a point ends). */
static void print_point_figures(FILE *out, const struct snap_run *s, bool result) {
  char ttft[32], tpot[32];
  format_ms(ttft, sizeof(ttft), &s->latency.ttft.run);
  format_ms(tpot, sizeof(tpot), &s->latency.tpot.run);
  fprintf(out, " c=%d %lld/%lld done %lld failed", s->concurrency.target,
          (long long)s->progress.done, (long long)s->progress.total,
          (long long)s->progress.failed);
  if (result)
    fprintf(out, " in %.1fs | out %.0f tok/s", s->progress.elapsed_s,
            s->throughput.run.output_tok_per_s);
  else
    fprintf(out, " | out %.0f tok/s (%.0fs), %.0f (point)", s->throughput.window.output_tok_per_s,
            s->throughput.window_span_s, s->throughput.run.output_tok_per_s);
  fprintf(out, " | TTFT p50 %s ms | TPOT p50 %s ms", ttft, tpot);
  if (s->spec.accept_length_valid)
    fprintf(out, " | accept %.2f%s", s->spec.accept_length, s->spec.point_scoped ? "" : " (log)");
  if (s->spec.per_request.valid)
    fprintf(out, " | drafts accepted %.1f%%", s->spec.per_request.rate_frac * 100.0);
}

static void print_status_line(FILE *out, const char *tag, const struct snap_run *s) {
  fprintf(out, "%s[%s%s] %s", tag, s->server.engine, s->server.simulated ? " SIMULATED" : "",
          snap_run_phase_name(s->progress.phase));
  if (s->progress.phase == SNAP_PHASE_MEASURING) {
    print_point_figures(out, s, false);
    if (s->load.kv_usage_valid)
      fprintf(out, " | KV %.0f%%", s->load.kv_usage_frac * 100.0);
    if (s->load.running_valid)
      fprintf(out, " run %lld q %lld", (long long)s->load.num_running, (long long)s->load.num_queued);
    if (s->load.max_total_num_tokens_was_valid && s->load.max_total_num_tokens_valid)
      fprintf(out, " | KV cap %lld tok (was %lld)", (long long)s->load.max_total_num_tokens,
              (long long)s->load.max_total_num_tokens_was);
    if (s->load.batch_cap_valid && s->concurrency.target > s->load.batch_cap)
      fprintf(out, " | conc %d > batch cap %d: requests queue in the server",
              s->concurrency.target, s->load.batch_cap);
    if (s->progress.eta_valid)
      fprintf(out, " | ETA %.0fs", s->progress.eta_s);
  } else if (s->progress.message[0]) {
    fprintf(out, ": %s", s->progress.message);
  }
  if (s->server.crashed)
    fputs(" | SERVER EXITED", out);
  if (s->progress.mislabelled)
    fputs(" | MISLABELLED", out);
  fputc('\n', out);
  fflush(out);
}

/* The line for a point that has just ended: the saved result's figures. */
static void print_point_result(FILE *out, const char *tag, const struct snap_run *s) {
  fprintf(out, "%s[%s%s] point %d/%d result:", tag, s->server.engine,
          s->server.simulated ? " SIMULATED" : "", s->progress.point_index + 1,
          s->progress.n_points);
  print_point_figures(out, s, true);
  fputc('\n', out);
  fflush(out);
}

/* ---------------------------------------------------------------- outcome */
static int exit_status_for(const struct run_outcome *o, bool allow_mislabel) {
  switch (o->status) {
  case RUN_STATUS_OK: return EXIT_OK;
  case RUN_STATUS_MISLABELLED: return allow_mislabel ? EXIT_OK : EXIT_RUN_FAILED;
  case RUN_STATUS_INTERRUPTED: return EXIT_INTERRUPTED;
  default: return EXIT_RUN_FAILED;
  }
}

static void report_outcome(const char *tag, const struct run_outcome *o, bool allow_mislabel) {
  FILE *out = o->status == RUN_STATUS_OK ? stdout : stderr;
  if (o->status == RUN_STATUS_MISLABELLED) {
    fprintf(stderr, "\n%s!!! %s\n", tag, o->message);
    fprintf(stderr, "%s!!! the results are marked mislabelled%s\n\n", tag,
            allow_mislabel ? " (--allow-mislabel: not failing)" : "; exiting 1");
  } else {
    fprintf(out, "%srun %s: %s\n", tag, run_status_name(o->status), o->message);
  }
  if (o->simulated)
    fprintf(stdout, "%s(simulated server: numbers come from servetop sim's model, not hardware)\n",
            tag);
  if (o->dir[0])
    fprintf(stdout, "%srun folder: %s\n", tag, o->dir);
}

static void print_outcomes_json(const struct run_outcome *outs, const char *const *tags, size_t n) {
  printf("[");
  for (size_t i = 0; i < n; i++) {
    const struct run_outcome *o = &outs[i];
    /* message and dir are JSON-escaped by hand: they may hold quotes */
    printf("%s{\"tag\":\"%s\",\"status\":\"%s\",\"dir\":\"", i ? "," : "", tags[i],
           run_status_name(o->status));
    for (const char *p = o->dir; *p; p++)
      printf(*p == '"' || *p == '\\' ? "\\%c" : "%c", *p);
    printf("\",\"mislabelled\":%s,\"simulated\":%s,\"points_done\":%d,\"max_total_num_tokens\":",
           o->mislabelled ? "true" : "false", o->simulated ? "true" : "false", o->n_points_done);
    if (o->max_total_num_tokens > 0)
      printf("%lld", (long long)o->max_total_num_tokens);
    else
      printf("null");
    printf(",\"message\":\"");
    for (const char *p = o->message; *p; p++) {
      if (*p == '"' || *p == '\\')
        printf("\\%c", *p);
      else if ((unsigned char)*p < 0x20)
        printf("\\u%04x", *p);
      else
        putchar(*p);
    }
    printf("\"}");
  }
  printf("]\n");
}

/* Runs every run to its end, printing a status line per run each second. */
static void watch_runs(struct run **runs, const char *const *tags, size_t n, bool quiet) {
  struct snap_run *snap = xmalloc(sizeof(*snap));
  uint64_t last_seq[2] = {0, 0};
  bool point_over[2] = {false, false}; /* the latest picture is a point's result */
  int64_t next_print_ns = 0;
  for (bool all_done = false; !all_done;) {
    all_done = true;
    for (size_t i = 0; i < n; i++)
      if (!run_wait(runs[i], 0))
        all_done = false;
    if (!all_done)
      clock_sleep_us(100000);
    bool print_now = !quiet && clock_mono_ns() >= next_print_ns;
    if (print_now)
      next_print_ns = clock_mono_ns() + 1000000000LL;
    for (size_t i = 0; i < n && !quiet; i++) {
      if (!run_snapshot(runs[i], snap, &last_seq[i]))
        continue;
      /* a point that has ended gets its result line at once, the last word on it */
      if (snap->latency.run_exact && !point_over[i])
        print_point_result(stdout, tags[i], snap);
      point_over[i] = snap->latency.run_exact;
      if (print_now && !all_done)
        print_status_line(stdout, tags[i], snap);
    }
  }
  free(snap);
}

static int check_engine(const struct run_opts *o, const struct recipe *r,
                        const struct eng_ops **out, const char *tag) {
  if (o->engine_name) {
    *out = eng_find(o->engine_name);
    if (!*out) {
      fprintf(stderr, "servetop run: --engine %s: expected %s\n", o->engine_name, eng_names(false));
      return -1;
    }
    char path[4096], why[512] = "";
    if ((*out)->locate && !(*out)->locate(path, sizeof path, why, sizeof why)) {
      fprintf(stderr, "%sservetop run: --engine %s: %s\n", tag, o->engine_name, why);
      return -1;
    }
    return 0;
  }
  char why[512] = "";
  *out = run_pick_engine(r, why, sizeof(why));
  if (!*out) {
    fprintf(stderr, "%sservetop run: %s: %s\n", tag, r->name, why);
    return -1;
  }
  if ((*out)->simulated)
    fprintf(stderr, "%sservetop run: %s: using the SIMULATED server (%s)\n", tag, r->name, why);
  return 0;
}

static void fill_config(struct run_config *cfg, const struct run_opts *o, const struct recipe *r,
                        const struct eng_ops *engine, const char *label, const char *gpus) {
  run_config_init(cfg);
  cfg->recipe = r;
  cfg->engine = engine;
  cfg->results_dir = o->results_dir;
  cfg->label = label;
  cfg->conc = o->conc;
  cfg->sweep = o->sweep;
  cfg->overrides = o->sets.items;
  cfg->n_overrides = o->sets.n;
  cfg->extra_server_args = o->server_args.items;
  cfg->n_extra_server_args = o->server_args.n;
  cfg->num_prompts = o->num_prompts;
  cfg->num_warmups = o->num_warmups;
  cfg->isl = o->isl;
  cfg->osl = o->osl;
  cfg->gpus = gpus;
  cfg->port = o->port;
  cfg->ready_timeout_ms = (int64_t)(o->ready_timeout_s * 1000.0);
  cfg->request_timeout_s = o->request_timeout_s;
  cfg->allow_mislabel = o->allow_mislabel;
  cfg->seed = (uint64_t)o->seed;
}

/* "0,1,2,3" -> "0,1" and "2,3". */
static int split_gpus(const char *gpus, char **first, char **second) {
  size_t n = 1;
  for (const char *p = gpus; *p; p++)
    n += *p == ',';
  if (n < 2)
    return -1;
  size_t half = n / 2, seen = 0;
  const char *p = gpus;
  for (; *p && seen < half; p++)
    seen += *p == ',';
  *first = xstrndup(gpus, (size_t)(p - gpus - 1));
  *second = xstrdup(p);
  return 0;
}

static int compare_run_dirs(const char *a_dir, const char *b_dir) {
  struct run_compare_side a, b;
  struct st_err err = {{0}};
  int rc = EXIT_OK;
  if (run_compare_side_load(a_dir, &a, &err) != 0 || run_compare_side_load(b_dir, &b, &err) != 0) {
    fprintf(stderr, "servetop run --ab: cannot compare: %s\n", err.msg);
    rc = EXIT_RUN_FAILED;
  } else {
    printf("\n");
    run_compare_print(stdout, &a, &b);
  }
  run_compare_side_fini(&a);
  run_compare_side_fini(&b);
  return rc;
}

/* Every --set against the recipe's engine, before anything starts. */
static int check_overrides(const struct run_opts *o, const struct recipe *r) {
  for (size_t i = 0; i < o->sets.n; i++) {
    const char *a = o->sets.items[i], *eq = strchr(a, '=');
    struct st_err err = {{0}};
    char *key = eq ? xstrndup(a, (size_t)(eq - a)) : NULL;
    int rc = key ? eng_check_knob(eng_find(r->engine), key, eq + 1, &err)
                 : err_setf(&err, "expected KEY=VALUE (e.g. mem-fraction-static=0.85)");
    free(key);
    if (rc != 0) {
      fprintf(stderr, "servetop run: --set %s: %s\n", a, err.msg);
      return -1;
    }
  }
  return 0;
}

int cmd_run_main(int argc, char **argv) {
  struct run_opts o = {.num_warmups = -1};
  char engine_help[160];
  snprintf(engine_help, sizeof engine_help, "server to launch: %s", eng_names(false));
  const struct opt_spec specs[] = RUN_SPECS(&o);
  struct opt_parser parser = {.usage = "servetop run RECIPE [options]",
                              .description = run_description, .specs = specs,
                              .n_specs = ST_ARRAY_LEN(specs)};
  char *pos[2];
  size_t n_pos = 0;
  struct st_err err = {{0}};
  int prc = opt_parse(&parser, argc - 1, argv + 1, pos, ST_ARRAY_LEN(pos), &n_pos, &err);
  int rc = EXIT_USAGE;
  struct recipe_set *set = NULL;
  if (prc == OPT_HELP) {
    opt_print_help(&parser, stdout);
    rc = EXIT_OK;
    goto out;
  }
  if (prc != OPT_OK || n_pos != 1) {
    fprintf(stderr, "servetop run: %s\n", prc != OPT_OK ? err.msg : "expected one RECIPE");
    goto out;
  }
  if (o.request_timeout_s < 0) {
    fprintf(stderr, "servetop run: --request-timeout must not be negative\n");
    goto out;
  }
  if (o.conc < 0 || (o.conc > 0 && o.sweep)) {
    fprintf(stderr, "servetop run: --conc N (N >= 1) and --sweep are exclusive\n");
    goto out;
  }
  if (o.ab_parallel)
    o.ab = true;
  if (o.llama_server && eng_set_program_path("llama-server", o.llama_server, &err) != 0) {
    fprintf(stderr, "servetop run: %s\n", err.msg);
    goto out;
  }
  set = load_recipes(&o);
  if (!set)
    goto out;
  const struct recipe *recipes[2] = {recipe_set_find(set, pos[0]), NULL};
  if (!recipes[0]) {
    fprintf(stderr, "servetop run: no recipe named '%s' (servetop recipes lists them)\n", pos[0]);
    goto out;
  }
  size_t n_runs = 1;
  if (o.ab) {
    recipes[1] = recipe_set_twin(set, recipes[0]);
    if (!recipes[1]) {
      fprintf(stderr, "servetop run --ab: %s has no %s twin (same model, precision, GPU, engine, "
                      "sequence lengths)\n",
              recipes[0]->name,
              recipes[0]->spec == RECIPE_SPEC_NONE ? "MTP (or draft-model)" : "non-MTP");
      goto out;
    }
    n_runs = 2;
  }
  const char *tags[2] = {"", ""};
  const char *labels[2] = {o.label, NULL};
  if (o.ab) {
    for (size_t i = 0; i < 2; i++)
      tags[i] = recipes[i]->spec == RECIPE_SPEC_NONE  ? "[off] "
                : recipes[i]->spec == RECIPE_SPEC_MTP ? "[mtp] "
                                                      : "[draft] ";
    labels[0] = labels[1] = o.label ? o.label : "ab";
  }
  const struct eng_ops *engines[2];
  for (size_t i = 0; i < n_runs; i++)
    if (check_overrides(&o, recipes[i]) != 0 ||
        check_engine(&o, recipes[i], &engines[i], tags[i]) != 0)
      goto out;
  char *gpu_halves[2] = {NULL, NULL};
  const char *gpus[2] = {o.gpus, o.gpus};
  if (o.ab_parallel && !engines[0]->simulated) {
    if (!o.gpus || split_gpus(o.gpus, &gpu_halves[0], &gpu_halves[1]) != 0) {
      fprintf(stderr, "servetop run --ab-parallel: give --gpus with at least two GPUs to split\n");
      goto out;
    }
    gpus[0] = gpu_halves[0];
    gpus[1] = gpu_halves[1];
  }
  if (!o.headless && !o.quiet && isatty(STDOUT_FILENO))
    fprintf(stderr, "servetop run: the dashboard view of a run is not in this build; "
                    "printing a status line (--headless)\n");

  install_stop_handlers();
  struct run_outcome outcomes[2];
  memset(outcomes, 0, sizeof(outcomes));
  struct run *runs[2] = {NULL, NULL};
  size_t batch = o.ab_parallel ? 2 : 1;
  rc = EXIT_OK;
  for (size_t first = 0; first < n_runs; first += batch) {
    size_t n_batch = first + batch <= n_runs ? batch : n_runs - first;
    bool started = true;
    for (size_t i = first; i < first + n_batch; i++) {
      struct run_config cfg;
      fill_config(&cfg, &o, recipes[i], engines[i], labels[i], gpus[i]);
      cfg.servetop_exe = NULL; /* /proc/self/exe: this binary */
      runs[i] = run_start(&cfg, &err);
      if (!runs[i]) {
        fprintf(stderr, "%sservetop run: %s\n", tags[i], err.msg);
        started = false;
        break;
      }
      active_runs[i - first] = runs[i];
    }
    if (started)
      watch_runs(&runs[first], &tags[first], n_batch, o.quiet);
    for (size_t i = first; i < first + n_batch; i++) {
      if (!runs[i]) {
        rc = EXIT_RUN_FAILED;
        continue;
      }
      run_wait(runs[i], -1);
      run_get_outcome(runs[i], &outcomes[i]);
      active_runs[i - first] = NULL;
      run_free(runs[i]);
      runs[i] = NULL;
      report_outcome(tags[i], &outcomes[i], o.allow_mislabel);
      int st = exit_status_for(&outcomes[i], o.allow_mislabel);
      if (st != EXIT_OK && (rc == EXIT_OK || st == EXIT_INTERRUPTED))
        rc = st;
    }
    if (rc == EXIT_INTERRUPTED || !started)
      break;
  }
  if (o.ab && outcomes[0].n_points_done > 0 && outcomes[1].n_points_done > 0 &&
      rc != EXIT_INTERRUPTED)
    compare_run_dirs(outcomes[0].dir, outcomes[1].dir);
  if (o.json)
    print_outcomes_json(outcomes, tags, n_runs);
  free(gpu_halves[0]);
  free(gpu_halves[1]);
out:
  recipe_set_free(set);
  free(o.sets.items); /* the arrays are opt_parse's; the strings are argv's */
  free(o.server_args.items);
  return rc;
}

/* ---------------------------------------------------------------- compare */
int cmd_compare_main(int argc, char **argv) {
  bool json = false;
  const struct opt_spec specs[] = {
      {"json", OPT_FLAG, &json, NULL, "machine-readable output", NULL, NULL},
  };
  struct opt_parser parser = {
      .usage = "servetop compare A B [--json]",
      .description = "A and B are result JSON files or run folders (every point of a sweep).\n"
                     "Prints every headline metric of A and B with B-A and B/A, acceptance, and\n"
                     "per concurrency the MTP speedup in throughput per GPU and in interactivity\n"
                     "(tok/s/user = 1000 / median TPOT) when one side is MTP and the other not.",
      .specs = specs,
      .n_specs = ST_ARRAY_LEN(specs)};
  char *pos[3];
  size_t n_pos = 0;
  struct st_err err = {{0}};
  int prc = opt_parse(&parser, argc - 1, argv + 1, pos, ST_ARRAY_LEN(pos), &n_pos, &err);
  if (prc == OPT_HELP) {
    opt_print_help(&parser, stdout);
    return EXIT_OK;
  }
  if (prc != OPT_OK || n_pos != 2) {
    fprintf(stderr, "servetop compare: %s\n", prc != OPT_OK ? err.msg : "expected A and B");
    return EXIT_USAGE;
  }
  struct run_compare_side a, b;
  memset(&b, 0, sizeof(b));
  int rc = EXIT_USAGE;
  if (run_compare_side_load(pos[0], &a, &err) != 0 || run_compare_side_load(pos[1], &b, &err) != 0) {
    fprintf(stderr, "servetop compare: %s\n", err.msg);
  } else if (json) {
    char *text = run_compare_json_alloc(&a, &b);
    puts(text);
    free(text);
    rc = EXIT_OK;
  } else {
    run_compare_print(stdout, &a, &b);
    rc = EXIT_OK;
  }
  run_compare_side_fini(&a);
  run_compare_side_fini(&b);
  return rc;
}

/* ---------------------------------------------------------------- export */
int cmd_export_main(int argc, char **argv) {
  bool inferencex = false;
  const char *out_dir = NULL;
  const struct opt_spec specs[] = {
      {"inferencex", OPT_FLAG, &inferencex, NULL, "InferenceX master-config entry + script",
       NULL, NULL},
      {"out", OPT_STRING, &out_dir, "DIR",
       "write <DIR>/master-entry.yaml and <DIR>/launch-server.sh instead of stdout", NULL, NULL},
  };
  struct opt_parser parser = {
      .usage = "servetop export RUN --inferencex [--out DIR]",
      .description = "Writes a run's tuned knobs (the recipe's server command with the run's --set\n"
                     "overrides) as an InferenceX master-config entry, with the concurrencies the\n"
                     "run measured as conc-list, and a launch-script fragment for the server.",
      .specs = specs,
      .n_specs = ST_ARRAY_LEN(specs)};
  char *pos[2];
  size_t n_pos = 0;
  struct st_err err = {{0}};
  int prc = opt_parse(&parser, argc - 1, argv + 1, pos, ST_ARRAY_LEN(pos), &n_pos, &err);
  if (prc == OPT_HELP) {
    opt_print_help(&parser, stdout);
    return EXIT_OK;
  }
  if (prc != OPT_OK || n_pos != 1 || !inferencex) {
    fprintf(stderr, "servetop export: %s\n",
            prc != OPT_OK ? err.msg : "usage: servetop export RUN --inferencex [--out DIR]");
    return EXIT_USAGE;
  }
  char *yaml = NULL, *script = NULL;
  if (run_export_inferencex(pos[0], &yaml, &script, &err) != 0) {
    fprintf(stderr, "servetop export: %s\n", err.msg);
    return EXIT_USAGE;
  }
  int rc = EXIT_OK;
  if (out_dir) {
    char *yaml_path = path_join_alloc(out_dir, "master-entry.yaml");
    char *sh_path = path_join_alloc(out_dir, "launch-server.sh");
    if (path_mkdir_p(out_dir, 0755, &err) != 0 ||
        file_write_atomic(yaml_path, yaml, strlen(yaml), 0644, &err) != 0 ||
        file_write_atomic(sh_path, script, strlen(script), 0644, &err) != 0) {
      fprintf(stderr, "servetop export: %s\n", err.msg);
      rc = EXIT_RUN_FAILED;
    } else {
      printf("%s\n%s\n", yaml_path, sh_path);
    }
    free(yaml_path);
    free(sh_path);
  } else {
    printf("# ---- master config entry (configs/*-master.yaml)\n%s\n", yaml);
    printf("# ---- launch-script fragment (benchmarks/single_node/...)\n%s", script);
  }
  free(yaml);
  free(script);
  return rc;
}
