/* Unit tests of the simulator's pure parts: the performance model, the
 * stream-interval rule, the acceptance model, the HTTP parser, the token
 * counting rule, fault specs and the timer heap. */
#include "sim/sim_internal.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static struct sim_config base_config(const char *model, const char *gpu, int tp) {
  struct sim_config c;
  sim_config_init(&c);
  c.model_path = model;
  c.gpu_name = gpu;
  c.tp_size = tp;
  return c;
}

/* ---------------------------------------------------------------- memory */
/* One flag table: what the sim models moves its timing or capacity (any spelling of a row);
 * what it takes as it is, and what it does not know, is not modelled. */
START_TEST(flag_table_says_what_is_modelled) {
  const char *yes[] = {"mem-fraction-static", "max-running-requests", "tp", "tp-size",
                       "tensor-parallel-size", "cuda-graph-max-bs", "stream-interval",
                       "speculative-algo", "sim-speed", "model-path"};
  const char *no[] = {"host", "port", "decode-log-interval", "disable-radix-cache",
                      "trust-remote-code", "block-size", "max-num-seqs", "", "mem-fraction"};
  for (size_t i = 0; i < ST_ARRAY_LEN(yes); i++)
    ck_assert_msg(sim_flag_modelled(yes[i], strlen(yes[i])), "%s", yes[i]);
  for (size_t i = 0; i < ST_ARRAY_LEN(no); i++)
    ck_assert_msg(!sim_flag_modelled(no[i], strlen(no[i])), "%s", no[i]);
  ck_assert(sim_flag_modelled("tp=8", 2)); /* the name up to '=' */
  struct sim_options o;
  struct opt_spec specs[SIM_OPTIONS_MAX];
  bool modelled[SIM_OPTIONS_MAX];
  size_t n = sim_options_specs(&o, specs, modelled, SIM_OPTIONS_MAX);
  ck_assert_uint_gt(n, 30);
  ck_assert_uint_le(n, SIM_OPTIONS_MAX); /* the table fits the parser's array */
}
END_TEST

START_TEST(kv_capacity_matches_hand_computation) {
  /* Llama-3.1-8B, bf16 weights and KV, one H200, --mem-fraction-static 0.9:
   * total = 143771 MiB = 150754820096 B; weights = 8.03e9 * 2 B;
   * cell = 8 KV heads * 128 * 2 (K and V) * 32 layers * 2 B = 131072 B;
   * rest = (total - weights) - total * 0.1 = 119619338086.4 B -> 912623 tokens. */
  struct sim_config c = base_config("meta-llama/Llama-3.1-8B-Instruct", "h200", 1);
  c.mem_fraction_static = 0.9;
  struct sim_perf p;
  struct st_err err;
  ck_assert_int_eq(sim_perf_init(&p, &c, &err), 0);
  ck_assert_str_eq(p.model->key, "llama-3.1-8b");
  ck_assert_double_eq_tol(p.kv_cell_bytes, 131072.0, 1e-9);
  ck_assert_int_eq(p.max_total_num_tokens, 912623);

  /* DeepSeek-R1 (MLA, fp8 weights), TP8 on H200, fp8 KV, mf 0.85:
   * cell = 576 * 61 layers * 1 B = 35136 B (replicated on every TP rank);
   * weights/GPU = 671e9 / 8 = 83.875e9 B. */
  c = base_config("deepseek-ai/DeepSeek-R1-0528", "h200", 8);
  c.mem_fraction_static = 0.85;
  c.kv_cache_dtype = "fp8_e4m3";
  ck_assert_int_eq(sim_perf_init(&p, &c, &err), 0);
  ck_assert_str_eq(p.weight_dtype, "fp8");
  ck_assert_double_eq_tol(p.kv_cell_bytes, 35136.0, 1e-9);
  double total = 143771.0 * 1048576.0;
  long expect = (long)floor(((total - 671e9 / 8) - total * 0.15) / 35136.0);
  ck_assert_int_eq(p.max_total_num_tokens, expect);
}
END_TEST

START_TEST(mem_fraction_raises_kv_capacity) {
  long last = 0;
  for (double mf = 0.60; mf < 0.96; mf += 0.05) {
    struct sim_config c = base_config("Qwen/Qwen3.5-397B-A17B-FP8", "h200", 8);
    c.mem_fraction_static = mf;
    struct sim_perf p;
    struct st_err err;
    ck_assert_int_eq(sim_perf_init(&p, &c, &err), 0);
    ck_assert_int_gt(p.max_total_num_tokens, last);
    last = p.max_total_num_tokens;
  }
}
END_TEST

