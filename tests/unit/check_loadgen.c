/* loadgen: SSE framing, the chunk scanner, the random dataset, and the engine
 * against a scripted HTTP responder inside this test (127.0.0.1, port 0). */
#include "loadgen/loadgen.h"

#include <arpa/inet.h>
#include <check.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "loadgen/loadgen_internal.h"
#include "../lib/live_check.h"

/* ---------------------------------------------------------------- SSE framing */
struct lines {
  char text[2048];
  int n;
};

static int collect_line(void *ctx, const char *payload, size_t len) {
  struct lines *l = ctx;
  size_t used = strlen(l->text);
  snprintf(l->text + used, sizeof(l->text) - used, "%.*s|", (int)len, payload);
  l->n++;
  return 0;
}

START_TEST(sse_lines_survive_every_split) {
  const char stream[] = "data: {\"a\":1}\n\n"
                        ": keep-alive comment\n"
                        "event: ignored\r\n"
                        "data:{\"b\":2}\r\n\r\n"
                        "  data: [DONE]  \n\n"
                        "data: tail-without-newline";
  const char *want = "{\"a\":1}|{\"b\":2}|[DONE]|tail-without-newline|";
  size_t len = sizeof(stream) - 1;
  for (size_t split = 0; split <= len; split++) {
    struct lines l = {{0}, 0};
    struct lg_sse sse;
    lg_sse_init(&sse);
    ck_assert_int_eq(lg_sse_feed(&sse, stream, split, collect_line, &l), 0);
    ck_assert_int_eq(lg_sse_feed(&sse, stream + split, len - split, collect_line, &l), 0);
    ck_assert_int_eq(lg_sse_finish(&sse, collect_line, &l), 0);
    lg_sse_fini(&sse);
    ck_assert_str_eq(l.text, want);
  }
  /* One byte at a time. */
  struct lines l = {{0}, 0};
  struct lg_sse sse;
  lg_sse_init(&sse);
  for (size_t i = 0; i < len; i++)
    lg_sse_feed(&sse, stream + i, 1, collect_line, &l);
  lg_sse_finish(&sse, collect_line, &l);
  lg_sse_fini(&sse);
  ck_assert_str_eq(l.text, want);
}
END_TEST

static int stop_at_second(void *ctx, const char *payload, size_t len) {
  (void)payload;
  (void)len;
  return ++*(int *)ctx == 2 ? 7 : 0;
}

START_TEST(sse_callback_stops_feed) {
  int seen = 0;
  struct lg_sse sse;
  lg_sse_init(&sse);
  ck_assert_int_eq(lg_sse_feed(&sse, "data: 1\ndata: 2\ndata: 3\n", 24, stop_at_second, &seen), 7);
  ck_assert_int_eq(seen, 2);
  lg_sse_fini(&sse);
}
END_TEST

/* ---------------------------------------------------------------- chunk scanner */
static enum lg_chunk_kind scan(const char *s, struct lg_chunk *c) {
  return lg_chunk_scan(s, strlen(s), c);
}

START_TEST(chunk_scan_sglang_shapes) {
  struct lg_chunk c;
  ck_assert_int_eq(scan("[DONE]", &c), LG_CHUNK_DONE);
  ck_assert_int_eq(
      scan("{\"id\":\"x\",\"object\":\"text_completion\",\"created\":1,\"model\":\"m\","
           "\"choices\":[{\"index\":0,\"text\":\" hi\\n\",\"logprobs\":null,\"finish_reason\":null}],"
           "\"usage\":null}",
           &c),
      LG_CHUNK_CHOICES);
  ck_assert(c.has_text && !c.has_usage && c.completion_tokens == -1);
  ck_assert_int_eq((int)c.text_len, 5);
  ck_assert(memcmp(c.text, " hi\\n", 5) == 0);
  /* Special token: choices present, empty text: still a token chunk for completions. */
  ck_assert_int_eq(scan("{\"choices\":[{\"text\":\"\",\"finish_reason\":\"length\"}]}", &c),
                   LG_CHUNK_CHOICES);
  ck_assert(!c.has_text && c.has_finish_reason);
  ck_assert_int_eq(scan("{\"id\":\"x\",\"choices\":[],\"usage\":{\"prompt_tokens\":1024,"
                        "\"completion_tokens\":128,\"total_tokens\":1152,"
                        "\"prompt_tokens_details\":{\"cached_tokens\":0}}}",
                        &c),
                   LG_CHUNK_OTHER);
  ck_assert(c.has_usage);
  ck_assert_int_eq(c.completion_tokens, 128);
  ck_assert_int_eq(c.prompt_tokens, 1024);
  /* Chat: role chunk has no text; content chunk does; reasoning counts as text. */
  ck_assert_int_eq(scan("{\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}", &c),
                   LG_CHUNK_CHOICES);
  ck_assert(!c.has_text);
  ck_assert_int_eq(scan("{\"choices\":[{\"delta\":{\"content\":\"Hello\"},\"finish_reason\":null}]}", &c),
                   LG_CHUNK_CHOICES);
  ck_assert(c.has_text);
  ck_assert_int_eq(scan("{\"choices\":[{\"delta\":{\"content\":null,\"reasoning_content\":\"hm\"}}]}", &c),
                   LG_CHUNK_CHOICES);
  ck_assert(c.has_text);
  ck_assert_int_eq(scan("{\"error\":{\"message\":\"boom\",\"code\":500}}", &c), LG_CHUNK_ERROR);
  ck_assert(c.has_error && c.error_text_len > 0);
  ck_assert_int_eq(scan("  {\"x\": [1, 2.5e3, -0.1, true, false, null, \"\\u00e9\"]}  ", &c),
                   LG_CHUNK_OTHER);
  /* "error": null is no error event (a field some servers always send) */
  ck_assert_int_eq(scan("{\"choices\":[],\"usage\":{\"completion_tokens\":null},\"error\":null}", &c),
                   LG_CHUNK_OTHER);
  ck_assert(!c.has_error && c.has_usage && c.completion_tokens == -1);
  /* llama.cpp's last chunk: choices, usage and timings together */
  ck_assert_int_eq(scan("{\"choices\":[{\"text\":\"\",\"finish_reason\":\"length\"}],\"usage\":"
                        "{\"completion_tokens\":5,\"prompt_tokens\":3},\"timings\":{\"prompt_n\":3,"
                        "\"predicted_ms\":3.36,\"draft_n\":3,\"draft_n_accepted\":2}}", &c),
                   LG_CHUNK_CHOICES);
  ck_assert(c.has_usage && c.has_finish_reason && c.has_timings);
  ck_assert(c.completion_tokens == 5 && c.draft_n == 3 && c.draft_n_accepted == 2);
  /* a value that is no count is -2 (impossible), never cast or taken as absent: a
   * fraction, a negative, one past 9e15; the fuzzer's invariant is the same */
  ck_assert_int_eq(scan("{\"choices\":[{\"text\":\"\"}],\"usage\":{\"completion_tokens\":0.5,"
                        "\"prompt_tokens\":-3},\"timings\":{\"draft_n\":1e30,"
                        "\"draft_n_accepted\":2.5}}", &c),
                   LG_CHUNK_CHOICES);
  ck_assert(c.completion_tokens == -2 && c.prompt_tokens == -2);
  ck_assert(c.draft_n == -2 && c.draft_n_accepted == -2);
}
END_TEST

