/* The full grid (src/tune/full_grid.c), the reference `servetop tune` is measured against: every
 * configuration (the recipe's setting first), each at every concurrency up to its first failure,
 * nothing pruned; the answer per configuration is the last concurrency before that failure; a
 * configuration that fails to start is recorded and the grid goes on; the budget keeps what was
 * measured. And the search finds the grid's winner on the same surface in fewer points. */
#include "tune/tune.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Two knobs: slots (1 2 4 8) and a draft model (off on). A configuration holds up to
 * 8 x slots concurrency (16 x slots with the draft, but only with 4 slots or more); its
 * throughput is 100 x concurrency (+25% with the draft). Slots 8 with the draft fails to
 * start. */
struct surface {
  int calls, starts_failed;
};

static int measure(void *vctx, const struct tune_config *cfg, int conc, struct tune_point *out,
                   char *why, size_t why_len, struct st_err *err) {
  (void)err;
  struct surface *s = vctx;
  s->calls++;
  int slots = 1 << cfg->idx[0];
  bool draft = cfg->idx[1] == 1;
  if (slots == 8 && draft) {
    s->starts_failed++;
    snprintf(why, why_len, "out of memory (draft)");
    return TUNE_START_FAILED;
  }
  int holds_to = draft && slots >= 4 ? 16 * slots : 8 * slots;
  double ttft = conc <= holds_to ? 50 : 500;
  for (int f = 0; f < TUNE_N_FIGURES; f++)
    out->figure[f] = (struct tune_estimate){NAN, NAN, NAN};
  out->figure[TUNE_TTFT_P99_MS] = (struct tune_estimate){ttft, ttft * 0.9, ttft * 1.1};
  double tp = 100.0 * conc * (draft ? 1.25 : 1);
  out->throughput = (struct tune_estimate){tp, tp * 0.95, tp * 1.05};
  return 0;
}

static struct tune_knob knobs[2];
static char *slot_values[] = {"1", "2", "4", "8"}, *spec_values[] = {"off", "on"};

static void space_init(struct tune_space *space) {
  knobs[0] = (struct tune_knob){"np", slot_values, 4};
  knobs[1] = (struct tune_knob){"spec", spec_values, 2};
  memset(space, 0, sizeof *space);
  space->knobs = knobs;
  space->n_knobs = 2;
  space->start.idx[0] = 2; /* the recipe: np=4, spec=off */
}

START_TEST(grid_measures_every_configuration) {
  struct tune_space space;
  space_init(&space);
  struct tune_slo slo;
  struct st_err err = {{0}};
  ck_assert_int_eq(tune_slo_parse("ttft_p99_ms=100", &slo, &err), 0);
  struct tune_options opt = {.conc_min = 1, .conc_max = 128, .grid = true};
  struct surface s = {0};
  struct tune_result res;
  ck_assert_int_eq(tune_search(&space, &slo, &opt, measure, &s, &res, &err), 0);
  ck_assert_uint_eq(res.n_configs, 8);
  ck_assert_uint_eq(res.configs[0].cfg.idx[0], 2); /* the recipe's setting first */
  ck_assert_uint_eq(res.configs[0].cfg.idx[1], 0);
  int points = 0, best = 0;
  for (size_t i = 0; i < res.n_configs; i++) {
    const struct tune_config_result *c = &res.configs[i];
    int slots = 1 << c->cfg.idx[0];
    bool draft = c->cfg.idx[1] == 1;
    if (slots == 8 && draft) {
      ck_assert_int_eq(c->status, TUNE_CFG_START_FAILED);
      ck_assert_ptr_nonnull(strstr(c->why, "out of memory"));
      points += 1;
      continue;
    }
    int want = draft && slots >= 4 ? 16 * slots : 8 * slots;
    ck_assert_int_eq(c->status, TUNE_CFG_BEST_FOUND);
    ck_assert_int_eq(c->best_conc, want);
    ck_assert_int_eq(c->fail_conc, want + 1);
    ck_assert_int_eq(c->points, want + 1); /* 1 .. want, and the first failure */
    points += want + 1;
    if (c->goodput.point > best)
      best = (int)c->goodput.point;
  }
  ck_assert_int_eq(res.points, points);
  ck_assert_int_eq(s.calls, points);
  ck_assert_int_eq(s.starts_failed, 1);
  ck_assert_int_ge(res.winner, 0); /* np=4 with the draft: 64 x 125 = 8000 */
  ck_assert_uint_eq(res.configs[res.winner].cfg.idx[0], 2);
  ck_assert_uint_eq(res.configs[res.winner].cfg.idx[1], 1);
  ck_assert_int_eq(best, 8000);
  ck_assert_int_ge(res.runner_up, 0); /* np=8 without: 64 x 100 */
  ck_assert_uint_eq(res.configs[res.runner_up].cfg.idx[0], 3);
  ck_assert_uint_eq(res.configs[res.runner_up].cfg.idx[1], 0);
  /* the search over the same space finds the same winner in fewer points */
  struct tune_result found;
  struct surface s2 = {0};
  opt.grid = false;
  ck_assert_int_eq(tune_search(&space, &slo, &opt, measure, &s2, &found, &err), 0);
  ck_assert_int_ge(found.winner, 0);
  ck_assert_mem_eq(found.configs[found.winner].cfg.idx, res.configs[res.winner].cfg.idx,
                   2 * sizeof(size_t));
  ck_assert_int_eq(found.configs[found.winner].best_conc, 64);
  ck_assert_int_lt(found.points, res.points);
  tune_result_free(&found);
  tune_result_free(&res);
}
END_TEST

START_TEST(grid_budget_keeps_what_it_measured) {
  struct tune_space space;
  space_init(&space);
  struct tune_slo slo;
  struct st_err err = {{0}};
  ck_assert_int_eq(tune_slo_parse("ttft_p99_ms=100", &slo, &err), 0);
  struct tune_options opt = {.conc_min = 1, .conc_max = 128, .max_points = 7, .grid = true};
  struct surface s = {0};
  struct tune_result res;
  ck_assert_int_eq(tune_grid(&space, &slo, &opt, measure, &s, &res, &err), 0);
  ck_assert(res.out_of_budget);
  ck_assert_int_eq(res.end, TUNE_END_POINT_BUDGET);
  ck_assert_int_eq(res.points, 7);
  ck_assert_uint_eq(res.n_configs, 1); /* np=4 off holds to 32: cut at 7 */
  ck_assert_int_eq(res.configs[0].status, TUNE_CFG_OUT_OF_BUDGET);
  ck_assert_int_eq(res.configs[0].best_conc, 7);
  ck_assert_int_eq(res.winner, 0); /* what it reached still competes */
  tune_result_free(&res);
  struct tune_options bad = {.conc_min = 9, .conc_max = 8, .grid = true};
  ck_assert_int_eq(tune_grid(&space, &slo, &bad, measure, &s, &res, &err), -1);
}
END_TEST

int main(void) {
  Suite *suite = suite_create("tune_grid");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, grid_measures_every_configuration);
  tcase_add_test(tc, grid_budget_keeps_what_it_measured);
  suite_add_tcase(suite, tc);
  SRunner *sr = srunner_create(suite);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
