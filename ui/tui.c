/* The dashboard's ncurses side: terminal setup, the theme's colour pairs, key
 * and mouse translation, and copying the cell grid to the screen. Everything
 * that decides what is drawn lives in the pure files (browser.c, layout.c,
 * widgets); this file is the only one that calls ncurses. */
#include "tui.h"

#include <curses.h>
#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abview.h"
#include "browser.h"
#include "run/run.h"
#include "runview.h"
#include "layout.h"
#include "theme.h"
#include "widgets.h"
#include "ui_util.h"

static volatile sig_atomic_t quit_requested;

static void on_quit_signal(int sig) {
  (void)sig;
  quit_requested = 1;
}

static void restore_terminal(void) {
  if (!isendwin())
    endwin();
}

/* ---------------------------------------------------------------- theme to curses */

struct palette {
  attr_t attr[THEME_ROLE_COUNT];
};

static attr_t attrs_to_curses(unsigned attrs) {
  attr_t a = A_NORMAL;
  if (attrs & THEME_ATTR_BOLD)
    a |= A_BOLD;
  if (attrs & THEME_ATTR_REVERSE)
    a |= A_REVERSE;
  if (attrs & THEME_ATTR_UNDERLINE)
    a |= A_UNDERLINE;
  if (attrs & THEME_ATTR_DIM)
    a |= A_DIM;
  return a;
}

static void palette_init(struct palette *p, const struct theme *t, bool want_color) {
  bool color = want_color && has_colors();
  if (color) {
    start_color();
    use_default_colors();
  }
  struct theme_resolved r;
  theme_resolve(t, color ? COLORS : 0, color, &r);
  for (int i = 0; i < THEME_ROLE_COUNT; i++) {
    p->attr[i] = attrs_to_curses(r.attrs[i]);
    if (r.use_color && i + 1 < COLOR_PAIRS) {
      init_pair((short)(i + 1), (short)r.fg[i], (short)r.bg[i]);
      p->attr[i] |= COLOR_PAIR(i + 1);
    }
  }
}

/* Copies the grid to stdscr, one addstr per run of cells with the same role. */
static void grid_blit(const struct ui_grid *g, const struct palette *p) {
  struct sbuf run = {0};
  for (int y = 0; y < g->rows; y++) {
    int x = 0;
    while (x < g->cols) {
      int start = x;
      uint8_t role = ui_grid_at(g, x, y)->role;
      sbuf_reset(&run);
      while (x < g->cols && ui_grid_at(g, x, y)->role == role) {
        sbuf_puts(&run, ui_grid_at(g, x, y)->glyph);
        x++;
      }
      attrset(p->attr[role < THEME_ROLE_COUNT ? role : THEME_MAIN]);
      mvaddstr(y, start, run.data);
    }
  }
  attrset(A_NORMAL);
  sbuf_free(&run);
}

/* ---------------------------------------------------------------- input */

static int translate_key(int ch) {
  switch (ch) {
  case KEY_UP: return UI_KEY_UP;
  case KEY_DOWN: return UI_KEY_DOWN;
  case KEY_LEFT: return UI_KEY_LEFT;
  case KEY_RIGHT: return UI_KEY_RIGHT;
  case KEY_PPAGE: return UI_KEY_PAGE_UP;
  case KEY_NPAGE: return UI_KEY_PAGE_DOWN;
  case KEY_HOME: return UI_KEY_HOME;
  case KEY_END: return UI_KEY_END;
  case KEY_ENTER:
  case '\n':
  case '\r': return UI_KEY_ENTER;
  case 27: return UI_KEY_ESCAPE;
  case KEY_BACKSPACE:
  case 127:
  case 8: return UI_KEY_BACKSPACE;
  case '\t': return UI_KEY_TAB;
  default: return ch;
  }
}

/* ---------------------------------------------------------------- setup */

static bool locale_is_utf8(void) {
  const char *cs = nl_langinfo(CODESET);
  return cs && (strcmp(cs, "UTF-8") == 0 || strcmp(cs, "utf8") == 0);
}

