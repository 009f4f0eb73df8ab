/* servetop bench: a headless load run against a running server, a drop-in for
 * InferenceX's `python3 benchmark_serving.py` (same flags, same result file). */
#include "cli/cli.h"

#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "http/http.h"
#include "measure/measure.h"
#include "results/results.h"

struct bench_opts {
  const char *backend, *base_url, *host, *endpoint, *model, *served_model_name, *tokenizer;
  const char *tokenizer_mode, *dataset_name, *percentile_metrics, *metric_percentiles;
  const char *result_dir, *result_filename;
  const char *proxy;
  const char *num_workers_text; /* --num-workers: "auto" or 1..64 */
  int port, random_input_len, random_output_len, random_prefix_len, num_prompts;
  int max_concurrency, num_warmups, num_workers, vocab_size, random_num_workers, best_of;
  double random_range_ratio, request_rate, burstiness, request_timeout_s, drain_timeout_s;
  double scrape_interval_s;
  long seed;
  bool ignore_eos, use_chat_template, dsv4, trust_remote_code, save_result, save_detailed;
  bool disable_tqdm, reuse_connections, quiet, no_server_signals, max_concurrency_seen, json;
  bool profile, no_server_tokenizer, vocab_size_seen;
  struct opt_list goodput, metadata;
};

/* ---------------------------------------------------------------- SIGINT */
/* Set by SIGINT/SIGTERM/SIGHUP; the measuring loop checks it every tick
 * (100 ms) and stops the load, saving what was measured. */
static atomic_int interrupted; /* lock-free: set by the signal handler, read by the load */

static void on_sigint(int sig) {
  (void)sig;
  interrupted = 1;
}

/* ---------------------------------------------------------------- argv */
/* argparse's nargs="+"/"*" (--goodput a b, --metadata k=v k2=v2) becomes
 * repeated "--name=value" items for the table parser. */
static char **expand_nargs(int argc, char **argv, int *argc_out, char ***owned, size_t *n_owned) {
  char **out = xcalloc((size_t)argc + 1, sizeof(*out));
  *owned = xcalloc((size_t)argc + 1, sizeof(**owned));
  *n_owned = 0;
  int n = 0;
  for (int i = 0; i < argc; i++) {
    bool multi = strcmp(argv[i], "--goodput") == 0 || strcmp(argv[i], "--metadata") == 0;
    if (!multi) {
      out[n++] = argv[i];
      continue;
    }
    const char *name = argv[i];
    int j = i + 1;
    for (; j < argc && strncmp(argv[j], "--", 2) != 0; j++) {
      char *item = xasprintf("%s=%s", name, argv[j]);
      (*owned)[(*n_owned)++] = item;
      out[n++] = item;
    }
    if (j == i + 1)
      out[n++] = argv[i]; /* no value: let the parser report it */
    i = j - 1;
  }
  *argc_out = n;
  return out;
}

static void raise_fd_limit(void) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
}

/* ---------------------------------------------------------------- progress and phases */
/* One progress line: live while the load runs, the result's own figures
 * for the last one (so the last line is the result). */
struct progress_figures {
  int64_t completed, total, failed, in_flight;
  double elapsed_s;
  struct fig_set window;          /* the figures model: the last LG_LIVE_WINDOW_S s */
  double window_s;
  bool window_estimated;          /* the window's output counts estimated chunks: "(est.)" */
  struct fig_set point;           /* the whole point so far (the result's at the end) */
  bool accept_valid;
  double accept_length;           /* run-scoped, as the result saves it */
  bool draft_valid;
  double draft_rate;              /* llama.cpp per-request acceptance, pooled */
  char client_bound[LG_CLIENT_BOUND_LEN]; /* "" while the client keeps up (lg_client_bound) */
};

struct bench_ui {
  const struct bench_opts *o;
  FILE *text;              /* the reference's messages (stderr with --json) */
  bool tty;
  int64_t last_print_ns;
  bool printed;
  struct progress_figures live;  /* the latest live figures */
};

