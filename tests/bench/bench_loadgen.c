/* Load-generator benchmark (not a test): drives a running `servetop sim` with
 * the loadgen library and reports
 *   - SSE events per second the loop handled (run the sim with tpot 0 for the
 *     "as fast as it can" figure),
 *   - client-added timing error against the sim's own trace (--sim-trace):
 *     measured TTFT minus the sim's (first chunk sent - request received), and
 *     each measured chunk gap minus the sim's gap, p50 / p99 in µs,
 *   - bytes the records hold per request and per chunk.
 * Request i asks for a prompt of (base + i) tokens, so the sim's trace line of
 * a request is found by its prompt_tokens. tests/bench/loadgen_bench.sh runs
 * the matrix with the sim and this program pinned to different cores. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loadgen/loadgen.h"

enum { PROMPT_BASE_TOKENS = 16 };

struct server_req {
  bool seen;
  double ttft_us;
  double *gaps_us;
  size_t n_gaps;
};

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void report(const char *what, double *v, size_t n) {
  if (n == 0) {
    printf("%-28s n=0\n", what);
    return;
  }
  qsort(v, n, sizeof(*v), cmp_double);
  printf("%-28s n=%zu p50=%.1f us p99=%.1f us max=%.1f us\n", what, n,
         stats_percentile_sorted(v, n, 50), stats_percentile_sorted(v, n, 99), v[n - 1]);
}

/* Reads the sim's trace: one JSON object per request. */
static struct server_req *read_trace(const char *path, size_t n_requests, size_t *n_seen) {
  struct st_err err;
  size_t len;
  char *text = file_read_all(path, &len, &err);
  if (!text) {
    fprintf(stderr, "bench_loadgen: %s\n", err.msg);
    return NULL;
  }
  struct server_req *reqs = xcalloc(n_requests, sizeof(*reqs));
  *n_seen = 0;
  char *save = NULL;
  for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    cJSON *j = cJSON_Parse(line);
    cJSON *pt = cJSON_GetObjectItem(j, "prompt_tokens");
    cJSON *recv = cJSON_GetObjectItem(j, "received_us");
    cJSON *chunks = cJSON_GetObjectItem(j, "chunks");
    if (cJSON_IsNumber(pt) && cJSON_IsNumber(recv) && cJSON_IsArray(chunks)) {
      long idx = (long)pt->valuedouble - PROMPT_BASE_TOKENS;
      int n = cJSON_GetArraySize(chunks);
      if (idx >= 0 && (size_t)idx < n_requests && n > 0 && !reqs[idx].seen) {
        struct server_req *r = &reqs[idx];
        r->seen = true;
        double prev = cJSON_GetArrayItem(cJSON_GetArrayItem(chunks, 0), 0)->valuedouble;
        r->ttft_us = prev - recv->valuedouble;
        r->gaps_us = xcalloc((size_t)n, sizeof(double));
        for (int c = 1; c < n; c++) {
          double t = cJSON_GetArrayItem(cJSON_GetArrayItem(chunks, c), 0)->valuedouble;
          r->gaps_us[r->n_gaps++] = t - prev;
          prev = t;
        }
        (*n_seen)++;
      }
    }
    cJSON_Delete(j);
  }
  free(text);
  return reqs;
}

