/* The editing keys of the one-line text fields (search, overrides) and the forms' footer. */
#include "screen.h"
#include "widgets.h"

#include <string.h>

bool ui_edit_line(char *text, size_t size, int key) {
  size_t len = strlen(text);
  if (key == UI_KEY_BACKSPACE) {
    if (len)
      text[len - 1] = '\0';
    return true;
  }
  if (key >= 0x20 && key < 0x7f && len + 1 < size) {
    text[len] = (char)key;
    text[len + 1] = '\0';
    return true;
  }
  return false;
}

void ui_form_footer(struct ui_footer *out, bool error, bool waiting, unsigned start_key,
                    const char *fix) {
  if (error) {
    out->inactive |= 1u << start_key;
    out->status = fix;
    out->status_role = THEME_ERROR;
  } else if (waiting) {
    out->status = "waiting for the engine probe...";
    out->status_role = THEME_WARNING;
  }
}

int ui_form_field_key(int *field, int n, char *text, size_t size, int key) {
  switch (key) {
  case UI_KEY_TAB:
  case UI_KEY_DOWN: *field = (*field + 1) % n; return 1;
  case UI_KEY_UP: *field = (*field + n - 1) % n; return 1;
  default: return key != '?' && ui_edit_line(text, size, key) ? 2 : 0;
  }
}
