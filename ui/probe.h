/* ui probe: which engine a recipe runs on here (`servetop run`'s choice: its
 * own engine where it can run, else the simulated server). Finding out can
 * take seconds (`python3 -c 'import sglang'`), so the dashboard asks on a
 * worker thread and shows "probing..." until the answer is there; the UI
 * thread only polls. */
#ifndef SERVETOP_UI_PROBE_H
#define SERVETOP_UI_PROBE_H

#include <stdbool.h>
#include <stddef.h>

#include "engine/engine.h"
#include "recipe/recipe.h"

struct ui_probe_answer {
  const struct eng_ops *engine; /* NULL: it cannot run here (text says how to get it) */
  char text[256];  /* for the screen: "engine sim: no GPU device (/dev/nvidia0, /dev/kfd)" */
};

/* The one call that decides (blocking): run_pick_engine(), the engine
 * table's probes. */
void ui_probe_engine(const struct recipe *recipe, struct ui_probe_answer *out);

typedef void (*ui_probe_fn)(const struct recipe *recipe, struct ui_probe_answer *out);

#define UI_PROBE_MAX 2
struct ui_probe; /* opaque: one worker thread answering for up to UI_PROBE_MAX recipes */

/* Starts probing recipes[0..n) with fn (NULL: ui_probe_engine) and returns
 * at once. The recipes must outlive the probe. */
struct ui_probe *ui_probe_start(const struct recipe *const *recipes, size_t n, ui_probe_fn fn);
/* Whether every answer is in (never blocks). */
bool ui_probe_done(struct ui_probe *p);
/* Answer i, once ui_probe_done() said true. */
const struct ui_probe_answer *ui_probe_answer(const struct ui_probe *p, size_t i);
/* Waits for the worker and frees. NULL is fine. */
void ui_probe_free(struct ui_probe *p);

#endif
