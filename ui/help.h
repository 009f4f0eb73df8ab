/* ui help: the `?` box of a screen, itself a screen drawn over that one. It
 * lists the screen's whole key table (the footer shows the hinted part of the
 * same table); any key or click closes it. Pure: no ncurses. */
#ifndef SERVETOP_UI_HELP_H
#define SERVETOP_UI_HELP_H

#include "screen.h"

struct helpview {
  const struct ui_screen *of;  /* whose keys it lists */
};

extern const struct ui_screen help_screen;

#endif
