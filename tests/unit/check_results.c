/* results: figures from records against values computed by hand with
 * benchmark_serving.py's formulas (numpy mean / std ddof=0 / linear
 * percentiles), the summary text, the result JSON's keys and order, file
 * names and reading a result back. */
#include "results/results.h"

#include <check.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MS 1000000LL /* ns per ms */

static uint32_t gaps_r0[] = {100000, 100000, 100000};
static uint32_t gaps_r1[] = {100000};

/* Four requests over exactly one second (see the expectations below). */
static void make_run(struct lg_result *run, struct lg_record *recs) {
  memset(run, 0, sizeof(*run));
  memset(recs, 0, 4 * sizeof(*recs));
  recs[0] = (struct lg_record){.ttft_ns = 100 * MS, .e2el_ns = 400 * MS, .chunk_gaps_us = gaps_r0,
                               .n_chunk_gaps = 3, .prompt_len = 10, .server_prompt_tokens = -1,
                               .output_tokens = 4, .http_status = 200, .flags = LG_REC_USAGE_SEEN};
  recs[1] = (struct lg_record){.ttft_ns = 200 * MS, .e2el_ns = 300 * MS, .chunk_gaps_us = gaps_r1,
                               .n_chunk_gaps = 1, .prompt_len = 20, .server_prompt_tokens = 21,
                               .output_tokens = 2, .http_status = 200, .flags = LG_REC_USAGE_SEEN,
                               .dispatch_ns = 500 * MS, .scheduled_ns = 499 * MS};
  recs[2] = (struct lg_record){.ttft_ns = 50 * MS, .e2el_ns = 50 * MS, .prompt_len = 30,
                               .server_prompt_tokens = -1, .output_tokens = 1, .http_status = 200};
  recs[3] = (struct lg_record){.prompt_len = 40, .server_prompt_tokens = -1, .http_status = 500,
                               .failure = LG_FAIL_HTTP};
  run->records = recs;
  run->n_records = 4;
  run->start_mono_ns = 1000;
  run->end_mono_ns = 1000 + 1000 * MS;
  run->start_unix_s = 1764550923.25;
  run->end_unix_s = 1764550924.25;
  run->num_workers = 1;
}

static void default_settings(struct results_settings *s) {
  memset(s, 0, sizeof(*s));
  struct st_err err;
  ck_assert_int_eq(results_parse_percentile_metrics("ttft,tpot,itl,e2el", s, &err), 0);
  ck_assert_int_eq(results_parse_metric_percentiles("90,99,99.9", s, &err), 0);
  s->backend = "vllm";
  s->model_id = "deepseek-ai/DeepSeek-R1";
  s->num_prompts = 4;
  s->request_rate = (double)INFINITY;
  s->burstiness = 1.0;
  s->max_concurrency = 8;
}

/* Live and final figures from the same recorded streams: 40 requests, 1 to 7
 * tokens per chunk (speculative decoding, a stream interval), some with
 * llama.cpp's finish-only last chunk, streams of up to 25 s. The final path
 * (results_compute's time_series) and the live window's path (each request,
 * when it ends, hands its last LG_LIVE_WINDOW_S seconds with chunks to
 * fig_spread_by_second, as loadgen's live_settle does) credit every second
 * still in the window with the same tokens, exactly; the window over the
 * whole run holds every output token. */
