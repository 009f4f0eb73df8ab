/* The search core of `servetop tune` (src/tune): --slo and --knob parsing with their errors,
 * the SLO judged on confidence bounds, and the search on synthetic response surfaces (a
 * deterministic function of the knobs and the concurrency, plus noise with known 95%
 * intervals): it finds the true best configuration and concurrency (checked against a brute
 * force over every configuration and concurrency), in far fewer points than a grid, prunes,
 * survives configurations that fail to start, and keeps what it measured when the budget ends. */
#include "tune/tune.h"

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- parsing */
START_TEST(slo_parses_every_target) {
  struct tune_slo slo;
  struct st_err err = {{0}};
  ck_assert_int_eq(tune_slo_parse("ttft_p99_ms=2000,tpot_p99_ms=50,e2el_p99_ms=30000,"
                                  "itl_p99_ms=80.5,min_tok_s_per_user=20",
                                  &slo, &err),
                   0);
  ck_assert(slo.set[TUNE_TTFT_P99_MS] && slo.set[TUNE_MIN_TOK_S_PER_USER]);
  ck_assert_double_eq(slo.target[TUNE_TTFT_P99_MS], 2000);
  ck_assert_double_eq(slo.target[TUNE_TPOT_P99_MS], 50);
  ck_assert_double_eq(slo.target[TUNE_E2EL_P99_MS], 30000);
  ck_assert_double_eq(slo.target[TUNE_ITL_P99_MS], 80.5);
  ck_assert_double_eq(slo.target[TUNE_MIN_TOK_S_PER_USER], 20);
  ck_assert_int_eq(tune_slo_parse("tpot_p99_ms=50", &slo, &err), 0);
  ck_assert(!slo.set[TUNE_TTFT_P99_MS] && slo.set[TUNE_TPOT_P99_MS]);
}
END_TEST

static void slo_fails(const char *text, const char *want) {
  struct tune_slo slo;
  struct st_err err = {{0}};
  ck_assert_msg(tune_slo_parse(text, &slo, &err) == -1, "'%s' accepted", text);
  ck_assert_msg(strstr(err.msg, "--slo") && strstr(err.msg, want), "'%s': got '%s', want '%s'",
                text, err.msg, want);
}

START_TEST(slo_errors_name_the_flag_and_the_part) {
  slo_fails("", "empty");
  slo_fails("ttft_p98_ms=2000", "unknown target 'ttft_p98_ms'");
  slo_fails("ttft_p99_ms=fast", "ttft_p99_ms='fast'");
  slo_fails("ttft_p99_ms=-5", "ttft_p99_ms='-5'");
  slo_fails("ttft_p99_ms=0", "not a positive number");
  slo_fails("ttft_p99_ms=", "ttft_p99_ms=''");
  slo_fails("ttft_p99_ms=1,ttft_p99_ms=2", "'ttft_p99_ms' given twice");
  slo_fails("ttft_p99_ms=1,,tpot_p99_ms=2", "empty part");
  slo_fails("ttft_p99_ms", "'ttft_p99_ms': want KEY=VALUE");
}
END_TEST

START_TEST(knobs_parse_ranges_lists_and_any_flag) {
  struct tune_knob k;
  struct st_err err = {{0}};
  ck_assert_int_eq(tune_knob_parse("kv-cache=0.80:0.92:0.04", &k, &err), 0);
  ck_assert_str_eq(k.name, "kv-cache");
  ck_assert_uint_eq(k.n_values, 4);
  ck_assert_str_eq(k.values[0], "0.80");
  ck_assert_str_eq(k.values[1], "0.84");
  ck_assert_str_eq(k.values[2], "0.88");
  ck_assert_str_eq(k.values[3], "0.92");
  tune_knob_free(&k);
  ck_assert_int_eq(tune_knob_parse("max-batch=64,128,256", &k, &err), 0);
  ck_assert_uint_eq(k.n_values, 3);
  ck_assert_str_eq(k.values[2], "256");
  tune_knob_free(&k);
  ck_assert_int_eq(tune_knob_parse("--cuda-graph-max-bs=64:256:64", &k, &err), 0);
  ck_assert_str_eq(k.name, "cuda-graph-max-bs");
  ck_assert_uint_eq(k.n_values, 4);
  ck_assert_str_eq(k.values[3], "256");
  tune_knob_free(&k);
  ck_assert_int_eq(tune_knob_parse("spec=off,on", &k, &err), 0);
  ck_assert_str_eq(k.values[0], "off");
  ck_assert_str_eq(k.values[1], "on");
  tune_knob_free(&k);
}
END_TEST

