/* ui problems: every recipe load error and doctor's finding (recipe_lint:
 * load errors are its SCHEMA findings) in one scrollable list with
 * file:line, opened from the browser (p, or a click on the header's count).
 * Enter on one shows the whole message. Pure: no ncurses. */
#ifndef SERVETOP_UI_PROBLEMS_H
#define SERVETOP_UI_PROBLEMS_H

#include <stdbool.h>
#include <stddef.h>

#include "recipe/recipe.h"
#include "screen.h"

struct problems {
  const struct recipe_findings *findings;  /* borrowed (the browser's) */
  size_t selected;
  size_t top;          /* first row shown */
  bool expanded;       /* the selected one's whole message is showing */
};

void problems_init(struct problems *p, const struct recipe_findings *findings);

/* The role a finding of this severity is drawn in. */
enum theme_role ui_severity_role(enum recipe_severity sev);

extern const struct ui_screen problems_screen;

#endif
