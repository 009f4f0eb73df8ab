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

#include "browser.h"
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
  struct recipe_set *set = recipe_set_new();
  int rc = 0;
  if (o->inferencex_dir) {
    rc = recipe_set_add_inferencex(set, o->inferencex_dir, err);
  } else if (o->configs_dir) {
    rc = recipe_set_add_configs_dir(set, o->configs_dir, err);
  } else {
    struct st_err why;
    char *dir = recipe_bundled_dir_alloc(&why);
    if (dir) {
      rc = recipe_set_add_configs_dir(set, dir, err);
      free(dir);
    } else {
      snprintf(note, note_n, "no bundled recipes: %s", why.msg);
    }
  }
  if (rc != 0) {
    recipe_set_free(set);
    return NULL;
  }
  return set;
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
  struct recipe_set *set = load_recipes(opts, note, sizeof note, &err);
  if (!set) {
    fprintf(stderr, "servetop: %s\n", err.msg);
    theme_fini(&theme);
    return 1;
  }
  const char *no_color = getenv("NO_COLOR");
  bool want_color = !(no_color && *no_color);
  bool unicode = !opts->ascii && locale_is_utf8();
  const struct ui_glyphs *gl = ui_glyphs_get(unicode);

  struct browser browser;
  browser_init(&browser, set);
  if (note[0] || theme.n_warnings) {
    snprintf(browser.message, sizeof browser.message, "%.200s", note[0] ? note : theme.warnings[0]);
    browser.message_role = THEME_WARNING;
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
  timeout(1000);  /* wake up now and then to notice signals */
  struct palette palette;
  palette_init(&palette, &theme, want_color);

  struct ui_grid grid;
  ui_grid_init(&grid, COLS, LINES);
  struct ui_layout layout;
  bool dirty = true;
  enum browser_action action = BROWSER_NONE;
  while (!quit_requested) {
    if (grid.cols != COLS || grid.rows != LINES) {
      ui_grid_resize(&grid, COLS, LINES);
      dirty = true;
    }
    ui_layout_compute(COLS, LINES, UI_VIEW_BROWSER, &layout);
    if (dirty) {
      browser_render(&browser, &grid, &layout, gl);
      grid_blit(&grid, &palette);
      wnoutrefresh(stdscr);
      doupdate();
      dirty = false;
    }
    int ch = getch();
    if (ch == ERR)
      continue;
    if (ch == KEY_RESIZE) {
      dirty = true;
      continue;
    }
    if (ch == KEY_MOUSE) {
      MEVENT ev;
      if (getmouse(&ev) != OK)
        continue;
      if (ev.bstate & BUTTON1_PRESSED)
        action = browser_click(&browser, &layout, ev.x, ev.y);
      else if (ev.bstate & BUTTON4_PRESSED)
        action = browser_wheel(&browser, &layout, ev.x, ev.y, -3);
      else if (ev.bstate & BUTTON5_PRESSED)
        action = browser_wheel(&browser, &layout, ev.x, ev.y, 3);
      else
        action = BROWSER_NONE;
    } else {
      action = browser_key(&browser, translate_key(ch), &layout);
    }
    if (action == BROWSER_QUIT || action == BROWSER_RUN || action == BROWSER_RUN_AB)
      break;
    dirty = dirty || action == BROWSER_REDRAW;
  }
  endwin();

  if (opts->result) {
    memset(opts->result, 0, sizeof *opts->result);
    const struct recipe *r = browser_selected(&browser);
    if (r && (action == BROWSER_RUN || action == BROWSER_RUN_AB)) {
      snprintf(opts->result->run_recipe, sizeof opts->result->run_recipe, "%s", r->name);
      opts->result->run_ab = action == BROWSER_RUN_AB;
    }
  }
  ui_grid_fini(&grid);
  browser_fini(&browser);
  recipe_set_free(set);
  theme_fini(&theme);
  return quit_requested ? 130 : 0;
}