START_TEST(weights_that_do_not_fit_fail_like_sglang) {
  struct sim_config c = base_config("deepseek-ai/DeepSeek-R1", "h100", 4);
  struct sim_perf p;
  struct st_err err = {{0}};
  ck_assert_int_eq(sim_perf_init(&p, &c, &err), -1);
  ck_assert_str_eq(err.msg, "Not enough memory. Please try to increase --mem-fraction-static.");
  /* fits on 8 x H200 */
  c = base_config("deepseek-ai/DeepSeek-R1", "h200", 8);
  ck_assert_int_eq(sim_perf_init(&p, &c, &err), 0);
}
END_TEST

START_TEST(default_max_running_requests_follows_sglang_rule) {
  struct sim_config c = base_config("meta-llama/Llama-3.1-8B", "h200", 1);
  struct sim_perf p;
  struct st_err err;
  ck_assert_int_eq(sim_perf_init(&p, &c, &err), 0);
  double r = (double)p.max_total_num_tokens / p.context_length * 512;
  int expect = (int)(r < 2048 ? 2048 : r > 4096 ? 4096 : r);
  ck_assert_int_eq(p.max_running_requests, expect);
  c.max_running_requests = 64;
  ck_assert_int_eq(sim_perf_init(&p, &c, &err), 0);
  ck_assert_int_eq(p.max_running_requests, 64);
}
END_TEST

START_TEST(model_matching_and_precision) {
  ck_assert_str_eq(sim_model_match("Qwen/Qwen3.5-397B-A17B-FP8")->key, "qwen3.5-397b");
  ck_assert_str_eq(sim_model_match("openai/gpt-oss-120b")->key, "gpt-oss-120b");
  ck_assert_ptr_null(sim_model_match("some/unknown-model"));
  struct sim_config c = base_config("Qwen/Qwen3.5-397B-A17B-FP8", "b200", 4);
  struct sim_perf p;
  struct st_err err;
  ck_assert_int_eq(sim_perf_init(&p, &c, &err), 0);
  ck_assert_str_eq(p.weight_dtype, "fp8");
  ck_assert_double_eq_tol(p.weights_bytes_per_gpu, 397e9 / 4, 1.0);
  c.model_path = "nvidia/Qwen3.5-397B-A17B-NVFP4";
  ck_assert_int_eq(sim_perf_init(&p, &c, &err), 0);
  ck_assert_str_eq(p.weight_dtype, "fp4");
  /* unknown model: an error in model mode, a fallback in fixed mode */
  c.model_path = "x/unknown";
  ck_assert_int_eq(sim_perf_init(&p, &c, &err), -1);
  c.fixed_ttft_ms = 1;
  c.fixed_tpot_ms = 1;
  ck_assert_int_eq(sim_perf_init(&p, &c, &err), 0);
}
END_TEST

/* ---------------------------------------------------------------- timing model */
START_TEST(decode_is_memory_bound_and_graph_limit_costs) {
  struct sim_config c = base_config("meta-llama/Llama-3.1-8B", "h200", 1);
  struct sim_perf p;
  struct st_err err;
  ck_assert_int_eq(sim_perf_init(&p, &c, &err), 0);
  /* one request: about weights / (bandwidth * efficiency) */
  double t1 = sim_decode_step_s(&p, 1, 1000);
  double mem = 8.03e9 * 2 / (4.8e12 * p.decode_efficiency);
  ck_assert(t1 > mem && t1 < mem * 1.2);
  /* bigger batches cost more per step but far less per token */
  double t64 = sim_decode_step_s(&p, 64, 64 * 1000);
  ck_assert(t64 > t1);
  ck_assert(t64 / 64 < t1 / 4);
  /* above --cuda-graph-max-bs a step is slower than just below it */
  int g = p.cuda_graph_max_bs;
  ck_assert(sim_decode_step_s(&p, g + 1, (long)(g + 1) * 100) -
                sim_decode_step_s(&p, g, (long)g * 100) >
            200e-6);
  /* prefill of 8k tokens is compute-bound: more than 2 * params * tokens / peak */
  ck_assert(sim_prefill_s(&p, 8192, 0) > 2 * 8.03e9 * 8192 / 989e12);
}
END_TEST