START_TEST(live_window_tokens_equal_the_time_series) {
  enum { N = 40, MAX_GAPS = 400, SECONDS = 40 };
  static struct lg_record recs[N];
  static uint32_t gaps[N][MAX_GAPS];
  memset(recs, 0, sizeof recs);
  uint64_t x = 12345;
  int64_t end_ns = 0;
  for (int i = 0; i < N; i++) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    uint32_t n_gaps = (uint32_t)(x >> 33) % MAX_GAPS;
    uint32_t per_chunk = 1 + (uint32_t)(x >> 20) % 7;
    int64_t gaps_ns = 0;
    for (uint32_t g = 0; g < n_gaps; g++) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      gaps[i][g] = 1000 + (uint32_t)(x >> 40) % 120000; /* 1 to 121 ms */
      gaps_ns += (int64_t)gaps[i][g] * 1000;
    }
    bool finish_only = i % 3 == 0 && n_gaps > 0;
    uint32_t carrying = n_gaps + 1 - (finish_only ? 1 : 0);
    recs[i] = (struct lg_record){.dispatch_ns = (int64_t)i * 250 * MS, .ttft_ns = 80 * MS,
                                 .chunk_gaps_us = gaps[i], .n_chunk_gaps = n_gaps,
                                 .prompt_len = 10, .server_prompt_tokens = -1,
                                 .output_tokens = (int32_t)(carrying * per_chunk - i % 2),
                                 .http_status = 200,
                                 .flags = (uint8_t)(LG_REC_USAGE_SEEN |
                                                    (finish_only ? LG_REC_LAST_CHUNK_NO_TOKEN : 0))};
    recs[i].e2el_ns = recs[i].ttft_ns + gaps_ns;
    if (recs[i].dispatch_ns + recs[i].e2el_ns > end_ns)
      end_ns = recs[i].dispatch_ns + recs[i].e2el_ns;
  }
  struct lg_result run = {.records = recs, .n_records = N, .start_mono_ns = 0,
                          .end_mono_ns = end_ns, .num_workers = 1};
  struct results_settings s;
  default_settings(&s);
  struct results_metrics m;
  results_compute(&run, &s, &m);
  ck_assert_uint_le(m.n_seconds, SECONDS);

  int64_t total = 0;
  /* the live path, request by request: its chunks by second; the last
   * LG_LIVE_WINDOW_S seconds with chunks are what the loop still holds when
   * it ends; each of them gets from it what the time_series gives it */
  for (int i = 0; i < N; i++) {
    struct lg_result one = run;
    one.records = &recs[i];
    one.n_records = 1;
    one.start_mono_ns = 0;
    struct results_metrics mi;
    results_compute(&one, &s, &mi);
    const struct lg_record *r = &recs[i];
    uint32_t carrying = r->n_chunk_gaps + 1;
    if ((r->flags & LG_REC_LAST_CHUNK_NO_TOKEN) && carrying > 1)
      carrying--;
    uint32_t per_second[SECONDS] = {0};
    int64_t t_ns = r->dispatch_ns + r->ttft_ns, last_second = 0;
    for (uint32_t c = 0; c < carrying; c++) {
      if (c > 0)
        t_ns += (int64_t)r->chunk_gaps_us[c - 1] * 1000;
      per_second[t_ns / 1000000000]++;
      last_second = t_ns / 1000000000;
    }
    int64_t seconds[LG_LIVE_WINDOW_S];
    uint32_t chunks[LG_LIVE_WINDOW_S];
    int64_t tokens[LG_LIVE_WINDOW_S];
    size_t n = 0;
    for (int64_t sec = last_second - LG_LIVE_WINDOW_S + 1; sec <= last_second; sec++)
      if (sec >= 0 && per_second[sec] > 0) {
        seconds[n] = sec;
        chunks[n++] = per_second[sec];
      }
    fig_spread_by_second(r->output_tokens, carrying, chunks, n, tokens);
    int64_t sum = 0;
    uint32_t held_chunks = 0;
    for (size_t k = 0; k < n; k++) {
      sum += tokens[k];
      held_chunks += chunks[k];
      ck_assert_uint_lt((size_t)seconds[k], mi.n_seconds);
      ck_assert_msg(tokens[k] == mi.seconds[seconds[k]].output_tokens,
                    "request %d second %lld: live %lld, time_series %lld", i,
                    (long long)seconds[k], (long long)tokens[k],
                    (long long)mi.seconds[seconds[k]].output_tokens);
    }
    if (held_chunks == carrying) /* the whole request in the window: all its tokens */
      ck_assert_int_eq(sum, r->output_tokens);
    total += r->output_tokens;
    results_metrics_fini(&mi);
  }
  int64_t series_total = 0;
  for (size_t sec = 0; sec < m.n_seconds; sec++)
    series_total += m.seconds[sec].output_tokens;
  ck_assert_int_eq(series_total, total);
  ck_assert_int_eq(m.total_output, total);
  results_metrics_fini(&m);
}
END_TEST

