/* ui tune form: what t in the browser opens — `servetop tune RECIPE` as a
 * form: the SLO targets (as --slo takes them), up to four knobs to search (a
 * line each, as --knob takes it), the workload (input and output tokens a
 * request) and the wall-clock budget ("30m", "90s", "2h" as --budget; "0": none). Every
 * field is checked as it is typed (tune_slo_parse, tune_knob_parse), the
 * error shown in the form; Enter asks the program to start the search
 * (UI_CMD_TUNE) and the Tune view comes over the browser. Drawn over the
 * browser. Pure: no ncurses. */
#ifndef SERVETOP_UI_TUNEFORM_H
#define SERVETOP_UI_TUNEFORM_H

#include <stdbool.h>
#include <stddef.h>

#include "recipe/recipe.h"
#include "screen.h"
#include "tune/tune.h"

enum {
  TUNEFORM_SLO,
  TUNEFORM_KNOB1,
  TUNEFORM_MAX_KNOBS = 4,
  TUNEFORM_ISL = TUNEFORM_KNOB1 + TUNEFORM_MAX_KNOBS,
  TUNEFORM_OSL,
  TUNEFORM_BUDGET,
  TUNEFORM_FIELDS
};

struct tuneform {
  const struct recipe *recipe;  /* borrowed: the recipe searched (its setting is the start) */
  const struct recipe *twin;    /* its MTP/off twin (knob spec); NULL: none */
  char text[TUNEFORM_FIELDS][200]; /* the fields as typed */
  int field;                    /* the one that takes the keys */
  char error[600];              /* why Enter cannot start; "" = it can */
  int error_field;              /* the field the error is about (-1: none) */
  /* the fields read (valid when error is ""); the knobs stay the form's until it opens again */
  struct tune_slo slo;
  struct tune_knob knobs[TUNEFORM_MAX_KNOBS];
  size_t n_knobs;
  int isl, osl;
  double budget_s;              /* 0: none */
  bool waiting;                 /* Enter was pressed: it starts when the engine probe answers */
};

/* Opens the form on a recipe (twin: its twin, for knob spec) with defaults for its engine:
 * ttft_p99_ms=2000,tpot_p99_ms=50, the batch cap and (a GPU engine) the KV cache's share of
 * GPU memory, spec=off,on with a twin, the recipe's lengths, a 30-minute budget. */
void tuneform_open(struct tuneform *f, const struct recipe *recipe, const struct recipe *twin);
void tuneform_fini(struct tuneform *f);
/* Replaces one field's text and checks the form. */
void tuneform_set(struct tuneform *f, int field, const char *text);
/* Checks every field (error and error_field say what is wrong). */
void tuneform_check(struct tuneform *f);
/* The budget field into seconds: a duration as --budget takes it (parse_duration_s), "0" or
 * empty: none; -1 with err saying why. */
int tuneform_parse_budget(const char *text, double *out_s, struct st_err *err);

extern const struct ui_screen tuneform_screen;

#endif