static void figures_from_live(const struct lg_live *live, struct sig_scraper *scraper,
                              struct progress_figures *f) {
  memset(f, 0, sizeof(*f));
  f->completed = live->completed;
  f->total = live->total;
  f->failed = live->failed;
  f->in_flight = live->in_flight;
  f->elapsed_s = live->elapsed_s;
  f->window = live->window;
  f->window_s = live->window_s;
  f->window_estimated = live->output_estimated;
  f->point = live->point;
  snprintf(f->client_bound, sizeof f->client_bound, "%s", live->client_bound);
  if (scraper) {
    struct sig_live sig;
    sig_scraper_live(scraper, &sig);
    f->accept_valid = sig.run_accept_length_valid && sig.run_accept_length > 0;
    f->accept_length = sig.run_accept_length;
  }
  f->draft_valid = live->accept_draft_tokens > 0;
  f->draft_rate = f->draft_valid ? (double)live->accept_accepted_tokens /
                                       (double)live->accept_draft_tokens
                                 : 0;
}

static void figures_from_result(const struct measure_result *r, const struct progress_figures *live,
                                struct progress_figures *f) {
  const struct results_metrics *m = &r->metrics;
  memset(f, 0, sizeof(*f));
  f->completed = m->completed;
  f->total = r->settings.num_prompts;
  f->failed = m->failed;
  f->elapsed_s = m->duration_s;
  f->window = live->window;
  f->window_s = live->window_s;
  f->point = m->figs;
  snprintf(f->client_bound, sizeof f->client_bound, "%s", m->client_bound);
  f->accept_valid = r->have_signals && r->signals.accept_length_valid;
  f->accept_length = r->signals.accept_length;
  f->draft_valid = m->accept_draft_tokens > 0;
  f->draft_rate = f->draft_valid ? (double)m->accept_accepted_tokens / (double)m->accept_draft_tokens
                                 : 0;
}

static void print_progress(struct bench_ui *ui, const struct progress_figures *f, bool last) {
  int64_t finished = f->completed + f->failed;
  char eta[32] = "-";
  if (last) {
    snprintf(eta, sizeof(eta), "done in %.1fs", f->elapsed_s);
  } else if (finished > 0 && f->elapsed_s > 0 && f->total > finished) {
    double rate = (double)finished / f->elapsed_s;
    snprintf(eta, sizeof(eta), "ETA %.0fs", (double)(f->total - finished) / rate);
  }
  char accept[48] = "", draft[48] = "";
  if (f->accept_valid)
    snprintf(accept, sizeof(accept), "  accept %.2f", f->accept_length);
  if (f->draft_valid)
    snprintf(draft, sizeof(draft), "  drafts accepted %.1f%%", f->draft_rate * 100.0);
  struct sbuf figs = {0};
  cli_figures_line(&figs, "  ", &f->window, f->window_s, f->window_estimated, &f->point);
  fprintf(stderr, "%s%lld/%lld done  %lld failed  %lld in flight  %s%s%s%s%s%s%s",
          ui->tty ? "\r" : "", (long long)f->completed, (long long)f->total,
          (long long)f->failed, (long long)f->in_flight, eta, figs.data ? figs.data : "", accept,
          draft, f->client_bound[0] ? "  " : "", f->client_bound,
          ui->tty && !last ? "\033[K" : ui->tty ? "\033[K\n" : "\n");
  sbuf_free(&figs);
  fflush(stderr);
  ui->printed = !last;
}

/* The last line: the result's counts and figures (the window's last live value). */
static void print_progress_result(struct bench_ui *ui, const struct measure_result *r) {
  struct progress_figures f;
  figures_from_result(r, &ui->live, &f);
  print_progress(ui, &f, true);
}

