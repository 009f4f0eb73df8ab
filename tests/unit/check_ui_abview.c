/* ui A/B view: rows and ratios, the throughput-per-GPU vs interactivity
 * curve from finished sweep points, and frames from fixed snapshots. */
#include "abview.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "help.h"
#include "pastruns.h"
#include "ui_test.h"

#define PAST_DIR TEST_DATA_DIR "/ui/past"
#define PAST_OFF PAST_DIR "/20261201-040000-qwen3.5-fp8-h200-sglang-off"
#define PAST_MTP PAST_DIR "/20261130-050000-qwen3.5-fp8-h200-sglang-mtp"

static struct recipe_set *set;
static struct abview ab;

/* Two sweep points at tp 8 (conc 4 and 8) for a pair of twins. */
static const char yaml[] = "pair-fp8-h200-sglang:\n"
                           "  model: Org/Pair\n  model-prefix: pair\n  runner: h200\n"
                           "  precision: fp8\n  framework: sglang\n  multinode: false\n"
                           "  scenarios:\n    fixed-seq-len:\n    - isl: 1024\n      osl: 1024\n"
                           "      search-space:\n      - { tp: 8, conc-list: [4, 8] }\n"
                           "  server:\n    engine: sglang\n    argv:\n      - --tp $TP\n"
                           "pair-fp8-h200-sglang-mtp:\n"
                           "  model: Org/Pair\n  model-prefix: pair\n  runner: h200\n"
                           "  precision: fp8\n  framework: sglang\n  multinode: false\n"
                           "  scenarios:\n    fixed-seq-len:\n    - isl: 1024\n      osl: 1024\n"
                           "      search-space:\n"
                           "      - { tp: 8, conc-list: [4, 8], spec-decoding: mtp }\n"
                           "  server:\n    engine: sglang\n    argv:\n      - --tp $TP\n";

/* One arm's sweep: per point, whole-run output tok/s and TPOT p50. */
static void play_arm(struct runview *rv, const double *tok_s, const double *tpot_ms,
                     double accept_length) {
  struct snap_run s;
  snap_run_init(&s);
  s.server.state = SNAP_SERVER_READY;
  s.progress.n_points = 2;
  s.load.max_total_num_tokens_valid = true;
  s.load.max_total_num_tokens = accept_length > 0 ? 400000 : 500000;
  if (accept_length > 0) {
    s.spec.enabled_valid = s.spec.enabled = true;
    s.spec.accept_length_valid = true;
    s.spec.accept_length = accept_length;
  }
  for (int point = 0; point < 2; point++) {
    s.progress.point_index = point;
    s.progress.phase = SNAP_PHASE_MEASURING;
    s.concurrency.target = 4 << point;
    for (int t = 0; t <= 50; t++) {
      s.progress.elapsed_s = t * 0.1;
      s.progress.done = t;
      fig_set_scalar(&s.figures.window, FIG_OUTPUT_TPUT, true, tok_s[point]);
      fig_set_scalar(&s.figures.window, FIG_TOTAL_TPUT, true, 2 * tok_s[point]);
      fig_set_scalar(&s.figures.window, FIG_REQ_TPUT, true, 1);
      s.figures.run = s.figures.window;
      fig_set_dist(&s.figures.run, FIG_TPOT, 10, NAN, tpot_ms[point], tpot_ms[point], tpot_ms[point]);
      fig_set_dist(&s.figures.run, FIG_TTFT, 10, NAN, 100, 120, 130);
      fig_set_derive(&s.figures.run, 0);
      runview_push(rv, &s);
    }
    /* the point's result is saved: the run adds it to the snapshot's history */
    struct snap_point_result pr = {.point_index = point, .conc = 4 << point,
                                   .conc_end = 4 << point, .measured_to_end = true,
                                   .completed = 50, .total = 50, .duration_s = 5,
                                   .figs = s.figures.run,
                                   .kv_tokens_valid = true,
                                   .kv_tokens = s.load.max_total_num_tokens, .batch_cap = -1};
    snprintf(pr.end, sizeof pr.end, "done");
    fig_set_scalar(&pr.figs, FIG_ACCEPT_LENGTH, s.spec.accept_length_valid, s.spec.accept_length);
    snap_points_add(&s.points, &pr);
    runview_push(rv, &s);
  }
  s.progress.phase = SNAP_PHASE_DONE;
  s.server.state = SNAP_SERVER_EXITED;
  runview_push(rv, &s);
}