static void knob_fails(const char *text, const char *want) {
  struct tune_knob k;
  struct st_err err = {{0}};
  ck_assert_msg(tune_knob_parse(text, &k, &err) == -1, "'%s' accepted", text);
  ck_assert_msg(strstr(err.msg, "--knob") && strstr(err.msg, want), "'%s': got '%s', want '%s'",
                text, err.msg, want);
  ck_assert_ptr_null(k.name);
}

START_TEST(knob_errors_name_the_flag_and_the_part) {
  knob_fails("kv-cache", "want NAME=LO:HI:STEP or NAME=V1,V2");
  knob_fails("=1,2", "no knob name");
  knob_fails("kv cache=1", "'kv cache' has ' '");
  knob_fails("kv-cache=", "no values");
  knob_fails("kv-cache=0.9:0.8:0.01", "HI 0.8 is below LO 0.9");
  knob_fails("kv-cache=0.8:0.9:0", "STEP '0'");
  knob_fails("kv-cache=0.8:x:0.1", "HI 'x'");
  knob_fails("kv-cache=a:0.9:0.1", "LO 'a'");
  knob_fails("kv-cache=0.8:0.9", "LO:HI:STEP");
  knob_fails("max-batch=64,,128", "empty value");
  knob_fails("max-batch=64,64", "'64' is given twice");
  knob_fails("max-batch=1:100000:1", "at most 1000");
}
END_TEST

START_TEST(slo_holds_on_bounds_not_points) {
  struct tune_slo slo;
  struct st_err err;
  ck_assert_int_eq(tune_slo_parse("ttft_p99_ms=2000,min_tok_s_per_user=20", &slo, &err), 0);
  struct tune_point pt = {0};
  pt.figure[TUNE_TTFT_P99_MS] = (struct tune_estimate){1900, 1800, 1999};
  pt.figure[TUNE_MIN_TOK_S_PER_USER] = (struct tune_estimate){25, 21, 29};
  ck_assert(tune_slo_holds(&slo, &pt));
  pt.figure[TUNE_TTFT_P99_MS].hi = 2001; /* the point is inside, its upper bound is not */
  ck_assert(!tune_slo_holds(&slo, &pt));
  pt.figure[TUNE_TTFT_P99_MS].hi = 1999;
  pt.figure[TUNE_MIN_TOK_S_PER_USER].lo = 19; /* the floor: its lower bound must clear it */
  ck_assert(!tune_slo_holds(&slo, &pt));
  pt.figure[TUNE_MIN_TOK_S_PER_USER].lo = NAN; /* an unknown bound never holds */
  ck_assert(!tune_slo_holds(&slo, &pt));
}
END_TEST

/* ---------------------------------------------------------------- synthetic surfaces */
/* Knobs kv-cache (4 values), max-batch (3), spec (2): 24 configurations, started at the
 * recipe's 0.84 / 128 / off. For configuration (a, b, s):
 *   Cstar      = 30 + 25a + 20b - 10s                    (TTFT reaches 2000 ms at Cstar)
 *   TTFT(c)    = 2000 c / Cstar ms
 *   throughput = 1000 (1 + 0.1a)(1 + 0.05b)(s ? 1.4 : 1) c / (c + 16) tok/s
 * each times (1 + e), e in [-1%, 1%] a deterministic hash of (config, c), with 95% interval
 * +-3% of the estimate. fail_a/fail_b (when >= 0) fails to start. */
struct surface {
  int fail_a, fail_b;
  int calls;
  int last_cfg_key, restarts;
};

static double noise(int key, int conc) {
  uint64_t z = (uint64_t)key * 0x9E3779B97F4A7C15ull + (uint64_t)conc * 0xBF58476D1CE4E5B9ull;
  z ^= z >> 31;
  z *= 0x94D049BB133111EBull;
  z ^= z >> 29;
  return ((double)(z >> 11) * 0x1.0p-53 * 2.0 - 1.0) * 0.01;
}