START_TEST(figures_match_hand_computation) {
  struct lg_record recs[4];
  struct lg_result run;
  make_run(&run, recs);
  struct results_settings s;
  default_settings(&s);
  struct results_metrics m;
  results_compute(&run, &s, &m);
  ck_assert_int_eq(m.completed, 3);
  ck_assert_int_eq(m.failed, 1);
  ck_assert_int_eq(m.total_input, 10 + 20 + 30); /* the client's count, as the reference */
  ck_assert_int_eq(m.input_tokens_client, 60);
  ck_assert_int_eq(m.input_tokens_server, 21);   /* the server's, where it reported one */
  ck_assert_int_eq(m.n_input_mismatch, 1);
  ck_assert_int_eq(m.total_output, 7);
  ck_assert_double_eq_tol(m.duration_s, 1.0, 1e-12);
  ck_assert_double_eq_tol(m.request_throughput, 3.0, 1e-9);
  ck_assert_double_eq_tol(m.output_throughput, 7.0, 1e-9);
  ck_assert_double_eq_tol(m.total_token_throughput, 67.0, 1e-9);
  ck_assert_double_eq_tol(m.failure_rate, 0.25, 1e-12);
  /* TTFT {100, 200, 50} ms */
  const struct results_stat *t = &m.stat[RESULTS_TTFT];
  ck_assert_uint_eq(t->n, 3);
  ck_assert_double_eq_tol(t->mean_ms, 350.0 / 3.0, 1e-9);
  ck_assert_double_eq_tol(t->median_ms, 100.0, 1e-9);
  ck_assert_double_eq_tol(t->std_ms, sqrt(35000.0 / 9.0), 1e-9); /* 62.3610 */
  ck_assert_double_eq_tol(t->percentile_ms[0], 180.0, 1e-9);     /* p90: h = 1.8 */
  ck_assert_double_eq_tol(t->percentile_ms[1], 198.0, 1e-9);
  ck_assert_double_eq_tol(t->percentile_ms[2], 199.8, 1e-9);
  /* TPOT: (400-100)/3 = 100 and (300-200)/1 = 100; one-token request excluded */
  ck_assert_uint_eq(m.stat[RESULTS_TPOT].n, 2);
  ck_assert_double_eq_tol(m.stat[RESULTS_TPOT].mean_ms, 100.0, 1e-9);
  ck_assert_double_eq_tol(m.stat[RESULTS_TPOT].std_ms, 0.0, 1e-9);
  /* ITL pooled over requests: four 100 ms gaps */
  ck_assert_uint_eq(m.stat[RESULTS_ITL].n, 4);
  ck_assert_double_eq_tol(m.stat[RESULTS_ITL].mean_ms, 100.0, 1e-9);
  /* E2EL {400, 300, 50} */
  ck_assert_double_eq_tol(m.stat[RESULTS_E2EL].mean_ms, 250.0, 1e-9);
  ck_assert_double_eq_tol(m.stat[RESULTS_E2EL].median_ms, 300.0, 1e-9);
  ck_assert_double_eq_tol(m.stat[RESULTS_E2EL].percentile_ms[0], 380.0, 1e-9);
  /* additions */
  ck_assert_double_eq_tol(m.tokens_per_chunk.mean_ms, 1.0, 1e-12);
  ck_assert_double_eq_tol(m.itl_per_token.mean_ms, 100.0, 1e-9);
  ck_assert_double_eq_tol(m.send_lag.max_ms, 1.0, 1e-9); /* r1: dispatched 1 ms late */
  ck_assert_int_eq(m.failures_by_kind[LG_FAIL_HTTP], 1);
  /* time series: one second, three completions, tokens 4 + 2 + 1 */
  ck_assert_uint_eq(m.n_seconds, 1);
  ck_assert_int_eq(m.seconds[0].completed, 3);
  ck_assert_int_eq(m.seconds[0].failed, 1);
  ck_assert_int_eq(m.seconds[0].output_tokens, 7);
  ck_assert_double_eq_tol(m.seconds[0].ttft_p50_ms, 100.0, 1e-9);
  results_metrics_fini(&m);
}
END_TEST

