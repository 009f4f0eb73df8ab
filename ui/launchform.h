/* ui launch form: what Enter (one recipe) or a (an off/MTP pair) in the
 * browser opens before anything starts — one concurrency of the recipe's
 * sweep, the whole sweep, and KEY=VALUE overrides of server flags, checked
 * before the launch (ui_overrides_parse) — with the engine the run will use
 * once the program's probe answers ("probing..." until then). Drawn over the
 * browser. Pure: no ncurses. */
#ifndef SERVETOP_UI_LAUNCHFORM_H
#define SERVETOP_UI_LAUNCHFORM_H

#include <stdbool.h>
#include <stddef.h>

#include "overrides.h"
#include "recipe/recipe.h"
#include "screen.h"

#define LAUNCHFORM_MAX_CHOICES 32

struct launchform {
  const struct recipe *recipe;  /* borrowed; the off arm of an A/B run */
  const struct recipe *twin;    /* the MTP arm; NULL: one run */
  int concs[LAUNCHFORM_MAX_CHOICES]; /* the sweep's concurrencies, ascending, once each */
  size_t n_concs;
  size_t choice;                /* < n_concs: that one concurrency; n_concs: the whole sweep */
  bool editing;                 /* the overrides field takes the keys */
  char text[256];               /* the overrides as typed */
  struct ui_overrides overrides; /* text checked; valid when error is "" */
  char error[528];              /* why the overrides cannot be used */
  bool probing;                 /* the engine probe has not answered */
  char engine[320];             /* its answer ("engine sim: no GPU device ...") */
  char trust[200];              /* loader/interpreter variables the server gets
                                   ("LD_PRELOAD, PYTHONPATH"; recipe_loader_env), "" none */
  bool waiting;                 /* Enter was pressed: it starts when the probe answers */
  /* where render put the choices and the field, for clicks */
  struct ui_rect choice_at[LAUNCHFORM_MAX_CHOICES + 1];
  struct ui_rect field_at;
};

/* Opens the form on a recipe (twin non-NULL: an A/B run of both). Starts on
 * the first point's concurrency for one recipe, on the whole sweep for A/B. */
void launchform_open(struct launchform *f, const struct recipe *recipe, const struct recipe *twin);
void launchform_fini(struct launchform *f);
/* The probe's state: probing, or its answer. */
void launchform_set_engine(struct launchform *f, bool probing, const char *text);
/* Replaces the overrides text and checks it (error says what is wrong). */
void launchform_set_text(struct launchform *f, const char *text);

/* Where the form's box goes on a cols x rows screen. */
struct ui_rect launchform_box(const struct launchform *f, int cols, int rows);

extern const struct ui_screen launchform_screen;

#endif