static int surface_measure(void *ctx, const struct tune_config *cfg, int conc,
                           struct tune_point *out, char *why, size_t why_len,
                           struct st_err *err) {
  (void)err;
  struct surface *s = ctx;
  s->calls++;
  int a = (int)cfg->idx[0], b = (int)cfg->idx[1], sp = (int)cfg->idx[2];
  int key = a * 100 + b * 10 + sp;
  if (key != s->last_cfg_key)
    s->restarts++;
  s->last_cfg_key = key;
  if (a == s->fail_a && b == s->fail_b) {
    snprintf(why, why_len, "torch.OutOfMemoryError: CUDA out of memory (kv %d, batch %d)", a, b);
    return TUNE_START_FAILED;
  }
  double cstar = 30 + 25 * a + 20 * b - 10 * sp;
  double e = noise(key, conc);
  double ttft = 2000.0 * conc / cstar * (1 + e);
  double tp = 1000 * (1 + 0.1 * a) * (1 + 0.05 * b) * (sp ? 1.4 : 1.0) * conc / (conc + 16.0) *
              (1 + e);
  out->figure[TUNE_TTFT_P99_MS] = (struct tune_estimate){ttft, ttft * 0.97, ttft * 1.03};
  out->throughput = (struct tune_estimate){tp, tp * 0.97, tp * 1.03};
  return 0;
}

struct space3 {
  struct tune_knob knobs[3];
  struct tune_space space;
};

static void space3_init(struct space3 *s) {
  struct st_err err;
  ck_assert_int_eq(tune_knob_parse("kv-cache=0.80:0.92:0.04", &s->knobs[0], &err), 0);
  ck_assert_int_eq(tune_knob_parse("max-batch=64,128,256", &s->knobs[1], &err), 0);
  ck_assert_int_eq(tune_knob_parse("spec=off,on", &s->knobs[2], &err), 0);
  memset(&s->space, 0, sizeof s->space);
  s->space.knobs = s->knobs;
  s->space.n_knobs = 3;
  s->space.start.idx[0] = 1;
  s->space.start.idx[1] = 1;
  s->space.start.idx[2] = 0;
}

static void space3_free(struct space3 *s) {
  for (int i = 0; i < 3; i++)
    tune_knob_free(&s->knobs[i]);
}

/* The truth: every configuration at every concurrency, by the same callback and judgement;
 * a configuration's answer is the last concurrency before the first that fails (with noise,
 * the judgement may flip back and forth in a band around the boundary), its goodput the
 * throughput there. */
static void brute_force(struct surface *surf, const struct tune_slo *slo, int conc_max,
                        int *best_key, int *best_conc, double *best_goodput, int *points) {
  *best_goodput = -1;
  *points = 0;
  for (int a = 0; a < 4; a++)
    for (int b = 0; b < 3; b++)
      for (int sp = 0; sp < 2; sp++) {
        struct tune_config cfg = {{(size_t)a, (size_t)b, (size_t)sp}};
        double last = -1;
        int last_conc = 0;
        bool holding = true;
        for (int c = 1; c <= conc_max; c++) {
          struct tune_point pt = {0};
          char why[64];
          (*points)++;
          if (surface_measure(surf, &cfg, c, &pt, why, sizeof why, NULL) != 0)
            break;
          holding = holding && tune_slo_holds(slo, &pt);
          if (holding) {
            last = pt.throughput.point;
            last_conc = c;
          }
        }
        if (last > *best_goodput) {
          *best_goodput = last;
          *best_key = a * 100 + b * 10 + sp;
          *best_conc = last_conc;
        }
      }
}

static int key_of(const struct tune_config *cfg) {
  return (int)(cfg->idx[0] * 100 + cfg->idx[1] * 10 + cfg->idx[2]);
}