START_TEST(goodput_and_stream_interval) {
  struct lg_record recs[4];
  struct lg_result run;
  make_run(&run, recs);
  struct results_settings s;
  default_settings(&s);
  struct st_err err;
  ck_assert_int_eq(results_parse_goodput("ttft:150", &s, &err), 0);
  struct results_metrics m;
  results_compute(&run, &s, &m);
  ck_assert_double_eq_tol(m.request_goodput, 2.0, 1e-9); /* r0 and r2 */
  results_metrics_fini(&m);
  ck_assert_int_eq(results_parse_goodput("tpot:50", &s, &err), 0);
  results_compute(&run, &s, &m);
  ck_assert_double_eq_tol(m.request_goodput, 1.0, 1e-9); /* r2 only: TPOT counts as 0 */
  results_metrics_fini(&m);
  ck_assert_int_eq(results_parse_goodput("itl:5", &s, &err), -1);
  ck_assert_int_eq(results_parse_goodput("ttft=5", &s, &err), -1);
  ck_assert_int_eq(results_parse_percentile_metrics("ttft,bogus", &s, &err), -1);
  ck_assert_int_eq(results_parse_metric_percentiles("50,101", &s, &err), -1);

  /* --stream-interval 3: chunks of 1, 3, 3, 3 tokens, 30 ms apart. */
  static uint32_t gaps[] = {30000, 30000, 30000};
  struct lg_record r = {.ttft_ns = 10 * MS, .e2el_ns = 100 * MS, .chunk_gaps_us = gaps,
                        .n_chunk_gaps = 3, .prompt_len = 5, .server_prompt_tokens = -1,
                        .output_tokens = 10, .http_status = 200};
  struct lg_result one = {.records = &r, .n_records = 1, .start_mono_ns = 0,
                          .end_mono_ns = 200 * MS};
  s.num_prompts = 1;
  results_compute(&one, &s, &m);
  ck_assert_double_eq_tol(m.stat[RESULTS_TPOT].mean_ms, 10.0, 1e-9); /* 90 ms / 9 */
  ck_assert_double_eq_tol(m.stat[RESULTS_ITL].mean_ms, 30.0, 1e-9);  /* per chunk */
  ck_assert_double_eq_tol(m.itl_per_token.mean_ms, 10.0, 1e-9);      /* per token */
  ck_assert_double_eq_tol(m.tokens_per_chunk.mean_ms, 2.5, 1e-12);
  results_metrics_fini(&m);
}
END_TEST

START_TEST(summary_text_as_reference) {
  struct lg_record recs[4];
  struct lg_result run;
  make_run(&run, recs);
  struct results_settings s;
  default_settings(&s);
  struct results_metrics m;
  results_compute(&run, &s, &m);
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  results_print_summary(f, &s, &m);
  fclose(f);
  ck_assert(str_starts_with(text, "============ Serving Benchmark Result ============\n"
                                  "Successful requests:                     3         \n"
                                  "Maximum request concurrency:             8         \n"
                                  "Benchmark duration (s):                  1.00      \n"
                                  "Total input tokens:                      60        \n"
                                  "Total generated tokens:                  7         \n"));
  ck_assert_ptr_nonnull(strstr(text, "\n---------------Time to First Token----------------\n"));
  ck_assert_ptr_nonnull(strstr(text, "\n-----Time per Output Token (excl. 1st token)------\n"));
  ck_assert_ptr_nonnull(strstr(text, "\nMean TTFT (ms):                          116.67    \n"));
  ck_assert_ptr_nonnull(strstr(text, "\nP99.9 TTFT (ms):                         199.80    \n"));
  ck_assert_ptr_nonnull(strstr(text, "\nMedian E2EL (ms):                        300.00    \n"));
  ck_assert(str_ends_with(text, "\n==================================================\n"));
  ck_assert_ptr_null(strstr(text, "Request rate configured")); /* rate inf */
  free(text);
  results_metrics_fini(&m);
}
END_TEST