static enum measure_action on_tick(void *ctx, const struct measure_tick *t, int *set_conc) {
  struct bench_ui *ui = ctx;
  (void)set_conc;
  if (t->phase != MEASURE_PHASE_LOAD || !t->live)
    return MEASURE_GO_ON;
  figures_from_live(t->live, t->scraper, &ui->live);
  int64_t now = clock_mono_ns();
  if (!ui->o->quiet && now - ui->last_print_ns >= 1000000000 && !t->live->finished) {
    print_progress(ui, &ui->live, false);
    ui->last_print_ns = now;
  }
  return MEASURE_GO_ON;
}

/* The reference's messages at each phase, in its words. */
static void on_phase(void *ctx, enum measure_phase p, const char *note) {
  struct bench_ui *ui = ctx;
  const struct bench_opts *o = ui->o;
  switch (p) {
  case MEASURE_PHASE_PROMPTS:
    if (strncmp(note, "chat calibration", 16) == 0)
      fprintf(stderr, "%s\n", note);
    return;
  case MEASURE_PHASE_WARMUP:
    fprintf(ui->text, "Warming up with %d requests...\n", o->num_warmups);
    break;
  case MEASURE_PHASE_PROFILE_START:
    if (o->num_warmups > 0)
      fprintf(ui->text, "Warmup completed.\n");
    fprintf(ui->text, "Starting profiler...\n");
    break;
  case MEASURE_PHASE_LOAD: {
    if (o->num_warmups > 0 && !o->profile)
      fprintf(ui->text, "Warmup completed.\n");
    char rate[48], burst[48];
    results_format_python_float(rate, sizeof rate, o->request_rate);
    results_format_python_float(burst, sizeof burst, o->burstiness);
    fprintf(ui->text, "Traffic request rate: %s\n", rate);
    fprintf(ui->text, "Burstiness factor: %s (%s)\n", burst,
            o->burstiness == 1.0 ? "Poisson process" : "Gamma distribution");
    if (o->max_concurrency_seen)
      fprintf(ui->text, "Maximum request concurrency: %d\n", o->max_concurrency);
    else
      fprintf(ui->text, "Maximum request concurrency: None\n");
    fprintf(ui->text, "Starting main benchmark run...\n");
    ui->last_print_ns = clock_mono_ns();
    break;
  }
  case MEASURE_PHASE_PROFILE_STOP:
    if (ui->printed && ui->tty)
      fputc('\n', stderr);
    ui->printed = false;
    fprintf(ui->text, "Stopping profiler...\n");
    break;
  case MEASURE_PHASE_FIGURES: /* the last progress line comes with the result */
    break;
  }
  fflush(ui->text);
}

/* ---------------------------------------------------------------- input checks */
/* The first bad value, as one message naming its flag (NULL: all fine).
 * Every check runs before anything is sent. */