START_TEST(chunk_scan_rejects_malformed) {
  static const char *const bad[] = {
      "",  "{",  "{\"choices\":[{\"text\":\"a\"}]",  "{\"a\":1,}",  "{\"a\" 1}",
      "{\"a\":01}",  "{\"a\":1.}",  "{\"a\":\"\\x\"}",  "{\"a\":\"\\u12\"}",  "{\"a\":tru}",
      "{\"a\":1} x",  "{'a':1}",  "{\"a\":\"tab\there\"}",  "data: {}",  "[1,2",  "-",
  };
  struct lg_chunk c;
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
    ck_assert_msg(scan(bad[i], &c) == LG_CHUNK_MALFORMED, "accepted: %s", bad[i]);
  /* Nesting beyond the depth limit is refused, not a stack overflow. */
  char deep[300];
  memset(deep, '[', 200);
  memset(deep + 200, ']', 99);
  deep[299] = '\0';
  ck_assert_int_eq(scan(deep, &c), LG_CHUNK_MALFORMED);
}
END_TEST

START_TEST(json_unescape) {
  struct sbuf sb = {0};
  const char raw[] = "a\\n\\\"b\\\\ \\u00e9 \\ud83d\\ude00 \\t";
  lg_json_unescape_append(&sb, raw, strlen(raw));
  ck_assert_str_eq(sb.data, "a\n\"b\\ \xc3\xa9 \xf0\x9f\x98\x80 \t");
  sbuf_free(&sb);
}
END_TEST

/* ---------------------------------------------------------------- RNG and dataset */
START_TEST(rng_uniform_and_gamma) {
  struct lg_np rng;
  lg_np_seed(&rng, 42);
  int counts[5] = {0};
  for (int i = 0; i < 50000; i++) {
    int64_t v = lg_np_randint(&rng, 10, 15);
    ck_assert(v >= 10 && v <= 14);
    counts[v - 10]++;
  }
  for (int k = 0; k < 5; k++) /* expected 10000 each; 5 sigma ~ 450 */
    ck_assert_msg(abs(counts[k] - 10000) < 500, "bucket %d: %d", k, counts[k]);
  ck_assert_int_eq(lg_np_randint(&rng, 7, 8), 7);
  /* Gamma(shape k, scale s) has mean k*s and variance k*s^2. */
  double shapes[] = {0.5, 1.0, 4.0};
  for (size_t i = 0; i < 3; i++) {
    double sum = 0, sum_sq = 0;
    int n = 200000;
    for (int j = 0; j < n; j++) {
      double g = lg_np_gamma(&rng, shapes[i], 0.01);
      ck_assert(g >= 0);
      sum += g;
      sum_sq += g * g;
    }
    double mean = sum / n, var = sum_sq / n - mean * mean;
    ck_assert_msg(fabs(mean - shapes[i] * 0.01) < 0.02 * shapes[i] * 0.01, "mean %g", mean);
    ck_assert_msg(fabs(var - shapes[i] * 1e-4) < 0.05 * shapes[i] * 1e-4, "var %g", var);
  }
}
END_TEST

/* numpy's legacy RandomState draw for draw; the values were printed by numpy
 * 1.24 (np.random.seed(0); randint; RandomState(get_state()[1][:4]); gamma). */
START_TEST(numpy_rng_draw_for_draw) {
  struct lg_np np;
  lg_np_seed(&np, 0);
  static const int64_t a[] = {2732, 10799, 9845, 19648, 13123};
  static const int64_t b[] = {1014, 922, 828, 840, 855};
  for (int i = 0; i < 5; i++)
    ck_assert_int_eq(lg_np_randint(&np, 0, 32000), a[i]);
  for (int i = 0; i < 5; i++)
    ck_assert_int_eq(lg_np_randint(&np, 819, 1025), b[i]);
  struct lg_np local;
  lg_np_seed_array(&local, np.key, 4);
  ck_assert_int_eq(lg_np_randint(&local, 0, (int64_t)1 << 31), 2130544807);
  ck_assert_int_eq(lg_np_randint(&local, 0, (int64_t)1 << 31), 1101783030);
  ck_assert(lg_np_gamma(&np, 1.0, 0.1) == 0.035315914097266164);
  ck_assert(lg_np_gamma(&np, 1.0, 0.1) == 0.005838467078070335);
  ck_assert(lg_np_gamma(&np, 1.0, 0.1) == 0.03183561409282678);
  ck_assert(lg_np_gamma(&np, 1.0, 0.1) == 0.0649446359098274);
  ck_assert(lg_np_gamma(&np, 0.5, 0.2) == 0.195834722151129);
  ck_assert(lg_np_gamma(&np, 0.5, 0.2) == 0.030855979209594077);
  lg_np_gamma(&np, 0.5, 0.2);
  lg_np_gamma(&np, 0.5, 0.2);
  ck_assert(lg_np_gamma(&np, 2.5, 0.2) == 0.9973174466164022); /* polar gauss, cached pair */
  ck_assert(lg_np_gamma(&np, 2.5, 0.2) == 0.39783010449824024);
  /* randint over one value draws nothing */
  lg_np_seed(&np, 12345);
  for (int i = 0; i < 3; i++)
    ck_assert_int_eq(lg_np_randint(&np, 5, 6), 5);
  ck_assert_int_eq(lg_np_randint(&np, 0, 7), 2);
}
END_TEST

/* sample_random_requests' draws (no tokenizer: the ids go as token arrays)
 * and get_request's arrival gaps, against numpy with seed 5:
 * prefix randint(0,1000,3), inputs randint(80,101,6), outputs randint(16,21,6),
 * offsets randint(0,1000,6), then gamma(1, 1/4) gaps. */
