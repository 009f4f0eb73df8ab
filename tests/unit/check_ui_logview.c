/* ui log view: lines from a file that grows (split across reads, CR LF,
 * terminal colours, tabs, truncation, the per-tick read budget, the line
 * cap), search with n / N and wrapping, follow mode, scrolling, and frames. */
#include "logview.h"

#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ui_test.h"

static struct logview lv;
static char dir[] = "/tmp/check_ui_logview.XXXXXX";
static char path[128];

static void setup(void) {
  logview_init(&lv);
  ck_assert_ptr_nonnull(mkdtemp(dir));
  snprintf(path, sizeof path, "%s/server.log", dir);
}

static void teardown(void) {
  logview_fini(&lv);
  unlink(path);
  rmdir(dir);
  snprintf(dir, sizeof dir, "/tmp/check_ui_logview.XXXXXX");
}

static void append_file(const char *text) {
  int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0600);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
  close(fd);
}

static struct ui_cmd key(int k) {
  return ut_key(&logview_screen, &lv, k, 80, 24, NULL);
}

static void type(const char *text) {
  ut_type(&logview_screen, &lv, text, 80, 24);
}

static char *frame(int cols, int rows) {
  return ut_frame(&logview_screen, &lv, NULL, NULL, cols, rows, true);
}

START_TEST(lines_from_a_growing_file) {
  logview_open(&lv, path, "demo");
  ck_assert(!logview_poll(&lv)); /* no file yet: says so */
  ck_assert_ptr_nonnull(strstr(lv.status, "no server log yet"));
  append_file("first\r\nsec");
  ck_assert(logview_poll(&lv));
  ck_assert_uint_eq(lv.n_lines, 1);
  ck_assert_str_eq(lv.lines[0], "first");
  ck_assert(!logview_poll(&lv)); /* nothing new */
  append_file("ond\n\x1b[32mINFO\x1b[0m:\tgreen\n");
  ck_assert(logview_screen.tick(&lv)); /* the screen's tick reads it */
  ck_assert_uint_eq(lv.n_lines, 3);
  ck_assert_str_eq(lv.lines[1], "second");
  ck_assert_str_eq(lv.lines[2], "INFO:   green"); /* colours gone, the tab to column 8 */
  /* the same path again keeps what was read */
  logview_open(&lv, path, "demo");
  ck_assert_uint_eq(lv.n_lines, 3);
  /* truncated (a new server log): read again from the start */
  ck_assert_int_eq(truncate(path, 0), 0);
  append_file("new\n");
  logview_poll(&lv);
  ck_assert_uint_eq(lv.n_lines, 1);
  ck_assert_str_eq(lv.lines[0], "new");
}
END_TEST

/* One tick reads at most LOGVIEW_READ_BYTES: a long log never stalls a frame. */
START_TEST(reads_a_long_log_over_several_ticks) {
  char line[101];
  memset(line, 'x', 99);
  line[99] = '\n';
  line[100] = '\0';
  FILE *fp = fopen(path, "w");
  ck_assert_ptr_nonnull(fp);
  for (int i = 0; i < 30000; i++) /* 3 MB */
    fputs(line, fp);
  fclose(fp);
  logview_open(&lv, path, "long");
  int ticks = 0;
  while (logview_poll(&lv))
    ticks++;
  ck_assert_int_eq(ticks, 3);
  ck_assert_uint_eq(lv.n_lines, 30000);
}
END_TEST

START_TEST(the_line_cap_drops_the_oldest) {
  char buf[32];
  for (int i = 0; i < LOGVIEW_MAX_LINES + 5; i++) {
    int n = snprintf(buf, sizeof buf, "%d\n", i);
    logview_append(&lv, buf, (size_t)n);
  }
  ck_assert_uint_eq(lv.dropped, LOGVIEW_MAX_LINES / 10);
  ck_assert_uint_eq(lv.n_lines, LOGVIEW_MAX_LINES + 5 - LOGVIEW_MAX_LINES / 10);
  snprintf(buf, sizeof buf, "%d", LOGVIEW_MAX_LINES / 10);
  ck_assert_str_eq(lv.lines[0], buf);
  char *f = frame(100, 30);
  ut_assert_has(f, "older dropped");
  free(f);
}
END_TEST

