/* ui overrides: KEY=VALUE server flags typed in the dashboard (the launch
 * form, the run view's m prompt), checked before anything starts. Until the
 * engine table validates knobs per engine, the check is what `servetop run
 * --set` accepts: the syntax, and that the recipe's command resolves with the
 * overrides applied. Pure: no ncurses. */
#ifndef SERVETOP_UI_OVERRIDES_H
#define SERVETOP_UI_OVERRIDES_H

#include <stddef.h>

#include "recipe/recipe.h"

struct st_err;

/* Splits "KEY=VALUE" (leading dashes dropped: "--tp=8" is tp) into key
 * (key_n bytes) and *value (points into assignment; "" is a flag without a
 * value). -1 with err naming what is wrong: no '=', an empty key, a key that
 * is not a flag name (letters, digits, '-', '_', '.'). */
int ui_override_split(const char *assignment, char *key, size_t key_n, const char **value,
                      struct st_err *err);

/* Overrides parsed from one line of text (words apart by blanks). */
struct ui_overrides {
  char **items;    /* "KEY=VALUE" as typed, owned */
  size_t n;
  char **changes;  /* one line per override: "--key old -> new" / "--key new (added)", owned */
};
void ui_overrides_fini(struct ui_overrides *o);
/* Parses text and checks each word against the recipe: the syntax, and that
 * the server command of its first sweep point resolves with every override
 * applied (no piece servetop cannot resolve). recipe may be NULL (syntax
 * only). On -1 err names the word, and out is empty. */
int ui_overrides_parse(const char *text, const struct recipe *recipe, struct ui_overrides *out,
                       struct st_err *err);

#endif
