/* ui screens: every view of the dashboard is one object of this shape — its
 * key table (which `?` lists and the footer shows), keys, mouse, rendering
 * and footer — and tui.c keeps them in one table and a stack: the browser at
 * the bottom; the run view, the A/B view and the problems list on top of it;
 * the log view on top of the run view; help, the launch form and the list of
 * past runs drawn over whatever is below them.
 *
 * A screen never calls the run module, threads or ncurses: what it wants the
 * program to do it writes into ctx->cmd, and tui.c does it (the shape of
 * htop's Panel handlers returning a HandlerResult). So every screen is unit-
 * tested by calling its ops on a state and reading the grid back.
 *
 * Adding a screen: one file (its state, its ops and `const struct ui_screen
 * NAME_screen`) and one row in tui.c's screen table. */
#ifndef SERVETOP_UI_SCREEN_H
#define SERVETOP_UI_SCREEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "layout.h"
#include "widgets.h"

struct recipe;

/* What a screen asks the program to do. */
enum ui_cmd_kind {
  UI_CMD_NONE,
  UI_CMD_QUIT,            /* stop what runs and quit (the screen asked first when needed) */
  UI_CMD_CLOSE,           /* close this screen: back to the one below */
  UI_CMD_HOME,            /* back to the recipes; stops what runs (the run folder stays) */
  UI_CMD_OPEN,            /* open cmd.screen on top of this one */
  UI_CMD_LAUNCH_FORM,     /* the launch form for cmd.recipe (with cmd.twin: an A/B run) */
  UI_CMD_RUN,             /* start cmd.launch (the launch form's choice) */
  UI_CMD_PAST_RUNS,       /* the A/B view with its list of past runs, loading into cmd.column */
  UI_CMD_LOAD_PAST,       /* load the run folder cmd.path into A/B column cmd.column */
  UI_CMD_SET_CONCURRENCY, /* the run on screen: run_set_concurrency(cmd.conc) */
  UI_CMD_RESTART_WITH,    /* the run on screen: run_restart_with(cmd.knob, cmd.value) */
  UI_CMD_OPEN_LOG,        /* the full-screen log of the server on screen */
  UI_CMD_ATTACH_FORM,     /* the attach form (a server servetop did not launch) */
  UI_CMD_ATTACH,          /* the run view on the server at cmd.path, loaded at cmd.conc */
  UI_CMD_TUNE_FORM,       /* the Tune form for cmd.recipe (cmd.twin: its twin, knob spec) */
  UI_CMD_TUNE,            /* start the search the Tune form decided */
  UI_CMD_TUNE_STOP,       /* the search on screen: run_tune_stop (what was measured is kept) */
};

/* A launch as the launch form decided it. */
struct ui_launch {
  const struct recipe *recipe;  /* the off arm of an A/B run */
  const struct recipe *twin;    /* the MTP arm; NULL: one run */
  int conc;                     /* > 0: one point at this concurrency; 0: the recipe's first */
  bool sweep;                   /* every point of the sweep */
  char *const *overrides;       /* KEY=VALUE, borrowed from the form */
  size_t n_overrides;
  int num_prompts, isl, osl;    /* benchmark settings from the form; 0 = the recipe's */
};

struct ui_cmd {
  enum ui_cmd_kind kind;
  const struct ui_screen *screen;       /* UI_CMD_OPEN */
  const struct recipe *recipe, *twin;   /* UI_CMD_LAUNCH_FORM */
  struct ui_launch launch;              /* UI_CMD_RUN */
  int column;                           /* UI_CMD_PAST_RUNS, UI_CMD_LOAD_PAST: 0 off, 1 MTP */
  const char *path;                     /* UI_CMD_LOAD_PAST, UI_CMD_ATTACH (the URL) */
  int conc;                             /* UI_CMD_SET_CONCURRENCY, UI_CMD_ATTACH */
  char knob[64];                        /* UI_CMD_RESTART_WITH */
  char value[96];
};

/* What a screen's handlers see: the layout it is drawn in, the glyphs, and
 * the command it fills in. */
struct ui_ctx {
  const struct ui_layout *layout;
  const struct ui_glyphs *gl;
  struct ui_cmd cmd;
};

/* The footer line: the key table's hints (left) and a status message (the
 * rest), or a prompt that replaces both. */
