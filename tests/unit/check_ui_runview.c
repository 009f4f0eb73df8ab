/* ui run view: chart history from snapshots (sampling, sweep points,
 * concurrency marks, restarts) and frames drawn from fixed snapshots. */
#include "runview.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "help.h"
#include "ui_test.h"

/* A run of a simulated MTP recipe in the middle of its first point. */
static void fixture(struct snap_run *s) {
  snap_run_init(s);
  s->server.state = SNAP_SERVER_READY;
  s->server.pid = 4242;
  s->server.port = 30001;
  s->server.simulated = true;
  snprintf(s->server.engine, sizeof s->server.engine, "sim");
  snprintf(s->server.recipe_name, sizeof s->server.recipe_name, "demo-fp8-h200-sglang-mtp");
  s->server.uptime_s = 65;
  s->progress.phase = SNAP_PHASE_MEASURING;
  s->progress.n_points = 3;
  s->progress.done = 120;
  s->progress.total = 320;
  s->progress.in_flight = 16;
  s->progress.elapsed_s = 0;
  s->progress.eta_valid = true;
  s->progress.eta_s = 25;
  s->concurrency.target = 16;
  fig_set_scalar(&s->figures.window, FIG_OUTPUT_TPUT, true, 1234.5);
  fig_set_scalar(&s->figures.window, FIG_TOTAL_TPUT, true, 11000);
  fig_set_scalar(&s->figures.window, FIG_REQ_TPUT, true, 3.21);
  fig_set_dist(&s->figures.window, FIG_TTFT, 100, NAN, 12.34, 20, 55);
  fig_set_dist(&s->figures.run, FIG_TTFT, 120, NAN, 13, 21, 60);
  fig_set_dist(&s->figures.window, FIG_TPOT, 100, NAN, 7.5, 8, 9);
  s->spec.enabled_valid = true;
  s->spec.enabled = true;
  snprintf(s->spec.algorithm, sizeof s->spec.algorithm, "EAGLE");
  s->spec.accept_length_valid = true;
  s->spec.accept_length = 2.81;
  s->spec.accept_rate_valid = true;
  s->spec.accept_rate_frac = 0.603;
  s->spec.source = SNAP_SRC_METRICS;
  s->load.kv_usage_valid = true;
  s->load.kv_usage_frac = 0.625;
  s->load.running_valid = true;
  s->load.num_running = 16;
  s->load.max_total_num_tokens_valid = true;
  s->load.max_total_num_tokens = 512000;
  s->gpus.n_gpus = 1;
  s->gpus.gpu[0] = (struct snap_gpu){
      .index = 0,
      .valid_mask = SNAP_GPU_MEM_TOTAL | SNAP_GPU_MEM_SERVER | SNAP_GPU_MEM_OTHER | SNAP_GPU_POWER,
      .mem_total_bytes = 80ull << 30,
      .mem_server_bytes = 60ull << 30,
      .mem_other_bytes = 4ull << 30,
      .power_mw = 350000,
  };
  snprintf(s->gpus.backend, sizeof s->gpus.backend, "sim");
  snap_log_tail_push(&s->log, "Decode batch. #running-req: 16, accept len: 2.81");
  snap_log_tail_push(&s->log, "The server is fired up and ready to roll!");
}

/* Pushes snapshots every 100 ms of point time from from_s to to_s. */
static void play(struct runview *rv, struct snap_run *s, double from_s, double to_s) {
  int steps = (int)lround((to_s - from_s) * 10);
  for (int i = 0; i <= steps; i++) {
    double t = from_s + i * 0.1;
    s->progress.elapsed_s = t;
    s->figures.window.f[FIG_OUTPUT_TPUT].v[FIG_VALUE] = 100 * t;
    runview_push(rv, s);
  }
}