static const char *bench_input_error(const struct bench_opts *o, char *buf, size_t n) {
  const struct cli_check checks[] = {
      {o->port < 1 || o->port > 65535, "--port must be from 1 to 65535"},
      {o->base_url && strncmp(o->base_url, "http://", 7) != 0 &&
           strncmp(o->base_url, "https://", 8) != 0,
       "--base-url must start with http:// or https://"},
      {o->random_input_len < 1, "--random-input-len must be >= 1"},
      {o->random_output_len < 1, "--random-output-len must be >= 1"},
      {o->random_prefix_len < 0, "--random-prefix-len must be >= 0"},
      {!(o->random_range_ratio >= 0 && o->random_range_ratio <= 1),
       "--random-range-ratio must be from 0 to 1 (lengths are uniform on [L*R, L])"},
      {o->random_num_workers < 0, "--random-num-workers must be >= 0"},
      {!(o->request_rate > 0), "--request-rate must be > 0 (inf: all at once)"},
      {!(o->burstiness > 0), "--burstiness must be > 0"},
      {o->num_workers < 0,
       "--num-workers must be auto or from 1 to 64 (event loops; each is a thread)"},
      {o->result_filename && !*o->result_filename, "--result-filename must not be empty"},
      {!(o->request_timeout_s > 0), "--request-timeout must be > 0 seconds"},
      {!(o->drain_timeout_s >= 0), "--drain-timeout must be >= 0 seconds"},
      {!(o->scrape_interval_s > 0), "--scrape-interval must be > 0 seconds"},
  };
  if (cli_first_bad(checks, ST_ARRAY_LEN(checks), buf, n))
    return buf;
  if (o->base_url) { /* a port past the scheme and host: 1..65535 */
    const char *hp = strstr(o->base_url, "://") + 3;
    size_t hlen = strcspn(hp, "/?#");
    const char *colon = hp[0] == '[' ? memchr(hp, ']', hlen) : hp;
    colon = colon ? memchr(colon, ':', hlen - (size_t)(colon - hp)) : NULL;
    if (hlen == 0 || (colon && colon == hp)) {
      snprintf(buf, n, "--base-url %.200s: no host", o->base_url);
      return buf;
    }
    if (colon) {
      long port = 0;
      size_t digits = 0;
      for (const char *p = colon + 1; p < hp + hlen && digits < 7; p++, digits++)
        port = isdigit((unsigned char)*p) ? port * 10 + (*p - '0') : -1000000;
      if (digits == 0 || digits >= 7 || port < 1 || port > 65535) {
        snprintf(buf, n, "--base-url %.200s: the port must be from 1 to 65535", o->base_url);
        return buf;
      }
    }
  }
  if (o->result_filename) {
    const char *base = strrchr(o->result_filename, '/');
    base = base ? base + 1 : o->result_filename;
    if (!*base || strlen(base) > 255) {
      snprintf(buf, n, "--result-filename %.60s%s: a file name of 1 to 255 bytes", o->result_filename,
               strlen(o->result_filename) > 60 ? "..." : "");
      return buf;
    }
  }
  return cli_not_a_directory("--result-dir", o->result_dir, buf, n);
}

