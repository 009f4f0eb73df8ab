/* servetop run / compare / export: launch a recipe's server, measure it, stop
 * it; put two results side by side; hand a tuned run back to InferenceX. */
#include "cli/cli.h"
#include "http/http.h"
#include "run/run.h" /* includes util/util.h */
#include "tui.h"

#include <ctype.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

enum { EXIT_RUN_FAILED = 1, EXIT_INTERRUPTED = 130 };

/* ---------------------------------------------------------------- signals */
static struct run_session *volatile active_session;
static volatile sig_atomic_t stop_signalled; /* also before the session exists */

static void on_stop_signal(int sig) {
  (void)sig;
  stop_signalled = 1;
  struct run_session *s = active_session;
  if (s)
    run_session_stop(s); /* sets flags: async-signal-safe */
}

static void install_stop_handlers(void) {
  cli_on_stop_signals(on_stop_signal);
}

/* ---------------------------------------------------------------- options */
struct run_opts {
  const char *configs_dir, *inferencex_dir, *engine_name, *results_dir, *gpus, *label;
  const char *llama_server;
  const char *proxy;
  const char *num_workers;      /* --num-workers: "auto" (NULL) or 1..64 */
  struct opt_list sets, server_args;
  int conc, num_prompts, num_warmups, isl, osl, port, repeats;
  double ready_timeout_s;
  double request_timeout_s;
  bool request_timeout_seen;
  long seed;
  bool sweep, ab, ab_parallel, headless, allow_mislabel, json, quiet;
  bool conc_seen, num_prompts_seen, num_warmups_seen, isl_seen, osl_seen, port_seen;
  bool ready_timeout_seen, seed_seen, repeats_seen;
};

static const char run_description[] =
    "Launches the recipe's server (its own process group, stopped with servetop even on SIGKILL),\n"
    "waits until it is ready, drives it with the load generator at --conc N or over the recipe's\n"
    "sweep (--sweep: one result per point; the server stays up while its command does not change),\n"
    "then stops it. Each run is a folder under the results directory: manifest.json, recipe.json\n"
    "(the resolved server command), server.log and one result-conc<N>.json per point; a sweep\n"
    "ends with sweep.md (its table of points), sweep.png and sweep.svg (output tok/s per GPU\n"
    "against tok/s per user, each point labelled with its concurrency: docs/charts.md). In the\n"
    "dashboard, +/- and a restart with a knob end the point's segment (saved as its own result)\n"
    "and start another (result-conc<N>-seg<K>.json); the end line counts configurations measured.\n"
    "\n"
    "Engine: --engine, else the recipe's own where it can run here (sglang: python3 can import\n"
    "sglang and a GPU exists; vllm: `vllm` on PATH and a GPU), else the simulated server (said so).\n"
    "llama.cpp recipes run on llama-server (--llama-server PATH, else PATH, else the cache the\n"
    "setup script in scripts/ fills); when it is absent the run says how to get it and exits 2\n"
    "(the sim only with --engine sim).\n"
    "--set KEY=VALUE takes the engine's flags (mem-fraction-static=0.8, np=8) or a generic knob:\n"
    "kv-cache (alias mem-fraction: the KV cache in the engine's unit, a fraction of GPU memory\n"
    "or llama.cpp's -c tokens) and max-batch (alias batch-cap: requests decoded at once);\n"
    "on vLLM also a dotted JSON key, HEAD.member[.member...][+] of a JSON flag\n"
    "(compilation-config.level=3 gives --compilation-config.level 3; docs/run.md);\n"
    "values are checked before anything starts.\n"
    "A run whose recipe says spec-decoding mtp while the server reports no speculative decoding (or\n"
    "the reverse) is MISLABELLED and exits 1 unless --allow-mislabel.\n"
    "--ab runs the recipe and its MTP/off twin back to back (--ab-parallel: at the same time, the\n"
    "GPUs of --gpus split in halves), then compares them: every ratio with its 95% interval and\n"
    "a verdict (faster, slower, no difference detected). --repeats N measures each arm N times,\n"
    "interleaved (A B A B ..., each run its own folder), the ratios' intervals from the repeats\n"
    "(headless, and in the dashboard's A/B view: it says \"repeat k/N\" and, once they are over,\n"
    "\"ratios: 95% CI from N repeats\"; --ab-parallel runs headless).\n"
    "Ctrl-C stops the load, keeps every measured request and stops the server.\n"
    "In a terminal the dashboard opens on the run (the A/B view for --ab); --headless (or no\n"
    "terminal) prints a status line instead: updated in place on a terminal, one line a second\n"
    "otherwise, with point k/N and the sweep's ETA, a line per saved point and a per-point\n"
    "table at the end (a sweep: then its table of points and the chart's path).\n"
    "Exit status: 0 ok, 1 failed or mislabelled, 2 usage or input error (every one is found\n"
    "before anything starts), 130 interrupted.";

#define PROXY_HELP                                                                                 \
  "send every request through this HTTP(S) or SOCKS proxy (default: straight to the server; "     \
  "http_proxy, https_proxy, all_proxy, no_proxy are ignored)"

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
        {"conc", OPT_INT, &(o)->conc, "N", "one point at concurrency N", NULL, &(o)->conc_seen},   \
        {"sweep", OPT_FLAG, &(o)->sweep, NULL, "every point of the recipe's sweep", NULL, NULL},   \
        {"set", OPT_LIST, &(o)->sets, "KEY=VALUE",                                                 \
         "override a server knob, e.g. mem-fraction-static=0.85 (repeatable; checked: a bad "     \
         "value or a typo of a flag is refused)", NULL, NULL},                                      \
        {"server-arg", OPT_LIST, &(o)->server_args, "ARG",                                         \
         "append ARG to the server command as is (repeatable; e.g. --server-arg=--sim-speed=20)",  \
         NULL, NULL},                                                                              \
        {"num-prompts", OPT_INT, &(o)->num_prompts, "N",                                           \
         "requests per point, exactly (default conc x 10, raised so the point lasts 5 s after " \
         "the warmups; below the concurrency: refused; a point under 10 x conc requests or 5 s " \
         "is marked short)",                                                                      \
         NULL, &(o)->num_prompts_seen},                                                            \
        {"num-warmups", OPT_INT, &(o)->num_warmups, "N", "warmup requests (default 2 x conc)",     \
         NULL, &(o)->num_warmups_seen},                                                            \
        {"isl", OPT_INT, &(o)->isl, "N", "input length (default: the recipe's)", NULL,             \
         &(o)->isl_seen},                                                                          \
        {"osl", OPT_INT, &(o)->osl, "N", "output length (default: the recipe's)", NULL,            \
         &(o)->osl_seen},                                                                          \
        {"results|results-dir", OPT_STRING, &(o)->results_dir, "DIR",                              \
         "results directory (default $XDG_DATA_HOME/servetop/runs)", NULL, NULL},                  \
        {"gpus", OPT_STRING, &(o)->gpus, "LIST", "CUDA_VISIBLE_DEVICES for the server, e.g. 0,1",  \
         NULL, NULL},                                                                              \
        {"port", OPT_INT, &(o)->port, "N", "server port (default: a free one)", NULL,              \
         &(o)->port_seen},                                                                         \
        {"ready-timeout", OPT_DOUBLE, &(o)->ready_timeout_s, "S",                                  \
         "readiness timeout (default 1800 s, sim 120 s)", NULL, &(o)->ready_timeout_seen},        \
        {"request-timeout", OPT_DOUBLE, &(o)->request_timeout_s, "S",                              \
         "per-request timeout; a stalled stream fails after S (default 21600, as the reference)", \
         NULL, &(o)->request_timeout_seen},                                                \
        {"proxy", OPT_STRING, &(o)->proxy, "URL", PROXY_HELP, NULL, NULL},                         \
        {"num-workers", OPT_STRING, &(o)->num_workers, "N|auto",                                   \
         "load generator loops (threads; default auto: one per 128 streams, at most the CPUs "    \
         "servetop may use)", NULL, NULL},                                                         \
        {"seed", OPT_LONG, &(o)->seed, "N", "dataset seed (default 0)", NULL, &(o)->seed_seen},    \
        {"label", OPT_STRING, &(o)->label, "TEXT", "run folder suffix", NULL, NULL},               \
        {"ab", OPT_FLAG, &(o)->ab, NULL, "also run the MTP/off twin and compare", NULL, NULL},     \
        {"repeats", OPT_INT, &(o)->repeats, "N",                                                   \
         "--ab: measure each arm N times, interleaved (A B A B ...); intervals from the repeats " \
         "(headless or in the dashboard's A/B view)",                                             \
         NULL, &(o)->repeats_seen},                                                                \
        {"ab-parallel", OPT_FLAG, &(o)->ab_parallel, NULL, "--ab with both runs at the same time", \
         NULL, NULL},                                                                              \
        {"allow-mislabel", OPT_FLAG, &(o)->allow_mislabel, NULL,                                   \
         "a mislabelled run does not fail", NULL, NULL},                                           \
        {"headless", OPT_FLAG, &(o)->headless, NULL,                                               \
         "a status line instead of the dashboard's run view (the default without a terminal)",    \
         NULL, NULL},                                                                              \
        {"json", OPT_FLAG, &(o)->json, NULL, "print the outcome as JSON at the end (stdout carries only the JSON; the rest goes to stderr)", NULL, NULL},  \
        {"quiet", OPT_FLAG, &(o)->quiet, NULL, "no status line", NULL, NULL},                      \
  }

