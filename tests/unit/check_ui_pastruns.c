/* ui past runs: listing run folders from their manifests (the fixture in
 * tests/data/ui/past: a two-point off sweep, an MTP run, a folder that is not
 * a run), and the picker's keys, clicks, wheel and frame. */
#include "pastruns.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ui_test.h"

#define PAST_DIR TEST_DATA_DIR "/ui/past"
#define OFF_FOLDER "20261201-040000-qwen3.5-fp8-h200-sglang-off"
#define MTP_FOLDER "20261130-050000-qwen3.5-fp8-h200-sglang-mtp"

START_TEST(scan_lists_run_folders_newest_first) {
  struct run_summary_list list;
  struct st_err err = {{0}};
  ck_assert_int_eq(run_list_past(PAST_DIR, &list, &err), 0);
  ck_assert_uint_eq(list.n, 2); /* not-a-run has no manifest */
  const struct run_summary *a = &list.runs[0], *b = &list.runs[1];
  ck_assert_str_eq(a->folder, OFF_FOLDER);
  ck_assert_str_eq(a->recipe, "qwen3.5-fp8-h200-sglang");
  ck_assert_str_eq(a->label, "off");
  ck_assert_str_eq(a->spec_label, "none");
  ck_assert_str_eq(a->status, "interrupted");
  ck_assert_int_eq(a->n_points, 2);
  ck_assert_str_eq(b->folder, MTP_FOLDER);
  ck_assert_str_eq(b->spec_label, "mtp");
  ck_assert_int_eq(b->n_points, 1);
  ck_assert_str_eq(b->dir, PAST_DIR "/" MTP_FOLDER);
  char date[32];
  ck_assert_str_eq(pastruns_fmt_date(b->started_unix_s, date, sizeof date), "2026-12-01 04:33");
  ck_assert_str_eq(pastruns_fmt_date(0, date, sizeof date), "-");
  run_summary_list_free(&list);
}
END_TEST

START_TEST(scan_of_a_missing_dir_is_empty) {
  struct run_summary_list list;
  struct st_err err = {{0}};
  ck_assert_int_eq(run_list_past(PAST_DIR "/no-such-dir", &list, &err), 0);
  ck_assert_uint_eq(list.n, 0);
  run_summary_list_free(&list);
  /* a file where a folder should be is an error that names it */
  ck_assert_int_eq(run_list_past(PAST_DIR "/not-a-run/notes.txt", &list, &err), -1);
  ck_assert_ptr_nonnull(strstr(err.msg, "notes.txt"));
}
END_TEST

static char *frame(struct pastpicker *p, int cols, int rows) {
  return ut_frame(&pastpicker_screen, p, NULL, NULL, cols, rows, true);
}

/* A key: the command asked for; UI_CMD_NONE + acted false when ignored. */
static int key(struct pastpicker *p, int k) {
  bool acted;
  struct ui_cmd c = ut_key(&pastpicker_screen, p, k, 80, 24, &acted);
  return acted ? (int)c.kind : -1;
}

static int click(struct pastpicker *p, int x, int y, int lines) {
  bool acted;
  struct ui_cmd c = ut_mouse(&pastpicker_screen, p, x, y, lines, 80, 24, &acted);
  return acted ? (int)c.kind : -1;
}

