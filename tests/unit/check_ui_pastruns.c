/* ui past runs: listing run folders from their manifests (the fixture in
 * tests/data/ui/past: a two-point off sweep, an MTP run, a folder that is not
 * a run), and the picker's keys, clicks, wheel and frame. */
#include "pastruns.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ui_util.h"

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

static char *frame(const struct pastpicker *p, int cols, int rows) {
  struct ui_grid g;
  ui_grid_init(&g, cols, rows);
  pastpicker_render(p, &g, cols, rows, ui_glyphs_get(true));
  struct sbuf sb = {0};
  for (int y = 0; y < rows; y++) {
    char *row = ui_grid_row_alloc(&g, y);
    sbuf_printf(&sb, "%s\n", row);
    free(row);
  }
  ui_grid_fini(&g);
  return sbuf_take(&sb);
}

START_TEST(picker_keys) {
  struct pastpicker p = {0};
  pastpicker_open(&p, PAST_DIR, 1);
  ck_assert(p.open);
  ck_assert_int_eq(p.column, 1);
  ck_assert_str_eq(pastpicker_selected(&p)->folder, OFF_FOLDER);
  ck_assert_int_eq(pastpicker_key(&p, UI_KEY_DOWN, 80, 24), PASTPICKER_REDRAW);
  ck_assert_str_eq(pastpicker_selected(&p)->folder, MTP_FOLDER);
  pastpicker_key(&p, 'j', 80, 24); /* stays on the last */
  ck_assert_uint_eq(p.selected, 1);
  pastpicker_key(&p, UI_KEY_HOME, 80, 24);
  ck_assert_uint_eq(p.selected, 0);
  pastpicker_key(&p, UI_KEY_TAB, 80, 24);
  ck_assert_int_eq(p.column, 0);
  pastpicker_key(&p, 'm', 80, 24);
  ck_assert_int_eq(p.column, 1);
  pastpicker_key(&p, 'o', 80, 24);
  ck_assert_int_eq(p.column, 0);
  ck_assert_int_eq(pastpicker_key(&p, 'z', 80, 24), PASTPICKER_NONE);
  ck_assert_int_eq(pastpicker_key(&p, UI_KEY_ENTER, 80, 24), PASTPICKER_LOAD);
  ck_assert_int_eq(pastpicker_key(&p, UI_KEY_ESCAPE, 80, 24), PASTPICKER_CLOSE);
  ck_assert(!p.open);
  ck_assert_uint_eq(p.list.n, 0);
  /* an empty folder: nothing to load */
  pastpicker_open(&p, PAST_DIR "/not-a-run", 0);
  ck_assert_ptr_null(pastpicker_selected(&p));
  ck_assert_int_eq(pastpicker_key(&p, UI_KEY_ENTER, 80, 24), PASTPICKER_NONE);
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
  ck_assert_int_eq(pastpicker_click(&p, 80, 24, in.x + 5, in.y + 4), PASTPICKER_REDRAW);
  ck_assert_uint_eq(p.selected, 1);
  ck_assert_int_eq(pastpicker_click(&p, 80, 24, in.x + 5, in.y + 4), PASTPICKER_LOAD);
  ck_assert_int_eq(pastpicker_click(&p, 80, 24, in.x + 5, in.y + 9), PASTPICKER_NONE); /* no row */
  char *f = frame(&p, 80, 24);
  const char *line = strstr(f, "into column:");
  ck_assert_ptr_nonnull(line);
  /* a click on "MTP" of the switch */
  ck_assert_int_eq(pastpicker_click(&p, 80, 24, in.x + 23, in.y + 1), PASTPICKER_REDRAW);
  ck_assert_int_eq(p.column, 1);
  free(f);
  pastpicker_wheel(&p, 80, 24, -3);
  ck_assert_uint_eq(p.top, 0);
  pastpicker_wheel(&p, 80, 24, 3); /* two runs fit: nothing to scroll */
  ck_assert_uint_eq(p.top, 0);
  ck_assert_int_eq(pastpicker_click(&p, 80, 24, 0, 0), PASTPICKER_CLOSE);
  ck_assert(!p.open);
}
END_TEST

START_TEST(picker_frame) {
  struct pastpicker p = {0};
  pastpicker_open(&p, PAST_DIR, 0);
  char *f = frame(&p, 80, 24);
  ck_assert_ptr_nonnull(strstr(f, "date (UTC)        status        pts spec"));
  ck_assert_ptr_nonnull(strstr(f, "Load a past run into the A/B view"));
  ck_assert_ptr_nonnull(strstr(f, "> 2026-12-02 04:33  interrupted     2 none  off    qwen3.5-fp8-h200-sglang"));
  ck_assert_ptr_nonnull(strstr(f, "  2026-12-01 04:33  ok              1 mtp   ab     qwen3.5-fp8-h200-sglan…"));
  ck_assert_ptr_nonnull(strstr(f, "Enter loads, Esc closes"));
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