static void setup(void) {
  set = recipe_set_new();
  recipe_set_add_yaml_buffer(set, "pair.yaml", yaml, sizeof yaml - 1);
  ck_assert_int_eq(recipe_set_diag_count(set), 0);
  const struct recipe *off = recipe_set_at(set, 0), *mtp = recipe_set_twin(set, off);
  ck_assert_ptr_nonnull(mtp);
  abview_init(&ab, off, mtp, PAST_DIR);
  const double off_tok[] = {1000, 1800}, off_tpot[] = {10, 20};
  const double mtp_tok[] = {1850, 3000}, mtp_tpot[] = {5, 10};
  play_arm(&ab.arm[AB_OFF], off_tok, off_tpot, 0);
  play_arm(&ab.arm[AB_MTP], mtp_tok, mtp_tpot, 2.6);
}

static void teardown(void) {
  abview_fini(&ab);
  recipe_set_free(set);
}

static char *render(int cols, int rows, bool unicode) {
  return ut_frame(&abview_screen, &ab, NULL, NULL, cols, rows, unicode);
}

#define assert_has ut_assert_has

static struct ui_cmd key(int k) {
  return ut_key(&abview_screen, &ab, k, 80, 24, NULL);
}

START_TEST(rows_compare_the_last_point) {
  struct ab_row rows[16];
  size_t n = abview_rows(&ab, rows, 16);
  ck_assert_int_ge(n, 9);
  ck_assert_str_eq(rows[0].label, "output tok/s");
  ck_assert(rows[0].value[AB_OFF] == 1800 && rows[0].value[AB_MTP] == 3000);
  ck_assert_str_eq(rows[3].label, "tok/s/user");
  ck_assert(fabs(rows[3].value[AB_OFF] - 50) < 1e-9 && fabs(rows[3].value[AB_MTP] - 100) < 1e-9);
  /* the non-MTP arm has no acceptance: unknown, not 0 */
  ck_assert_str_eq(rows[8].label, "accept len");
  ck_assert(isnan(rows[8].value[AB_OFF]));
  ck_assert(rows[8].value[AB_MTP] == 2.6);
}
END_TEST

START_TEST(curve_points_per_gpu) {
  double x[8], y[8];
  ck_assert_int_eq(abview_curve(&ab, AB_OFF, x, y, 8), 2);
  /* interactivity 1000 / TPOT p50; throughput divided by tp 8 */
  ck_assert(fabs(x[0] - 100) < 1e-9 && fabs(y[0] - 125) < 1e-9);
  ck_assert(fabs(x[1] - 50) < 1e-9 && fabs(y[1] - 225) < 1e-9);
  ck_assert_int_eq(abview_curve(&ab, AB_MTP, x, y, 8), 2);
  ck_assert(fabs(x[0] - 200) < 1e-9 && fabs(y[0] - 231.25) < 1e-9);
  ck_assert_int_eq(ab.arm[AB_MTP].snap.points.point[1].conc, 8);
}
END_TEST

/* The sweep chart says per GPU where GPUs were counted (tp 8 on h200), marks
 * each point with its concurrency; a CPU pair says per server. */
