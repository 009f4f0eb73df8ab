/* ui session view: the dashboard's end of the session controller — the A/B
 * footer follows the arms' states, each outcome the command line asked for
 * goes back once, and a run view's session that cannot start is refused.
 * No server is launched: arms without an engine, and an attached "server"
 * on a port nothing listens on. */
#include "sessview.h"

#include <check.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ui_test.h"

static struct recipe_set *set;
static const struct recipe *off, *mtp;
static struct sessview *sv;
static struct abview ab;
static struct runview *rv;
static struct sessview_views views;
static char results[64];
static struct run_outcome outcomes[2];
static size_t n_outcomes;

static void setup(void) {
  set = ut_fixture_recipes();
  off = recipe_set_find(set, "demo-fp8-h200-sglang:8192_1024");
  mtp = recipe_set_find(set, "demo-fp8-h200-sglang-mtp");
  ck_assert(off && mtp);
  sv = calloc(1, sizeof *sv);
  rv = calloc(1, sizeof *rv);
  snprintf(results, sizeof results, "/tmp/check_ui_sessview_XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(results));
  abview_init(&ab, off, mtp, results);
  runview_init(rv, off);
  views = (struct sessview_views){.rv = rv, .ab = &ab};
  n_outcomes = 0;
  sv->outcomes = outcomes;
  sv->n_outcomes = &n_outcomes;
  sv->max_outcomes = 2;
}

static int remove_entry(const char *path, const struct stat *sb, int type, struct FTW *ftw) {
  (void)sb, (void)type, (void)ftw;
  return remove(path);
}

static void teardown(void) {
  abview_fini(&ab);
  free(sv);
  free(rv);
  recipe_set_free(set);
  nftw(results, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Arm i of an A/B pair: no engine here (the probe's reason), or attached to
 * a port nothing listens on (its run starts and fails, no process). */
static void arm(struct run_session_config *sc, size_t i, const struct recipe *r, bool runs) {
  run_config_init(&sc->arm[i]);
  sc->arm[i].recipe = r;
  sc->arm[i].results_dir = results;
  sc->arm[i].label = i ? "mtp" : "off";
  if (runs) {
    sc->arm[i].attach_url = "http://127.0.0.1:1";
    sc->arm[i].ready_timeout_ms = 200;
    sc->arm[i].conc = 1;
    sc->arm[i].num_prompts = 1;
  } else {
    sc->arm[i].engine = NULL;
    sc->engine_why[i] = "cannot run: no GPU device here";
  }
}

static bool poll_until_over(void) {
  for (int i = 0; i < 600; i++) { /* bounded: 60 s */
    sessview_poll(sv, &views);
    if (sv->st.over)
      return true;
    usleep(100 * 1000);
  }
  return false;
}

START_TEST(ab_footer_follows_the_arms) {
  struct run_session_config sc;
  memset(&sc, 0, sizeof sc);
  sc.n_arms = 2;
  arm(&sc, 0, off, true);
  arm(&sc, 1, mtp, false);
  const char *texts[2] = {"engine sim (test)", "engine none"};
  struct st_err err = {{0}};
  ck_assert_msg(sessview_begin(sv, &sc, true, true, texts, &views, &err), "%s", err.msg);
  ck_assert_str_eq(ab.status, "running the off arm, engine sim (test)");
  ck_assert_int_eq(ab.status_role, THEME_INACTIVE);
  ck_assert(ab.running);
  ck_assert(sessview_ab_arm_running(sv, AB_OFF));
  ck_assert(!sessview_ab_arm_running(sv, AB_MTP));
  ck_assert_int_eq(ab.n_points[AB_OFF], 1);
  ck_assert(poll_until_over());
  /* the off arm ended (nothing answered), the MTP arm could not start */
  char want[256];
  snprintf(want, sizeof want, "cannot run %s: cannot run: no GPU device here", mtp->name);
  ck_assert_str_eq(ab.status, want);
  ck_assert_int_eq(ab.status_role, THEME_ERROR);
  ck_assert(!ab.running);
  ck_assert_uint_eq(n_outcomes, 1); /* the arm that ran, once */
  ck_assert_int_eq(outcomes[0].status, RUN_STATUS_SERVER_FAILED);
  sessview_poll(sv, &views);
  ck_assert_uint_eq(n_outcomes, 1);
  /* its folder stays known for its log after the session is gone */
  char dir[1024];
  const char *title = "";
  sessview_log_dir(sv, &ab, dir, sizeof dir, &title);
  ck_assert_str_eq(dir, outcomes[0].dir);
  ck_assert_str_eq(title, off->name);
  ck_assert(!sessview_stop_begin(sv, &views)); /* nothing runs */
  struct run_outcome last;
  sessview_end(sv, &views, false, &last);
  ck_assert_ptr_null(sv->session);
  ck_assert_uint_eq(n_outcomes, 1);
  ck_assert_int_eq(last.status, RUN_STATUS_SERVER_FAILED);
  sessview_log_dir(sv, &ab, dir, sizeof dir, &title);
  ck_assert_str_eq(dir, outcomes[0].dir);
}
END_TEST

START_TEST(ab_arm_that_cannot_start_first) {
  struct run_session_config sc;
  memset(&sc, 0, sizeof sc);
  sc.n_arms = 2;
  arm(&sc, 0, off, false);
  arm(&sc, 1, mtp, false);
  struct st_err err = {{0}};
  ck_assert(sessview_begin(sv, &sc, true, false, NULL, &views, &err));
  char want[256];
  snprintf(want, sizeof want, "cannot run %s: cannot run: no GPU device here", off->name);
  ck_assert_str_eq(ab.status, want);
  ck_assert(!ab.running);
  ck_assert(sv->st.over);
  struct run_outcome last;
  sessview_end(sv, &views, false, &last);
  ck_assert_uint_eq(n_outcomes, 0); /* not the command line's, and nothing ran */
}
END_TEST

START_TEST(run_view_session_that_cannot_start_is_refused) {
  struct run_session_config sc;
  memset(&sc, 0, sizeof sc);
  sc.n_arms = 1;
  arm(&sc, 0, off, false);
  struct st_err err = {{0}};
  ck_assert(!sessview_begin(sv, &sc, false, true, NULL, &views, &err));
  ck_assert_str_eq(err.msg, "cannot run: no GPU device here");
  ck_assert_ptr_null(sv->session);
  ck_assert(!sessview_poll(sv, &views));
}
END_TEST

START_TEST(stopping_a_run_view_session) {
  struct run_session_config sc;
  memset(&sc, 0, sizeof sc);
  sc.n_arms = 1;
  arm(&sc, 0, off, true);
  sc.arm[0].ready_timeout_ms = 60000; /* waits for the server: stopped first */
  struct st_err err = {{0}};
  ck_assert_msg(sessview_begin(sv, &sc, false, true, NULL, &views, &err), "%s", err.msg);
  ck_assert(sessview_stop_begin(sv, &views));
  ck_assert_str_eq(rv->status, "stopping the server...");
  ck_assert(sessview_wait(sv, 30000));
  struct run_outcome last;
  sessview_end(sv, &views, true, &last);
  ck_assert_ptr_null(sv->session);
  ck_assert_uint_eq(n_outcomes, 1);
  ck_assert_int_ne(last.status, RUN_STATUS_RUNNING);
}
END_TEST

int main(void) {
  Suite *s = suite_create("ui_sessview");
  TCase *tc = tcase_create("sessview");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, ab_footer_follows_the_arms);
  tcase_add_test(tc, ab_arm_that_cannot_start_first);
  tcase_add_test(tc, run_view_session_that_cannot_start_is_refused);
  tcase_add_test(tc, stopping_a_run_view_session);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