START_TEST(mtp_gain_shrinks_with_concurrency) {
  struct sim_config base = base_config("Qwen/Qwen3.5-397B-A17B-FP8", "h200", 8);
  struct sim_config mtp = base;
  mtp.speculative_algorithm = "EAGLE";
  mtp.speculative_num_steps = 3;
  mtp.speculative_eagle_topk = 1;
  mtp.speculative_num_draft_tokens = 4;
  mtp.spec_v2 = true;
  struct sim_perf pb, pm;
  struct st_err err;
  ck_assert_int_eq(sim_perf_init(&pb, &base, &err), 0);
  ck_assert_int_eq(sim_perf_init(&pm, &mtp, &err), 0);
  static const int concs[] = {1, 4, 16, 64, 256, 1024};
  double first_gain = 0, last_gain = 1e9;
  for (size_t i = 0; i < ST_ARRAY_LEN(concs); i++) {
    double gain = sim_per_user_tokens_per_s(&pm, concs[i], 2048, true) /
                  sim_per_user_tokens_per_s(&pb, concs[i], 2048, true);
    if (i == 0)
      first_gain = gain;
    /* never grows (to rounding) as concurrency grows */
    ck_assert_msg(gain <= last_gain + 1e-3, "gain %.3f at conc %d above %.3f", gain, concs[i],
                  last_gain);
    last_gain = gain;
  }
  ck_assert_msg(first_gain > 1.5, "MTP gain at concurrency 1 is only %.2f", first_gain);
  ck_assert_msg(last_gain < first_gain - 0.5, "gain %.2f at 1024 vs %.2f at 1", last_gain,
                first_gain);
  /* Spec V2 (overlap) makes each verify step cheaper */
  struct sim_config v1 = mtp;
  v1.spec_v2 = false;
  struct sim_perf p1;
  ck_assert_int_eq(sim_perf_init(&p1, &v1, &err), 0);
  ck_assert(sim_spec_step_s(&p1, 8, 8000) > sim_spec_step_s(&pm, 8, 8000));
}
END_TEST

/* ---------------------------------------------------------------- acceptance */
START_TEST(acceptance_mean_matches_model) {
  struct sim_config c = base_config("Qwen/Qwen3.5-397B-A17B-FP8", "h200", 8);
  c.speculative_algorithm = "EAGLE";
  c.speculative_num_steps = 3;
  struct sim_perf p;
  struct st_err err;
  ck_assert_int_eq(sim_perf_init(&p, &c, &err), 0);
  /* closed form: 1 + sum_k prod_{j<=k} a*0.95^j */
  double a = c.accept_chat, expect = 1, reach = 1;
  for (int k = 0; k < 3; k++) {
    reach *= a * pow(0.95, k);
    expect += reach;
  }
  ck_assert_double_eq_tol(sim_expected_accept_len(&p, true), expect, 1e-12);
  uint64_t rng = 42;
  double sum = 0;
  int n = 200000, min_len = 99, max_len = 0;
  for (int i = 0; i < n; i++) {
    int len = sim_draw_accept_len(&p, true, &rng);
    sum += len;
    min_len = len < min_len ? len : min_len;
    max_len = len > max_len ? len : max_len;
  }
  ck_assert_double_eq_tol(sum / n, expect, 0.01);
  ck_assert_int_eq(min_len, 1);
  ck_assert_int_eq(max_len, 4);
  /* raw random-token prompts accept worse */
  ck_assert(sim_expected_accept_len(&p, false) < sim_expected_accept_len(&p, true) - 0.5);
  /* SGLANG_SIMULATE_ACC_LEN pins the mean */
  c.simulate_acc_len = 2.6;
  ck_assert_int_eq(sim_perf_init(&p, &c, &err), 0);
  sum = 0;
  for (int i = 0; i < n; i++)
    sum += sim_draw_accept_len(&p, false, &rng);
  ck_assert_double_eq_tol(sum / n, 2.6, 0.01);
}
END_TEST

/* ---------------------------------------------------------------- stream interval */
/* Output lengths after each step and which of them SGLang sends. */
static int sends(int interval, const long *lens, size_t n, long max_tokens, long *sent) {
  int k = 0;
  for (size_t i = 0; i < n; i++)
    if (sim_stream_should_send(interval, lens[i], lens[i] >= max_tokens))
      sent[k++] = lens[i];
  return k;
}

