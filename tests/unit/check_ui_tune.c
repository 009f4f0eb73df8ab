/* ui tune form and tune view: the form's fields checked as typed (SLO, knobs, lengths,
 * budget) with the error in the form and Enter refused; the view drawn from a fabricated
 * search at 80x24 and larger: every configuration's letter, failing points in lower case,
 * the SLO floor, the frontier, the best in reverse video, the table with intervals and
 * statuses, scrolling, progress and ETA against the budget, the p50/p90/p99 switch, and
 * stop (asked first) keeping the screen. */
#include "tuneform.h"
#include "tuneview.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ui_test.h"

/* ---------------------------------------------------------------- the form */

static struct recipe_set *set;
static const struct recipe *off, *mtp, *lone;
static struct tuneform f;

static void form_setup(void) {
  set = ut_fixture_trio(&off, &mtp, &lone);
  memset(&f, 0, sizeof f);
}

static void form_teardown(void) {
  tuneform_fini(&f);
  recipe_set_free(set);
}

static struct ui_cmd form_key(int k) {
  return ut_key(&tuneform_screen, &f, k, 80, 24, NULL);
}

/* Empties the field that has the keys and types text into it. */
static void retype(const char *text) {
  while (f.text[f.field][0])
    form_key(UI_KEY_BACKSPACE);
  ut_type(&tuneform_screen, &f, text, 80, 24);
}

START_TEST(form_defaults_check_out) {
  tuneform_open(&f, off, mtp);
  ck_assert_str_eq(f.error, "");
  ck_assert_str_eq(f.text[TUNEFORM_SLO], "ttft_p99_ms=2000,tpot_p99_ms=50");
  ck_assert(f.slo.set[TUNE_TTFT_P99_MS] && f.slo.target[TUNE_TPOT_P99_MS] == 50);
  ck_assert_uint_eq(f.n_knobs, 3); /* a GPU engine: batch cap, KV share; a twin: spec */
  ck_assert_str_eq(f.knobs[2].name, "spec");
  ck_assert_int_eq(f.isl, 8192); /* the recipe's lengths */
  ck_assert_int_eq(f.osl, 1024);
  ck_assert(f.budget_s == 1800);
  ck_assert_int_eq(form_key(UI_KEY_ENTER).kind, UI_CMD_TUNE);
  tuneform_open(&f, lone, NULL);
  ck_assert_str_eq(f.error, "");
  ck_assert_uint_eq(f.n_knobs, 2);
  char *frame = ut_frame(&tuneform_screen, &f, NULL, NULL, 80, 24, true);
  ut_assert_has(frame, "Tune other-bf16-b200-vllm");
  ut_assert_has(frame, "2 knobs, 12 settings");
  ut_assert_has(frame, "Enter start");
  free(frame);
}
END_TEST