START_TEST(samples_once_per_second_while_measuring) {
  static struct runview rv;
  struct snap_run s;
  runview_init(&rv, NULL);
  fixture(&s);
  s.progress.phase = SNAP_PHASE_LAUNCHING;
  for (int i = 0; i < 30; i++)  /* point time starts at the first dispatch */
    runview_push(&rv, &s);
  ck_assert_int_eq(rv.n_samples, 0);  /* nothing to chart before the load starts */
  s.progress.phase = SNAP_PHASE_MEASURING;
  play(&rv, &s, 0, 10);
  ck_assert_int_eq(rv.n_samples, 11);  /* t = 0, 1, ..., 10 s */
  double v[20];
  ck_assert_int_eq(runview_series_copy(&rv, RUNVIEW_OUTPUT_TOK_S, v, 20), 11);
  for (int i = 1; i < 11; i++)
    ck_assert(v[i] > v[i - 1]);
  ck_assert(fabs(v[10] - 1000) < 15);
  /* unknown figures become gaps, not zeros */
  s.spec.accept_length_valid = false;
  play(&rv, &s, 11, 11);
  ck_assert_int_eq(runview_series_copy(&rv, RUNVIEW_ACCEPT_LENGTH, v, 2), 2);
  ck_assert(v[0] == 2.81);
  ck_assert(isnan(v[1]));
}
END_TEST

START_TEST(marks_for_points_concurrency_and_restarts) {
  static struct runview rv;
  struct snap_run s;
  runview_init(&rv, NULL);
  fixture(&s);
  play(&rv, &s, 0, 4);
  ck_assert_int_eq(rv.n_marks, 0);
  /* the user pressed + at 4.5 s */
  snap_concurrency_mark(&s.concurrency, 4.5, 32);
  play(&rv, &s, 4.5, 6);
  ck_assert_int_eq(rv.n_marks, 1);
  ck_assert_int_eq(rv.marks[0], 5);  /* the first sample after the change */
  play(&rv, &s, 6.1, 7);            /* the same mark in later snapshots is not a new one */
  ck_assert_int_eq(rv.n_marks, 1);
  /* the next sweep point: time goes on from 7 s, a mark at its start */
  s.progress.point_index = 1;
  snap_run_init(&s);
  fixture(&s);
  s.progress.point_index = 1;
  play(&rv, &s, 0, 2);
  ck_assert_int_eq(rv.n_marks, 2);
  ck_assert_int_eq(rv.n_samples, 10);  /* 0..7 s, then 8 and 9 s (point 2 at 1 and 2 s) */
  /* a restart with new knobs measures the point again from 0: marked too */
  play(&rv, &s, 0, 1);
  ck_assert_int_eq(rv.n_marks, 3);
  ck_assert_int_eq(rv.n_samples, 11);
}
END_TEST

#define assert_has ut_assert_has

static char *render(struct runview *rv, int cols, int rows, bool unicode) {
  return ut_frame(&runview_screen, rv, NULL, NULL, cols, rows, unicode);
}

/* A key to the run view: the command it asked for. */
static struct ui_cmd key(struct runview *rv, int k) {
  return ut_key(&runview_screen, rv, k, 80, 24, NULL);
}

static void type(struct runview *rv, const char *text) {
  ut_type(&runview_screen, rv, text, 80, 24);
}

START_TEST(frame_80x24_shows_the_run) {
  static struct runview rv;
  struct snap_run s;
  runview_init(&rv, NULL);
  fixture(&s);
  play(&rv, &s, 0, 30);
  char *f = render(&rv, 80, 24, true);
  assert_has(f, " demo-fp8-h200-sglang-mtp · sim SIMULATED");
  assert_has(f, "SIMULATED");
  assert_has(f, "server ready up 1m05s");
  assert_has(f, "measuring point 1/3 conc 16");
  assert_has(f, "120/320 ok 0 failed 16 in flight 30s ETA 25s");
  assert_has(f, "ETA 25s");
  assert_has(f, "output 3.00k tok/s");  /* 100 tok/s per second of the fixture, at 30 s */
  assert_has(f, "TTFT   12.3ms  20.0ms  55.0ms");
  assert_has(f, "ITL         -       -       -"); /* never reported: says so */
  assert_has(f, "accept length 2.81");
  assert_has(f, "rate 60.3%");
  assert_has(f, "62.5%");
  assert_has(f, "running 16 queued -");
  assert_has(f, "KV 512k tok");
  assert_has(f, "64.0GiB/80.0GiB 350W");
  assert_has(f, "ready to roll");
  assert_has(f, "+/- conc  m knob  c cap  l log  b back  ? help  q quit");
  /* the chart has drawn braille dots */
  ck_assert_msg(strstr(f, "⣀") || strstr(f, "⡀") || strstr(f, "⢀") || strstr(f, "⠁"),
                "no braille in the chart");
  free(f);
}
END_TEST

