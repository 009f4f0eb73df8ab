/* ui widgets: grid text, boxes, braille/ASCII charts, bars, tables, number formats. */
#include "widgets.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ui_util.h"

/* Asserts the glyphs of one grid row. */
static void assert_row(const struct ui_grid *g, int y, const char *want) {
  char *row = ui_grid_row_alloc(g, y);
  ck_assert_msg(strcmp(row, want) == 0, "row %d: got '%s', want '%s'", y, row, want);
  free(row);
}

START_TEST(text_truncates_with_ellipsis) {
  struct ui_grid g;
  ui_grid_init(&g, 10, 2);
  ck_assert_int_eq(ui_grid_text(&g, 0, 0, 10, "héllo", THEME_TITLE, true), 5);
  assert_row(&g, 0, "héllo     ");
  ck_assert_int_eq(ui_grid_at(&g, 1, 0)->role, THEME_TITLE);
  ck_assert_int_eq(ui_grid_text(&g, 2, 1, 6, "abcdefghij", THEME_MAIN, true), 6);
  assert_row(&g, 1, "  abcde…  ");
  ui_grid_clear(&g);
  ui_grid_text(&g, 0, 1, 6, "abcdefghij", THEME_MAIN, false);
  assert_row(&g, 1, "abcde~    ");
  /* control characters never reach the terminal; text past the edge is clipped */
  ui_grid_text(&g, 7, 0, 10, "a\tb\x1b", THEME_MAIN, true);
  assert_row(&g, 0, "       a?b");
  ck_assert_int_eq(ui_text_cells("⣿─x"), 3);
  ui_grid_fini(&g);
}
END_TEST

START_TEST(boxes_utf8_and_ascii) {
  struct ui_grid g;
  ui_grid_init(&g, 12, 3);
  ui_box(&g, (struct ui_rect){0, 0, 12, 3}, "GPU", THEME_BORDER, THEME_TITLE, ui_glyphs_get(true));
  assert_row(&g, 0, "╭─┤ GPU ├──╮");
  assert_row(&g, 1, "│          │");
  assert_row(&g, 2, "╰──────────╯");
  ck_assert_int_eq(ui_grid_at(&g, 4, 0)->role, THEME_TITLE);
  ck_assert_int_eq(ui_grid_at(&g, 0, 1)->role, THEME_BORDER);
  ui_grid_clear(&g);
  ui_box(&g, (struct ui_rect){0, 0, 12, 3}, "a long title", THEME_BORDER, THEME_TITLE,
         ui_glyphs_get(false));
  assert_row(&g, 0, "+-[ a l~ ]-+");
  assert_row(&g, 2, "+----------+");
  struct ui_rect in = ui_rect_inner((struct ui_rect){0, 0, 12, 3});
  ck_assert_int_eq(in.x, 1);
  ck_assert_int_eq(in.w, 10);
  ck_assert_int_eq(in.h, 1);
  ui_grid_fini(&g);
}
END_TEST

START_TEST(braille_line_rises) {
  struct ui_grid g;
  ui_grid_init(&g, 2, 1);
  const double v[] = {0, 1, 2, 3};
  struct ui_series s = {v, 4, THEME_CHART_OUTPUT};
  struct ui_chart_opts o = {.y_min = 0, .y_max = 3};
  ck_assert(ui_chart(&g, (struct ui_rect){0, 0, 2, 1}, &s, 1, &o, ui_glyphs_get(true)) == 3.0);
  /* dots (x, y from bottom): (0,0) (1,1) | (2,2) (3,3) */
  assert_row(&g, 0, "⡠⠊");
  ck_assert_int_eq(ui_grid_at(&g, 0, 0)->role, THEME_CHART_OUTPUT);
  ui_grid_fini(&g);
}
END_TEST