START_TEST(form_errors_are_shown_and_refuse_enter) {
  tuneform_open(&f, off, NULL);
  ck_assert_int_eq(f.field, TUNEFORM_SLO);
  retype("ttft_p98_ms=5");
  ut_assert_has(f.error, "SLO: ");
  ut_assert_has(f.error, "unknown target");
  ck_assert_int_eq(f.error_field, TUNEFORM_SLO);
  ck_assert_int_eq(form_key(UI_KEY_ENTER).kind, UI_CMD_NONE);
  char *frame = ut_frame(&tuneform_screen, &f, NULL, NULL, 80, 24, true);
  ut_assert_has(frame, "unknown target");
  ut_assert_has(frame, "fix the field in red to start");
  free(frame);
  retype("ttft_p99_ms=3000,min_tok_s_per_user=20");
  ck_assert_str_eq(f.error, "");
  ck_assert(f.slo.set[TUNE_MIN_TOK_S_PER_USER]);
  /* a knob: a bad range, then a name on two lines */
  form_key(UI_KEY_TAB);
  retype("max-batch=256:64:8");
  ut_assert_has(f.error, "knob 1: ");
  ck_assert_int_eq(f.error_field, TUNEFORM_KNOB1);
  retype("kv-cache=0.8,0.9"); /* knob 2 is kv-cache too */
  ut_assert_has(f.error, "knob 2: knob 'kv-cache' is on two lines");
  form_key(UI_KEY_UP);
  ck_assert_int_eq(form_key(UI_KEY_ENTER).kind, UI_CMD_NONE);
  ck_assert_int_eq(f.field, TUNEFORM_KNOB1 + 1); /* Enter went to the field at fault */
  retype("");
  ck_assert_str_eq(f.error, ""); /* an empty line: no knob */
  ck_assert_uint_eq(f.n_knobs, 1);
  /* lengths and budget */
  f.field = TUNEFORM_OSL;
  retype("0");
  ut_assert_has(f.error, "output: a whole number of tokens >= 1");
  retype("64");
  f.field = TUNEFORM_BUDGET;
  retype("30 minutes");
  ut_assert_has(f.error, "budget: '30 minutes' is not a duration");
  retype("90s");
  ck_assert_str_eq(f.error, "");
  ck_assert(f.budget_s == 90);
  ck_assert_int_eq(form_key(UI_KEY_ENTER).kind, UI_CMD_TUNE);
  /* a click on a field's row gives it the keys */
  frame = ut_frame(&tuneform_screen, &f, NULL, NULL, 80, 24, true);
  const char *row = strstr(frame, "knob 2");
  ck_assert_ptr_nonnull(row);
  int y = 0;
  for (const char *c = frame; c < row; c++)
    y += *c == '\n';
  free(frame);
  bool acted;
  ut_mouse(&tuneform_screen, &f, 40, y, 0, 80, 24, &acted);
  ck_assert(acted);
  ck_assert_int_eq(f.field, TUNEFORM_KNOB1 + 1);
  ut_mouse(&tuneform_screen, &f, 0, 0, 0, 80, 24, &acted);
  ck_assert(!acted);
  ck_assert_int_eq(form_key(UI_KEY_ESCAPE).kind, UI_CMD_CLOSE);
}
END_TEST

START_TEST(budget_words) {
  double s = -1;
  struct st_err err = {{0}};
  ck_assert_int_eq(tuneform_parse_budget("30m", &s, &err), 0);
  ck_assert(s == 1800);
  ck_assert_int_eq(tuneform_parse_budget("1h30m", &s, &err), 0);
  ck_assert(s == 5400);
  ck_assert_int_eq(tuneform_parse_budget("90", &s, &err), 0); /* seconds, as --budget */
  ck_assert(s == 90);
  ck_assert_int_eq(tuneform_parse_budget("0", &s, &err), 0);
  ck_assert(s == 0);
  ck_assert_int_eq(tuneform_parse_budget("", &s, &err), 0);
  ck_assert(s == 0);
  ck_assert_int_eq(tuneform_parse_budget("abc", &s, &err), -1);
  ut_assert_has(err.msg, "not a duration");
  ck_assert_int_eq(tuneform_parse_budget("10x", &s, &err), -1);
  ck_assert_int_eq(tuneform_parse_budget("-5m", &s, &err), -1);
}
END_TEST

/* ---------------------------------------------------------------- the view on a fabricated search */

static char *mb_values[] = {"64", "128", "256"};
static char *kv_values[] = {"0.80", "0.88"};
static struct tune_knob knobs[] = {{"max-batch", mb_values, 3}, {"kv-cache", kv_values, 2}};
static struct tune_space space = {knobs, 2, {{1, 0}}};
static struct tuneview tv;

static struct tune_estimate est(double v, double half) {
  return (struct tune_estimate){v, v - half, v + half};
}

static void add_config(struct tune_result *r, size_t mb, size_t kv, enum tune_status status,
                       int best_conc, double goodput, const char *why) {
  r->configs = realloc(r->configs, (r->n_configs + 1) * sizeof *r->configs);
  struct tune_config_result *c = &r->configs[r->n_configs++];
  memset(c, 0, sizeof *c);
  c->cfg.idx[0] = mb;
  c->cfg.idx[1] = kv;
  c->status = status;
  c->best_conc = best_conc;
  c->goodput = best_conc ? est(goodput, goodput * 0.04) : est(NAN, NAN);
  snprintf(c->why, sizeof c->why, "%s", why);
}