START_TEST(stream_interval_chunks_like_sglang) {
  long lens[35], sent[35];
  for (int i = 0; i < 35; i++)
    lens[i] = i + 1;
  /* N = 10: outputs 1, 11, 21, 31 and the final 35 */
  ck_assert_int_eq(sends(10, lens, 35, 35, sent), 5);
  ck_assert_int_eq(sent[0], 1);
  ck_assert_int_eq(sent[1], 11);
  ck_assert_int_eq(sent[2], 21);
  ck_assert_int_eq(sent[3], 31);
  ck_assert_int_eq(sent[4], 35);
  /* N = 1: every step */
  ck_assert_int_eq(sends(1, lens, 35, 35, sent), 35);
  /* spec decoding jumps: 1, 4, 7, 11, 13, 16, 21 with N = 5 sends 1, 11, 16, 21(final) */
  long spec[] = {1, 4, 7, 11, 13, 16, 21};
  int k = sends(5, spec, ST_ARRAY_LEN(spec), 21, sent);
  ck_assert_int_eq(k, 4);
  ck_assert_int_eq(sent[1], 11);
  ck_assert_int_eq(sent[2], 16);
  ck_assert_int_eq(sent[3], 21);
}
END_TEST

/* ---------------------------------------------------------------- http parser */
static enum sim_http_result parse(const char *s, struct sim_http_request *r) {
  return sim_http_parse(s, strlen(s), r);
}

START_TEST(http_parser_handles_requests) {
  struct sim_http_request r;
  const char *req = "POST /v1/completions?x=1 HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello"
                    "GET /health HTTP/1.1\r\n\r\n";
  ck_assert_int_eq(parse(req, &r), SIM_HTTP_COMPLETE);
  ck_assert(sim_http_method_is(&r, "POST"));
  ck_assert(sim_http_path_is(&r, "/v1/completions"));
  ck_assert_int_eq(r.body_len, 5);
  ck_assert(memcmp(r.body, "hello", 5) == 0);
  ck_assert(r.keep_alive);
  /* pipelined second request */
  ck_assert_int_eq(parse(req + r.total_bytes, &r), SIM_HTTP_COMPLETE);
  ck_assert(sim_http_path_is(&r, "/health"));
  /* every prefix of a request is incomplete, never an error */
  const char *full = "POST /x HTTP/1.1\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc";
  for (size_t i = 0; i < strlen(full); i++)
    ck_assert_int_eq(sim_http_parse(full, i, &r), SIM_HTTP_INCOMPLETE);
  ck_assert_int_eq(parse(full, &r), SIM_HTTP_COMPLETE);
  ck_assert(!r.keep_alive);
  ck_assert_int_eq(parse("GET / HTTP/1.0\r\n\r\n", &r), SIM_HTTP_COMPLETE);
  ck_assert(!r.keep_alive);
  ck_assert_int_eq(
      parse("POST /x HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 9\r\n\r\n", &r),
      SIM_HTTP_INCOMPLETE);
  ck_assert(r.expect_continue);
}
END_TEST

START_TEST(http_parser_rejects_garbage) {
  struct sim_http_request r;
  ck_assert_int_eq(parse("GARBAGE\r\n\r\n", &r), SIM_HTTP_BAD);
  ck_assert_int_eq(parse("GET /x HTTP/2.0\r\n\r\n", &r), SIM_HTTP_BAD);
  ck_assert_int_eq(parse("GET /x HTTP/1.1\r\nBad Header\r\n\r\n", &r), SIM_HTTP_BAD);
  ck_assert_int_eq(parse("POST /x HTTP/1.1\r\nContent-Length: 12x\r\n\r\n", &r), SIM_HTTP_BAD);
  ck_assert_int_eq(parse("POST /x HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", &r),
                   SIM_HTTP_BAD);
  ck_assert_int_eq(parse("POST /x HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n", &r),
                   SIM_HTTP_BAD);
  ck_assert_int_eq(parse("POST /x HTTP/1.1\r\nContent-Length: 999999999\r\n\r\n", &r),
                   SIM_HTTP_TOO_LARGE);
  ck_assert_int_eq(parse("POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", &r),
                   SIM_HTTP_UNSUPPORTED);
  size_t big = SIM_HTTP_MAX_HEADER_BYTES + 10;
  char *buf = malloc(big);
  memset(buf, 'a', big);
  ck_assert_int_eq(sim_http_parse(buf, big, &r), SIM_HTTP_TOO_LARGE);
  free(buf);
}
END_TEST