START_TEST(search_next_previous_wrap) {
  for (int i = 0; i < 100; i++) {
    char buf[64];
    int n = snprintf(buf, sizeof buf, "line %d%s\n", i, i == 10 || i == 60 ? " Traceback" : "");
    logview_append(&lv, buf, (size_t)n);
  }
  free(frame(80, 24)); /* sets the page */
  key(UI_KEY_HOME);
  ck_assert(!lv.follow);
  /* / types the search; Enter goes to the first match at or after the top */
  key('/');
  ck_assert(lv.searching);
  type("traceback");
  char *f = frame(80, 24);
  ut_assert_has(f, "search: /traceback_");
  free(f);
  key(UI_KEY_ENTER);
  ck_assert(!lv.searching);
  ck_assert_uint_eq(lv.n_matches, 2);
  ck_assert_uint_eq(lv.match, 10);
  key('n');
  ck_assert_uint_eq(lv.match, 60);
  key('n'); /* wraps to the first */
  ck_assert_uint_eq(lv.match, 10);
  ck_assert_ptr_nonnull(strstr(lv.status, "wrapped"));
  key('N'); /* and back */
  ck_assert_uint_eq(lv.match, 60);
  /* the match is in view, marked, its letters highlighted */
  f = frame(80, 24);
  ut_assert_has(f, ">line 60 Traceback");
  ut_assert_has(f, "/traceback: 2 matching lines");
  free(f);
  struct ui_grid g;
  ui_grid_init(&g, 80, 24);
  struct ui_layout l;
  ui_layout_compute(80, 24, UI_VIEW_PAGE, &l);
  struct ui_ctx ctx = {.layout = &l, .gl = ui_glyphs_get(true)};
  logview_screen.render(&lv, &g, &ctx);
  int hits = 0;
  for (int y = 0; y < 24; y++)
    for (int x = 0; x < 80; x++)
      hits += ui_grid_at(&g, x, y)->role == THEME_SELECTED;
  ck_assert_int_eq(hits, 9); /* "Traceback" once on screen */
  ui_grid_fini(&g);
  /* not found; an empty search clears it */
  logview_search(&lv, "no such text");
  ck_assert_uint_eq(lv.n_matches, 0);
  f = frame(80, 24);
  ut_assert_has(f, "/no such text: not found");
  free(f);
  key('/');
  key(UI_KEY_ENTER);
  ck_assert_str_eq(lv.pattern, "");
  key('n');
  ck_assert_ptr_nonnull(strstr(lv.status, "no search yet"));
  /* following the newest lines, a search goes to the latest match */
  key(UI_KEY_END);
  logview_search(&lv, "traceback");
  ck_assert_uint_eq(lv.match, 60);
  ck_assert_str_eq(lv.status, "");
  /* Esc while typing leaves the search as it was */
  logview_search(&lv, "line 5");
  key('/');
  type("zzz");
  key(UI_KEY_ESCAPE);
  ck_assert_str_eq(lv.pattern, "line 5");
}
END_TEST

/* A match past the columns shown scrolls the line sideways to it. */
START_TEST(a_match_far_right_comes_into_sight) {
  char buf[300];
  memset(buf, '.', 200);
  snprintf(buf + 200, sizeof buf - 200, "needle\nshort needle\n");
  logview_append(&lv, buf, strlen(buf));
  char *f = frame(80, 24);
  free(f);
  key('g'); /* from the top, not following */
  logview_search(&lv, "needle");
  ck_assert_uint_eq(lv.match, 0);
  ck_assert_int_gt(lv.left, 200 - 78);
  ck_assert_int_le(lv.left, 200);
  f = frame(80, 24);
  const char *row = strchr(strchr(f, '\n') + 1, '\n') + 1; /* the first log line */
  ck_assert_msg(strstr(row, "needle") && strstr(row, "needle") < strchr(row, '\n'), "%s", f);
  free(f);
  key('n'); /* the second fits from column 0 */
  ck_assert_uint_eq(lv.match, 1);
  ck_assert_int_eq(lv.left, 0);
}
END_TEST

START_TEST(follow_and_scroll) {
  char buf[32];
  for (int i = 0; i < 50; i++) {
    int n = snprintf(buf, sizeof buf, "line %02d\n", i);
    logview_append(&lv, buf, (size_t)n);
  }
  char *f = frame(80, 24); /* 22 lines of body, 20 inside the box */
  ut_assert_has(f, "line 49");
  ut_assert_has(f, "lines 31-50 of 50 · following");
  free(f);
  /* scrolling up stops following; new lines then leave the view where it is */
  key(UI_KEY_UP);
  ck_assert(!lv.follow);
  ck_assert_uint_eq(lv.top, 29);
  logview_append(&lv, "line 50\n", 8);
  f = frame(80, 24);
  ut_assert_has(f, "lines 30-49 of 51 · f follows");
  free(f);
  key(UI_KEY_END);
  ck_assert(lv.follow);
  f = frame(80, 24);
  ut_assert_has(f, "line 50");
  free(f);
  key('f');
  ck_assert(!lv.follow);
  key(UI_KEY_PAGE_UP);
  ck_assert_uint_eq(lv.top, 31 - 19);
  key('g');
  ck_assert_uint_eq(lv.top, 0);
  key(UI_KEY_UP); /* stays at the top */
  ck_assert_uint_eq(lv.top, 0);
  ut_mouse(&logview_screen, &lv, 5, 5, 3, 80, 24, NULL);
  ck_assert_uint_eq(lv.top, 3);
  key(UI_KEY_RIGHT);
  ck_assert_int_eq(lv.left, 8);
  key(UI_KEY_LEFT);
  ck_assert_int_eq(lv.left, 0);
  /* q, Esc and l go back */
  ck_assert_int_eq(key('q').kind, UI_CMD_CLOSE);
  ck_assert_int_eq(key(UI_KEY_ESCAPE).kind, UI_CMD_CLOSE);
  ck_assert_int_eq(key('l').kind, UI_CMD_CLOSE);
}
END_TEST

START_TEST(line_roles) {
  ck_assert_int_eq(ui_log_line_role("Traceback (most recent call last):"), THEME_ERROR);
  ck_assert_int_eq(ui_log_line_role("WARNING: low memory"), THEME_WARNING);
  ck_assert_int_eq(ui_log_line_role("The server is fired up and ready to roll!"), THEME_OK);
  ck_assert_int_eq(ui_log_line_role("Decode batch"), THEME_INACTIVE);
}
END_TEST

int main(void) {
  Suite *s = suite_create("ui_logview");
  TCase *tc = tcase_create("logview");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, lines_from_a_growing_file);
  tcase_add_test(tc, reads_a_long_log_over_several_ticks);
  tcase_add_test(tc, the_line_cap_drops_the_oldest);
  tcase_add_test(tc, search_next_previous_wrap);
  tcase_add_test(tc, follow_and_scroll);
  tcase_add_test(tc, a_match_far_right_comes_into_sight);
  tcase_add_test(tc, line_roles);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
