/* Where the SGLang knobs matter in the sim (issue 20.5): KV capacity against the workload's
 * tokens (admission, queueing, retraction), --max-running-requests, --cuda-graph-max-bs. The
 * rules of sched.c are checked by hand; their effects with the virtual run (batching.c's
 * scheduler over a closed-loop workload in simulated time: deterministic, nothing timed).
 * The workload is long: isl 8192, osl 1024, three requests per client. The model is
 * Llama-3.1-70B (bf16) at TP2 on H200: KV cell 163,840 B per token per GPU, so
 * --mem-fraction-static 0.60 / 0.70 / 0.85 hold 121,172 / 213,185 / 351,206 tokens: 13, 23
 * and 38 requests of 9,216 tokens. */
#include "sim/sim_internal.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static struct sim_config llama70b(double mf) {
  struct sim_config c;
  sim_config_init(&c);
  c.model_path = "meta-llama/Llama-3.1-70B-Instruct";
  c.gpu_name = "h200";
  c.tp_size = 2;
  c.mem_fraction_static = mf;
  return c;
}

static struct sim_vrun_result run(const struct sim_config *c, int conc, long isl, long osl) {
  struct sim_vrun_workload w = {conc, isl, osl, conc * 3};
  struct sim_vrun_result r;
  struct st_err err = {{0}};
  ck_assert_msg(sim_vrun(c, &w, &r, &err) == 0, "%s", err.msg);
  return r;
}

/* ---------------------------------------------------------------- the rules by hand */
START_TEST(retraction_picks_least_output_and_resets_ratio) {
  struct sim_req r[4];
  memset(r, 0, sizeof r);
  long out[4] = {500, 10, 10, 300}, prompt[4] = {1000, 1000, 4000, 1000};
  struct sim_req *v[4];
  for (int i = 0; i < 4; i++) {
    r[i].seq = (uint64_t)i + 1;
    r[i].prompt_tokens = prompt[i];
    r[i].out_len = out[i];
    r[i].max_tokens = 1000;
    v[i] = &r[i];
  }
  double ratio = 0.3;
  /* room for the step: nothing retracted, ratio untouched */
  ck_assert_int_eq(sim_sched_retract(v, 4, 4, 1, &ratio), 0);
  ck_assert_double_eq(ratio, 0.3);
  /* 2 free slots for 4 requests: the request with the least output and the longest prompt
   * (r[2]: 10 out, 4000 prompt) goes first; it frees 4010 slots, enough for the other 3 to
   * decode 20 steps (60), so it is the only one */
  ck_assert_int_eq(sim_sched_retract(v, 4, 2, 1, &ratio), 1);
  ck_assert_ptr_eq(v[3], &r[2]);
  ck_assert_ptr_eq(v[0], &r[0]); /* most output first */
  ck_assert_ptr_eq(v[1], &r[3]);
  ck_assert_ptr_eq(v[2], &r[1]);
  /* new ratio = (decoded + 20 x kept) / sum of max_new of the kept = (810 + 60) / 3000 */
  ck_assert_double_eq_tol(ratio, 870.0 / 3000.0, 1e-12);
  /* never the last request */
  double one = 0.5;
  ck_assert_int_eq(sim_sched_retract(v, 1, 0, 1, &one), 0);
}
END_TEST

START_TEST(admission_estimate_and_ratio_decay) {
  struct sim_req r;
  memset(&r, 0, sizeof r);
  r.prompt_tokens = 8192;
  r.max_tokens = 10000;
  r.out_len = 100;
  /* holds prompt + output; expects min(9900, 4096) x ratio more */
  ck_assert_int_eq(sim_sched_req_tokens(&r), 8292);
  ck_assert_double_eq_tol(sim_sched_req_future(&r, 0.5), 2048.0, 1e-9);
  ck_assert(sim_sched_admit_fits(0, &r, 0.5, 8292 + 2048));
  ck_assert(!sim_sched_admit_fits(1, &r, 0.5, 8292 + 2048));
  /* 0.7 decays linearly to 0.7 x 0.14 = 0.098 in 600 decode steps, then stays */
  double ratio = SIM_SCHED_INIT_NEW_TOKEN_RATIO;
  for (int i = 0; i < 300; i++)
    ratio = sim_sched_ratio_decay(ratio);
  ck_assert_double_eq_tol(ratio, 0.7 - 300 * (0.7 - 0.098) / 600, 1e-9);
  for (int i = 0; i < 400; i++)
    ratio = sim_sched_ratio_decay(ratio);
  ck_assert_double_eq_tol(ratio, 0.098, 1e-12);
}
END_TEST

