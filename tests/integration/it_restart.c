/* run control against `servetop sim` (the dashboard's run view does exactly
 * these calls): the concurrency raised past the server's batch cap, the cap
 * raised by a restart that keeps the live concurrency, a restart whose
 * server cannot start undone with the run going on, every saved segment in
 * the snapshot's history; + and restarts as segments of their own (files,
 * configurations, the summary and the manifest of a run quit mid-restart). */
#include "run/run.h"

#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/run_check.h"

/* A segment's load runs (live figures: not the saved result of the one before). */
static bool measuring(const struct snap_run *s) {
  return s->progress.phase == SNAP_PHASE_MEASURING && s->progress.done >= 2 &&
         !s->figures.run_exact && s->load.batch_cap_valid &&
         s->server.state == SNAP_SERVER_READY;
}

/* the segment + started, past the cap */
static bool over_cap(const struct snap_run *s) {
  return measuring(s) && s->points.n == 1 && s->concurrency.target > s->load.batch_cap;
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
  /* every saved segment, in order: the one + ended, two cut by restarts, the one stopped */
  ck_assert_int_eq(s->points.n, 4);
  ck_assert_str_eq(s->points.point[0].end, "conc_changed");
  ck_assert_int_eq(s->points.point[0].conc, 2);
  ck_assert_int_eq(s->points.point[0].conc_end, 4);
  ck_assert_str_eq(s->points.point[0].config, "conc 2");
  ck_assert_str_eq(s->points.point[1].end, "restarted");
  ck_assert_int_eq(s->points.point[1].conc, 4);
  ck_assert_str_eq(s->points.point[1].config, "conc 4");
  ck_assert_str_eq(s->points.point[2].end, "restarted");
  ck_assert_str_eq(s->points.point[2].config, "conc 4 max-batch=4");
  ck_assert_str_eq(s->points.point[3].end, "stopped");
  ck_assert_str_eq(s->points.point[3].config, "conc 4 max-batch=4");
  for (int i = 0; i < 4; i++) {
    ck_assert(!s->points.point[i].measured_to_end);
    ck_assert_int_eq(s->points.point[i].segment, i + 1);
  }
  ck_assert_msg(strstr(out.message, "3 configurations measured (4 results): conc 2, conc 4, "
                                    "conc 4 max-batch=4 (partial results saved)"), "%s",
                out.message);
  ck_assert_int_eq(out.n_configs_done, 3);
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

static bool measuring_at(const struct snap_run *s, int conc, int n_saved) {
  return measuring(s) && s->concurrency.target == conc && s->points.n == n_saved;
}
static bool measuring_at_8(const struct snap_run *s) { return measuring_at(s, 8, 1); }
static bool measuring_again_at_8(const struct snap_run *s) { return measuring_at(s, 8, 2); }
/* a restart's server still starting (--sim-warmup-ms: a second to be stopped in) */
static bool restarting(const struct snap_run *s) {
  return s->points.n == 3 && s->server.state == SNAP_SERVER_STARTING;
}

/* The result file leaf of run folder dir, parsed (the test fails without it). */
static cJSON *result_json(const char *dir, const char *leaf) {
  char path[1200];
  snprintf(path, sizeof path, "%s/%s", dir, leaf);
  struct st_err err = {{0}};
  char *text = file_read_all(path, NULL, &err);
  ck_assert_msg(text != NULL, "%s: %s", leaf, err.msg);
  cJSON *doc = cJSON_Parse(text);
  free(text);
  ck_assert_msg(doc != NULL, "%s does not parse", leaf);
  return doc;
}

static double num_at(const cJSON *obj, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  ck_assert_msg(cJSON_IsNumber(v), "no number %s", key);
  return v->valuedouble;
}

static const char *str_at(const cJSON *obj, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  ck_assert_msg(cJSON_IsString(v), "no string %s", key);
  return v->valuestring;
}

/* One saved segment: its max_concurrency, how it ended, its configuration and overrides;
 * every request it planned accounted for (completed, failed, or cut by the segment's end). */
static void check_segment(const char *dir, const char *leaf, int conc, int segment,
                          const char *end, const char *config, const char *overrides) {
  cJSON *doc = result_json(dir, leaf);
  ck_assert_int_eq((int)num_at(doc, "max_concurrency"), conc);
  const cJSON *st = cJSON_GetObjectItemCaseSensitive(doc, "servetop_run");
  ck_assert_int_eq((int)num_at(st, "concurrency"), conc);
  ck_assert_int_eq((int)num_at(st, "segment"), segment);
  ck_assert_str_eq(str_at(st, "end"), end);
  ck_assert_str_eq(str_at(st, "configuration"), config);
  /* one concurrency in it: no change inside a result */
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(st, "concurrency_changes")),
                   0);
  char *joined = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(st, "overrides"));
  ck_assert_str_eq(joined, overrides);
  free(joined);
  const cJSON *servetop = cJSON_GetObjectItemCaseSensitive(doc, "servetop");
  double accounted = num_at(doc, "completed") + num_at(servetop, "failed");
  const cJSON *cut;
  cJSON_ArrayForEach(cut, cJSON_GetObjectItemCaseSensitive(servetop, "cut_by_stop"))
    accounted += cut->valuedouble;
  ck_assert_int_eq((int)accounted, (int)num_at(doc, "num_prompts"));
  cJSON_Delete(doc);
}

