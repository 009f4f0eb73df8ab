/* ui theme: semantic colour roles, the theme file parser and the mapping of
 * colours onto what the terminal can show. Everything here but
 * theme_curses_apply() is pure (no ncurses, no globals) and unit-tested.
 *
 * Theme file: one `role = value` per line, `#` starts a comment.
 *   value := [FG] [on BG] [bold] [reverse] [underline] [dim]
 *   FG, BG := #rrggbb | 0..255 | basic name (black red green yellow blue
 *             magenta cyan white, bright_<name>) | default
 * An empty value means terminal default colours and no attributes. */
#ifndef SERVETOP_UI_THEME_H
#define SERVETOP_UI_THEME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct st_err; /* util/util.h */

/* Semantic roles: screens ask for a role, never for a colour. */
enum theme_role {
  THEME_MAIN,          /* ordinary text */
  THEME_TITLE,         /* box titles, headings */
  THEME_BORDER,        /* box lines */
  THEME_HOTKEY,        /* key names in the footer and help */
  THEME_SELECTED,      /* the selected row */
  THEME_INACTIVE,      /* secondary text, unknown values */
  THEME_HEADER,        /* table headers, the top bar */
  THEME_OK,            /* healthy state, "ready" */
  THEME_WARNING,       /* warning findings, degraded state */
  THEME_ERROR,         /* error findings, failures */
  THEME_NOTE,          /* note findings */
  THEME_CHART_OUTPUT,  /* output tok/s line */
  THEME_CHART_TOTAL,   /* total tok/s line */
  THEME_CHART_RPS,     /* requests/s line */
  THEME_CHART_ACCEPT,  /* acceptance length / rate */
  THEME_CHART_MARK,    /* a tuning change marked on a chart */
  THEME_BAR_SERVER,    /* GPU memory of the server's processes */
  THEME_BAR_OTHER,     /* GPU memory of other processes */
  THEME_BAR_FREE,      /* the empty part of a bar */
  THEME_ARM_MTP,       /* MTP arm of an A/B pair */
  THEME_ARM_OFF,       /* non-MTP arm of an A/B pair */
  THEME_ROLE_COUNT
};

enum theme_color_kind { THEME_COLOR_DEFAULT, THEME_COLOR_INDEX, THEME_COLOR_RGB };

struct theme_color {
  enum theme_color_kind kind;
  uint8_t index;    /* THEME_COLOR_INDEX: 0..255, xterm numbering */
  uint8_t r, g, b;  /* THEME_COLOR_RGB */
};

enum {
  THEME_ATTR_BOLD = 1u << 0,
  THEME_ATTR_REVERSE = 1u << 1,
  THEME_ATTR_UNDERLINE = 1u << 2,
  THEME_ATTR_DIM = 1u << 3,
};

struct theme_style {
  struct theme_color fg, bg;
  unsigned attrs;  /* THEME_ATTR_* */
};

struct theme {
  struct theme_style style[THEME_ROLE_COUNT];
  bool from_file[THEME_ROLE_COUNT];  /* set by the file, not by a fallback */
  char **warnings;                   /* "file:line: unknown role 'x'", owned */
  size_t n_warnings;
};

/* The role's name in theme files ("chart_output"), or NULL when out of range. */
const char *theme_role_name(enum theme_role role);

/* Fills t with the built-in default theme (no warnings). */
void theme_init_default(struct theme *t);
/* Frees the warnings; t may be reused after theme_init_default(). */
void theme_fini(struct theme *t);

/* Parses theme text over the built-in defaults. source names the text in
 * messages ("themes/light.theme"). A role missing from the text takes its
 * fallback role's style when that role is in the text (chart_total falls back
 * to chart_output, ...), else the built-in default. Unknown roles are
 * warnings; malformed lines are errors "source:line: why". On error t holds
 * the defaults. */
int theme_parse(struct theme *t, const char *text, const char *source, struct st_err *err);
/* Reads and parses a file. */
int theme_load_file(struct theme *t, const char *path, struct st_err *err);

/* Parses one colour token; returns 0 or -1. */
int theme_color_parse(const char *token, struct theme_color *out);

/* Terminal colour index (-1 = terminal default) for a colour on a terminal
 * with n_colors colours: >= 256 gives the nearest xterm-256 index for RGB;
 * 8 or 16 the nearest basic colour; fewer than 8 always -1. */
int theme_color_to_terminal(struct theme_color c, int n_colors);

/* Where `--theme` finds a theme: a value with a '/' or ending in ".theme" is a
 * path; otherwise NAME.theme in each of: every directory of themes_env
 * (colon-separated, may be NULL), exe_dir/../share/servetop/themes (an
 * installed binary), exe_dir/../themes (a build folder in the source tree),
 * source_dir (the source tree's themes/ the binary was built from; may be
 * NULL), ./themes. Returns the first that exists (heap string) or NULL with
 * err listing where it looked. The default theme needs no file: it is
 * theme_init_default(). */
char *theme_find_path_alloc(const char *name, const char *themes_env, const char *exe_dir,
                            const char *source_dir, struct st_err *err);

/* What one role looks like on this terminal: colour indexes (-1 = default)
 * and attributes. Pure: screens and tests resolve a theme without ncurses. */
struct theme_resolved {
  int fg[THEME_ROLE_COUNT];
  int bg[THEME_ROLE_COUNT];
  unsigned attrs[THEME_ROLE_COUNT];
  bool use_color;
};
/* use_color false (no colours, NO_COLOR, the mono theme) keeps attributes
 * only and adds the attributes that replace colour in a monochrome scheme
 * (the selection is reversed, errors and titles are bold, ...). */
void theme_resolve(const struct theme *t, int n_colors, bool use_color,
                   struct theme_resolved *out);

#endif