/* A point of configuration cfg: tok/s per user, throughput, TPOT p99 (20 ms at p50 and p90). */
static void add_probe(struct tune_result *r, size_t cfg, int conc, double user, double tput,
                      bool holds, double tpot99) {
  r->probes = realloc(r->probes, (r->n_probes + 1) * sizeof *r->probes);
  struct tune_probe *p = &r->probes[r->n_probes++];
  memset(p, 0, sizeof *p);
  p->config = cfg;
  p->concurrency = conc;
  p->holds = holds;
  for (int k = 0; k < TUNE_N_FIGURES; k++)
    p->pt.figure[k] = est(NAN, NAN);
  p->pt.figure[TUNE_TPOT_P99_MS] = est(tpot99, 2);
  p->pt.figure[TUNE_MIN_TOK_S_PER_USER] = est(user, 1);
  p->pt.throughput = est(tput, tput * 0.04);
  p->pt.by_stat_valid = true;
  for (int s = 0; s < TUNE_N_STATS; s++) {
    memcpy(p->pt.by_stat[s], p->pt.figure, sizeof p->pt.figure);
    if (s != TUNE_STAT_P99)
      p->pt.by_stat[s][TUNE_TPOT_P99_MS] = est(20, 2);
  }
  r->configs[cfg].points++;
  r->points++;
}

/* Four configurations: A found (conc 32), B the best (conc 48), C pruned, D out of memory;
 * B measured at concurrency 64 right now. SLO: at least 20 tok/s per user. */
static void view_setup(void) {
  struct tune_slo slo;
  struct st_err err = {{0}};
  ck_assert_int_eq(tune_slo_parse("tpot_p99_ms=50,min_tok_s_per_user=20", &slo, &err), 0);
  tuneview_init(&tv, "demo-fp8-h200-sglang", &space, &slo);
  struct tune_result r = {0};
  r.winner = r.runner_up = -1;
  add_config(&r, 1, 0, TUNE_CFG_BEST_FOUND, 32, 2000, "");
  add_config(&r, 2, 0, TUNE_CFG_BEST_FOUND, 48, 2600, "");
  add_config(&r, 0, 0, TUNE_CFG_PRUNED, 0, 0, "cannot beat the best goodput 2600");
  add_config(&r, 2, 1, TUNE_CFG_START_FAILED, 0, 0, "CUDA out of memory");
  add_probe(&r, 0, 1, 90, 90, true, 20);
  add_probe(&r, 0, 32, 60, 2000, true, 30);
  add_probe(&r, 0, 64, 12, 1500, false, 45); /* below the floor: fails */
  add_probe(&r, 1, 1, 95, 95, true, 20);
  add_probe(&r, 1, 48, 54, 2600, true, 40);
  add_probe(&r, 1, 96, 15, 2900, false, 48);
  add_probe(&r, 2, 1, 25, 17, false, 60); /* TPOT p99 60 > 50: fails; at p50 (20 ms) it holds */
  struct run_tune_status st = {.over = false, .config = 1, .concurrency = 64, .elapsed_s = 300,
                               .budget_s = 1800, .eta_valid = true, .eta_s = 600, .n_gpus = 1};
  snprintf(st.message, sizeof st.message, "measuring");
  tuneview_update(&tv, &st, &r);
  ck_assert_ptr_null(r.configs); /* taken over */
}

static void view_teardown(void) {
  tuneview_fini(&tv);
}

static struct ui_cmd view_key(int k) {
  return ut_key(&tuneview_screen, &tv, k, 80, 24, NULL);
}

