/* run session: what is left of a session's arms (run_arms_remaining_s, the
 * estimate the session's status and the A/B view show), and the configs the
 * session controller refuses before starting anything. */
#include "run/run.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

/* A finished sweep of two points, 5 s each, its server ready after 3 s. */
static void finished_arm(struct snap_run *s) {
  snap_run_init(s);
  s->server.ready_after_s = 3;
  s->progress.phase = SNAP_PHASE_DONE;
  s->progress.n_points = 2;
  s->progress.point_index = 1;
  for (int i = 0; i < 2; i++) {
    struct snap_point_result p;
    memset(&p, 0, sizeof p);
    p.point_index = i;
    p.measured_to_end = true;
    p.duration_s = 5;
    snap_points_add(&s->points, &p);
  }
}

/* The first of two points measuring, 4 s left of it. */
static void measuring_arm(struct snap_run *s) {
  snap_run_init(s);
  s->progress.phase = SNAP_PHASE_MEASURING;
  s->progress.n_points = 2;
  s->progress.point_index = 0;
  s->progress.eta_valid = true;
  s->progress.eta_s = 4;
  s->progress.elapsed_s = 6;
}

START_TEST(remaining_of_sequential_and_parallel_arms) {
  struct snap_run *done = malloc(sizeof *done), *busy = malloc(sizeof *busy);
  finished_arm(done);
  measuring_arm(busy);
  double left = -1;
  int points[2] = {2, 2};
  /* off done, MTP not started: its 2 points at 5 s and its launch (3 s) */
  const struct snap_run *arms[2] = {done, NULL};
  ck_assert(run_arms_remaining_s(arms, points, NULL, 2, false, &left));
  ck_assert_double_eq_tol(left, 3 + 2 * 5, 1e-9);
  /* nothing finished anywhere (issue 23.4: an ETA during the first arm): the
   * point measuring now, projected (6 s gone + 4 s left), is the typical one;
   * this arm 4 + 10 s, the arm not started 2 points of 10 s */
  const struct snap_run *early[2] = {busy, NULL};
  ck_assert(run_arms_remaining_s(early, points, NULL, 2, false, &left));
  ck_assert_double_eq_tol(left, 4 + 10 + 2 * 10, 1e-9);
  /* ...and none while the first point is still warming up */
  busy->progress.warmup = true;
  ck_assert(!run_arms_remaining_s(early, points, NULL, 2, false, &left));
  busy->progress.warmup = false;
  /* ...unless that arm is left out (a past run in its column) */
  bool skip[2] = {false, true};
  ck_assert(run_arms_remaining_s(early, points, skip, 2, false, &left));
  ck_assert_double_eq_tol(left, 4 + 10, 1e-9); /* this point, then one at its projected 10 s */
  /* one after the other the arms add up; at the same time the longer one counts */
  const struct snap_run *both[2] = {done, busy};
  ck_assert(run_arms_remaining_s(both, points, NULL, 2, false, &left));
  ck_assert_double_eq_tol(left, 0 + 4 + 10, 1e-9); /* a started arm by its own points */
  const struct snap_run *pair[2] = {busy, busy};
  ck_assert(run_arms_remaining_s(pair, points, NULL, 2, true, &left));
  ck_assert_double_eq_tol(left, 4 + 10, 1e-9);
  ck_assert(run_arms_remaining_s(pair, points, NULL, 2, false, &left));
  ck_assert_double_eq_tol(left, 2 * (4 + 10), 1e-9);
  free(done);
  free(busy);
}
END_TEST

START_TEST(session_refuses_configs_without_arms) {
  struct run_session_config sc;
  memset(&sc, 0, sizeof sc);
  struct st_err err = {{0}};
  ck_assert_ptr_null(run_session_start(&sc, &err));
  ck_assert_ptr_nonnull(strstr(err.msg, "arms"));
  sc.n_arms = 3;
  ck_assert_ptr_null(run_session_start(&sc, &err));
  sc.n_arms = 1; /* an arm without recipe */
  run_config_init(&sc.arm[0]);
  ck_assert_ptr_null(run_session_start(&sc, &err));
  ck_assert_ptr_nonnull(strstr(err.msg, "recipe"));
  run_session_free(NULL);
  ck_assert_str_eq(run_arm_state_name(RUN_ARM_NOT_STARTED), "not started");
}
END_TEST

/* An A/B of an MTP recipe benchmarked with the chat template and its off twin
 * without: both arms measure with it (one workload, like with like); arms the
 * caller set, and pairs that already agree, are left as they are. */
START_TEST(ab_arms_measure_one_workload) {
  struct recipe off, mtp;
  memset(&off, 0, sizeof off);
  memset(&mtp, 0, sizeof mtp);
  mtp.bench.use_chat_template = true;
  struct run_session_config sc;
  memset(&sc, 0, sizeof sc);
  sc.n_arms = 2;
  run_config_init(&sc.arm[0]);
  run_config_init(&sc.arm[1]);
  sc.arm[0].recipe = &off;
  sc.arm[1].recipe = &mtp;
  run_session_same_workload(&sc);
  ck_assert_int_eq(sc.arm[0].chat_template, 1);
  ck_assert_int_eq(sc.arm[1].chat_template, 1);
  /* both without: untouched (each as its recipe says) */
  mtp.bench.use_chat_template = false;
  sc.arm[0].chat_template = sc.arm[1].chat_template = -1;
  run_session_same_workload(&sc);
  ck_assert_int_eq(sc.arm[0].chat_template, -1);
  ck_assert_int_eq(sc.arm[1].chat_template, -1);
  /* the caller's choice is kept */
  mtp.bench.use_chat_template = true;
  sc.arm[0].chat_template = 0;
  run_session_same_workload(&sc);
  ck_assert_int_eq(sc.arm[0].chat_template, 0);
  ck_assert_int_eq(sc.arm[1].chat_template, -1);
  /* one arm: nothing to match */
  sc.n_arms = 1;
  sc.arm[0].chat_template = -1;
  sc.arm[0].recipe = &mtp;
  run_session_same_workload(&sc);
  ck_assert_int_eq(sc.arm[0].chat_template, -1);
}
END_TEST

int main(void) {
  Suite *s = suite_create("run_session");
  TCase *tc = tcase_create("pure");
  tcase_add_test(tc, remaining_of_sequential_and_parallel_arms);
  tcase_add_test(tc, session_refuses_configs_without_arms);
  tcase_add_test(tc, ab_arms_measure_one_workload);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