START_TEST(cuda_graph_memory_comes_out_of_kv_only_past_the_reserve) {
  struct sim_perf a, b;
  struct st_err err;
  /* mf 0.97: the reserve is 3% of 140.4 GiB = 4.2 GiB; graphs for 1024 (0.5 GiB + 4 MiB x
   * 1024 = 4.5 GiB) plus activations (0.75 GiB) do not fit in it, for 256 (1.5 + 0.75) do */
  struct sim_config c = llama70b(0.97);
  c.cuda_graph_max_bs = 256;
  ck_assert_int_eq(sim_perf_init(&a, &c, &err), 0);
  c.cuda_graph_max_bs = 1024;
  ck_assert_int_eq(sim_perf_init(&b, &c, &err), 0);
  double total = 143771.0 * 1048576.0, gib = 1073741824.0;
  double excess = (0.5 * gib + 1024 * 4 * 1048576.0 + 0.25 * gib + 8192 * 64 * 1024.0) -
                  total * 0.03;
  ck_assert_double_gt(excess, 0);
  /* the pool loses the excess: excess / 163840 B tokens (+-1 for the floors) */
  ck_assert_int_ge(a.max_total_num_tokens - b.max_total_num_tokens, (long)(excess / 163840) - 1);
  ck_assert_int_le(a.max_total_num_tokens - b.max_total_num_tokens, (long)(excess / 163840) + 1);
  /* at mf 0.90 the reserve (14 GiB) holds either: the same capacity */
  c = llama70b(0.90);
  c.cuda_graph_max_bs = 256;
  ck_assert_int_eq(sim_perf_init(&a, &c, &err), 0);
  c.cuda_graph_max_bs = 1024;
  ck_assert_int_eq(sim_perf_init(&b, &c, &err), 0);
  ck_assert_int_eq(a.max_total_num_tokens, b.max_total_num_tokens);
}
END_TEST

/* ---------------------------------------------------------------- effects */
START_TEST(small_mem_fraction_queues_and_retracts) {
  struct sim_config small = llama70b(0.60), large = llama70b(0.85);
  struct sim_vrun_result s = run(&small, 32, 8192, 1024);
  struct sim_vrun_result l = run(&large, 32, 8192, 1024);
  printf("conc 32, mf 0.60: cap %ld, max running %d, max queue %d, retracted %llu, TTFT p99 "
         "%.1f s, %.0f tok/s\n",
         s.kv_capacity_tokens, s.max_running, s.max_queue, (unsigned long long)s.retractions,
         s.ttft_p99_s, s.output_tok_s);
  printf("conc 32, mf 0.85: cap %ld, max running %d, max queue %d, retracted %llu, TTFT p99 "
         "%.1f s, %.0f tok/s\n",
         l.kv_capacity_tokens, l.max_running, l.max_queue, (unsigned long long)l.retractions,
         l.ttft_p99_s, l.output_tok_s);
  ck_assert_int_eq(s.kv_capacity_tokens, 121172);
  ck_assert_int_eq(l.kv_capacity_tokens, 351206);
  /* 0.60: at most 121172 / 8192 = 14 prompts fit, the rest queue; optimistic admission
   * (ratio 0.7 of the output) overflows as outputs grow: requests are retracted */
  ck_assert_int_le(s.max_running, 14);
  ck_assert_int_ge(s.max_queue, 32 - 14);
  ck_assert_uint_gt(s.retractions, 0);
  /* 0.85: all 32 x 9216 = 294912 tokens fit: no queue, no retraction */
  ck_assert_int_eq(l.max_running, 32);
  ck_assert_uint_eq(l.retractions, 0);
  ck_assert_double_gt(s.ttft_p99_s, 2 * l.ttft_p99_s);
  ck_assert_double_lt(s.output_tok_s, 0.8 * l.output_tok_s);
}
END_TEST

