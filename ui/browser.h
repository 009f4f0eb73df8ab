/* ui browser: the start screen's model (recipes grouped by model / GPU /
 * engine, off and MTP twins paired on one row, an incremental filter, the
 * selection and scroll state) and its rendering into a cell grid. Pure: no
 * ncurses, so keys, clicks and frames are unit-tested on fixed recipe sets. */
#ifndef SERVETOP_UI_BROWSER_H
#define SERVETOP_UI_BROWSER_H

#include <stdbool.h>
#include <stddef.h>

#include "layout.h"
#include "recipe/recipe.h"
#include "screen.h"
#include "widgets.h"

/* One row of the list: twins side by side; either side may be missing. */
struct browser_pair {
  const struct recipe *off;   /* spec-decoding none */
  const struct recipe *spec;  /* MTP or draft model */
  int worst_off, worst_spec;  /* worst finding severity, -1 = none */
  int findings[2], errors[2]; /* findings (of them errors) of the off / spec recipe */
  size_t group;
};

struct browser_group {
  const struct recipe *first;  /* names the group: model, precision, GPU, engine */
};

/* A visible list line: a group heading (pair == SIZE_MAX) or a pair. */
struct browser_line {
  size_t group;
  size_t pair;
};

/* A line of the detail pane. */
struct browser_text {
  char *text;
  enum theme_role role;
  int indent;      /* continuation lines of a wrapped line start here */
};

struct browser {
  const struct recipe_set *set;  /* borrowed */
  struct recipe_findings findings;
  struct browser_group *groups;
  size_t n_groups;
  struct browser_pair *pairs;
  size_t n_pairs;
  struct browser_line *lines;    /* after the filter */
  size_t n_lines;
  char filter[128];
  bool filter_editing;           /* '/' typed: keys go to the filter */
  size_t sel_line;               /* index into lines; always a pair line when any */
  int sel_side;                  /* 0 = off, 1 = spec */
  int tag_cells;                 /* width of the sequence-tag column */
  int list_top;                  /* first list line shown */
  int detail_top;                /* first detail line shown */
  int findings_x, findings_w;    /* where the header shows the findings count (a click opens them) */
  char message[256];             /* footer status; "" = none */
  char footer_text[160];         /* the footer's "filter: ..." */
  enum theme_role message_role;
  /* the detail pane for the selected recipe, rebuilt when it changes */
  const struct recipe *detail_of;
  struct browser_text *detail;
  size_t n_detail;
};

/* Builds the model; findings come from recipe_lint(set). */
void browser_init(struct browser *b, const struct recipe_set *set);
void browser_fini(struct browser *b);

/* The filter: whitespace-separated words, each matched case-insensitively
 * against name, model, precision, GPU, engine, framework, spec and sequence
 * tag; a pair shows when one of its recipes matches every word. */
void browser_set_filter(struct browser *b, const char *filter);
const struct recipe *browser_selected(const struct browser *b);
const struct browser_pair *browser_selected_pair(const struct browser *b);

/* Draws the whole browser screen but the footer (header, list, detail). */
void browser_render(struct browser *b, struct ui_grid *g, const struct ui_layout *l,
                    const struct ui_glyphs *gl);

/* Keys: Enter asks for the launch form of the selected recipe, a for the
 * pair's A/B run, p opens the problems, L the past runs, q quits. Mouse: a
 * click selects a row and side (on the header's findings count: the
 * problems); the wheel scrolls the list or the detail pane. */
extern const struct ui_screen browser_screen;

#endif