/* --theme NAME|PATH (default: "default"; a missing default theme file falls
 * back to the same colours built in). */
static int load_theme(const char *name, struct theme *t, struct st_err *err) {
  char *exe_dir = path_self_dir_alloc();
  const char *want = name ? name : "default";
  char *path = theme_find_path_alloc(want, getenv("SERVETOP_THEMES"), exe_dir, err);
  free(exe_dir);
  if (!path) {
    theme_init_default(t);
    return name ? -1 : 0;
  }
  int rc = theme_load_file(t, path, err);
  free(path);
  return rc;
}

static struct recipe_set *load_recipes(const struct tui_options *o, char *note, size_t note_n,
                                       struct st_err *err) {
  struct recipe_set *set = recipe_set_load_source(o->configs_dir, o->inferencex_dir, err);
  if (!set && !o->configs_dir && !o->inferencex_dir) {
    /* No bundled recipes: an empty browser that says why, not no dashboard. */
    snprintf(note, note_n, "no bundled recipes: %.400s", err->msg);
    set = recipe_set_new();
  }
  return set;
}

/* ---------------------------------------------------------------- the dashboard */

struct dashboard {
  struct recipe_set *set;
  struct browser browser;
  struct runview rv;
  struct run *run;        /* the run on screen, or NULL */
  uint64_t run_seq;
  struct snap_run incoming;  /* copied out of a run, then pushed into a view */
  /* A/B: the arms run one after the other (one GPU set), off first */
  struct abview ab;
  bool ab_initialised;    /* ab holds an A/B view (abview_fini owed) */
  struct run *ab_run;     /* the arm running now, or NULL */
  int ab_arm;             /* which arm ab_run is */
  uint64_t ab_seq;
  enum ui_view view;
  const struct ui_glyphs *gl;
  struct palette palette;
  struct ui_grid grid;
  struct ui_layout layout;
  const char *results_dir;  /* --results, or NULL (the run's default) */
};

/* Starts a recipe with the engine `servetop run` would pick; why gets
 * "engine sim: <reason>" for the footer. */
static struct run *start_recipe(const struct dashboard *d, const struct recipe *r, const char *label,
                                bool sweep, char *why, size_t why_n, struct st_err *err) {
  char reason[200] = "";
  const struct eng_ops *engine = run_pick_engine(r, reason, sizeof reason);
  if (!engine) {
    err_setf(err, "%.400s", reason);
    return NULL;
  }
  snprintf(why, why_n, "engine %s%s%s", engine->name, reason[0] ? ": " : "", reason);
  struct run_config cfg;
  run_config_init(&cfg);
  cfg.recipe = r;
  cfg.engine = engine;
  cfg.label = label;
  cfg.sweep = sweep;
  cfg.results_dir = d->results_dir;
  return run_start(&cfg, err);
}

/* Enter in the browser: start the selected recipe with the engine `servetop
 * run` would pick, and show the run view. */
static void start_run(struct dashboard *d, const struct recipe *r) {
  char why[256] = "";
  struct st_err err = {{0}};
  struct run *run = start_recipe(d, r, NULL, false, why, sizeof why, &err);
  if (!run) {
    snprintf(d->browser.message, sizeof d->browser.message, "cannot run %s: %.200s", r->name, err.msg);
    d->browser.message_role = THEME_ERROR;
    return;
  }
  d->run = run;
  d->run_seq = 0;
  runview_init(&d->rv);
  runview_set_status(&d->rv, THEME_INACTIVE, "%.250s", why);
  d->view = UI_VIEW_RUN;
}

/* Starts A/B arm `arm` (off = 0, MTP = 1) over its recipe's sweep. */
static void start_ab_arm(struct dashboard *d, int arm) {
  const struct recipe *r = d->ab.recipe[arm];
  char why[256] = "";
  struct st_err err = {{0}};
  d->ab_run = start_recipe(d, r, arm == AB_MTP ? "mtp" : "off", true, why, sizeof why, &err);
  d->ab_arm = arm;
  d->ab_seq = 0;
  if (!d->ab_run) {
    snprintf(d->ab.status, sizeof d->ab.status, "cannot run %s: %.200s", r->name, err.msg);
    d->ab.status_role = THEME_ERROR;
    return;
  }
  snprintf(d->ab.status, sizeof d->ab.status, "running the %s arm, %.200s", arm == AB_MTP ? "MTP" : "off",
           why);
  d->ab.status_role = THEME_INACTIVE;
}