START_TEST(curve_marks_concurrency_and_per_what) {
  double x[8], y[8];
  int conc[8];
  ck_assert_int_eq(abview_curve_conc(&ab, AB_MTP, x, y, conc, 8), 2);
  ck_assert(conc[0] == 4 && conc[1] == 8);
  ck_assert(abview_arm_counts_gpus(&ab, AB_OFF) && abview_arm_counts_gpus(&ab, AB_MTP));
  char *f = render(200, 50, true);
  assert_has(f, "Throughput per GPU vs interactivity");
  assert_has(f, "c4");
  assert_has(f, "c8");
  free(f);
  /* the same pair on a CPU runner: no GPU was counted */
  static const char cpu_yaml[] =
      "pair-f16-cpu-llamacpp:\n  model: Org/Pair\n  model-prefix: pair\n  runner: cpu\n"
      "  precision: f16\n  framework: llamacpp\n  multinode: false\n"
      "  scenarios:\n    fixed-seq-len:\n    - isl: 128\n      osl: 64\n"
      "      search-space:\n      - { tp: 1, conc-list: [1, 2] }\n"
      "  server:\n    engine: llamacpp\n    argv:\n      - -c 4096\n";
  struct recipe_set *cpu = recipe_set_new();
  recipe_set_add_yaml_buffer(cpu, "cpu.yaml", cpu_yaml, sizeof cpu_yaml - 1);
  ck_assert_int_eq(recipe_set_diag_count(cpu), 0);
  const struct recipe *saved[2] = {ab.recipe[AB_OFF], ab.recipe[AB_MTP]};
  ab.recipe[AB_OFF] = ab.recipe[AB_MTP] = recipe_set_at(cpu, 0);
  ck_assert(!abview_arm_counts_gpus(&ab, AB_OFF));
  f = render(200, 50, true);
  assert_has(f, "Throughput per server vs interactivity");
  assert_has(f, "tok/s/server");
  free(f);
  ab.recipe[AB_OFF] = saved[0];
  ab.recipe[AB_MTP] = saved[1];
  recipe_set_free(cpu);
}
END_TEST

START_TEST(frames_at_80x24_and_200x50) {
  char *f = render(80, 24, true);
  assert_has(f, "off · pair-fp8-h200-sg… <"); /* names are cut to the box, the mark stays */
  assert_has(f, "MTP · pair-fp8-h200-sgla");
  assert_has(f, "output tok/s    1.80k");
  assert_has(f, "output tok/s    3.00k");
  assert_has(f, "accept len          -");
  assert_has(f, "MTP/off");
  assert_has(f, "1.67×");  /* output tok/s 3000 / 1800 */
  assert_has(f, "2.00×");  /* tok/s/user 100 / 50 */
  assert_has(f, "0.50×");  /* TPOT halved */
  assert_has(f, "Throughput per GPU vs interactivity");
  free(f);
  f = render(200, 50, true);
  assert_has(f, "tok/s/gpu");
  assert_has(f, "200 tok/s/user");  /* the x scale reaches MTP's best interactivity */
  assert_has(f, "MTP · pair-fp8-h200-sglang-mtp");
  assert_has(f, "375");  /* the y scale reaches MTP's best throughput per GPU (3000 / 8) */
  /* the curve area has dots */
  ck_assert(strstr(f, "⠁") || strstr(f, "⠂") || strstr(f, "⠄") || strstr(f, "⡀") ||
            strstr(f, "⠈") || strstr(f, "⠐") || strstr(f, "⠠") || strstr(f, "⢀"));
  free(f);
  f = render(80, 24, false);
  for (const unsigned char *c = (const unsigned char *)f; *c; c++)
    ck_assert_msg(*c < 0x80, "not ASCII");
  assert_has(f, "1.67x");
  free(f);
}
END_TEST

START_TEST(help_and_quit_prompt) {
  struct helpview h = {.of = &abview_screen};
  char *f = ut_frame(&help_screen, &h, &abview_screen, &ab, 80, 24, true);
  for (size_t i = 0; i < abview_screen.n_keys; i++)
    assert_has(f, abview_screen.keys[i].what);
  free(f);
  ab.confirm = RUNVIEW_CONFIRM_QUIT;
  f = render(80, 24, true);
  assert_has(f, "A server is up: stop it and quit? y / n");
  free(f);
}
END_TEST

START_TEST(an_arm_not_loaded_says_so) {
  abview_fini(&ab);
  abview_init(&ab, recipe_set_at(set, 0), NULL, NULL);
  char *f = render(80, 24, true);
  assert_has(f, "not loaded");
  assert_has(f, "no finished sweep point yet");
  free(f);
}
END_TEST

START_TEST(xy_chart_draws_a_line) {
  struct ui_grid g;
  ui_grid_init(&g, 2, 1);
  const double x[] = {0, 3}, y[] = {0, 3};
  struct ui_xy_series s = {x, y, 2, THEME_ARM_MTP};
  double xm, ym;
  ui_xy_chart(&g, (struct ui_rect){0, 0, 2, 1}, &s, 1, 0, 0, ui_glyphs_get(true), &xm, &ym);
  ck_assert(xm == 3 && ym == 3);
  char *row = ui_grid_row_alloc(&g, 0);
  ck_assert_str_eq(row, "⡠⠊");  /* the diagonal, as the time chart draws a rising line */
  free(row);
  ck_assert_int_eq(ui_grid_at(&g, 0, 0)->role, THEME_ARM_MTP);
  ui_grid_fini(&g);
}
END_TEST