START_TEST(json_keys_in_reference_order) {
  struct lg_record recs[4];
  struct lg_result run;
  make_run(&run, recs);
  struct results_settings s;
  default_settings(&s);
  char *meta[] = {"framework=sglang", "backend=overridden", "tp=8=x"};
  s.metadata = meta;
  s.n_metadata = 3;
  ck_assert_int_eq(results_parse_percentile_metrics("ttft,itl", &s, &(struct st_err){{0}}), 0);
  struct results_metrics m;
  results_compute(&run, &s, &m);
  char *json = results_json_alloc(&run, &s, &m, NULL);
  cJSON *root = cJSON_Parse(json);
  ck_assert_ptr_nonnull(root);
  static const char *const want[] = {
      "date", "backend", "model_id", "tokenizer_id", "best_of", "num_prompts", "framework", "tp",
      "request_rate", "burstiness", "max_concurrency", "duration", "benchmark_start_time_unix",
      "benchmark_end_time_unix", "completed", "total_input_tokens", "total_output_tokens",
      "request_throughput", "request_goodput:", "output_throughput", "total_token_throughput",
      "input_lens", "output_lens", "mean_ttft_ms", "median_ttft_ms", "std_ttft_ms",
      "p90_ttft_ms", "p99_ttft_ms", "p99.9_ttft_ms", "mean_itl_ms", "median_itl_ms",
      "std_itl_ms", "p90_itl_ms", "p99_itl_ms", "p99.9_itl_ms", "servetop"};
  size_t i = 0;
  const cJSON *item;
  cJSON_ArrayForEach(item, root) {
    ck_assert_msg(i < sizeof(want) / sizeof(want[0]), "extra key %s", item->string);
    ck_assert_str_eq(item->string, want[i]);
    i++;
  }
  ck_assert_uint_eq(i, sizeof(want) / sizeof(want[0]));
  ck_assert_str_eq(cJSON_GetObjectItem(root, "backend")->valuestring, "overridden");
  /* item.split("=")[1]: "tp=8=x" stores "8", as the reference */
  ck_assert_str_eq(cJSON_GetObjectItem(root, "tp")->valuestring, "8");
  ck_assert_str_eq(cJSON_GetObjectItem(root, "request_rate")->valuestring, "inf");
  ck_assert(cJSON_IsNull(cJSON_GetObjectItem(root, "request_goodput:")));
  ck_assert_int_eq(cJSON_GetObjectItem(root, "max_concurrency")->valueint, 8);
  ck_assert_str_eq(cJSON_GetObjectItem(root, "tokenizer_id")->valuestring, "deepseek-ai/DeepSeek-R1");
  cJSON *in = cJSON_GetObjectItem(root, "input_lens"), *out = cJSON_GetObjectItem(root, "output_lens");
  ck_assert_int_eq(cJSON_GetArraySize(in), 4);
  ck_assert_int_eq(cJSON_GetArrayItem(in, 3)->valueint, 40); /* failed ones included */
  ck_assert_int_eq(cJSON_GetArrayItem(out, 3)->valueint, 0);
  ck_assert_double_eq_tol(cJSON_GetObjectItem(root, "p99.9_ttft_ms")->valuedouble, 199.8, 1e-9);
  cJSON *st = cJSON_GetObjectItem(root, "servetop");
  ck_assert_int_eq(cJSON_GetObjectItem(st, "schema_version")->valueint, RESULTS_SCHEMA_VERSION);
  ck_assert_int_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(st, "failures"), "http_error")->valueint, 1);
  cJSON_Delete(root);
  free(json);

  /* --save-detailed adds the four per-request lists after output_lens. */
  s.save_detailed = true;
  s.max_concurrency = 0;
  s.request_rate = 2.5;
  ck_assert_int_eq(results_parse_goodput("e2el:1000", &s, &(struct st_err){{0}}), 0);
  results_metrics_fini(&m);
  results_compute(&run, &s, &m);
  json = results_json_alloc(&run, &s, &m, NULL);
  root = cJSON_Parse(json);
  ck_assert(cJSON_IsNull(cJSON_GetObjectItem(root, "max_concurrency")));
  ck_assert_double_eq_tol(cJSON_GetObjectItem(root, "request_rate")->valuedouble, 2.5, 1e-12);
  ck_assert_double_eq_tol(cJSON_GetObjectItem(root, "request_goodput:")->valuedouble, 3.0, 1e-9);
  const cJSON *after = cJSON_GetObjectItem(root, "output_lens")->next;
  ck_assert_str_eq(after->string, "ttfts");
  ck_assert_str_eq(after->next->string, "itls");
  ck_assert_str_eq(after->next->next->string, "generated_texts");
  ck_assert_str_eq(after->next->next->next->string, "errors");
  ck_assert_double_eq_tol(cJSON_GetArrayItem(after, 0)->valuedouble, 0.1, 1e-12);
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetArrayItem(after->next, 0)), 3);
  cJSON_Delete(root);
  free(json);
  results_metrics_fini(&m);
}
END_TEST