/* Polls the A/B arm that runs; when it is over, starts the next one. */
static bool poll_ab(struct dashboard *d) {
  if (!d->ab_run)
    return false;
  bool changed = false;
  if (run_snapshot(d->ab_run, &d->incoming, &d->ab_seq)) {
    runview_push(&d->ab.arm[d->ab_arm], &d->incoming);
    changed = true;
  }
  if (run_wait(d->ab_run, 0)) {
    /* the last snapshot of the finished arm, then the next arm */
    if (run_snapshot(d->ab_run, &d->incoming, &d->ab_seq))
      runview_push(&d->ab.arm[d->ab_arm], &d->incoming);
    run_free(d->ab_run);
    d->ab_run = NULL;
    if (d->ab_arm == AB_OFF)
      start_ab_arm(d, AB_MTP);
    else
      snprintf(d->ab.status, sizeof d->ab.status, "both arms measured");
    changed = true;
  }
  return changed;
}

static void stop_ab(struct dashboard *d) {
  if (!d->ab_run)
    return;
  run_stop(d->ab_run);
  snprintf(d->ab.status, sizeof d->ab.status, "stopping the server...");
  for (int i = 0; i < 300 && !run_wait(d->ab_run, 100); i++) {
    abview_render(&d->ab, &d->grid, &d->layout, d->gl);
    grid_blit(&d->grid, &d->palette);
    wnoutrefresh(stdscr);
    doupdate();
  }
  run_free(d->ab_run);
  d->ab_run = NULL;
}

/* Stops the run (and so its server) and waits for it; the screen keeps
 * drawing so the user sees the server go down. */
static void stop_run(struct dashboard *d) {
  if (!d->run)
    return;
  run_stop(d->run);
  runview_set_status(&d->rv, THEME_WARNING, "stopping the server...");
  for (int i = 0; i < 300 && !run_wait(d->run, 100); i++) {
    if (run_snapshot(d->run, &d->incoming, &d->run_seq))
      runview_push(&d->rv, &d->incoming);
    runview_render(&d->rv, &d->grid, &d->layout, d->gl);
    grid_blit(&d->grid, &d->palette);
    wnoutrefresh(stdscr);
    doupdate();
  }
  run_free(d->run);  /* stops and joins whatever is left */
  d->run = NULL;
}

static void run_command(struct dashboard *d, enum runview_action action,
                        const struct runview_command *cmd) {
  struct st_err err = {{0}};
  if (action == RUNVIEW_SET_CONCURRENCY) {
    int was = d->rv.snap.concurrency.target;
    if (run_set_concurrency(d->run, cmd->conc, &err) == 0)
      runview_set_status(&d->rv, THEME_OK, "concurrency %d -> %d (marked on the charts)", was, cmd->conc);
    else
      runview_set_status(&d->rv, THEME_ERROR, "concurrency: %.200s", err.msg);
  } else if (action == RUNVIEW_RESTART_WITH) {
    if (run_restart_with(d->run, cmd->knob, cmd->value, &err) == 0)
      runview_set_status(&d->rv, THEME_WARNING, "restarting the server with %s=%s", cmd->knob, cmd->value);
    else
      runview_set_status(&d->rv, THEME_ERROR, "%s: %.200s", cmd->knob, err.msg);
  }
}

/* The picker's choice goes into its column, unless that column's arm is
 * being measured right now. */
