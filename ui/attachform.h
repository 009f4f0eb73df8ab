/* ui attach form: what A in the browser opens — the URL of an
 * OpenAI-compatible server servetop did not launch, the concurrency to load
 * it at (a list, "1,4,16", as --conc-list: one point each) and the request lengths — checked as they are typed
 * (run_parse_http_url). Enter asks the program to attach (UI_CMD_ATTACH):
 * the run view on that server, with the load generator, /metrics and
 * telemetry, and no restart keys. Drawn over the browser. Pure: no ncurses. */
#ifndef SERVETOP_UI_ATTACHFORM_H
#define SERVETOP_UI_ATTACHFORM_H

#include <stdbool.h>

#include "screen.h"

enum { ATTACH_URL, ATTACH_CONC, ATTACH_ISL, ATTACH_OSL, ATTACH_FIELDS };

struct attachform {
  char text[ATTACH_FIELDS][160]; /* the fields as typed */
  int field;                     /* the one that takes the keys */
  char error[256];               /* why Enter cannot attach; "" = it can */
  /* the fields read (valid when error is "") */
  const char *url;
  int concs[64];                 /* the concurrency field: one point each ("1,4,16") */
  size_t n_concs;
  int isl, osl;
};

/* Opens the form with url (NULL: http://127.0.0.1:8000), concurrency 1 and
 * benchmark_serving.py's default lengths (1024 in, 128 out). */
void attachform_open(struct attachform *f, const char *url);
/* Checks the fields (error says what is wrong). */
void attachform_check(struct attachform *f);

extern const struct ui_screen attachform_screen;

#endif
