/* libFuzzer: the dashboard's theme parser (ui/theme.c, a pure function over
 * text) on arbitrary bytes, then the colour mapping for every kind of
 * terminal. Findings: memory errors, leaks, and resolved colours outside the
 * terminal's range (abort). Seeds: the files in themes/. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "theme.h"
#include "ui_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_resolved(const struct theme *t, int n_colors, bool use_color) {
  struct theme_resolved r;
  theme_resolve(t, n_colors, use_color, &r);
  for (int i = 0; i < THEME_ROLE_COUNT; i++) {
    /* with colour: an index the terminal has, or -1 (its default); without: -1 */
    int limit = r.use_color ? n_colors : 0;
    if (r.fg[i] < -1 || r.fg[i] >= limit || r.bg[i] < -1 || r.bg[i] >= limit)
      abort();
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = xmalloc(size + 1);
  memcpy(text, data, size);
  text[size] = '\0';
  struct theme t;
  struct st_err err;
  int rc = theme_parse(&t, text, "fuzz.theme", &err);
  if (rc != 0 && strncmp(err.msg, "fuzz.theme:", 11) != 0)
    abort(); /* every parse error names source:line */
  static const int n_colors[] = {0, 8, 16, 88, 256, 16777216};
  for (size_t i = 0; i < ST_ARRAY_LEN(n_colors); i++) {
    check_resolved(&t, n_colors[i], true);
    check_resolved(&t, n_colors[i], false);
  }
  /* the colour token parser on its own, over the first line */
  char *nl = strchr(text, '\n');
  if (nl)
    *nl = '\0';
  struct theme_color c;
  if (theme_color_parse(text, &c) == 0)
    for (size_t i = 0; i < ST_ARRAY_LEN(n_colors); i++) {
      int idx = theme_color_to_terminal(c, n_colors[i]);
      if (idx < -1 || (n_colors[i] < 8 && idx != -1) || (n_colors[i] >= 8 && idx >= n_colors[i]))
        abort();
    }
  theme_fini(&t);
  free(text);
  return 0;
}