/* Two past runs, one per column: the rows, ratios and curve come from their
 * result files (the off run is a sweep over conc 4 and 8, MTP one point). */
static void load_both_past(void) {
  struct st_err err = {{0}};
  abview_fini(&ab);
  abview_init(&ab, NULL, NULL, PAST_DIR);
  ck_assert_msg(abview_load_past(&ab, AB_OFF, PAST_OFF, &err) == 0, "%s", err.msg);
  ck_assert_msg(abview_load_past(&ab, AB_MTP, PAST_MTP, &err) == 0, "%s", err.msg);
}

START_TEST(past_runs_fill_both_columns) {
  load_both_past();
  struct ab_row rows[16];
  abview_rows(&ab, rows, 16);
  /* automatic: the highest concurrency of each (8 and 8) */
  ck_assert_int_eq(abview_past_result(&ab, AB_OFF)->max_concurrency, 8);
  ck_assert(fabs(rows[0].value[AB_OFF] - 17635.98879669475) < 1e-6);
  ck_assert(fabs(rows[0].value[AB_MTP] - 24398.333593815543) < 1e-6);
  ck_assert(fabs(rows[3].value[AB_MTP] - 1000.0 / 0.29213076419672135) < 1e-6);
  ck_assert(fabs(rows[4].value[AB_OFF] - 1.749946) < 1e-9);        /* TTFT p50 */
  ck_assert(rows[9].value[AB_MTP] == 8563448);                     /* KV tokens */
  char *f = render(100, 32, true);
  assert_has(f, "off SIMULATED · qwen3.5-fp8-h200… <"); /* provenance first, the mark last */
  assert_has(f, "MTP SIMULATED · qwen3.5-fp8-h200-s…");
  assert_has(f, "past run · conc 8 · 2 points");
  /* the recorded MTP run sent chat requests (its recipe's chat template), the off run plain
   * completions: not like with like, said in red, no ratio (24398 / 17636 would be 1.38×) */
  assert_has(f, "UNLIKE: chat template differs (A: completions");
  assert_has(f, "hidden");
  ck_assert_ptr_null(strstr(f, "1.38×"));
  char why[512];
  ck_assert(abview_unlike(&ab, why, sizeof why));
  ck_assert(abview_arm_simulated(&ab, AB_OFF) && abview_arm_simulated(&ab, AB_MTP));
  assert_has(f, ">    8        17.6k");
  assert_has(f, "4.00k short"); /* 32 requests in 0.2 s: too short for its intervals */
  free(f);
  /* the curve: tok/s per GPU (tp 8 from recipe.json) against tok/s/user */
  double x[8], y[8];
  ck_assert_uint_eq(abview_curve(&ab, AB_OFF, x, y, 8), 2);
  ck_assert(fabs(x[0] - 4000) < 1e-6 && fabs(y[0] - 1250) < 1e-6);
  ck_assert(fabs(y[1] - 17635.98879669475 / 8) < 1e-6);
  ck_assert_uint_eq(abview_curve(&ab, AB_MTP, x, y, 8), 1);
}
END_TEST

/* Like with like: one past run in both columns divides (1.00×); conc 4 beside conc 8 does not. */
START_TEST(past_ratios_only_like_with_like) {
  struct st_err err = {{0}};
  abview_fini(&ab);
  abview_init(&ab, NULL, NULL, PAST_DIR);
  ck_assert_msg(abview_load_past(&ab, AB_OFF, PAST_OFF, &err) == 0, "%s", err.msg);
  ck_assert_msg(abview_load_past(&ab, AB_MTP, PAST_OFF, &err) == 0, "%s", err.msg);
  char why[512];
  ck_assert_msg(!abview_unlike(&ab, why, sizeof why), "%s", why);
  char *f = render(80, 24, true);
  assert_has(f, "1.00×");
  ck_assert_ptr_null(strstr(f, "UNLIKE"));
  free(f);
  /* MTP column pinned at conc 8 by its own file, the off column stepped to conc 4 */
  ck_assert(abview_load_past(&ab, AB_MTP, PAST_OFF "/result-conc8.json", &err) == 0);
  key('[');
  ck_assert_int_eq(abview_past_result(&ab, AB_OFF)->max_concurrency, 4);
  ck_assert(abview_unlike(&ab, why, sizeof why));
  ck_assert_msg(strstr(why, "concurrency differs (A: 4, B: 8)"), "%s", why);
  f = render(80, 24, true);
  assert_has(f, "UNLIKE: concurrency differs (A: 4, B: 8)");
  ck_assert_ptr_null(strstr(f, "×"));
  free(f);
}
END_TEST

