/* engine: server log lines (formats from reference/server-protocol.md C.5, D.2, D.3), read
 * by the parser of whichever engine prints them (eng_log_parse_line with no engine). */
#include "engine/engine.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NEAR(a, b) (fabs((a) - (b)) < 1e-9)

START_TEST(sglang_kv_capacity_with_rank_tags) {
  struct eng_log_record r;
  ck_assert_int_eq(eng_log_parse_line(NULL, "[2026-06-23 01:10:14 DP0 TP0 EP0] max_total_num_tokens="
                                         "1172224, chunked_prefill_size=4096, max_prefill_tokens="
                                         "16384, max_running_requests=4096, context_len=163840, "
                                         "available_gpu_mem=12.34 GB",
                                         &r),
                   ENG_LOG_KV_CAPACITY);
  ck_assert_str_eq(r.rank_tag, "DP0 TP0 EP0");
  ck_assert(r.has & ENG_LOG_HAS_MAX_TOTAL_TOKENS);
  ck_assert_int_eq(r.max_total_num_tokens, 1172224);
  ck_assert_int_eq(r.max_running_requests, 4096);
  ck_assert_int_eq(r.context_len, 163840);
}
END_TEST

START_TEST(sglang_decode_line_with_spec_and_iter) {
  struct eng_log_record r;
  ck_assert_int_eq(
      eng_log_parse_line(NULL, "[2026-06-23 01:11:02 TP0] Decode batch [1234], #running-req: 64, "
                            "#token: 81920, token usage: 0.07, accept len: 3.21, accept rate: "
                            "0.80, cuda graph: True, gen throughput (token/s): 5123.45, "
                            "#queue-req: 3, ",
                            &r),
      ENG_LOG_DECODE);
  ck_assert_str_eq(r.rank_tag, "TP0");
  ck_assert_int_eq(r.iter, 1234);
  ck_assert_int_eq(r.running, 64);
  ck_assert_int_eq(r.num_tokens, 81920);
  ck_assert(NEAR(r.token_usage_frac, 0.07));
  ck_assert(NEAR(r.accept_length, 3.21));
  ck_assert(NEAR(r.accept_rate_frac, 0.80));
  ck_assert(NEAR(r.gen_tok_per_s, 5123.45));
  ck_assert_int_eq(r.queued, 3);
  unsigned want = ENG_LOG_HAS_RUNNING | ENG_LOG_HAS_NUM_TOKENS | ENG_LOG_HAS_TOKEN_USAGE |
                  ENG_LOG_HAS_ACCEPT_LENGTH | ENG_LOG_HAS_ACCEPT_RATE |
                  ENG_LOG_HAS_GEN_THROUGHPUT | ENG_LOG_HAS_QUEUED;
  ck_assert_uint_eq(r.has, want);
}
END_TEST

START_TEST(sglang_decode_variants) {
  struct eng_log_record r;
  /* no spec fields, no iter, no trailing comma (newest) */
  eng_log_parse_line(NULL, "[2026-06-23 01:11:02] Decode batch, #running-req: 8, #token: 100, token "
                        "usage: 0.01, cuda graph: False, gen throughput (token/s): 99.00, "
                        "#queue-req: 0",
                        &r);
  ck_assert_int_eq(r.kind, ENG_LOG_DECODE);
  ck_assert_int_eq(r.iter, -1);
  ck_assert_str_eq(r.rank_tag, "");
  ck_assert(!(r.has & ENG_LOG_HAS_ACCEPT_LENGTH));
  ck_assert_int_eq(r.queued, 0);
  ck_assert(r.has & ENG_LOG_HAS_QUEUED);
  /* very old: "Decode batch." */
  eng_log_parse_line(NULL, "Decode batch. #running-req: 5, #token: 10, token usage: 0.50, gen "
                        "throughput (token/s): 10.5, #queue-req: 1, ",
                        &r);
  ck_assert_int_eq(r.kind, ENG_LOG_DECODE);
  ck_assert_int_eq(r.running, 5);
  ck_assert(NEAR(r.token_usage_frac, 0.5));
  /* hybrid model: full token usage stands for token usage */
  eng_log_parse_line(NULL, "[2026-01-01 00:00:00 TP0] Decode batch, #running-req: 2, #full token: "
                        "300, full token usage: 0.12, #swa token: 10, swa token usage: 0.01, cuda "
                        "graph: True, gen throughput (token/s): 1.00, #queue-req: 0, ",
                        &r);
  ck_assert_int_eq(r.num_tokens, 300);
  ck_assert(NEAR(r.token_usage_frac, 0.12));
}
END_TEST