/* Is glyph drawn in role inside the chart's plot (below its legend line)? */
static bool has_cell(const struct ui_grid *g, const char *glyph, enum theme_role role) {
  struct ui_layout l;
  ui_layout_compute(g->cols, g->rows, UI_VIEW_PAGE, &l);
  struct tuneview_layout t;
  tuneview_layout(l.slot[UI_SLOT_BODY], tv.res.n_configs, &t);
  struct ui_rect in = ui_rect_inner(t.chart);
  for (int y = in.y + 1; y < in.y + in.h - 1; y++)
    for (int x = in.x; x < in.x + in.w; x++) {
      const struct ui_cell *c = ui_grid_at(g, x, y);
      if (strcmp(c->glyph, glyph) == 0 && c->role == role)
        return true;
    }
  return false;
}

static void render_grid(struct ui_grid *g, int cols, int rows, bool unicode) {
  ui_grid_init(g, cols, rows);
  struct ui_layout l;
  ui_layout_compute(cols, rows, tuneview_screen.view, &l);
  struct ui_ctx ctx = {.layout = &l, .gl = ui_glyphs_get(unicode)};
  tuneview_screen.render(&tv, g, &ctx);
  ui_screen_draw_footer(&tuneview_screen, &tv, g, &ctx);
}

START_TEST(view_at_80x24) {
  char *frame = ut_frame(&tuneview_screen, &tv, NULL, NULL, 80, 24, true);
  ut_assert_has(frame, "servetop · tune demo-fp8-h200-sglang · searching · p99");
  ut_assert_has(frame, "searching");
  ut_assert_has(frame, "7 points");
  ut_assert_has(frame, "5m00s elapsed of 30m00s budget");
  ut_assert_has(frame, "ETA 10m00s");
  ut_assert_has(frame, "now B max-batch=256 kv-cache=0.80 at concurrency 64");
  ut_assert_has(frame, "Throughput per GPU vs interactivity at p99 · SLO tpot<=50ms");
  ut_assert_has(frame, "A holds up to concurrency 32: goodput 2.00k tok/s · tpot p99 30.0ms");
  ut_assert_has(frame, "SLO 20 tok/s/user");
  /* the table: letter, configuration, status, conc, goodput with its interval */
  ut_assert_has(frame, "A max-batch=128 kv-cache=0.80");
  ut_assert_has(frame, "measuring"); /* B is being measured */
  ut_assert_has(frame, "2.60k [2.50k, 2.70k]");
  ut_assert_has(frame, "pruned");
  ut_assert_has(frame, "no start");
  ut_assert_has(frame, "q stop");
  free(frame);
  struct ui_grid g;
  render_grid(&g, 80, 24, true);
  ck_assert(has_cell(&g, "B", THEME_SELECTED)); /* the best point */
  ck_assert(has_cell(&g, "a", THEME_INACTIVE)); /* A's failing point */
  ck_assert(has_cell(&g, "c", THEME_INACTIVE)); /* C fails at p99 */
  ck_assert(has_cell(&g, "│", THEME_WARNING));  /* the SLO floor */
  ui_grid_fini(&g);
  /* ASCII: nothing outside it */
  frame = ut_frame(&tuneview_screen, &tv, NULL, NULL, 80, 24, false);
  for (const char *p = frame; *p; p++)
    ck_assert_msg((unsigned char)*p < 0x80, "a byte outside ASCII");
  free(frame);
}
END_TEST

START_TEST(layout_fits_every_size) {
  int sizes[][2] = {{80, 24}, {100, 30}, {120, 40}, {200, 60}};
  for (size_t i = 0; i < ST_ARRAY_LEN(sizes); i++)
    for (size_t n = 0; n < 40; n += 3) {
      struct ui_layout l;
      ui_layout_compute(sizes[i][0], sizes[i][1], UI_VIEW_PAGE, &l);
      struct ui_rect body = l.slot[UI_SLOT_BODY];
      struct tuneview_layout t;
      tuneview_layout(body, n, &t);
      struct ui_rect parts[] = {t.progress, t.chart, t.table};
      int h = 0;
      for (size_t k = 0; k < 3; k++) {
        ck_assert(parts[k].y >= body.y && parts[k].y + parts[k].h <= body.y + body.h);
        for (size_t m = k + 1; m < 3; m++)
          ck_assert(!ui_rects_overlap(parts[k], parts[m]));
        h += parts[k].h;
      }
      ck_assert_int_eq(h, body.h);
      ck_assert_int_ge(t.chart.h, 11);
      ck_assert_int_ge(t.table.h, 6);
      ck_assert_int_le(t.table.h, (int)n + 4 > 6 ? (int)n + 4 : 6);
    }
}
END_TEST