/* The client's own delay is in the latencies: the view says so, with the reason. */
START_TEST(client_bound_is_said) {
  static struct runview rv;
  struct snap_run s;
  runview_init(&rv, NULL);
  fixture(&s);
  snprintf(s.figures.client_bound, sizeof s.figures.client_bound,
           "client-bound: loop 2 of 2 busy 97%% (limit 90%%)");
  play(&rv, &s, 0, 5);
  char *f = render(&rv, 80, 24, true);
  assert_has(f, "CLIENT-BOUND");
  free(f);
  f = render(&rv, 200, 50, true);
  assert_has(f, "client-bound: loop 2 of 2 busy 97% (limit 90%)");
  free(f);
  s.figures.client_bound[0] = '\0';
  runview_push(&rv, &s);
  f = render(&rv, 200, 50, true);
  ck_assert_msg(!strstr(f, "client-bound") && !strstr(f, "CLIENT-BOUND"), "%s", f);
  free(f);
}
END_TEST

START_TEST(frame_200x50_and_unknowns) {
  static struct runview rv;
  struct snap_run s;
  runview_init(&rv, NULL);
  fixture(&s);
  s.spec.enabled = false;
  s.spec.accept_length_valid = false;
  s.gpus.n_gpus = 0;
  snprintf(s.gpus.unavailable_reason, sizeof s.gpus.unavailable_reason, "nvml: not found");
  s.load.kv_usage_valid = false;
  s.figures.window.f[FIG_OUTPUT_TPUT].valid = false;
  s.figures.window.f[FIG_TOTAL_TPUT].valid = false;
  s.figures.window.f[FIG_REQ_TPUT].valid = false;
  play(&rv, &s, 0, 5);
  s.load.max_total_num_tokens_was_valid = true;
  s.load.max_total_num_tokens_was = 400000;
  runview_push(&rv, &s);
  char *f = render(&rv, 200, 50, true);
  assert_has(f, "pid 4242 :30001");
  assert_has(f, "run p50");             /* whole-run columns show when there is room */
  assert_has(f, "13.0ms");
  assert_has(f, "off: the server reports no speculative decoding");
  assert_has(f, "no GPU data: nvml: not found");
  assert_has(f, "use unknown");
  assert_has(f, "output - tok/s");
  assert_has(f, "KV 512k tok (was 400k)");
  free(f);
  /* ASCII: no byte above 0x7f */
  f = render(&rv, 80, 24, false);
  for (const unsigned char *c = (const unsigned char *)f; *c; c++)
    ck_assert_msg(*c < 0x80, "not ASCII");
  free(f);
}
END_TEST

START_TEST(finished_run_says_how) {
  static struct runview rv;
  struct snap_run s;
  runview_init(&rv, NULL);
  fixture(&s);
  play(&rv, &s, 0, 2);
  ck_assert(runview_server_up(&rv));
  ck_assert(!runview_finished(&rv));
  s.progress.phase = SNAP_PHASE_FAILED;
  s.server.state = SNAP_SERVER_EXITED;
  s.server.exited_valid = true;
  s.server.exit_code = 1;
  s.server.crashed = true;
  snprintf(s.progress.message, sizeof s.progress.message, "server exited with status 1");
  runview_push(&rv, &s);
  ck_assert(!runview_server_up(&rv));
  ck_assert(runview_finished(&rv));
  char *f = render(&rv, 80, 24, true);
  assert_has(f, "server exited (status 1)");
  assert_has(f, "server exited with status 1");
  free(f);
  /* the same end after servetop stopped it: "stopped", not "exited" */
  s.progress.phase = SNAP_PHASE_DONE;
  s.server.crashed = false;
  s.server.exit_code = 0;
  runview_push(&rv, &s);
  f = render(&rv, 80, 24, true);
  assert_has(f, "server stopped (status 0)");
  free(f);
}
END_TEST

