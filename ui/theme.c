/* Theme files: parsing, fallbacks and colour mapping (pure; no ncurses). */
#include "theme.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ui_util.h"

/* The built-in default theme (dark terminal) is written in the theme
 * language itself, so it documents the format and goes through the same
 * parser as every file. It is compiled in: `--theme default` needs no file.
 * themes/default.theme carries the same values (a test checks) as a starting
 * point for one's own. */
struct role_info {
  const char *name;
  const char *default_value;
  enum theme_role fallback;  /* itself when there is none */
  unsigned mono_attrs;       /* what replaces colour when there is none */
};

static const struct role_info roles[THEME_ROLE_COUNT] = {
    [THEME_MAIN] = {"main", "", THEME_MAIN, 0},
    [THEME_TITLE] = {"title", "#61afef bold", THEME_TITLE, THEME_ATTR_BOLD},
    [THEME_BORDER] = {"border", "#5c6370", THEME_BORDER, 0},
    [THEME_HOTKEY] = {"hotkey", "#e5c07b bold", THEME_TITLE, THEME_ATTR_BOLD},
    [THEME_SELECTED] = {"selected", "#1e2127 on #61afef", THEME_SELECTED, THEME_ATTR_REVERSE},
    [THEME_INACTIVE] = {"inactive", "#7f848e", THEME_INACTIVE, THEME_ATTR_DIM},
    [THEME_HEADER] = {"header", "#c678dd bold", THEME_TITLE, THEME_ATTR_BOLD | THEME_ATTR_UNDERLINE},
    [THEME_OK] = {"ok", "#98c379", THEME_OK, 0},
    [THEME_WARNING] = {"warning", "#e5c07b", THEME_WARNING, THEME_ATTR_BOLD},
    [THEME_ERROR] = {"error", "#e06c75 bold", THEME_ERROR, THEME_ATTR_BOLD | THEME_ATTR_REVERSE},
    [THEME_NOTE] = {"note", "#56b6c2", THEME_INACTIVE, 0},
    [THEME_CHART_OUTPUT] = {"chart_output", "#56b6c2", THEME_CHART_OUTPUT, 0},
    [THEME_CHART_TOTAL] = {"chart_total", "#c678dd", THEME_CHART_OUTPUT, 0},
    [THEME_CHART_RPS] = {"chart_rps", "#e5c07b", THEME_CHART_OUTPUT, 0},
    [THEME_CHART_ACCEPT] = {"chart_accept", "#98c379", THEME_CHART_OUTPUT, 0},
    [THEME_CHART_MARK] = {"chart_mark", "#e06c75", THEME_WARNING, THEME_ATTR_BOLD},
    [THEME_BAR_SERVER] = {"bar_server", "#61afef", THEME_CHART_OUTPUT, 0},
    [THEME_BAR_OTHER] = {"bar_other", "#d19a66", THEME_WARNING, 0},
    [THEME_BAR_FREE] = {"bar_free", "#3e4451", THEME_INACTIVE, THEME_ATTR_DIM},
    [THEME_ARM_MTP] = {"arm_mtp", "#56b6c2 bold", THEME_CHART_OUTPUT, THEME_ATTR_BOLD},
    [THEME_ARM_OFF] = {"arm_off", "#d19a66 bold", THEME_CHART_TOTAL, THEME_ATTR_BOLD},
};

const char *theme_role_name(enum theme_role role) {
  if ((unsigned)role >= THEME_ROLE_COUNT)
    return NULL;
  return roles[role].name;
}

static const char *const basic_names[8] = {"black", "red",     "green", "yellow",
                                           "blue",  "magenta", "cyan",  "white"};

/* xterm's 16 system colours, used to match RGB on 8/16-colour terminals. */
static const uint8_t xterm16_rgb[16][3] = {
    {0, 0, 0},       {205, 0, 0},     {0, 205, 0},   {205, 205, 0},
    {0, 0, 238},     {205, 0, 205},   {0, 205, 205}, {229, 229, 229},
    {127, 127, 127}, {255, 0, 0},     {0, 255, 0},   {255, 255, 0},
    {92, 92, 255},   {255, 0, 255},   {0, 255, 255}, {255, 255, 255},
};
static const uint8_t cube_levels[6] = {0, 95, 135, 175, 215, 255};

