/* The full-screen server log: reading the file as it grows, search, follow,
 * scrolling (pure but for the file; no ncurses). */
#include "logview.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

enum { KEY_NEXT = 7 }; /* index of the hint that can be inactive */
static const struct ui_key_help keys[] = {
    {"Up/Down k/j", "scroll a line", NULL, NULL, 0, 0},
    {"PgUp/PgDn", "scroll a page", NULL, NULL, 0, 0},
    {"Home/End g/G", "the first / the last line (End and G follow)", NULL, NULL, 0, 0},
    {"Left/Right", "scroll long lines sideways", NULL, NULL, 0, 0},
    {"f", "follow new lines on / off", "follow", NULL, 'f', 2},
    {"/", "search, in any case (Enter on nothing clears it)", "search", NULL, '/', 1},
    {"Enter/Esc/Bksp", "(search) search / cancel / delete a character", NULL, NULL, 0, 0},
    {"n / N", "the next / the previous match", "match", "n/N", 'n', 3},
    {"mouse", "the wheel scrolls", NULL, NULL, 0, 0},
    UI_KEY_HELP_ROW,
    {"q Esc l", "back to the run", "back", "q", 'q', 0},
};

enum theme_role ui_log_line_role(const char *line) {
  if (strstr(line, "Traceback") || strstr(line, "Error") || strstr(line, "error"))
    return THEME_ERROR;
  if (strstr(line, "WARNING") || strstr(line, "Warning"))
    return THEME_WARNING;
  if (strstr(line, "ready to roll"))
    return THEME_OK;
  return THEME_INACTIVE;
}

void logview_init(struct logview *lv) {
  memset(lv, 0, sizeof *lv);
  lv->fd = -1;
  lv->follow = true;
  lv->page = 20;
  lv->width = 78;
  lv->match = SIZE_MAX;
}

static void clear_lines(struct logview *lv) {
  for (size_t i = 0; i < lv->n_lines; i++)
    free(lv->lines[i]);
  free(lv->lines);
  lv->lines = NULL;
  lv->n_lines = lv->cap = 0;
  lv->dropped = 0;
  lv->n_matches = 0;
  lv->match = SIZE_MAX;
  lv->top = 0;
  sbuf_reset(&lv->partial);
}

void logview_fini(struct logview *lv) {
  clear_lines(lv);
  sbuf_free(&lv->partial);
  if (lv->fd >= 0)
    close(lv->fd);
  logview_init(lv);
}

void logview_open(struct logview *lv, const char *path, const char *title) {
  snprintf(lv->title, sizeof lv->title, "%s", title ? title : "");
  if (strcmp(lv->path, path) == 0)
    return;
  char keep_title[sizeof lv->title];
  memcpy(keep_title, lv->title, sizeof keep_title);
  logview_fini(lv);
  memcpy(lv->title, keep_title, sizeof keep_title);
  snprintf(lv->path, sizeof lv->path, "%s", path);
}

static bool matches(const struct logview *lv, const char *line) {
  return lv->pattern[0] && strcasestr(line, lv->pattern) != NULL;
}

/* Drops the oldest tenth of the lines; positions move with what stays. */
static void drop_oldest(struct logview *lv) {
  size_t drop = LOGVIEW_MAX_LINES / 10;
  for (size_t i = 0; i < drop; i++) {
    lv->n_matches -= matches(lv, lv->lines[i]);
    free(lv->lines[i]);
  }
  memmove(lv->lines, lv->lines + drop, (lv->n_lines - drop) * sizeof *lv->lines);
  lv->n_lines -= drop;
  lv->dropped += drop;
  lv->top = lv->top > drop ? lv->top - drop : 0;
  lv->match = lv->match != SIZE_MAX && lv->match >= drop ? lv->match - drop : SIZE_MAX;
}

/* One finished line: terminal escape sequences go, tabs become blanks. */
static void add_line(struct logview *lv, const char *text, size_t len) {
  struct sbuf out = {0};
  int col = 0;
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)text[i];
    if (c == 0x1b && i + 1 < len && text[i + 1] == '[') { /* CSI ... final byte */
      i += 2;
      while (i < len && !((unsigned char)text[i] >= 0x40 && (unsigned char)text[i] <= 0x7e))
        i++;
      continue;
    }
    if (c == '\r')
      continue;
    if (c == '\t') {
      do
        sbuf_putc(&out, ' ');
      while (++col % 8);
      continue;
    }
    sbuf_putc(&out, (char)c);
    if ((c & 0xc0) != 0x80)
      col++;
  }
  char *line = out.data ? sbuf_take(&out) : xstrdup("");
  if (lv->n_lines == lv->cap) {
    lv->cap = lv->cap ? lv->cap * 2 : 256;
    lv->lines = xreallocarray(lv->lines, lv->cap, sizeof *lv->lines);
  }
  lv->lines[lv->n_lines++] = line;
  lv->n_matches += matches(lv, line);
  if (lv->n_lines > LOGVIEW_MAX_LINES)
    drop_oldest(lv);
}