START_TEST(keys_ask_for_run_commands) {
  static struct runview rv;
  struct snap_run s;
  runview_init(&rv, NULL);
  fixture(&s);
  runview_push(&rv, &s);
  struct ui_cmd c = key(&rv, '+');
  ck_assert_int_eq(c.kind, UI_CMD_SET_CONCURRENCY);
  ck_assert_int_eq(c.conc, 32);
  c = key(&rv, '-');
  ck_assert_int_eq(c.kind, UI_CMD_SET_CONCURRENCY);
  ck_assert_int_eq(c.conc, 8);
  ck_assert_int_eq(key(&rv, 'l').kind, UI_CMD_OPEN_LOG);
  /* m: type a value, Enter asks for a restart and keeps the old KV capacity */
  ck_assert_int_eq(key(&rv, 'm').kind, UI_CMD_NONE);
  ck_assert(rv.editing_knob);
  type(&rv, "0.78");
  ck_assert_str_eq(rv.knob_value, "0.78");
  char *f = render(&rv, 80, 24, true);
  assert_has(f, "KV cache (kv-cache) or KEY=VALUE: 0.78_");
  free(f);
  c = key(&rv, UI_KEY_ENTER);
  ck_assert_int_eq(c.kind, UI_CMD_RESTART_WITH);
  ck_assert_str_eq(c.knob, "kv-cache"); /* the engine's flag: the run maps it */
  ck_assert_str_eq(c.value, "0.78");
  /* an empty prompt asks for nothing */
  key(&rv, 'm');
  ck_assert_int_eq(key(&rv, UI_KEY_ENTER).kind, UI_CMD_NONE);
  /* KEY=VALUE sets another server flag */
  key(&rv, 'm');
  type(&rv, "max-running-requests=64");
  c = key(&rv, UI_KEY_ENTER);
  ck_assert_int_eq(c.kind, UI_CMD_RESTART_WITH);
  ck_assert_str_eq(c.knob, "max-running-requests");
  ck_assert_str_eq(c.value, "64");
  key(&rv, 'm');
  type(&rv, "=64");
  ck_assert_int_eq(key(&rv, UI_KEY_ENTER).kind, UI_CMD_NONE);
  ck_assert_msg(strstr(rv.status, "no flag name"), "%s", rv.status);
  key(&rv, 'm');
  type(&rv, "max running=64");
  ck_assert_str_eq(rv.knob_value, "maxrunning=64"); /* blanks are not typed */
  key(&rv, UI_KEY_ESCAPE);
  /* Esc cancels an edit */
  key(&rv, 'm');
  ck_assert_int_eq(key(&rv, UI_KEY_ESCAPE).kind, UI_CMD_NONE);
  ck_assert(!rv.editing_knob);
  /* q while the server is up asks first; n keeps running, y stops */
  ck_assert_int_eq(key(&rv, 'q').kind, UI_CMD_NONE);
  f = render(&rv, 80, 24, true);
  assert_has(f, "The server is up: stop it and quit? y / n");
  free(f);
  ck_assert_int_eq(key(&rv, 'n').kind, UI_CMD_NONE);
  key(&rv, 'q');
  ck_assert_int_eq(key(&rv, 'y').kind, UI_CMD_QUIT);
  /* b while it runs: asks to stop it and go back; y does */
  ck_assert_int_eq(key(&rv, 'b').kind, UI_CMD_NONE);
  f = render(&rv, 80, 24, true);
  assert_has(f, "Stop the run and go back to the recipes? y / n");
  free(f);
  ck_assert_int_eq(key(&rv, 'x').kind, UI_CMD_NONE);
  ck_assert_int_eq(rv.confirm, RUNVIEW_CONFIRM_NONE);
  key(&rv, 'b');
  ck_assert_int_eq(key(&rv, 'y').kind, UI_CMD_HOME);
  /* help lists every key of the table */
  struct helpview h = {.of = &runview_screen};
  f = ut_frame(&help_screen, &h, &runview_screen, &rv, 80, 24, true);
  for (size_t i = 0; i < runview_screen.n_keys; i++)
    assert_has(f, runview_screen.keys[i].what);
  free(f);
  /* once the run is over: no concurrency changes, b goes back, q quits at once */
  s.progress.phase = SNAP_PHASE_DONE;
  s.server.state = SNAP_SERVER_EXITED;
  runview_push(&rv, &s);
  ck_assert_int_eq(key(&rv, '+').kind, UI_CMD_NONE);
  ck_assert_int_eq(key(&rv, 'm').kind, UI_CMD_NONE);
  ck_assert(!rv.editing_knob);
  ck_assert_int_eq(key(&rv, 'b').kind, UI_CMD_HOME);
  ck_assert_int_eq(key(&rv, 'q').kind, UI_CMD_QUIT);
}
END_TEST