START_TEST(random_workload_is_numpys) {
  struct lg_dataset_config dc = {.api = LG_API_COMPLETIONS, .model = "m", .input_len = 100,
                                 .output_len = 20, .range_ratio = 0.8, .prefix_len = 3,
                                 .num_prompts = 6, .vocab_size = 1000, .ignore_eos = true,
                                 .seed = 5, .request_rate = 4.0, .burstiness = 1.0};
  struct lg_workload w;
  struct st_err err;
  ck_assert_int_eq(lg_workload_random(&dc, &w, &err), 0);
  static const uint32_t in[] = {86, 96, 89, 88, 84, 87}, out[] = {19, 16, 16, 20, 17, 16};
  static const int offsets[] = {27, 44, 205, 715, 65, 431};
  static const int64_t arrival[] = {0, 29386605, 86474235, 118175709, 643910722, 829324595};
  for (int i = 0; i < 6; i++) {
    ck_assert_uint_eq(w.prompts[i].prompt_len, 3 + in[i]);
    ck_assert_uint_eq(w.prompts[i].output_len, out[i]);
    ck_assert_int_eq(w.arrival_ns[i], arrival[i]);
    char want[64];
    snprintf(want, sizeof want, "\"prompt\": [867, 206, 701, %d, %d,", (offsets[i] + i) % 1000,
             (offsets[i] + i + 1) % 1000);
    ck_assert_msg(strstr(w.prompts[i].body, want), "%s", w.prompts[i].body);
  }
  ck_assert_str_eq(w.info.path, "token_ids");
  lg_workload_free(&w);
  dc.seed = 1ull << 32; /* numpy: "Seed must be between 0 and 2**32 - 1" */
  ck_assert_int_eq(lg_workload_random(&dc, &w, &err), -1);
}
END_TEST

START_TEST(dsv4_framing_is_encoding_dsv4s) {
  /* encoding_dsv4.encode_messages([{"role": "user", "content": "a b\n{c}"}],
   * thinking_mode="thinking"), bytes as Python printed them */
  char *p = lg_dsv4_user_prompt_alloc("a b\n{c}");
  ck_assert_str_eq(p, "<\xef\xbd\x9c" "begin\xe2\x96\x81of\xe2\x96\x81sentence\xef\xbd\x9c><\xef\xbd\x9c"
                      "User\xef\xbd\x9c>a b\n{c}<\xef\xbd\x9c" "Assistant\xef\xbd\x9c><think>");
  free(p);
}
END_TEST

/* Counts the ids in a completions body and checks they are consecutive
 * modulo vocab after the prefix. */
static int count_ids(const char *body, int prefix_len, int vocab, bool *consecutive) {
  const char *p = strstr(body, "\"prompt\": [");
  ck_assert_ptr_nonnull(p);
  p += strlen("\"prompt\": [");
  int n = 0;
  long prev = -1;
  *consecutive = true;
  while (*p && *p != ']') {
    char *end;
    long v = strtol(p, &end, 10);
    ck_assert(end != p);
    ck_assert(v >= 0 && v < vocab);
    if (n > prefix_len && v != (prev + 1) % vocab)
      *consecutive = false;
    prev = v;
    n++;
    p = end;
    if (*p == ',')
      p += 2;
  }
  return n;
}

START_TEST(random_workload_lengths_and_ids) {
  struct lg_dataset_config dc = {.api = LG_API_COMPLETIONS, .model = "m\"odel", .input_len = 100,
                                 .output_len = 50, .range_ratio = 0.8, .prefix_len = 3,
                                 .num_prompts = 300, .vocab_size = 1000, .ignore_eos = true,
                                 .seed = 1};
  struct lg_workload w;
  struct st_err err;
  ck_assert_int_eq(lg_workload_random(&dc, &w, &err), 0);
  ck_assert_uint_eq(w.n_prompts, 300);
  bool saw_lo_in = false, saw_hi_in = false, saw_lo_out = false, saw_hi_out = false;
  for (size_t i = 0; i < w.n_prompts; i++) {
    const struct lg_prompt *p = &w.prompts[i];
    /* inputs uniform on [80, 100] plus the 3-token prefix; outputs on [40, 50] */
    ck_assert(p->prompt_len >= 83 && p->prompt_len <= 103);
    ck_assert(p->output_len >= 40 && p->output_len <= 50);
    saw_lo_in |= p->prompt_len == 83;
    saw_hi_in |= p->prompt_len == 103;
    saw_lo_out |= p->output_len == 40;
    saw_hi_out |= p->output_len == 50;
    bool consecutive;
    ck_assert_int_eq(count_ids(p->body, 3, 1000, &consecutive), (int)p->prompt_len);
    ck_assert(consecutive);
    ck_assert_uint_eq(strlen(p->body), p->body_len);
    ck_assert_ptr_nonnull(strstr(p->body, "\"model\": \"m\\\"odel\""));
    ck_assert_ptr_nonnull(strstr(p->body, "\"ignore_eos\": true"));
    ck_assert_ptr_nonnull(strstr(p->body, "\"stream_options\": {\"include_usage\": true, \"continuous_usage_stats\": true}"));
    char max_tokens[48];
    snprintf(max_tokens, sizeof(max_tokens), "\"max_tokens\": %u,", p->output_len);
    ck_assert_ptr_nonnull(strstr(p->body, max_tokens));
  }
  ck_assert(saw_lo_in && saw_hi_in && saw_lo_out && saw_hi_out); /* bounds inclusive */
  struct lg_workload warm;
  lg_workload_repeat_first(&w, 4, &warm);
  ck_assert_uint_eq(warm.n_prompts, 4);
  ck_assert_ptr_eq(warm.prompts[3].body, w.prompts[0].body);
  lg_workload_free(&warm);
  lg_workload_free(&w);

  dc.range_ratio = 1.0;
  dc.prefix_len = 0;
  ck_assert_int_eq(lg_workload_random(&dc, &w, &err), 0);
  for (size_t i = 0; i < w.n_prompts; i++)
    ck_assert(w.prompts[i].prompt_len == 100 && w.prompts[i].output_len == 50);
  lg_workload_free(&w);

  dc.range_ratio = 1.5;
  ck_assert_int_eq(lg_workload_random(&dc, &w, &err), -1);
  dc.range_ratio = 1.0;
  dc.api = LG_API_CHAT;
  ck_assert_int_eq(lg_workload_random(&dc, &w, &err), -1); /* no calibration */
  struct lg_chat_sizer sizer = {.overhead_tokens = 10, .tokens_per_word = 1.0};
  dc.chat_sizer = &sizer;
  ck_assert_int_eq(lg_workload_random(&dc, &w, &err), 0);
  ck_assert_ptr_nonnull(strstr(w.prompts[0].body, "\"messages\": [{\"role\": \"user\""));
  ck_assert_ptr_nonnull(strstr(w.prompts[0].body, "\"max_completion_tokens\": 50"));
  lg_workload_free(&w);
  char *text = lg_chat_text_alloc(12, 0, 3);
  ck_assert_str_eq(text, "Request 0000012: time year people");
  free(text);
  text = lg_chat_text_alloc(3, 2, 1);
  ck_assert_str_eq(text, "woman life Request 0000003: time");
  free(text);
}
END_TEST