/* A real llama-server pair (tests/data/launcher/compare: the target alone and with a draft
 * model, servetop run tiny-llamacpp-cpu --ab): the columns say "draft", not MTP; ITL is per
 * chunk and the draft arm's tokens come in bursts (median gap 0.028 ms against 0.785 ms), so
 * its ratio gets no verdict ("n/c"), as compare says it; TPOT's keeps one. */
START_TEST(draft_pair_itl_is_not_compared) {
  struct st_err err = {{0}};
  abview_fini(&ab);
  abview_init(&ab, NULL, NULL, PAST_DIR);
  ck_assert_msg(abview_load_past(&ab, AB_OFF, TEST_DATA_DIR "/launcher/compare/llamacpp-off",
                                 &err) == 0, "%s", err.msg);
  ck_assert_msg(abview_load_past(&ab, AB_MTP, TEST_DATA_DIR "/launcher/compare/llamacpp-draft",
                                 &err) == 0, "%s", err.msg);
  char why[512];
  ck_assert_msg(!abview_unlike(&ab, why, sizeof why), "%s", why);
  struct ab_row rows[16];
  size_t n = abview_rows(&ab, rows, 16);
  ck_assert_uint_ge(n, 8);
  ck_assert_str_eq(rows[6].label, "ITL p50");
  ck_assert_int_eq(rows[6].ratio.verdict, CI_NOT_COMPARABLE);
  ck_assert_str_eq(rows[5].label, "TPOT p50");
  ck_assert_int_ne(rows[5].ratio.verdict, CI_NOT_COMPARABLE);
  char *f = render(100, 32, true);
  assert_has(f, "a draft model against the target alone");
  assert_has(f, "draft/off");
  assert_has(f, "0.04× n/c");
  ck_assert_ptr_null(strstr(f, "MTP"));
  free(f);
  /* one run in both columns: its chunks are alike, the ITL ratio keeps its verdict */
  ck_assert(abview_load_past(&ab, AB_MTP, TEST_DATA_DIR "/launcher/compare/llamacpp-off", &err) ==
            0);
  abview_rows(&ab, rows, 16);
  ck_assert_int_ne(rows[6].ratio.verdict, CI_NOT_COMPARABLE);
}
END_TEST

/* Live arms at different concurrencies (one measuring conc 8, the other's last point at 4):
 * no ratio; a simulated live arm says SIMULATED. */
START_TEST(live_arms_at_other_concurrencies_are_not_divided) {
  struct snap_run s = ab.arm[AB_MTP].snap;
  s.progress.phase = SNAP_PHASE_MEASURING;
  s.concurrency.target = 16;
  s.server.simulated = true;
  snprintf(s.server.engine, sizeof s.server.engine, "sim");
  s.points.n = 0;
  runview_push(&ab.arm[AB_MTP], &s);
  char why[512];
  ck_assert(abview_unlike(&ab, why, sizeof why));
  ck_assert_msg(strstr(why, "concurrency differs (A: 8, B: 16)"), "%s", why);
  char *f = render(80, 24, true);
  assert_has(f, "UNLIKE: ");
  ck_assert_ptr_null(strstr(f, "×"));
  assert_has(f, "MTP SIMULATED · ");
  assert_has(f, "off · "); /* the off arm's server never said */
  free(f);
}
END_TEST

