/* run control against `servetop sim` (the dashboard's run view does exactly
 * these calls): the concurrency raised past the server's batch cap, the cap
 * raised by a restart that keeps the live concurrency, a restart whose
 * server cannot start undone with the run going on, every saved point in
 * the snapshot's history. */
#include "run/run.h"

#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/run_check.h"

static bool measuring(const struct snap_run *s) {
  return s->progress.phase == SNAP_PHASE_MEASURING && s->progress.done >= 2 &&
         s->load.batch_cap_valid && s->server.state == SNAP_SERVER_READY;
}

static bool over_cap(const struct snap_run *s) {
  return measuring(s) && s->concurrency.target > s->load.batch_cap;
}

static bool restarted(const struct snap_run *s) {
  return measuring(s) && strncmp(s->server.restart_note, "restarted", 9) == 0;
}

static bool restart_undone(const struct snap_run *s) {
  return measuring(s) && s->server.restart_failed;
}

START_TEST(batch_cap_raised_and_a_bad_restart_undone) {
  struct recipe_set *set = run_check_recipes(TEST_DATA_DIR "/run/recipes");
  struct st_err err = {{0}};
  char *results = run_check_results_dir("it_restart");
  struct run_config cfg;
  run_check_config(&cfg, set, "cap-bf16-h200-sglang", results);
  run_check_on_sim(&cfg);
  cfg.conc = 2;
  cfg.num_prompts = 400;
  cfg.num_warmups = 0;
  struct run *run = run_start(&cfg, &err);
  ck_assert_msg(run != NULL, "%s", err.msg);
  struct snap_run *s = malloc(sizeof(*s));
  ck_assert(run_check_wait(run, s, 30000, measuring));
  ck_assert_int_eq(s->load.batch_cap, 2); /* --max-running-requests $CONC */
  int pid_before = s->server.pid;

  /* past the cap: the snapshot says so (the run view and the status line read it) */
  ck_assert_int_eq(run_set_concurrency(run, 4, &err), 0);
  ck_assert(run_check_wait(run, s, 10000, over_cap));
  /* a knob the engine refuses: refused, nothing stopped */
  ck_assert_int_eq(run_restart_with(run, "max-batch", "0", &err), -1);
  ck_assert_msg(strstr(err.msg, ">= 1"), "%s", err.msg);
  ck_assert(run_check_wait(run, s, 2000, measuring));
  ck_assert_int_eq(s->server.pid, pid_before);
  /* the cap raised to the concurrency: a new server, the concurrency kept */
  ck_assert_int_eq(run_restart_with(run, "max-batch", "4", &err), 0);
  ck_assert(run_check_wait(run, s, 30000, restarted));
  ck_assert_int_ne(s->server.pid, pid_before);
  ck_assert_int_eq(s->load.batch_cap, 4);
  ck_assert_int_eq(s->concurrency.target, 4);
  ck_assert(!s->server.restart_failed);
  int pid_good = s->server.pid;

  /* a restart whose server cannot start (the sim refuses the flag): undone,
   * the previous configuration back, the run goes on at the same concurrency */
  ck_assert_int_eq(run_restart_with(run, "sim-fault", "nope", &err), 0);
  ck_assert(run_check_wait(run, s, 30000, restart_undone));
  ck_assert_msg(strstr(s->server.restart_note, "sim-fault=nope failed"), "%s",
                s->server.restart_note);
  ck_assert_msg(strstr(s->server.restart_note, "back to the previous configuration"), "%s",
                s->server.restart_note);
  ck_assert_int_ne(s->server.pid, pid_good);
  ck_assert_int_eq(s->load.batch_cap, 4);
  ck_assert_int_eq(s->concurrency.target, 4);

  run_stop(run);
  ck_assert(run_wait(run, 30000));
  struct run_outcome out;
  run_get_outcome(run, &out);
  ck_assert_int_eq(out.status, RUN_STATUS_INTERRUPTED);
  run_snapshot(run, s, NULL);
  /* every saved point, in order: two cut by restarts, the one stopped */
  ck_assert_int_eq(s->points.n, 3);
  ck_assert_str_eq(s->points.point[0].end, "restarted");
  ck_assert_int_eq(s->points.point[0].conc, 2);
  ck_assert_int_eq(s->points.point[0].conc_end, 4);
  ck_assert_str_eq(s->points.point[1].end, "restarted");
  ck_assert_int_eq(s->points.point[1].conc, 4);
  ck_assert_str_eq(s->points.point[2].end, "stopped");
  for (int i = 0; i < 3; i++)
    ck_assert(!s->points.point[i].measured_to_end);
  /* the overrides kept are the ones that worked */
  char path[1100];
  snprintf(path, sizeof path, "%s/manifest.json", out.dir);
  char *text = file_read_all(path, NULL, &err);
  ck_assert_msg(text != NULL, "%s", err.msg);
  ck_assert_msg(strstr(text, "\"max-batch=4\"") && !strstr(text, "sim-fault"), "%s", text);
  free(text);
  free(s);
  run_free(run);
  recipe_set_free(set);
  run_check_remove_dir(results);
}
END_TEST

int main(void) {
  Suite *s = suite_create("restart");
  TCase *tc = tcase_create("sim");
  tcase_set_timeout(tc, 180);
  tcase_add_test(tc, batch_cap_raised_and_a_bad_restart_undone);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