/* The tuner's question: the highest concurrency whose TTFT p99 is within 60 s. */
static int best_conc(double mf) {
  static const int concs[] = {4, 8, 16, 32, 64};
  struct sim_config c = llama70b(mf);
  int best = 0;
  for (size_t i = 0; i < sizeof concs / sizeof concs[0]; i++) {
    struct sim_vrun_result r = run(&c, concs[i], 8192, 1024);
    printf("mf %.2f conc %2d: TTFT p99 %6.1f s, TPOT %5.1f ms, %4.0f tok/s, retracted %llu\n", mf,
           concs[i], r.ttft_p99_s, r.tpot_mean_s * 1e3, r.output_tok_s,
           (unsigned long long)r.retractions);
    if (r.ttft_p99_s <= 60.0)
      best = concs[i];
  }
  return best;
}

START_TEST(best_concurrency_under_ttft_slo_moves_with_mem_fraction) {
  ck_assert_int_eq(best_conc(0.60), 8);
  ck_assert_int_eq(best_conc(0.70), 16);
  ck_assert_int_eq(best_conc(0.85), 32);
}
END_TEST

START_TEST(max_running_requests_caps_batch_and_throughput) {
  struct sim_config c = llama70b(0.85);
  struct sim_vrun_result free_run = run(&c, 32, 8192, 1024);
  c.max_running_requests = 8;
  struct sim_vrun_result capped = run(&c, 32, 8192, 1024);
  printf("conc 32, mf 0.85: %.0f tok/s uncapped, %.0f tok/s at --max-running-requests 8\n",
         free_run.output_tok_s, capped.output_tok_s);
  ck_assert_int_eq(capped.max_running, 8);
  ck_assert_int_ge(capped.max_queue, 24);
  ck_assert_uint_eq(capped.retractions, 0);
  ck_assert_double_lt(capped.output_tok_s, 0.7 * free_run.output_tok_s);
  /* the capped run equals an uncapped run at concurrency 8 in throughput terms */
  c.max_running_requests = 0;
  struct sim_vrun_result conc8 = run(&c, 8, 8192, 1024);
  ck_assert_double_lt(fabs(capped.output_tok_s / conc8.output_tok_s - 1.0), 0.05);
}
END_TEST

START_TEST(cuda_graph_max_bs_below_concurrency_costs_tpot) {
  /* short requests (no KV pressure): only the graph limit differs */
  struct sim_config c = llama70b(0.85);
  c.cuda_graph_max_bs = 32;
  struct sim_vrun_result graph = run(&c, 32, 1024, 256);
  c.cuda_graph_max_bs = 16;
  struct sim_vrun_result eager = run(&c, 32, 1024, 256);
  printf("conc 32: TPOT %.3f ms with --cuda-graph-max-bs 32, %.3f ms with 16 (%llu of %llu "
         "decode steps eager)\n",
         graph.tpot_mean_s * 1e3, eager.tpot_mean_s * 1e3,
         (unsigned long long)eager.eager_decode_steps, (unsigned long long)eager.decode_steps);
  ck_assert_uint_eq(graph.eager_decode_steps, 0);
  ck_assert_uint_gt(eager.eager_decode_steps, eager.decode_steps / 2);
  /* each eager step costs 80 layers x 20 us - 150 us = 1.45 ms more (docs/sim.md) */
  double extra_ms = (eager.tpot_mean_s - graph.tpot_mean_s) * 1e3;
  double share = (double)eager.eager_decode_steps / (double)eager.decode_steps;
  ck_assert_double_gt(extra_ms, 0.5 * 1.45 * share);
  ck_assert_double_lt(extra_ms, 1.45 * 1.05);
  ck_assert_double_gt(graph.output_tok_s, eager.output_tok_s);
}
END_TEST

static Suite *sim_capacity_suite(void) {
  Suite *s = suite_create("sim_capacity");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, retraction_picks_least_output_and_resets_ratio);
  tcase_add_test(tc, admission_estimate_and_ratio_decay);
  tcase_add_test(tc, cuda_graph_memory_comes_out_of_kv_only_past_the_reserve);
  tcase_add_test(tc, small_mem_fraction_queues_and_retracts);
  tcase_add_test(tc, best_concurrency_under_ttft_slo_moves_with_mem_fraction);
  tcase_add_test(tc, max_running_requests_caps_batch_and_throughput);
  tcase_add_test(tc, cuda_graph_max_bs_below_concurrency_costs_tpot);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(sim_capacity_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? 0 : 1;
}