static void load_past(struct dashboard *d) {
  struct abview *ab = &d->ab;
  const struct run_summary *r = pastpicker_selected(&ab->picker);
  int column = ab->picker.column;
  if (!r)
    return;
  if (d->ab_run && d->ab_arm == column) {
    snprintf(ab->status, sizeof ab->status, "the %s arm is running: pick the other column",
             column == AB_MTP ? "MTP" : "off");
    ab->status_role = THEME_WARNING;
    return;
  }
  struct st_err err = {{0}};
  if (abview_load_past(ab, column, r->dir, &err) != 0) {
    snprintf(ab->status, sizeof ab->status, "%.250s", err.msg);
    ab->status_role = THEME_ERROR;
    return;
  }
  snprintf(ab->status, sizeof ab->status, "%s column: loaded %.200s", column == AB_MTP ? "MTP" : "off",
           r->folder);
  ab->status_role = THEME_OK;
  ab->column = column;
  pastpicker_close(&ab->picker);
}

/* One input event; returns false when the dashboard should close. */
static bool handle_input(struct dashboard *d, int ch) {
  int key = translate_key(ch);
  int mouse_x = -1, mouse_y = -1, wheel = 0;
  if (ch == KEY_MOUSE) {
    MEVENT ev;
    if (getmouse(&ev) != OK)
      return true;
    mouse_x = ev.x;
    mouse_y = ev.y;
    wheel = ev.bstate & BUTTON4_PRESSED ? -3 : ev.bstate & BUTTON5_PRESSED ? 3 : 0;
  }
  if (d->view == UI_VIEW_BROWSER) {
    enum browser_action a = BROWSER_NONE;
    if (ch == KEY_MOUSE)
      a = wheel ? browser_wheel(&d->browser, &d->layout, mouse_x, mouse_y, wheel)
                : browser_click(&d->browser, &d->layout, mouse_x, mouse_y);
    else
      a = browser_key(&d->browser, key, &d->layout);
    if (a == BROWSER_RUN) {
      start_run(d, browser_selected(&d->browser));
      return true;
    }
    if (a == BROWSER_RUN_AB) {
      const struct browser_pair *p = browser_selected_pair(&d->browser);
      if (d->ab_initialised)
        abview_fini(&d->ab);
      abview_init(&d->ab, p->off, p->spec, d->results_dir);
      d->ab_initialised = true;
      d->view = UI_VIEW_AB;
      start_ab_arm(d, AB_OFF);
      return true;
    }
    if (a == BROWSER_LOAD_PAST) {
      /* the A/B view as it was (its arms and past runs), with the list open */
      if (!d->ab_initialised) {
        abview_init(&d->ab, NULL, NULL, d->results_dir);
        d->ab_initialised = true;
      }
      d->view = UI_VIEW_AB;
      abview_key(&d->ab, 'L', &d->layout);
      return true;
    }
    return a != BROWSER_QUIT;
  }
  if (d->view == UI_VIEW_AB) {
    enum abview_action a = ABVIEW_NONE;
    if (ch == KEY_MOUSE)
      a = wheel ? abview_wheel(&d->ab, &d->layout, mouse_x, mouse_y, wheel)
                : abview_click(&d->ab, &d->layout, mouse_x, mouse_y);
    else
      a = abview_key(&d->ab, key, &d->layout);
    switch (a) {
    case ABVIEW_LOAD_PAST:
      load_past(d);
      return true;
    case ABVIEW_BACK:
      d->view = UI_VIEW_BROWSER;
      return true;
    case ABVIEW_QUIT:
      return false;
    case ABVIEW_STOP_AND_QUIT:
      stop_ab(d);
      return false;
    default:
      return true;
    }
  }
  struct runview_command cmd;
  enum runview_action a = RUNVIEW_NONE;
  if (ch == KEY_MOUSE)
    a = wheel ? runview_wheel(&d->rv, &d->layout, mouse_x, mouse_y, wheel)
              : runview_click(&d->rv, &d->layout, mouse_x, mouse_y, &cmd);
  else
    a = runview_key(&d->rv, key, &cmd);
  switch (a) {
  case RUNVIEW_SET_CONCURRENCY:
  case RUNVIEW_RESTART_WITH:
    run_command(d, a, &cmd);
    return true;
  case RUNVIEW_STOP_AND_QUIT:
    stop_run(d);
    return false;
  case RUNVIEW_QUIT:
    return false;
  case RUNVIEW_BACK:
    stop_run(d);
    d->view = UI_VIEW_BROWSER;
    return true;
  default:
    return true;
  }
}