START_TEST(sglang_prefill_line) {
  struct eng_log_record r;
  eng_log_parse_line(NULL, "[2026-06-23 01:10:59 DP1 TP1 EP1] Prefill batch, #new-seq: 4, #new-token: "
                        "4096, #cached-token: 128, token usage: 0.03, #running-req: 60, "
                        "#queue-req: 12, cuda graph: False, input throughput (token/s): 20123.5",
                        &r);
  ck_assert_int_eq(r.kind, ENG_LOG_PREFILL);
  ck_assert_str_eq(r.rank_tag, "DP1 TP1 EP1");
  ck_assert_int_eq(r.new_seq, 4);
  ck_assert_int_eq(r.new_tokens, 4096);
  ck_assert_int_eq(r.cached_tokens, 128);
  ck_assert_int_eq(r.running, 60);
  ck_assert_int_eq(r.queued, 12);
  ck_assert(NEAR(r.input_tok_per_s, 20123.5));
}
END_TEST

START_TEST(vllm_lines) {
  struct eng_log_record r;
  eng_log_parse_line(NULL, "(EngineCore_DP0 pid=1234) INFO 06-23 01:10:14 [kv_cache_utils.py:1087] "
                        "GPU KV cache size: 1,234,567 tokens",
                        &r);
  ck_assert_int_eq(r.kind, ENG_LOG_KV_CAPACITY);
  ck_assert_str_eq(r.rank_tag, "EngineCore_DP0");
  ck_assert_int_eq(r.max_total_num_tokens, 1234567);

  eng_log_parse_line(NULL, "INFO 06-23 01:11:14 [loggers.py:123] Engine 000: Avg prompt throughput: "
                        "1024.5 tokens/s, Avg generation throughput: 3000.0 tokens/s, Running: 32 "
                        "reqs, Waiting: 4 reqs, GPU KV cache usage: 12.5%, Prefix cache hit rate: "
                        "50.0%",
                        &r);
  ck_assert_int_eq(r.kind, ENG_LOG_STATS);
  ck_assert(NEAR(r.input_tok_per_s, 1024.5));
  ck_assert(NEAR(r.gen_tok_per_s, 3000.0));
  ck_assert_int_eq(r.running, 32);
  ck_assert_int_eq(r.queued, 4);
  ck_assert(NEAR(r.token_usage_frac, 0.125));
  ck_assert(NEAR(r.prefix_hit_frac, 0.5));

  eng_log_parse_line(NULL, "INFO 06-23 01:11:14 [metrics.py:88] SpecDecoding metrics: Mean acceptance "
                        "length: 2.85, Accepted throughput: 100.00 tokens/s, Drafted throughput: "
                        "150.00 tokens/s, Accepted: 1850 tokens, Drafted: 3000 tokens, "
                        "Per-position acceptance rate: 0.900, 0.620, 0.330, Avg Draft acceptance "
                        "rate: 61.7%",
                        &r);
  ck_assert_int_eq(r.kind, ENG_LOG_SPEC);
  ck_assert(NEAR(r.accept_length, 2.85));
  ck_assert_int_eq(r.accepted_tokens, 1850);
  ck_assert_int_eq(r.drafted_tokens, 3000);
  ck_assert_int_eq(r.n_positions, 3);
  ck_assert(NEAR(r.per_position_rate_frac[1], 0.62));
  ck_assert(NEAR(r.accept_rate_frac, 0.617));

  ck_assert_int_eq(eng_log_parse_line(NULL, "INFO:     Application startup complete.", &r),
                   ENG_LOG_READY);
  ck_assert_int_eq(eng_log_parse_line(NULL, "[2026-06-23 01:12:00] The server is fired up and ready "
                                         "to roll!",
                                         &r),
                   ENG_LOG_READY);
}
END_TEST

START_TEST(garbage_and_partial_lines) {
  struct eng_log_record r;
  ck_assert_int_eq(eng_log_parse_line(NULL, "", &r), ENG_LOG_OTHER);
  ck_assert_int_eq(eng_log_parse_line(NULL, "[", &r), ENG_LOG_OTHER);
  ck_assert_int_eq(eng_log_parse_line(NULL, "Loading safetensors checkpoint shards: 50%", &r),
                   ENG_LOG_OTHER);
  eng_log_parse_line(NULL, "Decode batch [", &r);
  ck_assert_int_eq(r.kind, ENG_LOG_DECODE);
  ck_assert_uint_eq(r.has, 0);
  eng_log_parse_line(NULL, "Decode batch, #running-req: , token usage: abc, #queue-req: 7", &r);
  ck_assert_uint_eq(r.has, ENG_LOG_HAS_QUEUED);
  eng_log_parse_line(NULL, "GPU KV cache size: lots", &r);
  ck_assert_int_eq(r.kind, ENG_LOG_OTHER);
}
END_TEST