START_TEST(past_concurrency_steps) {
  load_both_past();
  key('[');
  ck_assert_int_eq(ab.shown_conc, 4);
  ck_assert_int_eq(abview_past_result(&ab, AB_OFF)->max_concurrency, 4);
  ck_assert_int_eq(abview_past_result(&ab, AB_MTP)->max_concurrency, 8); /* nearest it has */
  struct ab_row rows[16];
  abview_rows(&ab, rows, 16);
  ck_assert(rows[0].value[AB_OFF] == 10000);
  key('['); /* stays on the lowest */
  ck_assert_int_eq(ab.shown_conc, 4);
  key(']');
  ck_assert_int_eq(ab.shown_conc, 8);
  /* the wheel over the columns steps too; a click on a past point shows it */
  struct ui_layout l;
  ui_layout_compute(100, 32, UI_VIEW_AB, &l);
  struct ui_rect a = l.slot[UI_SLOT_ARM_A];
  bool acted;
  ut_mouse(&abview_screen, &ab, a.x + 2, a.y + 2, -3, 100, 32, &acted);
  ck_assert(acted);
  ck_assert_int_eq(ab.shown_conc, 4);
  char *f = render(100, 32, true);
  /* find the conc 8 line of the off column's point list and click it */
  struct ui_grid g;
  ui_grid_init(&g, 100, 32);
  abview_render(&ab, &g, &l, ui_glyphs_get(true));
  int y8 = -1;
  for (int y = a.y; y < a.y + a.h && y8 < 0; y++) {
    char *row = ui_grid_row_alloc(&g, y);
    if (strstr(row, "     8        17.6k"))
      y8 = y;
    free(row);
  }
  ui_grid_fini(&g);
  free(f);
  ck_assert_int_ge(y8, 0);
  ab.column = AB_MTP;
  ut_mouse(&abview_screen, &ab, a.x + 3, y8, 0, 100, 32, &acted);
  ck_assert(acted);
  ck_assert_int_eq(ab.shown_conc, 8);
  ck_assert_int_eq(ab.column, AB_OFF);
  /* x clears the selected column's past run */
  ut_key(&abview_screen, &ab, 'x', 80, 24, &acted);
  ck_assert(acted);
  ck_assert(!ab.past[AB_OFF].loaded);
  ut_key(&abview_screen, &ab, 'x', 80, 24, &acted);
  ck_assert(!acted);
}
END_TEST

START_TEST(past_run_beside_a_live_arm) {
  struct st_err err = {{0}};
  ck_assert_int_eq(abview_load_past(&ab, AB_MTP, PAST_MTP, &err), 0);
  struct ab_row rows[16];
  abview_rows(&ab, rows, 16);
  ck_assert(rows[0].value[AB_OFF] == 1800); /* live, last point */
  ck_assert(fabs(rows[0].value[AB_MTP] - 24398.333593815543) < 1e-6);
  /* loading again replaces it; a bad folder leaves the column as it was */
  ck_assert_int_eq(abview_load_past(&ab, AB_MTP, PAST_DIR "/not-a-run", &err), -1);
  ck_assert_ptr_nonnull(strstr(err.msg, "not-a-run"));
  ck_assert(ab.past[AB_MTP].loaded);
}
END_TEST

START_TEST(keys_open_the_list_and_load) {
  key(UI_KEY_RIGHT);
  struct ui_cmd c = key('L');
  ck_assert_int_eq(c.kind, UI_CMD_PAST_RUNS);
  ck_assert_int_eq(c.column, AB_MTP); /* the selected column */
  /* the list: a screen of its own over the A/B view */
  static struct pastpicker p;
  pastpicker_open(&p, ab.results_dir, c.column);
  ck_assert_uint_eq(p.list.n, 2);
  char *f = ut_frame(&pastpicker_screen, &p, &abview_screen, &ab, 80, 24, true);
  assert_has(f, "Load a past run into the A/B view");
  assert_has(f, "Enter load  Tab column  ? help  Esc close");
  free(f);
  c = ut_key(&pastpicker_screen, &p, UI_KEY_ENTER, 80, 24, NULL);
  ck_assert_int_eq(c.kind, UI_CMD_LOAD_PAST);
  ck_assert_int_eq(c.column, AB_MTP);
  ck_assert_str_eq(c.path, pastpicker_selected(&p)->dir);
  ck_assert_int_eq(ut_press(&pastpicker_screen, &p, UI_KEY_ESCAPE), UI_CMD_CLOSE);
  ck_assert(!p.open);
  /* l: the log of the arm that ran */
  ck_assert_int_eq(key('l').kind, UI_CMD_OPEN_LOG);
  /* b and q: straight away when nothing runs, asked first while an arm runs */
  ck_assert_int_eq(key('b').kind, UI_CMD_HOME);
  ck_assert_int_eq(key('q').kind, UI_CMD_QUIT);
  ab.running = true;
  ck_assert_int_eq(key('b').kind, UI_CMD_NONE);
  f = render(80, 24, true);
  assert_has(f, "Stop the A/B run and go back to the recipes? y / n");
  free(f);
  ck_assert_int_eq(key('y').kind, UI_CMD_HOME);
  ck_assert_int_eq(key('q').kind, UI_CMD_NONE);
  ck_assert_int_eq(ab.confirm, RUNVIEW_CONFIRM_QUIT);
  ck_assert_int_eq(key('y').kind, UI_CMD_QUIT);
  /* a click on the footer's L hint presses L */
  ab.running = false;
  ck_assert_int_eq(ut_footer_key_at(&abview_screen, &ab, 1, 80, 24), 'L');
}
END_TEST