/* + mid-point and a restart mid-point: each a segment of its own, saved at its own
 * concurrency and configuration; a run quit while the next server starts says what it
 * saved, and its manifest lists it. */
START_TEST(plus_and_restart_end_segments) {
  struct recipe_set *set = run_check_recipes(TEST_DATA_DIR "/run/recipes");
  struct st_err err = {{0}};
  char *results = run_check_results_dir("it_segments");
  struct run_config cfg;
  run_check_config(&cfg, set, "cap-bf16-h200-sglang", results);
  run_check_on_sim(&cfg);
  cfg.conc = 4;
  cfg.num_prompts = 400;
  cfg.num_warmups = 0;
  char *slow_start[] = {"--sim-warmup-ms=1500"};
  cfg.extra_server_args = slow_start;
  cfg.n_extra_server_args = 1;
  struct run *run = run_start(&cfg, &err);
  ck_assert_msg(run != NULL, "%s", err.msg);
  struct snap_run *s = malloc(sizeof(*s));
  ck_assert(run_check_wait(run, s, 30000, measuring));
  int pid = s->server.pid;

  /* +: the conc-4 segment ends, saved; conc 8 goes on on the same server */
  ck_assert_int_eq(run_set_concurrency(run, 8, &err), 0);
  ck_assert_msg(run_check_wait(run, s, 30000, measuring_at_8), "no segment at conc 8");
  ck_assert_int_eq(s->server.pid, pid);
  ck_assert_int_eq(s->points.point[0].conc, 4);
  ck_assert_str_eq(s->points.point[0].end, "conc_changed");
  ck_assert_str_eq(s->points.point[0].result_file, "result-conc4.json");
  ck_assert_int_eq(s->progress.total, 400); /* --num-prompts: the segment's own requests */

  /* a restart with a knob: the conc-8 segment ends, saved with the configuration it had */
  ck_assert_int_eq(run_restart_with(run, "kv-cache", "0.7", &err), 0);
  ck_assert_msg(run_check_wait(run, s, 30000, measuring_again_at_8), "no segment after restart");
  ck_assert_int_ne(s->server.pid, pid);
  ck_assert_str_eq(s->points.point[1].result_file, "result-conc8-seg2.json");
  ck_assert_str_eq(s->points.point[1].end, "restarted");

  /* another restart, whose server is still starting when the run is quit */
  ck_assert_int_eq(run_restart_with(run, "max-batch", "8", &err), 0);
  ck_assert_msg(run_check_wait(run, s, 30000, restarting), "the restart never started");
  run_stop(run);
  ck_assert(run_wait(run, 30000));
  struct run_outcome out;
  run_get_outcome(run, &out);
  ck_assert_int_eq(out.status, RUN_STATUS_INTERRUPTED);
  ck_assert_int_eq(out.n_points_done, 3);
  ck_assert_int_eq(out.n_configs_done, 3);
  ck_assert_msg(strstr(out.message, "3 configurations measured: conc 4, conc 8, "
                                    "conc 8 kv-cache=0.7 (partial results saved)") &&
                    !strstr(out.message, "nothing measured"),
                "%s", out.message);

  check_segment(out.dir, "result-conc4.json", 4, 1, "conc_changed", "conc 4", "[]");
  check_segment(out.dir, "result-conc8-seg2.json", 8, 2, "restarted", "conc 8", "[]");
  check_segment(out.dir, "result-conc8-seg3.json", 8, 3, "restarted", "conc 8 kv-cache=0.7",
                "[\"kv-cache=0.7\"]");
  /* the server configuration of each: the KV knob only on the third */
  cJSON *third = result_json(out.dir, "result-conc8-seg3.json");
  const char *cmd = str_at(cJSON_GetObjectItemCaseSensitive(
                               cJSON_GetObjectItemCaseSensitive(third, "servetop_run"), "server"),
                           "command");
  ck_assert_msg(strstr(cmd, "--mem-fraction-static 0.7"), "%s", cmd);
  cJSON_Delete(third);

  /* the manifest of the quit run: every result with its configuration */
  cJSON *m = result_json(out.dir, "manifest.json");
  ck_assert_str_eq(str_at(m, "status"), "interrupted");
  ck_assert_int_eq((int)num_at(m, "configurations_measured"), 3);
  ck_assert_msg(strstr(str_at(m, "summary"), "3 configurations measured: conc 4, conc 8, "
                                             "conc 8 kv-cache=0.7"), "%s", str_at(m, "summary"));
  const cJSON *list = cJSON_GetObjectItemCaseSensitive(m, "results");
  ck_assert_int_eq(cJSON_GetArraySize(list), 3);
  static const char *files[] = {"result-conc4.json", "result-conc8-seg2.json",
                                "result-conc8-seg3.json"};
  static const char *configs[] = {"conc 4", "conc 8", "conc 8 kv-cache=0.7"};
  static const int concs[] = {4, 8, 8};
  for (int i = 0; i < 3; i++) {
    const cJSON *e = cJSON_GetArrayItem(list, i);
    ck_assert_str_eq(str_at(e, "file"), files[i]);
    ck_assert_str_eq(str_at(e, "configuration"), configs[i]);
    ck_assert_int_eq((int)num_at(e, "concurrency"), concs[i]);
    ck_assert_int_eq((int)num_at(e, "segment"), i + 1);
  }
  cJSON_Delete(m);

  /* compare and the past runs read the folder in configurations */
  struct run_compare_side side;
  ck_assert_msg(run_compare_side_load(out.dir, &side, &err) == 0, "%s", err.msg);
  ck_assert_int_eq((int)side.n_results, 3);
  ck_assert_int_eq(side.results[0].max_concurrency, 4);
  ck_assert_int_eq(side.results[1].max_concurrency, 8);
  ck_assert_int_eq(side.results[2].max_concurrency, 8);
  char why[512];
  ck_assert_msg(run_compare_unlike(&side, &side, why, sizeof why) == 0, "%s", why);
  char *json = run_compare_json_alloc(&side, &side);
  ck_assert_msg(strstr(json, "\"configuration_a\":\t\"conc 8 kv-cache=0.7\""), "%s", json);
  /* each configuration's figures are its own segment's, not the first result at its
   * concurrency: the kv-cache=0.7 row is seg3's */
  cJSON *doc = cJSON_Parse(json);
  const cJSON *pt, *kv07 = NULL;
  cJSON_ArrayForEach(pt, cJSON_GetObjectItemCaseSensitive(doc, "points")) {
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(pt, "configuration_a");
    if (cJSON_IsString(c) && strcmp(c->valuestring, "conc 8 kv-cache=0.7") == 0)
      kv07 = pt;
  }
  ck_assert_ptr_nonnull(kv07);
  const cJSON *out_tput = cJSON_GetObjectItemCaseSensitive(
      cJSON_GetObjectItemCaseSensitive(kv07, "metrics"), fig_desc(FIG_OUTPUT_TPUT)->name);
  double seg3 = fig_get(&side.results[2].figs, FIG_OUTPUT_TPUT, FIG_VALUE);
  double seg2 = fig_get(&side.results[1].figs, FIG_OUTPUT_TPUT, FIG_VALUE);
  ck_assert(seg3 != seg2);
  ck_assert_double_eq_tol(num_at(out_tput, "a"), seg3, 1e-9 * seg3);
  cJSON_Delete(doc);
  free(json);
  run_compare_side_fini(&side);
  struct run_summary_list past;
  ck_assert_int_eq(run_list_past(results, &past, &err), 0);
  ck_assert_int_eq((int)past.n, 1);
  ck_assert_int_eq(past.runs[0].n_points, 3);
  ck_assert_int_eq(past.runs[0].n_configs, 3);
  ck_assert_msg(strstr(past.runs[0].summary, "3 configurations measured"), "%s",
                past.runs[0].summary);
  run_summary_list_free(&past);

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
  tcase_add_test(tc, plus_and_restart_end_segments);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