/* ---------------------------------------------------------------- tokens */
START_TEST(token_counting_rule) {
  ck_assert_int_eq(sim_count_tokens("", 0), 0);
  const char *s = "Hello world, it's 42!";
  /* Hello | world | , | it | ' | s | 4 | 2 | ! */
  ck_assert_int_eq(sim_count_tokens(s, strlen(s)), 9);
  s = "a\n\nb";
  ck_assert_int_eq(sim_count_tokens(s, strlen(s)), 3);
  s = "caf\xc3\xa9";
  ck_assert_int_eq(sim_count_tokens(s, strlen(s)), 2);
  /* output text counts back to exactly its token count */
  char out[4096] = "";
  for (uint64_t i = 0; i < 300; i++) {
    size_t n;
    const char *w = sim_token_text(i, &n);
    strncat(out, w, n);
  }
  ck_assert_int_eq(sim_count_tokens(out, strlen(out)), 300);
  ck_assert(sim_text_is_chat_formatted("<|im_start|>user\nhi", 19));
  ck_assert(!sim_text_is_chat_formatted("plain text", 10));
}
END_TEST

/* The tokenizer behind /tokenize and /detokenize: len(encode) is the count
 * rule, word ids round-trip through decode, one-letter ids merge as a BPE
 * merges, and the template's overhead is the chat path's. */
START_TEST(tokenizer_round_trip_and_template) {
  const uint32_t vocab = 128256;
  const char *s = "Hello world, it's 42! <|im_start|>user\n hi";
  uint32_t ids[64];
  size_t n = sim_tokenize(s, strlen(s), vocab, ids, 64);
  ck_assert_int_eq((long)n, sim_count_tokens(s, strlen(s)));
  ck_assert_int_eq((long)n, 13);
  ck_assert_uint_eq(ids[9], SIM_TOK_SPECIAL_FIRST); /* <|im_start|> is one token */
  /* consecutive word ids decode to " w1 w2 ..." and encode back to themselves */
  struct sbuf text = {0};
  uint32_t in[200];
  for (uint32_t i = 0; i < 200; i++) {
    in[i] = 1000 + i * 311;
    sim_detokenize_append(&text, in[i], vocab, false);
  }
  uint32_t back[256];
  ck_assert_uint_eq(sim_tokenize(text.data, text.len, vocab, back, 256), 200);
  ck_assert(memcmp(in, back, sizeof in) == 0);
  /* two one-letter ids ("a", "b") merge into one word token */
  sbuf_reset(&text);
  sim_detokenize_append(&text, 'a', vocab, false);
  sim_detokenize_append(&text, 'b', vocab, false);
  ck_assert_str_eq(text.data, "ab");
  ck_assert_uint_eq(sim_tokenize(text.data, text.len, vocab, back, 256), 1);
  /* special ids: kept, or skipped as SGLang's skip_special_tokens default */
  sbuf_reset(&text);
  sim_detokenize_append(&text, SIM_TOK_SPECIAL_FIRST + 1, vocab, false);
  ck_assert_str_eq(text.data, "<|im_end|>");
  sbuf_reset(&text);
  sim_detokenize_append(&text, SIM_TOK_SPECIAL_FIRST + 1, vocab, true);
  ck_assert_uint_eq(text.len, 0);
  /* the rendered template of one message costs what the chat path charges */
  sbuf_reset(&text);
  sim_chat_render_append(&text, "user", "hello there");
  sim_chat_generation_prompt_append(&text);
  ck_assert_int_eq(sim_count_tokens(text.data, text.len),
                   2 + SIM_CHAT_TOKENS_PER_MESSAGE + SIM_CHAT_TOKENS_GENERATION_PROMPT);
  ck_assert(sim_text_is_chat_formatted(text.data, text.len));
  sbuf_free(&text);
}
END_TEST

/* ---------------------------------------------------------------- request bodies */
static int parse_req(enum sim_req_kind kind, const char *body, struct sim_gen_params *g, char *why,
                     size_t why_len) {
  return sim_request_parse(kind, body, strlen(body), 1000, g, why, why_len);
}