/* [ ] browse the finished points of live arms too; Esc is live again. */
START_TEST(live_points_are_browsed) {
  ck_assert_int_eq(ab.shown_conc, 0);
  key('[');
  ck_assert_int_eq(ab.shown_conc, 4);
  struct ab_row rows[16];
  abview_rows(&ab, rows, 16);
  ck_assert(rows[0].value[AB_OFF] == 1000 && rows[0].value[AB_MTP] == 1850);
  char *f = render(100, 32, true);
  assert_has(f, "conc 4 · point 1 done · 50/50 req in 5s");
  ut_assert_lacks(f, "short"); /* 50 requests in 5 s at conc 4: long enough */
  free(f);
  key(']');
  ck_assert_int_eq(ab.shown_conc, 8);
  f = render(100, 32, true); /* 50 requests at conc 8: fewer than 10 x 8, marked */
  assert_has(f, "conc 8 · point 2 done · short · 50/50"); /* the rest cut by the column */
  free(f);
  key(UI_KEY_ESCAPE);
  f = render(100, 32, true); /* both arms over: how many of their saved points are short */
  assert_has(f, "done · 2 points saved · 1 short · 100 r");
  free(f);
  ck_assert_int_eq(ab.shown_conc, 0);
  abview_rows(&ab, rows, 16);
  ck_assert(rows[0].value[AB_OFF] == 1800);
}
END_TEST

/* A point that did not run to its end is browsed but not on the curve. */
START_TEST(curve_has_only_points_measured_to_the_end) {
  struct snap_run s = ab.arm[AB_OFF].snap;
  struct snap_point_result cut = s.points.point[1];
  cut.conc = 16;
  cut.point_index = 1;
  cut.measured_to_end = false;
  snprintf(cut.end, sizeof cut.end, "stopped");
  snap_points_add(&s.points, &cut);
  runview_push(&ab.arm[AB_OFF], &s);
  double x[8], y[8];
  ck_assert_int_eq(abview_curve(&ab, AB_OFF, x, y, 8), 2);
  key(']');
  key(']');
  ck_assert_int_eq(ab.shown_conc, 16);
  ck_assert_str_eq(abview_live_point(&ab, AB_OFF, 16)->end, "stopped");
}
END_TEST

/* While the MTP arm measures a concurrency, the finished off arm shows its
 * own point at that concurrency: the ratios compare the same load. */
START_TEST(finished_arm_follows_the_measuring_one) {
  struct snap_run s;
  snap_run_init(&s);
  s.server.state = SNAP_SERVER_READY;
  s.progress.phase = SNAP_PHASE_MEASURING;
  s.progress.n_points = 2;
  s.concurrency.target = 4;
  fig_set_scalar(&s.figures.run, FIG_OUTPUT_TPUT, true, 1500);
  fig_set_scalar(&s.figures.run, FIG_TOTAL_TPUT, true, 3000);
  fig_set_scalar(&s.figures.run, FIG_REQ_TPUT, true, 1);
  runview_init(&ab.arm[AB_MTP], ab.recipe[AB_MTP]);
  runview_push(&ab.arm[AB_MTP], &s);
  struct ab_row rows[16];
  abview_rows(&ab, rows, 16);
  ck_assert(rows[0].value[AB_OFF] == 1000); /* the off arm's conc-4 point, not its last (8) */
  ck_assert(rows[0].value[AB_MTP] == 1500);
  s.concurrency.target = 8;
  runview_push(&ab.arm[AB_MTP], &s);
  abview_rows(&ab, rows, 16);
  ck_assert(rows[0].value[AB_OFF] == 1800);
}
END_TEST

