/* Points to the answer: the tune search (src/tune) against a full grid over the same space, on
 * synthetic response surfaces (issue 20.6; docs/tune.md). A surface is a deterministic function
 * of the knobs and the concurrency plus noise with a known 95% interval, so the grid's answer
 * is the truth. Prints, per surface, the points each way and their ratio, and whether the
 * search found the grid's winner (or one within its interval). Wall time is proportional to
 * points on a real server (each point is a measured load of fixed length), so the ratios are
 * the claim; nothing here is timed.
 *
 *   build/tests/bench_tune */
#include "tune/tune.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct surface {
  const char *name;
  int n_knobs;
  int n_values[3];
  double cstar_base, cstar_per[3]; /* TTFT reaches the target at cstar */
  double tp_per[3];                /* throughput factor per value step */
  double noise;                    /* +- relative noise of a point */
  double half_width;               /* +- relative 95% interval */
  int fail_key;                    /* a configuration that fails to start (-1: none) */
  int conc_max;
};

static double hash_noise(int key, int conc) {
  uint64_t z = (uint64_t)key * 0x9E3779B97F4A7C15ull + (uint64_t)conc * 0xBF58476D1CE4E5B9ull;
  z ^= z >> 31;
  z *= 0x94D049BB133111EBull;
  z ^= z >> 29;
  return (double)(z >> 11) * 0x1.0p-53 * 2.0 - 1.0;
}

static int key_of(const struct surface *s, const struct tune_config *cfg) {
  int key = 0;
  for (int k = 0; k < s->n_knobs; k++)
    key = key * 10 + (int)cfg->idx[k];
  return key;
}

static int measure(void *ctx, const struct tune_config *cfg, int conc, struct tune_point *out,
                   char *why, size_t why_len, struct st_err *err) {
  (void)err;
  const struct surface *s = ctx;
  int key = key_of(s, cfg);
  if (key == s->fail_key) {
    snprintf(why, why_len, "out of memory");
    return TUNE_START_FAILED;
  }
  double cstar = s->cstar_base, tp = 1000;
  for (int k = 0; k < s->n_knobs; k++) {
    cstar += s->cstar_per[k] * (double)cfg->idx[k];
    tp *= 1 + s->tp_per[k] * (double)cfg->idx[k];
  }
  if (cstar < 1)
    cstar = 1;
  double e = 1 + s->noise * hash_noise(key, conc);
  double ttft = 2000.0 * conc / cstar * e;
  double thr = tp * conc / (conc + 16.0) * e;
  out->figure[TUNE_TTFT_P99_MS] =
      (struct tune_estimate){ttft, ttft * (1 - s->half_width), ttft * (1 + s->half_width)};
  out->throughput =
      (struct tune_estimate){thr, thr * (1 - s->half_width), thr * (1 + s->half_width)};
  return 0;
}

