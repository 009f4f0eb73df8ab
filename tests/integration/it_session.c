/* The session controller (run_session_*) as the dashboard and the headless
 * CLI drive it, against `servetop sim`: A/B arms one after the other (never
 * two at once, off before MTP, each with its own server), both at once
 * (--ab-parallel), a stop that ends every arm and starts no other, an arm that
 * cannot start, and no process left behind by any of it. */
#include "run/run.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/run_check.h"

static struct recipe_set *set;
static char *results;

static void setup(void) {
  set = run_check_recipes(TEST_DATA_DIR "/launcher/recipes");
  results = run_check_results_dir("it_session");
}

static void teardown(void) {
  recipe_set_free(set);
  run_check_remove_dir(results);
}

/* The recipe called name on the sim: short requests, no warmups, conc 2. */
static void arm_for(struct run_config *cfg, const char *name, const char *label, int prompts) {
  run_check_config(cfg, set, name, results);
  run_check_on_sim(cfg);
  cfg->num_warmups = 0;
  cfg->isl = 128;
  cfg->osl = 32;
  cfg->conc = 2;
  cfg->num_prompts = prompts;
  cfg->label = label;
}

static void ab_config(struct run_session_config *sc, int prompts) {
  memset(sc, 0, sizeof *sc);
  sc->n_arms = 2;
  arm_for(&sc->arm[0], "llama8b-h200-sglang", "off", prompts);
  arm_for(&sc->arm[1], "llama8b-h200-sglang-mtp", "mtp", prompts);
}

/* The parent pid of /proc/<pid>/stat (-1 when gone). */
static int ppid_of(const char *pid) {
  char path[300], buf[512];
  snprintf(path, sizeof path, "/proc/%s/stat", pid);
  FILE *f = fopen(path, "r");
  if (!f)
    return -1;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  const char *close_paren = strrchr(buf, ')'); /* the name may hold spaces */
  int ppid = -1;
  char state;
  if (!close_paren || sscanf(close_paren + 1, " %c %d", &state, &ppid) != 2)
    return -1;
  return ppid;
}

/* Processes whose parent, grandparent... is this one (the supervisors and
 * servers its launches started). */
static int descendants(void) {
  int pids[4096], parents[4096], n = 0;
  DIR *d = opendir("/proc");
  ck_assert_ptr_nonnull(d);
  for (struct dirent *e; (e = readdir(d)) && n < 4096;) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9')
      continue;
    int ppid = ppid_of(e->d_name);
    if (ppid < 0)
      continue;
    pids[n] = atoi(e->d_name);
    parents[n++] = ppid;
  }
  closedir(d);
  int mine[4096], n_mine = 1, count = 0;
  mine[0] = (int)getpid();
  for (int k = 0; k < n_mine; k++)
    for (int i = 0; i < n; i++)
      if (parents[i] == mine[k] && n_mine < 4096) {
        mine[n_mine++] = pids[i];
        count++;
      }
  return count;
}

/* Every process the session started is gone (bounded: the supervisors reap
 * their servers' groups as they exit). */
static void assert_no_process_left(const int *server_pids, size_t n) {
  int left = -1;
  for (int i = 0; i < 200 && left != 0; i++) {
    left = descendants();
    if (left)
      usleep(50 * 1000);
  }
  ck_assert_msg(left == 0, "%d process(es) started by the session are still running", left);
  for (size_t i = 0; i < n; i++)
    if (server_pids[i] > 0) {
      ck_assert_msg(kill(server_pids[i], 0) == -1 && errno == ESRCH, "server %d still runs",
                    server_pids[i]);
      ck_assert_msg(kill(-server_pids[i], 0) == -1 && errno == ESRCH,
                    "the process group of server %d is still there", server_pids[i]);
    }
}

/* Polls the session like the dashboard (10 Hz) until pred holds or it is
 * over; each arm's server pid goes into pids. */
struct watch {
  int pids[RUN_SESSION_MAX_ARMS];
  size_t max_running;
  bool spec_on[RUN_SESSION_MAX_ARMS];
  bool spec_known[RUN_SESSION_MAX_ARMS];
};

static bool watch_until(struct run_session *s, struct run_session_status *st, struct watch *w,
                        int timeout_ms, bool (*pred)(const struct run_session_status *)) {
  struct snap_run *snap = malloc(sizeof *snap);
  bool held = false;
  for (int waited = 0; waited < timeout_ms; waited += 50) {
    run_session_poll(s);
    run_session_status(s, st);
    if (st->n_running > w->max_running)
      w->max_running = st->n_running;
    /* sequential: an arm runs only once every arm before it has ended */
    if (!st->parallel)
      for (size_t i = 0; i < st->n_arms; i++)
        if (st->arm[i].state == RUN_ARM_RUNNING)
          for (size_t k = 0; k < i; k++)
            ck_assert_msg(st->arm[k].state == RUN_ARM_ENDED, "arm %zu runs while arm %zu is %s",
                          i + 1, k + 1, run_arm_state_name(st->arm[k].state));
    for (size_t i = 0; i < st->n_arms; i++)
      if (run_session_snapshot(s, i, snap, NULL)) {
        if (snap->server.pid > 0 && w->pids[i] == 0)
          w->pids[i] = snap->server.pid;
        if (snap->spec.accept_length_valid || snap->progress.phase == SNAP_PHASE_DONE) {
          w->spec_known[i] = true;
          w->spec_on[i] = snap->spec.enabled;
        }
      }
    if ((pred && pred(st)) || st->over) {
      held = pred ? pred(st) : true;
      break;
    }
    usleep(50 * 1000);
  }
  free(snap);
  return held;
}