/* The whole job's ETA: the running arm's rest, the other arm's points at the
 * typical length of the finished ones and its launch. */
START_TEST(job_eta_covers_both_arms) {
  double left;
  ck_assert(abview_job_remaining_s(&ab, &left) && left == 0); /* both done */
  runview_init(&ab.arm[AB_MTP], ab.recipe[AB_MTP]);          /* the MTP arm not started */
  ab.n_points[AB_MTP] = 2;
  ab.arm[AB_OFF].snap.server.ready_after_s = 3;
  ck_assert(abview_job_remaining_s(&ab, &left));
  ck_assert_double_eq_tol(left, 3 + 2 * 5, 1e-9);
  ab.running = true;
  char *f = render(100, 32, true);
  assert_has(f, "ETA 13s (both arms)");
  free(f);
}
END_TEST

/* The first arm's first point: nothing finished yet, the header has an ETA
 * all the same (that point projected, the other arm at its length). */
START_TEST(job_eta_during_the_first_arm) {
  runview_init(&ab.arm[AB_OFF], ab.recipe[AB_OFF]);
  runview_init(&ab.arm[AB_MTP], ab.recipe[AB_MTP]);
  ab.n_points[AB_OFF] = ab.n_points[AB_MTP] = 2;
  struct snap_run s;
  snap_run_init(&s);
  s.server.state = SNAP_SERVER_READY;
  s.server.ready_after_s = 4;
  s.progress.phase = SNAP_PHASE_MEASURING;
  s.progress.n_points = 2;
  s.progress.total = 20;
  s.progress.done = 8;
  s.progress.elapsed_s = 2;
  s.progress.eta_valid = true;
  s.progress.eta_s = 3;
  runview_push(&ab.arm[AB_OFF], &s);
  double left, off_left;
  ck_assert(snap_run_remaining_s(&s, &off_left));
  ck_assert(abview_job_remaining_s(&ab, &left));
  ck_assert_double_eq_tol(left, off_left + 4 + 2 * (2 + 3), 1e-9);
  ab.running = true;
  char *f = render(100, 32, true);
  assert_has(f, "(both arms)");
  free(f);
  s.progress.warmup = true; /* a warm-up has no ETA of the point: none is made up */
  s.progress.eta_valid = false;
  runview_push(&ab.arm[AB_OFF], &s);
  ck_assert(!abview_job_remaining_s(&ab, &left));
}
END_TEST

int main(void) {
  Suite *s = suite_create("ui_abview");
  TCase *tc = tcase_create("abview");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, rows_compare_the_last_point);
  tcase_add_test(tc, curve_points_per_gpu);
  tcase_add_test(tc, curve_marks_concurrency_and_per_what);
  tcase_add_test(tc, frames_at_80x24_and_200x50);
  tcase_add_test(tc, an_arm_not_loaded_says_so);
  tcase_add_test(tc, help_and_quit_prompt);
  tcase_add_test(tc, xy_chart_draws_a_line);
  tcase_add_test(tc, past_runs_fill_both_columns);
  tcase_add_test(tc, past_concurrency_steps);
  tcase_add_test(tc, past_ratios_only_like_with_like);
  tcase_add_test(tc, draft_pair_itl_is_not_compared);
  tcase_add_test(tc, live_arms_at_other_concurrencies_are_not_divided);
  tcase_add_test(tc, past_run_beside_a_live_arm);
  tcase_add_test(tc, keys_open_the_list_and_load);
  tcase_add_test(tc, live_points_are_browsed);
  tcase_add_test(tc, curve_has_only_points_measured_to_the_end);
  tcase_add_test(tc, job_eta_covers_both_arms);
  tcase_add_test(tc, job_eta_during_the_first_arm);
  tcase_add_test(tc, finished_arm_follows_the_measuring_one);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