void logview_append(struct logview *lv, const char *data, size_t n) {
  const char *p = data, *end = data + n;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    if (!nl) {
      sbuf_append(&lv->partial, p, (size_t)(end - p));
      break;
    }
    if (lv->partial.len) {
      sbuf_append(&lv->partial, p, (size_t)(nl - p));
      add_line(lv, lv->partial.data, lv->partial.len);
      sbuf_reset(&lv->partial);
    } else {
      add_line(lv, p, (size_t)(nl - p));
    }
    p = nl + 1;
  }
}

bool logview_poll(struct logview *lv) {
  if (!lv->path[0])
    return false;
  if (lv->fd < 0) {
    lv->fd = open(lv->path, O_RDONLY | O_CLOEXEC);
    if (lv->fd < 0) {
      snprintf(lv->status, sizeof lv->status, "no server log yet (%s)",
               errno == ENOENT ? "the server has not started" : strerror(errno));
      lv->status_role = THEME_INACTIVE;
      return false;
    }
    lv->status[0] = '\0';
  }
  struct stat st;
  if (fstat(lv->fd, &st) != 0)
    return false;
  if ((uint64_t)st.st_size < lv->offset) { /* truncated: read it again */
    clear_lines(lv);
    lv->offset = 0;
  }
  bool added = false;
  size_t budget = LOGVIEW_READ_BYTES;
  char buf[65536];
  while (budget > 0 && lv->offset < (uint64_t)st.st_size) {
    size_t want = budget < sizeof buf ? budget : sizeof buf;
    ssize_t got = pread(lv->fd, buf, want, (off_t)lv->offset);
    if (got <= 0)
      break;
    size_t before = lv->n_lines + lv->dropped;
    logview_append(lv, buf, (size_t)got);
    added = added || lv->n_lines + lv->dropped != before;
    lv->offset += (uint64_t)got;
    budget -= (size_t)got;
  }
  return added;
}

/* ---------------------------------------------------------------- moving */

static size_t max_top(const struct logview *lv) {
  size_t page = lv->page > 0 ? (size_t)lv->page : 1;
  return lv->n_lines > page ? lv->n_lines - page : 0;
}

static void scroll(struct logview *lv, long lines) {
  long top = (long)lv->top + lines;
  if (top < 0)
    top = 0;
  if ((size_t)top >= max_top(lv))
    top = (long)max_top(lv);
  lv->top = (size_t)top;
  if (lines < 0)
    lv->follow = false;
}

/* Puts line i in view, a third down the page, and its match in sight when
 * it lies beyond the columns shown. */
static void show_line(struct logview *lv, size_t i) {
  size_t third = lv->page > 3 ? (size_t)lv->page / 3 : 0;
  lv->top = i > third ? i - third : 0;
  if (lv->top > max_top(lv))
    lv->top = max_top(lv);
  lv->follow = false;
  const char *m = lv->pattern[0] ? strcasestr(lv->lines[i], lv->pattern) : NULL;
  if (!m)
    return;
  int col = 0, len = ui_text_cells(lv->pattern);
  for (const char *p = lv->lines[i]; p < m; p++)
    col += ((unsigned char)*p & 0xc0) != 0x80;
  if (col < lv->left || col + len > lv->left + lv->width)
    lv->left = col + len <= lv->width ? 0 : col - lv->width / 3;
}

/* The next match after from (step 1) or before it (-1), wrapping around. */
static void find_match(struct logview *lv, size_t from, int step, bool inclusive) {
  if (!lv->pattern[0] || lv->n_lines == 0)
    return;
  size_t n = lv->n_lines;
  size_t start = from >= n ? (step > 0 ? 0 : n - 1) : from;
  for (size_t k = inclusive ? 0 : 1; k <= n; k++) {
    size_t i = step > 0 ? (start + k) % n : (start + n - k % n) % n;
    if (matches(lv, lv->lines[i])) {
      bool wrapped = step > 0 ? i < start : i > start;
      lv->match = i;
      show_line(lv, i);
      snprintf(lv->status, sizeof lv->status, "%s", wrapped ? "search wrapped around" : "");
      lv->status_role = THEME_WARNING;
      return;
    }
  }
  lv->match = SIZE_MAX;
}