static void run_surface(const struct surface *s) {
  struct tune_knob knobs[3];
  for (int k = 0; k < s->n_knobs; k++) {
    knobs[k].name = (char *)(k == 0 ? "kv-cache" : k == 1 ? "max-batch" : "spec");
    knobs[k].n_values = (size_t)s->n_values[k];
    knobs[k].values = calloc((size_t)s->n_values[k], sizeof(char *));
    for (int v = 0; v < s->n_values[k]; v++) {
      char buf[16];
      snprintf(buf, sizeof buf, "%d", v);
      knobs[k].values[v] = strdup(buf);
    }
  }
  struct tune_space space = {knobs, (size_t)s->n_knobs, {{0}}};
  for (int k = 0; k < s->n_knobs; k++)
    space.start.idx[k] = (size_t)s->n_values[k] / 2;
  struct tune_slo slo;
  struct st_err err = {{0}};
  if (tune_slo_parse("ttft_p99_ms=2000", &slo, &err) != 0)
    abort();
  struct tune_options opt = {1, s->conc_max, 0};
  struct tune_result res;
  if (tune_search(&space, &slo, &opt, measure, (void *)s, &res, &err) != 0) {
    printf("%s: %s\n", s->name, err.msg);
    return;
  }
  /* the full grid: every configuration at every concurrency; the answer of each is the last
   * concurrency before the first failure */
  long grid = 0, configs = 1;
  for (int k = 0; k < s->n_knobs; k++)
    configs *= s->n_values[k];
  double best = -1;
  int best_key = -1, best_conc = 0;
  for (long i = 0; i < configs; i++) {
    struct tune_config cfg = {{0}};
    long rest = i;
    for (int k = s->n_knobs - 1; k >= 0; k--) {
      cfg.idx[k] = (size_t)(rest % s->n_values[k]);
      rest /= s->n_values[k];
    }
    bool holding = true;
    for (int c = 1; c <= s->conc_max && holding; c++) {
      struct tune_point pt = {0};
      char why[32];
      grid++;
      if (measure((void *)s, &cfg, c, &pt, why, sizeof why, NULL) != 0)
        break;
      holding = tune_slo_holds(&slo, &pt);
      if (holding && pt.throughput.point > best) {
        best = pt.throughput.point;
        best_key = key_of(s, &cfg);
        best_conc = c;
      }
    }
  }
  long sweep = configs * (long)(log2(s->conc_max) + 1.5);
  const struct tune_config_result *w = res.winner >= 0 ? &res.configs[res.winner] : NULL;
  bool same = w && key_of(s, &w->cfg) == best_key;
  bool within = w && w->goodput.lo <= best && best <= w->goodput.hi;
  int pruned = 0, to_winner = 0;
  for (size_t i = 0; i < res.n_configs; i++) {
    pruned += res.configs[i].status == TUNE_CFG_PRUNED;
    if (res.winner >= 0 && (long)i <= res.winner)
      to_winner += res.configs[i].points; /* points until the winner was measured */
  }
  printf("%-34s %3ld configs  search %4d points (%2zu configs visited, %2d pruned)  grid %6ld "
         "(%.1fx)  doubling sweep %4ld (%.2fx)  winner measured by point %d (%.0f%%): %s, conc %d "
         "vs %d, goodput %.1f vs %.1f%s\n",
         s->name, configs, res.points, res.n_configs, pruned, grid, (double)grid / res.points,
         sweep, (double)sweep / res.points, to_winner, 100.0 * to_winner / res.points,
         same ? "same" : within ? "other, within interval" : "DIFFERENT", w ? w->best_conc : 0,
         best_conc, w ? w->goodput.point : 0, best, same || within ? "" : "  <-- miss");
  tune_result_free(&res);
  for (int k = 0; k < s->n_knobs; k++) {
    for (int v = 0; v < s->n_values[k]; v++)
      free(knobs[k].values[v]);
    free(knobs[k].values);
  }
}

int main(void) {
  static const struct surface surfaces[] = {
      {"3 knobs 4x3x2, conc 1..512", 3, {4, 3, 2}, 30, {25, 20, -10}, {0.1, 0.05, 0.4}, 0.01,
       0.03, -1, 512},
      {"3 knobs, best fails to start", 3, {4, 3, 2}, 30, {25, 20, -10}, {0.1, 0.05, 0.4}, 0.01,
       0.03, 321, 512},
      {"2 knobs 7x5, conc 1..1024", 2, {7, 5, 0}, 40, {30, 15, 0}, {0.05, 0.08, 0}, 0.02, 0.05,
       -1, 1024},
      {"2 knobs, trade-off (tp vs cstar)", 2, {6, 4, 0}, 200, {-25, 10, 0}, {0.15, 0.02, 0},
       0.01, 0.03, -1, 1024},
      {"1 knob of 13, conc 1..256", 1, {13, 0, 0}, 20, {8, 0, 0}, {0.03, 0, 0}, 0.005, 0.02, -1,
       256},
  };
  printf("bench_tune: points to the answer, the search against a full grid (synthetic "
         "surfaces; SLO ttft_p99_ms=2000 on the 95%% upper bound)\n");
  for (size_t i = 0; i < sizeof surfaces / sizeof surfaces[0]; i++)
    run_surface(&surfaces[i]);
  return 0;
}
