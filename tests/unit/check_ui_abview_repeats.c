/* ui A/B view with --repeats: once the repeats are over, each row's values and ratio come
 * from the arms' repeat folders as `servetop compare` reads them (run_compare_figure: the
 * means over the repeats, the ratio's 95% interval from their spread), and the header says
 * how many repeats; while an arm runs, or with a past run in a column, they do not. The
 * repeat folders are a past-run fixture copied three times per arm (the off and MTP fixtures
 * differ in chat template: unlike), each repeat's throughputs scaled so that they differ. */
#include "abview.h"

#include <check.h>
#include <cjson/cJSON.h>
#include <dirent.h>
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ui_test.h"

#define PAST_DIR TEST_DATA_DIR "/ui/past"
#define PAST_MTP PAST_DIR "/20261130-050000-qwen3.5-fp8-h200-sglang-mtp"

enum { N_REPS = 3 };

static struct abview ab;
static char work[64];
static char dirs[2][RUN_SESSION_MAX_REPEATS][1024];

/* from/name into dir, a result's throughputs times factor. */
static void copy_scaled(const char *from, const char *name, const char *dir, double factor) {
  char path[1200];
  snprintf(path, sizeof path, "%s/%s", from, name);
  FILE *f = fopen(path, "rb");
  ck_assert_ptr_nonnull(f);
  static char text[1 << 16];
  size_t len = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[len] = '\0';
  char *out = NULL;
  if (strncmp(name, "result-", 7) == 0) {
    cJSON *root = cJSON_Parse(text);
    ck_assert_ptr_nonnull(root);
    static const char *const keys[] = {"output_throughput", "total_token_throughput",
                                       "request_throughput"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
      cJSON *v = cJSON_GetObjectItemCaseSensitive(root, keys[i]);
      ck_assert(cJSON_IsNumber(v));
      cJSON_SetNumberValue(v, v->valuedouble * factor);
    }
    out = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
  }
  snprintf(path, sizeof path, "%s/%s", dir, name);
  f = fopen(path, "wb");
  ck_assert_ptr_nonnull(f);
  const char *data = out ? out : text;
  ck_assert_uint_eq(fwrite(data, 1, strlen(data), f), strlen(data));
  fclose(f);
  free(out);
}

/* Repeat k of arm a: a run folder like the fixture's, its throughputs times factor. */
static void make_repeat(int a, int k, const char *fixture, double factor) {
  snprintf(dirs[a][k], sizeof dirs[a][k], "%s/%s-r%d", work, a == AB_MTP ? "mtp" : "off", k + 1);
  ck_assert_int_eq(mkdir(dirs[a][k], 0755), 0);
  DIR *d = opendir(fixture);
  ck_assert_ptr_nonnull(d);
  const struct dirent *e;
  while ((e = readdir(d)))
    if (strstr(e->d_name, ".json"))
      copy_scaled(fixture, e->d_name, dirs[a][k], factor);
  closedir(d);
}

/* A live arm at concurrency 8 whose whole-run output is tok_s. */
static void live_arm(struct runview *rv, double tok_s) {
  struct snap_run s;
  snap_run_init(&s);
  s.server.state = SNAP_SERVER_READY;
  s.progress.phase = SNAP_PHASE_MEASURING;
  s.progress.n_points = 1;
  s.concurrency.target = 8;
  fig_set_scalar(&s.figures.run, FIG_OUTPUT_TPUT, true, tok_s);
  runview_push(rv, &s);
}