START_TEST(percentile_switch) {
  ck_assert_int_eq(view_key('p').kind, UI_CMD_NONE);
  ck_assert_int_eq(tv.stat, TUNE_STAT_P50);
  struct ui_grid g;
  render_grid(&g, 80, 24, true);
  ck_assert(has_cell(&g, "C", THEME_CHART_RPS)); /* holds at p50 */
  ck_assert(!has_cell(&g, "c", THEME_INACTIVE));
  ui_grid_fini(&g);
  char *frame = ut_frame(&tuneview_screen, &tv, NULL, NULL, 80, 24, true);
  ut_assert_has(frame, "interactivity at p50");
  ut_assert_has(frame, "at p50 (the search judges p99)");
  ut_assert_has(frame, "A holds up to concurrency 32: goodput 2.00k tok/s · tpot p50 20.0ms");
  free(frame);
  view_key('p');
  view_key('p');
  ck_assert_int_eq(tv.stat, TUNE_STAT_P99);
  /* a driver that kept p99 only: p says so and stays */
  for (size_t i = 0; i < tv.res.n_probes; i++)
    tv.res.probes[i].pt.by_stat_valid = false;
  view_key('p');
  ck_assert_int_eq(tv.stat, TUNE_STAT_P99);
  ut_assert_has(tv.status, "p99 only");
}
END_TEST

/* D died mid-search (no start): a point it measured that held is drawn as failing, at every
 * percentile. */
START_TEST(a_dead_configuration_draws_as_failing) {
  add_probe(&tv.res, 3, 1, 80, 500, true, 20);
  for (int pass = 0; pass < 2; pass++) {
    struct ui_grid g;
    render_grid(&g, 80, 24, true);
    ck_assert(has_cell(&g, "d", THEME_INACTIVE));
    ck_assert(!has_cell(&g, "D", THEME_CHART_ACCEPT));
    ui_grid_fini(&g);
    view_key('p'); /* p50: judged again, still nothing */
  }
}
END_TEST

START_TEST(stop_asks_and_keeps_the_screen) {
  ck_assert_int_eq(view_key('q').kind, UI_CMD_NONE);
  char *frame = ut_frame(&tuneview_screen, &tv, NULL, NULL, 80, 24, true);
  ut_assert_has(frame, "Stop the search? y / n");
  free(frame);
  ck_assert_int_eq(view_key('n').kind, UI_CMD_NONE);
  ck_assert(!tv.confirm_stop);
  view_key(UI_KEY_ESCAPE);
  ck_assert_int_eq(view_key('y').kind, UI_CMD_TUNE_STOP);
  /* b while it runs: asks, then back (the program stops it) */
  view_key('b');
  ck_assert_int_eq(view_key('y').kind, UI_CMD_HOME);
  /* over: what was measured stays; q quits, Esc goes back */
  struct run_tune_status st = tv.st;
  st.over = true;
  snprintf(st.message, sizeof st.message, "stopped: 7 points measured; best B");
  snprintf(st.dir, sizeof st.dir, "/tmp/runs/x-tune-demo");
  st.end = TUNE_END_STOPPED;
  tuneview_update(&tv, &st, NULL);
  frame = ut_frame(&tuneview_screen, &tv, NULL, NULL, 80, 24, true);
  ut_assert_has(frame, "· stopped ·");
  ut_assert_has(frame, "stopped: 7 points measured; best B");
  ut_assert_has(frame, "q quit");
  ut_assert_has(frame, "2.60k [2.50k, 2.70k]");
  ut_assert_lacks(frame, "ETA");
  free(frame);
  /* the time budget ended it (its stop too): the budget's, not a stop */
  st.end = TUNE_END_TIME_BUDGET;
  tv.res.stopped = true;
  tuneview_update(&tv, &st, NULL);
  frame = ut_frame(&tuneview_screen, &tv, NULL, NULL, 80, 24, true);
  ut_assert_has(frame, "· budget spent ·");
  ut_assert_lacks(frame, "· stopped ·");
  free(frame);
  ck_assert_int_eq(view_key('q').kind, UI_CMD_QUIT);
  ck_assert_int_eq(view_key(UI_KEY_ESCAPE).kind, UI_CMD_HOME);
}
END_TEST