static struct recipe_set *load_recipes(const struct run_opts *o) {
  struct st_err err;
  struct recipe_set *set = recipe_set_load_source(o->configs_dir, o->inferencex_dir, &err);
  if (!set)
    fprintf(stderr, "servetop run: %s\n", err.msg);
  return set;
}

/* ---------------------------------------------------------------- status line
 * Headless, a run says how it goes on one status line: updated in place on a
 * terminal (one line per run of --ab-parallel), a new line a second when the
 * output is not one. Events (a point's result, a restart, how a launch went)
 * are lines of their own above it. */

static void format_duration(char *buf, size_t len, double s) {
  if (s >= 3600)
    snprintf(buf, len, "%dh%02dm", (int)(s / 3600), (int)(s / 60) % 60);
  else if (s >= 60)
    snprintf(buf, len, "%dm%02ds", (int)(s / 60), (int)s % 60);
  else if (s >= 10)
    snprintf(buf, len, "%.0fs", s);
  else
    snprintf(buf, len, "%.1fs", s);
}

/* The live line's figures (whole point so far; they converge to the result). */
static void live_figures(struct sbuf *sb, const struct snap_run *s) {
  cli_figures_line(sb, " | ", &s->figures.window, s->figures.window_span_s,
                   s->figures.window_output_estimated, &s->figures.run);
  /* the point's own acceptance, by the result's method over its window so
   * far (the result's figure once it ends); none before the point has one */
  if (s->spec.accept_length_valid)
    sbuf_printf(sb, " | accept %.2f", s->spec.accept_length);
  else if (s->spec.enabled)
    sbuf_puts(sb, " | accept not measured yet");
  if (s->spec.per_request.valid)
    sbuf_printf(sb, " | drafts accepted %.1f%%", s->spec.per_request.rate_frac * 100.0);
}

static void status_line(struct sbuf *sb, const char *tag, const struct snap_run *s) {
  const struct snap_progress *p = &s->progress;
  /* between points the line names the next point; a warm-up counts its own requests */
  sbuf_printf(sb, "%s[%s%s] %s", tag, s->server.engine, s->server.simulated ? " SIMULATED" : "",
              p->warmup ? "warming up" : p->phase == SNAP_PHASE_BETWEEN ? "next"
                                                                       : snap_run_phase_name(p->phase));
  if (p->n_points > 1 || p->phase == SNAP_PHASE_MEASURING)
    sbuf_printf(sb, " point %d/%d", p->point_index + 1, p->n_points > 0 ? p->n_points : 1);
  if (p->warmup)
    sbuf_printf(sb, " c=%d warm-up %lld/%lld", s->concurrency.target, (long long)p->done,
                (long long)p->total);
  if (p->phase == SNAP_PHASE_MEASURING && !p->warmup) {
    /* what a narrow terminal cuts last: progress, then the ETA */
    sbuf_printf(sb, " c=%d %lld/%lld done %lld failed", s->concurrency.target, (long long)p->done,
                (long long)p->total, (long long)p->failed);
    char a[16], b[16];
    double left;
    bool sweep_eta = p->n_points > 1 && snap_run_remaining_s(s, &left);
    if (p->eta_valid || sweep_eta) {
      format_duration(a, sizeof a, p->eta_valid ? p->eta_s : 0);
      if (sweep_eta)
        format_duration(b, sizeof b, left);
      sbuf_printf(sb, " | ETA %s%s%s", p->eta_valid ? a : "-", sweep_eta ? ", sweep " : "",
                  sweep_eta ? b : "");
    }
    if (s->load.batch_cap_valid && s->concurrency.target > s->load.batch_cap)
      sbuf_printf(sb, " | conc %d > batch cap %d: requests queue in the server",
                  s->concurrency.target, s->load.batch_cap);
    live_figures(sb, s);
    if (s->load.kv_usage_valid)
      sbuf_printf(sb, " | KV %.0f%%", s->load.kv_usage_frac * 100.0);
    if (s->load.running_valid)
      sbuf_printf(sb, " run %lld q %lld", (long long)s->load.num_running,
                  (long long)s->load.num_queued);
    if (s->load.max_total_num_tokens_was_valid && s->load.max_total_num_tokens_valid)
      sbuf_printf(sb, " | KV cap %lld tok (was %lld)", (long long)s->load.max_total_num_tokens,
                  (long long)s->load.max_total_num_tokens_was);
  } else if (p->message[0]) {
    sbuf_printf(sb, ": %s", p->message);
  }
  if (s->server.crashed)
    sbuf_puts(sb, " | SERVER EXITED");
  if (s->progress.mislabelled)
    sbuf_puts(sb, " | MISLABELLED");
  if (p->phase == SNAP_PHASE_MEASURING && s->figures.client_bound[0])
    sbuf_printf(sb, " | %s", s->figures.client_bound);
}