static bool both_running(const struct run_session_status *st) {
  return st->n_running == 2;
}

static bool first_running(const struct run_session_status *st) {
  return st->arm[0].state == RUN_ARM_RUNNING && st->arm[0].have_snap;
}

static const char *folder_suffix(const char *dir) {
  const char *dash = strrchr(dir, '-');
  return dash ? dash + 1 : "";
}

START_TEST(ab_arms_one_after_the_other) {
  struct run_session_config sc;
  ab_config(&sc, 6);
  struct st_err err = {{0}};
  struct run_session *s = run_session_start(&sc, &err);
  ck_assert_msg(s != NULL, "%s", err.msg);
  struct run_session_status st;
  run_session_status(s, &st);
  ck_assert_int_eq(st.arm[0].state, RUN_ARM_RUNNING);
  ck_assert_int_eq(st.arm[1].state, RUN_ARM_WAITING);
  ck_assert_int_eq(st.current, 0);
  ck_assert_int_eq(st.arm[0].n_points, 1);
  struct watch w = {.max_running = 0};
  watch_until(s, &st, &w, 120000, NULL);
  ck_assert_msg(st.over, "the A/B session did not end");
  ck_assert_uint_eq(w.max_running, 1); /* one GPU set: never both */
  for (size_t i = 0; i < 2; i++) {
    ck_assert_int_eq(st.arm[i].state, RUN_ARM_ENDED);
    ck_assert_msg(st.arm[i].outcome.status == RUN_STATUS_OK, "arm %zu: %s", i + 1,
                  st.arm[i].outcome.message);
    ck_assert_int_eq(st.arm[i].outcome.n_points_done, 1);
    ck_assert_int_eq(st.arm[i].points_done, 1);
    ck_assert_int_gt(w.pids[i], 0);
  }
  ck_assert_int_ne(w.pids[0], w.pids[1]); /* each arm its own server */
  /* off first, then MTP: the folders and what each server said */
  ck_assert_str_eq(folder_suffix(st.arm[0].outcome.dir), "off");
  ck_assert_str_eq(folder_suffix(st.arm[1].outcome.dir), "mtp");
  ck_assert(w.spec_known[0] && !w.spec_on[0]);
  ck_assert(w.spec_known[1] && w.spec_on[1]);
  ck_assert(st.remaining_valid && st.remaining_s == 0);
  ck_assert(run_session_wait(s, 0));
  run_session_free(s);
  assert_no_process_left(w.pids, 2);
}
END_TEST

/* --repeats: the arms alternate, A B A B A B, each repeat its own run folder ("-r<k>"), every
 * repeat's outcome kept, and nothing left running. */
START_TEST(ab_repeats_interleave) {
  struct run_session_config sc;
  ab_config(&sc, 4);
  sc.repeats = 3;
  struct st_err err = {{0}};
  struct run_session *s = run_session_start(&sc, &err);
  ck_assert_msg(s != NULL, "%s", err.msg);
  struct run_session_status st;
  int order[16], n_order = 0, last = -1;
  for (int waited = 0; waited < 240000; waited += 20) {
    run_session_poll(s);
    run_session_status(s, &st);
    ck_assert_uint_le(st.n_running, 1);
    if (st.current >= 0) {
      int now = st.arm[st.current].repeat * 2 + st.current;
      if (now != last && n_order < 16)
        order[n_order++] = last = now;
    }
    if (st.over)
      break;
    usleep(20 * 1000);
  }
  ck_assert_msg(st.over, "the repeated A/B did not end");
  ck_assert_int_eq(n_order, 6);
  for (int i = 0; i < 6; i++) /* off r1, mtp r1, off r2, mtp r2, off r3, mtp r3 */
    ck_assert_int_eq(order[i], i);
  for (size_t arm = 0; arm < 2; arm++) {
    ck_assert_int_eq(st.arm[arm].repeats_done, 3);
    for (int k = 0; k < 3; k++) {
      struct run_outcome o;
      ck_assert(run_session_repeat_outcome(s, arm, k, &o));
      ck_assert_msg(o.status == RUN_STATUS_OK, "arm %zu repeat %d: %s", arm, k, o.message);
      char want[8];
      snprintf(want, sizeof want, "r%d", k + 1);
      ck_assert_str_eq(folder_suffix(o.dir), want);
    }
    struct run_outcome o;
    ck_assert(!run_session_repeat_outcome(s, arm, 3, &o));
  }
  run_session_free(s);
  int none[2] = {0, 0};
  assert_no_process_left(none, 2);
}
END_TEST