START_TEST(state_sums_kv_capacity_over_ranks_and_dp) {
  struct eng_log_state st;
  struct eng_log_record r;
  eng_log_state_init(&st);
  eng_log_parse_line(NULL, "[2026-06-23 01:10:14 DP0 TP0 EP0] max_total_num_tokens=1000, x=1", &r);
  eng_log_state_add(&st, &r, 1);
  eng_log_parse_line(NULL, "[2026-06-23 01:10:14 DP1 TP1 EP1] max_total_num_tokens=1000, x=1", &r);
  eng_log_state_add(&st, &r, 2);
  eng_log_parse_line(NULL, "[2026-06-23 01:10:14 DP0 TP0 EP0] max_total_num_tokens=1000, x=1", &r);
  eng_log_state_add(&st, &r, 3); /* same rank again: not counted twice */
  ck_assert(st.max_total_num_tokens_valid);
  ck_assert_int_eq(st.max_total_num_tokens, 2000);

  eng_log_state_init(&st);
  eng_log_parse_line(NULL, "[2026-06-23 01:10:10] server_args=ServerArgs(model_path='m', tp_size=8, "
                        "dp_size=8, enable_dp_attention=True)",
                        &r);
  ck_assert_int_eq(r.kind, ENG_LOG_SERVER_ARGS);
  ck_assert_int_eq(r.dp_size, 8);
  eng_log_state_add(&st, &r, 1);
  eng_log_parse_line(NULL, "[2026-06-23 01:10:14 DP0 TP0 EP0] max_total_num_tokens=500", &r);
  eng_log_state_add(&st, &r, 2);
  ck_assert_int_eq(st.max_total_num_tokens, 4000); /* one tagged line x dp_size */
}
END_TEST

/* Found by fuzz_launcher_log: huge capacities on several ranks, or one times
 * dp_size, saturate instead of overflowing int64. */
START_TEST(state_kv_capacity_saturates) {
  struct eng_log_state st;
  struct eng_log_record r;
  eng_log_state_init(&st);
  eng_log_parse_line(NULL, "[t TP0] max_total_num_tokens=8000000000000000000", &r);
  eng_log_state_add(&st, &r, 1);
  eng_log_parse_line(NULL, "[t TP1] max_total_num_tokens=5000000000000000000", &r);
  eng_log_state_add(&st, &r, 2);
  ck_assert(st.max_total_num_tokens == INT64_MAX);

  eng_log_state_init(&st);
  eng_log_parse_line(NULL, "[t] server_args=ServerArgs(dp_size=8)", &r);
  eng_log_state_add(&st, &r, 1);
  eng_log_parse_line(NULL, "[t DP0 TP0] max_total_num_tokens=4000000000000000000", &r);
  eng_log_state_add(&st, &r, 2);
  ck_assert(st.max_total_num_tokens == INT64_MAX);
}
END_TEST

START_TEST(state_tracks_load_and_spec) {
  struct eng_log_state st;
  struct eng_log_record r;
  eng_log_state_init(&st);
  eng_log_parse_line(NULL, "Decode batch, #running-req: 8, #token: 100, token usage: 0.25, cuda "
                        "graph: True, gen throughput (token/s): 99.50, #queue-req: 2",
                        &r);
  eng_log_state_add(&st, &r, 10);
  ck_assert(st.load_valid && st.token_usage_valid && st.gen_valid);
  ck_assert(!st.spec_seen);
  ck_assert_int_eq(st.running, 8);
  ck_assert_int_eq(st.queued, 2);
  ck_assert(NEAR(st.gen_tok_per_s, 99.5));
  eng_log_parse_line(NULL, "Decode batch, #running-req: 9, #token: 100, token usage: 0.30, accept "
                        "len: 2.50, accept rate: 0.38, gen throughput (token/s): 120.00, "
                        "#queue-req: 0",
                        &r);
  eng_log_state_add(&st, &r, 20);
  ck_assert(st.spec_seen);
  ck_assert(NEAR(st.accept_length, 2.5));
  ck_assert(NEAR(st.accept_rate_frac, 0.38));
  ck_assert_int_eq(st.n_decode_lines, 2);
  ck_assert_int_eq(st.last_update_mono_ns, 20);
  /* a prefill line's input throughput does not replace the decode figure */
  eng_log_parse_line(NULL, "Prefill batch, #new-seq: 1, #new-token: 10, #cached-token: 0, token "
                        "usage: 0.31, #running-req: 9, #queue-req: 0, input throughput "
                        "(token/s): 5000.0",
                        &r);
  eng_log_state_add(&st, &r, 30);
  ck_assert(NEAR(st.gen_tok_per_s, 120.0));
  ck_assert_int_eq(st.n_prefill_lines, 1);
}
END_TEST

int main(void) {
  Suite *s = suite_create("engine_log");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, sglang_kv_capacity_with_rank_tags);
  tcase_add_test(tc, sglang_decode_line_with_spec_and_iter);
  tcase_add_test(tc, sglang_decode_variants);
  tcase_add_test(tc, sglang_prefill_line);
  tcase_add_test(tc, vllm_lines);
  tcase_add_test(tc, garbage_and_partial_lines);
  tcase_add_test(tc, state_sums_kv_capacity_over_ranks_and_dp);
  tcase_add_test(tc, state_kv_capacity_saturates);
  tcase_add_test(tc, state_tracks_load_and_spec);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