/* A point whose result was saved, as a line of its own. */
static void point_line(FILE *out, const char *tag, const struct snap_run *s,
                       const struct snap_point_result *p) {
  char d[16];
  format_duration(d, sizeof d, p->duration_s);
  struct sbuf figs = {0};
  cli_figures_line(&figs, " | ", NULL, 0, false, &p->figs);
  /* a segment after +/- or a restart names itself and its configuration */
  char seg[96] = "";
  if (p->segment > 1)
    snprintf(seg, sizeof seg, " segment %d (%s)", p->segment, p->config);
  fprintf(out, "%s[%s%s] point %d/%d%s c=%d %s: %lld/%lld done %lld failed in %s%s", tag,
          s->server.engine, s->server.simulated ? " SIMULATED" : "", p->point_index + 1,
          s->progress.n_points > 0 ? s->progress.n_points : 1, seg, p->conc, p->end,
          (long long)p->completed, (long long)p->total, (long long)p->failed, d,
          figs.data ? figs.data : "");
  sbuf_free(&figs);
  if (p->cut_by_stop > 0)
    fprintf(out, " | %lld cut when the point ended (not failures)", (long long)p->cut_by_stop);
  if (p->planned > 0) /* the default count, raised from the warmups */
    fprintf(out, " | %lld requests, not %lld, to last %d s", (long long)p->total,
            (long long)p->planned, CI_MIN_POINT_S);
  if (fig_has(&p->figs, FIG_ACCEPT_LENGTH, FIG_VALUE))
    fprintf(out, " | accept %.2f", fig_get(&p->figs, FIG_ACCEPT_LENGTH, FIG_VALUE));
  if (p->drafts_valid)
    fprintf(out, " | drafts accepted %.1f%%", p->drafts_accepted_frac * 100.0);
  if (p->conc_end != p->conc)
    fprintf(out, " | next segment at conc %d", p->conc_end);
  char why[160]; /* too short for its intervals (ci_point_short) */
  if (ci_point_short(p->completed, p->duration_s, p->conc, why, sizeof why))
    fprintf(out, " | %s", why);
  fputc('\n', out);
}

/* The end: one row per point with a result, from the run's last picture. */
static void print_point_table(FILE *out, const char *tag, const struct snap_run *s) {
  const struct snap_points *h = &s->points;
  if (h->n == 0)
    return;
  /* the figures of the model shown per point (FIG_SHOW_POINTS), then the acceptance */
  struct sbuf head = {0};
  sbuf_printf(&head, "%s%-5s %5s %-9s %13s %8s", tag, "point", "conc", "end", "ok/failed", "time");
  for (int f = 0; f < FIG_N; f++) {
    const struct fig_desc *fd = fig_desc((enum fig_id)f);
    if (!(fd->shown & FIG_SHOW_POINTS))
      continue;
    char title[32];
    if (fd->kind == FIG_DIST)
      snprintf(title, sizeof title, "%s p50", fd->brief);
    else
      snprintf(title, sizeof title, "%s %s", fd->brief, fd->unit);
    sbuf_printf(&head, " %*s", fd->kind == FIG_DIST ? 9 : 10, title);
  }
  fprintf(out, "%s %6s%s\n", head.data, "accept", s->server.simulated ? " provenance" : "");
  sbuf_free(&head);
  for (int i = 0; i < h->n; i++) {
    const struct snap_point_result *p = &h->point[i];
    char okf[32], d[16], acc[16];
    snprintf(okf, sizeof okf, "%lld/%lld", (long long)p->completed, (long long)p->failed);
    format_duration(d, sizeof d, p->duration_s);
    fig_format(acc, sizeof acc, &p->figs, FIG_ACCEPT_LENGTH, FIG_VALUE);
    fprintf(out, "%s%-5d %5d %-9s %13s %8s", tag, p->point_index + 1, p->conc, p->end, okf, d);
    for (int f = 0; f < FIG_N; f++) {
      const struct fig_desc *fd = fig_desc((enum fig_id)f);
      if (!(fd->shown & FIG_SHOW_POINTS))
        continue;
      char v[32];
      if (fd->kind == FIG_DIST) {
        fig_format(v, sizeof v, &p->figs, fd->id, FIG_STAT_P50);
        fprintf(out, " %9s", v);
      } else {
        /* a rate with one decimal here (the table's format rounds to whole tokens) */
        double x = fig_get(&p->figs, fd->id, FIG_VALUE);
        snprintf(v, sizeof v, isfinite(x) ? "%.1f" : "-", x);
        fprintf(out, " %10s", v);
      }
    }
    fprintf(out, " %6s%s%s\n", acc,
            ci_point_short(p->completed, p->duration_s, p->conc, NULL, 0) ? " short" : "",
            s->server.simulated ? " SIMULATED" : "");
  }
  if (s->server.simulated)
    fprintf(out, "%sSIMULATED: these figures come from servetop sim's model, not hardware\n", tag);
  if (h->n_written > h->n)
    fprintf(out, "%s(%d earlier points are in the run folder)\n", tag, h->n_written - h->n);
  fflush(out); /* before the outcome's lines on stderr */
}

/* Lines updated in place on a terminal. */
struct live_lines {
  bool tty;
  int cols;       /* terminal width: a line never wraps (it could not be rewritten) */
  int shown;      /* live lines on screen now */
};

static void live_clear(struct live_lines *ll, FILE *out) {
  if (!ll->tty || ll->shown == 0)
    return;
  if (ll->shown > 1)
    fprintf(out, "\033[%dA", ll->shown - 1);
  fputs("\r\033[J", out);
  ll->shown = 0;
}

static void live_show(struct live_lines *ll, FILE *out, struct sbuf *lines, size_t n) {
  live_clear(ll, out);
  for (size_t i = 0; i < n; i++) {
    const char *text = lines[i].data ? lines[i].data : "";
    if (ll->tty)
      fprintf(out, "%s%.*s", i ? "\n" : "", ll->cols > 1 ? ll->cols - 1 : 79, text);
    else
      fprintf(out, "%s\n", text);
  }
  ll->shown = ll->tty ? (int)n : 0;
  fflush(out);
}