START_TEST(request_bodies_parse_and_validate) {
  struct sim_gen_params g;
  char why[768];
  ck_assert_int_eq(
      parse_req(SIM_REQ_COMPLETION,
                "{\"prompt\":[1,2,3],\"max_tokens\":7,\"stream\":true,\"ignore_eos\":true,"
                "\"temperature\":0.0,\"stream_options\":{\"include_usage\":true}}",
                &g, why, sizeof why),
      0);
  ck_assert_int_eq(g.prompt_tokens, 3);
  ck_assert_int_eq(g.max_tokens, 7);
  ck_assert(g.stream && g.include_usage && !g.continuous_usage && !g.chat_prompt);
  /* defaults: 16 tokens for completions (OpenAI), 128 for /generate (SGLang) */
  ck_assert_int_eq(
      parse_req(SIM_REQ_COMPLETION, "{\"prompt\":\"hello world\"}", &g, why, sizeof why), 0);
  ck_assert_int_eq(g.prompt_tokens, 2);
  ck_assert_int_eq(g.max_tokens, 16);
  ck_assert_int_eq(parse_req(SIM_REQ_GENERATE, "{\"input_ids\":[5]}", &g, why, sizeof why), 0);
  ck_assert_int_eq(g.max_tokens, 128);
  /* chat: template overhead, max_completion_tokens wins, chat acceptance */
  ck_assert_int_eq(parse_req(SIM_REQ_CHAT,
                             "{\"messages\":[{\"role\":\"user\",\"content\":\"hi there\"}],"
                             "\"max_tokens\":9,\"max_completion_tokens\":4}",
                             &g, why, sizeof why),
                   0);
  ck_assert_int_eq(g.prompt_tokens,
                   2 + SIM_CHAT_TOKENS_PER_MESSAGE + SIM_CHAT_TOKENS_GENERATION_PROMPT);
  ck_assert_int_eq(g.max_tokens, 4);
  ck_assert(g.chat_prompt);
  /* chat without a limit: up to the context length */
  ck_assert_int_eq(parse_req(SIM_REQ_CHAT, "{\"messages\":[{\"role\":\"user\",\"content\":\"a\"}]}",
                             &g, why, sizeof why),
                   0);
  ck_assert_int_eq(g.prompt_tokens + g.max_tokens, 1000);
  /* a chat-formatted completion prompt accepts like chat */
  ck_assert_int_eq(
      parse_req(SIM_REQ_COMPLETION, "{\"prompt\":\"<|im_start|>user hi\"}", &g, why, sizeof why),
      0);
  ck_assert(g.chat_prompt);
}
END_TEST

START_TEST(request_bodies_rejected_like_sglang) {
  struct sim_gen_params g;
  char why[768];
  static const struct {
    enum sim_req_kind kind;
    const char *body;
    const char *message_part;
  } bad[] = {
      {SIM_REQ_COMPLETION, "{oops", "JSON decode error"},
      {SIM_REQ_COMPLETION, "[1,2]", "JSON decode error"},
      {SIM_REQ_COMPLETION, "{\"max_tokens\":3}", "prompt: Field required"},
      {SIM_REQ_COMPLETION, "{\"prompt\":[1],\"max_tokens\":\"x\"}", "max_tokens"},
      {SIM_REQ_COMPLETION, "{\"prompt\":[1],\"max_tokens\":1.5}", "max_tokens"},
      {SIM_REQ_COMPLETION, "{\"prompt\":[1],\"stream\":\"yes\"}", "stream"},
      {SIM_REQ_COMPLETION, "{\"prompt\":[1],\"temperature\":-1}", "temperature"},
      {SIM_REQ_COMPLETION, "{\"prompt\":[\"a\",\"b\"]}", "batched prompts"},
      {SIM_REQ_COMPLETION, "{\"prompt\":[1,-2]}", "token ids"},
      {SIM_REQ_COMPLETION, "{\"prompt\":\"\"}", "empty"},
      {SIM_REQ_COMPLETION, "{\"prompt\":[1],\"max_tokens\":0}", "at least 1"},
      {SIM_REQ_COMPLETION, "{\"prompt\":[1],\"max_tokens\":1000}",
       "maximum context length of 1000"},
      {SIM_REQ_COMPLETION, "{\"prompt\":[1],\"stream_options\":3}", "stream_options"},
      {SIM_REQ_CHAT, "{\"messages\":[]}", "messages"},
      {SIM_REQ_CHAT, "{\"messages\":[{\"content\":\"x\"}]}", "role"},
      {SIM_REQ_GENERATE, "{\"sampling_params\":{}}", "text or input_ids"},
  };
  for (size_t i = 0; i < ST_ARRAY_LEN(bad); i++) {
    why[0] = '\0';
    ck_assert_msg(parse_req(bad[i].kind, bad[i].body, &g, why, sizeof why) == -1, "accepted: %s",
                  bad[i].body);
    ck_assert_msg(strstr(why, bad[i].message_part) != NULL, "%s: message '%s'", bad[i].body, why);
  }
}
END_TEST

