/* run API as the dashboard uses it, against `servetop sim`: live snapshots,
 * concurrency changed mid-point (a new segment), restart with a new knob, stop. */
#include "run/run.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/run_check.h"

/* Each test's recipes and results folder (a checked fixture: set up and torn
 * down around every test). */
static struct recipe_set *set;
static char *results;

static void setup(void) {
  set = run_check_recipes(TEST_DATA_DIR "/launcher/recipes");
  results = run_check_results_dir("it_run");
}

static void teardown(void) {
  recipe_set_free(set);
  run_check_remove_dir(results);
}

/* The recipe called name, run on the sim with short requests and no warmups. */
static void config_for(struct run_config *cfg, const char *name) {
  run_check_config(cfg, set, name, results);
  run_check_on_sim(cfg);
  cfg->num_warmups = 0;
  cfg->isl = 128;
  cfg->osl = 128;
}

static bool measuring_with_progress(const struct snap_run *s) {
  return s->progress.phase == SNAP_PHASE_MEASURING && s->progress.done >= 2;
}

static bool starting_with_log(const struct snap_run *s) {
  return s->progress.phase == SNAP_PHASE_LAUNCHING && s->server.state == SNAP_SERVER_STARTING &&
         s->server.pid > 0 && s->log.n_lines > 0;
}

static bool is_over(const struct snap_run *s) {
  return s->progress.phase == SNAP_PHASE_DONE || s->progress.phase == SNAP_PHASE_FAILED ||
         s->progress.phase == SNAP_PHASE_INTERRUPTED;
}

START_TEST(live_snapshots_concurrency_change_and_stop) {
  struct run_config cfg;
  config_for(&cfg, "llama8b-h200-sglang-mtp");
  cfg.conc = 2;
  cfg.num_prompts = 400;
  char *slow_start[] = {"--sim-warmup-ms=1000"};
  cfg.extra_server_args = slow_start;
  cfg.n_extra_server_args = 1;
  struct st_err err = {{0}};
  struct run *run = run_start(&cfg, &err);
  ck_assert_msg(run != NULL, "%s", err.msg);

  struct snap_run *s = malloc(sizeof(*s));
  /* snapshots keep coming while the server loads */
  ck_assert_msg(run_check_wait(run, s, 30000, starting_with_log), "no snapshot while starting");
  ck_assert_msg(run_check_wait(run, s, 30000, measuring_with_progress), "never measuring");
  ck_assert(s->server.ready_after_s >= 0.5);
  ck_assert(s->server.simulated);
  ck_assert_str_eq(s->server.engine, "sim");
  ck_assert_str_eq(s->server.recipe_name, "llama8b-h200-sglang-mtp");
  ck_assert_int_eq(s->server.state, SNAP_SERVER_READY);
  ck_assert_int_gt(s->server.pid, 0);
  ck_assert_int_gt(s->server.port, 0);
  ck_assert_int_eq(s->concurrency.target, 2);
  ck_assert_int_eq(s->progress.total, 400);
  ck_assert_int_gt(s->log.n_lines, 0);
  ck_assert(s->load.max_total_num_tokens_valid);
  ck_assert_int_gt(s->load.max_total_num_tokens, 0);

  /* a change ends the conc-2 segment (saved) and measures conc 6 in a segment of its own */
  ck_assert_int_eq(run_set_concurrency(run, 6, &err), 0);
  ck_assert_int_eq(run_set_concurrency(run, 0, &err), -1);
  uint64_t seq = 0;
  bool seen = false;
  for (int i = 0; i < 1000 && !seen; i++) {
    if (run_snapshot(run, s, &seq))
      seen = s->concurrency.target == 6 && s->points.n == 1 && !s->figures.run_exact &&
             s->progress.phase == SNAP_PHASE_MEASURING && s->progress.done >= 1;
    usleep(20 * 1000);
  }
  ck_assert_msg(seen, "the concurrency change never showed in a snapshot");
  ck_assert_int_eq(s->concurrency.marks[0].concurrency, 6);
  ck_assert_str_eq(s->points.point[0].end, "conc_changed");
  ck_assert_int_eq(s->points.point[0].conc, 2);
  /* the server log fallback sees speculative decoding on */
  for (int i = 0; i < 200 && !s->spec.accept_length_valid; i++) {
    usleep(20 * 1000);
    run_snapshot(run, s, &seq);
  }
  ck_assert(s->spec.enabled);
  ck_assert(s->spec.accept_length_valid);
  ck_assert(s->spec.accept_length > 1.0);
  /* the recipe has --enable-metrics: the live figures come from /metrics */
  ck_assert_int_eq(s->load.source, SNAP_SRC_METRICS);
  ck_assert(s->load.running_valid && s->load.kv_usage_valid);

  run_stop(run);
  ck_assert(run_wait(run, 20000));
  ck_assert(run_check_wait(run, s, 1000, is_over) || is_over(s));
  struct run_outcome out;
  run_get_outcome(run, &out);
  ck_assert_int_eq(out.status, RUN_STATUS_INTERRUPTED);
  ck_assert_int_eq(out.n_points_done, 2);
  ck_assert_int_eq(out.n_configs_done, 2);
  ck_assert_msg(strstr(out.message, "2 configurations measured: conc 2, conc 6"), "%s",
                out.message);
  ck_assert(!out.mislabelled);

  /* each result holds one concurrency: conc 2's requests, then conc 6's */
  char *path = xasprintf("%s/result-conc2.json", out.dir);
  char *text = file_read_all(path, NULL, &err);
  ck_assert_msg(text != NULL, "%s", err.msg);
  ck_assert(strstr(text, "\"max_concurrency\":\t2,") != NULL);
  ck_assert_msg(strstr(text, "\"concurrency_changes\":\t[]") != NULL, "a change inside a result");
  free(text);
  free(path);
  path = xasprintf("%s/result-conc6-seg2.json", out.dir);
  text = file_read_all(path, NULL, &err);
  ck_assert_msg(text != NULL, "%s", err.msg);
  ck_assert(strstr(text, "\"max_concurrency\":\t6,") != NULL);
  ck_assert(strstr(text, "\"configuration\":\t\"conc 6\"") != NULL);
  free(text);
  free(path);
  free(s);
  run_free(run);
}
END_TEST