/* The footer always lists the keys, beside the last change or how the run ended. */
START_TEST(footer_keys_beside_the_status) {
  static struct runview rv;
  struct snap_run s;
  runview_init(&rv, NULL);
  fixture(&s);
  runview_push(&rv, &s);
  runview_set_status(&rv, THEME_INACTIVE, "engine sim: no GPU device (/dev/nvidia0, /dev/kfd)");
  char *f = render(&rv, 80, 24, true);
  assert_has(f, "? help");
  assert_has(f, "q quit");
  assert_has(f, "engine sim: no GPU");
  free(f);
  f = render(&rv, 120, 36, true);
  assert_has(f, "+/- conc  m knob  c cap  l log  b back  ? help  q quit  engine sim: no GPU device");
  free(f);
  s.progress.phase = SNAP_PHASE_DONE;
  snprintf(s.progress.message, sizeof s.progress.message, "1 point(s) measured");
  runview_push(&rv, &s);
  f = render(&rv, 100, 32, true);
  assert_has(f, "b back  ? help  q quit  1 point(s) measured");
  free(f);
}
END_TEST

/* The wheel over the log pane scrolls it back; new lines keep the view on
 * the same lines; End or a click on the log follows the newest again. */
START_TEST(log_scrolls_with_the_wheel) {
  static struct runview rv;
  struct snap_run s;
  runview_init(&rv, NULL);
  fixture(&s);
  for (int i = 0; i < 30; i++) {
    char line[64];
    snprintf(line, sizeof line, "log line %02d", i);
    snap_log_tail_push(&s.log, line);
  }
  runview_push(&rv, &s);
  struct ui_layout l;
  ui_layout_compute(100, 32, UI_VIEW_RUN, &l);
  struct ui_rect log = l.slot[UI_SLOT_LOG];
  ck_assert(ui_rect_visible(log));
  char *f = render(&rv, 100, 32, true);
  assert_has(f, "log line 29");
  free(f);
  bool acted;
  ut_mouse(&runview_screen, &rv, log.x + 2, log.y + 1, -3, 100, 32, &acted);
  ck_assert(acted);
  ck_assert_int_eq(rv.log_back, 3);
  f = render(&rv, 100, 32, true);
  assert_has(f, "Server log · 3 lines back (End: newest)");
  assert_has(f, "log line 26");
  ck_assert_ptr_null(strstr(f, "log line 29"));
  free(f);
  /* outside the log the wheel does nothing */
  struct ui_rect lat = l.slot[UI_SLOT_LATENCY];
  ut_mouse(&runview_screen, &rv, lat.x + 1, lat.y + 1, -3, 100, 32, &acted);
  ck_assert(!acted);
  /* two new lines: still the same last line on screen */
  snap_log_tail_push(&s.log, "log line 30");
  snap_log_tail_push(&s.log, "log line 31");
  runview_push(&rv, &s);
  ck_assert_int_eq(rv.log_back, 5);
  /* scrolled past the oldest: clamped when drawn */
  ut_mouse(&runview_screen, &rv, log.x + 2, log.y + 1, -300, 100, 32, NULL);
  f = render(&rv, 100, 32, true);
  assert_has(f, "Decode batch"); /* the oldest line kept */
  free(f);
  /* a click on the log follows again; on a log that follows, opens the full log */
  ck_assert_int_eq(ut_mouse(&runview_screen, &rv, log.x + 2, log.y + 1, 0, 100, 32, &acted).kind,
                   UI_CMD_NONE);
  ck_assert(acted);
  ck_assert_int_eq(rv.log_back, 0);
  ck_assert_int_eq(ut_mouse(&runview_screen, &rv, log.x + 2, log.y + 1, 0, 100, 32, NULL).kind,
                   UI_CMD_OPEN_LOG);
  key(&rv, UI_KEY_PAGE_UP);
  ck_assert_int_eq(rv.log_back, 5);
  key(&rv, UI_KEY_END);
  ck_assert_int_eq(rv.log_back, 0);
}
END_TEST