START_TEST(table_scrolls) {
  struct tune_result r = {0};
  tune_result_copy(&r, &tv.res);
  for (int i = 0; i < 10; i++)
    add_config(&r, (size_t)(i % 3), (size_t)(i % 2), TUNE_CFG_NONE_HOLDS, 0, 0,
               "the SLO fails at concurrency 1");
  tuneview_update(&tv, NULL, &r);
  char *frame = ut_frame(&tuneview_screen, &tv, NULL, NULL, 80, 24, true);
  ut_assert_has(frame, "1-5 of 14");
  ut_assert_lacks(frame, "N max-batch");
  free(frame);
  view_key(UI_KEY_END);
  ck_assert_uint_eq(tv.sel, 13);
  frame = ut_frame(&tuneview_screen, &tv, NULL, NULL, 80, 24, true);
  ut_assert_has(frame, "N max-batch");
  ut_assert_has(frame, "10-14 of 14");
  ut_assert_has(frame, "N SLO fails at the lowest concurrency: the SLO fails at concurrency 1");
  free(frame);
  view_key(UI_KEY_HOME);
  view_key('j');
  view_key('j');
  view_key('j');
  frame = ut_frame(&tuneview_screen, &tv, NULL, NULL, 80, 24, true);
  ut_assert_has(frame, "D failed to start: CUDA out of memory");
  free(frame);
  /* a tall terminal shows them all */
  frame = ut_frame(&tuneview_screen, &tv, NULL, NULL, 120, 50, true);
  ut_assert_lacks(frame, " of 14 ");
  ut_assert_has(frame, "N max-batch");
  free(frame);
}
END_TEST

START_TEST(empty_search) {
  tuneview_fini(&tv);
  tuneview_init(&tv, "demo", &space, NULL);
  char *frame = ut_frame(&tuneview_screen, &tv, NULL, NULL, 80, 24, true);
  ut_assert_has(frame, "starting the search");
  ut_assert_has(frame, "no point measured yet");
  ut_assert_has(frame, "no configuration visited yet");
  free(frame);
  ck_assert_int_eq(view_key('q').kind, UI_CMD_NONE); /* it is starting: asks first */
  ck_assert(tv.confirm_stop);
}
END_TEST

int main(void) {
  Suite *s = suite_create("ui_tune");
  TCase *tf = tcase_create("form");
  tcase_add_checked_fixture(tf, form_setup, form_teardown);
  tcase_add_test(tf, form_defaults_check_out);
  tcase_add_test(tf, form_errors_are_shown_and_refuse_enter);
  tcase_add_test(tf, budget_words);
  suite_add_tcase(s, tf);
  TCase *tc = tcase_create("view");
  tcase_add_checked_fixture(tc, view_setup, view_teardown);
  tcase_add_test(tc, view_at_80x24);
  tcase_add_test(tc, layout_fits_every_size);
  tcase_add_test(tc, percentile_switch);
  tcase_add_test(tc, a_dead_configuration_draws_as_failing);
  tcase_add_test(tc, stop_asks_and_keeps_the_screen);
  tcase_add_test(tc, table_scrolls);
  tcase_add_test(tc, empty_search);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
