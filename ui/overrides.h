/* ui overrides: KEY=VALUE server flags typed in the launch form, checked
 * before anything starts by the run module's one check (run_check_overrides:
 * the syntax, the value against the recipe's engine, the command resolving),
 * with one line per override saying what it changes. Pure: no ncurses. */
#ifndef SERVETOP_UI_OVERRIDES_H
#define SERVETOP_UI_OVERRIDES_H

#include <stddef.h>

#include "recipe/recipe.h"

struct st_err;

/* Overrides parsed from one line of text (words apart by blanks). */
struct ui_overrides {
  char **items;    /* "KEY=VALUE" as typed, owned */
  size_t n;
  char **changes;  /* one line per override: "--key old -> new" / "--key new (added)", owned */
  /* benchmark settings typed among them (run_bench_setting), never server
   * flags; 0 = the recipe's */
  int num_prompts, isl, osl;
  char *bench_line; /* "benchmark: num-prompts 16, isl 512" or NULL, owned */
};
void ui_overrides_fini(struct ui_overrides *o);
/* Parses text and checks every word against the recipe (run_check_overrides;
 * recipe NULL: syntax only). On -1 err names the word, and out is empty. */
int ui_overrides_parse(const char *text, const struct recipe *recipe, struct ui_overrides *out,
                       struct st_err *err);

#endif