static void setup(void) {
  snprintf(work, sizeof work, "/tmp/check_ui_abview_repeats_XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(work));
  static const double off_factor[N_REPS] = {1.0, 1.1, 0.9}, mtp_factor[N_REPS] = {1.0, 0.95, 1.2};
  for (int k = 0; k < N_REPS; k++) {
    make_repeat(AB_OFF, k, PAST_MTP, off_factor[k]); /* like with like: one fixture */
    make_repeat(AB_MTP, k, PAST_MTP, mtp_factor[k]);
  }
  abview_init(&ab, NULL, NULL, work);
  live_arm(&ab.arm[AB_OFF], 1800);
  live_arm(&ab.arm[AB_MTP], 3000);
}

static int remove_entry(const char *path, const struct stat *sb, int type, struct FTW *ftw) {
  (void)sb, (void)type, (void)ftw;
  return remove(path);
}

static void teardown(void) {
  abview_fini(&ab);
  nftw(work, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* The row labelled label (the test fails without one). */
static const struct ab_row *row(const struct ab_row *rows, size_t n, const char *label) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(rows[i].label, label) == 0)
      return &rows[i];
  ck_abort_msg("no row '%s'", label);
  return &rows[0];
}

/* The row's values and ratio are run_compare_figure's over the repeats of both arms. */
static void assert_row_is_compare(const struct ab_row *r, enum fig_id id, enum fig_stat stat) {
  const char *paths[2][N_REPS];
  struct run_compare_side side[2];
  struct st_err err = {{0}};
  for (int a = 0; a < 2; a++) {
    for (int k = 0; k < N_REPS; k++)
      paths[a][k] = dirs[a][k];
    ck_assert_msg(run_compare_side_load_repeats(paths[a], N_REPS, &side[a], &err) == 0, "%s",
                  err.msg);
  }
  const struct results_file *at8[2] = {NULL, NULL}; /* each arm's conc-8 result */
  for (int a = 0; a < 2; a++)
    for (size_t i = 0; i < side[a].n_results; i++)
      if (side[a].results[i].max_concurrency == 8 && !at8[a])
        at8[a] = &side[a].results[i];
  ck_assert(at8[AB_OFF] && at8[AB_MTP]);
  struct run_compare_value cv;
  ck_assert(run_compare_figure(&side[AB_OFF], at8[AB_OFF], &side[AB_MTP], at8[AB_MTP], id, stat,
                               &cv));
  ck_assert_int_eq(cv.ratio.repeats, N_REPS);
  ck_assert(cv.ratio.known);
  ck_assert_int_eq(r->ratio.repeats, N_REPS);
  ck_assert(r->ratio.known);
  ck_assert_double_eq_tol(r->ratio.ratio, cv.ratio.ratio, 1e-12);
  ck_assert_double_eq_tol(r->ratio.lo, cv.ratio.lo, 1e-12);
  ck_assert_double_eq_tol(r->ratio.hi, cv.ratio.hi, 1e-12);
  ck_assert_int_eq(r->ratio.verdict, cv.ratio.verdict);
  ck_assert_double_eq_tol(r->value[AB_OFF], cv.a, 1e-9);
  ck_assert_double_eq_tol(r->value[AB_MTP], cv.b, 1e-9);
  run_compare_side_fini(&side[0]);
  run_compare_side_fini(&side[1]);
}

START_TEST(rows_come_from_the_repeats_once_they_are_over) {
  struct ab_row rows[16];
  /* before the repeats are loaded: the live figures, one run each */
  size_t n = abview_rows(&ab, rows, 16);
  const struct ab_row *out = row(rows, n, "output tok/s");
  ck_assert_ptr_nonnull(out);
  ck_assert(out->value[AB_OFF] == 1800 && out->value[AB_MTP] == 3000);
  ck_assert_int_eq(out->ratio.repeats, 0);

  struct st_err err = {{0}};
  ck_assert_msg(abview_load_repeats(&ab, dirs, N_REPS, &err) == 0, "%s", err.msg);
  n = abview_rows(&ab, rows, 16);
  assert_row_is_compare(row(rows, n, "output tok/s"), FIG_OUTPUT_TPUT, FIG_VALUE);
  assert_row_is_compare(row(rows, n, "req/s"), FIG_REQ_TPUT, FIG_VALUE);
  assert_row_is_compare(row(rows, n, "TPOT p50"), FIG_TPOT, FIG_STAT_P50);
  /* the repeats differ: the interval is the spread's, not one repeat's */
  out = row(rows, n, "output tok/s");
  ck_assert(out->ratio.hi - out->ratio.lo > 0.05);
  /* a mean over repeats has no interval of its own in the column */
  ck_assert(isnan(out->lo[AB_OFF]) && isnan(out->hi[AB_MTP]));

  /* the screen says so: the header, and the ratio column shows the repeats' ratio */
  char *f = ut_frame(&abview_screen, &ab, NULL, NULL, 200, 50, true);
  ut_assert_has(f, "ratios: 95% CI from 3 repeats");
  char ratio[32];
  snprintf(ratio, sizeof ratio, "%.2f×", out->ratio.ratio);
  ut_assert_has(f, ratio);
  free(f);
}
END_TEST

START_TEST(not_while_an_arm_runs_nor_beside_a_past_run) {
  struct st_err err = {{0}};
  ck_assert_msg(abview_load_repeats(&ab, dirs, N_REPS, &err) == 0, "%s", err.msg);
  struct ab_row rows[16];
  /* the next repeat is being measured: the live figures, and no "from repeats" */
  ab.running = true;
  ab.n_repeats = 4;
  ab.repeat = 3;
  size_t n = abview_rows(&ab, rows, 16);
  const struct ab_row *out = row(rows, n, "output tok/s");
  ck_assert(out->value[AB_OFF] == 1800 && out->ratio.repeats == 0);
  ck_assert_ptr_null(abview_repeats_result(&ab, AB_OFF));
  char *f = ut_frame(&abview_screen, &ab, NULL, NULL, 200, 50, true);
  ut_assert_has(f, "running repeat 4/4");
  ck_assert_ptr_null(strstr(f, "CI from"));
  free(f);
  ab.running = false;
  ck_assert_ptr_nonnull(abview_repeats_result(&ab, AB_OFF));
  /* a past run in a column: it is what that column shows, the repeats are not used */
  ck_assert_int_eq(abview_load_past(&ab, AB_MTP, PAST_MTP, &err), 0);
  n = abview_rows(&ab, rows, 16);
  ck_assert_int_eq(row(rows, n, "output tok/s")->ratio.repeats, 0);
  ck_assert_ptr_null(abview_repeats_result(&ab, AB_OFF));
}
END_TEST

START_TEST(a_folder_that_cannot_be_read_keeps_nothing) {
  struct st_err err = {{0}};
  char bad[2][RUN_SESSION_MAX_REPEATS][1024];
  memcpy(bad, dirs, sizeof bad);
  snprintf(bad[AB_MTP][1], sizeof bad[AB_MTP][1], "%s/nowhere", work);
  ck_assert_int_eq(abview_load_repeats(&ab, bad, N_REPS, &err), -1);
  ck_assert_ptr_nonnull(strstr(err.msg, "nowhere"));
  ck_assert(!ab.repeats[AB_OFF].loaded && !ab.repeats[AB_MTP].loaded);
  ck_assert_ptr_null(abview_repeats_result(&ab, AB_OFF));
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("ui_abview_repeats");
  TCase *tc = tcase_create("core");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, rows_come_from_the_repeats_once_they_are_over);
  tcase_add_test(tc, not_while_an_arm_runs_nor_beside_a_past_run);
  tcase_add_test(tc, a_folder_that_cannot_be_read_keeps_nothing);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
