/* The editing keys of the one-line text fields (search, overrides). */
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
