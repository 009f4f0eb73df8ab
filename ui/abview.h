/* ui A/B view: the non-MTP arm and its MTP twin in two columns with the same
 * rows and the same chart scale, a ratio column (MTP / off), and, over a
 * sweep, throughput per GPU against interactivity (tok/s/user) for both arms
 * as InferenceX draws it. Pure: it draws two run views' state. */
#ifndef SERVETOP_UI_ABVIEW_H
#define SERVETOP_UI_ABVIEW_H

#include "layout.h"
#include "recipe/recipe.h"
#include "run/run.h"
#include "runview.h"
#include "screen.h"
#include "widgets.h"

enum { AB_OFF = 0, AB_MTP = 1 };

/* A column filled from a past run folder instead of a live run: its results
 * as `servetop compare` reads them (run_compare_side_load). */
struct abview_past {
  bool loaded;
  struct run_compare_side side;     /* owned */
  char folder[256];                 /* run folder name, for the title */
};

struct abview {
  struct runview arm[2];            /* AB_OFF, AB_MTP */
  const struct recipe *recipe[2];   /* borrowed; NULL = arm not loaded */
  struct abview_past past[2];       /* a loaded past run replaces the live arm's figures */
  /* --repeats: each arm's repeats that both arms finished, as one side each (its first repeat,
   * the others in side.more: abview_load_repeats); once no arm runs, the rows and their ratios
   * come from them (run_compare_figure: the interval from the spread of the repeats) */
  struct abview_past repeats[2];
  int n_repeats;                    /* repeats the launch asked for (<= 1: once); the program's */
  int repeat;                       /* the repeat that runs or ran last (0-based); the program's */
  int shown_conc;                   /* the concurrency shown ([ ]): past results and finished
                                       live points at it; 0 = automatic (the live figures) */
  int n_points[2];                  /* points each arm runs (the launch's), for the job's ETA */
  int column;                       /* the selected column (click, Tab): where L loads */
  bool running;                     /* an arm is being measured (set by the program) */
  char results_dir[512];            /* where L looks */
  enum runview_confirm confirm;     /* a y / n question is showing */
  char status[256];                 /* footer status: which arm runs, errors */
  enum theme_role status_role;
};

/* off / mtp may be NULL (a view filled only from past runs); results_dir is
 * where L looks for run folders (NULL: run_default_results_dir_alloc()). Call
 * abview_fini() before initialising the same view again. */
void abview_init(struct abview *ab, const struct recipe *off, const struct recipe *mtp,
                 const char *results_dir);
void abview_fini(struct abview *ab);

/* Loads a run folder (or one result file) into column arm, replacing what
 * was there; -1 with err when it cannot be read. */
int abview_load_past(struct abview *ab, int arm, const char *path, struct st_err *err);
/* Loads the run folders of the repeats both arms finished, dirs[arm][k] for k < n (n >= 1),
 * each arm as one side (run_compare_side_load_repeats), replacing what was loaded before; -1
 * with err (nothing kept) when one cannot be read. */
int abview_load_repeats(struct abview *ab, char dirs[][RUN_SESSION_MAX_REPEATS][1024], int n,
                        struct st_err *err);
/* The result of arm's repeats the rows rest on: when both arms' repeats are loaded, no arm
 * runs and no column holds a past run, the first repeat's result at the concurrency shown
 * (shown_conc, else the live off arm's, else the highest; nearest), which the other arm's
 * repeats measured too. NULL: the rows are the columns' own. */
const struct results_file *abview_repeats_result(const struct abview *ab, int arm);
/* The result a past column shows: the one at shown_conc, else at the live
 * other arm's concurrency, else the highest; nearest concurrency when there
 * is no exact match. NULL when the column has no past run. */
const struct results_file *abview_past_result(const struct abview *ab, int arm);
/* [ / ]: the shown concurrency steps through the points of both columns
 * (past results and the finished points of live arms). */
void abview_step_conc(struct abview *ab, int step);
/* The finished point of a live arm nearest concurrency want (the latest at
 * it); NULL when want <= 0, the column holds a past run or has no point. */
const struct snap_point_result *abview_live_point(const struct abview *ab, int arm, int want);
/* The point a live arm's column shows instead of its live figures: the one
 * at shown_conc ([ ]), else, when the arm is over and the other still
 * measures, its point at the other's concurrency (so the ratios compare the
 * same load); NULL: the live figures. */
const struct snap_point_result *abview_shown_point(const struct abview *ab, int arm);
/* What is left of the whole A/B job (both arms, one after the other), from
 * each arm's progress and the finished points' lengths; false when nothing
 * is known yet. */
bool abview_job_remaining_s(const struct abview *ab, double *out_s);

/* Whether the two columns may be divided (run_like_check on what each shows: a past result's
 * facts, a live arm's engine, provenance, GPUs and concurrency): true with why in words when
 * they differ; then the header says "UNLIKE: ... -- ratios hidden" in red and no ratio shows.
 * False when a column shows nothing yet. */
bool abview_unlike(const struct abview *ab, char *why, size_t why_bytes);
/* What column arm shows was produced by servetop sim (its title says SIMULATED). */
bool abview_arm_simulated(const struct abview *ab, int arm);
/* One row of the comparison: the same figure for both arms. */
struct ab_row {
  const char *label;     /* the figure's label (the table's), or label_buf */
  char label_buf[32];
  double value[2];       /* NaN = unknown */
  double lo[2], hi[2];   /* each value's 95% interval (a saved point's); NaN = unknown */
  struct ci_ratio ratio; /* MTP / off with its interval and verdict: ci_ratio_of_intervals,
                            or from the repeats (run_compare_figure; ratio.repeats: how many) */
  bool higher_is_better;
  char unit;             /* 'n' number, 'm' milliseconds, 'k' tokens */
};
/* The rows compared, filled from the arms' latest snapshots (past columns: their results;
 * repeats over: the means over the repeats, abview_repeats_result); returns n. */
size_t abview_rows(const struct abview *ab, struct ab_row *rows, size_t max_rows);

/* Curve points of an arm: x = interactivity (1000 / TPOT p50, tok/s/user),
 * y = output tok/s per GPU (the point's tp), one per finished point.
 * Returns the number written. */
size_t abview_curve(const struct abview *ab, int arm, double *x, double *y, size_t max_points);
/* The same, with each point's concurrency in conc (NULL: not wanted). */
size_t abview_curve_conc(const struct abview *ab, int arm, double *x, double *y, int *conc,
                         size_t max_points);
/* True when the arm's throughput is divided by GPUs it counted (its recipe's
 * tp on a GPU runner); false for a CPU run or an unknown count: per server. */
bool abview_arm_counts_gpus(const struct abview *ab, int arm);

/* Draws the A/B view but the footer. */
void abview_render(struct abview *ab, struct ui_grid *g, const struct ui_layout *l,
                   const struct ui_glyphs *gl);

/* Keys: L asks for the past runs (UI_CMD_PAST_RUNS into the selected
 * column), l for the running arm's log, b for the recipes (while an arm runs
 * it asks first: y stops it), q for UI_CMD_QUIT (asks first while an arm
 * runs); Tab / Left / Right select a column, [ ] step the concurrency shown
 * (Esc: live again), x clears a past column.
 * Mouse: a click selects a column (on a past point: shows that concurrency);
 * the wheel over the columns steps the concurrency. */
extern const struct ui_screen abview_screen;

#endif
