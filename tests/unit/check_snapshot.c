/* snapshot: publish/read sequencing, ring helpers, cross-thread copies. */
#include "snapshot/snapshot.h"

#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

START_TEST(read_before_publish_copies_nothing) {
  struct snap_slot *slot = snap_slot_new();
  struct snap_run out;
  memset(&out, 0xab, sizeof(out));
  uint64_t last = 0;
  ck_assert(!snap_slot_read(slot, &out, &last));
  ck_assert(!snap_slot_read(slot, &out, NULL));
  ck_assert_uint_eq(last, 0);
  ck_assert_uint_eq(snap_slot_seq(slot), 0);
  snap_slot_free(slot);
}
END_TEST

START_TEST(publish_stamps_seq_and_read_copies_once) {
  struct snap_slot *slot = snap_slot_new();
  struct snap_run snap;
  snap_run_init(&snap);
  ck_assert_int_eq(snap.server.exit_code, -1);
  ck_assert(!snap.figures.run.f[FIG_TTFT].valid);
  snap.progress.done = 7;
  snprintf(snap.server.engine, sizeof(snap.server.engine), "sim");
  snap_slot_publish(slot, &snap);
  ck_assert_uint_eq(snap.seq, 1);
  ck_assert_int_gt(snap.published_mono_ns, 0);

  struct snap_run out;
  uint64_t last = 0;
  ck_assert(snap_slot_read(slot, &out, &last));
  ck_assert_uint_eq(last, 1);
  ck_assert_int_eq(out.progress.done, 7);
  ck_assert_str_eq(out.server.engine, "sim");
  ck_assert(!snap_slot_read(slot, &out, &last)); /* nothing new */

  snap.progress.done = 9;
  snap_slot_publish(slot, &snap);
  ck_assert_uint_eq(snap_slot_seq(slot), 2);
  ck_assert(snap_slot_read(slot, &out, &last));
  ck_assert_int_eq(out.progress.done, 9);
  ck_assert_uint_eq(last, 2);
  snap_slot_free(slot);
}
END_TEST

START_TEST(log_tail_keeps_newest_in_order) {
  struct snap_log_tail tail;
  memset(&tail, 0, sizeof(tail));
  char line[64];
  for (int i = 0; i < SNAP_LOG_LINES + 5; i++) {
    snprintf(line, sizeof(line), "line %d", i);
    snap_log_tail_push(&tail, line);
  }
  ck_assert_int_eq(tail.n_lines, SNAP_LOG_LINES);
  ck_assert_uint_eq(tail.total_lines, SNAP_LOG_LINES + 5);
  ck_assert_str_eq(tail.lines[0], "line 5");
  snprintf(line, sizeof(line), "line %d", SNAP_LOG_LINES + 4);
  ck_assert_str_eq(tail.lines[SNAP_LOG_LINES - 1], line);

  char long_line[SNAP_LOG_LINE_BYTES * 2];
  memset(long_line, 'x', sizeof(long_line) - 1);
  long_line[sizeof(long_line) - 1] = '\0';
  snap_log_tail_push(&tail, long_line);
  ck_assert_uint_eq(strlen(tail.lines[SNAP_LOG_LINES - 1]), SNAP_LOG_LINE_BYTES - 1);
}
END_TEST

START_TEST(concurrency_marks_roll) {
  struct snap_concurrency conc;
  memset(&conc, 0, sizeof(conc));
  for (int i = 1; i <= SNAP_MAX_CONC_MARKS + 3; i++)
    snap_concurrency_mark(&conc, i * 1.5, i);
  ck_assert_int_eq(conc.n_marks, SNAP_MAX_CONC_MARKS);
  ck_assert_int_eq(conc.marks[0].concurrency, 4);
  ck_assert_int_eq(conc.target, SNAP_MAX_CONC_MARKS + 3);
  ck_assert(conc.marks[SNAP_MAX_CONC_MARKS - 1].at_s == (SNAP_MAX_CONC_MARKS + 3) * 1.5);
}
END_TEST

/* A writer publishes snapshots whose fields all carry the same counter; a
 * reader must never see a torn mix of two publishes. */
struct torn_ctx {
  struct snap_slot *slot;
  int n_publishes;
};

static void *writer_main(void *arg) {
  struct torn_ctx *ctx = arg;
  struct snap_run *snap = malloc(sizeof(*snap));
  snap_run_init(snap);
  for (int i = 1; i <= ctx->n_publishes; i++) {
    snap->progress.done = i;
    snap->progress.total = i;
    snap->gpus.gpu[SNAP_MAX_GPUS - 1].mem_total_bytes = (uint64_t)i;
    snprintf(snap->log.lines[SNAP_LOG_LINES - 1], SNAP_LOG_LINE_BYTES, "%d", i);
    snap_slot_publish(ctx->slot, snap);
  }
  free(snap);
  return NULL;
}