static void xterm_index_to_rgb(int index, uint8_t rgb[3]) {
  if (index < 16) {
    memcpy(rgb, xterm16_rgb[index], 3);
  } else if (index < 232) {
    int i = index - 16;
    rgb[0] = cube_levels[i / 36];
    rgb[1] = cube_levels[(i / 6) % 6];
    rgb[2] = cube_levels[i % 6];
  } else {
    uint8_t grey = (uint8_t)(8 + 10 * (index - 232));
    rgb[0] = rgb[1] = rgb[2] = grey;
  }
}

static long rgb_distance2(const uint8_t a[3], const uint8_t b[3]) {
  long d = 0;
  for (int i = 0; i < 3; i++) {
    long c = (long)a[i] - (long)b[i];
    d += c * c;
  }
  return d;
}

static int nearest_cube_level(int v) {
  int best = 0;
  for (int i = 1; i < 6; i++)
    if (abs(cube_levels[i] - v) < abs(cube_levels[best] - v))
      best = i;
  return best;
}

static int nearest_xterm256(const uint8_t rgb[3]) {
  int cube = 16 + 36 * nearest_cube_level(rgb[0]) + 6 * nearest_cube_level(rgb[1]) +
             nearest_cube_level(rgb[2]);
  int mean = (rgb[0] + rgb[1] + rgb[2]) / 3;
  int grey_step = mean < 8 ? 0 : (mean - 8 + 5) / 10;
  if (grey_step > 23)
    grey_step = 23;
  int grey = 232 + grey_step;
  uint8_t c[3], g[3];
  xterm_index_to_rgb(cube, c);
  xterm_index_to_rgb(grey, g);
  return rgb_distance2(rgb, g) < rgb_distance2(rgb, c) ? grey : cube;
}

/* Nearest of the 8 basic colours by hue, not by RGB distance: distance sends
 * salmon to magenta and pale green to white. A channel is "on" when it lies in
 * the upper half of the colour's own range; greys go to black or white by
 * brightness. With 16 colours, very bright colours take the bright variant. */
static int nearest_basic(const uint8_t rgb[3], int n_basic) {
  int lo = rgb[0], hi = rgb[0];
  for (int i = 1; i < 3; i++) {
    lo = rgb[i] < lo ? rgb[i] : lo;
    hi = rgb[i] > hi ? rgb[i] : hi;
  }
  int index;
  if (hi - lo < 48) {
    index = (rgb[0] + rgb[1] + rgb[2]) / 3 >= 96 ? 7 : 0;
  } else {
    index = 0;
    for (int i = 0; i < 3; i++)
      if (2 * (rgb[i] - lo) > hi - lo)
        index |= 1 << i;
  }
  if (n_basic >= 16 && hi >= 240)
    index += 8;
  return index;
}

int theme_color_to_terminal(struct theme_color c, int n_colors) {
  if (c.kind == THEME_COLOR_DEFAULT || n_colors < 8)
    return -1;
  if (c.kind == THEME_COLOR_INDEX && c.index < n_colors)
    return c.index;
  uint8_t rgb[3] = {c.r, c.g, c.b};
  if (c.kind == THEME_COLOR_INDEX)
    xterm_index_to_rgb(c.index, rgb);
  if (n_colors >= 256)
    return nearest_xterm256(rgb);
  return nearest_basic(rgb, n_colors >= 16 ? 16 : 8);
}

static int hex_digit(int ch) {
  if (ch >= '0' && ch <= '9')
    return ch - '0';
  ch = tolower(ch);
  if (ch >= 'a' && ch <= 'f')
    return ch - 'a' + 10;
  return -1;
}

int theme_color_parse(const char *token, struct theme_color *out) {
  struct theme_color c = {0};
  if (strcmp(token, "default") == 0) {
    c.kind = THEME_COLOR_DEFAULT;
  } else if (token[0] == '#') {
    if (strlen(token) != 7)
      return -1;
    uint8_t v[3];
    for (int i = 0; i < 3; i++) {
      int hi = hex_digit((unsigned char)token[1 + 2 * i]);
      int lo = hex_digit((unsigned char)token[2 + 2 * i]);
      if (hi < 0 || lo < 0)
        return -1;
      v[i] = (uint8_t)(hi * 16 + lo);
    }
    c.kind = THEME_COLOR_RGB;
    c.r = v[0];
    c.g = v[1];
    c.b = v[2];
  } else if (isdigit((unsigned char)token[0])) {
    int n;
    if (parse_int(token, &n) != 0 || n < 0 || n > 255)
      return -1;
    c.kind = THEME_COLOR_INDEX;
    c.index = (uint8_t)n;
  } else {
    const char *name = token;
    int base = 0;
    if (str_starts_with(token, "bright_")) {
      name = token + strlen("bright_");
      base = 8;
    }
    int found = -1;
    for (int i = 0; i < 8; i++)
      if (strcmp(name, basic_names[i]) == 0)
        found = i;
    if (found < 0)
      return -1;
    c.kind = THEME_COLOR_INDEX;
    c.index = (uint8_t)(base + found);
  }
  *out = c;
  return 0;
}