START_TEST(braille_flat_zero_and_jump_is_joined) {
  struct ui_grid g;
  ui_grid_init(&g, 2, 2);
  /* a flat zero line sits on the bottom dot row */
  const double zeros[] = {0, 0, 0, 0};
  struct ui_series s = {zeros, 4, THEME_CHART_TOTAL};
  struct ui_chart_opts o = {0};  /* auto scale: all zero gives a 0..1 scale */
  ck_assert(ui_chart(&g, (struct ui_rect){0, 0, 2, 2}, &s, 1, &o, ui_glyphs_get(true)) == 1.0);
  assert_row(&g, 0, "  ");
  assert_row(&g, 1, "⣀⣀");
  /* a jump from bottom to top fills the column between them */
  ui_grid_clear(&g);
  const double jump[] = {0, 7};
  struct ui_series j = {jump, 2, THEME_CHART_TOTAL};
  struct ui_chart_opts o7 = {.y_min = 0, .y_max = 7};
  ui_chart(&g, (struct ui_rect){0, 0, 2, 2}, &j, 1, &o7, ui_glyphs_get(true));
  /* right cell column only (the chart is right-aligned): x=2 bottom dot, x=3 rows 1..7 */
  assert_row(&g, 0, " ⢸");
  assert_row(&g, 1, " ⡸");
  ui_grid_fini(&g);
}
END_TEST

START_TEST(chart_shows_newest_samples_and_gaps) {
  struct ui_grid g;
  ui_grid_init(&g, 3, 1);
  /* 10 samples, 6 dot columns: only the last 6 show; NaN leaves a hole */
  double v[10];
  for (int i = 0; i < 10; i++)
    v[i] = i < 4 ? 3 : 0;
  v[7] = (double)NAN;
  struct ui_series s = {v, 10, THEME_CHART_RPS};
  struct ui_chart_opts o = {.y_min = 0, .y_max = 3};
  ui_chart(&g, (struct ui_rect){0, 0, 3, 1}, &s, 1, &o, ui_glyphs_get(true));
  /* samples 4..9 = 0 0 0 NaN 0 0; the 3 at sample 3 is off screen */
  assert_row(&g, 0, "⣀⡀⣀");
  /* auto scale takes the largest visible sample only */
  double w[] = {100, 1, 2};
  struct ui_series s2 = {w, 3, THEME_CHART_RPS};
  struct ui_chart_opts oa = {0};
  ck_assert(ui_chart(&g, (struct ui_rect){0, 0, 1, 1}, &s2, 1, &oa, ui_glyphs_get(true)) == 2.0);
  ui_grid_fini(&g);
}
END_TEST

START_TEST(ascii_chart_and_marks) {
  struct ui_grid g;
  ui_grid_init(&g, 4, 1);
  const double v[] = {0, 1, 2, 0};
  struct ui_series s = {v, 4, THEME_CHART_OUTPUT};
  int ages[] = {1};
  struct ui_chart_opts o = {.y_min = 0, .y_max = 2, .mark_ages = ages, .n_marks = 1,
                            .mark_role = THEME_CHART_MARK};
  ck_assert_int_eq(ui_chart_samples_per_col(ui_glyphs_get(false)), 1);
  ui_chart(&g, (struct ui_rect){0, 0, 4, 1}, &s, 1, &o, ui_glyphs_get(false));
  /* bottom '.', middle '-', top '\'', then a fall from top to bottom joins as '|' */
  assert_row(&g, 0, ".-'|");
  /* a mark shows where no dot is: an empty chart with a mark one sample ago */
  ui_grid_clear(&g);
  struct ui_series none = {v, 0, THEME_CHART_OUTPUT};
  ui_chart(&g, (struct ui_rect){0, 0, 4, 1}, &none, 1, &o, ui_glyphs_get(false));
  assert_row(&g, 0, "  : ");
  ck_assert_int_eq(ui_grid_at(&g, 2, 0)->role, THEME_CHART_MARK);
  ui_grid_fini(&g);
}
END_TEST