static void check_finds_truth(int fail_a, int fail_b) {
  struct space3 sp;
  space3_init(&sp);
  struct tune_slo slo;
  struct st_err err = {{0}};
  ck_assert_int_eq(tune_slo_parse("ttft_p99_ms=2000", &slo, &err), 0);
  struct tune_options opt = {.conc_min = 1, .conc_max = 512};
  struct surface surf = {fail_a, fail_b, 0, -1, 0};
  struct tune_result res;
  ck_assert_int_eq(tune_search(&sp.space, &slo, &opt, surface_measure, &surf, &res, &err), 0);
  int true_key = -1, true_conc = 0, grid_points = 0;
  double true_goodput;
  struct surface truth = {fail_a, fail_b, 0, -1, 0};
  brute_force(&truth, &slo, 512, &true_key, &true_conc, &true_goodput, &grid_points);
  ck_assert_int_ge(res.winner, 0);
  const struct tune_config_result *w = &res.configs[res.winner];
  char desc[128];
  tune_config_describe(&sp.space, &w->cfg, desc, sizeof desc);
  int pruned = 0, failed = 0;
  for (size_t i = 0; i < res.n_configs; i++) {
    pruned += res.configs[i].status == TUNE_CFG_PRUNED;
    if (res.configs[i].status == TUNE_CFG_START_FAILED) {
      failed++;
      ck_assert_ptr_nonnull(strstr(res.configs[i].why, "CUDA out of memory"));
      ck_assert_int_eq(res.configs[i].points, 1);
      ck_assert_int_eq(res.configs[i].best_conc, 0);
    }
  }
  printf("winner %s at conc %d, goodput %.1f (truth: key %03d at conc %d, %.1f); %d points in "
         "%zu configurations (%d pruned, %d failed to start) against %d for every "
         "configuration at every concurrency and 240 for a 1,2,4..512 sweep of each\n",
         desc, w->best_conc, w->goodput.point, true_key, true_conc, true_goodput, res.points,
         res.n_configs, pruned, failed, grid_points);
  /* the same configuration; its concurrency in the noise band of the boundary (the +-1% noise
   * moves TTFT by 2% at most), its goodput's interval holding the true one */
  ck_assert_int_eq(key_of(&w->cfg), true_key);
  ck_assert_int_le(abs(w->best_conc - true_conc), 1 + true_conc / 50);
  ck_assert_double_le(w->goodput.lo, true_goodput);
  ck_assert_double_ge(w->goodput.hi, true_goodput);
  ck_assert_int_ge(res.runner_up, 0);
  ck_assert_double_le(res.configs[res.runner_up].goodput.point, w->goodput.point);
  ck_assert_int_ne(key_of(&res.configs[res.runner_up].cfg), true_key);
  /* points: far fewer than the grid, and fewer than even a doubling sweep of every config */
  ck_assert_int_eq(res.points, surf.calls);
  ck_assert_int_lt(res.points * 50, grid_points);
  ck_assert_int_lt(res.points, 240);
  ck_assert_int_gt(pruned, 0);
  /* one configuration at a time: each visited configuration is one start */
  ck_assert_int_eq(surf.restarts, (int)res.n_configs);
  if (fail_a >= 0)
    ck_assert_int_gt(failed, 0);
  tune_result_free(&res);
  space3_free(&sp);
}

START_TEST(search_finds_the_true_best_in_few_points) {
  check_finds_truth(-1, -1);
}
END_TEST

/* The best configuration of the surface (kv 0.92, batch 256) fails to start: recorded with the
 * server's reason, the search goes on and finds the best of the others. */
START_TEST(search_survives_configs_that_fail_to_start) {
  check_finds_truth(3, 2);
}
END_TEST

static int one_config_measure(void *ctx, const struct tune_config *cfg, int conc,
                              struct tune_point *out, char *why, size_t why_len,
                              struct st_err *err) {
  (void)cfg, (void)why, (void)why_len, (void)err;
  int *calls = ctx;
  (*calls)++;
  double ttft = conc <= 37 ? 1000.0 : 3000.0; /* holds up to 37 exactly */
  out->figure[TUNE_TTFT_P99_MS] = (struct tune_estimate){ttft, ttft * 0.9, ttft * 1.1};
  out->throughput = (struct tune_estimate){conc * 10.0, conc * 9.0, conc * 11.0};
  return 0;
}

struct stop_ctx {
  int calls, seen_points;
  atomic_int stop;
};
static int stop_measure(void *ctx, const struct tune_config *cfg, int conc, struct tune_point *out,
                        char *why, size_t why_len, struct st_err *err) {
  struct stop_ctx *c = ctx;
  return one_config_measure(&c->calls, cfg, conc, out, why, why_len, err);
}
static void stop_on_point(void *ctx, const struct tune_result *so_far) {
  struct stop_ctx *c = ctx;
  c->seen_points = (int)so_far->n_probes;
  if (so_far->n_probes == 3)
    atomic_store(&c->stop, 1); /* as Ctrl-C after the third point */
}

