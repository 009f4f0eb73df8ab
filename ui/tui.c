/* The dashboard's shell: the screen table and stack, the main loop, the
 * commands screens ask for handed on (runs to the core's session controller,
 * run_session_*: launch, A/B arms, attach, restart, stop, followed into the
 * views by sessview.c; the engine probe to probe.c's worker thread; past
 * runs), and ncurses — terminal setup, the theme's colour pairs, key and
 * mouse translation, copying the cell grid to the screen. Everything that
 * decides what is drawn lives in the screens' pure files (screen.h); this is
 * the only file that calls ncurses. */
#include "tui.h"

#include <curses.h>
#include <fcntl.h>
#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "abview.h"
#include "attachform.h"
#include "browser.h"
#include "help.h"
#include "launchform.h"
#include "layout.h"
#include "logview.h"
#include "pastruns.h"
#include "probe.h"
#include "problems.h"
#include "run/run.h"
#include "runview.h"
#include "screen.h"
#include "sessview.h"
#include "theme.h"
#include "tuneform.h"
#include "tuneview.h"
#include "widgets.h"
#include "ui_util.h"

static volatile sig_atomic_t quit_requested;

static void on_quit_signal(int sig) {
  (void)sig;
  quit_requested = 1;
}

static int saved_stderr = -1; /* the terminal's stderr while the screen is up */

/* While the screen is up, what the program writes to stderr (the run's
 * log lines, a probe's output) goes to <XDG data dir>/servetop/dashboard.log,
 * never over the screen; returns the saved stderr (-1: not redirected). */
static int stderr_to_log(void) {
  char *runs = run_default_results_dir_alloc();
  char *slash = strrchr(runs, '/');
  if (slash)
    *slash = '\0';
  struct st_err err = {{0}};
  char *path = path_join_alloc(runs, "dashboard.log");
  int fd = path_mkdir_p(runs, 0755, &err) == 0
               ? open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)
               : -1;
  if (fd < 0)
    fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
  free(path);
  free(runs);
  int saved = fd >= 0 ? dup(STDERR_FILENO) : -1;
  if (saved >= 0)
    dup2(fd, STDERR_FILENO);
  if (fd >= 0)
    close(fd);
  return saved;
}

static void stderr_back(int saved) {
  if (saved < 0)
    return;
  fflush(stderr);
  dup2(saved, STDERR_FILENO);
  close(saved);
}