int main(int argc, char **argv) {
  const char *url = NULL, *trace = NULL;
  int streams = 1, requests = 100, output_len = 100, workers = 1;
  bool reuse = false;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--url") == 0 && i + 1 < argc)
      url = argv[++i];
    else if (strcmp(argv[i], "--trace") == 0 && i + 1 < argc)
      trace = argv[++i];
    else if (strcmp(argv[i], "--streams") == 0 && i + 1 < argc)
      streams = atoi(argv[++i]);
    else if (strcmp(argv[i], "--requests") == 0 && i + 1 < argc)
      requests = atoi(argv[++i]);
    else if (strcmp(argv[i], "--output-len") == 0 && i + 1 < argc)
      output_len = atoi(argv[++i]);
    else if (strcmp(argv[i], "--workers") == 0 && i + 1 < argc)
      workers = atoi(argv[++i]);
    else if (strcmp(argv[i], "--reuse") == 0)
      reuse = true;
    else {
      fprintf(stderr, "usage: bench_loadgen --url URL [--streams N] [--requests M] "
                      "[--output-len T] [--workers W] [--reuse] [--trace SIM_TRACE]\n");
      return 2;
    }
  }
  if (!url || requests < 1 || streams < 1 || output_len < 1)
    return 2;

  struct lg_prompt *prompts = xcalloc((size_t)requests, sizeof(*prompts));
  char **bodies = xcalloc((size_t)requests, sizeof(*bodies));
  for (int i = 0; i < requests; i++) {
    struct sbuf sb = {0};
    int n_ids = PROMPT_BASE_TOKENS + i;
    sbuf_puts(&sb, "{\"model\": \"bench\", \"prompt\": [");
    for (int j = 0; j < n_ids; j++)
      sbuf_printf(&sb, "%s%d", j ? ", " : "", 100 + (i + j) % 30000);
    sbuf_printf(&sb, "], \"temperature\": 0.0, \"max_tokens\": %d, \"stream\": true, "
                     "\"stream_options\": {\"include_usage\": true}, \"ignore_eos\": true}",
                output_len);
    prompts[i].body_len = sb.len;
    prompts[i].prompt_len = (uint32_t)n_ids;
    prompts[i].output_len = (uint32_t)output_len;
    bodies[i] = sbuf_take(&sb);
    prompts[i].body = bodies[i];
  }
  struct lg_config cfg;
  lg_config_init(&cfg);
  cfg.url = url;
  cfg.prompts = prompts;
  cfg.n_prompts = (size_t)requests;
  cfg.max_concurrency = streams;
  cfg.num_workers = workers;
  cfg.reuse_connections = reuse;
  struct st_err err;
  struct lg_run *run = lg_run_start(&cfg, &err);
  if (!run) {
    fprintf(stderr, "bench_loadgen: %s\n", err.msg);
    return 1;
  }
  lg_run_wait(run, -1);
  struct lg_result res;
  lg_run_finish(run, &res);

  double dur_s = (double)(res.end_mono_ns - res.start_mono_ns) / 1e9;
  size_t ok = 0, chunks = 0;
  for (size_t i = 0; i < res.n_records; i++) {
    if (res.records[i].failure == LG_OK) {
      ok++;
      chunks += res.records[i].n_chunk_gaps + 1;
    }
  }
  size_t rec_bytes = lg_result_record_bytes(&res);
  printf("streams=%d requests=%d ok=%zu output_len=%d workers=%d reuse=%d\n", streams, requests,
         ok, output_len, workers, reuse);
  printf("duration %.3f s, SSE events %llu -> %.0f events/s, body %.1f MB/s\n", dur_s,
         (unsigned long long)res.events, (double)res.events / dur_s,
         (double)res.body_bytes / dur_s / 1e6);
  printf("record bytes %zu = %.1f per request + %.2f per chunk (%zu B struct, %zu chunks)\n",
         rec_bytes, (double)sizeof(struct lg_record),
         chunks ? (double)(rec_bytes - res.n_records * sizeof(struct lg_record)) / (double)chunks : 0.0,
         sizeof(struct lg_record), chunks);

  printf("client callback delay (epoll return -> write callback): p50=%.0f us p99=%.0f us "
         "max=%llu us\n",
         live_hist_percentile_us(&res.callback_delay, 50),
         live_hist_percentile_us(&res.callback_delay, 99),
         (unsigned long long)res.callback_delay.max_us);
  double *connect_us = xcalloc(res.n_records + 1, sizeof(double));
  size_t n_connect = 0;
  for (size_t i = 0; i < res.n_records; i++)
    if (res.records[i].failure == LG_OK && res.records[i].connect_us > 0)
      connect_us[n_connect++] = res.records[i].connect_us;
  report("connect (in TTFT)", connect_us, n_connect);
  free(connect_us);
  if (trace) {
    size_t n_seen = 0;
    struct server_req *srv = read_trace(trace, (size_t)requests, &n_seen);
    if (srv) {
      double *ttft_err = xcalloc(res.n_records + 1, sizeof(double));
      double *itl_err = xcalloc(chunks + 1, sizeof(double));
      size_t n_ttft = 0, n_itl = 0;
      for (size_t i = 0; i < res.n_records; i++) {
        const struct lg_record *r = &res.records[i];
        if (r->failure != LG_OK || !srv[i].seen)
          continue;
        ttft_err[n_ttft++] = (double)r->ttft_ns / 1e3 - srv[i].ttft_us;
        size_t n = r->n_chunk_gaps < srv[i].n_gaps ? r->n_chunk_gaps : srv[i].n_gaps;
        for (size_t g = 0; g < n; g++)
          itl_err[n_itl++] = fabs((double)r->chunk_gaps_us[g] - srv[i].gaps_us[g]);
      }
      printf("trace: %zu of %d requests matched\n", n_seen, requests);
      report("TTFT error (client - sim)", ttft_err, n_ttft);
      report("|ITL error| (client - sim)", itl_err, n_itl);
      for (int i = 0; i < requests; i++)
        free(srv[i].gaps_us);
      free(srv);
      free(ttft_err);
      free(itl_err);
    }
  }
  lg_result_free(&res);
  for (int i = 0; i < requests; i++)
    free(bodies[i]);
  free(bodies);
  free(prompts);
  return ok == (size_t)requests ? 0 : 1;
}