int tui_run(const struct tui_options *opts) {
  struct st_err err = {{0}};
  struct theme theme;
  setlocale(LC_ALL, "");
  if (load_theme(opts->theme, &theme, &err) != 0) {
    fprintf(stderr, "servetop: %s\n", err.msg);
    theme_fini(&theme);
    return 2;
  }
  char note[512] = "";
  struct dashboard d = {.view = UI_VIEW_BROWSER, .results_dir = opts->results_dir};
  d.set = load_recipes(opts, note, sizeof note, &err);
  if (!d.set) {
    fprintf(stderr, "servetop: %s\n", err.msg);
    theme_fini(&theme);
    return 1;
  }
  const char *no_color = getenv("NO_COLOR");
  bool want_color = !(no_color && *no_color);
  d.gl = ui_glyphs_get(!opts->ascii && locale_is_utf8());

  browser_init(&d.browser, d.set);
  if (note[0] || theme.n_warnings) {
    snprintf(d.browser.message, sizeof d.browser.message, "%.200s", note[0] ? note : theme.warnings[0]);
    d.browser.message_role = THEME_WARNING;
  }

  util_set_oom_hook(restore_terminal);
  struct sigaction sa = {0};
  sa.sa_handler = on_quit_signal;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);

  initscr();
  cbreak();
  noecho();
  nonl();
  keypad(stdscr, TRUE);
  curs_set(0);
  set_escdelay(25);
  mousemask(BUTTON1_PRESSED | BUTTON4_PRESSED | BUTTON5_PRESSED, NULL);
  mouseinterval(0);
  palette_init(&d.palette, &theme, want_color);

  ui_grid_init(&d.grid, COLS, LINES);
  bool dirty = true, open = true;
  while (open && !quit_requested) {
    if (d.grid.cols != COLS || d.grid.rows != LINES) {
      ui_grid_resize(&d.grid, COLS, LINES);
      dirty = true;
    }
    ui_layout_compute(COLS, LINES, d.view, &d.layout);
    if (d.run && run_snapshot(d.run, &d.incoming, &d.run_seq)) {
      runview_push(&d.rv, &d.incoming);
      dirty = true;
    }
    if (poll_ab(&d))
      dirty = true;
    d.ab.running = d.ab_run != NULL;
    if (dirty) {
      if (d.view == UI_VIEW_RUN)
        runview_render(&d.rv, &d.grid, &d.layout, d.gl);
      else if (d.view == UI_VIEW_AB)
        abview_render(&d.ab, &d.grid, &d.layout, d.gl);
      else
        browser_render(&d.browser, &d.grid, &d.layout, d.gl);
      grid_blit(&d.grid, &d.palette);
      wnoutrefresh(stdscr);
      doupdate();
      dirty = false;
    }
    /* 10 Hz while a run publishes snapshots; otherwise wait for keys, waking
     * now and then to notice signals */
    timeout(d.run || d.ab_run ? 100 : 1000);
    int ch = getch();
    if (ch == ERR)
      continue;
    dirty = true;
    if (ch == KEY_RESIZE)
      continue;
    open = handle_input(&d, ch);
  }
  /* the server never outlives the dashboard */
  if (d.run) {
    ui_layout_compute(COLS, LINES, UI_VIEW_RUN, &d.layout);
    stop_run(&d);
  }
  if (d.ab_run) {
    ui_layout_compute(COLS, LINES, UI_VIEW_AB, &d.layout);
    stop_ab(&d);
  }
  endwin();

  ui_grid_fini(&d.grid);
  if (d.ab_initialised)
    abview_fini(&d.ab);
  browser_fini(&d.browser);
  recipe_set_free(d.set);
  theme_fini(&theme);
  return quit_requested ? 130 : 0;
}