void logview_search(struct logview *lv, const char *pattern) {
  snprintf(lv->pattern, sizeof lv->pattern, "%s", pattern);
  lv->n_matches = 0;
  lv->match = SIZE_MAX;
  lv->status[0] = '\0';
  if (!lv->pattern[0])
    return;
  for (size_t i = 0; i < lv->n_lines; i++)
    lv->n_matches += matches(lv, lv->lines[i]);
  if (lv->follow) /* at the newest lines: the latest match */
    find_match(lv, lv->n_lines ? lv->n_lines - 1 : 0, -1, true);
  else
    find_match(lv, lv->top, 1, true);
}

/* ---------------------------------------------------------------- keys */

static bool search_key(struct logview *lv, int key) {
  if (key == UI_KEY_ENTER) {
    lv->searching = false;
    logview_search(lv, lv->typed);
  } else if (key == UI_KEY_ESCAPE) {
    lv->searching = false;
  } else {
    return ui_edit_line(lv->typed, sizeof lv->typed, key);
  }
  return true;
}

static bool on_key(void *self, int key, struct ui_ctx *ctx) {
  struct logview *lv = self;
  if (lv->searching)
    return search_key(lv, key);
  long page = lv->page > 1 ? lv->page - 1 : 1;
  switch (key) {
  case 'q':
  case 'Q':
  case 'l':
  case UI_KEY_ESCAPE: ctx->cmd.kind = UI_CMD_CLOSE; return true;
  case UI_KEY_UP:
  case 'k': scroll(lv, -1); return true;
  case UI_KEY_DOWN:
  case 'j': scroll(lv, 1); return true;
  case UI_KEY_PAGE_UP: scroll(lv, -page); return true;
  case UI_KEY_PAGE_DOWN: scroll(lv, page); return true;
  case UI_KEY_HOME:
  case 'g':
    lv->top = 0;
    lv->follow = false;
    return true;
  case UI_KEY_END:
  case 'G':
    lv->top = max_top(lv);
    lv->follow = true;
    return true;
  case UI_KEY_LEFT:
    lv->left = lv->left > 8 ? lv->left - 8 : 0;
    return true;
  case UI_KEY_RIGHT: lv->left += 8; return true;
  case 'f':
    lv->follow = !lv->follow;
    if (lv->follow)
      lv->top = max_top(lv);
    return true;
  case '/':
    lv->searching = true;
    lv->typed[0] = '\0';
    return true;
  case 'n':
  case 'N':
    if (!lv->pattern[0]) {
      snprintf(lv->status, sizeof lv->status, "no search yet: / searches");
      lv->status_role = THEME_WARNING;
      return true;
    }
    find_match(lv, lv->match != SIZE_MAX ? lv->match : lv->top, key == 'n' ? 1 : -1,
               lv->match == SIZE_MAX);
    return true;
  default: return false;
  }
}

static bool on_wheel(void *self, int x, int y, int lines, struct ui_ctx *ctx) {
  (void)x;
  (void)y;
  (void)ctx;
  scroll(self, lines);
  return true;
}

/* ---------------------------------------------------------------- drawing */

/* One line from column left into w cells at (x, y), matches highlighted. */
static void draw_line(const struct logview *lv, struct ui_grid *g, int x, int y, int w,
                      const char *line, bool current, const struct ui_glyphs *gl) {
  const char *shown = line + ui_text_offset(line, lv->left);
  enum theme_role role = current ? THEME_TITLE : ui_log_line_role(line);
  ui_grid_text(g, x, y, w, shown, role, gl->braille);
  if (!lv->pattern[0])
    return;
  size_t plen = strlen(lv->pattern);
  for (const char *m = strcasestr(shown, lv->pattern); m; m = strcasestr(m + plen, lv->pattern)) {
    /* the cells of the match: characters from the start of shown */
    int c0 = 0;
    for (const char *p = shown; p < m; p++)
      c0 += ((unsigned char)*p & 0xc0) != 0x80;
    int cells = 0;
    for (const char *p = m; p < m + plen; p++)
      cells += ((unsigned char)*p & 0xc0) != 0x80;
    for (int c = c0; c < c0 + cells && c < w; c++) {
      const struct ui_cell *cell = ui_grid_at(g, x + c, y);
      if (!cell)
        break;
      char glyph[5];
      memcpy(glyph, cell->glyph, sizeof glyph);
      ui_grid_put(g, x + c, y, glyph, THEME_SELECTED);
    }
  }
}