struct ui_footer {
  const struct ui_key_help *keys;  /* hints from these keys; NULL: the screen's table */
  size_t n_keys;
  uint64_t inactive;               /* bit i: keys[i] does nothing now (drawn dim) */
  const char *status;              /* NULL or "": none */
  enum theme_role status_role;
  const char *prompt;              /* non-NULL: a prompt instead of the hints */
  enum theme_role prompt_role;
  const char *input;               /* the text typed after the prompt (NULL: not an input) */
  const char *prompt_hint;         /* dim text after it ("Enter keeps, Esc clears") */
};

struct ui_screen {
  const char *name;                 /* "browser", "run", ...: tests and messages */
  const char *help_title;           /* the `?` box's title */
  const struct ui_key_help *keys;   /* every key it acts on: help and footer hints */
  size_t n_keys;
  enum ui_view view;                /* its layout (an overlay: drawn in the layout below) */
  bool overlay;                     /* drawn over the screen below it */
  bool text_input;                  /* printable keys are text typed into a field (the key
                                       table lists the keys that are not) */
  /* Each returns true when the state changed (draw again). A key the screen
   * does not take returns false (tui.c then opens help on `?`). */
  bool (*key)(void *self, int key, struct ui_ctx *ctx);
  bool (*click)(void *self, int x, int y, struct ui_ctx *ctx);            /* NULL: none */
  bool (*wheel)(void *self, int x, int y, int lines, struct ui_ctx *ctx); /* NULL: none */
  void (*render)(void *self, struct ui_grid *g, const struct ui_ctx *ctx);
  /* Fills the footer (status, prompt, inactive keys; text it formats lives in
   * self); NULL: the key table alone. */
  void (*footer)(void *self, struct ui_footer *out);
  /* Called every pass of the main loop; true when there is something new to
   * draw (a file grew). NULL: nothing to poll. */
  bool (*tick)(void *self);
};

/* A footer that asks for typed text: the prompt, the text typed so far and a
 * dim hint after it (what Enter and Esc do). */
void ui_footer_input(struct ui_footer *f, const char *prompt, const char *input, const char *hint);

/* The keys of a form of n one-line fields (field: the one with the keys, text: its text of
 * size bytes): Tab and Down the next field, Up the previous, Backspace and printable keys but
 * `?` edit it. Returns 2 when the text changed (check the form), 1 when the field moved, 0 for
 * any other key. */
int ui_form_field_key(int *field, int n, char *text, size_t size, int key);

/* A form's footer: while it has an error, the hint of keys[start_key] (Enter) dim and fix as
 * the status; else while it waits for the engine probe, that. */
void ui_form_footer(struct ui_footer *out, bool error, bool waiting, unsigned start_key,
                    const char *fix);

/* The footer of a screen in its current state (ops->footer, defaults filled). */
void ui_screen_footer(const struct ui_screen *s, void *self, struct ui_footer *out);
/* Draws that footer into the layout's footer line. */
void ui_screen_draw_footer(const struct ui_screen *s, void *self, struct ui_grid *g,
                           const struct ui_ctx *ctx);

/* ---------------------------------------------------------------- footer widget
 * Hints are laid out left to right in table order, "KEY label" two cells
 * apart, the status after them. When they do not fit beside the whole status
 * they move one cell apart, then the hints with the highest `drop` go first;
 * those with drop 0 (`?`, `q`, ...) never go: the status is cut instead. A
 * status in the inactive role (a note, not news) only gets the room left. */
#define UI_FOOTER_MAX_HINTS 24
struct ui_footer_plan {
  size_t n;
  struct {
    size_t key;   /* index into the footer's keys */
    int x;        /* first cell of the key text */
    int key_w;    /* cells of the key text */
    int w;        /* cells of key text + blank + label */
  } hint[UI_FOOTER_MAX_HINTS];
  int status_x, status_w;  /* where the status goes (w 0: nowhere) */
  size_t n_dropped;        /* hints left out for want of room */
};
/* The hint's key text in the footer: hint_keys, else keys. */
const char *ui_footer_hint_keys(const struct ui_key_help *k);
void ui_footer_plan(const struct ui_footer *f, int x0, int w, struct ui_footer_plan *out);
void ui_footer_draw(struct ui_grid *g, struct ui_rect r, const struct ui_footer *f,
                    const struct ui_glyphs *gl);
/* The key a click at column x of the footer presses (0: none). A hint whose
 * key text is single keys apart ("+/-", "[ ]") presses the one under x. */
int ui_footer_key_at(const struct ui_footer *f, struct ui_rect r, int x);

#endif