/* Every measured point is kept with its configuration, concurrency and judgement; the progress
 * callback sees each; a stop ends the search before the next point and keeps what it has. */
START_TEST(probes_are_recorded_and_stop_keeps_them) {
  struct tune_slo slo;
  struct st_err err = {{0}};
  ck_assert_int_eq(tune_slo_parse("ttft_p99_ms=2000", &slo, &err), 0);
  struct tune_space space = {0};
  struct stop_ctx ctx = {0};
  struct tune_options opt = {.conc_min = 1, .conc_max = 1024, .on_point = stop_on_point,
                             .stop = &ctx.stop};
  struct tune_result res;
  ck_assert_int_eq(tune_search(&space, &slo, &opt, stop_measure, &ctx, &res, &err), 0);
  ck_assert(res.stopped);
  ck_assert_int_eq(res.end, TUNE_END_STOPPED);
  ck_assert_int_eq(ctx.calls, 3);
  ck_assert_int_eq(ctx.seen_points, 3);
  ck_assert_uint_eq(res.n_probes, 3);
  for (size_t i = 0; i < res.n_probes; i++) {
    ck_assert_uint_eq(res.probes[i].config, 0);
    ck_assert_int_eq(res.probes[i].concurrency, 1 << i);
    ck_assert(res.probes[i].holds);
    ck_assert_double_eq(res.probes[i].pt.throughput.point, 10.0 * (1 << i));
  }
  ck_assert_int_eq(res.configs[0].best_conc, 4);
  ck_assert_int_eq(res.winner, 0);
  tune_result_free(&res);
  /* without a stop: every point recorded, the failing ones too */
  ctx = (struct stop_ctx){0};
  opt.stop = NULL;
  opt.on_point = NULL;
  ck_assert_int_eq(tune_search(&space, &slo, &opt, stop_measure, &ctx, &res, &err), 0);
  ck_assert(!res.stopped);
  ck_assert_int_eq(res.end, TUNE_END_DONE);
  ck_assert_uint_eq(res.n_probes, 12);
  int failing = 0;
  for (size_t i = 0; i < res.n_probes; i++)
    failing += !res.probes[i].holds;
  ck_assert_int_eq(failing, 4); /* 64, 48, 40, 38 */
  tune_result_free(&res);
}
END_TEST

/* A callback that answers TUNE_STOPPED (the time budget ran out while a server started) ends
 * the search as a stop does: that point is not counted, what was measured is kept. */
static int stopped_measure(void *ctx, const struct tune_config *cfg, int conc,
                           struct tune_point *out, char *why, size_t why_len, struct st_err *err) {
  int *calls = ctx;
  if (*calls == 2)
    return TUNE_STOPPED;
  return one_config_measure(calls, cfg, conc, out, why, why_len, err);
}

START_TEST(a_stopped_point_ends_the_search_keeping_what_was_measured) {
  struct tune_slo slo;
  struct st_err err = {{0}};
  ck_assert_int_eq(tune_slo_parse("ttft_p99_ms=2000", &slo, &err), 0);
  struct tune_space space = {0};
  struct tune_options opt = {.conc_min = 1, .conc_max = 1024};
  struct tune_result res;
  int calls = 0;
  ck_assert_int_eq(tune_search(&space, &slo, &opt, stopped_measure, &calls, &res, &err), 0);
  ck_assert(res.stopped && res.out_of_budget);
  ck_assert_int_eq(res.points, 2);
  ck_assert_uint_eq(res.n_probes, 2);
  ck_assert_int_eq(res.configs[0].best_conc, 2);
  ck_assert_int_eq(res.configs[0].status, TUNE_CFG_OUT_OF_BUDGET);
  ck_assert_int_eq(res.winner, 0);
  tune_result_free(&res);
}
END_TEST

/* A point whose p99 interval is unknown (too few requests): the callback's note is the
 * configuration's why, so "no configuration held the SLO" says why. */