START_TEST(file_names_and_round_trip) {
  struct results_settings s;
  default_settings(&s);
  char *name = results_default_filename_alloc(&s, "20261201-010203");
  ck_assert_str_eq(name, "vllm-infqps-concurrency8-DeepSeek-R1-20261201-010203.json");
  free(name);
  s.max_concurrency = 0;
  s.request_rate = 2;
  name = results_default_filename_alloc(&s, "20261201-010203");
  ck_assert_str_eq(name, "vllm-2.0qps-DeepSeek-R1-20261201-010203.json");
  free(name);
  char buf[48];
  results_format_python_float(buf, sizeof(buf), 0.1);
  ck_assert_str_eq(buf, "0.1");
  results_format_python_float(buf, sizeof(buf), 1e-7);
  ck_assert_str_eq(buf, "1e-07");
  results_format_python_float(buf, sizeof(buf), 99.9);
  ck_assert_str_eq(buf, "99.9");

  struct lg_record recs[4];
  struct lg_result run;
  make_run(&run, recs);
  default_settings(&s);
  struct results_metrics m;
  results_compute(&run, &s, &m);
  char *json = results_json_alloc(&run, &s, &m, NULL);
  char dir[] = "/tmp/check_results_XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  char *sub = xasprintf("%s/nested/dir", dir);
  struct st_err err;
  /* os.path.join: an absolute file name wins over the directory */
  char *p1 = results_path_alloc("/results", "/abs/r.json"), *p2 = results_path_alloc("dir/", "r.json");
  char *p3 = results_path_alloc("dir", "r.json"), *p4 = results_path_alloc(NULL, "r.json");
  ck_assert_str_eq(p1, "/abs/r.json");
  ck_assert_str_eq(p2, "dir/r.json");
  ck_assert_str_eq(p3, "dir/r.json");
  ck_assert_str_eq(p4, "r.json");
  free(p1);
  free(p2);
  free(p3);
  free(p4);
  ck_assert_int_eq(results_save(sub, "r.json", json, &err), 0);
  char *path = xasprintf("%s/r.json", sub);
  struct results_file f;
  ck_assert_msg(results_load(path, &f, &err) == 0, "%s", err.msg);
  ck_assert_int_eq((int)fig_get(&f.figs, FIG_COMPLETED, FIG_VALUE), 3);
  ck_assert_int_eq(f.max_concurrency, 8);
  ck_assert(isinf(f.request_rate));
  ck_assert(f.figs.f[FIG_TTFT].valid);
  ck_assert_double_eq_tol(fig_get(&f.figs, FIG_TTFT, FIG_STAT_MEAN), 350.0 / 3.0, 1e-9);
  ck_assert_double_eq_tol(fig_get(&f.figs, FIG_E2EL, FIG_STAT_P99), 398.0, 1e-9);
  /* every figure the file holds is the computed one (the reader walks the table) */
  for (int id = 0; id < FIG_N; id++) {
    const struct fig_desc *d = fig_desc((enum fig_id)id);
    if (d->json_style == FIG_JSON_NONE || !m.figs.f[id].valid)
      continue;
    ck_assert_msg(f.figs.f[id].valid, "%s not read back", d->name);
    const enum fig_stat stats[] = {FIG_STAT_MEAN, FIG_STAT_P50, FIG_STAT_P99};
    for (size_t k = 0; k < (d->kind == FIG_DIST ? 3u : 1u); k++)
      ck_assert_msg(fabs(fig_get(&f.figs, d->id, stats[k]) - fig_get(&m.figs, d->id, stats[k])) <
                        1e-9,
                    "%s %s: read %g, computed %g", d->name, fig_stat_name(stats[k]),
                    fig_get(&f.figs, d->id, stats[k]), fig_get(&m.figs, d->id, stats[k]));
  }
  ck_assert(f.figs.f[FIG_SEND_LAG].valid && f.figs.f[FIG_SEND_LAG].n == 4); /* every request sent */
  ck_assert_double_eq_tol(fig_get(&f.figs, FIG_SEND_LAG, FIG_STAT_MEAN), m.send_lag.mean_ms, 1e-12);
  ck_assert(f.servetop && !f.interrupted);
  ck_assert_str_eq(f.model_id, "deepseek-ai/DeepSeek-R1");
  results_file_fini(&f);
  unlink(path);
  ck_assert_int_eq(file_write_atomic(path, "[1,2]", 5, 0644, &err), 0);
  ck_assert_int_eq(results_load(path, &f, &err), -1);
  ck_assert_ptr_nonnull(strstr(err.msg, "not a JSON object"));
  unlink(path);
  char *cmd = xasprintf("rm -rf '%s'", dir);
  ck_assert_int_eq(system(cmd), 0);
  free(cmd);
  free(path);
  free(sub);
  free(json);
  results_metrics_fini(&m);
}
END_TEST