/* A click on a footer key presses it: "+" of "+/-", "?" of "? help". */
START_TEST(footer_clicks_press_keys) {
  static struct runview rv;
  struct snap_run s;
  runview_init(&rv, NULL);
  fixture(&s);
  runview_push(&rv, &s);
  ck_assert_int_eq(ut_footer_key_at(&runview_screen, &rv, 0, 100, 32), '+');
  ck_assert_int_eq(ut_footer_key_at(&runview_screen, &rv, 2, 100, 32), '-');
  ck_assert_int_eq(ut_footer_key_at(&runview_screen, &rv, 1, 100, 32), 0); /* the '/' */
  ck_assert_int_eq(ut_footer_key_at(&runview_screen, &rv, 4, 100, 32), '+'); /* its label */
  char *frame = render(&rv, 100, 32, true);
  const char *help = strstr(frame, "? help");
  ck_assert_ptr_nonnull(help);
  const char *line = help;
  while (line > frame && line[-1] != '\n')
    line--;
  int col = ui_text_cells(line) - ui_text_cells(help);
  free(frame);
  ck_assert_int_eq(ut_footer_key_at(&runview_screen, &rv, col + 3, 100, 32), '?');
  /* an inactive hint presses nothing: no concurrency change between points */
  s.progress.phase = SNAP_PHASE_BETWEEN;
  runview_push(&rv, &s);
  ck_assert_int_eq(ut_footer_key_at(&runview_screen, &rv, 0, 100, 32), 0);
}
END_TEST

/* Above the batch cap: the chart, the server panel and the footer say the
 * requests queue in the server, and c asks for a restart with the cap raised. */
START_TEST(concurrency_above_the_batch_cap) {
  static struct runview rv;
  struct snap_run s;
  runview_init(&rv, NULL);
  fixture(&s);
  s.load.batch_cap_valid = true;
  s.load.batch_cap = 16;
  play(&rv, &s, 0, 5);
  char *f = render(&rv, 80, 24, true);
  assert_has(f, "cap 16");
  ck_assert_ptr_null(strstr(f, "queueing"));
  free(f);
  ck_assert_int_eq(key(&rv, 'c').kind, UI_CMD_NONE); /* nothing to raise */
  ck_assert_ptr_nonnull(strstr(rv.status, "within the batch cap"));
  rv.status[0] = '\0';
  snap_concurrency_mark(&s.concurrency, 5.5, 32);
  s.load.queued_valid = true;
  s.load.num_queued = 16;
  play(&rv, &s, 5.5, 7);
  ck_assert(rv.n_marks == 1);
  int cap;
  ck_assert(runview_over_cap(&rv, &cap) && cap == 16);
  f = render(&rv, 80, 24, true);
  assert_has(f, "queue 16 > cap 16");
  assert_has(f, "running 16 queued 16 cap 16!");
  assert_has(f, "conc 32 > cap 16: 16 queue in the server; c raises it");
  free(f);
  struct ui_cmd c = key(&rv, 'c');
  ck_assert_int_eq(c.kind, UI_CMD_RESTART_WITH);
  ck_assert_str_eq(c.knob, "max-batch");
  ck_assert_str_eq(c.value, "32");
}
END_TEST