/* Parses a style value ("#112233 on default bold"); on failure *why names
 * the offending token's problem. */
static int parse_style(char *value, struct theme_style *out, const char **why, char **bad_token) {
  struct theme_style s = {0};
  bool have_fg = false, have_bg = false, want_bg = false;
  char *save = NULL;
  for (char *tok = strtok_r(value, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
    *bad_token = tok;
    if (want_bg) {
      if (theme_color_parse(tok, &s.bg) != 0) {
        *why = "not a colour";
        return -1;
      }
      want_bg = false;
      have_bg = true;
    } else if (strcmp(tok, "on") == 0) {
      if (have_bg) {
        *why = "background given twice";
        return -1;
      }
      want_bg = true;
    } else if (strcmp(tok, "bold") == 0) {
      s.attrs |= THEME_ATTR_BOLD;
    } else if (strcmp(tok, "reverse") == 0) {
      s.attrs |= THEME_ATTR_REVERSE;
    } else if (strcmp(tok, "underline") == 0) {
      s.attrs |= THEME_ATTR_UNDERLINE;
    } else if (strcmp(tok, "dim") == 0) {
      s.attrs |= THEME_ATTR_DIM;
    } else if (theme_color_parse(tok, &s.fg) == 0) {
      if (have_fg || have_bg) {
        *why = "a second foreground colour (write 'FG on BG')";
        return -1;
      }
      have_fg = true;
    } else {
      *why = "not a colour or attribute (bold, reverse, underline, dim)";
      return -1;
    }
  }
  if (want_bg) {
    *why = "'on' without a background colour";
    return -1;
  }
  *out = s;
  return 0;
}

static int role_by_name(const char *name) {
  for (int i = 0; i < THEME_ROLE_COUNT; i++)
    if (strcmp(roles[i].name, name) == 0)
      return i;
  return -1;
}

static void add_warning(struct theme *t, char *msg) {
  t->warnings = xreallocarray(t->warnings, t->n_warnings + 1, sizeof *t->warnings);
  t->warnings[t->n_warnings++] = msg;
}

void theme_fini(struct theme *t) {
  for (size_t i = 0; i < t->n_warnings; i++)
    free(t->warnings[i]);
  free(t->warnings);
  t->warnings = NULL;
  t->n_warnings = 0;
}

void theme_init_default(struct theme *t) {
  memset(t, 0, sizeof *t);
  for (int i = 0; i < THEME_ROLE_COUNT; i++) {
    char *value = xstrdup(roles[i].default_value);
    const char *why = NULL;
    char *bad = NULL;
    int rc = parse_style(value, &t->style[i], &why, &bad);
    /* The table is ours: a bad entry is a programming error caught by the tests. */
    if (rc != 0)
      memset(&t->style[i], 0, sizeof t->style[i]);
    free(value);
  }
}

/* A role missing from the file follows its fallback chain to the first role
 * the file did set; with none, it keeps its built-in default. */
static void apply_fallbacks(struct theme *t) {
  for (int i = 0; i < THEME_ROLE_COUNT; i++) {
    if (t->from_file[i])
      continue;
    int r = i;
    for (int hops = 0; hops < THEME_ROLE_COUNT && roles[r].fallback != (enum theme_role)r; hops++) {
      r = (int)roles[r].fallback;
      if (t->from_file[r]) {
        t->style[i] = t->style[r];
        break;
      }
    }
  }
}

/* A '#' starts a comment at the start of a line or after blank space, unless
 * it begins a #rrggbb colour. */
static void strip_comment(char *line) {
  for (char *p = line; *p; p++) {
    if (*p != '#')
      continue;
    bool at_start = p == line || p[-1] == ' ' || p[-1] == '\t';
    bool colour = hex_digit((unsigned char)p[1]) >= 0 && p != line && strchr(line, '=') &&
                  strchr(line, '=') < p;
    if (at_start && !colour) {
      *p = '\0';
      return;
    }
  }
}

int theme_parse(struct theme *t, const char *text, const char *source, struct st_err *err) {
  theme_init_default(t);
  char *copy = xstrdup(text);
  int line_no = 0;
  int rc = 0;
  /* Split by hand: strtok_r would skip empty lines and break the line count. */
  char *line = copy;
  while (line) {
    line_no++;
    char *nl = strchr(line, '\n');
    if (nl)
      *nl = '\0';
    strip_comment(line);
    char *s = str_trim(line);
    if (*s) {
      char *eq = strchr(s, '=');
      if (!eq) {
        rc = err_setf(err, "%s:%d: expected 'role = value'", source, line_no);
        break;
      }
      *eq = '\0';
      char *name = str_trim(s);
      char *value = str_trim(eq + 1);
      int role = role_by_name(name);
      if (!*name) {
        rc = err_setf(err, "%s:%d: missing role name before '='", source, line_no);
        break;
      }
      struct theme_style style;
      const char *why = NULL;
      char *bad = NULL;
      char *value_copy = xstrdup(value);
      int prc = parse_style(value_copy, &style, &why, &bad);
      if (prc != 0) {
        rc = err_setf(err, "%s:%d: %s: '%s': %s", source, line_no, name, bad, why);
        free(value_copy);
        break;
      }
      free(value_copy);
      if (role < 0) {
        add_warning(t, xasprintf("%s:%d: unknown role '%s' (ignored)", source, line_no, name));
      } else {
        t->style[role] = style;
        t->from_file[role] = true;
      }
    }
    line = nl ? nl + 1 : NULL;
  }
  free(copy);
  if (rc != 0) {
    theme_fini(t);
    theme_init_default(t);
    return rc;
  }
  apply_fallbacks(t);
  return 0;
}

int theme_load_file(struct theme *t, const char *path, struct st_err *err) {
  char *text = file_read_regular(path, FILE_INPUT_MAX_BYTES, NULL, err);
  if (!text) {
    theme_init_default(t);
    return -1;
  }
  int rc = theme_parse(t, text, path, err);
  free(text);
  return rc;
}

char *theme_find_path_alloc(const char *name, const char *themes_env, const char *exe_dir,
                            const char *source_dir, struct st_err *err) {
  if (strchr(name, '/') || str_ends_with(name, ".theme")) {
    if (path_exists(name))
      return xstrdup(name);
    err_setf(err, "theme file %s: not found", name);
    return NULL;
  }
  char *file = xasprintf("%s.theme", name);
  struct sbuf tried = {0};
  char *found = NULL;
  char **dirs = NULL;
  size_t n_dirs = 0;
  if (themes_env && *themes_env) {
    char *env = xstrdup(themes_env);
    char *save = NULL;
    for (char *d = strtok_r(env, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
      dirs = xreallocarray(dirs, n_dirs + 1, sizeof *dirs);
      dirs[n_dirs++] = xstrdup(d);
    }
    free(env);
  }
  dirs = xreallocarray(dirs, n_dirs + 4, sizeof *dirs);
  if (exe_dir) {
    dirs[n_dirs++] = xasprintf("%s/../share/servetop/themes", exe_dir);
    dirs[n_dirs++] = xasprintf("%s/../themes", exe_dir);
  }
  if (source_dir && *source_dir)
    dirs[n_dirs++] = xstrdup(source_dir);
  dirs[n_dirs++] = xstrdup("./themes");
  for (size_t i = 0; i < n_dirs; i++) {
    char *path = path_join_alloc(dirs[i], file);
    if (!found && path_exists(path)) {
      found = path;
    } else {
      if (!found)
        sbuf_printf(&tried, "%s%s", tried.len ? ", " : "", dirs[i]);
      free(path);
    }
    free(dirs[i]);
  }
  free(dirs);
  if (!found)
    err_setf(err, "theme '%s': no %s in %s", name, file, tried.data ? tried.data : "");
  free(file);
  sbuf_free(&tried);
  return found;
}

void theme_resolve(const struct theme *t, int n_colors, bool use_color, struct theme_resolved *out) {
  memset(out, 0, sizeof *out);
  out->use_color = use_color && n_colors >= 8;
  for (int i = 0; i < THEME_ROLE_COUNT; i++) {
    out->attrs[i] = t->style[i].attrs;
    if (out->use_color) {
      out->fg[i] = theme_color_to_terminal(t->style[i].fg, n_colors);
      out->bg[i] = theme_color_to_terminal(t->style[i].bg, n_colors);
    } else {
      out->fg[i] = out->bg[i] = -1;
      out->attrs[i] |= roles[i].mono_attrs;
    }
  }
}