static int unknown_measure(void *ctx, const struct tune_config *cfg, int conc,
                           struct tune_point *out, char *why, size_t why_len, struct st_err *err) {
  (void)ctx;
  (void)cfg;
  (void)err;
  for (int f = 0; f < TUNE_N_FIGURES; f++)
    out->figure[f] = (struct tune_estimate){10, NAN, NAN};
  out->throughput = (struct tune_estimate){conc * 10.0, conc * 9.0, conc * 11.0};
  snprintf(why, why_len, "p99 interval unknown (20 requests < 368)");
  return 0;
}

START_TEST(a_note_on_a_point_becomes_the_configurations_why) {
  struct tune_slo slo;
  struct st_err err = {{0}};
  ck_assert_int_eq(tune_slo_parse("ttft_p99_ms=2000", &slo, &err), 0);
  ck_assert(tune_slo_has_p99(&slo, NULL));
  struct tune_slo floor_only;
  ck_assert_int_eq(tune_slo_parse("min_tok_s_per_user=5", &floor_only, &err), 0);
  ck_assert(!tune_slo_has_p99(&floor_only, NULL));
  struct tune_space space = {0};
  for (int grid = 0; grid < 2; grid++) {
    struct tune_options opt = {.conc_min = 1, .conc_max = 8, .grid = grid};
    struct tune_result res;
    ck_assert_int_eq(tune_search(&space, &slo, &opt, unknown_measure, NULL, &res, &err), 0);
    ck_assert_int_eq(res.winner, -1);
    ck_assert_int_eq(res.configs[0].status, TUNE_CFG_NONE_HOLDS);
    ck_assert_str_eq(res.configs[0].why, "p99 interval unknown (20 requests < 368)");
    tune_result_free(&res);
  }
}
END_TEST

static struct tune_probe fprobe(double user, double tput, bool holds) {
  struct tune_probe p = {0};
  p.pt.figure[TUNE_MIN_TOK_S_PER_USER].point = user;
  p.pt.throughput.point = tput;
  p.holds = holds;
  return p;
}

START_TEST(frontier_keeps_the_undominated_holding_points) {
  struct tune_probe probes[] = {
      fprobe(50, 100, true),  /* 0: frontier (fastest per user) */
      fprobe(40, 90, true),   /* 1: dominated by 0 */
      fprobe(30, 300, true),  /* 2: frontier */
      fprobe(20, 900, false), /* 3: would dominate, but the SLO failed */
      fprobe(10, 250, true),  /* 4: dominated by 2 */
      fprobe(5, 400, true),   /* 5: frontier (most throughput) */
  };
  struct tune_result res = {0};
  res.probes = probes;
  res.n_probes = sizeof probes / sizeof probes[0];
  size_t out[6];
  size_t n = tune_frontier(&res, out);
  ck_assert_uint_eq(n, 3);
  ck_assert_uint_eq(out[0], 5); /* by tok/s per user ascending */
  ck_assert_uint_eq(out[1], 2);
  ck_assert_uint_eq(out[2], 0);
  struct tune_result copy;
  tune_result_copy(&copy, &res);
  ck_assert_ptr_ne(copy.probes, res.probes);
  ck_assert_uint_eq(tune_frontier(&copy, out), 3);
  tune_result_free(&copy);
  /* the same on arrays; equal tok/s per user: the later point first from the top, as the
   * order measured breaks the tie */
  double user[] = {10, 10, 20, 20, 5};
  double tput[] = {300, 300, 100, 100, 200};
  bool holds[] = {true, true, true, true, true};
  size_t o[5];
  ck_assert_uint_eq(tune_frontier_of(user, tput, holds, 5, o), 2);
  ck_assert_uint_eq(o[0], 1);
  ck_assert_uint_eq(o[1], 3);
}
END_TEST

/* A configuration marked failed to start after it measured (it died mid-search): its points
 * held but count for nothing, so none of them is on the frontier. */
