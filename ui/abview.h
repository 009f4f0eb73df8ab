/* ui A/B view: the non-MTP arm and its MTP twin in two columns with the same
 * rows and the same chart scale, a ratio column (MTP / off), and, over a
 * sweep, throughput per GPU against interactivity (tok/s/user) for both arms
 * as InferenceX draws it. Pure: it draws two run views' state. */
#ifndef SERVETOP_UI_ABVIEW_H
#define SERVETOP_UI_ABVIEW_H

#include "layout.h"
#include "recipe/recipe.h"
#include "runview.h"
#include "widgets.h"

enum { AB_OFF = 0, AB_MTP = 1 };

struct abview {
  struct runview arm[2];            /* AB_OFF, AB_MTP */
  const struct recipe *recipe[2];   /* borrowed; NULL = arm not loaded */
  bool confirm_quit;                /* "stop the server and quit? y/n" is showing */
  bool help_shown;
  char status[256];                 /* footer line: which arm runs, errors */
  enum theme_role status_role;
};

void abview_init(struct abview *ab, const struct recipe *off, const struct recipe *mtp);

/* One row of the comparison: the same figure for both arms. */
struct ab_row {
  const char *label;
  double value[2];       /* NaN = unknown */
  bool higher_is_better;
  char unit;             /* 'n' number, 'm' milliseconds, 'k' tokens */
};
/* The rows compared, filled from the arms' latest snapshots; returns n. */
size_t abview_rows(const struct abview *ab, struct ab_row *rows, size_t max_rows);

/* Curve points of an arm: x = interactivity (1000 / TPOT p50, tok/s/user),
 * y = output tok/s per GPU (the point's tp), one per finished point.
 * Returns the number written. */
size_t abview_curve(const struct abview *ab, int arm, double *x, double *y, size_t max_points);

/* The A/B view's keys, for its help overlay and the docs. */
extern const struct ui_key_help abview_key_help[];
extern const size_t abview_key_help_count;

void abview_render(struct abview *ab, struct ui_grid *g, const struct ui_layout *l,
                   const struct ui_glyphs *gl);

#endif
