/* The engine probe on a worker thread. */
#include "probe.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "run/run.h"
#include "ui_util.h"

void ui_probe_engine(const struct recipe *recipe, struct ui_probe_answer *out) {
  char why[200] = "";
  out->engine = run_pick_engine(recipe, why, sizeof why);
  if (!out->engine)
    snprintf(out->text, sizeof out->text, "cannot run: %s", why);
  else
    snprintf(out->text, sizeof out->text, "engine %s%s%s", out->engine->name, why[0] ? ": " : "",
             why);
}

struct ui_probe {
  const struct recipe *recipes[UI_PROBE_MAX];
  size_t n;
  ui_probe_fn fn;
  struct ui_probe_answer answers[UI_PROBE_MAX];
  pthread_t thread;
  bool thread_started;
  atomic_bool done;
};

static void *probe_main(void *arg) {
  pthread_setname_np(pthread_self(), "st-ui-probe"); /* shows in top -H and /proc */
  struct ui_probe *p = arg;
  for (size_t i = 0; i < p->n; i++)
    p->fn(p->recipes[i], &p->answers[i]);
  atomic_store(&p->done, true); /* publishes the answers */
  return NULL;
}

struct ui_probe *ui_probe_start(const struct recipe *const *recipes, size_t n, ui_probe_fn fn) {
  struct ui_probe *p = xcalloc(1, sizeof *p);
  p->n = n < UI_PROBE_MAX ? n : UI_PROBE_MAX;
  for (size_t i = 0; i < p->n; i++)
    p->recipes[i] = recipes[i];
  p->fn = fn ? fn : ui_probe_engine;
  atomic_init(&p->done, false);
  /* the worker takes no signals: SIGINT / SIGTERM / SIGHUP stay the UI thread's */
  p->thread_started = thread_start_unsignalled(&p->thread, probe_main, p);
  if (!p->thread_started)
    probe_main(p); /* no thread: answer here rather than never */
  return p;
}

bool ui_probe_done(struct ui_probe *p) {
  return atomic_load(&p->done);
}

const struct ui_probe_answer *ui_probe_answer(const struct ui_probe *p, size_t i) {
  return i < p->n ? &p->answers[i] : NULL;
}

void ui_probe_free(struct ui_probe *p) {
  if (!p)
    return;
  if (p->thread_started)
    pthread_join(p->thread, NULL);
  free(p);
}
