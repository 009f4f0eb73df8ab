/* The cell grid, glyph sets, boxes and tables (pure; no ncurses). */
#include "widgets.h"

#include <stdlib.h>
#include <string.h>

#include "ui_util.h"

void ui_grid_init(struct ui_grid *g, int cols, int rows) {
  g->cols = cols > 0 ? cols : 0;
  g->rows = rows > 0 ? rows : 0;
  g->cells = xcalloc((size_t)g->cols * (size_t)g->rows + 1, sizeof *g->cells);
  ui_grid_clear(g);
}

void ui_grid_fini(struct ui_grid *g) {
  free(g->cells);
  g->cells = NULL;
  g->cols = g->rows = 0;
}

void ui_grid_resize(struct ui_grid *g, int cols, int rows) {
  ui_grid_fini(g);
  ui_grid_init(g, cols, rows);
}

void ui_grid_clear(struct ui_grid *g) {
  ui_grid_fill(g, (struct ui_rect){0, 0, g->cols, g->rows}, THEME_MAIN);
}

void ui_grid_fill(struct ui_grid *g, struct ui_rect r, enum theme_role role) {
  for (int y = r.y; y < r.y + r.h; y++)
    for (int x = r.x; x < r.x + r.w; x++)
      ui_grid_put(g, x, y, " ", role);
}

void ui_grid_put(struct ui_grid *g, int x, int y, const char *glyph, enum theme_role role) {
  if (x < 0 || y < 0 || x >= g->cols || y >= g->rows)
    return;
  struct ui_cell *c = &g->cells[(size_t)y * (size_t)g->cols + (size_t)x];
  size_t len = strlen(glyph);
  if (len >= sizeof c->glyph)
    len = sizeof c->glyph - 1;
  memcpy(c->glyph, glyph, len);
  c->glyph[len] = '\0';
  c->role = (uint8_t)role;
}

const struct ui_cell *ui_grid_at(const struct ui_grid *g, int x, int y) {
  if (x < 0 || y < 0 || x >= g->cols || y >= g->rows)
    return NULL;
  return &g->cells[(size_t)y * (size_t)g->cols + (size_t)x];
}

/* Length of the UTF-8 sequence starting at s (1 for a stray byte). */
static size_t utf8_len(const unsigned char *s) {
  size_t want = *s < 0x80 ? 1 : (*s >> 5) == 0x6 ? 2 : (*s >> 4) == 0xe ? 3 : (*s >> 3) == 0x1e ? 4 : 1;
  for (size_t i = 1; i < want; i++)
    if ((s[i] & 0xc0) != 0x80)
      return 1;
  return want;
}

int ui_text_cells(const char *s) {
  int n = 0;
  for (const unsigned char *p = (const unsigned char *)s; *p; p += utf8_len(p))
    n++;
  return n;
}

int ui_grid_text(struct ui_grid *g, int x, int y, int max_cols, const char *text,
                 enum theme_role role, bool unicode) {
  if (max_cols <= 0 || !text)
    return 0;
  int total = ui_text_cells(text);
  int shown = total <= max_cols ? total : max_cols - 1;
  const unsigned char *p = (const unsigned char *)text;
  int col = 0;
  for (; col < shown; col++) {
    size_t len = utf8_len(p);
    char glyph[5] = {0};
    if (len == 1 && (*p < 0x20 || *p == 0x7f || *p >= 0x80))
      glyph[0] = '?';
    else
      memcpy(glyph, p, len);
    ui_grid_put(g, x + col, y, glyph, role);
    p += len;
  }
  if (shown < total) {
    ui_grid_put(g, x + col, y, ui_glyphs_get(unicode)->ellipsis, role);
    col++;
  }
  return col;
}

char *ui_grid_row_alloc(const struct ui_grid *g, int y) {
  struct sbuf sb = {0};
  sbuf_puts(&sb, "");
  for (int x = 0; x < g->cols && y >= 0 && y < g->rows; x++)
    sbuf_puts(&sb, g->cells[(size_t)y * (size_t)g->cols + (size_t)x].glyph);
  return sbuf_take(&sb);
}