START_TEST(restart_with_a_new_knob_measures_again) {
  struct run_config cfg;
  config_for(&cfg, "llama8b-h200-sglang");
  cfg.conc = 2;
  cfg.num_prompts = 12;
  struct st_err err = {{0}};
  struct run *run = run_start(&cfg, &err);
  ck_assert_msg(run != NULL, "%s", err.msg);
  struct snap_run *s = malloc(sizeof(*s));
  ck_assert(run_check_wait(run, s, 30000, measuring_with_progress));
  int64_t kv_before = s->load.max_total_num_tokens;
  ck_assert(s->load.batch_cap_valid && s->load.batch_cap > 0); /* the sim's max_running_requests */
  ck_assert(!s->load.max_total_num_tokens_was_valid);
  /* a value the engine refuses is refused while the server still runs */
  ck_assert_int_eq(run_restart_with(run, "mem-fraction-static", "1.5", &err), -1);
  ck_assert_msg(strstr(err.msg, "fraction"), "%s", err.msg);
  ck_assert_int_eq(run_restart_with(run, "mem-fraction-static", "0.5", &err), 0);
  ck_assert_int_eq(run_restart_with(run, "x=y", "1", &err), -1);
  ck_assert(run_wait(run, 60000));
  struct run_outcome out;
  run_get_outcome(run, &out);
  ck_assert_msg(out.status == RUN_STATUS_OK, "%s", out.message);
  ck_assert_int_eq(out.n_points_done, 2); /* the cut segment, then the full one */
  /* a one-point run: its configurations, not "2 point(s)" */
  ck_assert_str_eq(out.message, "2 configurations measured: conc 2, "
                                "conc 2 mem-fraction-static=0.5");
  ck_assert_int_gt(kv_before, out.max_total_num_tokens);
  ck_assert_int_gt(out.max_total_num_tokens, 0);
  run_snapshot(run, s, NULL);
  ck_assert_int_eq(s->progress.phase, SNAP_PHASE_DONE);
  ck_assert_int_eq(s->server.state, SNAP_SERVER_EXITED);
  /* the new capacity and the one before the restart */
  ck_assert_int_eq(s->load.max_total_num_tokens, out.max_total_num_tokens);
  ck_assert(s->load.max_total_num_tokens_was_valid);
  ck_assert_int_eq(s->load.max_total_num_tokens_was, kv_before);
  ck_assert(s->figures.run.f[FIG_TPOT].valid);
  ck_assert(fig_get(&s->figures.run, FIG_OUTPUT_TPUT, FIG_VALUE) > 0);
  free(s);
  run_free(run);
}
END_TEST


/* The last picture of a point is its result; while it runs, the whole-point
 * figures are live (and the acceptance is the point's, as saved). */
static bool measuring_run_figures(const struct snap_run *s) {
  return s->progress.phase == SNAP_PHASE_MEASURING && s->progress.done >= 4 &&
         s->figures.run.f[FIG_TTFT].valid && s->spec.point_scoped;
}

static double json_number(const char *text, const char *key) {
  const char *at = strstr(text, key);
  ck_assert_msg(at != NULL, "no %s", key);
  at = strchr(at + strlen(key), ':');
  return strtod(at + 1, NULL);
}