/* ---------------------------------------------------------------- scripted responder */
struct responder {
  int listen_fd;
  int port;
  pthread_t thread;
  atomic_bool stop;
  atomic_int current, max_seen, requests;
  /* /slow holds each request until this many were in flight at once (or
   * until gate_until_ns): whether the client reaches its cap does not
   * depend on how the threads were scheduled. 0: no gate. */
  atomic_int gate;
  int64_t gate_until_ns;
  pthread_t conn_threads[512];
  atomic_int n_conn_threads;
};
static struct responder R;

static void send_all(int fd, const char *data, size_t len) {
  while (len > 0) {
    ssize_t n = send(fd, data, len, MSG_NOSIGNAL);
    if (n <= 0)
      return;
    data += n;
    len -= (size_t)n;
  }
}

static void send_chunk(int fd, const char *event) {
  char head[32];
  size_t len = strlen(event);
  int n = snprintf(head, sizeof(head), "%zx\r\n", len);
  send_all(fd, head, (size_t)n);
  send_all(fd, event, len);
  send_all(fd, "\r\n", 2);
}

static void sleep_ms(int ms) {
  clock_sleep_us((int64_t)ms * 1000);
}

static const char SSE_HEAD[] = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                               "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n";

static void *serve_conn(void *arg) {
  int fd = (int)(intptr_t)arg;
  char req[65536];
  size_t got = 0;
  char *hdr_end = NULL;
  while (got < sizeof(req) - 1) {
    ssize_t n = recv(fd, req + got, sizeof(req) - 1 - got, 0);
    if (n <= 0)
      break;
    got += (size_t)n;
    req[got] = '\0';
    hdr_end = strstr(req, "\r\n\r\n");
    if (hdr_end) {
      const char *cl = strcasestr(req, "Content-Length:");
      size_t body = cl ? (size_t)strtoul(cl + 15, NULL, 10) : 0;
      if (got >= (size_t)(hdr_end + 4 - req) + body)
        break;
    }
  }
  atomic_fetch_add(&R.requests, 1);
  int cur = atomic_fetch_add(&R.current, 1) + 1;
  bool counted = true; /* R.current still holds this request */
  int prev = atomic_load(&R.max_seen);
  while (cur > prev && !atomic_compare_exchange_weak(&R.max_seen, &prev, cur))
    ;
  char path[64] = "";
  sscanf(req, "POST %63s", path);
  static const char usage[] = "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,"
                              "\"completion_tokens\":3,\"total_tokens\":8}}\n\n";
  if (strcmp(path, "/ok") == 0 || strcmp(path, "/slow") == 0) {
    int gap_ms = path[1] == 's' ? 20 : 2;
    while (path[1] == 's' && atomic_load(&R.max_seen) < atomic_load(&R.gate) &&
           clock_mono_ns() < R.gate_until_ns)
      sleep_ms(1);
    send_all(fd, SSE_HEAD, sizeof(SSE_HEAD) - 1);
    for (int i = 0; i < 3; i++) {
      if (i)
        sleep_ms(gap_ms);
      send_chunk(fd, i < 2 ? "data: {\"choices\":[{\"index\":0,\"text\":\"tok\"}],\"usage\":null}\n\n"
                           : "data: {\"choices\":[{\"index\":0,\"text\":\"tok\",\"finish_reason\":"
                             "\"length\"}],\"usage\":null}\n\n");
    }
    send_chunk(fd, usage);
    send_chunk(fd, "data: [DONE]\n\n");
    /* Not in flight any more once the client can see the end: counted after
     * the last byte, a slow thread (TSan) overlapped the client's next request. */
    atomic_fetch_sub(&R.current, 1);
    counted = false;
    send_all(fd, "0\r\n\r\n", 5);
  } else if (strcmp(path, "/chat") == 0) {
    send_all(fd, SSE_HEAD, sizeof(SSE_HEAD) - 1);
    send_chunk(fd, "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n");
    sleep_ms(30); /* TTFT must not be taken at the role chunk */
    send_chunk(fd, "data: {\"choices\":[{\"delta\":{\"content\":\"A\"}}]}\n\n");
    sleep_ms(5);
    send_chunk(fd, "data: {\"choices\":[{\"delta\":{\"content\":\"B\"}}]}\n\n");
    sleep_ms(5);
    send_chunk(fd, "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"length\"}]}\n\n");
    send_chunk(fd, usage);
    send_chunk(fd, "data: [DONE]\n\n");
    send_all(fd, "0\r\n\r\n", 5);
  } else if (strncmp(path, "/stream/", 8) == 0) {
    /* Streams that end without what a completed request needs, and
     * llama.cpp's shapes: each path names its ending. */
    static const char tok[] = "data: {\"choices\":[{\"index\":0,\"text\":\"tok\"}]}\n\n";
    static const char last[] = "data: {\"choices\":[{\"index\":0,\"text\":\"tok\","
                               "\"finish_reason\":\"length\"}]}\n\n";
    const char *kind = path + 8;
    send_all(fd, SSE_HEAD, sizeof(SSE_HEAD) - 1);
    send_chunk(fd, tok);
    if (strcmp(kind, "llama-error") == 0) { /* llama.cpp: the error, then the body ends */
      send_chunk(fd, "data: {\"error\":{\"code\":500,\"message\":\"The model produced output "
                     "that does not match the expected Content-only format\",\"type\":"
                     "\"server_error\"}}\n\n");
    } else if (strcmp(kind, "sglang-error") == 0) { /* SGLang: the error, then [DONE] */
      send_chunk(fd, "data: {\"error\": {\"object\": \"error\", \"message\": \"aborted\", "
                     "\"type\": \"InternalServerError\", \"param\": null, \"code\": 500}}\n\n");
      send_chunk(fd, "data: [DONE]\n\n");
    } else if (strcmp(kind, "llama-ok") == 0) { /* usage in the last chunk with choices */
      send_chunk(fd, tok);
      send_chunk(fd, "data: {\"choices\":[{\"text\":\"\",\"index\":0,\"logprobs\":null,"
                     "\"finish_reason\":\"length\"}],\"created\":1,\"model\":\"m\","
                     "\"object\":\"text_completion\",\"usage\":{\"completion_tokens\":3,"
                     "\"prompt_tokens\":5,\"total_tokens\":8},\"timings\":{\"prompt_n\":5,"
                     "\"predicted_n\":3,\"draft_n\":4,\"draft_n_accepted\":3}}\n\n");
      send_chunk(fd, "data: [DONE]\n\n");
    } else if (strcmp(kind, "no-usage") == 0) {
      send_chunk(fd, last);
      send_chunk(fd, "data: [DONE]\n\n");
    } else if (strcmp(kind, "usage-no-count") == 0) {
      send_chunk(fd, last);
      send_chunk(fd, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,"
                     "\"completion_tokens\":null}}\n\n");
      send_chunk(fd, "data: [DONE]\n\n");
    } else if (strcmp(kind, "no-finish") == 0) {
      send_chunk(fd, tok);
      send_chunk(fd, usage);
      send_chunk(fd, "data: [DONE]\n\n");
    }
    send_all(fd, "0\r\n\r\n", 5);
  } else if (strcmp(path, "/http500") == 0) {
    static const char resp[] = "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 5\r\n"
                               "Connection: close\r\n\r\noops!";
    send_all(fd, resp, sizeof(resp) - 1);
  } else if (strcmp(path, "/malformed") == 0) {
    send_all(fd, SSE_HEAD, sizeof(SSE_HEAD) - 1);
    send_chunk(fd, "data: {\"choices\":[{\"text\":\"a\"}]}\n\n");
    send_chunk(fd, "data: {\"choices\":[{\"text\":\"a\"}]\n\n");
    send_all(fd, "0\r\n\r\n", 5);
  } else if (strcmp(path, "/reset") == 0) {
    send_all(fd, SSE_HEAD, sizeof(SSE_HEAD) - 1);
    send_chunk(fd, "data: {\"choices\":[{\"text\":\"a\"}]}\n\n");
  } else if (strcmp(path, "/nochunk") == 0) {
    send_all(fd, SSE_HEAD, sizeof(SSE_HEAD) - 1);
    send_chunk(fd, usage);
    send_chunk(fd, "data: [DONE]\n\n");
    send_all(fd, "0\r\n\r\n", 5);
  } else if (strcmp(path, "/hang") == 0) { /* until the responder stops (30 s at most) */
    send_all(fd, SSE_HEAD, sizeof(SSE_HEAD) - 1);
    send_chunk(fd, "data: {\"choices\":[{\"text\":\"a\"}]}\n\n");
    for (int i = 0; i < 3000 && !atomic_load(&R.stop); i++)
      sleep_ms(10);
  }
  if (counted)
    atomic_fetch_sub(&R.current, 1);
  close(fd);
  return NULL;
}