/* A stopped run: requests the stop cut (in flight then, never sent) are no
 * failures and not in the failure rate, which covers the requests sent. */
START_TEST(cut_by_stop_is_not_a_failure) {
  struct lg_record recs[6];
  struct lg_result run;
  make_run(&run, recs);
  recs[4] = (struct lg_record){.prompt_len = 50, .server_prompt_tokens = -1,
                               .dispatch_ns = 600 * MS, .failure = LG_FAIL_INTERRUPTED};
  recs[5] = (struct lg_record){.prompt_len = 60, .server_prompt_tokens = -1,
                               .failure = LG_FAIL_NOT_SENT};
  run.n_records = 6;
  run.interrupted = true;
  struct results_settings s;
  default_settings(&s);
  s.num_prompts = 6;
  struct results_metrics m;
  results_compute(&run, &s, &m);
  ck_assert_int_eq(m.completed, 3);
  ck_assert_int_eq(m.failed, 1);                       /* the HTTP 500 only */
  ck_assert_double_eq_tol(m.failure_rate, 0.25, 1e-12); /* 1 of the 4 sent, not 3 of 6 */
  ck_assert_int_eq(m.seconds[0].failed, 1);
  char *json = results_json_alloc(&run, &s, &m, NULL);
  cJSON *doc = cJSON_Parse(json);
  cJSON *st = cJSON_GetObjectItem(doc, "servetop");
  ck_assert_double_eq_tol(cJSON_GetObjectItem(st, "failure_rate")->valuedouble, 0.25, 1e-12);
  ck_assert_int_eq(cJSON_GetObjectItem(st, "failed")->valueint, 1);
  cJSON *fail = cJSON_GetObjectItem(st, "failures");
  ck_assert_int_eq(cJSON_GetArraySize(fail), 1);
  ck_assert_int_eq(cJSON_GetObjectItem(fail, "http_error")->valueint, 1);
  cJSON *cut = cJSON_GetObjectItem(st, "cut_by_stop");
  ck_assert_int_eq(cJSON_GetObjectItem(cut, "interrupted")->valueint, 1);
  ck_assert_int_eq(cJSON_GetObjectItem(cut, "not_sent")->valueint, 1);
  ck_assert_ptr_null(cJSON_GetObjectItem(cJSON_GetObjectItem(st, "failure_examples"), "not_sent"));
  cJSON_Delete(doc);
  free(json);
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  results_print_accounting(f, &run, &s, &m);
  fclose(f);
  ck_assert_msg(strstr(text, "2 requests cut when the run ended (1 in flight, 1 never sent)") != NULL,
                "%s", text);
  ck_assert_msg(strstr(text, "1 of 4 requests failed") != NULL, "%s", text);
  ck_assert_msg(strstr(text, "not_sent") == NULL, "%s", text);
  free(text);
  results_metrics_fini(&m);
}
END_TEST