static const char *const partial_utf8[8] = {"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"};
static const char *const partial_ascii[8] = {"", "", "", "", "", "", "", ""};

static const struct ui_glyphs glyphs_utf8 = {
    .top_left = "╭", .top_right = "╮", .bottom_left = "╰", .bottom_right = "╯",
    .horizontal = "─", .vertical = "│", .bar_full = "█", .bar_empty = "·",
    .bar_partial = partial_utf8, .ellipsis = "…", .mark = "┊", .tee_left = "┤",
    .tee_right = "├", .separator = " · ", .braille = true,
};
static const struct ui_glyphs glyphs_ascii = {
    .top_left = "+", .top_right = "+", .bottom_left = "+", .bottom_right = "+",
    .horizontal = "-", .vertical = "|", .bar_full = "#", .bar_empty = ".",
    .bar_partial = partial_ascii, .ellipsis = "~", .mark = ":", .tee_left = "[",
    .tee_right = "]", .separator = " | ", .braille = false,
};

const struct ui_glyphs *ui_glyphs_get(bool unicode) {
  return unicode ? &glyphs_utf8 : &glyphs_ascii;
}

struct ui_rect ui_rect_inner(struct ui_rect r) {
  struct ui_rect in = {r.x + 1, r.y + 1, r.w - 2, r.h - 2};
  if (in.w < 0)
    in.w = 0;
  if (in.h < 0)
    in.h = 0;
  return in;
}

struct ui_rect ui_pane(struct ui_grid *g, struct ui_rect r, const char *title,
                       const struct ui_glyphs *gl) {
  ui_box(g, r, title, THEME_BORDER, THEME_TITLE, gl);
  return ui_rect_inner(r);
}

void ui_box(struct ui_grid *g, struct ui_rect r, const char *title, enum theme_role border_role,
            enum theme_role title_role, const struct ui_glyphs *gl) {
  if (r.w < 2 || r.h < 2)
    return;
  int right = r.x + r.w - 1, bottom = r.y + r.h - 1;
  for (int x = r.x + 1; x < right; x++) {
    ui_grid_put(g, x, r.y, gl->horizontal, border_role);
    ui_grid_put(g, x, bottom, gl->horizontal, border_role);
  }
  for (int y = r.y + 1; y < bottom; y++) {
    ui_grid_put(g, r.x, y, gl->vertical, border_role);
    ui_grid_put(g, right, y, gl->vertical, border_role);
  }
  ui_grid_put(g, r.x, r.y, gl->top_left, border_role);
  ui_grid_put(g, right, r.y, gl->top_right, border_role);
  ui_grid_put(g, r.x, bottom, gl->bottom_left, border_role);
  ui_grid_put(g, right, bottom, gl->bottom_right, border_role);
  /* "╭─┤ title ├──╮": the title needs the corner, one line cell and its tees */
  if (title && *title && r.w >= 8) {
    int x = r.x + 2;
    ui_grid_put(g, x++, r.y, gl->tee_left, border_role);
    ui_grid_put(g, x++, r.y, " ", title_role);
    x += ui_grid_text(g, x, r.y, r.w - 8, title, title_role, gl->braille);
    ui_grid_put(g, x++, r.y, " ", title_role);
    ui_grid_put(g, x, r.y, gl->tee_right, border_role);
  }
}

void ui_table(struct ui_grid *g, struct ui_rect r, const struct ui_table_col *cols, size_t n_cols,
              const char *const *cells, const uint8_t *roles, size_t n_rows,
              enum theme_role header_role, bool unicode) {
  if (r.w <= 0 || r.h <= 0)
    return;
  int x = r.x;
  for (size_t c = 0; c < n_cols; c++) {
    int w = cols[c].width;
    if (x + w > r.x + r.w)
      break;  /* drop columns that do not fit whole */
    for (size_t row = 0; row <= n_rows && (int)row < r.h; row++) {
      const char *text = row == 0 ? cols[c].header : cells[(row - 1) * n_cols + c];
      enum theme_role role = row == 0 ? header_role
                             : roles  ? (enum theme_role)roles[(row - 1) * n_cols + c]
                                      : THEME_MAIN;
      if (!text)
        continue;
      int len = ui_text_cells(text);
      int pad = cols[c].align_right && len < w ? w - len : 0;
      ui_grid_text(g, x + pad, r.y + (int)row, w, text, role, unicode);
    }
    x += w + 1;  /* one blank between columns */
  }
}

