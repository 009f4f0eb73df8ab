/* ui run view: the end of a sweep shows its table of points and where the chart is. */
#include "runview.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ui_test.h"

/* A sweep of three points of the sim, over. */
static void sweep_over(struct snap_run *s, bool chart_written) {
  snap_run_init(s);
  s->server.state = SNAP_SERVER_EXITED;
  s->server.simulated = true;
  snprintf(s->server.engine, sizeof s->server.engine, "sim");
  snprintf(s->server.recipe_name, sizeof s->server.recipe_name, "llama8b-h200-sglang");
  s->progress.phase = SNAP_PHASE_DONE;
  s->progress.n_points = 3;
  s->progress.point_index = 2;
  snprintf(s->progress.message, sizeof s->progress.message, "3 point(s) measured");
  static const struct {
    int conc;
    double out, ttft50, ttft99, tpot50, tpot99;
  } rows[] = {{1, 150, 20, 40, 6.5, 8}, {4, 520, 30, 70, 8, 9}, {16, 1700, 60, 200, 12.5, 13}};
  for (int i = 0; i < 3; i++) {
    struct snap_point_result p = {.point_index = i, .conc = rows[i].conc,
                                  .conc_end = rows[i].conc, .measured_to_end = i < 2,
                                  .completed = 10, .total = 10};
    snprintf(p.end, sizeof p.end, "%s", i < 2 ? "done" : "stopped");
    fig_set_clear(&p.figs);
    fig_set_scalar(&p.figs, FIG_REQ_TPUT, true, rows[i].out / 100);
    fig_set_scalar(&p.figs, FIG_OUTPUT_TPUT, true, rows[i].out);
    fig_set_dist(&p.figs, FIG_TTFT, 10, NAN, rows[i].ttft50, NAN, rows[i].ttft99);
    fig_set_dist(&p.figs, FIG_TPOT, 10, NAN, rows[i].tpot50, NAN, rows[i].tpot99);
    fig_set_derive(&p.figs, 0);
    snap_points_add(&s->points, &p);
  }
  if (chart_written)
    snprintf(s->points.chart, sizeof s->points.chart, "/runs/20261205-llama8b/sweep.png");
}

static void assert_has(const char *frame, const char *what) {
  if (!strstr(frame, what))
    fprintf(stderr, "%s\n", frame);
  ck_assert_msg(strstr(frame, what) != NULL, "expected \"%s\" in the frame (above)", what);
}

START_TEST(sweep_end_shows_points_and_chart) {
  static struct runview rv;
  struct snap_run s;
  runview_init(&rv, NULL);
  sweep_over(&s, true);
  runview_push(&rv, &s);
  char *f = ut_frame(&runview_screen, &rv, NULL, NULL, 160, 40, true);
  assert_has(f, "Sweep: 3 points");
  assert_has(f, "chart /runs/20261205-llama8b/sweep.png (and .svg; table: sweep.md)");
  /* the columns most telling first: conc, tok/s per user, output tok/s, p99s */
  assert_has(f, "conc tok/s/user output tok/s TTFT p99 (ms) TPOT p99 (ms)");
  assert_has(f, "   1      153.8          150          40.0           8.0");
  assert_has(f, " 16*       80.0         1700         200.0          13.0");
  ck_assert_ptr_null(strstr(f, "Throughput (last 10 s)"));
  free(f);
  /* narrow: the first columns still show */
  f = ut_frame(&runview_screen, &rv, NULL, NULL, 80, 24, false);
  assert_has(f, "Sweep: 3 points");
  assert_has(f, "conc tok/s/user");
  free(f);
  /* the chart could not be written: said so */
  sweep_over(&s, false);
  runview_push(&rv, &s);
  f = ut_frame(&runview_screen, &rv, NULL, NULL, 160, 40, true);
  assert_has(f, "no chart: the run could not draw it");
  free(f);
}
END_TEST

START_TEST(running_sweep_and_single_point_keep_the_throughput_chart) {
  static struct runview rv;
  struct snap_run s;
  runview_init(&rv, NULL);
  sweep_over(&s, false);
  s.progress.phase = SNAP_PHASE_MEASURING; /* not over yet */
  runview_push(&rv, &s);
  char *f = ut_frame(&runview_screen, &rv, NULL, NULL, 160, 40, true);
  assert_has(f, "Throughput (last 10 s)");
  ck_assert_ptr_null(strstr(f, "Sweep:"));
  free(f);
  /* one point, no sweep (--conc): over, the charts stay */
  runview_init(&rv, NULL);
  sweep_over(&s, false);
  s.progress.n_points = 1;
  runview_push(&rv, &s);
  f = ut_frame(&runview_screen, &rv, NULL, NULL, 160, 40, true);
  assert_has(f, "Throughput (last 10 s)");
  free(f);
}
END_TEST

int main(void) {
  Suite *s = suite_create("ui_runview_sweep");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, sweep_end_shows_points_and_chart);
  tcase_add_test(tc, running_sweep_and_single_point_keep_the_throughput_chart);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