/* A restart's capacity before and after, whole at the narrowest size; how a
 * restart went shows once in the footer; stale GPU figures say so. */
START_TEST(restart_capacity_and_news) {
  static struct runview rv;
  struct snap_run s;
  runview_init(&rv, NULL);
  fixture(&s);
  s.load.max_total_num_tokens = 4096;
  s.load.max_total_num_tokens_was_valid = true;
  s.load.max_total_num_tokens_was = 2048;
  s.load.kv_per_slot_valid = true;
  s.load.kv_per_slot_tokens = 1024;
  snprintf(s.server.restart_note, sizeof s.server.restart_note,
           "restart with np=0x failed (server exited with status 1): back to the previous "
           "configuration");
  s.server.restart_failed = true;
  s.gpus.stale = true;
  play(&rv, &s, 0, 2);
  ck_assert_int_eq(rv.status_role, THEME_ERROR);
  char *f = render(&rv, 80, 24, true);
  assert_has(f, "KV 4.10k tok (was 2.05k)");
  assert_has(f, "restart with np=0x failed");
  assert_has(f, "(stale)");
  free(f);
  /* the same note again is not news */
  rv.status[0] = '\0';
  runview_push(&rv, &s);
  ck_assert_str_eq(rv.status, "");
}
END_TEST

/* The latency panel at 100 columns: the whole point's percentiles beside the
 * window's (p50 and p99 of each), not only at 200. */
START_TEST(latency_whole_point_at_100_columns) {
  static struct runview rv;
  struct snap_run s;
  runview_init(&rv, NULL);
  fixture(&s);
  play(&rv, &s, 0, 1);
  char *f = render(&rv, 100, 32, true);
  assert_has(f, "p50    p99 run p50 run p99");
  assert_has(f, "TTFT 12.3ms 55.0ms  13.0ms  60.0ms");
  free(f);
  f = render(&rv, 200, 50, true);
  assert_has(f, "run p90");
  free(f);
}
END_TEST

/* A run of a few seconds is drawn over the chart's whole width (not in its
 * last columns), with a time axis: how far back the left edge is, and now. */
START_TEST(short_run_uses_the_width) {
  static struct runview rv;
  struct snap_run s;
  runview_init(&rv, NULL);
  fixture(&s);
  play(&rv, &s, 0, 5);
  char *f = render(&rv, 80, 24, false);
  assert_has(f, "-5s");
  assert_has(f, "now|");
  /* the throughput chart's first row (the total, at the top of the scale):
   * drawn from its first column, after the border and the scale */
  const char *line = f;
  for (int row = 0; line && row < 4; row++) {
    line = strchr(line, '\n');
    line = line ? line + 1 : NULL;
  }
  bool drawn = line && strncmp(line, "|11.0k", 6) == 0 && line[7] != ' ';
  ck_assert_msg(drawn, "the first column of the chart is blank:\n%s", f);
  free(f);
  /* the marks explain themselves where there is room */
  s.progress.point_index = 1;
  play(&rv, &s, 0, 2);
  f = render(&rv, 160, 40, true);
  assert_has(f, "new point, conc or restart");
  free(f);
}
END_TEST

