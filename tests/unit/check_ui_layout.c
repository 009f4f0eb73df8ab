/* ui layout: for every view and every size from 80x24 to 320x120, the slots
 * stay on screen, never overlap, cover every cell, and keep the sizes their
 * contents need; larger terminals never shrink a slot. */
#include "layout.h"

#include <check.h>
#include <stdlib.h>

/* Slots each view shows, and the smallest size each needs (w, h). */
struct slot_need {
  enum ui_slot slot;
  int min_w, min_h;
};

static const struct slot_need browser_needs[] = {
    {UI_SLOT_HEADER, 80, 1}, {UI_SLOT_FOOTER, 80, 1}, {UI_SLOT_LIST, 34, 22},
    {UI_SLOT_DETAIL, 40, 22},
};
static const struct slot_need run_needs[] = {
    {UI_SLOT_HEADER, 80, 1},      {UI_SLOT_FOOTER, 80, 1},     {UI_SLOT_PROGRESS, 80, 1},
    {UI_SLOT_THROUGHPUT, 40, 8},  {UI_SLOT_ACCEPT, 40, 6},     {UI_SLOT_LATENCY, 36, 7},
    {UI_SLOT_SERVER_LOAD, 36, 5}, {UI_SLOT_GPU, 36, 4},        {UI_SLOT_LOG, 80, 5},
};
static const struct slot_need ab_needs[] = {
    {UI_SLOT_HEADER, 80, 1}, {UI_SLOT_FOOTER, 80, 1}, {UI_SLOT_ARM_A, 32, 12},
    {UI_SLOT_RATIO, 14, 12}, {UI_SLOT_ARM_B, 32, 12}, {UI_SLOT_CURVE, 80, 8},
};

static const struct slot_need page_needs[] = {
    {UI_SLOT_HEADER, 80, 1}, {UI_SLOT_FOOTER, 80, 1}, {UI_SLOT_BODY, 80, 22},
};

static const struct slot_need *needs_of(enum ui_view v, size_t *n) {
  switch (v) {
  case UI_VIEW_PAGE:
    *n = sizeof page_needs / sizeof page_needs[0];
    return page_needs;
  case UI_VIEW_BROWSER:
    *n = sizeof browser_needs / sizeof browser_needs[0];
    return browser_needs;
  case UI_VIEW_RUN:
    *n = sizeof run_needs / sizeof run_needs[0];
    return run_needs;
  default:
    *n = sizeof ab_needs / sizeof ab_needs[0];
    return ab_needs;
  }
}

static void check_one(int cols, int rows, enum ui_view view) {
  struct ui_layout l;
  ui_layout_compute(cols, rows, view, &l);
  ck_assert(!l.too_small);
  size_t n_needs;
  const struct slot_need *needs = needs_of(view, &n_needs);
  bool expected[UI_SLOT_COUNT] = {false};
  for (size_t i = 0; i < n_needs; i++) {
    struct ui_rect r = l.slot[needs[i].slot];
    expected[needs[i].slot] = true;
    ck_assert_msg(r.w >= needs[i].min_w && r.h >= needs[i].min_h,
                  "%dx%d view %d: %s is %dx%d, needs %dx%d", cols, rows, view,
                  ui_slot_name(needs[i].slot), r.w, r.h, needs[i].min_w, needs[i].min_h);
    ck_assert_msg(r.x >= 0 && r.y >= 0 && r.x + r.w <= cols && r.y + r.h <= rows,
                  "%dx%d: %s leaves the screen", cols, rows, ui_slot_name(needs[i].slot));
  }
  long area = 0;
  for (int s = 0; s < UI_SLOT_COUNT; s++) {
    ck_assert_msg(ui_rect_visible(l.slot[s]) == expected[s], "%dx%d view %d: %s shown=%d",
                  cols, rows, view, ui_slot_name((enum ui_slot)s), ui_rect_visible(l.slot[s]));
    if (!expected[s])
      continue;
    area += (long)l.slot[s].w * l.slot[s].h;
    for (int t = s + 1; t < UI_SLOT_COUNT; t++)
      ck_assert_msg(!ui_rects_overlap(l.slot[s], l.slot[t]), "%dx%d: %s overlaps %s", cols, rows,
                    ui_slot_name((enum ui_slot)s), ui_slot_name((enum ui_slot)t));
  }
  /* no overlap + every slot inside + total area = screen: no cell is left blank */
  ck_assert_msg(area == (long)cols * rows, "%dx%d view %d: slots cover %ld of %ld cells", cols,
                rows, view, area, (long)cols * rows);
  ck_assert_int_eq(l.slot[UI_SLOT_HEADER].y, 0);
  ck_assert_int_eq(l.slot[UI_SLOT_FOOTER].y, rows - 1);
}