START_TEST(parallel_arms_and_stop) {
  struct run_session_config sc;
  ab_config(&sc, 4000);
  sc.parallel = true;
  struct st_err err = {{0}};
  struct run_session *s = run_session_start(&sc, &err);
  ck_assert_msg(s != NULL, "%s", err.msg);
  struct run_session_status st;
  struct watch w = {.max_running = 0};
  ck_assert_msg(watch_until(s, &st, &w, 60000, both_running), "the arms never ran together");
  ck_assert(st.parallel);
  /* both measuring: each has a server */
  for (int i = 0; i < 600 && (w.pids[0] == 0 || w.pids[1] == 0); i++)
    watch_until(s, &st, &w, 50, NULL);
  ck_assert(w.pids[0] > 0 && w.pids[1] > 0);
  run_session_stop(s);
  ck_assert_msg(run_session_wait(s, 60000), "the stopped session did not end");
  run_session_status(s, &st);
  ck_assert(st.over && st.stop_requested);
  for (size_t i = 0; i < 2; i++) {
    ck_assert_int_eq(st.arm[i].state, RUN_ARM_ENDED);
    ck_assert_msg(st.arm[i].outcome.status == RUN_STATUS_INTERRUPTED ||
                      st.arm[i].outcome.status == RUN_STATUS_SERVER_FAILED,
                  "arm %zu ended %s", i + 1, run_status_name(st.arm[i].outcome.status));
  }
  /* the servers went with the stop, before the session was freed */
  assert_no_process_left(w.pids, 2);
  run_session_free(s);
}
END_TEST

START_TEST(stop_during_the_first_arm_starts_no_other) {
  struct run_session_config sc;
  ab_config(&sc, 4000);
  struct st_err err = {{0}};
  struct run_session *s = run_session_start(&sc, &err);
  ck_assert_msg(s != NULL, "%s", err.msg);
  struct run_session_status st;
  struct watch w = {.max_running = 0};
  ck_assert(watch_until(s, &st, &w, 60000, first_running));
  /* the run's own calls go through the session: a knob check refuses, and
   * the arm not started has no run to change */
  ck_assert_int_eq(run_session_restart_with(s, 0, "mem-fraction-static", "1.5", &err), -1);
  ck_assert_int_eq(run_session_set_concurrency(s, 1, 4, &err), -1);
  run_session_stop(s);
  ck_assert(run_session_wait(s, 60000));
  run_session_status(s, &st);
  ck_assert_int_eq(st.arm[0].state, RUN_ARM_ENDED);
  ck_assert_int_eq(st.arm[0].outcome.status, RUN_STATUS_INTERRUPTED);
  ck_assert_int_eq(st.arm[1].state, RUN_ARM_NOT_STARTED);
  ck_assert_str_eq(st.arm[1].start_error, ""); /* called off, not refused */
  ck_assert(!st.arm[1].started);
  ck_assert(st.over);
  run_session_free(s);
  assert_no_process_left(w.pids, 1);
}
END_TEST

START_TEST(an_arm_that_cannot_start) {
  struct run_session_config sc;
  ab_config(&sc, 4);
  sc.arm[0].engine = NULL;
  sc.engine_why[0] = "cannot run: no llama-server here";
  struct st_err err = {{0}};
  struct run_session *s = run_session_start(&sc, &err);
  ck_assert_msg(s != NULL, "%s", err.msg);
  struct run_session_status st;
  run_session_status(s, &st);
  ck_assert_int_eq(st.arm[0].state, RUN_ARM_NOT_STARTED);
  ck_assert_str_eq(st.arm[0].start_error, "cannot run: no llama-server here");
  ck_assert_int_eq(st.arm[1].state, RUN_ARM_NOT_STARTED); /* the A/B stops there */
  ck_assert(st.over);
  ck_assert_int_eq(st.current, -1);
  ck_assert(run_session_wait(s, 0));
  run_session_free(s);
  /* a config without arms is refused */
  memset(&sc, 0, sizeof sc);
  ck_assert_ptr_null(run_session_start(&sc, &err));
  assert_no_process_left(NULL, 0);
}
END_TEST

static Suite *session_suite(void) {
  Suite *suite = suite_create("session");
  TCase *tc = tcase_create("sim");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, ab_arms_one_after_the_other);
  tcase_add_test(tc, ab_repeats_interleave);
  tcase_add_test(tc, parallel_arms_and_stop);
  tcase_add_test(tc, stop_during_the_first_arm_starts_no_other);
  tcase_add_test(tc, an_arm_that_cannot_start);
  suite_add_tcase(suite, tc);
  return suite;
}

int main(void) {
  SRunner *sr = srunner_create(session_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
