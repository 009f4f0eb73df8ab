/* Points to the answer: the tune search (src/tune) against a full grid over the same space, on
 * synthetic response surfaces (issue 20.6; docs/tune.md). A surface is a deterministic function
 * of the knobs and the concurrency plus noise with a known 95% interval, so the grid's answer
 * is the truth. Prints, per surface, the points each way and their ratio, and whether the
 * search found the grid's winner (or one within its interval). Wall time is proportional to
 * points on a real server (each point is a measured load of fixed length), so the ratios are
 * the claim; nothing here is timed.
 *
 * Then the search on the sim's model (sim_vrun: the sim's scheduler in simulated time, no
 * sockets): Llama-3.1-70B at TP2 on H200, isl 8192 / osl 1024, knobs --mem-fraction-static and
 * --max-running-requests, two TTFT targets: the winner and its concurrency move with the knobs
 * and the target (docs/sim.md, docs/tune.md). The model is deterministic, so its intervals are
 * points (lo = hi); a real run supplies 95% intervals.
 *
 *   build/tests/bench_tune */
#include "sim/sim.h"
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
  struct tune_options opt = {.conc_min = 1, .conc_max = s->conc_max};
  struct tune_result res;
  if (tune_search(&space, &slo, &opt, measure, (void *)s, &res, &err) != 0) {
    printf("%s: %s\n", s->name, err.msg);
    return;
  }
  /* the full grid: every configuration at every concurrency up to its first failure; the
   * answer of each is the last concurrency before it, its goodput the throughput there (the
   * search's definition) */
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
    double last = -1;
    int last_conc = 0;
    for (int c = 1; c <= s->conc_max; c++) {
      struct tune_point pt = {0};
      char why[32];
      grid++;
      if (measure((void *)s, &cfg, c, &pt, why, sizeof why, NULL) != 0 ||
          !tune_slo_holds(&slo, &pt))
        break;
      last = pt.throughput.point;
      last_conc = c;
    }
    if (last > best) {
      best = last;
      best_key = key_of(s, &cfg);
      best_conc = last_conc;
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

/* ---------------------------------------------------------------- the sim as the surface */
struct sim_surface {
  const struct tune_knob *knobs;
  int runs;
};

static int sim_measure(void *ctx, const struct tune_config *cfg, int conc, struct tune_point *out,
                       char *why, size_t why_len, struct st_err *err) {
  struct sim_surface *s = ctx;
  struct sim_config c;
  sim_config_init(&c);
  c.model_path = "meta-llama/Llama-3.1-70B-Instruct";
  c.gpu_name = "h200";
  c.tp_size = 2;
  c.mem_fraction_static = atof(s->knobs[0].values[cfg->idx[0]]);
  c.max_running_requests = atoi(s->knobs[1].values[cfg->idx[1]]);
  struct sim_vrun_workload w = {conc, 8192, 1024, 3 * conc};
  struct sim_vrun_result r;
  s->runs++;
  if (sim_vrun(&c, &w, &r, err) != 0) {
    snprintf(why, why_len, "%s", err->msg); /* e.g. SGLang's not-enough-memory message */
    return TUNE_START_FAILED;
  }
  double ttft_ms = r.ttft_p99_s * 1e3;
  out->figure[TUNE_TTFT_P99_MS] = (struct tune_estimate){ttft_ms, ttft_ms, ttft_ms};
  out->throughput = (struct tune_estimate){r.output_tok_s, r.output_tok_s, r.output_tok_s};
  return 0;
}

static void run_sim_surface(const char *slo_text) {
  struct tune_knob knobs[2];
  struct st_err err = {{0}};
  if (tune_knob_parse("mem-fraction-static=0.55:0.85:0.05", &knobs[0], &err) != 0 ||
      tune_knob_parse("max-running-requests=8,16,32,64", &knobs[1], &err) != 0)
    abort();
  struct tune_space space = {knobs, 2, {{3, 2}}}; /* the recipe's 0.70 / 32 */
  struct tune_slo slo;
  if (tune_slo_parse(slo_text, &slo, &err) != 0)
    abort();
  struct tune_options opt = {.conc_min = 1, .conc_max = 128};
  struct sim_surface surf = {knobs, 0};
  struct tune_result res;
  if (tune_search(&space, &slo, &opt, sim_measure, &surf, &res, &err) != 0) {
    printf("sim: %s\n", err.msg);
    return;
  }
  /* the grid: every configuration, every concurrency up to its first failure */
  int grid = 0;
  double best = -1;
  char best_desc[128] = "";
  int best_conc = 0;
  for (size_t a = 0; a < knobs[0].n_values; a++)
    for (size_t b = 0; b < knobs[1].n_values; b++) {
      struct tune_config cfg = {{a, b}};
      double last = -1;
      int last_conc = 0;
      for (int c = 1; c <= opt.conc_max; c++) {
        struct tune_point pt = {0};
        char why[128];
        grid++;
        if (sim_measure(&surf, &cfg, c, &pt, why, sizeof why, &err) != 0 ||
            !tune_slo_holds(&slo, &pt))
          break;
        last = pt.throughput.point;
        last_conc = c;
      }
      if (last > best) {
        best = last;
        best_conc = last_conc;
        tune_config_describe(&space, &cfg, best_desc, sizeof best_desc);
      }
    }
  if (getenv("BENCH_TUNE_VERBOSE"))
    for (size_t i = 0; i < res.n_configs; i++) {
      char d[128];
      tune_config_describe(&space, &res.configs[i].cfg, d, sizeof d);
      printf("  %-48s %-36s conc %3d (fails %3d) %7.1f tok/s, %2d points %s\n", d,
             tune_status_name(res.configs[i].status), res.configs[i].best_conc,
             res.configs[i].fail_conc, res.configs[i].goodput.point, res.configs[i].points,
             res.configs[i].why);
    }
  char desc[128] = "", runner[128] = "";
  const struct tune_config_result *w = res.winner >= 0 ? &res.configs[res.winner] : NULL;
  if (w)
    tune_config_describe(&space, &w->cfg, desc, sizeof desc);
  if (res.runner_up >= 0)
    tune_config_describe(&space, &res.configs[res.runner_up].cfg, runner, sizeof runner);
  const char *verdict = !w                                  ? "NONE"
                        : strcmp(desc, best_desc) == 0      ? "same"
                        : w->goodput.point == best          ? "a tie in goodput"
                        : w->goodput.hi >= best             ? "other, within interval"
                                                            : "DIFFERENT";
  printf("sim, --slo %s: search %d points (%zu configs visited) against a grid of %d (%.1fx): "
         "winner (%s) %s at conc %d, %.1f tok/s (grid: %s at conc %d, %.1f); runner-up %s at "
         "conc %d, %.1f tok/s\n",
         slo_text, res.points, res.n_configs, grid, (double)grid / res.points, verdict, desc,
         w ? w->best_conc : 0, w ? w->goodput.point : 0, best_desc, best_conc, best, runner,
         res.runner_up >= 0 ? res.configs[res.runner_up].best_conc : 0,
         res.runner_up >= 0 ? res.configs[res.runner_up].goodput.point : 0);
  tune_result_free(&res);
  tune_knob_free(&knobs[0]);
  tune_knob_free(&knobs[1]);
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
  run_sim_surface("ttft_p99_ms=60000");
  run_sim_surface("ttft_p99_ms=20000");
  return 0;
}
