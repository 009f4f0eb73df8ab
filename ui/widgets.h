/* ui widgets: a cell grid that screens draw into, and pure widgets that draw
 * on it — boxes, braille line charts, segmented bars, tables, and number
 * formatting with units. Nothing here calls ncurses: the grid is copied to
 * the terminal by ui_grid_blit() (tui.c), so every widget is unit-tested by
 * reading the grid back as text. */
#ifndef SERVETOP_UI_WIDGETS_H
#define SERVETOP_UI_WIDGETS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "theme.h"

struct ui_rect {
  int x, y, w, h;  /* cells; w or h 0 = not shown */
};

/* One terminal cell: a UTF-8 glyph of width 1 and a semantic role. */
struct ui_cell {
  char glyph[5];
  uint8_t role;  /* enum theme_role */
};

struct ui_grid {
  int cols, rows;
  struct ui_cell *cells;  /* rows * cols, row-major, owned */
};

void ui_grid_init(struct ui_grid *g, int cols, int rows);
void ui_grid_fini(struct ui_grid *g);
/* Resizes (contents are cleared). */
void ui_grid_resize(struct ui_grid *g, int cols, int rows);
/* Every cell becomes a blank of role THEME_MAIN. */
void ui_grid_clear(struct ui_grid *g);
/* Fills a rectangle with blanks of a role (clipped to the grid). */
void ui_grid_fill(struct ui_grid *g, struct ui_rect r, enum theme_role role);
/* Sets one cell; outside the grid it does nothing. glyph is one UTF-8 character. */
void ui_grid_put(struct ui_grid *g, int x, int y, const char *glyph, enum theme_role role);
const struct ui_cell *ui_grid_at(const struct ui_grid *g, int x, int y);
/* Writes text from (x, y), one cell per UTF-8 character, at most max_cols
 * cells; text that does not fit ends in an ellipsis. Control characters
 * become '?'. Returns the cells written. */
int ui_grid_text(struct ui_grid *g, int x, int y, int max_cols, const char *text,
                 enum theme_role role, bool unicode);
struct ui_glyphs;
/* Writes text from x up to (not including) x_end, as ui_grid_text does (NULL
 * writes nothing); returns the column after it. Screens write a line of
 * pieces left to right with it. */
int ui_put(struct ui_grid *g, int x, int y, int x_end, const char *text, enum theme_role role,
           const struct ui_glyphs *gl);
/* The glyphs of row y as one string (heap), for tests and dumps. */
char *ui_grid_row_alloc(const struct ui_grid *g, int y);

/* Number of UTF-8 characters (cells) in s. */
int ui_text_cells(const char *s);
/* Byte offset of the n-th UTF-8 character (cell) of s, or of its end. */
size_t ui_text_offset(const char *s, int n);
/* The editing keys of a one-line text field of size bytes (NUL included):
 * Backspace deletes the last character (if any), a printable ASCII key is
 * appended when it fits. True when the key was one of those two; false for
 * any other key and for a printable one that does not fit. */
bool ui_edit_line(char *text, size_t size, int key);
/* Word-wraps text to width w, continuation lines starting at indent, and
 * draws the visual lines first..first+h-1 of it at (x, y) (g NULL: count
 * only). Returns the number of visual lines. */
int ui_wrap_text(struct ui_grid *g, int x, int y, int first, int h, int w, const char *text,
                 int indent, enum theme_role role, bool unicode);

/* A selection in a scrolled list of n rows, visible at a time: *sel moves to
 * row (clamped to the list) and *top follows so that it stays in view. */
void ui_list_select(size_t *sel, size_t *top, size_t n, long row, size_t visible);

/* ---------------------------------------------------------------- glyph sets */
struct ui_glyphs {
  const char *top_left, *top_right, *bottom_left, *bottom_right, *horizontal, *vertical;
  const char *bar_full, *bar_empty;
  const char *const *bar_partial;  /* 8 entries: 0/8 .. 7/8 of a cell ("" for 0) */
  const char *ellipsis, *mark, *tee_left, *tee_right;
  const char *separator;  /* between items of a title: " · " or " | " */
  bool braille;
};
/* UTF-8 (rounded boxes, braille, eighth blocks) or ASCII. */
const struct ui_glyphs *ui_glyphs_get(bool unicode);

/* ---------------------------------------------------------------- box */
/* A border around r with an optional title set into the top line. */
void ui_box(struct ui_grid *g, struct ui_rect r, const char *title, enum theme_role border_role,
            enum theme_role title_role, const struct ui_glyphs *gl);
/* The inside of a box drawn at r. */
struct ui_rect ui_rect_inner(struct ui_rect r);
/* A pane: a box in the border and title colours, titled; returns its inside (h 0 when the
 * box has no room inside). */
struct ui_rect ui_pane(struct ui_grid *g, struct ui_rect r, const char *title,
                       const struct ui_glyphs *gl);

/* ---------------------------------------------------------------- line chart */
/* A time series, oldest first; NaN is an unknown sample (a gap). The newest
 * sample sits at the right edge. */
struct ui_series {
  const double *values;
  size_t n;
  enum theme_role role;
};