START_TEST(reader_never_sees_a_torn_copy) {
  struct torn_ctx ctx = {snap_slot_new(), 20000};
  pthread_t writer;
  ck_assert_int_eq(pthread_create(&writer, NULL, writer_main, &ctx), 0);
  struct snap_run *out = malloc(sizeof(*out));
  uint64_t last = 0;
  int64_t prev_done = 0;
  int n_reads = 0;
  while (prev_done < ctx.n_publishes) {
    if (!snap_slot_read(ctx.slot, out, &last))
      continue;
    n_reads++;
    ck_assert_int_eq(out->progress.total, out->progress.done);
    ck_assert_uint_eq(out->gpus.gpu[SNAP_MAX_GPUS - 1].mem_total_bytes, (uint64_t)out->progress.done);
    ck_assert_int_eq(atoi(out->log.lines[SNAP_LOG_LINES - 1]), (int)out->progress.done);
    ck_assert_int_ge(out->progress.done, prev_done);
    ck_assert_uint_eq(out->seq, (uint64_t)out->progress.done);
    prev_done = out->progress.done;
  }
  pthread_join(writer, NULL);
  ck_assert_int_gt(n_reads, 0);
  free(out);
  snap_slot_free(ctx.slot);
}
END_TEST

static struct snap_point_result point_of(int index, double duration_s, bool to_end) {
  struct snap_point_result p = {.point_index = index, .conc = 1 << index,
                                .measured_to_end = to_end, .duration_s = duration_s};
  snprintf(p.end, sizeof p.end, "%s", to_end ? "done" : "stopped");
  return p;
}

START_TEST(points_roll_and_remaining_time) {
  struct snap_run s;
  snap_run_init(&s);
  double left;
  /* nothing known yet */
  s.progress.phase = SNAP_PHASE_LAUNCHING;
  s.progress.n_points = 4;
  ck_assert(!snap_run_remaining_s(&s, &left));
  ck_assert(!snap_mean_point_s(&s, &left));
  /* the first point with an ETA: it, and three more of its projected length */
  s.progress.phase = SNAP_PHASE_MEASURING;
  s.progress.elapsed_s = 6;
  s.progress.eta_valid = true;
  s.progress.eta_s = 4;
  ck_assert(snap_run_remaining_s(&s, &left));
  ck_assert_double_eq_tol(left, 4 + 3 * 10, 1e-9);
  /* finished points measured to the end give the typical length; a stopped one does not */
  struct snap_point_result a = point_of(0, 20, true), b = point_of(1, 30, true),
                           c = point_of(1, 1, false);
  snap_points_add(&s.points, &a);
  snap_points_add(&s.points, &c);
  snap_points_add(&s.points, &b);
  ck_assert(snap_mean_point_s(&s, &left));
  ck_assert_double_eq_tol(left, 25, 1e-9);
  s.progress.point_index = 2;
  s.progress.eta_s = 7;
  ck_assert(snap_run_remaining_s(&s, &left));
  ck_assert_double_eq_tol(left, 7 + 25, 1e-9);
  /* the last picture of point 1 (its result) with the index already on point 2 */
  s.figures.run_exact = true;
  s.progress.eta_s = 0;
  ck_assert(snap_run_remaining_s(&s, &left));
  ck_assert_double_eq_tol(left, 25 + 25, 1e-9);
  s.progress.point_index = 1; /* ... or still on point 1: it is over */
  ck_assert(snap_run_remaining_s(&s, &left));
  ck_assert_double_eq_tol(left, 0 + 2 * 25, 1e-9);
  s.progress.point_index = 2;
  s.figures.run_exact = false;
  /* between points (no ETA): the point to come at the typical length */
  s.progress.phase = SNAP_PHASE_BETWEEN;
  ck_assert(snap_run_remaining_s(&s, &left));
  ck_assert_double_eq_tol(left, 25 + 25, 1e-9);
  s.progress.phase = SNAP_PHASE_DONE;
  ck_assert(snap_run_remaining_s(&s, &left) && left == 0);
  /* the oldest go past SNAP_MAX_POINTS; every one is counted */
  for (int i = 0; i < SNAP_MAX_POINTS; i++) {
    struct snap_point_result p = point_of(i % 8, 1, true);
    p.conc = 100 + i;
    snap_points_add(&s.points, &p);
  }
  ck_assert_int_eq(s.points.n, SNAP_MAX_POINTS);
  ck_assert_int_eq(s.points.n_written, SNAP_MAX_POINTS + 3);
  ck_assert_int_eq(s.points.point[0].conc, 100);
  ck_assert_int_eq(s.points.point[SNAP_MAX_POINTS - 1].conc, 100 + SNAP_MAX_POINTS - 1);
}
END_TEST

START_TEST(state_names) {
  ck_assert_str_eq(snap_server_state_name(SNAP_SERVER_READY), "ready");
  ck_assert_str_eq(snap_run_phase_name(SNAP_PHASE_INTERRUPTED), "interrupted");
}
END_TEST

int main(void) {
  Suite *s = suite_create("snapshot");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, read_before_publish_copies_nothing);
  tcase_add_test(tc, publish_stamps_seq_and_read_copies_once);
  tcase_add_test(tc, log_tail_keeps_newest_in_order);
  tcase_add_test(tc, concurrency_marks_roll);
  tcase_add_test(tc, reader_never_sees_a_torn_copy);
  tcase_add_test(tc, state_names);
  tcase_add_test(tc, points_roll_and_remaining_time);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