START_TEST(empty_run_is_zero_not_nan) {
  struct lg_record r = {.failure = LG_FAIL_CONNECT, .prompt_len = 3, .server_prompt_tokens = -1};
  struct lg_result run = {.records = &r, .n_records = 1, .start_mono_ns = 0, .end_mono_ns = MS};
  struct results_settings s;
  default_settings(&s);
  s.num_prompts = 1;
  struct results_metrics m;
  results_compute(&run, &s, &m);
  ck_assert_int_eq(m.completed, 0);
  ck_assert(m.stat[RESULTS_TTFT].mean_ms == 0.0 && m.stat[RESULTS_ITL].percentile_ms[2] == 0.0);
  ck_assert_double_eq_tol(m.failure_rate, 1.0, 1e-12);
  char *json = results_json_alloc(&run, &s, &m, NULL);
  ck_assert_ptr_null(strstr(json, "nan"));
  free(json);
  /* the summary says nothing succeeded and prints no figure as if it were 0 */
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  results_print_summary(f, &s, &m);
  fclose(f);
  ck_assert_ptr_nonnull(strstr(text, "Successful requests:                     0 "));
  ck_assert_ptr_nonnull(strstr(text, "Failed requests:                         1 "));
  ck_assert_ptr_nonnull(strstr(text, "No request succeeded"));
  ck_assert_ptr_null(strstr(text, "TTFT"));
  ck_assert_ptr_null(strstr(text, "0.00"));
  free(text);
  /* the reasons follow, in the server's (libcurl's) words */
  r.detail = (char *)"Failed to connect to 127.0.0.1 port 1: Connection refused";
  text = NULL;
  f = open_memstream(&text, &len);
  results_print_accounting(f, &run, &s, &m);
  fclose(f);
  ck_assert_ptr_nonnull(strstr(text, "1 of 1 requests failed"));
  ck_assert_ptr_nonnull(strstr(text, "Connection refused"));
  free(text);
  results_metrics_fini(&m);
}
END_TEST

/* The glossary in docs/figures.md is the figures table's: every row's label,
 * unit, meaning and name, as one table line (the `?` help is generated from
 * the same columns). */
START_TEST(figures_glossary_in_docs) {
  FILE *f = fopen(PROJECT_DIR "/docs/figures.md", "r");
  ck_assert_msg(f != NULL, "docs/figures.md");
  char *doc = xcalloc(1, 65536);
  size_t len = fread(doc, 1, 65535, f);
  fclose(f);
  doc[len] = '\0';
  for (int i = 0; i < FIG_N; i++) {
    const struct fig_desc *d = fig_desc((enum fig_id)i);
    ck_assert_msg(d->meaning && *d->meaning, "%s: no meaning", d->name);
    char line[512];
    snprintf(line, sizeof line, "| %s | %s | %s | %s |", d->label, *d->unit ? d->unit : "-",
             d->meaning, d->name);
    ck_assert_msg(strstr(doc, line) != NULL, "docs/figures.md lacks the row: %s", line);
  }
  free(doc);
}
END_TEST

static Suite *results_suite(void) {
  Suite *s = suite_create("results");
  TCase *tc = tcase_create("results");
  tcase_add_test(tc, figures_match_hand_computation);
  tcase_add_test(tc, goodput_and_stream_interval);
  tcase_add_test(tc, summary_text_as_reference);
  tcase_add_test(tc, json_keys_in_reference_order);
  tcase_add_test(tc, file_names_and_round_trip);
  tcase_add_test(tc, empty_run_is_zero_not_nan);
  tcase_add_test(tc, cut_by_stop_is_not_a_failure);
  tcase_add_test(tc, live_window_tokens_equal_the_time_series);
  tcase_add_test(tc, figures_glossary_in_docs);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(results_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