static void restore_terminal(void) {
  if (!isendwin())
    endwin();
  stderr_back(saved_stderr);
  saved_stderr = -1;
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

#ifndef SERVETOP_SOURCE_THEMES_DIR
#define SERVETOP_SOURCE_THEMES_DIR NULL
#endif

/* --theme NAME|PATH. "default" (and no --theme) is the theme built into the
 * binary; other names are found next to the binary, installed or in the
 * source tree (theme_find_path_alloc). */
static int load_theme(const char *name, struct theme *t, struct st_err *err) {
  if (!name || strcmp(name, "default") == 0) {
    theme_init_default(t);
    return 0;
  }
  char *exe_dir = path_self_dir_alloc();
  char *path = theme_find_path_alloc(name, getenv("SERVETOP_THEMES"), exe_dir,
                                     SERVETOP_SOURCE_THEMES_DIR, err);
  free(exe_dir);
  if (!path) {
    theme_init_default(t);
    return -1;
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

#define STACK_MAX 8
#define RETIRED_PROBES 4

/* A launch the form (or the command line) decided, kept until every arm
 * has started. */
struct launch {
  const struct recipe *recipe, *twin;
  struct run_config base;  /* every run setting but recipe, engine, label */
  char **overrides;        /* owned (the form's; the command line's are its own) */
  size_t n_overrides;
  struct ui_probe_answer engine[2];  /* the probe's answers: recipe, twin */
  bool direct;             /* from the command line: its runs' outcomes go back to it */
  int repeats;             /* an A/B's arms this many times, interleaved (the command line's) */
};

struct dashboard {
  struct recipe_set *set;
  const char *results_dir;  /* --results, or NULL (the run's default) */
  const struct ui_glyphs *gl;
  struct palette palette;
  struct ui_grid grid;
  struct ui_layout layout;  /* of the screen at the bottom of what is drawn */
  /* every screen's state; the screen table says which is whose */
  struct browser browser;
  struct problems problems;
  struct launchform form;
  struct runview rv;
  struct logview log;
  struct abview ab;
  struct pastpicker picker;
  struct attachform attach;
  struct tuneform tuneform;
  struct tuneview tune;
  struct helpview help;
  /* the screens open, the browser at the bottom */
  const struct ui_screen *stack[STACK_MAX];
  size_t depth;
  /* the session on screen (the core's session controller): the run view's
   * (one run, or an attached server) or the A/B view's */
  struct sessview sv;
  struct recipe_set *attach_set; /* the recipe of an attached run (the session borrows it) */
  struct tui_launch *direct; /* the command line's launch: outcomes go back into it */
  bool ab_initialised;    /* ab holds an A/B view (abview_fini owed) */
  /* launching: the engine probe runs off this thread */
  struct ui_probe *probe;
  struct ui_probe *retired[RETIRED_PROBES]; /* abandoned probes, freed once done */
  struct launch launch;
  bool launch_pending;    /* the form said go; waiting for the probe */
  /* the search on the Tune view (its driver, run_tune_*), kept until the view goes */
  struct run_tune *tune_run;
  bool tune_pending;      /* the Tune form said go; waiting for the probe */
};

/* The screen table: every screen and where its state lives. Adding a screen
 * is its file, one row here (and the field of struct dashboard it names). */
static const struct {
  const struct ui_screen *screen;
  size_t state;
} screen_table[] = {
    {&browser_screen, offsetof(struct dashboard, browser)},
    {&problems_screen, offsetof(struct dashboard, problems)},
    {&launchform_screen, offsetof(struct dashboard, form)},
    {&runview_screen, offsetof(struct dashboard, rv)},
    {&logview_screen, offsetof(struct dashboard, log)},
    {&abview_screen, offsetof(struct dashboard, ab)},
    {&pastpicker_screen, offsetof(struct dashboard, picker)},
    {&attachform_screen, offsetof(struct dashboard, attach)},
    {&tuneform_screen, offsetof(struct dashboard, tuneform)},
    {&tuneview_screen, offsetof(struct dashboard, tune)},
    {&help_screen, offsetof(struct dashboard, help)},
};

size_t tui_screen_count(void) {
  return ST_ARRAY_LEN(screen_table);
}

const struct ui_screen *tui_screen_at(size_t i) {
  return i < ST_ARRAY_LEN(screen_table) ? screen_table[i].screen : NULL;
}

static void *state_of(struct dashboard *d, const struct ui_screen *s) {
  for (size_t i = 0; i < ST_ARRAY_LEN(screen_table); i++)
    if (screen_table[i].screen == s)
      return (char *)d + screen_table[i].state;
  return NULL; /* not in the table: a programming error the tests catch */
}

static const struct ui_screen *top(const struct dashboard *d) {
  return d->stack[d->depth - 1];
}

/* The lowest screen drawn: the top one, or the first below it that is not
 * drawn over another. */
static size_t base_index(const struct dashboard *d) {
  size_t i = d->depth - 1;
  while (i > 0 && d->stack[i]->overlay)
    i--;
  return i;
}

static bool on_stack(const struct dashboard *d, const struct ui_screen *s) {
  for (size_t i = 0; i < d->depth; i++)
    if (d->stack[i] == s)
      return true;
  return false;
}

static void push(struct dashboard *d, const struct ui_screen *s) {
  if (d->depth < STACK_MAX && top(d) != s)
    d->stack[d->depth++] = s;
}

static void pop(struct dashboard *d) {
  if (d->depth > 1)
    d->depth--;
}

static void compute_layout(struct dashboard *d) {
  ui_layout_compute(COLS, LINES, d->stack[base_index(d)]->view, &d->layout);
}

/* Draws the screens from the base up, then the top one's footer. */
static void draw(struct dashboard *d) {
  compute_layout(d);
  struct ui_ctx ctx = {.layout = &d->layout, .gl = d->gl};
  for (size_t i = base_index(d); i < d->depth; i++)
    d->stack[i]->render(state_of(d, d->stack[i]), &d->grid, &ctx);
  ui_screen_draw_footer(top(d), state_of(d, top(d)), &d->grid, &ctx);
  grid_blit(&d->grid, &d->palette);
  wnoutrefresh(stdscr);
  doupdate();
}

/* ---------------------------------------------------------------- the engine probe */

static void retire_probe(struct dashboard *d) {
  if (!d->probe)
    return;
  if (d->retired[RETIRED_PROBES - 1]) { /* full: wait for the oldest */
    ui_probe_free(d->retired[0]);
    memmove(d->retired, d->retired + 1, (RETIRED_PROBES - 1) * sizeof d->retired[0]);
    d->retired[RETIRED_PROBES - 1] = NULL;
  }
  for (size_t i = 0; i < RETIRED_PROBES; i++)
    if (!d->retired[i]) {
      d->retired[i] = d->probe;
      break;
    }
  d->probe = NULL;
}

static void reap_retired(struct dashboard *d) {
  for (size_t i = 0; i < RETIRED_PROBES; i++)
    if (d->retired[i] && ui_probe_done(d->retired[i])) {
      ui_probe_free(d->retired[i]);
      d->retired[i] = NULL;
    }
}

static void start_probe(struct dashboard *d, const struct recipe *r, const struct recipe *twin) {
  retire_probe(d);
  const struct recipe *recipes[2] = {r, twin};
  d->probe = ui_probe_start(recipes, twin ? 2 : 1, NULL);
  launchform_set_engine(&d->form, true, NULL);
}

/* The form's engine line from the probe's answers. */
static void show_probe_answer(struct dashboard *d) {
  const struct ui_probe_answer *a = ui_probe_answer(d->probe, 0), *b = ui_probe_answer(d->probe, 1);
  char text[600];
  if (b && strcmp(a->text, b->text) != 0)
    snprintf(text, sizeof text, "off: %s; MTP: %s", a->text, b->text);
  else
    snprintf(text, sizeof text, "%s", a->text);
  launchform_set_engine(&d->form, false, text);
}

/* ---------------------------------------------------------------- runs */

static void launch_clear(struct launch *l) {
  for (size_t i = 0; i < l->n_overrides; i++)
    free(l->overrides[i]);
  free(l->overrides);
  memset(l, 0, sizeof *l);
}

static void launch_copy(struct dashboard *d, const struct ui_launch *from) {
  struct launch *l = &d->launch;
  launch_clear(l);
  l->recipe = from->recipe;
  l->twin = from->twin;
  l->overrides = xcalloc(from->n_overrides + 1, sizeof *l->overrides);
  for (size_t i = 0; i < from->n_overrides; i++)
    l->overrides[i] = xstrdup(from->overrides[i]);
  l->n_overrides = from->n_overrides;
  run_config_init(&l->base);
  l->base.results_dir = d->results_dir;
  l->base.conc = from->conc;
  l->base.sweep = from->sweep;
  l->base.overrides = l->overrides;
  l->base.n_overrides = l->n_overrides;
  l->base.num_prompts = from->num_prompts; /* benchmark settings, never server flags */
  l->base.isl = from->isl;
  l->base.osl = from->osl;
}

static void browser_say(struct dashboard *d, enum theme_role role, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void browser_say(struct dashboard *d, enum theme_role role, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(d->browser.message, sizeof d->browser.message, fmt, ap);
  va_end(ap);
  d->browser.message_role = role;
}

/* The views the session on screen feeds. */
static struct sessview_views views_of(struct dashboard *d) {
  return (struct sessview_views){.rv = &d->rv, .ab = &d->ab};
}

/* Starts sc on the run view (ab false) or the A/B view; false with err when
 * its run could not start. */
static bool begin_session(struct dashboard *d, const struct run_session_config *sc, bool ab,
                          bool direct, struct st_err *err) {
  const char *texts[RUN_SESSION_MAX_ARMS] = {d->launch.engine[0].text, d->launch.engine[1].text};
  struct sessview_views views = views_of(d);
  d->sv.outcomes = d->direct ? d->direct->outcomes : NULL;
  d->sv.n_outcomes = d->direct ? &d->direct->n_outcomes : NULL;
  d->sv.max_outcomes = d->direct ? ST_ARRAY_LEN(d->direct->outcomes) : 0;
  d->sv.repeat_dirs = d->direct ? d->direct->repeat_dirs : NULL;
  d->sv.n_repeat_dirs = d->direct ? &d->direct->n_repeat_dirs : NULL;
  return sessview_begin(&d->sv, sc, ab, direct, texts, &views, err);
}

/* Stops the session (and so its servers) and waits for it; the screen keeps
 * drawing (at most 30 s) so the user sees the servers go down. The run
 * view's: the browser then says where its folder is. */
static void stop_session(struct dashboard *d) {
  if (!d->sv.session)
    return;
  struct sessview_views views = views_of(d);
  bool was_running = sessview_stop_begin(&d->sv, &views);
  for (int i = 0; was_running && i < 300 && !sessview_wait(&d->sv, 100); i++) {
    sessview_pull(&d->sv, &views);
    draw(d);
  }
  bool ab = d->sv.ab;
  struct run_outcome out;
  sessview_end(&d->sv, &views, was_running, &out);
  if (!ab && out.dir[0]) { /* the folder, ~ for the home directory */
    const char *home = getenv("HOME");
    size_t n = home && *home ? strlen(home) : 0;
    bool in_home = n && strncmp(out.dir, home, n) == 0 && out.dir[n] == '/';
    browser_say(d, out.status == RUN_STATUS_OK ? THEME_OK : THEME_WARNING, "run %s: %s%s",
                was_running ? "stopped" : run_status_name(out.status), in_home ? "~" : "",
                in_home ? out.dir + n : out.dir);
  }
}

/* The probe has answered and the form said go (or the command line asked):
 * the session of the launch, on the run view or the A/B view. */
static void start_launch(struct dashboard *d) {
  if (!d->launch.direct) {
    d->launch.engine[0] = *ui_probe_answer(d->probe, 0);
    if (d->launch.twin)
      d->launch.engine[1] = *ui_probe_answer(d->probe, 1);
  }
  d->launch_pending = false;
  while (d->depth > 1) /* the form goes; the run's view comes over the browser */
    pop(d);
  stop_session(d);
  const struct recipe *r = d->launch.recipe, *twin = d->launch.twin;
  struct run_session_config sc;
  memset(&sc, 0, sizeof sc);
  sc.n_arms = twin ? 2 : 1;
  sc.repeats = twin ? d->launch.repeats : 0;
  for (size_t i = 0; i < sc.n_arms; i++) {
    sc.arm[i] = d->launch.base;
    sc.arm[i].recipe = i == 0 ? r : twin;
    sc.arm[i].engine = d->launch.engine[i].engine;
    if (twin) /* A/B: off first (one GPU set), then the speculative arm, named for its method */
      sc.arm[i].label = recipe_spec_arm_name(sc.arm[i].recipe->spec);
    sc.engine_why[i] = d->launch.engine[i].text;
  }
  struct st_err err = {{0}};
  if (twin) {
    if (d->ab_initialised)
      abview_fini(&d->ab);
    abview_init(&d->ab, r, twin, d->results_dir);
    d->ab_initialised = true;
    push(d, &abview_screen);
    if (!begin_session(d, &sc, true, d->launch.direct, &err)) {
      snprintf(d->ab.status, sizeof d->ab.status, "cannot run %s: %.200s", r->name, err.msg);
      d->ab.status_role = THEME_ERROR;
    }
    return;
  }
  if (!begin_session(d, &sc, false, d->launch.direct, &err)) {
    browser_say(d, THEME_ERROR, "cannot run %s: %.200s", r->name, err.msg);
    return;
  }
  runview_init(&d->rv, r);
  runview_set_status(&d->rv, THEME_INACTIVE, "%.250s", d->launch.engine[0].text);
  push(d, &runview_screen);
}

/* The run view on a server servetop did not launch: the attach form's
 * (load: its recipe is made here) or servetop attach's (base: the command
 * line's run, its recipe made there). The recipe stands for the load only. */
static void start_attach(struct dashboard *d, const struct run_attach_load *load,
                         const struct run_config *base) {
  struct st_err err = {{0}};
  const char *url = base ? base->attach_url : load->url;
  stop_session(d);
  struct recipe_set *set = base ? NULL : run_attach_recipes_alloc(load, &err);
  bool started = false;
  if (set || base) {
    struct run_session_config sc;
    memset(&sc, 0, sizeof sc);
    sc.n_arms = 1;
    if (base) {
      sc.arm[0] = *base;
    } else {
      run_config_init(&sc.arm[0]);
      sc.arm[0].results_dir = d->results_dir;
      sc.arm[0].recipe = recipe_set_at(set, 0);
      sc.arm[0].attach_url = url;
      sc.arm[0].sweep = load->n_concs > 1; /* a concurrency list: one point each */
    }
    started = begin_session(d, &sc, false, base != NULL, &err);
  }
  if (!started) {
    recipe_set_free(set);
    browser_say(d, THEME_ERROR, "cannot attach to %.200s: %.250s", url, err.msg);
    while (d->depth > 1)
      pop(d);
    return;
  }
  while (d->depth > 1)
    pop(d);
  recipe_set_free(d->attach_set); /* the previous attached run is over (freed) */
  d->attach_set = set;
  runview_init(&d->rv, NULL);
  runview_set_status(&d->rv, THEME_INACTIVE, "attaching to %.200s", url);
  push(d, &runview_screen);
}

static void run_command(struct dashboard *d, const struct ui_cmd *cmd) {
  struct st_err err = {{0}};
  if (!d->sv.session || d->sv.ab)
    return;
  if (cmd->kind == UI_CMD_SET_CONCURRENCY) {
    int was = d->rv.snap.concurrency.target;
    const struct snap_server_load *ld = &d->rv.snap.load;
    bool over = ld->batch_cap_valid && ld->batch_cap > 0 && cmd->conc > ld->batch_cap;
    if (run_session_set_concurrency(d->sv.session, 0, cmd->conc, &err) != 0)
      runview_set_status(&d->rv, THEME_ERROR, "concurrency: %.200s", err.msg);
    else if (over)
      runview_set_status(&d->rv, THEME_WARNING,
                         "conc %d -> %d > cap %d: %d queue in server%s", was, cmd->conc,
                         ld->batch_cap, cmd->conc - ld->batch_cap,
                         d->rv.snap.server.attached ? "" : "; c raises it");
    else
      runview_set_status(&d->rv, THEME_OK, "concurrency %d -> %d: a new segment, saved apart",
                         was, cmd->conc);
  } else {
    struct st_err moot = {{0}};
    if (run_session_restart_with(d->sv.session, 0, cmd->knob, cmd->value, &err) != 0)
      /* nothing was stopped: the server runs on as it was */
      runview_set_status(&d->rv, THEME_ERROR, "not restarted: %.230s", err.msg);
    else if (run_session_models_change(d->sv.session, 0, cmd->knob, cmd->value, &moot) == 1)
      runview_set_status(&d->rv, THEME_WARNING, "restarting with %s=%s: %.200s", cmd->knob,
                         cmd->value, moot.msg); /* the sim: its figures will not move */
    else
      runview_set_status(&d->rv, THEME_WARNING, "restarting the server with %s=%s (%s)", cmd->knob,
                         cmd->value, runview_knob_flag(&d->rv, cmd->knob));
  }
}

/* The picker's choice goes into its column, unless that column's arm is
 * being measured right now. */
static void load_past(struct dashboard *d, const char *path, int column) {
  struct abview *ab = &d->ab;
  if (sessview_ab_arm_running(&d->sv, column)) {
    snprintf(ab->status, sizeof ab->status, "the %s arm is running: pick the other column",
             column == AB_MTP ? "MTP" : "off");
    ab->status_role = THEME_WARNING;
    return;
  }
  struct st_err err = {{0}};
  if (abview_load_past(ab, column, path, &err) != 0) {
    snprintf(ab->status, sizeof ab->status, "%.250s", err.msg);
    ab->status_role = THEME_ERROR;
    return;
  }
  const char *base = strrchr(path, '/');
  snprintf(ab->status, sizeof ab->status, "%s column: loaded %.200s", column == AB_MTP ? "MTP" : "off",
           base ? base + 1 : path);
  ab->status_role = THEME_OK;
  ab->column = column;
  pastpicker_close(&d->picker);
  pop(d);
}

/* The log of the server on screen: the run view's run, or the A/B arm that
 * runs (else the last one that ran). */
static void open_log(struct dashboard *d) {
  char dir[1024] = "";
  const char *title = "";
  if (on_stack(d, &runview_screen) && d->rv.snap.server.attached) {
    runview_set_status(&d->rv, THEME_WARNING,
                       "attached: servetop did not launch this server, so it has no log of it");
    return;
  }
  if (on_stack(d, &runview_screen) && d->sv.session && !d->sv.ab) {
    sessview_log_dir(&d->sv, NULL, dir, sizeof dir, &title);
    title = d->rv.snap.server.recipe_name;
  } else if (on_stack(d, &abview_screen)) {
    sessview_log_dir(&d->sv, &d->ab, dir, sizeof dir, &title);
  }
  if (!dir[0]) {
    if (top(d) == &runview_screen)
      runview_set_status(&d->rv, THEME_WARNING, "no run folder yet: no log to show");
    return;
  }
  char *path = path_join_alloc(dir, "server.log");
  logview_open(&d->log, path, title);
  free(path);
  logview_poll(&d->log);
  push(d, &logview_screen);
}

/* ---------------------------------------------------------------- tune */

/* The driver's progress and result so far into the Tune view: the result copied only when
 * the driver's generation moved. True when what the view shows changed (that, or the elapsed
 * time's second). */
static bool poll_tune(struct dashboard *d) {
  struct run_tune_status st;
  struct tune_result res;
  long long shown_s = (long long)d->tune.st.elapsed_s;
  if (!run_tune_poll_changed(d->tune_run, d->tune.st.generation, &st, &res)) {
    tuneview_update(&d->tune, &st, NULL);
    return (long long)st.elapsed_s != shown_s;
  }
  tuneview_update(&d->tune, &st, &res);
  tune_result_free(&res);
  return true;
}

/* Ends the search on the Tune view, if any: stops it (what was measured is kept), waits for
 * its server to go (at most 30 s, drawing meanwhile) and frees it; the browser says where
 * its folder is. */
static void end_tune(struct dashboard *d) {
  if (!d->tune_run)
    return;
  run_tune_stop(d->tune_run);
  for (int i = 0; i < 300 && !run_tune_wait(d->tune_run, 100); i++) {
    poll_tune(d);
    draw(d);
  }
  poll_tune(d);
  if (d->tune.st.dir[0])
    browser_say(d, d->tune.st.failed ? THEME_WARNING : THEME_OK, "tune %s: %.400s",
                d->tune.st.failed                      ? "failed"
                : d->tune.st.end == TUNE_END_STOPPED ? "stopped"
                                                     : "over",
                d->tune.st.dir);
  run_tune_free(d->tune_run);
  d->tune_run = NULL;
  d->tune.space = NULL; /* the driver's: gone with it */
}

/* The probe has answered and the Tune form said go: the search starts on the Tune view, or
 * the form says why it cannot. */
static void start_tune(struct dashboard *d) {
  struct tuneform *f = &d->tuneform;
  const struct ui_probe_answer *a = ui_probe_answer(d->probe, 0);
  d->tune_pending = false;
  stop_session(d);
  end_tune(d);
  struct st_err err = {{0}};
  if (!a->engine) {
    snprintf(f->error, sizeof f->error, "%.590s", a->text);
    return;
  }
  struct run_tune_config c;
  memset(&c, 0, sizeof c);
  c.recipe = f->recipe;
  c.twin = f->twin;
  c.engine = a->engine;
  c.results_dir = d->results_dir;
  c.slo = f->slo;
  c.knobs = f->knobs; /* the form's until it opens again: after this search has ended */
  c.n_knobs = f->n_knobs;
  c.budget_s = f->budget_s;
  c.isl = f->isl;
  c.osl = f->osl;
  c.range_ratio = -1;
  c.chat_template = -1;
  d->tune_run = run_tune_start(&c, &err);
  if (!d->tune_run) {
    snprintf(f->error, sizeof f->error, "%.590s", err.msg);
    return;
  }
  while (d->depth > 1) /* the form goes; the Tune view comes over the browser */
    pop(d);
  tuneview_fini(&d->tune);
  tuneview_init(&d->tune, f->recipe->name, run_tune_space(d->tune_run), &f->slo);
  poll_tune(d);
  push(d, &tuneview_screen);
}

/* Back to the recipes: whatever runs stops first (its folder stays). */
static void go_home(struct dashboard *d) {
  compute_layout(d);
  stop_session(d);
  end_tune(d);
  d->tune_pending = false;
  d->launch_pending = false;
  d->depth = 1;
}

/* Does what a screen asked; false when the dashboard should close. */
static bool execute(struct dashboard *d, const struct ui_cmd *cmd) {
  switch (cmd->kind) {
  case UI_CMD_NONE: return true;
  case UI_CMD_QUIT: return false;
  case UI_CMD_CLOSE:
    if (top(d) == &launchform_screen) /* a launch waiting for the probe is called off */
      d->launch_pending = false;
    if (top(d) == &tuneform_screen) /* so is a search */
      d->tune_pending = false;
    pop(d);
    return true;
  case UI_CMD_HOME: go_home(d); return true;
  case UI_CMD_OPEN: push(d, cmd->screen); return true;
  case UI_CMD_LAUNCH_FORM:
    launchform_open(&d->form, cmd->recipe, cmd->twin);
    start_probe(d, cmd->recipe, cmd->twin);
    push(d, &launchform_screen);
    return true;
  case UI_CMD_RUN:
  case UI_CMD_TUNE: { /* now when the engine probe has answered, else when it does */
    bool run = cmd->kind == UI_CMD_RUN;
    if (run)
      launch_copy(d, &cmd->launch);
    if (d->probe && ui_probe_done(d->probe) && run)
      start_launch(d);
    else if (d->probe && ui_probe_done(d->probe))
      start_tune(d);
    else if (run)
      d->launch_pending = d->form.waiting = true;
    else
      d->tune_pending = d->tuneform.waiting = true;
    return true;
  }
  case UI_CMD_PAST_RUNS:
    if (!d->ab_initialised) {
      abview_init(&d->ab, NULL, NULL, d->results_dir);
      d->ab_initialised = true;
    }
    if (!on_stack(d, &abview_screen)) { /* the A/B view as it was, over the browser */
      d->depth = 1;
      push(d, &abview_screen);
    }
    pastpicker_open(&d->picker, d->ab.results_dir, cmd->column);
    push(d, &pastpicker_screen);
    return true;
  case UI_CMD_LOAD_PAST: load_past(d, cmd->path, cmd->column); return true;
  case UI_CMD_SET_CONCURRENCY:
  case UI_CMD_RESTART_WITH: run_command(d, cmd); return true;
  case UI_CMD_OPEN_LOG: open_log(d); return true;
  case UI_CMD_ATTACH_FORM:
    attachform_open(&d->attach, NULL);
    push(d, &attachform_screen);
    return true;
  case UI_CMD_ATTACH: {
    struct run_attach_load load = {.url = d->attach.url, .isl = d->attach.isl,
                                   .osl = d->attach.osl, .concs = d->attach.concs,
                                   .n_concs = d->attach.n_concs};
    start_attach(d, &load, NULL);
    return true;
  }
  case UI_CMD_TUNE_FORM:
    end_tune(d);
    tuneform_open(&d->tuneform, cmd->recipe, cmd->twin);
    start_probe(d, cmd->recipe, NULL); /* the engine it runs on, off this thread */
    push(d, &tuneform_screen);
    return true;
  case UI_CMD_TUNE_STOP:
    if (d->tune_run)
      run_tune_stop(d->tune_run);
    return true;
  }
  return true;
}

/* One input event; returns false when the dashboard should close. */
static bool handle_input(struct dashboard *d, int ch) {
  int key = translate_key(ch);
  const struct ui_screen *s = top(d);
  void *self = state_of(d, s);
  compute_layout(d);
  struct ui_ctx ctx = {.layout = &d->layout, .gl = d->gl};
  bool acted = false;
  if (ch == KEY_MOUSE) {
    MEVENT ev;
    if (getmouse(&ev) != OK)
      return true;
    int wheel = ev.bstate & BUTTON4_PRESSED ? -3 : ev.bstate & BUTTON5_PRESSED ? 3 : 0;
    struct ui_rect foot = d->layout.slot[UI_SLOT_FOOTER];
    if (!wheel && ui_rect_contains(foot, ev.x, ev.y)) {
      /* a click on a footer hint presses its key */
      struct ui_footer f;
      ui_screen_footer(s, self, &f);
      key = ui_footer_key_at(&f, foot, ev.x);
      if (key)
        acted = s->key(self, key, &ctx);
    } else if (wheel && s->wheel) {
      acted = s->wheel(self, ev.x, ev.y, wheel, &ctx);
    } else if (!wheel && s->click) {
      acted = s->click(self, ev.x, ev.y, &ctx);
    }
  } else {
    acted = s->key(self, key, &ctx);
  }
  if (!acted && key == '?') {
    d->help.of = s;
    push(d, &help_screen);
    return true;
  }
  return execute(d, &ctx.cmd);
}

static void poll_probe(struct dashboard *d, bool *dirty) {
  reap_retired(d);
  if (!d->probe || !ui_probe_done(d->probe) || !d->form.probing)
    return;
  show_probe_answer(d);
  *dirty = true;
  if (d->launch_pending)
    start_launch(d);
  if (d->tune_pending) {
    d->tuneform.waiting = false;
    start_tune(d);
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
  static struct dashboard d; /* large (the views keep their chart history); one per process */
  memset(&d, 0, sizeof d);
  d.results_dir = opts->results_dir;
  d.set = load_recipes(opts, note, sizeof note, &err);
  if (!d.set) {
    fprintf(stderr, "servetop: %s\n", err.msg);
    theme_fini(&theme);
    return 2;
  }
  const char *no_color = getenv("NO_COLOR");
  bool want_color = !(no_color && *no_color);
  d.gl = ui_glyphs_get(!opts->ascii && locale_is_utf8());

  browser_init(&d.browser, d.set);
  problems_init(&d.problems, &d.browser.findings);
  logview_init(&d.log);
  d.stack[0] = &browser_screen;
  d.depth = 1;
  if (note[0] || theme.n_warnings)
    browser_say(&d, THEME_WARNING, "%.200s", note[0] ? note : theme.warnings[0]);

  util_set_oom_hook(restore_terminal);
  struct sigaction sa = {0};
  sa.sa_handler = on_quit_signal;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);

  saved_stderr = stderr_to_log();
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
  d.direct = opts->launch;
  if (d.direct && d.direct->config.attach_url) {
    start_attach(&d, NULL, &d.direct->config);
  } else if (d.direct) {
    d.launch.recipe = d.direct->recipe;
    d.launch.twin = d.direct->twin;
    d.launch.base = d.direct->config;
    d.launch.direct = true;
    d.launch.repeats = d.direct->repeats;
    for (int i = 0; i < 2; i++) {
      d.launch.engine[i].engine = d.direct->engine[i];
      snprintf(d.launch.engine[i].text, sizeof d.launch.engine[i].text, "%s",
               d.direct->engine_text[i] ? d.direct->engine_text[i] : "");
    }
    start_launch(&d);
  }
  bool dirty = true, open = true;
  while (open && !quit_requested) {
    if (d.grid.cols != COLS || d.grid.rows != LINES) {
      ui_grid_resize(&d.grid, COLS, LINES);
      dirty = true;
    }
    struct sessview_views views = views_of(&d);
    if (sessview_poll(&d.sv, &views))
      dirty = true;
    poll_probe(&d, &dirty);
    if (d.tune_run && poll_tune(&d))
      dirty = dirty || on_stack(&d, &tuneview_screen);
    bool ticking = false;
    for (size_t i = base_index(&d); i < d.depth; i++)
      if (d.stack[i]->tick) {
        ticking = true;
        if (d.stack[i]->tick(state_of(&d, d.stack[i])))
          dirty = true;
      }
    if (dirty) {
      draw(&d);
      dirty = false;
    }
    /* 10 Hz while something publishes or is awaited; otherwise wait for
     * keys, waking now and then to notice signals */
    bool busy = (d.sv.session && !(d.sv.ab && d.sv.st.over)) || ticking || (d.probe && d.form.probing) || d.retired[0] ||
                (d.tune_run && !d.tune.st.over);
    timeout(busy ? 100 : 1000);
    int ch = getch();
    if (ch == ERR)
      continue;
    dirty = true;
    if (ch == KEY_RESIZE)
      continue;
    open = handle_input(&d, ch);
  }
  /* the server never outlives the dashboard */
  compute_layout(&d);
  stop_session(&d);
  end_tune(&d);
  endwin();
  stderr_back(saved_stderr);
  saved_stderr = -1;

  ui_probe_free(d.probe);
  for (size_t i = 0; i < RETIRED_PROBES; i++)
    ui_probe_free(d.retired[i]);
  if (!d.launch.direct)
    launch_clear(&d.launch); /* a command line's overrides are its own */
  recipe_set_free(d.attach_set);
  ui_grid_fini(&d.grid);
  if (d.ab_initialised)
    abview_fini(&d.ab);
  pastpicker_close(&d.picker);
  launchform_fini(&d.form);
  tuneview_fini(&d.tune);
  tuneform_fini(&d.tuneform);
  logview_fini(&d.log);
  browser_fini(&d.browser);
  recipe_set_free(d.set);
  theme_fini(&theme);
  return quit_requested ? 130 : 0;
}