static void render(void *self, struct ui_grid *g, const struct ui_ctx *ctx) {
  struct logview *lv = self;
  const struct ui_layout *l = ctx->layout;
  const struct ui_glyphs *gl = ctx->gl;
  if (!ui_frame_begin(g, l, gl))
    return;
  struct ui_rect h = l->slot[UI_SLOT_HEADER];
  ui_grid_fill(g, h, THEME_HEADER);
  char text[1400];
  snprintf(text, sizeof text, " servetop%sserver log%s%s%s%s", gl->separator,
           lv->title[0] ? gl->separator : "", lv->title, gl->separator, lv->path);
  ui_grid_text(g, h.x, h.y, h.w, text, THEME_HEADER, gl->braille);

  struct ui_rect box = l->slot[UI_SLOT_BODY];
  struct ui_rect in = ui_rect_inner(box);
  lv->page = in.h > 0 ? in.h : 1;
  lv->width = in.w - 1 > 1 ? in.w - 1 : 1;
  if (lv->follow || lv->top > max_top(lv))
    lv->top = max_top(lv);
  size_t last = lv->top + (size_t)lv->page < lv->n_lines ? lv->top + (size_t)lv->page : lv->n_lines;
  char title[200];
  int n = snprintf(title, sizeof title, "Server log%slines %zu-%zu of %zu", gl->separator,
                   lv->n_lines ? lv->top + 1 : 0, last, lv->n_lines);
  if (lv->dropped && n > 0 && (size_t)n < sizeof title)
    n += snprintf(title + n, sizeof title - (size_t)n, " (%llu older dropped)",
                  (unsigned long long)lv->dropped);
  if (n > 0 && (size_t)n < sizeof title)
    snprintf(title + n, sizeof title - (size_t)n, "%s%s", gl->separator,
             lv->follow ? "following" : "f follows");
  ui_box(g, box, title, THEME_BORDER, lv->follow ? THEME_TITLE : THEME_WARNING, gl);
  if (lv->n_lines == 0) {
    ui_grid_text(g, in.x + 1, in.y, in.w - 1, lv->status[0] ? lv->status : "(no output yet)",
                 THEME_INACTIVE, gl->braille);
    return;
  }
  for (int i = 0; i < lv->page && lv->top + (size_t)i < lv->n_lines; i++) {
    size_t idx = lv->top + (size_t)i;
    bool current = idx == lv->match;
    if (current)
      ui_grid_text(g, in.x, in.y + i, 1, ">", THEME_HOTKEY, gl->braille);
    draw_line(lv, g, in.x + 1, in.y + i, in.w - 1, lv->lines[idx], current, gl);
  }
}

static void footer(void *self, struct ui_footer *f) {
  struct logview *lv = self;
  if (lv->searching) {
    ui_footer_input(f, "search: /", lv->typed, "(Enter searches, Esc cancels)");
    return;
  }
  if (!lv->pattern[0])
    f->inactive |= 1u << KEY_NEXT;
  if (lv->pattern[0]) {
    if (lv->n_matches == 0)
      snprintf(lv->footer_text, sizeof lv->footer_text, "/%.120s: not found", lv->pattern);
    else
      snprintf(lv->footer_text, sizeof lv->footer_text, "/%.120s: %zu matching line%s%s%.60s",
               lv->pattern, lv->n_matches, lv->n_matches == 1 ? "" : "s", lv->status[0] ? ", " : "",
               lv->status);
    f->status = lv->footer_text;
    f->status_role = lv->n_matches ? THEME_OK : THEME_WARNING;
  } else if (lv->status[0]) {
    f->status = lv->status;
    f->status_role = lv->status_role;
  }
}

static bool tick(void *self) {
  return logview_poll(self);
}

const struct ui_screen logview_screen = {
    .name = "log",
    .help_title = "Server log keys",
    .keys = keys,
    .n_keys = ST_ARRAY_LEN(keys),
    .view = UI_VIEW_PAGE,
    .key = on_key,
    .click = NULL,
    .wheel = on_wheel,
    .render = render,
    .footer = footer,
    .tick = tick,
};
