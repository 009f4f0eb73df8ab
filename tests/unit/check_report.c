/* report: the tune and sweep charts (PNG and SVG through cairo) and the sweep's table. */
#include "report/report.h"

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---------------------------------------------------------------- helpers */
static char *scratch_dir(void) {
  char *dir = xstrdup("/tmp/check_report.XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(dir));
  return dir;
}

static void remove_dir(char *dir) {
  static const char *const leaves[] = {"tune.png", "tune.svg", "sweep.png", "sweep.svg",
                                       "sweep.md"};
  for (size_t i = 0; i < sizeof leaves / sizeof leaves[0]; i++) {
    char *p = path_join_alloc(dir, leaves[i]);
    unlink(p);
    free(p);
  }
  rmdir(dir);
  free(dir);
}

static char *read_leaf(const char *dir, const char *leaf, size_t *len) {
  char *p = path_join_alloc(dir, leaf);
  struct st_err err = {{0}};
  char *text = file_read_all(p, len, &err);
  ck_assert_msg(text != NULL, "%s", err.msg);
  free(p);
  return text;
}

static uint32_t be32(const unsigned char *b) {
  return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

/* A PNG of the chart's size: the signature, then IHDR with width and height. */
static void assert_png(const char *dir, const char *leaf) {
  size_t len = 0;
  unsigned char *png = (unsigned char *)read_leaf(dir, leaf, &len);
  ck_assert_uint_gt(len, 10000); /* axes, text, markers: not an empty image */
  ck_assert(memcmp(png, "\x89PNG\r\n\x1a\n", 8) == 0);
  ck_assert(memcmp(png + 12, "IHDR", 4) == 0);
  ck_assert_uint_eq(be32(png + 16), REPORT_CHART_W);
  ck_assert_uint_eq(be32(png + 20), REPORT_CHART_H);
  free(png);
}

/* Every element the SVG opens is closed, in order (a small XML check: tags, comments,
 * the declaration; attribute values hold no '>' in cairo's output). */
static void assert_xml_balanced(const char *text) {
  const char *stack[256];
  size_t stack_len[256], depth = 0, elements = 0;
  for (const char *p = strchr(text, '<'); p; p = strchr(p, '<')) {
    if (strncmp(p, "<?", 2) == 0) {
      p = strstr(p, "?>");
      ck_assert_ptr_nonnull(p);
      continue;
    }
    if (strncmp(p, "<!--", 4) == 0) {
      p = strstr(p, "-->");
      ck_assert_ptr_nonnull(p);
      continue;
    }
    const char *end = strchr(p, '>');
    ck_assert_ptr_nonnull(end);
    bool closing = p[1] == '/', self = end[-1] == '/';
    const char *name = p + (closing ? 2 : 1);
    size_t n = strcspn(name, " \t\n/>");
    ck_assert_uint_gt(n, 0);
    if (closing) {
      ck_assert_uint_gt(depth, 0);
      depth--;
      ck_assert_msg(stack_len[depth] == n && strncmp(stack[depth], name, n) == 0,
                    "</%.*s> closes <%.*s>", (int)n, name, (int)stack_len[depth], stack[depth]);
    } else if (!self) {
      ck_assert_uint_lt(depth, 256);
      stack[depth] = name;
      stack_len[depth++] = n;
      elements++;
    } else {
      elements++;
    }
    p = end;
  }
  ck_assert_uint_eq(depth, 0);
  ck_assert_uint_gt(elements, 10);
}

static char *assert_svg(const char *dir, const char *leaf) {
  char *svg = read_leaf(dir, leaf, NULL);
  ck_assert(strncmp(svg, "<?xml", 5) == 0);
  ck_assert_ptr_nonnull(strstr(svg, "<svg"));
  ck_assert_ptr_nonnull(strstr(svg, "</svg>"));
  ck_assert_ptr_nonnull(strstr(svg, "<title>"));
  ck_assert_ptr_nonnull(strstr(svg, "<desc>"));
  assert_xml_balanced(svg);
  return svg;
}

static void assert_has(const char *text, const char *what) {
  ck_assert_msg(strstr(text, what) != NULL, "expected \"%s\" in:\n%.3000s", what, text);
}

/* ---------------------------------------------------------------- tune */
static char *kv_values[] = {"0.80", "0.84", "0.88"};
static char *mb_values[] = {"64", "128"};
static const struct tune_knob knobs[] = {{"kv-cache", kv_values, 3}, {"max-batch", mb_values, 2}};

static struct tune_estimate est(double point, double half) {
  return (struct tune_estimate){point, point - half, point + half};
}

/* Three configurations: two measured (the second the winner), one that did not start. */
static void fixture(struct tune_result *res) {
  memset(res, 0, sizeof *res);
  res->n_configs = 3;
  res->configs = xcalloc(3, sizeof *res->configs);
  res->configs[0] = (struct tune_config_result){.cfg = {{0, 0}}, .status = TUNE_CFG_BEST_FOUND,
                                                .best_conc = 8, .goodput = est(900, 30),
                                                .fail_conc = 16, .points = 3};
  res->configs[1] = (struct tune_config_result){.cfg = {{1, 1}}, .status = TUNE_CFG_BEST_FOUND,
                                                .best_conc = 16, .goodput = est(1500, 40),
                                                .fail_conc = 32, .points = 3};
  res->configs[2] = (struct tune_config_result){.cfg = {{2, 1}}, .status = TUNE_CFG_START_FAILED};
  snprintf(res->configs[2].why, sizeof res->configs[2].why, "CUDA out of memory");
  static const struct {
    size_t config;
    int conc;
    double tput, user;
    bool holds;
  } rows[] = {{0, 4, 500, 60, true},  {0, 8, 900, 40, true},  {0, 16, 1100, 15, false},
              {1, 4, 600, 70, true},  {1, 16, 1500, 30, true}, {1, 32, 1900, 12, false}};
  res->n_probes = sizeof rows / sizeof rows[0];
  res->probes = xcalloc(res->n_probes, sizeof *res->probes);
  for (size_t i = 0; i < res->n_probes; i++) {
    struct tune_probe *p = &res->probes[i];
    p->config = rows[i].config;
    p->concurrency = rows[i].conc;
    p->holds = rows[i].holds;
    for (int f = 0; f < TUNE_N_FIGURES; f++)
      p->pt.figure[f] = est(NAN, 0);
    p->pt.figure[TUNE_MIN_TOK_S_PER_USER] = est(rows[i].user, 2);
    p->pt.throughput = est(rows[i].tput, rows[i].tput * 0.04);
  }
  res->points = (int)res->n_probes;
  res->winner = 1;
  res->runner_up = 0;
}

START_TEST(tune_chart_is_drawn_with_everything) {
  char *dir = scratch_dir();
  struct tune_space space = {.knobs = knobs, .n_knobs = 2};
  struct tune_slo slo;
  struct st_err err = {{0}};
  ck_assert_int_eq(tune_slo_parse("tpot_p99_ms=50,min_tok_s_per_user=20", &slo, &err), 0);
  struct tune_result res;
  fixture(&res);
  ck_assert_msg(report_tune_charts(dir, "llama8b-h200-sglang", true, &space, &slo, &res, 8, &err) ==
                    0,
                "%s", err.msg);
  assert_png(dir, "tune.png");
  char *svg = assert_svg(dir, "tune.svg");
  assert_has(svg, "llama8b-h200-sglang: tune SIMULATED</title>");
  assert_has(svg, "x: interactivity (tok/s per user)");
  assert_has(svg, "y: output throughput per GPU (tok/s/GPU)");
  assert_has(svg, "SLO: &gt;= 20 tok/s per user");
  assert_has(svg, "tpot_p99_ms &lt;= 50");
  /* the legend: each configuration by its knobs, the one that did not start too */
  assert_has(svg, "series 1: kv-cache=0.80 max-batch=64: c=8");
  assert_has(svg, "series 2: kv-cache=0.84 max-batch=128: c=16");
  assert_has(svg, "series 3: kv-cache=0.88 max-batch=128: failed to start");
  /* every point labelled with its concurrency; the failing ones said so */
  assert_has(svg, "series 1 c=4: x 60, y 500\n");
  assert_has(svg, "series 2 c=32: x 12, y 1900 (SLO does not hold)");
  assert_has(svg, "best: kv-cache=0.84 max-batch=128 c=16, 1500 [1440, 1560] tok/s/GPU");
  assert_has(svg, "6 points, 3 configurations");
  free(svg);
  /* in all (no GPU count), not simulated, no SLO line */
  ck_assert_int_eq(report_tune_charts(dir, NULL, false, &space, NULL, &res, 0, &err), 0);
  svg = assert_svg(dir, "tune.svg");
  assert_has(svg, "<title>servetop tune: tune</title>");
  assert_has(svg, "y: output throughput (tok/s, all GPUs)");
  ck_assert_ptr_null(strstr(svg, "SIMULATED"));
  ck_assert_ptr_null(strstr(svg, "SLO: &gt;="));
  free(svg);
  tune_result_free(&res);
  remove_dir(dir);
}
END_TEST

START_TEST(tune_chart_of_nothing_and_of_unknowns) {
  char *dir = scratch_dir();
  struct st_err err = {{0}};
  struct tune_result empty;
  memset(&empty, 0, sizeof empty);
  empty.winner = empty.runner_up = -1;
  /* before the first point: an empty chart, axes and all */
  ck_assert_int_eq(report_tune_charts(dir, "r", false, NULL, NULL, &empty, 1, &err), 0);
  assert_png(dir, "tune.png");
  free(assert_svg(dir, "tune.svg"));
  ck_assert_int_eq(report_tune_charts(dir, "r", false, NULL, NULL, NULL, 1, &err), 0);
  /* a point whose figures are unknown is not drawn, and the chart says so */
  struct tune_result res;
  fixture(&res);
  res.probes[0].pt.figure[TUNE_MIN_TOK_S_PER_USER] = est(NAN, NAN);
  res.probes[1].pt.throughput = (struct tune_estimate){INFINITY, NAN, NAN};
  res.winner = 7; /* out of range: no best */
  ck_assert_int_eq(report_tune_charts(dir, "r", false, NULL, NULL, &res, 1, &err), 0);
  char *svg = assert_svg(dir, "tune.svg");
  assert_has(svg, "2 points without tok/s per user or throughput not drawn");
  assert_has(svg, "series 1 c=4: x unknown, y 500");
  assert_has(svg, "series 1: configuration 1: c=8"); /* no space: the configurations by number */
  ck_assert_ptr_null(strstr(svg, "best:"));
  free(svg);
  tune_result_free(&res);
  remove_dir(dir);
}
END_TEST

/* A configuration that died mid-search: the point it measured held, but it is drawn as not
 * holding (hollow) and is off the frontier. */
START_TEST(tune_chart_draws_a_dead_configuration_as_not_holding) {
  char *dir = scratch_dir();
  struct st_err err = {{0}};
  struct tune_result res;
  fixture(&res);
  res.probes = xreallocarray(res.probes, res.n_probes + 1, sizeof *res.probes);
  struct tune_probe *p = &res.probes[res.n_probes++];
  *p = res.probes[4]; /* configuration 2's best, c=16 */
  p->config = 2;
  p->concurrency = 2;
  p->pt.throughput = est(5000, 100);
  p->holds = true;
  ck_assert_int_eq(report_tune_charts(dir, "r", false, NULL, NULL, &res, 1, &err), 0);
  char *svg = assert_svg(dir, "tune.svg");
  assert_has(svg, "series 3 c=2: x 30, y 5000 (SLO does not hold)");
  assert_has(svg, "series 2 c=16: x 30, y 1500\n");
  free(svg);
  tune_result_free(&res);
  remove_dir(dir);
}
END_TEST

/* The subtitle says how the search ended: a time budget's end (made by a stop) is the
 * budget's, not a stop. */
START_TEST(tune_chart_says_how_it_ended) {
  char *dir = scratch_dir();
  struct st_err err = {{0}};
  struct tune_result res;
  fixture(&res);
  static const struct {
    enum tune_end end;
    bool stopped;
    const char *has, *lacks;
  } cases[] = {{TUNE_END_TIME_BUDGET, true, "| budget ran out", "| stopped"},
               {TUNE_END_POINT_BUDGET, false, "| budget ran out", "| stopped"},
               {TUNE_END_STOPPED, true, "| stopped", "budget ran out"},
               {TUNE_END_DONE, false, "3 configurations", "| stopped"}};
  for (size_t i = 0; i < ST_ARRAY_LEN(cases); i++) {
    res.end = cases[i].end;
    res.stopped = res.out_of_budget = cases[i].stopped;
    ck_assert_int_eq(report_tune_charts(dir, "r", false, NULL, NULL, &res, 1, &err), 0);
    char *svg = assert_svg(dir, "tune.svg");
    assert_has(svg, cases[i].has);
    ck_assert_msg(!strstr(svg, cases[i].lacks), "case %zu: '%s' drawn", i, cases[i].lacks);
    if (cases[i].end == TUNE_END_DONE)
      ck_assert_ptr_null(strstr(svg, "budget ran out"));
    free(svg);
  }
  tune_result_free(&res);
  remove_dir(dir);
}
END_TEST

START_TEST(unwritable_folder_is_named) {
  struct st_err err = {{0}};
  struct tune_result res;
  fixture(&res);
  ck_assert_int_eq(report_tune_charts("/nonexistent-servetop/run", "r", false, NULL, NULL, &res, 1,
                                      &err),
                   -1);
  assert_has(err.msg, "/nonexistent-servetop/run/tune.png");
  tune_result_free(&res);
  struct report_sweep sw = {.title = "r"};
  ck_assert_int_eq(report_sweep_write("/nonexistent-servetop/run", &sw, &err), -1);
  assert_has(err.msg, "/nonexistent-servetop/run/sweep.md");
  /* a file where the folder should be */
  char *dir = scratch_dir();
  char *file = path_join_alloc(dir, "sweep.md");
  ck_assert_int_eq(file_write_atomic(file, "x", 1, 0644, &err), 0);
  char *under = path_join_alloc(file, "deeper");
  ck_assert_int_eq(report_sweep_write(under, &sw, &err), -1);
  assert_has(err.msg, under);
  free(under);
  free(file);
  remove_dir(dir);
}
END_TEST

/* ---------------------------------------------------------------- sweep */
/* A point at conc: output tok/s, TTFT and TPOT p50 / p99 (ms); 2 GPUs. */
static struct report_sweep_point point(int conc, double out, double ttft50, double ttft99,
                                       double tpot50, double tpot99) {
  struct report_sweep_point p = {.conc = conc};
  fig_set_clear(&p.figs);
  fig_set_scalar(&p.figs, FIG_REQ_TPUT, isfinite(out), out / 100);
  fig_set_scalar(&p.figs, FIG_OUTPUT_TPUT, isfinite(out), out);
  fig_set_dist(&p.figs, FIG_TTFT, 50, NAN, ttft50, NAN, ttft99);
  fig_set_dist(&p.figs, FIG_TPOT, 50, NAN, tpot50, NAN, tpot99);
  return p;
}

START_TEST(sweep_table_cells_and_intervals) {
  struct report_sweep_point p = point(8, 1000, 50, 120, 10, 14);
  fig_set_ci(&p.figs, FIG_OUTPUT_TPUT, FIG_VALUE, 900, 1100);
  fig_set_ci(&p.figs, FIG_TPOT, FIG_STAT_P50, 8, 12.5);
  fig_set_derive(&p.figs, 2);
  char buf[64];
  ck_assert_str_eq(report_sweep_col_title(0), "conc");
  ck_assert_str_eq(report_sweep_col_title(4), "tok/s/user");
  ck_assert_str_eq(report_sweep_col_title(REPORT_SWEEP_COLS), "");
  report_sweep_cell(&p, 0, true, buf, sizeof buf);
  ck_assert_str_eq(buf, "8");
  report_sweep_cell(&p, 2, true, buf, sizeof buf);
  ck_assert_str_eq(buf, "1000 [900, 1100]");
  report_sweep_cell(&p, 2, false, buf, sizeof buf);
  ck_assert_str_eq(buf, "1000");
  /* derived: per GPU and tok/s per user, their intervals from the ones they come from */
  report_sweep_cell(&p, 3, true, buf, sizeof buf);
  ck_assert_str_eq(buf, "500 [450, 550]");
  report_sweep_cell(&p, 4, true, buf, sizeof buf);
  ck_assert_str_eq(buf, "100.0 [80.0, 125.0]");
  report_sweep_cell(&p, 6, true, buf, sizeof buf);
  ck_assert_str_eq(buf, "120.0"); /* no interval known: the value alone */
  /* unknown: "-", never 0 */
  struct report_sweep_point u = point(2, NAN, NAN, NAN, NAN, NAN);
  u.interrupted = true;
  fig_set_derive(&u.figs, 0);
  for (size_t c = 1; c < REPORT_SWEEP_COLS; c++) {
    report_sweep_cell(&u, c, true, buf, sizeof buf);
    ck_assert_str_eq(buf, "-");
  }
  report_sweep_cell(&u, 0, true, buf, sizeof buf);
  ck_assert_str_eq(buf, "2*");
  report_sweep_cell(&u, 99, true, buf, sizeof buf);
  ck_assert_str_eq(buf, "-");
}
END_TEST

START_TEST(sweep_chart_and_table_written) {
  char *dir = scratch_dir();
  struct report_sweep_point pts[] = {point(1, 150, 20, 40, 6.5, 8), point(4, 520, 30, 70, 7.5, 9),
                                     point(16, 1700, 60, 200, 9.4, 13),
                                     point(64, NAN, NAN, NAN, NAN, NAN)};
  fig_set_ci(&pts[2].figs, FIG_OUTPUT_TPUT, FIG_VALUE, 1650, 1750);
  pts[3].interrupted = true;
  for (size_t i = 0; i < 4; i++)
    fig_set_derive(&pts[i].figs, 2);
  struct report_sweep sw = {.title = "llama8b-h200-sglang",
                            .subtitle = "meta-llama/Llama-3.1-8B-Instruct | sim | h200 x2",
                            .simulated = true, .n_gpus = 2, .points = pts, .n_points = 4};
  struct st_err err = {{0}};
  ck_assert_msg(report_sweep_write(dir, &sw, &err) == 0, "%s", err.msg);
  assert_png(dir, "sweep.png");
  char *svg = assert_svg(dir, "sweep.svg");
  assert_has(svg, "<title>llama8b-h200-sglang: sweep SIMULATED</title>");
  assert_has(svg, "meta-llama/Llama-3.1-8B-Instruct | sim | h200 x2");
  assert_has(svg, "y: output throughput per GPU (tok/s/GPU)");
  assert_has(svg, "c=1: x 153.8, y 75\n");
  assert_has(svg, "c=16: x 106.4, y 850\n");
  assert_has(svg, "c=64*: x unknown, y unknown");
  assert_has(svg, "1 point without tok/s per user or throughput not drawn");
  free(svg);
  char *md = read_leaf(dir, "sweep.md", NULL);
  assert_has(md, "# Sweep: llama8b-h200-sglang (SIMULATED)\n");
  assert_has(md, "**SIMULATED**");
  assert_has(md, "| conc | req/s |");
  assert_has(md, "| TPOT p99 (ms) |\n");
  assert_has(md, "|-----:|");
  assert_has(md, "1700 [1650, 1750]");
  assert_has(md, "850 [825, 875]");
  assert_has(md, "|  64* |");
  assert_has(md, "[lo, hi]: the 95% confidence interval");
  assert_has(md, "\"*\": the point was stopped before its end");
  assert_has(md, "](sweep.png)");
  /* the table is what sweep.md holds: every row as wide as the header */
  struct sbuf t = {0};
  report_sweep_table(&t, &sw);
  assert_has(md, t.data);
  size_t width = strcspn(t.data, "\n");
  for (const char *line = t.data; *line; line += strcspn(line, "\n") + 1)
    ck_assert_uint_eq(strcspn(line, "\n"), width);
  sbuf_free(&t);
  free(md);
  remove_dir(dir);
}
END_TEST

START_TEST(sweep_of_no_point) {
  char *dir = scratch_dir();
  struct report_sweep sw = {0};
  struct st_err err = {{0}};
  ck_assert_int_eq(report_sweep_write(dir, &sw, &err), 0);
  assert_png(dir, "sweep.png");
  char *svg = assert_svg(dir, "sweep.svg");
  assert_has(svg, "<title>servetop run --sweep: sweep</title>");
  assert_has(svg, "y: output throughput (tok/s, all GPUs)");
  free(svg);
  char *md = read_leaf(dir, "sweep.md", NULL);
  assert_has(md, "No point of the sweep has a result.");
  assert_has(md, "| conc |");
  ck_assert_ptr_null(strstr(md, "[lo, hi]"));
  free(md);
  remove_dir(dir);
}
END_TEST

int main(void) {
  Suite *s = suite_create("report");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, tune_chart_is_drawn_with_everything);
  tcase_add_test(tc, tune_chart_of_nothing_and_of_unknowns);
  tcase_add_test(tc, tune_chart_draws_a_dead_configuration_as_not_holding);
  tcase_add_test(tc, tune_chart_says_how_it_ended);
  tcase_add_test(tc, unwritable_folder_is_named);
  tcase_add_test(tc, sweep_table_cells_and_intervals);
  tcase_add_test(tc, sweep_chart_and_table_written);
  tcase_add_test(tc, sweep_of_no_point);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