START_TEST(two_series_share_cells) {
  struct ui_grid g;
  ui_grid_init(&g, 1, 1);
  const double lo[] = {0, 0}, hi[] = {3, 3};
  struct ui_series s[] = {{lo, 2, THEME_CHART_OUTPUT}, {hi, 2, THEME_CHART_TOTAL}};
  struct ui_chart_opts o = {.y_min = 0, .y_max = 3};
  ui_chart(&g, (struct ui_rect){0, 0, 1, 1}, s, 2, &o, ui_glyphs_get(true));
  assert_row(&g, 0, "⣉");  /* bottom and top rows in both columns */
  ck_assert_int_eq(ui_grid_at(&g, 0, 0)->role, THEME_CHART_TOTAL);
  ui_grid_fini(&g);
}
END_TEST

START_TEST(bars_split_into_segments) {
  struct ui_grid g;
  ui_grid_init(&g, 10, 2);
  const struct ui_bar_segment segs[] = {{5, THEME_BAR_SERVER, '#'}, {2.5, THEME_BAR_OTHER, '='}};
  ui_bar(&g, 0, 0, 10, segs, 2, 10, THEME_BAR_FREE, ui_glyphs_get(true));
  assert_row(&g, 0, "███████▌··");
  ck_assert_int_eq(ui_grid_at(&g, 4, 0)->role, THEME_BAR_SERVER);
  ck_assert_int_eq(ui_grid_at(&g, 5, 0)->role, THEME_BAR_OTHER);
  ck_assert_int_eq(ui_grid_at(&g, 7, 0)->role, THEME_BAR_OTHER);
  ck_assert_int_eq(ui_grid_at(&g, 8, 0)->role, THEME_BAR_FREE);
  ui_bar(&g, 0, 1, 10, segs, 2, 10, THEME_BAR_FREE, ui_glyphs_get(false));
  assert_row(&g, 1, "#####===..");
  /* overfull and unknown values never overflow the bar */
  const struct ui_bar_segment over[] = {{(double)NAN, THEME_BAR_SERVER, '#'}, {50, THEME_BAR_OTHER, '='}};
  ui_grid_clear(&g);
  ui_bar(&g, 0, 0, 4, over, 2, 10, THEME_BAR_FREE, ui_glyphs_get(false));
  assert_row(&g, 0, "====      ");
  /* zero total: all empty */
  ui_bar(&g, 0, 1, 3, segs, 2, 0, THEME_BAR_FREE, ui_glyphs_get(false));
  assert_row(&g, 1, "...       ");
  ui_grid_fini(&g);
}
END_TEST

START_TEST(table_aligns_and_clips) {
  struct ui_grid g;
  ui_grid_init(&g, 16, 3);
  const struct ui_table_col cols[] = {{"metric", 5, false}, {"p50", 5, true}, {"p99", 5, true}};
  const char *cells[] = {"TTFT", "12ms", "1.2s", "TPOT", NULL, "-"};
  ui_table(&g, (struct ui_rect){0, 0, 12, 3}, cols, 3, cells, NULL, 2, THEME_HEADER, true);
  assert_row(&g, 0, "metr…   p50     ");
  assert_row(&g, 1, "TTFT   12ms     ");
  assert_row(&g, 2, "TPOT            ");
  ck_assert_int_eq(ui_grid_at(&g, 0, 0)->role, THEME_HEADER);
  ui_grid_fini(&g);
}
END_TEST