void ui_help_box(struct ui_grid *g, int cols, int rows, const char *title,
                 const struct ui_key_help *help, size_t n, const struct ui_glyphs *gl) {
  int keys_w = 0, what_w = 0;
  for (size_t i = 0; i < n; i++) {
    int k = ui_text_cells(help[i].keys), w = ui_text_cells(help[i].what);
    keys_w = k > keys_w ? k : keys_w;
    what_w = w > what_w ? w : what_w;
  }
  int w = keys_w + what_w + 7;
  if (w > cols - 2)
    w = cols - 2;
  int h = (int)n + 4;
  if (h > rows)
    h = rows;
  struct ui_rect box = {(cols - w) / 2, (rows - h) / 2, w, h};
  ui_grid_fill(g, box, THEME_MAIN);
  ui_box(g, box, title, THEME_BORDER, THEME_TITLE, gl);
  for (size_t i = 0; i < n && (int)i < h - 4; i++) {
    int y = box.y + 2 + (int)i;
    ui_grid_text(g, box.x + 2, y, keys_w, help[i].keys, THEME_HOTKEY, gl->braille);
    ui_grid_text(g, box.x + 4 + keys_w, y, box.w - keys_w - 6, help[i].what, THEME_MAIN,
                 gl->braille);
  }
}

size_t ui_text_offset(const char *s, int n) {
  const unsigned char *p = (const unsigned char *)s;
  while (*p && n > 0) {
    p++;
    while ((*p & 0xc0) == 0x80)
      p++;
    n--;
  }
  return (size_t)(p - (const unsigned char *)s);
}

/* Word-wraps text to width w, continuation lines starting at indent, and
 * draws the visual lines first..first+h-1 of it at (x, y) (g NULL: count
 * only). Returns the number of visual lines. */
int ui_wrap_text(struct ui_grid *g, int x, int y, int first, int h, int w, const char *text,
                 int indent, enum theme_role role, bool unicode) {
  if (w < 1)
    return 1;
  int n = 0;
  const char *rest = text;
  do {
    int lead = n == 0 ? 0 : indent;
    int avail = w - lead > 1 ? w - lead : w;
    if (avail == w)
      lead = 0;
    int cells = ui_text_cells(rest);
    size_t take = ui_text_offset(rest, cells <= avail ? cells : avail);
    size_t skip = take;
    if (cells > avail) {
      /* break after the last blank that fits, when there is one */
      for (size_t i = take; i > 0; i--)
        if (rest[i] == ' ') {
          take = i;
          skip = i + 1;
          break;
        }
    }
    if (g && n >= first && n < first + h) {
      char *piece = xstrndup(rest, take);
      ui_grid_text(g, x + lead, y + n - first, avail, piece, role, unicode);
      free(piece);
    }
    rest += skip;
    n++;
  } while (*rest);
  return n;
}

int ui_put(struct ui_grid *g, int x, int y, int x_end, const char *text, enum theme_role role,
           const struct ui_glyphs *gl) {
  if (x >= x_end || !text)
    return x;
  return x + ui_grid_text(g, x, y, x_end - x, text, role, gl->braille);
}

void ui_list_select(size_t *sel, size_t *top, size_t n, long row, size_t visible) {
  if (n == 0)
    return;
  if (row < 0)
    row = 0;
  if (row >= (long)n)
    row = (long)n - 1;
  *sel = (size_t)row;
  if (visible == 0)
    visible = 1;
  if (*sel < *top)
    *top = *sel;
  if (*sel >= *top + visible)
    *top = *sel - visible + 1;
}
