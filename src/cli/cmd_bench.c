/* servetop bench: a headless load run against a running server, a drop-in for
 * InferenceX's `python3 benchmark_serving.py` (same flags, same result file). */
#include "cli/cli.h"

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

#include "results/results.h"

struct bench_opts {
  const char *backend, *base_url, *host, *endpoint, *model, *served_model_name, *tokenizer;
  const char *tokenizer_mode, *dataset_name, *percentile_metrics, *metric_percentiles;
  const char *result_dir, *result_filename;
  int port, random_input_len, random_output_len, random_prefix_len, num_prompts;
  int max_concurrency, num_warmups, num_workers, vocab_size, random_num_workers, best_of;
  double random_range_ratio, request_rate, burstiness, request_timeout_s, drain_timeout_s;
  double scrape_interval_s;
  long seed;
  bool ignore_eos, use_chat_template, dsv4, trust_remote_code, save_result, save_detailed;
  bool disable_tqdm, reuse_connections, quiet, no_server_signals, max_concurrency_seen, json;
  struct opt_list goodput, metadata;
};

/* ---------------------------------------------------------------- SIGINT */
static struct lg_run *_Atomic active_run;
static volatile sig_atomic_t interrupted;

static void on_sigint(int sig) {
  (void)sig;
  interrupted = 1;
  struct lg_run *run = atomic_load(&active_run);
  if (run)
    lg_run_stop(run);
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

/* ---------------------------------------------------------------- progress line */
static void print_progress(FILE *out, bool tty, struct lg_run *run, struct sig_scraper *scraper) {
  struct lg_live live;
  lg_run_live(run, &live);
  int64_t finished = live.completed + live.failed;
  char eta[32] = "-";
  if (finished > 0 && live.elapsed_s > 0 && live.total > finished) {
    double rate = (double)finished / live.elapsed_s;
    snprintf(eta, sizeof(eta), "%.0fs", (double)(live.total - finished) / rate);
  }
  char accept[48] = "";
  if (scraper) {
    struct sig_live sig;
    sig_scraper_live(scraper, &sig);
    if (sig.valid && isfinite(sig.accept_length) && sig.accept_length > 0)
      snprintf(accept, sizeof(accept), "  accept %.2f", sig.accept_length);
  }
  fprintf(out, "%s%lld/%lld done  %lld failed  %lld in flight  ETA %s  %.0f out tok/s  "
               "TTFT p50 %.1f ms  TPOT p50 %.2f ms%s%s",
          tty ? "\r" : "", (long long)live.completed, (long long)live.total,
          (long long)live.failed, (long long)live.in_flight, eta, live.window_output_tok_per_s,
          live.ttft.p50_ms, live.tpot.p50_ms, accept, tty ? "\033[K" : "\n");
  fflush(out);
}

/* Runs one load phase to its end (or SIGINT), printing progress. */
static void drive(const struct lg_config *cfg, struct sig_scraper *scraper, bool quiet,
                  struct lg_result *out, struct st_err *err, bool *ok) {
  struct lg_run *run = lg_run_start(cfg, err);
  *ok = run != NULL;
  if (!run)
    return;
  atomic_store(&active_run, run);
  if (interrupted)
    lg_run_stop(run);
  bool tty = isatty(STDERR_FILENO);
  int64_t last_print = clock_mono_ns();
  while (!lg_run_wait(run, 100)) {
    if (!quiet && clock_mono_ns() - last_print >= 1000000000) {
      print_progress(stderr, tty, run, scraper);
      last_print = clock_mono_ns();
    }
  }
  if (!quiet) {
    print_progress(stderr, tty, run, scraper);
    if (tty)
      fputc('\n', stderr);
  }
  atomic_store(&active_run, NULL);
  lg_run_finish(run, out);
}

/* The reference's warmups: copies of the first request, all at once, bounded
 * by max-concurrency; their results are dropped. */
static void run_warmups(const struct lg_config *main_cfg, const struct lg_workload *warm,
                        struct st_err *err, bool *ok) {
  struct lg_config wc = *main_cfg;
  wc.prompts = warm->prompts;
  wc.n_prompts = warm->n_prompts;
  wc.request_rate = (double)INFINITY;
  wc.keep_text = false;
  struct lg_result warm_result;
  drive(&wc, NULL, true, &warm_result, err, ok);
  if (!*ok)
    return;
  size_t failed = 0;
  for (size_t i = 0; i < warm_result.n_records; i++)
    failed += warm_result.records[i].failure != LG_OK;
  if (failed > 0)
    fprintf(stderr, "warning: %zu of %zu warmup requests failed\n", failed, warm_result.n_records);
  lg_result_free(&warm_result);
}

/* Result settings: what the reference records plus servetop's client settings. */
static void fill_settings(struct results_settings *rs, const struct bench_opts *o,
                          const char *served, const char *url, const char *endpoint, bool chat,
                          const struct lg_calibration *calibration) {
  rs->backend = o->backend;
  rs->model_id = o->model;
  rs->tokenizer_id = o->tokenizer ? o->tokenizer : o->model;
  rs->served_model_name = served;
  rs->url = url;
  rs->endpoint = endpoint;
  rs->num_prompts = o->num_prompts;
  rs->metadata = o->metadata.items;
  rs->n_metadata = o->metadata.n;
  rs->request_rate = o->request_rate;
  rs->burstiness = o->burstiness;
  rs->max_concurrency = o->max_concurrency_seen ? o->max_concurrency : 0;
  rs->save_detailed = o->save_detailed;
  rs->dataset_name = o->dataset_name;
  rs->random_input_len = o->random_input_len;
  rs->random_output_len = o->random_output_len;
  rs->random_prefix_len = o->random_prefix_len;
  rs->random_range_ratio = o->random_range_ratio;
  rs->ignore_eos = o->ignore_eos;
  rs->chat = chat;
  rs->seed = o->seed;
  rs->num_warmups = o->num_warmups;
  rs->num_workers = o->num_workers;
  rs->reuse_connections = o->reuse_connections;
  rs->vocab_size = o->vocab_size;
  rs->calibration = calibration;
}

/* Writes the result JSON under the reference's name rules; returns 0 or -1. */
static int save_result(const struct bench_opts *o, const struct lg_result *result,
                       const struct results_settings *rs, const struct results_metrics *metrics,
                       const struct sig_summary *signals, struct st_err *err) {
  char *json = results_json_alloc(result, rs, metrics, signals);
  char date[32];
  time_t end_s = (time_t)result->end_unix_s;
  struct tm tm;
  localtime_r(&end_s, &tm);
  strftime(date, sizeof(date), "%Y%m%d-%H%M%S", &tm);
  char *name = o->result_filename ? xstrdup(o->result_filename)
                                  : results_default_filename_alloc(rs, date);
  int rc = results_save(o->result_dir, name, json, err);
  free(name);
  free(json);
  return rc;
}

/* ---------------------------------------------------------------- main */
int cmd_bench_main(int argc, char **argv) {
  struct bench_opts o = {
      .backend = "vllm", .host = "127.0.0.1", .port = 8000, .endpoint = "/v1/completions",
      .dataset_name = "random", .percentile_metrics = "ttft,tpot,itl,e2el",
      .metric_percentiles = "90,99,99.9", .random_input_len = 1024, .random_output_len = 128,
      .random_range_ratio = 1.0, .num_prompts = 1000, .request_rate = (double)INFINITY,
      .burstiness = 1.0, .num_workers = 1, .vocab_size = 32000, .best_of = 1,
      .request_timeout_s = 6 * 60 * 60, .drain_timeout_s = 5.0, .scrape_interval_s = 1.0};
  const struct opt_spec specs[] = {
      {"backend", OPT_STRING, &o.backend, "NAME", "vllm | sglang | openai (/v1/completions) | openai-chat (/v1/chat/completions)", NULL, NULL},
      {"base-url", OPT_STRING, &o.base_url, "URL", "server base URL (overrides --host/--port)", NULL, NULL},
      {"host", OPT_STRING, &o.host, "HOST", "server host (default 127.0.0.1)", NULL, NULL},
      {"port", OPT_INT, &o.port, "N", "server port (default 8000)", NULL, NULL},
      {"endpoint", OPT_STRING, &o.endpoint, "PATH", "request path (default /v1/completions)", NULL, NULL},
      {"model", OPT_STRING, &o.model, "NAME", "model name (required); result model_id", NULL, NULL},
      {"served-model-name", OPT_STRING, &o.served_model_name, "NAME", "\"model\" sent in requests (default --model)", NULL, NULL},
      {"tokenizer", OPT_STRING, &o.tokenizer, "NAME", "accepted and recorded as tokenizer_id (no tokenizer is loaded)", NULL, NULL},
      {"tokenizer-mode", OPT_STRING, &o.tokenizer_mode, "MODE", "accepted, ignored", NULL, NULL},
      {"trust-remote-code", OPT_FLAG, &o.trust_remote_code, NULL, "accepted, ignored", NULL, NULL},
      {"dataset-name", OPT_STRING, &o.dataset_name, "NAME", "only \"random\"", NULL, NULL},
      {"random-input-len", OPT_INT, &o.random_input_len, "N", "input tokens per request (default 1024)", NULL, NULL},
      {"random-output-len", OPT_INT, &o.random_output_len, "N", "output tokens per request (default 128)", NULL, NULL},
      {"random-range-ratio", OPT_DOUBLE, &o.random_range_ratio, "R", "lengths uniform on [floor(L*R), L] (default 1.0)", NULL, NULL},
      {"random-prefix-len", OPT_INT, &o.random_prefix_len, "N", "shared prefix tokens (default 0)", NULL, NULL},
      {"random-num-workers", OPT_INT, &o.random_num_workers, "N", "accepted, ignored", NULL, NULL},
      {"num-prompts", OPT_INT, &o.num_prompts, "N", "requests to send (default 1000)", NULL, NULL},
      {"max-concurrency", OPT_INT, &o.max_concurrency, "N", "at most N requests in flight (default unlimited)", NULL, &o.max_concurrency_seen},
      {"request-rate", OPT_DOUBLE, &o.request_rate, "RPS", "arrival rate, or inf: all at once (default inf)", NULL, NULL},
      {"burstiness", OPT_DOUBLE, &o.burstiness, "B", "gamma shape of arrival gaps; 1 = Poisson (default 1.0)", NULL, NULL},
      {"ignore-eos", OPT_FLAG, &o.ignore_eos, NULL, "send ignore_eos: output length = max_tokens", NULL, NULL},
      {"use-chat-template", OPT_FLAG, &o.use_chat_template, NULL, "chat endpoint with messages; the server applies the template", NULL, NULL},
      {"dsv4", OPT_FLAG, &o.dsv4, NULL, "implies --use-chat-template", NULL, NULL},
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
      {"num-workers", OPT_INT, &o.num_workers, "N", "servetop: event loops (threads) sharing the load (default 1)", NULL, NULL},
      {"reuse-connections", OPT_FLAG, &o.reuse_connections, NULL, "servetop: keep-alive (default: a new connection per request, as the reference)", NULL, NULL},
      {"vocab-size", OPT_INT, &o.vocab_size, "N", "servetop: token ids are taken modulo N (default 32000)", NULL, NULL},
      {"request-timeout", OPT_DOUBLE, &o.request_timeout_s, "S", "servetop: per-request timeout in seconds (default 21600)", NULL, NULL},
      {"drain-timeout", OPT_DOUBLE, &o.drain_timeout_s, "S", "servetop: after Ctrl-C, wait S seconds for in-flight requests (default 5)", NULL, NULL},
      {"scrape-interval", OPT_DOUBLE, &o.scrape_interval_s, "S", "servetop: /metrics scrape period (default 1)", NULL, NULL},
      {"no-server-signals", OPT_FLAG, &o.no_server_signals, NULL, "servetop: do not read /metrics or /get_server_info", NULL, NULL},
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
  char *url = NULL, *base = NULL;
  struct lg_workload workload = {0}, warm = {0};
  struct lg_calibration calibration;
  struct lg_result result = {0};
  struct results_metrics metrics;
  memset(&metrics, 0, sizeof(metrics));
  bool have_result = false;

  int prc = opt_parse(&parser, n_args, args, NULL, 0, &n_pos, &err);
  if (prc == OPT_HELP) {
    opt_print_help(&parser, stdout);
    status = EXIT_OK;
    goto out;
  }
  if (prc != OPT_OK) {
    fprintf(stderr, "servetop bench: %s\n", err.msg);
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
  if (o.best_of != 1 || o.num_prompts < 1 || o.num_warmups < 0 || o.vocab_size < 2 ||
      (o.max_concurrency_seen && o.max_concurrency < 1)) {
    fprintf(stderr, "servetop bench: need --best-of 1, --num-prompts >= 1, --num-warmups >= 0, "
                    "--max-concurrency >= 1, --vocab-size >= 2\n");
    goto out;
  }
  struct results_settings rs;
  memset(&rs, 0, sizeof(rs));
  if (results_parse_percentile_metrics(o.percentile_metrics, &rs, &err) != 0 ||
      results_parse_metric_percentiles(o.metric_percentiles, &rs, &err) != 0) {
    fprintf(stderr, "servetop bench: %s\n", err.msg);
    goto out;
  }
  for (size_t i = 0; i < o.goodput.n; i++) {
    if (results_parse_goodput(o.goodput.items[i], &rs, &err) != 0) {
      fprintf(stderr, "servetop bench: %s\n", err.msg);
      goto out;
    }
  }
  for (size_t i = 0; i < o.metadata.n; i++) {
    if (!strchr(o.metadata.items[i], '=')) {
      fprintf(stderr, "servetop bench: --metadata %s: expected KEY=VALUE\n", o.metadata.items[i]);
      goto out;
    }
  }

  bool chat = strcmp(o.backend, "openai-chat") == 0 || o.use_chat_template || o.dsv4;
  const char *endpoint = o.endpoint;
  if (chat && strcmp(endpoint, "/v1/completions") == 0)
    endpoint = "/v1/chat/completions"; /* the server applies the chat template */
  base = o.base_url ? xstrdup(o.base_url) : xasprintf("http://%s:%d", o.host, o.port);
  url = path_join_alloc(base, endpoint);
  const char *served = o.served_model_name ? o.served_model_name : o.model;
  const char *api_key = getenv("OPENAI_API_KEY");
  raise_fd_limit();
  curl_global_init(CURL_GLOBAL_DEFAULT); /* once, before any thread exists */

  /* SIGHUP too: a closed terminal must save the partial result like Ctrl-C. */
  struct sigaction sa = {0}, old_int, old_term, old_hup;
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  sigaction(SIGHUP, &sa, &old_hup);
  signal(SIGPIPE, SIG_IGN);

  struct lg_dataset_config dc = {
      .api = chat ? LG_API_CHAT : LG_API_COMPLETIONS, .model = served,
      .input_len = o.random_input_len, .output_len = o.random_output_len,
      .range_ratio = o.random_range_ratio, .prefix_len = o.random_prefix_len,
      .num_prompts = o.num_prompts, .vocab_size = o.vocab_size, .ignore_eos = o.ignore_eos,
      .seed = (uint64_t)o.seed};
  bool calibrated = false;
  if (chat) {
    if (lg_chat_calibrate(url, served, api_key, o.random_prefix_len + o.random_input_len,
                          &calibration, &err) != 0) {
      fprintf(stderr, "servetop bench: %s\n", err.msg);
      status = 1;
      goto restore;
    }
    calibrated = true;
    fprintf(stderr, "chat calibration: %.2f tokens + %.4f tokens/word (%d probes; target %d -> "
                    "server counted %d)\n",
            calibration.sizer.overhead_tokens, calibration.sizer.tokens_per_word,
            calibration.n_probes, calibration.check_target_tokens,
            calibration.check_server_tokens);
    dc.chat_sizer = &calibration.sizer;
  }
  if (lg_workload_random(&dc, &workload, &err) != 0) {
    fprintf(stderr, "servetop bench: %s\n", err.msg);
    goto restore;
  }

  struct lg_config lc;
  lg_config_init(&lc);
  lc.url = url;
  lc.api_key = api_key;
  lc.api = dc.api;
  lc.max_concurrency = o.max_concurrency_seen ? o.max_concurrency : 0;
  lc.seed = (uint64_t)o.seed;
  lc.num_workers = o.num_workers;
  lc.reuse_connections = o.reuse_connections;
  lc.keep_text = o.save_detailed;
  lc.request_timeout_s = o.request_timeout_s;
  lc.drain_timeout_s = o.drain_timeout_s;

  struct sig_scraper *scraper = NULL;
  if (!o.no_server_signals) {
    struct sig_config sc = {.base_url = base, .interval_s = o.scrape_interval_s, .timeout_s = 2.0};
    scraper = sig_scraper_start(&sc);
  }

  FILE *text = o.json ? stderr : stdout; /* stdout carries only JSON with --json */
  bool ok = true;
  fprintf(text, "Starting initial single prompt test run...\n");
  if (o.num_warmups > 0) {
    fprintf(text, "Warming up with %d requests...\n", o.num_warmups);
    lg_workload_repeat_first(&workload, (size_t)o.num_warmups, &warm);
    run_warmups(&lc, &warm, &err, &ok);
  }
  fprintf(text, "Initial test run completed. Starting main benchmark run...\n");
  fprintf(text, "Traffic request rate: %g\n", o.request_rate);
  fprintf(text, "Burstiness factor: %g (%s)\n", o.burstiness,
         o.burstiness == 1.0 ? "Poisson process" : "Gamma distribution");
  if (o.max_concurrency_seen)
    fprintf(text, "Maximum request concurrency: %d\n", o.max_concurrency);
  else
    fprintf(text, "Maximum request concurrency: None\n");
  fflush(text);
  if (ok && !interrupted) {
    lc.prompts = workload.prompts;
    lc.n_prompts = workload.n_prompts;
    lc.request_rate = o.request_rate;
    lc.burstiness = o.burstiness;
    drive(&lc, scraper, o.quiet, &result, &err, &ok);
    have_result = ok;
  }
  struct sig_summary signals;
  memset(&signals, 0, sizeof(signals));
  if (scraper)
    sig_scraper_finish(scraper, &signals);
  if (!ok) {
    fprintf(stderr, "servetop bench: %s\n", err.msg[0] ? err.msg : "interrupted during warmup");
    sig_summary_fini(&signals);
    status = interrupted ? 130 : 1;
    goto restore;
  }
  if (!have_result) {
    sig_summary_fini(&signals);
    status = 130;
    goto restore;
  }

  fill_settings(&rs, &o, served, url, endpoint, chat, calibrated ? &calibration : NULL);
  results_compute(&result, &rs, &metrics);
  results_print_summary(text, &rs, &metrics);
  if (signals.accept_length_valid)
    fprintf(text, "%-40s %-10.2f\n", "servetop: accept length (run):", signals.accept_length);
  if (result.interrupted)
    fprintf(text, "servetop: interrupted; %lld requests never finished\n",
           (long long)(metrics.failures_by_kind[LG_FAIL_INTERRUPTED] +
                       metrics.failures_by_kind[LG_FAIL_NOT_SENT]));
  fflush(text);
  if (o.json) {
    char *json = results_json_alloc(&result, &rs, &metrics, scraper ? &signals : NULL);
    printf("%s\n", json);
    fflush(stdout);
    free(json);
  }
  status = EXIT_OK;
  /* As the reference: --save-detailed only adds lists to a saved result. */
  if (o.save_result &&
      save_result(&o, &result, &rs, &metrics, scraper ? &signals : NULL, &err) != 0) {
    fprintf(stderr, "servetop bench: %s\n", err.msg);
    status = 1;
  }
  sig_summary_fini(&signals);
  if (status == EXIT_OK && metrics.failure_rate > 0.05) {
    fprintf(stderr, "FAIL: request failure rate %.4f exceeds 0.05 (%lld of %d failed)\n",
            metrics.failure_rate, (long long)(o.num_prompts - metrics.completed), o.num_prompts);
    status = 1;
  }
  if (result.interrupted)
    status = 130;

restore:
  sigaction(SIGINT, &old_int, NULL);
  sigaction(SIGTERM, &old_term, NULL);
  sigaction(SIGHUP, &old_hup, NULL);
out:
  results_metrics_fini(&metrics);
  lg_result_free(&result);
  lg_workload_free(&warm);
  lg_workload_free(&workload);
  free(url);
  free(base);
  free(o.goodput.items);
  free(o.metadata.items);
  for (size_t i = 0; i < n_owned; i++)
    free(owned[i]);
  free(owned);
  free(args);
  return status;
}