static void *accept_loop(void *arg) {
  (void)arg;
  while (!atomic_load(&R.stop)) {
    int fd = accept(R.listen_fd, NULL, NULL);
    if (fd < 0)
      continue;
    if (atomic_load(&R.stop)) {
      close(fd);
      break;
    }
    int slot = atomic_fetch_add(&R.n_conn_threads, 1);
    ck_assert_int_lt(slot, 512);
    pthread_create(&R.conn_threads[slot], NULL, serve_conn, (void *)(intptr_t)fd);
  }
  return NULL;
}

static void responder_start(void) {
  memset(&R, 0, sizeof(R));
  R.listen_fd = socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  setsockopt(R.listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  ck_assert_int_eq(bind(R.listen_fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
  ck_assert_int_eq(listen(R.listen_fd, 256), 0);
  socklen_t len = sizeof(addr);
  getsockname(R.listen_fd, (struct sockaddr *)&addr, &len);
  R.port = ntohs(addr.sin_port);
  pthread_create(&R.thread, NULL, accept_loop, NULL);
}

static void responder_stop(void) {
  atomic_store(&R.stop, true);
  shutdown(R.listen_fd, SHUT_RDWR); /* wakes accept() */
  pthread_join(R.thread, NULL);
  close(R.listen_fd);
  for (int i = 0; i < atomic_load(&R.n_conn_threads); i++)
    pthread_join(R.conn_threads[i], NULL);
}

/* ---------------------------------------------------------------- engine runs */
static struct lg_prompt test_prompts[64];

static void run_path(const char *path, size_t n, int conc, int workers, struct lg_result *res) {
  for (size_t i = 0; i < n; i++)
    test_prompts[i] = (struct lg_prompt){"{}", 2, 7, 3};
  char url[128];
  snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", R.port, path);
  struct lg_config cfg;
  lg_config_init(&cfg);
  cfg.url = url;
  cfg.api = strcmp(path, "/chat") == 0 ? LG_API_CHAT : LG_API_COMPLETIONS;
  cfg.prompts = test_prompts;
  cfg.n_prompts = n;
  cfg.max_concurrency = conc;
  cfg.num_workers = workers;
  cfg.keep_text = true;
  cfg.request_timeout_s = 10;
  struct st_err err;
  struct lg_run *run = lg_run_start(&cfg, &err);
  ck_assert_msg(run != NULL, "%s", err.msg);
  ck_assert(lg_run_wait(run, 20000));
  lg_run_finish(run, res);
}

START_TEST(engine_completions_records) {
  responder_start();
  struct lg_result res;
  run_path("/ok", 10, 3, 1, &res);
  ck_assert_uint_eq(res.n_records, 10);
  for (size_t i = 0; i < res.n_records; i++) {
    const struct lg_record *r = &res.records[i];
    ck_assert_msg(r->failure == LG_OK, "request %zu: %s", i, r->detail ? r->detail : "");
    ck_assert_int_eq(r->http_status, 200);
    ck_assert_int_eq(r->output_tokens, 3);
    ck_assert_int_eq(r->server_prompt_tokens, 5);
    ck_assert_uint_eq(r->n_chunk_gaps, 2);
    ck_assert(r->ttft_ns > 0 && r->e2el_ns >= r->ttft_ns);
    /* The responder sleeps 2 ms twice between token chunks, so the last one
     * cannot arrive sooner than 4 ms after dispatch (single gaps are not
     * checked: a late first chunk on a loaded machine shortens them). */
    ck_assert_msg(r->e2el_ns >= 4 * 1000000LL, "e2el %lld ns", (long long)r->e2el_ns);
    ck_assert((int64_t)(r->chunk_gaps_us[0] + r->chunk_gaps_us[1]) * 1000 <=
              r->e2el_ns - r->ttft_ns + 2000);
    ck_assert(r->dispatch_ns >= r->scheduled_ns);
    ck_assert(r->flags & LG_REC_USAGE_SEEN);
    ck_assert_str_eq(r->detail, "toktoktok"); /* keep_text */
  }
  ck_assert(res.end_mono_ns > res.start_mono_ns);
  ck_assert(!res.interrupted);
  ck_assert_uint_eq(res.events, 10 * 5); /* 3 tokens + usage + [DONE] */
  ck_assert_int_eq(atomic_load(&R.requests), 10);
  /* client health: the loop did work and slept; receive lags (sampled, if
   * any) are kernel receive time -> stamp, never a clock mix-up's seconds */
  ck_assert(res.loop_busy[0] > 0 && res.loop_busy[0] < 1);
  for (size_t i = 0; i < res.n_recv_lag; i++)
    ck_assert_msg(res.recv_lag_us[i] < 10u * 1000000u, "receive lag %u us", res.recv_lag_us[i]);
  lg_result_free(&res);
  responder_stop();
}
END_TEST

START_TEST(engine_concurrency_cap_over_workers) {
  responder_start();
  /* the first requests wait at the responder until 5 are in flight */
  R.gate_until_ns = clock_mono_ns() + 10 * 1000000000LL;
  atomic_store(&R.gate, 5);
  struct lg_result res;
  run_path("/slow", 40, 5, 4, &res);
  size_t ok = 0;
  for (size_t i = 0; i < res.n_records; i++)
    ok += res.records[i].failure == LG_OK;
  ck_assert_uint_eq(ok, 40);
  ck_assert_int_eq(atomic_load(&R.requests), 40); /* every index exactly once */
  ck_assert_int_eq(atomic_load(&R.max_seen), 5); /* the cap, reached, never passed */
  ck_assert_int_eq(res.num_workers, 4);
  for (int i = 0; i < 4; i++) /* each loop's own share: it worked, it slept */
    ck_assert_msg(res.loop_busy[i] > 0 && res.loop_busy[i] < 1, "loop %d: %g", i, res.loop_busy[i]);
  lg_result_free(&res);
  responder_stop();
}
END_TEST

START_TEST(engine_live_window_figures) {
  responder_start();
  for (size_t i = 0; i < 12; i++)
    test_prompts[i] = (struct lg_prompt){"{}", 2, 7, 3};
  char url[128];
  snprintf(url, sizeof(url), "http://127.0.0.1:%d/slow", R.port);
  struct lg_config cfg;
  lg_config_init(&cfg);
  cfg.url = url;
  cfg.prompts = test_prompts;
  cfg.n_prompts = 12;
  cfg.max_concurrency = 4;
  cfg.num_workers = 2;
  struct st_err err;
  struct lg_run *run = lg_run_start(&cfg, &err);
  ck_assert(lg_run_wait(run, 20000));
  struct lg_live live;
  lg_run_live(run, &live); /* after the loops ended: their final publish */
  ck_assert(live.finished);
  ck_assert_int_eq(live.completed, 12);
  ck_assert_int_eq(live.failed, 0);
  ck_assert_int_eq(live.in_flight, 0);
  ck_assert_int_eq(live.output_tokens, 36);
  ck_assert_int_eq(live.input_tokens, 84); /* the client's prompt_len: 7 each */
  ck_assert(live.window.f[FIG_TTFT].valid && live.window.f[FIG_TTFT].n == 12);
  ck_assert(live.window.f[FIG_ITL].valid && live.window.f[FIG_ITL].n == 24);
  ck_assert(fig_get(&live.window, FIG_OUTPUT_TPUT, FIG_VALUE) > 0 &&
            fig_get(&live.window, FIG_REQ_TPUT, FIG_VALUE) > 0);
  /* the whole point: every request, and the result's duration once over */
  ck_assert(live.point.f[FIG_TTFT].n == 12 && live.point.f[FIG_ITL].n == 24 &&
            live.point.f[FIG_E2EL].n == 12);
  ck_assert(live.point.f[FIG_SEND_LAG].n == 12); /* one per request sent, as the result's */
  ck_assert(live.window_from_s == 0 && live.window_s > 0);
  struct lg_result res;
  lg_run_finish(run, &res);
  double duration_s = (double)(res.end_mono_ns - res.start_mono_ns) / 1e9;
  ck_assert_msg(fabs(live.elapsed_s - duration_s) < 1e-9, "%f %f", live.elapsed_s, duration_s);
  double point_out = fig_get(&live.point, FIG_OUTPUT_TPUT, FIG_VALUE);
  ck_assert(fabs(point_out - 36 / duration_s) < 1e-9 * point_out);
  /* every request is in the window: its percentiles are the records' own */
  uint64_t itl_us[24], tpot_us[12], ttft_us[12];
  size_t n_itl = 0;
  for (size_t i = 0; i < res.n_records; i++) {
    const struct lg_record *r = &res.records[i];
    ck_assert_uint_eq(r->n_chunk_gaps, 2);
    for (uint32_t g = 0; g < r->n_chunk_gaps; g++)
      itl_us[n_itl++] = r->chunk_gaps_us[g];
    tpot_us[i] = (uint64_t)((r->e2el_ns - r->ttft_ns) / 1000 / (r->output_tokens - 1));
    ttft_us[i] = (uint64_t)(r->ttft_ns / 1000);
  }
  live_check_percentiles("itl", &live.window.f[FIG_ITL], itl_us, n_itl);
  live_check_percentiles("tpot", &live.window.f[FIG_TPOT], tpot_us, 12);
  live_check_percentiles("ttft", &live.window.f[FIG_TTFT], ttft_us, 12);
  /* one token per chunk, all inside the first window: the window holds them all */
  double window_tokens = fig_get(&live.window, FIG_OUTPUT_TPUT, FIG_VALUE) * live.window_s;
  ck_assert_msg(fabs(window_tokens - 36) < 1e-6, "%f", window_tokens);
  lg_result_free(&res);
  responder_stop();
}
END_TEST

START_TEST(engine_failures_are_classified) {
  responder_start();
  struct {
    const char *path;
    enum lg_failure want;
  } cases[] = {{"/http500", LG_FAIL_HTTP},
               {"/malformed", LG_FAIL_MALFORMED},
               {"/reset", LG_FAIL_TRANSFER},
               {"/nochunk", LG_FAIL_NO_CHUNK},
               {"/stream/llama-error", LG_FAIL_STREAM_ERROR},
               {"/stream/sglang-error", LG_FAIL_STREAM_ERROR},
               {"/stream/no-usage", LG_FAIL_NO_USAGE},
               {"/stream/usage-no-count", LG_FAIL_USAGE_NO_COUNT},
               {"/stream/no-finish", LG_FAIL_NO_FINISH}};
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
    struct lg_result res;
    run_path(cases[c].path, 3, 2, 1, &res);
    for (size_t i = 0; i < res.n_records; i++) {
      const struct lg_record *r = &res.records[i];
      ck_assert_msg(r->failure == cases[c].want, "%s: got %s", cases[c].path,
                    lg_failure_name((enum lg_failure)r->failure));
      ck_assert_ptr_nonnull(r->detail);
      ck_assert_int_eq(r->output_tokens, 0);
      ck_assert_ptr_null(r->chunk_gaps_us);
    }
    if (cases[c].want == LG_FAIL_HTTP) {
      ck_assert_int_eq(res.records[0].http_status, 500);
      ck_assert_ptr_nonnull(strstr(res.records[0].detail, "oops!"));
    }
    if (cases[c].want == LG_FAIL_NO_CHUNK)
      ck_assert_ptr_nonnull(strstr(res.records[0].detail, "Never received a valid chunk"));
    if (cases[c].want == LG_FAIL_STREAM_ERROR) { /* the server's own words are kept */
      ck_assert_ptr_nonnull(strstr(res.records[0].detail, "server error event after HTTP 200"));
      ck_assert_ptr_nonnull(strstr(res.records[0].detail, c == 4 ? "Content-only format" : "aborted"));
      ck_assert_uint_eq(res.records[0].token_chunks, 1); /* kept for the failure */
    }
    lg_result_free(&res);
  }
  /* Nothing listening: connect failures, the run still ends. */
  struct lg_prompt p = {"{}", 2, 1, 1};
  struct lg_config cfg;
  lg_config_init(&cfg);
  cfg.url = "http://127.0.0.1:1/v1/completions";
  cfg.prompts = &p;
  cfg.n_prompts = 1;
  struct st_err err;
  struct lg_run *run = lg_run_start(&cfg, &err);
  ck_assert(lg_run_wait(run, 10000));
  struct lg_result res;
  lg_run_finish(run, &res);
  ck_assert_int_eq(res.records[0].failure, LG_FAIL_CONNECT);
  lg_result_free(&res);
  responder_stop();
}
END_TEST

/* llama.cpp puts usage (and timings) in its last chunk, which also has
 * choices: the count is the server's, the chunk is a token chunk. */
START_TEST(engine_llama_cpp_final_chunk) {
  responder_start();
  struct lg_result res;
  run_path("/stream/llama-ok", 3, 2, 1, &res);
  for (size_t i = 0; i < res.n_records; i++) {
    const struct lg_record *r = &res.records[i];
    ck_assert_msg(r->failure == LG_OK, "%s", r->detail ? r->detail : "");
    ck_assert_int_eq(r->output_tokens, 3);
    ck_assert_int_eq(r->server_prompt_tokens, 5);
    ck_assert_int_eq(r->draft_tokens, 4);
    ck_assert_int_eq(r->draft_accepted, 3);
    ck_assert_uint_eq(r->token_chunks, 3);
  }
  lg_result_free(&res);
  responder_stop();
}
END_TEST

START_TEST(engine_chat_ttft_at_first_text) {
  responder_start();
  struct lg_result res;
  run_path("/chat", 2, 2, 1, &res);
  for (size_t i = 0; i < res.n_records; i++) {
    const struct lg_record *r = &res.records[i];
    ck_assert_int_eq(r->failure, LG_OK);
    ck_assert_msg(r->ttft_ns >= 30 * 1000000LL, "ttft %lld ns", (long long)r->ttft_ns);
    ck_assert_uint_eq(r->n_chunk_gaps, 1); /* "A" -> "B"; the finish chunk is no token */
    ck_assert(r->e2el_ns >= 35 * 1000000LL); /* 30 ms + 5 ms of sleeps before "B" */
    ck_assert_str_eq(r->detail, "AB");
  }
  lg_result_free(&res);
  responder_stop();
}
END_TEST

START_TEST(engine_open_loop_schedule) {
  responder_start();
  for (size_t i = 0; i < 20; i++)
    test_prompts[i] = (struct lg_prompt){"{}", 2, 7, 3};
  char url[128];
  snprintf(url, sizeof(url), "http://127.0.0.1:%d/ok", R.port);
  struct lg_config cfg;
  lg_config_init(&cfg);
  cfg.url = url;
  cfg.prompts = test_prompts;
  cfg.n_prompts = 20;
  cfg.request_rate = 100; /* mean gap 10 ms */
  cfg.seed = 3;
  struct st_err err;
  struct lg_run *run = lg_run_start(&cfg, &err);
  ck_assert(lg_run_wait(run, 20000));
  struct lg_result res;
  lg_run_finish(run, &res);
  ck_assert_int_eq(res.records[0].scheduled_ns, 0);
  uint64_t late_ns[20];
  for (size_t i = 0; i < res.n_records; i++) {
    const struct lg_record *r = &res.records[i];
    ck_assert_int_eq(r->failure, LG_OK);
    ck_assert(i == 0 || r->scheduled_ns >= res.records[i - 1].scheduled_ns);
    ck_assert(r->dispatch_ns >= r->scheduled_ns); /* never early */
    late_ns[i] = (uint64_t)(r->dispatch_ns - r->scheduled_ns);
  }
  /* Sent at its arrival, not at the loop's next wake-up for something else
   * (the 100 ms publish tick would make most of them tens of ms late); the
   * median, so a few wake-ups late on a busy machine do not decide. */
  qsort(late_ns, 20, sizeof(late_ns[0]), live_check_cmp_u64);
  ck_assert_msg(late_ns[9] < 10 * 1000000ULL, "median send lag %.3f ms", late_ns[9] / 1e6);
  /* 19 gamma(1, 10 ms) gaps: mean 190 ms, sd ~44 ms. */
  int64_t last = res.records[19].scheduled_ns;
  ck_assert_msg(last > 40 * 1000000LL && last < 500 * 1000000LL, "last arrival %lld", (long long)last);
  lg_result_free(&res);
  responder_stop();
}
END_TEST

/* Polls the published figures (every 100 ms) until `want` requests are in
 * flight, 20 s at most. */
static void wait_in_flight(struct lg_run *run, int64_t want, struct lg_live *live) {
  for (int i = 0; i < 2000; i++) {
    lg_run_live(run, live);
    if (live->in_flight >= want)
      return;
    clock_sleep_us(10000);
  }
  ck_abort_msg("in flight %lld, want %lld", (long long)live->in_flight, (long long)want);
}

START_TEST(engine_stop_interrupts_and_live) {
  responder_start();
  for (size_t i = 0; i < 8; i++)
    test_prompts[i] = (struct lg_prompt){"{}", 2, 7, 3};
  char url[128];
  snprintf(url, sizeof(url), "http://127.0.0.1:%d/hang", R.port);
  struct lg_config cfg;
  lg_config_init(&cfg);
  cfg.url = url;
  cfg.prompts = test_prompts;
  cfg.n_prompts = 8;
  cfg.max_concurrency = 1;
  cfg.drain_timeout_s = 0.2;
  struct st_err err;
  struct lg_run *run = lg_run_start(&cfg, &err);
  struct lg_live live;
  wait_in_flight(run, 1, &live);
  clock_sleep_us(200000); /* time to break the cap, were it broken */
  lg_run_live(run, &live);
  ck_assert_int_eq(live.in_flight, 1);
  ck_assert_int_eq(live.max_concurrency, 1);
  ck_assert_int_le(atomic_load(&R.max_seen), 1);
  lg_run_set_max_concurrency(run, 3);
  wait_in_flight(run, 3, &live);
  clock_sleep_us(200000);
  lg_run_live(run, &live);
  ck_assert_int_eq(live.in_flight, 3);
  ck_assert_int_eq(live.max_concurrency, 3);
  ck_assert_int_eq(live.total, 8);
  int64_t t0 = clock_mono_ns();
  lg_run_stop(run);
  ck_assert(lg_run_wait(run, 20000));
  /* the requests got their drain time, then were cut (the responder holds
   * them until it stops, so "interrupted" below can only be the cut) */
  ck_assert(clock_mono_ns() - t0 >= 200000000LL);
  struct lg_result res;
  lg_run_finish(run, &res);
  ck_assert(res.interrupted);
  int interrupted = 0, not_sent = 0;
  for (size_t i = 0; i < res.n_records; i++) {
    interrupted += res.records[i].failure == LG_FAIL_INTERRUPTED;
    not_sent += res.records[i].failure == LG_FAIL_NOT_SENT;
  }
  ck_assert_int_eq(interrupted, 3);
  ck_assert_int_eq(not_sent, 5);
  lg_result_free(&res);
  responder_stop();
}
END_TEST

/* --num-workers auto and the client-bound verdict (docs/figures.md). */
START_TEST(client_health_rules) {
  ck_assert_int_eq(lg_parse_num_workers("auto"), LG_NUM_WORKERS_AUTO);
  ck_assert_int_eq(lg_parse_num_workers("4"), 4);
  ck_assert_int_eq(lg_parse_num_workers("64"), 64);
  ck_assert_int_eq(lg_parse_num_workers("0"), -1);
  ck_assert_int_eq(lg_parse_num_workers("65"), -1);
  ck_assert_int_eq(lg_parse_num_workers("3x"), -1);
  ck_assert_int_eq(lg_parse_num_workers(""), -1);
  ck_assert_int_eq(lg_auto_workers(1024, 16), 1024 / LG_STREAMS_PER_LOOP);
  ck_assert_int_eq(lg_auto_workers(1024, 2), 2);   /* bounded by the CPUs */
  ck_assert_int_eq(lg_auto_workers(129, 16), 2);
  ck_assert_int_eq(lg_auto_workers(1, 16), 1);
  ck_assert_int_eq(lg_auto_workers(0, 16), 1);
  ck_assert_int_eq(lg_auto_workers(1000000, 1000), LG_MAX_WORKERS);
  ck_assert_int_ge(lg_usable_cpus(), 1);

  struct fig_set f;
  char why[LG_CLIENT_BOUND_LEN];
  fig_set_clear(&f);
  double calm[] = {0.2, 0.3};
  ck_assert(!lg_client_bound(&f, calm, NULL, 2, why, sizeof why)); /* nothing measured: no verdict */
  ck_assert_str_eq(why, "");
  double busy[] = {0.5, 0.95};
  ck_assert(lg_client_bound(&f, busy, NULL, 2, why, sizeof why));
  ck_assert_msg(strstr(why, "client-bound: loop 2 of 2 busy 95%"), "%s", why);
  ck_assert_msg(!strstr(why, "waiting"), "%s", why);
  double cpu[] = {0.1, 0.2}; /* busy, but mostly preempted: the machine's doing */
  ck_assert(lg_client_bound(&f, busy, cpu, 2, why, sizeof why));
  ck_assert_msg(strstr(why, "busy 95%, on a CPU 20%: waiting for a CPU (a busy machine)"), "%s",
                why);
  fig_set_dist(&f, FIG_RECV_LAG, LG_CLIENT_BOUND_RECV_LAG_MIN_N - 1, 0.5, 0.2, 0.9, 2.5);
  ck_assert(!lg_client_bound(&f, calm, NULL, 2, why, sizeof why)); /* too few: one hiccup */
  fig_set_dist(&f, FIG_RECV_LAG, LG_CLIENT_BOUND_RECV_LAG_MIN_N, 0.5, 0.2, 0.9, 2.5);
  ck_assert(lg_client_bound(&f, calm, NULL, 2, why, sizeof why));
  ck_assert_msg(strstr(why, "receive lag p99 2.50 ms") && strstr(why, "loop 2 of 2 busy 30%") &&
                    strstr(why, "waiting for a CPU"),
                "%s", why);
  fig_set_dist(&f, FIG_RECV_LAG, 100, 0.1, 0.1, 0.2, 0.4);
  fig_set_dist(&f, FIG_SEND_LAG, 100, 20, 15, 30, 40);
  ck_assert(lg_client_bound(&f, calm, NULL, 2, why, sizeof why));
  ck_assert_msg(strstr(why, "send lag p50 15.0 ms"), "%s", why);
  fig_set_dist(&f, FIG_SEND_LAG, 100, 2, 0.5, 30, 200); /* a start burst's tail only */
  ck_assert(!lg_client_bound(&f, calm, NULL, 2, why, sizeof why));
}
END_TEST

static Suite *loadgen_suite(void) {
  Suite *s = suite_create("loadgen");
  TCase *parse = tcase_create("parsing");
  tcase_add_test(parse, sse_lines_survive_every_split);
  tcase_add_test(parse, sse_callback_stops_feed);
  tcase_add_test(parse, chunk_scan_sglang_shapes);
  tcase_add_test(parse, chunk_scan_rejects_malformed);
  tcase_add_test(parse, json_unescape);
  suite_add_tcase(s, parse);
  TCase *data = tcase_create("dataset");
  tcase_add_test(data, rng_uniform_and_gamma);
  tcase_add_test(data, random_workload_lengths_and_ids);
  tcase_add_test(data, random_workload_is_numpys);
  tcase_add_test(data, numpy_rng_draw_for_draw);
  tcase_add_test(data, dsv4_framing_is_encoding_dsv4s);
  tcase_add_test(data, client_health_rules);
  suite_add_tcase(s, data);
  TCase *engine = tcase_create("engine");
  tcase_set_timeout(engine, 60);
  tcase_add_test(engine, engine_completions_records);
  tcase_add_test(engine, engine_concurrency_cap_over_workers);
  tcase_add_test(engine, engine_live_window_figures);
  tcase_add_test(engine, engine_failures_are_classified);
  tcase_add_test(engine, engine_chat_ttft_at_first_text);
  tcase_add_test(engine, engine_llama_cpp_final_chunk);
  tcase_add_test(engine, engine_open_loop_schedule);
  tcase_add_test(engine, engine_stop_interrupts_and_live);
  suite_add_tcase(s, engine);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(loadgen_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