START_TEST(last_picture_is_the_result) {
  struct run_config cfg;
  config_for(&cfg, "llama8b-h200-sglang-mtp");
  cfg.conc = 4;
  cfg.num_prompts = 40;
  cfg.num_warmups = 2;
  struct st_err err = {{0}};
  struct run *run = run_start(&cfg, &err);
  ck_assert_msg(run != NULL, "%s", err.msg);
  struct snap_run *s = malloc(sizeof(*s));
  ck_assert_msg(run_check_wait(run, s, 60000, measuring_run_figures), "no live point figures");
  ck_assert(!s->figures.run_exact);
  ck_assert(s->figures.run.f[FIG_OUTPUT_TPUT].valid && s->figures.run_span_s > 0);
  ck_assert(s->figures.window.f[FIG_OUTPUT_TPUT].valid && s->figures.window_span_s > 0 &&
            s->figures.window_span_s <= SNAP_WINDOW_S);
  ck_assert_str_eq(s->spec.method, "sglang_server_info_cumulative_delta");
  ck_assert(run_wait(run, 60000));
  struct run_outcome out;
  run_get_outcome(run, &out);
  ck_assert_msg(out.status == RUN_STATUS_OK, "%s", out.message);
  run_snapshot(run, s, NULL);
  char *path = xasprintf("%s/result-conc4.json", out.dir);
  char *text = file_read_all(path, NULL, &err);
  ck_assert_msg(text != NULL, "%s", err.msg);
  ck_assert(s->figures.run_exact);
  ck_assert_int_eq(s->progress.done, (int64_t)json_number(text, "\"completed\""));
  ck_assert_int_eq(s->progress.in_flight, 0);
  ck_assert_int_eq(s->progress.total, 40);
  ck_assert(fabs(fig_get(&s->figures.run, FIG_OUTPUT_TPUT, FIG_VALUE) - json_number(text, "\"output_throughput\"")) <
            1e-6);
  ck_assert(fabs(fig_get(&s->figures.run, FIG_TTFT, FIG_STAT_P50) - json_number(text, "\"median_ttft_ms\"")) < 1e-9);
  ck_assert(fabs(fig_get(&s->figures.run, FIG_TPOT, FIG_STAT_P99) - json_number(text, "\"p99_tpot_ms\"")) < 1e-9);
  /* the saved acceptance, not the server log's or a later scrape's */
  const char *acc = strstr(text, "\"acceptance\"");
  ck_assert_ptr_nonnull(acc);
  ck_assert(s->spec.accept_length_valid && s->spec.point_scoped);
  ck_assert(fabs(s->spec.accept_length - json_number(acc, "\"accept_length\"")) < 1e-9);
  ck_assert(!s->server.crashed); /* stopped by servetop */
  free(text);
  free(path);
  free(s);
  run_free(run);
}
END_TEST

START_TEST(a_crash_shows_in_the_snapshot) {
  struct run_config cfg;
  config_for(&cfg, "llama8b-h200-sglang");
  cfg.conc = 2;
  cfg.num_prompts = 20;
  char *crash[] = {"--sim-fault=crash-after=6"};
  cfg.extra_server_args = crash;
  cfg.n_extra_server_args = 1;
  struct st_err err = {{0}};
  struct run *run = run_start(&cfg, &err);
  ck_assert_msg(run != NULL, "%s", err.msg);
  ck_assert(run_wait(run, 60000));
  struct run_outcome out;
  run_get_outcome(run, &out);
  ck_assert_int_eq(out.status, RUN_STATUS_SERVER_FAILED);
  ck_assert_int_eq(out.n_points_done, 1); /* what was measured is kept */
  struct snap_run *s = malloc(sizeof(*s));
  run_snapshot(run, s, NULL);
  ck_assert_int_eq(s->server.state, SNAP_SERVER_EXITED);
  ck_assert(s->server.crashed && s->server.exited_valid);
  ck_assert_int_eq(s->progress.phase, SNAP_PHASE_FAILED);
  ck_assert(s->figures.run_exact); /* the saved figures of the requests before the crash */
  ck_assert_int_lt(s->progress.done, 20);
  free(s);
  run_free(run);
}
END_TEST

int main(void) {
  Suite *s = suite_create("run");
  TCase *tc = tcase_create("sim");
  tcase_set_timeout(tc, 120);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, live_snapshots_concurrency_change_and_stop);
  tcase_add_test(tc, restart_with_a_new_knob_measures_again);
  tcase_add_test(tc, last_picture_is_the_result);
  tcase_add_test(tc, a_crash_shows_in_the_snapshot);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