/* m 1024 on llama.cpp: the KV size it made is not the one asked, and it says so. */
START_TEST(kv_size_the_engine_rounds) {
  static struct runview rv;
  struct snap_run s;
  runview_init(&rv, NULL);
  fixture(&s);
  snprintf(s.server.engine, sizeof s.server.engine, "llamacpp");
  s.server.simulated = false;
  s.load.max_total_num_tokens = 2048;
  s.load.kv_asked_tokens = 1024;
  play(&rv, &s, 0, 1);
  char *f = render(&rv, 120, 40, true);
  assert_has(f, "KV 2.05k tok (asked 1.02k; llama.cpp rounds)");
  free(f);
  s.load.kv_asked_tokens = 2048; /* made as asked: nothing to say */
  runview_push(&rv, &s);
  f = render(&rv, 120, 40, true);
  ck_assert_ptr_null(strstr(f, "asked"));
  free(f);
}
END_TEST

/* A server servetop did not launch: no restart keys, the footer says why. */
START_TEST(attached_server_has_no_restart_keys) {
  static struct runview rv;
  struct snap_run s;
  runview_init(&rv, NULL);
  fixture(&s);
  s.server.attached = true;
  s.server.pid = 0;
  s.log.n_lines = 0;
  play(&rv, &s, 0, 2);
  char *f = render(&rv, 100, 32, true);
  assert_has(f, "server ready · attached :30001");
  assert_has(f, "attached: not launched here, no restarts");
  assert_has(f, "servetop did not launch this server, so it has no log");
  free(f);
  ck_assert_int_eq(key(&rv, 'm').kind, UI_CMD_NONE);
  ck_assert(!rv.editing_knob);
  ck_assert_int_eq(key(&rv, 'c').kind, UI_CMD_NONE);
  ck_assert_ptr_nonnull(strstr(rv.status, "cannot restart it"));
  ck_assert_int_eq(key(&rv, '+').kind, UI_CMD_SET_CONCURRENCY); /* the load is still its own */
}
END_TEST

/* llama.cpp's per-request acceptance: the pooled rate and how the requests
 * spread over 0..100%, on one line at 80x24. */
START_TEST(per_request_acceptance_distribution) {
  static struct runview rv;
  struct snap_run s;
  runview_init(&rv, NULL);
  fixture(&s);
  struct snap_request_accept *pr = &s.spec.per_request;
  pr->valid = true;
  pr->requests = 40;
  pr->draft_tokens = 1000;
  pr->accepted_tokens = 710;
  pr->rate_frac = 0.71;
  pr->rate_bins[5] = 4;
  pr->rate_bins[7] = 32;
  pr->rate_bins[9] = 4;
  play(&rv, &s, 0, 2);
  char *f = render(&rv, 80, 24, true);
  assert_has(f, "per request 71.0%  0·····▁·█·▁1  40 req");
  free(f);
  f = render(&rv, 80, 24, false);
  assert_has(f, "per request 71.0%  0     . @ .1  40 req");
  free(f);
}
END_TEST

int main(void) {
  Suite *s = suite_create("ui_runview");
  TCase *tc = tcase_create("runview");
  tcase_add_test(tc, samples_once_per_second_while_measuring);
  tcase_add_test(tc, marks_for_points_concurrency_and_restarts);
  tcase_add_test(tc, frame_80x24_shows_the_run);
  tcase_add_test(tc, client_bound_is_said);
  tcase_add_test(tc, frame_200x50_and_unknowns);
  tcase_add_test(tc, finished_run_says_how);
  tcase_add_test(tc, keys_ask_for_run_commands);
  tcase_add_test(tc, log_scrolls_with_the_wheel);
  tcase_add_test(tc, footer_clicks_press_keys);
  tcase_add_test(tc, footer_keys_beside_the_status);
  tcase_add_test(tc, concurrency_above_the_batch_cap);
  tcase_add_test(tc, restart_capacity_and_news);
  tcase_add_test(tc, attached_server_has_no_restart_keys);
  tcase_add_test(tc, per_request_acceptance_distribution);
  tcase_add_test(tc, kv_size_the_engine_rounds);
  tcase_add_test(tc, latency_whole_point_at_100_columns);
  tcase_add_test(tc, short_run_uses_the_width);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