START_TEST(all_sizes_fit) {
  enum ui_view view = (enum ui_view)_i;
  for (int cols = UI_MIN_COLS; cols <= 320; cols++)
    for (int rows = UI_MIN_ROWS; rows <= 120; rows += (cols % 29 == 0 ? 1 : 11))
      check_one(cols, rows, view);
}
END_TEST

/* Growing the terminal never shrinks a slot. */
START_TEST(growing_never_shrinks) {
  enum ui_view view = (enum ui_view)_i;
  for (int cols = UI_MIN_COLS; cols < 320; cols += 3) {
    for (int rows = UI_MIN_ROWS; rows < 120; rows += 5) {
      struct ui_layout a, wider, taller;
      ui_layout_compute(cols, rows, view, &a);
      ui_layout_compute(cols + 1, rows, view, &wider);
      ui_layout_compute(cols, rows + 1, view, &taller);
      for (int s = 0; s < UI_SLOT_COUNT; s++) {
        ck_assert_msg(wider.slot[s].w >= a.slot[s].w && wider.slot[s].h >= a.slot[s].h,
                      "%s shrinks from %dx%d to one column more", ui_slot_name((enum ui_slot)s),
                      cols, rows);
        ck_assert_msg(taller.slot[s].w >= a.slot[s].w && taller.slot[s].h >= a.slot[s].h,
                      "%s shrinks from %dx%d to one row more", ui_slot_name((enum ui_slot)s),
                      cols, rows);
      }
    }
  }
}
END_TEST

START_TEST(too_small_terminal) {
  const int sizes[][2] = {{79, 24}, {80, 23}, {20, 5}, {0, 0}, {-3, 10}};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    struct ui_layout l;
    ui_layout_compute(sizes[i][0], sizes[i][1], UI_VIEW_RUN, &l);
    ck_assert(l.too_small);
    for (int s = 1; s < UI_SLOT_COUNT; s++)
      ck_assert(!ui_rect_visible(l.slot[s]));
    ck_assert_int_ge(l.slot[UI_SLOT_HEADER].w, 0);
  }
}
END_TEST

START_TEST(run_view_at_80x24) {
  /* the exact split at the smallest size, so a change is a conscious one */
  struct ui_layout l;
  ui_layout_compute(80, 24, UI_VIEW_RUN, &l);
  struct ui_rect t = l.slot[UI_SLOT_THROUGHPUT], lat = l.slot[UI_SLOT_LATENCY];
  ck_assert_int_eq(t.x, 0);
  ck_assert_int_eq(t.y, 2);
  ck_assert_int_eq(t.w, 44);
  ck_assert_int_eq(t.h, 10);
  ck_assert_int_eq(lat.x, 44);
  ck_assert_int_eq(lat.w, 36);
  ck_assert_int_eq(l.slot[UI_SLOT_LOG].h, 5);
  ck_assert_int_eq(l.slot[UI_SLOT_SERVER_LOAD].h, 5); /* KV use, running vs cap, capacity */
  ck_assert_int_eq(l.slot[UI_SLOT_GPU].h, 4);
}
END_TEST

START_TEST(rect_helpers) {
  struct ui_rect a = {0, 0, 4, 4}, b = {4, 0, 4, 4}, c = {3, 3, 2, 2}, empty = {1, 1, 0, 5};
  ck_assert(!ui_rects_overlap(a, b));
  ck_assert(ui_rects_overlap(a, c));
  ck_assert(ui_rects_overlap(b, c));
  ck_assert(!ui_rects_overlap(a, empty));
  ck_assert(ui_rect_contains(a, 3, 3));
  ck_assert(!ui_rect_contains(a, 4, 0));
  ck_assert_str_eq(ui_slot_name(UI_SLOT_GPU), "gpu");
  ck_assert_str_eq(ui_slot_name(UI_SLOT_COUNT), "?");
}
END_TEST

int main(void) {
  Suite *s = suite_create("ui_layout");
  TCase *tc = tcase_create("layout");
  tcase_set_timeout(tc, 60);
  tcase_add_loop_test(tc, all_sizes_fit, 0, UI_VIEW_COUNT);
  tcase_add_loop_test(tc, growing_never_shrinks, 0, UI_VIEW_COUNT);
  tcase_add_test(tc, too_small_terminal);
  tcase_add_test(tc, run_view_at_80x24);
  tcase_add_test(tc, rect_helpers);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