START_TEST(picker_keys) {
  struct pastpicker p = {0};
  pastpicker_open(&p, PAST_DIR, 1);
  ck_assert(p.open);
  ck_assert_int_eq(p.column, 1);
  ck_assert_str_eq(pastpicker_selected(&p)->folder, OFF_FOLDER);
  ck_assert_int_eq(key(&p, UI_KEY_DOWN), UI_CMD_NONE);
  ck_assert_str_eq(pastpicker_selected(&p)->folder, MTP_FOLDER);
  key(&p, 'j'); /* stays on the last */
  ck_assert_uint_eq(p.selected, 1);
  key(&p, UI_KEY_HOME);
  ck_assert_uint_eq(p.selected, 0);
  key(&p, UI_KEY_TAB);
  ck_assert_int_eq(p.column, 0);
  key(&p, 'm');
  ck_assert_int_eq(p.column, 1);
  key(&p, 'o');
  ck_assert_int_eq(p.column, 0);
  ck_assert_int_eq(key(&p, 'z'), -1);
  ck_assert_int_eq(key(&p, UI_KEY_ENTER), UI_CMD_LOAD_PAST);
  ck_assert_int_eq(key(&p, UI_KEY_ESCAPE), UI_CMD_CLOSE);
  ck_assert(!p.open);
  ck_assert_uint_eq(p.list.n, 0);
  /* an empty folder: nothing to load */
  pastpicker_open(&p, PAST_DIR "/not-a-run", 0);
  ck_assert_ptr_null(pastpicker_selected(&p));
  ck_assert_int_eq(key(&p, UI_KEY_ENTER), -1);
  char *f = frame(&p, 80, 24);
  ck_assert_ptr_nonnull(strstr(f, "no run folders here yet"));
  free(f);
  pastpicker_close(&p);
}
END_TEST

START_TEST(picker_mouse) {
  struct pastpicker p = {0};
  pastpicker_open(&p, PAST_DIR, 0);
  struct ui_rect in = ui_rect_inner(pastpicker_box(80, 24));
  /* rows start three lines into the box: folder, column switch, header */
  ck_assert_int_eq(click(&p, in.x + 5, in.y + 4, 0), UI_CMD_NONE);
  ck_assert_uint_eq(p.selected, 1);
  ck_assert_int_eq(click(&p, in.x + 5, in.y + 4, 0), UI_CMD_LOAD_PAST);
  ck_assert_int_eq(click(&p, in.x + 5, in.y + 9, 0), -1); /* no row */
  char *f = frame(&p, 80, 24);
  const char *line = strstr(f, "into column:");
  ck_assert_ptr_nonnull(line);
  /* a click on "MTP" of the switch */
  ck_assert_int_eq(click(&p, in.x + 23, in.y + 1, 0), UI_CMD_NONE);
  ck_assert_int_eq(p.column, 1);
  free(f);
  click(&p, 1, 1, -3);
  ck_assert_uint_eq(p.top, 0);
  click(&p, 1, 1, 3); /* two runs fit: nothing to scroll */
  ck_assert_uint_eq(p.top, 0);
  ck_assert_int_eq(click(&p, 0, 0, 0), UI_CMD_CLOSE);
  ck_assert(!p.open);
}
END_TEST

START_TEST(picker_frame) {
  struct pastpicker p = {0};
  pastpicker_open(&p, PAST_DIR, 0);
  char *f = frame(&p, 80, 24);
  ck_assert_ptr_nonnull(strstr(f, "date (UTC)        status        cfg spec"));
  ck_assert_ptr_nonnull(strstr(f, "Load a past run into the A/B view"));
  /* provenance of each run (the manifest's server.simulated) before its recipe */
  ck_assert_msg(strstr(f, "spec  label  source    recipe"), "%s", f);
  ck_assert_msg(strstr(f, "> 2026-12-02 04:33  interrupted     2 none  off    SIMULATED qwen3.5-fp8-…"),
                "%s", f);
  ck_assert_ptr_nonnull(strstr(f, "  2026-12-01 04:33  ok              1 mtp   ab     SIMULATED qwen3.5-fp8-…"));
  ck_assert_ptr_nonnull(strstr(f, "Enter load  Tab column  ? help  Esc close"));
  free(f);
  pastpicker_close(&p);
}
END_TEST

int main(void) {
  Suite *s = suite_create("ui_pastruns");
  TCase *tc = tcase_create("pastruns");
  tcase_add_test(tc, scan_lists_run_folders_newest_first);
  tcase_add_test(tc, scan_of_a_missing_dir_is_empty);
  tcase_add_test(tc, picker_keys);
  tcase_add_test(tc, picker_mouse);
  tcase_add_test(tc, picker_frame);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