struct ui_chart_opts {
  double y_min;           /* bottom of the scale */
  double y_max;           /* top of the scale; <= y_min: the largest visible value */
  const int *mark_ages;   /* vertical marks, in samples before the newest (0 = newest) */
  size_t n_marks;
  enum theme_role mark_role;
  bool level_valid;       /* a horizontal line at y = level (a limit: the batch cap), kept
                             in the scale; series draw over it */
  double level;
  enum theme_role level_role;
};

/* Samples shown per cell column: 2 with braille, 1 in ASCII. */
int ui_chart_samples_per_col(const struct ui_glyphs *gl);
/* Draws the series as lines into r: braille gives 2x4 dots per cell, ASCII
 * 1x3 ('.', '-', '\'', ':'/'|' for several). Where series overlap the later
 * one's role wins. Returns the top of the scale used (for the axis label). */
double ui_chart(struct ui_grid *g, struct ui_rect r, const struct ui_series *series,
                size_t n_series, const struct ui_chart_opts *opts, const struct ui_glyphs *gl);

/* An XY line: points joined in order (a sweep: one point per concurrency). */
struct ui_xy_series {
  const double *x, *y;  /* n points; a NaN coordinate skips the point */
  size_t n;
  enum theme_role role;
};
/* Draws XY lines into r on shared scales 0..x_max and 0..y_max (a max <= 0:
 * the largest value of any series). Each point is a dot, consecutive points
 * are joined. Returns the scales used through x_max_out / y_max_out. */
void ui_xy_chart(struct ui_grid *g, struct ui_rect r, const struct ui_xy_series *series,
                 size_t n_series, double x_max, double y_max, const struct ui_glyphs *gl,
                 double *x_max_out, double *y_max_out);

/* ---------------------------------------------------------------- bars */
struct ui_bar_segment {
  double value;          /* same unit as the bar's total; NaN/negative = 0 */
  enum theme_role role;
  char ascii_fill;       /* the ASCII fallback's fill character ('#', '=', ...) */
};
/* A horizontal bar of width w: segments in order, each covering value/total
 * of the width (eighth-cell precision in UTF-8), the rest empty. */
void ui_bar(struct ui_grid *g, int x, int y, int w, const struct ui_bar_segment *segs,
            size_t n_segs, double total, enum theme_role empty_role, const struct ui_glyphs *gl);

/* ---------------------------------------------------------------- table */
struct ui_table_col {
  const char *header;
  int width;           /* cells */
  bool align_right;
};
/* cells holds n_rows * n_cols strings, row-major (NULL = blank); roles, when
 * not NULL, gives a role per cell. The header row uses header_role. Rows that
 * do not fit in r are cut; columns past r's width are dropped. */
void ui_table(struct ui_grid *g, struct ui_rect r, const struct ui_table_col *cols, size_t n_cols,
              const char *const *cells, const uint8_t *roles, size_t n_rows,
              enum theme_role header_role, bool unicode);

/* Keys as the screens see them: printable ASCII as itself, the rest here.
 * tui.c translates ncurses key codes. */
enum ui_key {
  UI_KEY_UP = 0x10000,
  UI_KEY_DOWN,
  UI_KEY_LEFT,
  UI_KEY_RIGHT,
  UI_KEY_PAGE_UP,
  UI_KEY_PAGE_DOWN,
  UI_KEY_HOME,
  UI_KEY_END,
  UI_KEY_ENTER,
  UI_KEY_ESCAPE,
  UI_KEY_BACKSPACE,
  UI_KEY_TAB,
};

/* ---------------------------------------------------------------- key help overlay */
/* One entry of a screen's key table: the `?` help lists every entry; those
 * with a hint also show in the footer (screen.h lays it out). */
struct ui_key_help {
  const char *keys;       /* as the help lists them: "Up/Down k/j", "+ / -" */
  const char *what;       /* what they do; fits the help box at 80 columns */
  const char *hint;       /* footer label ("run"); NULL: help only */
  const char *hint_keys;  /* the footer's key text when it differs ("+/-"); NULL: keys */
  int code;               /* the key a click on the hint presses (0: none) */
  int drop;               /* footer: hints with the highest drop go first when narrow; 0 never */
};
/* The `?` row every screen's key table has (its text in one place). */
#define UI_KEY_HELP_ROW {"?", "this help (any key closes it)", "help", NULL, '?', 0}
/* A box centred on a cols x rows screen listing keys and what they do. */
void ui_help_box(struct ui_grid *g, int cols, int rows, const char *title,
                 const struct ui_key_help *help, size_t n, const struct ui_glyphs *gl);

/* ---------------------------------------------------------------- numbers with units
 * Each writes into buf (size n, >= 16 is always enough) and returns buf.
 * Unknown values (NaN) read "-". */
const char *ui_fmt_si(double v, char *buf, size_t n);           /* 950, 12.3k, 4.56M, 1.2G */
const char *ui_fmt_ms(double ms, char *buf, size_t n);          /* 850us, 12.3ms, 1.24s */
const char *ui_fmt_bytes(double bytes, char *buf, size_t n);    /* 512B, 12.0MiB, 79.6GiB */
const char *ui_fmt_duration_s(double s, char *buf, size_t n);   /* 42s, 3m05s, 1h02m */
const char *ui_fmt_pct(double frac, char *buf, size_t n);       /* 0.873 -> 87.3% */
/* A file's path as the user reads it: relative to the directory servetop was
 * started in when the file is below it (configs/x.yaml), else as it is. */
const char *ui_path_shown(const char *path);

#endif