static int terminal_cols(int fd) {
  struct winsize ws;
  return ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 ? ws.ws_col : 80;
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

/* human: where the text goes (stderr with --json: stdout carries only the JSON). */
static void report_outcome(FILE *human, const char *tag, const struct run_outcome *o,
                           bool allow_mislabel) {
  FILE *out = o->status == RUN_STATUS_OK ? human : stderr;
  if (o->status == RUN_STATUS_MISLABELLED) {
    fprintf(stderr, "\n%s!!! %s\n", tag, o->message);
    fprintf(stderr, "%s!!! the results are marked mislabelled%s\n\n", tag,
            allow_mislabel ? " (--allow-mislabel: not failing)" : "; exiting 1");
  } else {
    fprintf(out, "%srun %s: %s\n", tag, run_status_name(o->status), o->message);
  }
  if (o->simulated)
    fprintf(human, "%s(simulated server: numbers come from servetop sim's model, not hardware)\n",
            tag);
  if (o->dir[0])
    fprintf(human, "%srun folder: %s\n", tag, o->dir);
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
    printf("\",\"mislabelled\":%s,\"simulated\":%s,\"points_done\":%d,\"configurations_done\":%d,"
           "\"max_total_num_tokens\":",
           o->mislabelled ? "true" : "false", o->simulated ? "true" : "false", o->n_points_done,
           o->n_configs_done);
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

/* On the sim, a --set that moves nothing it models is said (the run goes on: the flag is
 * passed, but the figures will not move with it). */
static void warn_sim_unmodelled(const struct run_opts *o, const struct recipe *r,
                                const struct eng_ops *engine, const char *tag) {
  for (size_t i = 0; engine->simulated && i < o->sets.n; i++) {
    char key[128], which[32];
    const char *value;
    int v;
    struct st_err err = {{0}};
    if (run_override_split(o->sets.items[i], key, sizeof key, &value, &err) != 0 ||
        run_bench_setting(key, value, which, &v, &err) != 0)
      continue; /* not a server flag: checked elsewhere */
    if (run_sim_models_change(r, engine, NULL, o->sets.items[i], &err) == 1)
      fprintf(stderr, "%sservetop run: warning: --set %s: %s\n", tag, o->sets.items[i], err.msg);
  }
}

/* The engine that runs recipe r: --engine's, else the one found on this machine (said when it
 * is the sim). */
static int pick_engine(const struct run_opts *o, const struct recipe *r,
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

static int check_engine(const struct run_opts *o, const struct recipe *r,
                        const struct eng_ops **out, const char *tag) {
  if (pick_engine(o, r, out, tag) != 0)
    return -1;
  warn_sim_unmodelled(o, r, *out, tag);
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
  cfg->num_workers = o->num_workers ? lg_parse_num_workers(o->num_workers) : LG_NUM_WORKERS_AUTO;
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

/* dirs[arm][k]: the run folders of each arm's repeats (n_reps each; 1: one run). */
static int compare_run_dirs(FILE *out, char (*dirs)[RUN_SESSION_MAX_REPEATS][1024], int n_reps) {
  const char *a_dir = dirs[0][0], *b_dir = dirs[1][0];
  char why[1024];
  struct run_compare_side a, b;
  memset(&b, 0, sizeof b);
  struct st_err err = {{0}};
  const char *paths[2][RUN_SESSION_MAX_REPEATS];
  for (int k = 0; k < n_reps; k++)
    paths[0][k] = dirs[0][k], paths[1][k] = dirs[1][k];
  int rc = EXIT_OK,
      loaded = run_compare_side_load_repeats(paths[0], (size_t)n_reps, &a, &err) == 0 &&
               run_compare_side_load_repeats(paths[1], (size_t)n_reps, &b, &err) == 0;
  if (!loaded) {
    fprintf(stderr, "servetop run --ab: cannot compare: %s\n", err.msg);
    rc = EXIT_RUN_FAILED;
  } else if (run_compare_unlike(&a, &b, why, sizeof why) > 0) {
    /* never a ratio of unlike points (run_like_check) */
    fprintf(out, "\nUNLIKE: %s -- ratios hidden (servetop compare %s %s --force shows them)\n", why,
           a_dir, b_dir);
  } else {
    fprintf(out, "\n");
    run_compare_print(out, &a, &b);
  }
  run_compare_side_fini(&a);
  run_compare_side_fini(&b);
  return rc;
}

/* Every input error of `servetop run` / `servetop attach` that needs no
 * recipe, before anything starts: one message naming the flag (NULL: fine). */
/* --gpus: CUDA_VISIBLE_DEVICES as the CUDA runtime reads it: indices, or
 * GPU-/MIG- UUIDs, comma-separated, none empty. True (buf filled) when bad. */
static bool run_gpus_problem(const char *gpus, char *buf, size_t n) {
  bool bad = !*gpus;
  for (const char *p = gpus; *p && !bad;) {
    size_t len = strcspn(p, ",");
    bool digits = len > 0;
    for (size_t i = 0; i < len; i++)
      digits = digits && isdigit((unsigned char)p[i]);
    bool uuid = len > 4 && (strncmp(p, "GPU-", 4) == 0 || strncmp(p, "MIG-", 4) == 0);
    bad = !digits && !uuid;
    p += len;
    if (*p == ',') {
      p++;
      bad = bad || !*p;
    }
  }
  if (bad)
    snprintf(buf, n, "--gpus %.100s: expected GPU indices (0,1) or GPU-/MIG- UUIDs, "
             "comma-separated", gpus);
  return bad;
}

static const char *run_input_error(const struct run_opts *o, char *buf, size_t n) {
  const struct cli_check checks[] = {
      {o->conc_seen && o->conc < 1, "--conc must be >= 1"},
      {o->conc_seen && o->sweep, "--conc N and --sweep are exclusive (one point, or all)"},
      {o->num_prompts_seen && o->num_prompts < 1, "--num-prompts must be >= 1"},
      {o->num_warmups_seen && o->num_warmups < 0, "--num-warmups must be >= 0"},
      {o->isl_seen && o->isl < 1, "--isl must be >= 1"},
      {o->osl_seen && o->osl < 1, "--osl must be >= 1"},
      {o->port_seen && (o->port < 1 || o->port > 65535), "--port must be from 1 to 65535"},
      {o->ready_timeout_seen && !(o->ready_timeout_s > 0), "--ready-timeout must be > 0 seconds"},
      {o->request_timeout_seen && !(o->request_timeout_s > 0), "--request-timeout must be > 0 seconds"},
      {o->seed_seen && o->seed < 0, "--seed must be >= 0"},
      {o->num_workers && lg_parse_num_workers(o->num_workers) < 0,
       "--num-workers must be auto or from 1 to 64 (load generator loops)"},
      {o->repeats_seen && (o->repeats < 1 || o->repeats > RUN_SESSION_MAX_REPEATS),
       "--repeats must be from 1 to 20"},
      {o->repeats_seen && o->repeats > 1 && !o->ab && !o->ab_parallel,
       "--repeats compares arms: give it with --ab (or --ab-parallel)"},
  };
  if (cli_first_bad(checks, ST_ARRAY_LEN(checks), buf, n))
    return buf;
  if (o->gpus && run_gpus_problem(o->gpus, buf, n))
    return buf;
  for (const char *c = o->label; c && *c; c++)
    if (!isalnum((unsigned char)*c) && !strchr("._-", *c)) {
      snprintf(buf, n, "--label %.100s: only letters, digits, '.', '_' and '-' (it names a folder)",
               o->label);
      return buf;
    }
  return cli_not_a_directory("--results", o->results_dir, buf, n);
}

/* --num-prompts below a point's concurrency: that concurrency could never be reached (fewer
 * requests than slots), so the point would be labelled with a concurrency it did not run at:
 * refused before anything starts (docs/figures.md, "How long is a point"). */
static int check_prompts_cover_conc(const struct run_opts *o, const struct recipe *r) {
  if (!o->num_prompts_seen)
    return 0;
  size_t n = o->conc_seen ? 1 : o->sweep ? r->n_points : r->n_points > 0 ? 1 : 0;
  for (size_t i = 0; i < n; i++) {
    int conc = o->conc_seen ? o->conc : r->points[i].conc;
    if (o->num_prompts < conc) {
      fprintf(stderr, "servetop run: --num-prompts %d is below concurrency %d%s%s: at most %d "
                      "requests could be in flight (give at least %d, or a lower --conc)\n",
              o->num_prompts, conc, o->conc_seen ? "" : " of ", o->conc_seen ? "" : r->name,
              o->num_prompts, conc);
      return -1;
    }
  }
  return 0;
}

/* Every --set against the recipe (run_check_overrides), before anything starts. */
static int check_overrides(const struct run_opts *o, const struct recipe *r) {
  struct st_err err = {{0}};
  if (run_check_overrides(r, o->sets.items, o->sets.n, &err) != 0) {
    fprintf(stderr, "servetop run: --set %s\n", err.msg);
    return -1;
  }
  return 0;
}

/* The dashboard on the run (a terminal, no --headless): the run view, or
 * the A/B view for --ab. */
static bool wants_dashboard(const struct run_opts *o) {
  return !o->headless && !o->quiet && !o->json && isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
}

/* A sweep's end: its table of points (sweep.md's) and where the chart the run drew is. */
static void print_sweep_end(FILE *out, const char *tag, const struct run_outcome *oc) {
  char *chart = oc->dir[0] ? path_join_alloc(oc->dir, RUN_SWEEP_CHART) : NULL;
  struct stat sb;
  bool drawn = chart && stat(chart, &sb) == 0 && S_ISREG(sb.st_mode);
  free(chart);
  if (!drawn)
    return;
  struct sbuf table = {0};
  struct st_err err = {{0}};
  if (run_sweep_table(oc->dir, &table, &err) != 0) {
    fprintf(stderr, "%sservetop run: %s\n", tag, err.msg);
    return;
  }
  fprintf(out, "%ssweep:\n", tag);
  for (char *line = table.data, *nl; line && *line; line = nl + 1) {
    nl = strchr(line, '\n');
    fprintf(out, "%s%.*s\n", tag, nl ? (int)(nl - line) : (int)strlen(line), line);
    if (!nl)
      break;
  }
  sbuf_free(&table);
  fprintf(out, "%ssweep chart: %s/sweep.png (and sweep.svg, table sweep.md beside it)\n", tag,
          oc->dir);
  fflush(out);
}

/* What every run ended with: its line, the per-point table, the exit status. */
static int report_runs(const struct run_opts *o, const char *const *tags,
                       const struct run_outcome *outs, const struct snap_run *last, size_t n) {
  int rc = EXIT_OK;
  for (size_t i = 0; i < n; i++) {
    if (last)
      print_point_table(o->json ? stderr : stdout, tags[i], &last[i]);
    if (o->sweep)
      print_sweep_end(o->json ? stderr : stdout, tags[i], &outs[i]);
    report_outcome(o->json ? stderr : stdout, tags[i], &outs[i], o->allow_mislabel);
    int st = exit_status_for(&outs[i], o->allow_mislabel);
    if (st != EXIT_OK && (rc == EXIT_OK || st == EXIT_INTERRUPTED))
      rc = st;
  }
  return rc;
}

/* Watches the session to its end: the status lines (each second; in place on
 * a terminal) of the arms that run, a line per saved point, and what each arm
 * ended with (its table and outcome) once it and the arms running beside it
 * are over; outs gets each arm's outcome. Returns the exit status. */
static int watch_session(const struct run_opts *o, struct run_session *s,
                         const char *const *tags, struct run_outcome *outs) {
  FILE *out = o->json ? stderr : stdout; /* --json: stdout holds the JSON document alone */
  struct live_lines ll = {.tty = isatty(fileno(out)), .cols = terminal_cols(fileno(out))};
  struct snap_run *last = xcalloc(RUN_SESSION_MAX_ARMS, sizeof *last);
  uint64_t seq[RUN_SESSION_MAX_ARMS] = {0, 0};
  int points_seen[RUN_SESSION_MAX_ARMS] = {0, 0};
  bool settled[RUN_SESSION_MAX_ARMS] = {false, false}; /* reported, or never started */
  int repeat_seen = 0;
  int64_t next_print_ns = 0;
  struct sbuf lines[RUN_SESSION_MAX_ARMS] = {{0}, {0}};
  struct run_session_status st;
  int rc = EXIT_OK;
  for (;;) {
    run_session_poll(s);
    run_session_status(s, &st);
    if (st.n_arms > 0 && st.arm[0].repeat != repeat_seen) { /* --repeats: the next round */
      repeat_seen = st.arm[0].repeat;
      for (size_t i = 0; i < st.n_arms; i++)
        settled[i] = false, points_seen[i] = 0, seq[i] = 0;
      if (!o->quiet) {
        live_clear(&ll, out);
        fprintf(out, "repeat %d/%d\n", repeat_seen + 1, o->repeats);
      }
    }
    bool fresh = false;
    for (size_t i = 0; i < st.n_arms; i++) {
      if (settled[i] || !run_session_snapshot(s, i, &last[i], &seq[i]))
        continue;
      fresh = true;
      const struct snap_points *h = &last[i].points;
      int first_new = h->n - (h->n_written - points_seen[i]);
      for (int k = first_new < 0 ? 0 : first_new; !o->quiet && k < h->n; k++) {
        live_clear(&ll, out);
        point_line(out, tags[i], &last[i], &h->point[k]);
      }
      points_seen[i] = h->n_written;
    }
    /* an arm's end is told before the next arm's first line; with
     * --ab-parallel, once both are over */
    for (size_t i = 0; i < st.n_arms; i++) {
      const struct run_session_arm *a = &st.arm[i];
      if (settled[i] || (a->state == RUN_ARM_ENDED && st.parallel && st.n_running > 0))
        continue;
      if (a->state == RUN_ARM_ENDED) {
        if (!o->quiet)
          live_clear(&ll, out);
        run_session_snapshot(s, i, &last[i], NULL); /* the last picture: every saved point */
        outs[i] = a->outcome;
        int arm_rc = report_runs(o, &tags[i], &outs[i], &last[i], 1);
        if (arm_rc != EXIT_OK && (rc == EXIT_OK || arm_rc == EXIT_INTERRUPTED))
          rc = arm_rc;
        settled[i] = true;
      } else if (a->state == RUN_ARM_NOT_STARTED) {
        if (a->start_error[0]) {
          live_clear(&ll, out);
          fprintf(stderr, "%sservetop run: %s\n", tags[i], a->start_error);
          rc = EXIT_RUN_FAILED;
        }
        settled[i] = true;
      }
    }
    if (st.over)
      break;
    bool print_now = !o->quiet && clock_mono_ns() >= next_print_ns;
    if (print_now && (fresh || !ll.tty)) {
      next_print_ns = clock_mono_ns() + (ll.tty ? 200000000LL : 1000000000LL);
      size_t n = 0;
      for (size_t i = 0; i < st.n_arms; i++) {
        bool shown = !settled[i] && (st.arm[i].state == RUN_ARM_RUNNING ||
                                     st.arm[i].state == RUN_ARM_ENDED);
        if (!shown)
          continue;
        sbuf_reset(&lines[n]);
        status_line(&lines[n], tags[i], &last[i]);
        n++;
      }
      live_show(&ll, out, lines, n);
    }
    clock_sleep_us(100000);
  }
  if (!o->quiet) {
    live_clear(&ll, out);
    fflush(out);
  }
  sbuf_free(&lines[0]);
  sbuf_free(&lines[1]);
  free(last);
  return rc;
}

/* Runs the configured runs headless, one session (--ab: the arms back to
 * back; --ab-parallel: both at once); returns the exit status and fills outs. */
static int run_headless(const struct run_opts *o, struct run_config *cfgs, const char *const *tags,
                        size_t n_runs, struct run_outcome *outs,
                        char (*rep_dirs)[RUN_SESSION_MAX_REPEATS][1024], int *n_reps) {
  struct run_session_config sc;
  memset(&sc, 0, sizeof sc);
  sc.n_arms = n_runs;
  sc.parallel = o->ab_parallel;
  sc.repeats = o->repeats;
  for (size_t i = 0; i < n_runs; i++)
    sc.arm[i] = cfgs[i];
  install_stop_handlers();
  struct st_err err = {{0}};
  struct run_session *s = run_session_start(&sc, &err);
  if (!s) {
    fprintf(stderr, "servetop run: %s\n", err.msg);
    return EXIT_RUN_FAILED;
  }
  active_session = s;
  if (stop_signalled) /* a signal while it started */
    run_session_stop(s);
  int rc = watch_session(o, s, tags, outs);
  active_session = NULL;
  /* the repeats every arm finished, in order (the last may be partial: left out) */
  if (rep_dirs && n_reps)
    *n_reps = run_session_repeat_dirs(s, rep_dirs);
  run_session_free(s);
  return rc;
}

/* The same runs in the dashboard; outs gets what each ended with, rep_dirs (when not NULL) the
 * folders of the repeats both arms finished, *n_reps of them. The A/B view's columns are the
 * session's arms, off first: named from the speculative side (`run X-mtp --ab`), the arms go
 * to the dashboard swapped and their outcomes and folders come back in this command's order. */
static int run_in_dashboard(const struct run_opts *o, struct run_config *cfgs,
                            const struct eng_ops *const *engines, const char *const *tags,
                            size_t n_runs, struct run_outcome *outs,
                            char (*rep_dirs)[RUN_SESSION_MAX_REPEATS][1024], int *n_reps) {
  size_t spec_first = n_runs > 1 && cfgs[0].recipe->spec != RECIPE_SPEC_NONE; /* arm i is i^1 */
  struct tui_launch launch;
  memset(&launch, 0, sizeof launch);
  launch.recipe = cfgs[spec_first].recipe;
  launch.twin = n_runs > 1 ? cfgs[!spec_first].recipe : NULL;
  launch.repeats = o->repeats;
  launch.repeat_dirs = rep_dirs;
  char texts[2][160];
  for (size_t i = 0; i < n_runs; i++) {
    const struct eng_ops *e = engines[i ^ spec_first];
    launch.engine[i] = e;
    snprintf(texts[i], sizeof texts[i], "engine %s%s", e ? e->name : "",
             e && e->simulated ? " (SIMULATED)" : "");
    launch.engine_text[i] = texts[i];
  }
  launch.config = cfgs[0];
  struct tui_options t = {.configs_dir = o->configs_dir, .inferencex_dir = o->inferencex_dir,
                          .results_dir = o->results_dir, .launch = &launch};
  int tui_rc = tui_run(&t);
  if (tui_rc == EXIT_USAGE)
    return EXIT_USAGE;
  for (size_t i = 0; i < launch.n_outcomes && i < n_runs; i++)
    outs[i ^ spec_first] = launch.outcomes[i];
  for (size_t k = 0; spec_first && rep_dirs && k < RUN_SESSION_MAX_REPEATS; k++) {
    char dir[1024];
    memcpy(dir, rep_dirs[0][k], sizeof dir);
    memcpy(rep_dirs[0][k], rep_dirs[1][k], sizeof dir);
    memcpy(rep_dirs[1][k], dir, sizeof dir);
  }
  if (n_reps)
    *n_reps = launch.n_repeat_dirs;
  if (launch.n_outcomes == 0) {
    fprintf(stderr, "servetop run: quit before the run started\n");
    return tui_rc == 130 ? EXIT_INTERRUPTED : EXIT_RUN_FAILED;
  }
  size_t first = spec_first && launch.n_outcomes == 1; /* only the off arm ran: our B */
  int rc = report_runs(o, tags + first, outs + first, NULL, launch.n_outcomes);
  if (launch.n_outcomes < n_runs && rc == EXIT_OK)
    rc = EXIT_INTERRUPTED; /* the other arm never ran */
  return tui_rc == 130 && rc == EXIT_OK ? EXIT_INTERRUPTED : rc;
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
  int rc = cli_parse_options(&parser, "run", argc - 1, argv + 1, pos, ST_ARRAY_LEN(pos), &n_pos);
  struct recipe_set *set = NULL;
  char *gpu_halves[2] = {NULL, NULL};
  char (*rep_dirs)[RUN_SESSION_MAX_REPEATS][1024] = NULL;
  char bad[512];
  if (rc == CLI_GO_ON && n_pos != 1)
    rc = cli_usage_error("run", "expected one RECIPE");
  if (rc != CLI_GO_ON)
    goto out;
  rc = EXIT_USAGE; /* until the run has an outcome */
  if (run_input_error(&o, bad, sizeof bad) || cli_proxy_error(o.proxy, bad, sizeof bad)) {
    fprintf(stderr, "servetop run: %s\n", bad);
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
    /* a recipe that failed to load is named with where and why, not "no
     * recipe named" (issue 22.5); a file that failed as a whole is listed */
    size_t named = 0, whole = 0, len = strlen(pos[0]);
    for (size_t i = 0; i < recipe_set_diag_count(set); i++) {
      const struct recipe_diag *d = recipe_set_diag_at(set, i);
      size_t elen = d->entry ? strlen(d->entry) : 0;
      if (!d->entry) {
        whole++;
        continue;
      }
      if (!(strcmp(d->entry, pos[0]) == 0 ||
            (len > elen && strncmp(pos[0], d->entry, elen) == 0 && pos[0][elen] == ':') ||
            (elen > len && strncmp(d->entry, pos[0], len) == 0 && d->entry[len] == ':')))
        continue;
      if (named++ == 0)
        fprintf(stderr, "servetop run: recipe '%s' failed to load:\n", pos[0]);
      fprintf(stderr, "  %s:%d:%d: %s\n", d->file, d->line, d->col, d->message); /* field in it */
    }
    if (!named) {
      cli_no_recipe("run", set, pos[0]);
      for (size_t i = 0; i < recipe_set_diag_count(set) && whole; i++) {
        const struct recipe_diag *d = recipe_set_diag_at(set, i);
        if (!d->entry)
          fprintf(stderr, "  (it may be in a file that failed to load) %s:%d:%d: %s\n", d->file,
                  d->line, d->col, d->message);
      }
    }
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
  char tag_text[2][16];
  const char *labels[2] = {o.label, NULL};
  if (o.ab) {
    for (size_t i = 0; i < 2; i++) {
      snprintf(tag_text[i], sizeof tag_text[i], "[%s] ", recipe_spec_arm_name(recipes[i]->spec));
      tags[i] = tag_text[i];
    }
    labels[0] = labels[1] = o.label ? o.label : "ab";
  }
  const struct eng_ops *engines[2] = {NULL, NULL};
  for (size_t i = 0; i < n_runs; i++)
    if (check_overrides(&o, recipes[i]) != 0 || check_prompts_cover_conc(&o, recipes[i]) != 0 ||
        check_engine(&o, recipes[i], &engines[i], tags[i]) != 0)
      goto out;
  const char *gpus[2] = {o.gpus, o.gpus};
  if (o.ab_parallel && !engines[0]->simulated) {
    if (!o.gpus || split_gpus(o.gpus, &gpu_halves[0], &gpu_halves[1]) != 0) {
      fprintf(stderr, "servetop run --ab-parallel: give --gpus with at least two GPUs to split\n");
      goto out;
    }
    gpus[0] = gpu_halves[0];
    gpus[1] = gpu_halves[1];
  }
  struct run_config cfgs[2];
  for (size_t i = 0; i < n_runs; i++) {
    fill_config(&cfgs[i], &o, recipes[i], engines[i], labels[i], gpus[i]);
    cfgs[i].servetop_exe = NULL; /* /proc/self/exe: this binary */
    if (run_check_server_cmd(&cfgs[i], &err) != 0) {
      fprintf(stderr, "%sservetop run: %s: %s\n", tags[i], recipes[i]->name, err.msg);
      goto out;
    }
  }
  struct run_outcome outcomes[2];
  memset(outcomes, 0, sizeof(outcomes));
  bool dashboard = wants_dashboard(&o);
  if (dashboard && o.ab_parallel) {
    fprintf(stderr, "servetop run: --ab-parallel runs headless (the A/B view runs the arms one "
                    "after the other)\n");
    dashboard = false;
  }
  rep_dirs = xcalloc(2, sizeof *rep_dirs);
  int n_reps = 1;
  rc = dashboard ? run_in_dashboard(&o, cfgs, engines, tags, n_runs, outcomes, rep_dirs, &n_reps)
                 : run_headless(&o, cfgs, tags, n_runs, outcomes, rep_dirs, &n_reps);
  if (rc == EXIT_USAGE)
    goto out;
  if (n_reps < 1) { /* one run each: the last outcomes */
    n_reps = 1;
    for (size_t i = 0; i < n_runs; i++)
      snprintf(rep_dirs[i][0], sizeof rep_dirs[i][0], "%s", outcomes[i].dir);
  }
  if (o.ab && outcomes[0].n_points_done > 0 && outcomes[1].n_points_done > 0 &&
      rc != EXIT_INTERRUPTED)
    compare_run_dirs(o.json ? stderr : stdout, rep_dirs, n_reps);
  if (o.json)
    print_outcomes_json(outcomes, tags, n_runs);
out:
  free(rep_dirs);
  free(gpu_halves[0]);
  free(gpu_halves[1]);
  recipe_set_free(set);
  free(o.sets.items); /* the arrays are opt_parse's; the strings are argv's */
  free(o.server_args.items);
  return rc;
}

/* ---------------------------------------------------------------- attach */
/* "1,2,4" -> concs; -1 with a message naming the flag. */
int cmd_attach_main(int argc, char **argv) {
  struct run_opts o = {.num_warmups = -1};
  const char *conc_list = NULL, *model = NULL;
  bool chat = false;
  int factor = 0;
  bool factor_seen = false;
  const struct opt_spec specs[] = {
      {"conc", OPT_INT, &o.conc, "N", "one point at concurrency N (default 1)", NULL, &o.conc_seen},
      {"conc-list", OPT_STRING, &conc_list, "LIST", "one point per concurrency, e.g. 1,2,4,8",
       NULL, NULL},
      {"isl", OPT_INT, &o.isl, "N", "input length in tokens (default 1024)", NULL, &o.isl_seen},
      {"osl", OPT_INT, &o.osl, "N", "output length in tokens (default 128)", NULL, &o.osl_seen},
      {"num-prompts", OPT_INT, &o.num_prompts, "N",
       "requests per point, exactly (default conc x 10, raised so a point lasts 5 s)", NULL,
       &o.num_prompts_seen},
      {"num-prompts-factor", OPT_INT, &factor, "F", "requests per point = conc x F (default 10)",
       NULL, &factor_seen},
      {"num-warmups", OPT_INT, &o.num_warmups, "N", "warmup requests (default 2 x conc)", NULL,
       &o.num_warmups_seen},
      {"model", OPT_STRING, &model, "NAME", "model name sent (default: the server's /v1/models)",
       NULL, NULL},
      {"chat", OPT_FLAG, &chat, NULL, "the chat endpoint (default /v1/completions)", NULL, NULL},
      {"results|results-dir", OPT_STRING, &o.results_dir, "DIR",
       "results directory (default $XDG_DATA_HOME/servetop/runs)", NULL, NULL},
      {"label", OPT_STRING, &o.label, "TEXT", "run folder suffix", NULL, NULL},
      {"ready-timeout", OPT_DOUBLE, &o.ready_timeout_s, "S",
       "wait this long for the server to answer (default 10 s)", NULL, &o.ready_timeout_seen},
      {"request-timeout", OPT_DOUBLE, &o.request_timeout_s, "S",
       "per-request timeout (default 21600, as the reference)", NULL, &o.request_timeout_seen},
      {"proxy", OPT_STRING, &o.proxy, "URL", PROXY_HELP, NULL, NULL},
      {"seed", OPT_LONG, &o.seed, "N", "dataset seed (default 0)", NULL, &o.seed_seen},
      {"headless", OPT_FLAG, &o.headless, NULL,
       "a status line instead of the run view (the default without a terminal)", NULL, NULL},
      {"json", OPT_FLAG, &o.json, NULL, "print the outcome as JSON at the end (stdout carries only the JSON; the rest goes to stderr)", NULL, NULL},
      {"quiet", OPT_FLAG, &o.quiet, NULL, "no status line", NULL, NULL},
  };
  struct opt_parser parser = {
      .usage = "servetop attach URL [options]",
      .description =
          "Measures an OpenAI-compatible server that is already running at URL\n"
          "(http://HOST:PORT), started by anything but servetop: the same load generator,\n"
          "figures and run folder as servetop run, its /metrics and telemetry, the engine told\n"
          "by what it serves (SGLang, vLLM, llama.cpp, servetop sim; else unknown). Nothing is\n"
          "launched, restarted or stopped: the dashboard's run view opens in a terminal without\n"
          "restart keys, --headless prints the status line.\n"
          "Exit status: 0 ok, 1 failed (nothing answers, too many requests failed), 2 usage,\n"
          "130 interrupted.",
      .specs = specs,
      .n_specs = ST_ARRAY_LEN(specs)};
  char *pos[2];
  struct st_err err = {{0}};
  int prc = cli_parse_positionals(&parser, "attach", argc, argv, pos, ST_ARRAY_LEN(pos), 1,
                                  "expected one URL");
  if (prc != CLI_GO_ON)
    return prc;
  char bad[512];
  int concs[64];
  size_t n_concs = 0;
  const char *problem = run_input_error(&o, bad, sizeof bad);
  if (!problem && conc_list && o.conc_seen)
    problem = "--conc N and --conc-list are exclusive";
  if (!problem && conc_list &&
      run_parse_conc_list(conc_list, concs, ST_ARRAY_LEN(concs), &n_concs, &err) != 0) {
    snprintf(bad, sizeof bad, "--conc-list %.480s", err.msg);
    problem = bad;
  }
  if (!problem && (factor < 0 || (factor_seen && factor < 1)))
    problem = "--num-prompts-factor must be >= 1";
  if (!problem)
    problem = cli_proxy_error(o.proxy, bad, sizeof bad);
  char host[128];
  int port;
  if (!problem && run_parse_http_url(pos[0], host, sizeof host, &port, &err) != 0) {
    snprintf(bad, sizeof bad, "URL %.480s", err.msg);
    problem = bad;
  }
  if (problem) {
    fprintf(stderr, "servetop attach: %s\n", problem);
    return EXIT_USAGE;
  }
  if (!conc_list) {
    concs[0] = o.conc_seen ? o.conc : 1;
    n_concs = 1;
  }
  struct run_attach_load load = {.url = pos[0], .model = model, .isl = o.isl, .osl = o.osl,
                                 .concs = concs, .n_concs = n_concs,
                                 .num_prompts_factor = factor, .chat = chat};
  struct recipe_set *set = run_attach_recipes_alloc(&load, &err);
  if (!set) {
    fprintf(stderr, "servetop attach: %s\n", err.msg);
    return EXIT_USAGE;
  }
  struct run_config cfg;
  fill_config(&cfg, &o, recipe_set_at(set, 0), NULL, o.label, NULL);
  cfg.attach_url = pos[0];
  cfg.conc = 0;               /* the recipe's points are the concurrencies asked for */
  cfg.sweep = n_concs > 1;
  cfg.isl = cfg.osl = 0;      /* in the recipe already */
  const char *tags[1] = {""};
  struct run_outcome outcome;
  memset(&outcome, 0, sizeof outcome);
  const struct eng_ops *engines[1] = {NULL};
  int rc = wants_dashboard(&o) ? run_in_dashboard(&o, &cfg, engines, tags, 1, &outcome, NULL, NULL)
                               : run_headless(&o, &cfg, tags, 1, &outcome, NULL, NULL);
  if (o.json && rc != EXIT_USAGE)
    print_outcomes_json(&outcome, tags, 1);
  recipe_set_free(set);
  return rc;
}

/* ---------------------------------------------------------------- compare */
int cmd_compare_main(int argc, char **argv) {
  bool json = false, force = false;
  const char *results_dir = NULL;
  const struct opt_spec specs[] = {
      {"json", OPT_FLAG, &json, NULL, "machine-readable output", NULL, NULL},
      {"force", OPT_FLAG, &force, NULL,
       "show A and B even when they are not like with like (said loudly)", NULL, NULL},
      {"results|results-dir", OPT_STRING, &results_dir, "DIR",
       "where run names are looked up (default $XDG_DATA_HOME/servetop/runs)", NULL, NULL},
  };
  struct opt_parser parser = {
      .usage = "servetop compare A B [--json] [--force] [--results DIR]",
      .description = "A and B are result JSON files or run folders (every point of a sweep), as\n"
                     "paths or as the run names the past-runs list and `servetop run` print\n"
                     "(20261205-101500-tiny-llamacpp-cpu-off), from any directory. Only like with\n"
                     "like is compared: a difference in model, engine, GPUs, workload, chat\n"
                     "template, overrides, simulated or real, schema or concurrency is refused\n"
                     "(exit 2) unless --force.\n"
                     "Says what each side is (speculative decoding, GPU count), then prints every\n"
                     "headline metric of A and B with B-A and B/A to 4 significant digits,\n"
                     "acceptance, and per concurrency the speculative-decoding speedup (MTP, or a\n"
                     "draft model), naming each side's method, in throughput per GPU and in\n"
                     "interactivity (tok/s/user = 1000 / median TPOT) when one side has it.\n"
                     "Only like with like: points pair by concurrency, and A and B must agree on\n"
                     "model, engine, GPU type and count, isl/osl/range ratio, chat template,\n"
                     "overrides (--set), simulated or real, and result schema; otherwise compare\n"
                     "names the difference and exits 2 (--force shows them anyway, with a warning).\n"
                     "Simulated figures say SIMULATED (text) and \"simulated\": true (JSON).",
      .specs = specs,
      .n_specs = ST_ARRAY_LEN(specs)};
  char *pos[3];
  struct st_err err = {{0}};
  int prc = cli_parse_positionals(&parser, "compare", argc, argv, pos, ST_ARRAY_LEN(pos), 2,
                                  "expected A and B");
  if (prc != CLI_GO_ON)
    return prc;
  struct run_compare_side a, b;
  memset(&a, 0, sizeof(a));
  memset(&b, 0, sizeof(b));
  char why[1024];
  int rc = EXIT_USAGE;
  char *path_a = run_resolve_path_alloc(pos[0], results_dir, &err);
  char *path_b = path_a ? run_resolve_path_alloc(pos[1], results_dir, &err) : NULL;
  if (!path_b) {
    fprintf(stderr, "servetop compare: %s\n", err.msg);
    free(path_a);
    return EXIT_USAGE;
  }
  if (run_compare_side_load(path_a, &a, &err) != 0 || run_compare_side_load(path_b, &b, &err) != 0) {
    fprintf(stderr, "servetop compare: %s\n", err.msg);
  } else if (!force && run_compare_unlike(&a, &b, why, sizeof why) > 0) {
    fprintf(stderr, "servetop compare: refused: A and B are not like with like: %s\n"
                    "  (--force shows them anyway, with this warning)\n", why);
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
  free(path_a);
  free(path_b);
  return rc;
}

/* ---------------------------------------------------------------- export */
int cmd_export_main(int argc, char **argv) {
  bool inferencex = false, allow_simulated = false;
  const char *out_dir = NULL, *results_dir = NULL;
  const struct opt_spec specs[] = {
      {"inferencex", OPT_FLAG, &inferencex, NULL, "InferenceX master-config entry + script",
       NULL, NULL},
      {"out", OPT_STRING, &out_dir, "DIR",
       "write <DIR>/master-entry.yaml and <DIR>/launch-server.sh (a tune: and recipe.yaml) "
       "instead of stdout", NULL, NULL},
      {"allow-simulated", OPT_FLAG, &allow_simulated, NULL,
       "export a run measured on servetop sim (marked SIMULATED)", NULL, NULL},
      {"results|results-dir", OPT_STRING, &results_dir, "DIR",
       "where run names are looked up (default $XDG_DATA_HOME/servetop/runs)", NULL, NULL},
  };
  struct opt_parser parser = {
      .usage = "servetop export RUN --inferencex [--out DIR] [--allow-simulated] [--results DIR]",
      .description = "RUN is a run folder's path or its name (as the past-runs list and\n"
                     "`servetop run` print it), from any directory. A run measured on the sim is\n"
                     "refused unless --allow-simulated.\n"
                     "Writes a run's tuned knobs (the recipe's server command with the run's --set\n"
                     "overrides) as an InferenceX master-config entry, with the concurrencies the\n"
                     "run measured to the end as conc-list, and a launch-script fragment for the\n"
                     "server (flags that follow the concurrency as $CONC, as the recipe writes\n"
                     "them). A failed or mislabelled run, or one that finished no point, is\n"
                     "refused with the reason (exit 1); an unreadable folder exits 2. A run on\n"
                     "servetop sim is refused too unless --allow-simulated (then marked\n"
                     "SIMULATED). isl / osl are the ones the run measured.\n"
                     "RUN may be a tune folder (servetop tune): its winner is exported, with its\n"
                     "best concurrency as conc-list and its server command as launched, and also\n"
                     "as a servetop recipe (recipe.yaml with --out).",
      .specs = specs,
      .n_specs = ST_ARRAY_LEN(specs)};
  char *pos[2];
  struct st_err err = {{0}};
  static const char usage[] = "usage: servetop export RUN --inferencex [--out DIR]";
  int prc = cli_parse_positionals(&parser, "export", argc, argv, pos, ST_ARRAY_LEN(pos), 1, usage);
  if (prc != CLI_GO_ON)
    return prc;
  if (!inferencex)
    return cli_usage_error("export", "%s", usage);
  char *yaml = NULL, *script = NULL;
  char *run_dir = run_resolve_path_alloc(pos[0], results_dir, &err);
  if (!run_dir) {
    fprintf(stderr, "servetop export: %s\n", err.msg);
    return EXIT_USAGE;
  }
  char *tuned = NULL; /* a tune folder: its winner as a recipe too */
  int erc = run_is_tune_dir(run_dir)
                ? run_export_tune(run_dir, allow_simulated, &tuned, &yaml, &script, &err)
                : run_export_inferencex_opts(run_dir, allow_simulated, &yaml, &script, &err);
  free(run_dir);
  if (erc != 0) {
    fprintf(stderr, "servetop export: %s\n", err.msg);
    return erc > 0 ? EXIT_RUN_FAILED : EXIT_USAGE;
  }
  int rc = EXIT_OK;
  if (out_dir) {
    char *yaml_path = path_join_alloc(out_dir, "master-entry.yaml");
    char *sh_path = path_join_alloc(out_dir, "launch-server.sh");
    char *recipe_path = path_join_alloc(out_dir, "recipe.yaml");
    if (path_mkdir_p(out_dir, 0755, &err) != 0 ||
        file_write_atomic(yaml_path, yaml, strlen(yaml), 0644, &err) != 0 ||
        file_write_atomic(sh_path, script, strlen(script), 0644, &err) != 0 ||
        (tuned && file_write_atomic(recipe_path, tuned, strlen(tuned), 0644, &err) != 0)) {
      fprintf(stderr, "servetop export: %s\n", err.msg);
      rc = EXIT_RUN_FAILED;
    } else {
      printf("%s\n%s\n", yaml_path, sh_path);
      if (tuned)
        printf("%s\n", recipe_path);
    }
    free(yaml_path);
    free(sh_path);
    free(recipe_path);
  } else {
    if (tuned)
      printf("# ---- servetop recipe of the tune's winner (servetop run --configs DIR)\n%s\n",
             tuned);
    printf("# ---- master config entry (configs/*-master.yaml)\n%s\n", yaml);
    printf("# ---- launch-script fragment (benchmarks/single_node/...)\n%s", script);
  }
  free(yaml);
  free(script);
  free(tuned);
  return rc;
}