START_TEST(frontier_skips_a_configuration_that_died) {
  struct tune_probe probes[] = {
      fprobe(50, 100, true), /* 0: frontier */
      fprobe(5, 400, true),  /* 1: frontier */
      fprobe(60, 900, true), /* 2: would dominate both, but its configuration died */
  };
  probes[2].config = 1;
  struct tune_config_result configs[2] = {
      {.status = TUNE_CFG_BEST_FOUND, .best_conc = 4},
      {.status = TUNE_CFG_START_FAILED},
  };
  struct tune_result res = {0};
  res.probes = probes;
  res.n_probes = 3;
  res.configs = configs;
  res.n_configs = 2;
  ck_assert(tune_probe_counts(&res, 0));
  ck_assert(!tune_probe_counts(&res, 2));
  size_t out[3];
  ck_assert_uint_eq(tune_frontier(&res, out), 2);
  ck_assert_uint_eq(out[0], 1);
  ck_assert_uint_eq(out[1], 0);
  configs[1].status = TUNE_CFG_BEST_FOUND; /* alive: it is the whole frontier */
  ck_assert_uint_eq(tune_frontier(&res, out), 1);
  ck_assert_uint_eq(out[0], 2);
}
END_TEST

START_TEST(one_config_bracket_and_bisect) {
  struct tune_slo slo;
  struct st_err err = {{0}};
  ck_assert_int_eq(tune_slo_parse("ttft_p99_ms=2000", &slo, &err), 0);
  struct tune_space space = {0};
  struct tune_options opt = {.conc_min = 1, .conc_max = 1024};
  int calls = 0;
  struct tune_result res;
  ck_assert_int_eq(tune_search(&space, &slo, &opt, one_config_measure, &calls, &res, &err), 0);
  ck_assert_uint_eq(res.n_configs, 1);
  ck_assert_int_eq(res.configs[0].best_conc, 37);
  ck_assert_int_eq(res.configs[0].fail_conc, 38);
  /* bracket 1 2 4 8 16 32 64 (7), bisect 32..64: 48 40 36 38 37 (5) */
  ck_assert_int_eq(res.points, 12);
  ck_assert_int_le(res.points, tune_points_per_config_max(&opt));
  ck_assert_int_eq(tune_points_per_config_max(&opt), 20); /* 1..1024: 11 + 9 at worst */
  ck_assert_int_eq(res.winner, 0);
  ck_assert_int_eq(res.runner_up, -1);
  tune_result_free(&res);
  /* the budget: 5 points, then the search stops and keeps what it measured */
  opt.max_points = 5;
  calls = 0;
  ck_assert_int_eq(tune_search(&space, &slo, &opt, one_config_measure, &calls, &res, &err), 0);
  ck_assert(res.out_of_budget);
  ck_assert_int_eq(res.end, TUNE_END_POINT_BUDGET);
  ck_assert_int_eq(res.points, 5);
  ck_assert_int_eq(calls, 5);
  ck_assert_int_eq(res.configs[0].status, TUNE_CFG_OUT_OF_BUDGET);
  ck_assert_int_eq(res.configs[0].best_conc, 16);
  ck_assert_int_eq(res.winner, 0); /* a lower bound of its best, kept */
  tune_result_free(&res);
  /* the range bound: 100..200 is 2 bracket points and a bisection of 100 (7) */
  struct tune_options narrow = {.conc_min = 100, .conc_max = 200};
  ck_assert_int_eq(tune_points_per_config_max(&narrow), 9);
}
END_TEST

/* Two configurations, knob "cap" = a, b, started at a. a: SLO holds up to 10, throughput
 * 10 c. b: holds up to 20, throughput 8 c up to 20, then it falls (retraction past the KV
 * limit): 50 at 32. b's throughput at 32 (50) is below a's goodput (100), yet b wins (160 at
 * 20): a falling throughput must not prune. With per_user, each point also reports its tok/s
 * per user (throughput / c): for b at 16 that is 8, so below its failures at 32 and 24 the
 * bound is 31 x 8 and 23 x 8, above a's 100: no pruning. A third value c (holds up to 5,
 * throughput 8 c) fails at 8 with 64 tok/s, rising: pruned, and with per_user its bound
 * 7 x 8 = 56 says the same. */
struct falling {
  bool per_user;
};

static int falling_measure(void *ctx, const struct tune_config *cfg, int conc,
                           struct tune_point *out, char *why, size_t why_len,
                           struct st_err *err) {
  (void)why, (void)why_len, (void)err;
  const struct falling *f = ctx;
  int limit = cfg->idx[0] == 0 ? 10 : cfg->idx[0] == 1 ? 20 : 5;
  double tp = cfg->idx[0] == 0 ? 10.0 * conc : cfg->idx[0] == 1 ? (conc <= 20 ? 8.0 * conc : 50.0)
                                                               : 8.0 * conc;
  double ttft = conc <= limit ? 100.0 : 5000.0;
  out->figure[TUNE_TTFT_P99_MS] = (struct tune_estimate){ttft, ttft, ttft};
  out->throughput = (struct tune_estimate){tp, tp, tp};
  if (f->per_user) {
    double u = tp / conc;
    out->figure[TUNE_MIN_TOK_S_PER_USER] = (struct tune_estimate){u, u, u};
  }
  return 0;
}