/* ---------------------------------------------------------------- config */
START_TEST(faults_and_validation) {
  struct sim_fault f;
  struct st_err err;
  ck_assert_int_eq(sim_fault_parse("crash-after=3", &f, &err), 0);
  ck_assert_int_eq(f.kind, SIM_FAULT_CRASH_AFTER);
  ck_assert_int_eq(f.n, 3);
  ck_assert_int_eq(sim_fault_parse("http-503", &f, &err), 0);
  ck_assert_int_eq(f.kind, SIM_FAULT_HTTP_503);
  ck_assert_int_eq(sim_fault_parse("stall-after", &f, &err), -1);
  ck_assert_int_eq(sim_fault_parse("meteor", &f, &err), -1);
  ck_assert_int_eq(sim_fault_parse("reset-after=-1", &f, &err), -1);
  struct sim_config c;
  sim_config_init(&c);
  ck_assert_int_eq(sim_config_validate(&c, &err), 0);
  c.mem_fraction_static = 1.5;
  ck_assert_int_eq(sim_config_validate(&c, &err), -1);
  sim_config_init(&c);
  c.fixed_ttft_ms = 5;
  ck_assert_int_eq(sim_config_validate(&c, &err), -1); /* needs both */
  sim_config_init(&c);
  c.gpu_name = "rtx4090";
  ck_assert_int_eq(sim_config_validate(&c, &err), -1);
  sim_config_init(&c);
  c.spec_v2 = true;
  c.speculative_algorithm = "EAGLE";
  c.speculative_eagle_topk = 4;
  ck_assert_int_eq(sim_config_validate(&c, &err), -1);
}
END_TEST

/* ---------------------------------------------------------------- timer heap */
static void no_fire(struct sim_server *srv, struct sim_timer *t) {
  (void)srv;
  (void)t;
}

START_TEST(timer_heap_orders_and_cancels) {
  struct sim_timer_heap h = {0};
  struct sim_timer t[100];
  for (int i = 0; i < 100; i++) {
    sim_timer_init(&t[i], no_fire);
    sim_timer_arm(&h, &t[i], (int64_t)((i * 37) % 100));
  }
  for (int i = 0; i < 100; i += 3)
    sim_timer_cancel(&h, &t[i]);
  sim_timer_arm(&h, &t[1], 1000); /* re-arming moves it */
  int64_t last = -1;
  size_t n = 0;
  struct sim_timer *top;
  while ((top = sim_timer_peek(&h))) {
    ck_assert(top->at_ns >= last);
    last = top->at_ns;
    sim_timer_cancel(&h, top);
    n++;
  }
  ck_assert_int_eq(n, 66);
  ck_assert_int_eq(last, 1000);
  sim_timer_heap_free(&h);
}
END_TEST

int main(void) {
  Suite *s = suite_create("sim");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, kv_capacity_matches_hand_computation);
  tcase_add_test(tc, flag_table_says_what_is_modelled);
  tcase_add_test(tc, tokenizer_round_trip_and_template);
  tcase_add_test(tc, mem_fraction_raises_kv_capacity);
  tcase_add_test(tc, weights_that_do_not_fit_fail_like_sglang);
  tcase_add_test(tc, default_max_running_requests_follows_sglang_rule);
  tcase_add_test(tc, model_matching_and_precision);
  tcase_add_test(tc, decode_is_memory_bound_and_graph_limit_costs);
  tcase_add_test(tc, mtp_gain_shrinks_with_concurrency);
  tcase_add_test(tc, acceptance_mean_matches_model);
  tcase_add_test(tc, stream_interval_chunks_like_sglang);
  tcase_add_test(tc, http_parser_handles_requests);
  tcase_add_test(tc, http_parser_rejects_garbage);
  tcase_add_test(tc, token_counting_rule);
  tcase_add_test(tc, request_bodies_parse_and_validate);
  tcase_add_test(tc, request_bodies_rejected_like_sglang);
  tcase_add_test(tc, faults_and_validation);
  tcase_add_test(tc, timer_heap_orders_and_cancels);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