START_TEST(numbers_with_units) {
  char b[32];
  ck_assert_str_eq(ui_fmt_si(950, b, sizeof b), "950");
  ck_assert_str_eq(ui_fmt_si(9.5, b, sizeof b), "9.50");
  ck_assert_str_eq(ui_fmt_si(12345, b, sizeof b), "12.3k");
  ck_assert_str_eq(ui_fmt_si(999.7, b, sizeof b), "1.00k");
  ck_assert_str_eq(ui_fmt_si(4.56e6, b, sizeof b), "4.56M");
  ck_assert_str_eq(ui_fmt_si(1.2e9, b, sizeof b), "1.20G");
  ck_assert_str_eq(ui_fmt_si((double)NAN, b, sizeof b), "-");
  ck_assert_str_eq(ui_fmt_ms(0.85, b, sizeof b), "850us");
  ck_assert_str_eq(ui_fmt_ms(12.34, b, sizeof b), "12.3ms");
  ck_assert_str_eq(ui_fmt_ms(1240, b, sizeof b), "1.24s");
  ck_assert_str_eq(ui_fmt_ms((double)NAN, b, sizeof b), "-");
  ck_assert_str_eq(ui_fmt_bytes(512, b, sizeof b), "512B");
  ck_assert_str_eq(ui_fmt_bytes(12.0 * 1024 * 1024, b, sizeof b), "12.0MiB");
  ck_assert_str_eq(ui_fmt_bytes(143771.0 * 1024 * 1024, b, sizeof b), "140.4GiB");
  ck_assert_str_eq(ui_fmt_duration_s(42.4, b, sizeof b), "42s");
  ck_assert_str_eq(ui_fmt_duration_s(185, b, sizeof b), "3m05s");
  ck_assert_str_eq(ui_fmt_duration_s(3720, b, sizeof b), "1h02m");
  ck_assert_str_eq(ui_fmt_duration_s(-1, b, sizeof b), "-");
  ck_assert_str_eq(ui_fmt_pct(0.8734, b, sizeof b), "87.3%");
  /* a small buffer is never overrun */
  char tiny[4];
  ck_assert_str_eq(ui_fmt_ms(12.34, tiny, sizeof tiny), "12.");
}
END_TEST

START_TEST(text_offsets_count_utf8_characters) {
  const char *s = "a\xc3\xa9\xe2\x86\x92z"; /* a, e-acute (2 bytes), arrow (3 bytes), z */
  ck_assert_uint_eq(ui_text_offset(s, 0), 0);
  ck_assert_uint_eq(ui_text_offset(s, 1), 1);
  ck_assert_uint_eq(ui_text_offset(s, 2), 3);
  ck_assert_uint_eq(ui_text_offset(s, 3), 6);
  ck_assert_uint_eq(ui_text_offset(s, 4), 7);
  ck_assert_uint_eq(ui_text_offset(s, 99), 7); /* past the end: the end */
}
END_TEST

START_TEST(line_edit_keys) {
  char text[4] = "";
  ck_assert(ui_edit_line(text, sizeof text, 'a'));
  ck_assert(ui_edit_line(text, sizeof text, ' '));
  ck_assert(ui_edit_line(text, sizeof text, '~'));
  ck_assert_str_eq(text, "a ~");
  ck_assert(!ui_edit_line(text, sizeof text, 'b')); /* full: not taken */
  ck_assert_str_eq(text, "a ~");
  ck_assert(!ui_edit_line(text, sizeof text, UI_KEY_ENTER));
  ck_assert(!ui_edit_line(text, sizeof text, 0x7f));
  ck_assert(!ui_edit_line(text, sizeof text, '\t'));
  ck_assert(ui_edit_line(text, sizeof text, UI_KEY_BACKSPACE));
  ck_assert_str_eq(text, "a ");
  ck_assert(ui_edit_line(text, sizeof text, UI_KEY_BACKSPACE));
  ck_assert(ui_edit_line(text, sizeof text, UI_KEY_BACKSPACE));
  ck_assert(ui_edit_line(text, sizeof text, UI_KEY_BACKSPACE)); /* empty: still a key it takes */
  ck_assert_str_eq(text, "");
}
END_TEST

int main(void) {
  Suite *s = suite_create("ui_widgets");
  TCase *tc = tcase_create("widgets");
  tcase_add_test(tc, text_truncates_with_ellipsis);
  tcase_add_test(tc, boxes_utf8_and_ascii);
  tcase_add_test(tc, braille_line_rises);
  tcase_add_test(tc, braille_flat_zero_and_jump_is_joined);
  tcase_add_test(tc, chart_shows_newest_samples_and_gaps);
  tcase_add_test(tc, ascii_chart_and_marks);
  tcase_add_test(tc, two_series_share_cells);
  tcase_add_test(tc, bars_split_into_segments);
  tcase_add_test(tc, table_aligns_and_clips);
  tcase_add_test(tc, numbers_with_units);
  tcase_add_test(tc, text_offsets_count_utf8_characters);
  tcase_add_test(tc, line_edit_keys);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