START_TEST(falling_throughput_is_not_pruned) {
  struct tune_slo slo;
  struct st_err err = {{0}};
  ck_assert_int_eq(tune_slo_parse("ttft_p99_ms=2000", &slo, &err), 0);
  struct tune_knob k;
  ck_assert_int_eq(tune_knob_parse("cap=a,b,c", &k, &err), 0);
  struct tune_space space = {&k, 1, {{0}}};
  struct tune_options opt = {.conc_min = 1, .conc_max = 64};
  for (int per_user = 0; per_user <= 1; per_user++) {
    struct falling f = {per_user != 0};
    struct tune_result res;
    ck_assert_int_eq(tune_search(&space, &slo, &opt, falling_measure, &f, &res, &err), 0);
    ck_assert_uint_eq(res.n_configs, 3);
    ck_assert_int_eq(res.configs[1].status, TUNE_CFG_BEST_FOUND);
    ck_assert_int_eq(res.configs[1].best_conc, 20);
    ck_assert_int_eq(res.winner, 1);
    ck_assert_int_eq(res.runner_up, 0);
    /* c: pruned at its failure at 8 (64 tok/s, rising, below 160) */
    ck_assert_int_eq(res.configs[2].status, TUNE_CFG_PRUNED);
    ck_assert_ptr_nonnull(strstr(res.configs[2].why, "below the best goodput 160"));
    tune_result_free(&res);
  }
  tune_knob_free(&k);
}
END_TEST

static int broken_measure(void *ctx, const struct tune_config *cfg, int conc,
                          struct tune_point *out, char *why, size_t why_len, struct st_err *err) {
  (void)ctx, (void)cfg, (void)conc, (void)out, (void)why, (void)why_len;
  return err_setf(err, "the load generator failed");
}

START_TEST(search_input_and_callback_errors) {
  struct tune_slo slo;
  struct st_err err = {{0}};
  ck_assert_int_eq(tune_slo_parse("ttft_p99_ms=2000", &slo, &err), 0);
  struct tune_space space = {0};
  struct tune_options opt = {.conc_min = 1, .conc_max = 64};
  struct tune_result res;
  ck_assert_int_eq(tune_search(&space, &slo, &opt, broken_measure, NULL, &res, &err), -1);
  ck_assert_str_eq(err.msg, "the load generator failed");
  struct tune_options bad = {.conc_min = 64, .conc_max = 8};
  ck_assert_int_eq(tune_search(&space, &slo, &bad, one_config_measure, NULL, &res, &err), -1);
  ck_assert_ptr_nonnull(strstr(err.msg, "lowest concurrency 64 is above the highest 8"));
}
END_TEST

int main(void) {
  Suite *s = suite_create("tune");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, slo_parses_every_target);
  tcase_add_test(tc, slo_errors_name_the_flag_and_the_part);
  tcase_add_test(tc, knobs_parse_ranges_lists_and_any_flag);
  tcase_add_test(tc, knob_errors_name_the_flag_and_the_part);
  tcase_add_test(tc, slo_holds_on_bounds_not_points);
  tcase_add_test(tc, search_finds_the_true_best_in_few_points);
  tcase_add_test(tc, search_survives_configs_that_fail_to_start);
  tcase_add_test(tc, one_config_bracket_and_bisect);
  tcase_add_test(tc, probes_are_recorded_and_stop_keeps_them);
  tcase_add_test(tc, frontier_keeps_the_undominated_holding_points);
  tcase_add_test(tc, frontier_skips_a_configuration_that_died);
  tcase_add_test(tc, a_note_on_a_point_becomes_the_configurations_why);
  tcase_add_test(tc, falling_throughput_is_not_pruned);
  tcase_add_test(tc, search_input_and_callback_errors);
  tcase_add_test(tc, a_stopped_point_ends_the_search_keeping_what_was_measured);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