/* ---------------------------------------------------------------- main */
int cmd_bench_main(int argc, char **argv) {
  struct bench_opts o = {
      .backend = "vllm", .host = "127.0.0.1", .port = 8000, .endpoint = "/v1/completions",
      .dataset_name = "random", .percentile_metrics = "ttft,tpot,itl,e2el",
      .metric_percentiles = "90,99,99.9", .random_input_len = 1024, .random_output_len = 128,
      .random_range_ratio = 1.0, .num_prompts = 1000, .request_rate = (double)INFINITY,
      .burstiness = 1.0, .num_workers_text = "auto", .vocab_size = 32000, .best_of = 1,
      .request_timeout_s = 6 * 60 * 60, .drain_timeout_s = 5.0, .scrape_interval_s = 1.0};
  const struct opt_spec specs[] = {
      {"backend", OPT_STRING, &o.backend, "NAME", "vllm | sglang | openai (/v1/completions) | openai-chat (/v1/chat/completions)", NULL, NULL},
      {"base-url", OPT_STRING, &o.base_url, "URL", "server base URL (overrides --host/--port)", NULL, NULL},
      {"host", OPT_STRING, &o.host, "HOST", "server host (default 127.0.0.1)", NULL, NULL},
      {"port", OPT_INT, &o.port, "N", "server port (default 8000)", NULL, NULL},
      {"endpoint", OPT_STRING, &o.endpoint, "PATH", "request path (default /v1/completions)", NULL, NULL},
      {"model", OPT_STRING, &o.model, "NAME", "model name (required); result model_id", NULL, NULL},
      {"served-model-name", OPT_STRING, &o.served_model_name, "NAME", "\"model\" sent in requests (default --model)", NULL, NULL},
      {"tokenizer", OPT_STRING, &o.tokenizer, "NAME", "recorded as tokenizer_id; prompts use the server's own tokenizer endpoints", NULL, NULL},
      {"tokenizer-mode", OPT_STRING, &o.tokenizer_mode, "MODE", "accepted, ignored", NULL, NULL},
      {"trust-remote-code", OPT_FLAG, &o.trust_remote_code, NULL, "accepted, ignored", NULL, NULL},
      {"dataset-name", OPT_STRING, &o.dataset_name, "NAME", "only \"random\"", NULL, NULL},
      {"random-input-len", OPT_INT, &o.random_input_len, "N", "input tokens per request (default 1024)", NULL, NULL},
      {"random-output-len", OPT_INT, &o.random_output_len, "N", "output tokens per request (default 128)", NULL, NULL},
      {"random-range-ratio", OPT_DOUBLE, &o.random_range_ratio, "R", "lengths uniform on [floor(L*R), L] (default 1.0)", NULL, NULL},
      {"random-prefix-len", OPT_INT, &o.random_prefix_len, "N", "shared prefix tokens (default 0)", NULL, NULL},
      {"random-num-workers", OPT_INT, &o.random_num_workers, "N", "the reference's prompt chunks, each with its own padding RNG (default 0 = min(CPUs, 8))", NULL, NULL},
      {"num-prompts", OPT_INT, &o.num_prompts, "N", "requests to send (default 1000)", NULL, NULL},
      {"max-concurrency", OPT_INT, &o.max_concurrency, "N", "at most N requests in flight (default unlimited)", NULL, &o.max_concurrency_seen},
      {"request-rate", OPT_DOUBLE, &o.request_rate, "RPS", "arrival rate, or inf: all at once (default inf)", NULL, NULL},
      {"burstiness", OPT_DOUBLE, &o.burstiness, "B", "gamma shape of arrival gaps; 1 = Poisson (default 1.0)", NULL, NULL},
      {"ignore-eos", OPT_FLAG, &o.ignore_eos, NULL, "send ignore_eos: output length = max_tokens", NULL, NULL},
      {"use-chat-template", OPT_FLAG, &o.use_chat_template, NULL, "render the model's chat template around each prompt (through the server) and send the text", NULL, NULL},
      {"dsv4", OPT_FLAG, &o.dsv4, NULL, "DeepSeek-V4's prompt framing (encoding_dsv4) instead of the template; needs --use-chat-template", NULL, NULL},
      {"profile", OPT_FLAG, &o.profile, NULL, "POST /start_profile before the run and /stop_profile after it (the reference's bodies)", NULL, NULL},
      {"num-warmups", OPT_INT, &o.num_warmups, "N", "warmup copies of the first request (default 0)", NULL, NULL},
      {"percentile-metrics", OPT_STRING, &o.percentile_metrics, "LIST", "of ttft,tpot,itl,e2el (default all four)", NULL, NULL},
      {"metric-percentiles", OPT_STRING, &o.metric_percentiles, "LIST", "percentiles (default 90,99,99.9)", NULL, NULL},
      {"goodput", OPT_LIST, &o.goodput, "KEY:MS", "SLOs ttft:MS tpot:MS e2el:MS (one or more)", NULL, NULL},
      {"save-result", OPT_FLAG, &o.save_result, NULL, "write the result JSON", NULL, NULL},
      {"save-detailed", OPT_FLAG, &o.save_detailed, NULL, "with --save-result: also per-request ttfts, itls, generated_texts, errors", NULL, NULL},
      {"result-dir", OPT_STRING, &o.result_dir, "DIR", "directory for the result file", NULL, NULL},
      {"result-filename", OPT_STRING, &o.result_filename, "NAME", "result file name (default as benchmark_serving.py)", NULL, NULL},
      {"metadata", OPT_LIST, &o.metadata, "KEY=VALUE", "extra result keys (one or more)", NULL, NULL},
      {"seed", OPT_LONG, &o.seed, "N", "random seed (default 0)", NULL, NULL},
      {"best-of", OPT_INT, &o.best_of, "N", "accepted; only 1", NULL, NULL},
      {"disable-tqdm", OPT_FLAG, &o.disable_tqdm, NULL, "accepted (see --quiet)", NULL, NULL},
      {"num-workers", OPT_STRING, &o.num_workers_text, "N|auto", "servetop: event loops (threads) sharing the load (default auto: one per 128 streams, at most the CPUs it may use)", NULL, NULL},
      {"reuse-connections", OPT_FLAG, &o.reuse_connections, NULL, "servetop: keep-alive (default: a new connection per request, as the reference)", NULL, NULL},
      {"vocab-size", OPT_INT, &o.vocab_size, "N", "servetop: the tokenizer's vocab_size (default: the server's when it says, else 32000)", NULL, &o.vocab_size_seen},
      {"no-server-tokenizer", OPT_FLAG, &o.no_server_tokenizer, NULL, "servetop: do not use the server's tokenizer endpoints (token ids / calibrated chat text)", NULL, NULL},
      {"request-timeout", OPT_DOUBLE, &o.request_timeout_s, "S", "servetop: per-request timeout in seconds (default 21600)", NULL, NULL},
      {"drain-timeout", OPT_DOUBLE, &o.drain_timeout_s, "S", "servetop: after Ctrl-C, wait S seconds for in-flight requests (default 5)", NULL, NULL},
      {"scrape-interval", OPT_DOUBLE, &o.scrape_interval_s, "S", "servetop: /metrics scrape period (default 1)", NULL, NULL},
      {"no-server-signals", OPT_FLAG, &o.no_server_signals, NULL, "servetop: do not read /metrics or /get_server_info", NULL, NULL},
      {"proxy", OPT_STRING, &o.proxy, "URL", "servetop: send every request through this HTTP(S) or SOCKS proxy (default: straight to the server; http_proxy, https_proxy, all_proxy, no_proxy are ignored)", NULL, NULL},
      {"quiet", OPT_FLAG, &o.quiet, NULL, "servetop: no progress line", NULL, NULL},
      {"json", OPT_FLAG, &o.json, NULL, "servetop: print the result JSON on stdout (the summary goes to stderr)", NULL, NULL},
  };
  struct opt_parser parser = {
      .usage = "servetop bench [benchmark_serving.py options]",
      .description = "Load a running OpenAI-compatible server (SGLang, vLLM, servetop sim) the way "
                     "InferenceX's benchmark_serving.py does, print its summary and write its "
                     "result JSON (plus a \"servetop\" section). See docs/bench.md.",
      .specs = specs,
      .n_specs = ST_ARRAY_LEN(specs),
  };
  int n_args;
  char **owned;
  size_t n_owned;
  char **args = expand_nargs(argc - 1, argv + 1, &n_args, &owned, &n_owned);
  struct st_err err = {{0}};
  size_t n_pos = 0;
  int status = EXIT_USAGE;
  char *base = NULL;
  struct measure_result result;
  memset(&result, 0, sizeof(result));

  int prc = cli_parse_options(&parser, "bench", n_args, args, NULL, 0, &n_pos);
  if (prc != CLI_GO_ON) {
    status = prc;
    goto out;
  }
  static const char *const backends[] = {"vllm", "sglang", "openai", "openai-chat"};
  bool known_backend = false;
  for (size_t i = 0; i < ST_ARRAY_LEN(backends); i++)
    known_backend = known_backend || strcmp(o.backend, backends[i]) == 0;
  if (!known_backend) {
    fprintf(stderr, "servetop bench: --backend %s: expected vllm, sglang, openai or openai-chat\n",
            o.backend);
    goto out;
  }
  if (!o.model) {
    fprintf(stderr, "servetop bench: --model is required\n");
    goto out;
  }
  if (strcmp(o.dataset_name, "random") != 0) {
    fprintf(stderr, "servetop bench: --dataset-name %s: only \"random\" is supported\n",
            o.dataset_name);
    goto out;
  }
  if (o.dsv4 && !o.use_chat_template) {
    fprintf(stderr, "servetop bench: --dsv4 requires --use-chat-template to be set.\n");
    goto out;
  }
  if (o.best_of != 1 || o.num_prompts < 1 || o.num_warmups < 0 || o.vocab_size < 2 ||
      (o.max_concurrency_seen && o.max_concurrency < 1) || o.seed < 0 ||
      (unsigned long)o.seed > 0xFFFFFFFFul) {
    fprintf(stderr, "servetop bench: need --best-of 1, --num-prompts >= 1, --num-warmups >= 0, "
                    "--max-concurrency >= 1, --vocab-size >= 2, --seed in 0..2**32-1\n");
    goto out;
  }
  char bad[256];
  o.num_workers = lg_parse_num_workers(o.num_workers_text);
  if (bench_input_error(&o, bad, sizeof bad) || cli_proxy_error(o.proxy, bad, sizeof bad)) {
    fprintf(stderr, "servetop bench: %s\n", bad);
    goto out;
  }
  struct measure_spec spec;
  memset(&spec, 0, sizeof(spec));
  struct results_settings *rs = &spec.report;
  if (results_parse_percentile_metrics(o.percentile_metrics, rs, &err) != 0 ||
      results_parse_metric_percentiles(o.metric_percentiles, rs, &err) != 0) {
    fprintf(stderr, "servetop bench: %s\n", err.msg);
    goto out;
  }
  for (size_t i = 0; i < o.goodput.n; i++) {
    if (results_parse_goodput(o.goodput.items[i], rs, &err) != 0) {
      fprintf(stderr, "servetop bench: %s\n", err.msg);
      goto out;
    }
  }
  for (size_t i = 0; i < o.metadata.n; i++) {
    if (!strchr(o.metadata.items[i], '=')) {
      fprintf(stderr, "servetop bench: --metadata %s: Invalid metadata format. Please use KEY=VALUE "
                      "format.\n", o.metadata.items[i]);
      goto out;
    }
  }
  rs->backend = o.backend;
  rs->model_id = o.model;
  rs->tokenizer_id = o.tokenizer ? o.tokenizer : o.model;
  rs->metadata = o.metadata.items;
  rs->n_metadata = o.metadata.n;
  rs->save_detailed = o.save_detailed;

  /* Only the openai-chat backend talks to the chat endpoint (as the
   * reference); --use-chat-template changes the prompt text only. */
  bool chat = strcmp(o.backend, "openai-chat") == 0;
  const char *endpoint = o.endpoint;
  if (chat && strcmp(endpoint, "/v1/completions") == 0)
    endpoint = "/v1/chat/completions";
  base = o.base_url ? xstrdup(o.base_url) : xasprintf("http://%s:%d", o.host, o.port);
  spec.base_url = base;
  spec.endpoint = endpoint;
  spec.api_key = getenv("OPENAI_API_KEY");
  spec.api = chat ? LG_API_CHAT : LG_API_COMPLETIONS;
  spec.served_model_name = o.served_model_name ? o.served_model_name : o.model;
  spec.input_len = o.random_input_len;
  spec.output_len = o.random_output_len;
  spec.prefix_len = o.random_prefix_len;
  spec.range_ratio = o.random_range_ratio;
  spec.num_prompts = o.num_prompts;
  spec.num_warmups = o.num_warmups;
  spec.ignore_eos = o.ignore_eos;
  spec.use_chat_template = o.use_chat_template;
  spec.dsv4 = o.dsv4;
  spec.seed = (uint64_t)o.seed;
  spec.max_concurrency = o.max_concurrency_seen ? o.max_concurrency : 0;
  spec.request_rate = o.request_rate;
  spec.burstiness = o.burstiness;
  spec.vocab_size = o.vocab_size_seen ? o.vocab_size : 0;
  spec.random_num_workers = o.random_num_workers;
  spec.server_tokenizer = !o.no_server_tokenizer;
  spec.profile = o.profile;
  spec.num_workers = o.num_workers;
  spec.reuse_connections = o.reuse_connections;
  spec.keep_text = o.save_detailed;
  spec.request_timeout_s = o.request_timeout_s;
  spec.drain_timeout_s = o.drain_timeout_s;
  spec.server_signals = !o.no_server_signals;
  spec.scrape_interval_s = o.scrape_interval_s;
  raise_fd_limit();

  /* SIGHUP too: a closed terminal must save the partial result like Ctrl-C. */
  struct sigaction sa = {0}, old_int, old_term, old_hup;
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  sigaction(SIGHUP, &sa, &old_hup);
  signal(SIGPIPE, SIG_IGN);

  FILE *text = o.json ? stderr : stdout; /* stdout carries only JSON with --json */
  struct bench_ui ui = {.o = &o, .text = text, .tty = isatty(STDERR_FILENO)};
  struct measure_hooks hooks = {.ctx = &ui, .tick = on_tick, .phase = on_phase,
                                .cancel = &interrupted};
  fprintf(text, "Starting initial single prompt test run...\n");
  fflush(text);
  int mrc = measure_point(&spec, &hooks, &result, &err);
  if (mrc != 0) {
    fprintf(stderr, "servetop bench: %s\n", err.msg[0] ? err.msg : "interrupted");
    status = interrupted || result.end == MEASURE_END_STOPPED ? 130 : 1;
    goto restore;
  }
  if (!o.quiet)
    print_progress_result(&ui, &result);
  if (result.warmups_failed > 0)
    fprintf(stderr, "warning: %zu of %d warmup requests failed\n", result.warmups_failed,
            o.num_warmups);
  if (o.profile) {
    fprintf(text, "servetop: /start_profile answered HTTP %d, /stop_profile HTTP %d\n",
            result.profile_start_status, result.profile_stop_status);
  }
  results_print_summary(text, &result.settings, &result.metrics);
  if (result.have_signals && result.signals.accept_length_valid)
    fprintf(text, "%-40s %-10.2f\n", "servetop: accept length (run):", result.signals.accept_length);
  results_print_accounting(text, &result.run, &result.settings, &result.metrics);
  if (result.run.interrupted)
    fprintf(text, "servetop: interrupted (the requests it cut are counted above, not as "
                  "failures)\n");
  fflush(text);
  if (o.json) {
    printf("%s\n", result.json);
    fflush(stdout);
  }
  status = EXIT_OK;
  /* As the reference: --save-detailed only adds lists to a saved result. */
  if (o.save_result && measure_save(&result, o.result_dir, o.result_filename, &err) != 0) {
    fprintf(stderr, "servetop bench: %s\n", err.msg);
    status = 1;
  }
  struct measure_verdict verdict;
  measure_verdict(&result, &verdict);
  if (status == EXIT_OK && verdict.too_many_failed) {
    /* The reference's SystemExit text. */
    fprintf(stderr, "FAIL: request failure rate %.1f%% exceeds %d%% threshold (%lld/%lld completed)\n",
            verdict.failure_rate * 100.0, MEASURE_MAX_FAILURE_PERCENT, (long long)verdict.completed,
            (long long)verdict.sent); /* = num_prompts unless a stop cut requests */
    status = 1;
  }
  if (result.run.interrupted)
    status = 130;

restore:
  sigaction(SIGINT, &old_int, NULL);
  sigaction(SIGTERM, &old_term, NULL);
  sigaction(SIGHUP, &old_hup, NULL);
out:
  measure_result_fini(&result);
  free(base);
  free(o.goodput.items);
  free(o.metadata.items);
  for (size_t i = 0; i < n_owned; i++)
    free(owned[i]);
  free(owned);
  free(args);
  return status;
}
