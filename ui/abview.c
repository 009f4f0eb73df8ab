/* The A/B view: two arms, their ratios and the sweep curve (pure; no ncurses). */
#include "abview.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ui_util.h"

void abview_init(struct abview *ab, const struct recipe *off, const struct recipe *mtp,
                 const char *results_dir) {
  memset(ab, 0, sizeof *ab);
  runview_init(&ab->arm[AB_OFF], off);
  runview_init(&ab->arm[AB_MTP], mtp);
  ab->recipe[AB_OFF] = off;
  ab->recipe[AB_MTP] = mtp;
  ab->status_role = THEME_MAIN;
  char *dflt = results_dir ? NULL : run_default_results_dir_alloc();
  snprintf(ab->results_dir, sizeof ab->results_dir, "%s", results_dir ? results_dir : dflt);
  free(dflt);
}

static void past_unload(struct abview_past *p) {
  if (p->loaded)
    run_compare_side_fini(&p->side);
  p->loaded = false;
  p->folder[0] = '\0';
}

void abview_fini(struct abview *ab) {
  for (int a = 0; a < 2; a++) {
    past_unload(&ab->past[a]);
    past_unload(&ab->repeats[a]);
  }
}

/* p holds side (taken over) loaded from path, in place of what it held. */
static void past_set(struct abview_past *p, const struct run_compare_side *side, const char *path) {
  past_unload(p);
  p->side = *side;
  p->loaded = true;
  const char *base = strrchr(path, '/');
  snprintf(p->folder, sizeof p->folder, "%s", base && base[1] ? base + 1 : path);
}

int abview_load_past(struct abview *ab, int arm, const char *path, struct st_err *err) {
  struct run_compare_side side;
  if (run_compare_side_load(path, &side, err) != 0) {
    run_compare_side_fini(&side);
    return -1;
  }
  past_set(&ab->past[arm], &side, path);
  ab->shown_conc = 0;
  return 0;
}

int abview_load_repeats(struct abview *ab, char dirs[][RUN_SESSION_MAX_REPEATS][1024], int n,
                        struct st_err *err) {
  if (n < 1 || n > RUN_SESSION_MAX_REPEATS)
    return err_setf(err, "repeats: %d (1 to %d)", n, RUN_SESSION_MAX_REPEATS);
  struct run_compare_side side[2];
  memset(side, 0, sizeof side);
  for (int a = 0; a < 2; a++) {
    const char *paths[RUN_SESSION_MAX_REPEATS];
    for (int k = 0; k < n; k++)
      paths[k] = dirs[a][k];
    if (run_compare_side_load_repeats(paths, (size_t)n, &side[a], err) != 0) {
      run_compare_side_fini(&side[0]);
      run_compare_side_fini(&side[1]);
      return -1;
    }
  }
  for (int a = 0; a < 2; a++)
    past_set(&ab->repeats[a], &side[a], dirs[a][0]);
  return 0;
}

/* side's result nearest concurrency want (want <= 0: the highest; NULL: none). */
static const struct results_file *nearest_result(const struct run_compare_side *side, int want) {
  if (side->n_results == 0)
    return NULL;
  if (want <= 0)
    return &side->results[side->n_results - 1]; /* sorted by concurrency */
  const struct results_file *best = NULL;
  for (size_t i = 0; i < side->n_results; i++) {
    const struct results_file *rf = &side->results[i];
    if (!best || abs(rf->max_concurrency - want) < abs(best->max_concurrency - want))
      best = rf;
  }
  return best;
}

const struct results_file *abview_repeats_result(const struct abview *ab, int arm) {
  if (!ab->repeats[AB_OFF].loaded || !ab->repeats[AB_MTP].loaded || ab->running ||
      ab->past[AB_OFF].loaded || ab->past[AB_MTP].loaded)
    return NULL;
  const struct runview *off = &ab->arm[AB_OFF];
  int want = ab->shown_conc > 0 ? ab->shown_conc
             : off->have_snap   ? off->snap.concurrency.target
                                : 0;
  const struct results_file *at = nearest_result(&ab->repeats[AB_OFF].side, want);
  /* a concurrency both arms' repeats measured: never a ratio of unpaired points */
  const struct results_file *mine = NULL, *other = NULL;
  for (int a = 0; at && a < 2; a++) {
    const struct run_compare_side *side = &ab->repeats[a].side;
    for (size_t i = 0; i < side->n_results; i++)
      if (side->results[i].max_concurrency == at->max_concurrency)
        *(a == arm ? &mine : &other) = &side->results[i];
  }
  return other ? mine : NULL;
}

const struct results_file *abview_past_result(const struct abview *ab, int arm) {
  const struct abview_past *p = &ab->past[arm];
  if (!p->loaded)
    return NULL;
  int want = ab->shown_conc;
  const struct runview *other = &ab->arm[!arm];
  if (want <= 0 && !ab->past[!arm].loaded && other->have_snap)
    want = other->snap.concurrency.target;
  return nearest_result(&p->side, want);
}

/* The finished point of a live arm nearest concurrency want (NULL: none). */
const struct snap_point_result *abview_live_point(const struct abview *ab, int arm, int want) {
  const struct runview *rv = &ab->arm[arm];
  if (ab->past[arm].loaded || !rv->have_snap || want <= 0)
    return NULL;
  const struct snap_points *h = &rv->snap.points;
  const struct snap_point_result *best = NULL;
  for (int i = 0; i < h->n; i++) {
    const struct snap_point_result *p = &h->point[i];
    /* the latest of several at one concurrency (a restart measures it again) */
    if (!best || abs(p->conc - want) <= abs(best->conc - want))
      best = p;
  }
  return best;
}

const struct snap_point_result *abview_shown_point(const struct abview *ab, int arm) {
  if (ab->shown_conc > 0)
    return abview_live_point(ab, arm, ab->shown_conc);
  /* an arm that is over beside one still measuring: the same concurrency */
  const struct runview *rv = &ab->arm[arm], *other = &ab->arm[!arm];
  if (!runview_finished(rv) || !other->have_snap || runview_finished(other) ||
      ab->past[!arm].loaded)
    return NULL;
  const struct snap_point_result *p = abview_live_point(ab, arm, other->snap.concurrency.target);
  return p && p->conc == other->snap.concurrency.target ? p : NULL;
}

static void add_conc(int *concs, size_t *n, size_t cap, int c) {
  size_t j = 0;
  while (j < *n && concs[j] < c)
    j++;
  if ((j < *n && concs[j] == c) || *n == cap)
    return;
  memmove(concs + j + 1, concs + j, (*n - j) * sizeof concs[0]);
  concs[j] = c;
  (*n)++;
}

void abview_step_conc(struct abview *ab, int step) {
  /* the concurrencies of both columns' points (past results, finished live
   * points), in order, without repeats */
  int concs[2 * SNAP_MAX_POINTS];
  size_t n = 0;
  for (int a = 0; a < 2; a++) {
    for (size_t i = 0; ab->past[a].loaded && i < ab->past[a].side.n_results; i++)
      add_conc(concs, &n, ST_ARRAY_LEN(concs), ab->past[a].side.results[i].max_concurrency);
    const struct snap_points *h = &ab->arm[a].snap.points;
    for (int i = 0; !ab->past[a].loaded && ab->arm[a].have_snap && i < h->n; i++)
      add_conc(concs, &n, ST_ARRAY_LEN(concs), h->point[i].conc);
  }
  if (n == 0) {
    snprintf(ab->status, sizeof ab->status, "no finished point yet (L loads a past run)");
    ab->status_role = THEME_WARNING;
    return;
  }
  int cur = ab->shown_conc;
  if (cur <= 0) {
    const struct results_file *rf = abview_past_result(ab, ab->past[ab->column].loaded ? ab->column
                                                           : ab->past[AB_OFF].loaded ? AB_OFF
                                                                                     : AB_MTP);
    const struct runview *rv = &ab->arm[ab->column];
    cur = rf                                          ? rf->max_concurrency
          : rv->have_snap && rv->snap.concurrency.target > 0 ? rv->snap.concurrency.target
                                                             : concs[n - 1];
    if (step > 0 && cur >= concs[n - 1])
      step = 0; /* from the live point: the newest finished one */
  }
  size_t at = 0;
  while (at + 1 < n && concs[at] < cur)
    at++;
  long next = (long)at + step;
  ab->shown_conc = concs[next < 0 ? 0 : next >= (long)n ? (long)n - 1 : next];
  snprintf(ab->status, sizeof ab->status, "showing concurrency %d (Esc: back to the live figures)",
           ab->shown_conc);
  ab->status_role = THEME_INACTIVE;
}

bool abview_job_remaining_s(const struct abview *ab, double *out_s) {
  /* the session controller's estimate (run_arms_remaining_s) over the
   * columns' live pictures; a column with no recipe or a past run is no arm */
  const struct snap_run *arms[2];
  bool skip[2];
  for (int a = 0; a < 2; a++) {
    arms[a] = ab->arm[a].have_snap ? &ab->arm[a].snap : NULL;
    skip[a] = !ab->recipe[a] || ab->past[a].loaded;
  }
  return run_arms_remaining_s(arms, ab->n_points, skip, 2, false, out_s);
}

/* KV capacity the server reported for a past point (servetop_run.server). */
static double past_kv_tokens(const struct results_file *rf) {
  const cJSON *run = cJSON_GetObjectItemCaseSensitive((const cJSON *)rf->json, "servetop_run");
  const cJSON *server = cJSON_GetObjectItemCaseSensitive(run, "server");
  const cJSON *kv = cJSON_GetObjectItemCaseSensitive(server, "max_total_num_tokens");
  return cJSON_IsNumber(kv) && kv->valuedouble > 0 ? kv->valuedouble : (double)NAN;
}

/* The A/B view's figures, in its order: rows of the figures model (label,
 * unit, which is better from the table; a distribution's p50), then the
 * server's KV capacity, which is not a load figure. */
static const enum fig_id ab_figs[] = {FIG_OUTPUT_TPUT, FIG_TOTAL_TPUT, FIG_REQ_TPUT,
                                      FIG_INTERACTIVITY, FIG_TTFT, FIG_TPOT,
                                      FIG_ITL, FIG_E2EL, FIG_ACCEPT_LENGTH};
enum { AB_N_ROWS = ST_ARRAY_LEN(ab_figs) + 1 };

/* One arm's values in abview_rows() order: the figures of set (NULL: none
 * known) and the KV capacity. */
static void set_values(const struct fig_set *set, double kv_tokens, double *v, double *lo,
                       double *hi) {
  for (size_t i = 0; i < ST_ARRAY_LEN(ab_figs); i++) {
    enum fig_id id = ab_figs[i];
    enum fig_stat stat = fig_desc(id)->kind == FIG_DIST ? FIG_STAT_P50 : FIG_VALUE;
    v[i] = set ? fig_get(set, id, stat) : (double)NAN;
    if (!set || !fig_get_ci(set, id, stat, &lo[i], &hi[i]))
      lo[i] = hi[i] = (double)NAN;
  }
  v[ST_ARRAY_LEN(ab_figs)] = kv_tokens;
  lo[ST_ARRAY_LEN(ab_figs)] = hi[ST_ARRAY_LEN(ab_figs)] = (double)NAN;
}

/* The speculative-decoding label ("none", "mtp", "draft_model"...) of what column arm shows:
 * its repeats' or past run's (NULL when the run did not say), else its recipe's. */
static const char *arm_spec_label(const struct abview *ab, int arm, bool from_repeats) {
  if (from_repeats)
    return ab->repeats[arm].side.spec_label;
  if (ab->past[arm].loaded)
    return ab->past[arm].side.spec_label;
  return ab->recipe[arm] ? recipe_spec_name(ab->recipe[arm]->spec) : NULL;
}

/* Whether the speculative column runs a draft model (llama.cpp's --model-draft twin). */
static bool spec_is_draft(const struct abview *ab) {
  const char *label = arm_spec_label(ab, AB_MTP, false);
  enum recipe_spec spec;
  return label && recipe_spec_parse(label, &spec) && spec == RECIPE_SPEC_DRAFT_MODEL;
}

/* What the speculative column runs, in a word: "draft" for a draft model, else "MTP". */
static const char *spec_word(const struct abview *ab) {
  return spec_is_draft(ab) ? "draft" : "MTP";
}

size_t abview_rows(const struct abview *ab, struct ab_row *rows, size_t max_rows) {
  size_t n = AB_N_ROWS < max_rows ? AB_N_ROWS : max_rows;
  for (size_t i = 0; i < n; i++) {
    if (i == ST_ARRAY_LEN(ab_figs)) {
      rows[i].label = "KV tokens";
      rows[i].higher_is_better = true;
      rows[i].unit = 'k';
      continue;
    }
    const struct fig_desc *d = fig_desc(ab_figs[i]);
    if (d->kind == FIG_DIST) {
      snprintf(rows[i].label_buf, sizeof rows[i].label_buf, "%s p50", d->label);
      rows[i].label = rows[i].label_buf;
    } else {
      rows[i].label = d->label;
    }
    rows[i].higher_is_better = d->higher_is_better;
    rows[i].unit = strcmp(d->unit, "ms") == 0 ? 'm' : 'n';
  }
  /* the repeats over: every arm's repeats at one concurrency (abview_repeats_result) */
  const struct results_file *rep[2] = {abview_repeats_result(ab, AB_OFF),
                                       abview_repeats_result(ab, AB_MTP)};
  bool from_repeats = rep[AB_OFF] && rep[AB_MTP];
  struct fig_set shown[2]; /* what each column shows, for the per-chunk rule */
  int spec[2];             /* whether its speculative decoding is on (run_spec_label_on) */
  for (int a = 0; a < 2; a++) {
    double v[AB_N_ROWS], lo[AB_N_ROWS], hi[AB_N_ROWS];
    const struct results_file *rf = from_repeats ? rep[a] : abview_past_result(ab, a);
    const struct snap_point_result *pt = rf ? NULL : abview_shown_point(ab, a);
    const struct runview *rv = &ab->arm[a];
    const struct snap_run *s = &rv->snap;
    memset(&shown[a], 0, sizeof shown[a]);
    spec[a] = run_spec_label_on(arm_spec_label(ab, a, from_repeats));
    if (rf) {
      shown[a] = rf->figs;
      set_values(&rf->figs, past_kv_tokens(rf), v, lo, hi);
    } else if (pt) {
      shown[a] = pt->figs;
      set_values(&pt->figs, pt->kv_tokens_valid ? (double)pt->kv_tokens : (double)NAN, v, lo, hi);
    } else if (rv->have_snap) {
      struct fig_set run = s->figures.run;
      /* the point's own acceptance as the run view shows it (the result's once saved) */
      fig_set_scalar(&run, FIG_ACCEPT_LENGTH, s->spec.accept_length_valid, s->spec.accept_length);
      shown[a] = run;
      set_values(&run,
                 s->load.max_total_num_tokens_valid ? (double)s->load.max_total_num_tokens
                                                    : (double)NAN,
                 v, lo, hi);
    } else {
      spec[a] = -1; /* nothing shown: nothing to be unlike */
      set_values(NULL, (double)NAN, v, lo, hi);
    }
    for (size_t i = 0; i < n; i++) {
      rows[i].value[a] = v[i];
      rows[i].lo[a] = lo[i];
      rows[i].hi[a] = hi[i];
    }
  }
  for (size_t i = 0; i < n; i++) {
    struct run_compare_value cv;
    if (from_repeats && i < ST_ARRAY_LEN(ab_figs)) {
      /* as `servetop compare` does: the means over the repeats, the ratio's interval from
       * their spread (one repeat: from each result's own interval) */
      enum fig_stat stat = fig_desc(ab_figs[i])->kind == FIG_DIST ? FIG_STAT_P50 : FIG_VALUE;
      run_compare_figure(&ab->repeats[AB_OFF].side, rep[AB_OFF], &ab->repeats[AB_MTP].side,
                         rep[AB_MTP], ab_figs[i], stat, &cv);
      rows[i].value[AB_OFF] = cv.has_a ? cv.a : (double)NAN;
      rows[i].value[AB_MTP] = cv.has_b ? cv.b : (double)NAN;
      rows[i].ratio = cv.ratio;
      for (int a = 0; a < 2 && cv.ratio.repeats > 1; a++) /* one repeat's interval is not the mean's */
        rows[i].lo[a] = rows[i].hi[a] = (double)NAN;
      continue;
    }
    ci_ratio_of_intervals(rows[i].value[AB_OFF], rows[i].lo[AB_OFF], rows[i].hi[AB_OFF],
                          rows[i].value[AB_MTP], rows[i].lo[AB_MTP], rows[i].hi[AB_MTP],
                          rows[i].higher_is_better, &rows[i].ratio);
    if (i < ST_ARRAY_LEN(ab_figs) &&
        fig_not_comparable(ab_figs[i], &shown[AB_OFF], spec[AB_OFF], &shown[AB_MTP], spec[AB_MTP]))
      rows[i].ratio.verdict = CI_NOT_COMPARABLE; /* as compare says it (run_compare_figure) */
  }
  return n;
}

bool abview_arm_counts_gpus(const struct abview *ab, int arm) {
  if (ab->past[arm].loaded)
    return ab->past[arm].side.n_gpus > 0 && !ab->past[arm].side.on_cpu;
  const struct recipe *r = ab->recipe[arm];
  return r && !(r->runner && strcmp(r->runner, "cpu") == 0) && !(r->gpu && strcmp(r->gpu, "cpu") == 0);
}

/* The like-with-like facts of what column arm shows (run_like_check's input); false when it
 * shows nothing yet. A live arm knows its engine, provenance, GPUs and concurrency. */
static bool arm_facts(const struct abview *ab, int arm, struct run_like_facts *f) {
  const struct results_file *rf = abview_past_result(ab, arm);
  const struct results_file *rep = abview_repeats_result(ab, arm);
  if (rf || rep) {
    run_like_facts_from_result(rf ? &ab->past[arm].side : &ab->repeats[arm].side, rf ? rf : rep,
                               f);
    return true;
  }
  const struct runview *rv = &ab->arm[arm];
  if (!rv->have_snap)
    return false;
  run_like_facts_init(f);
  const struct snap_run *s = &rv->snap;
  if (s->server.engine[0]) {
    snprintf(f->engine, sizeof f->engine, "%s", s->server.engine);
    f->simulated = s->server.simulated ? 1 : 0;
  }
  const struct recipe *r = ab->recipe[arm];
  if (r && r->runner)
    snprintf(f->gpu_type, sizeof f->gpu_type, "%s", r->runner);
  if (r && r->runner && strcmp(r->runner, "cpu") == 0)
    f->n_gpus = 0;
  else if (r && r->n_points > 0 && r->points[0].tp > 0)
    f->n_gpus = r->points[0].tp; /* as compare reads recipe.json */
  const struct snap_point_result *pt = abview_shown_point(ab, arm);
  int conc = pt ? pt->conc : s->concurrency.target;
  f->concurrency = conc > 0 ? conc : -1;
  return true;
}

bool abview_unlike(const struct abview *ab, char *why, size_t why_bytes) {
  if (why_bytes)
    why[0] = '\0';
  struct run_like_facts f[2];
  if (!arm_facts(ab, AB_OFF, &f[0]) || !arm_facts(ab, AB_MTP, &f[1]))
    return false; /* one column shows nothing: nothing is divided */
  return run_like_check(&f[0], &f[1], why, why_bytes) > 0;
}

bool abview_arm_simulated(const struct abview *ab, int arm) {
  const struct results_file *rf = abview_past_result(ab, arm);
  if (rf)
    return run_result_simulated(rf) > 0;
  return ab->arm[arm].have_snap && ab->arm[arm].snap.server.simulated;
}

size_t abview_curve(const struct abview *ab, int arm, double *x, double *y, size_t max_points) {
  return abview_curve_conc(ab, arm, x, y, NULL, max_points);
}

size_t abview_curve_conc(const struct abview *ab, int arm, double *x, double *y, int *conc,
                         size_t max_points) {
  const struct runview *rv = &ab->arm[arm];
  const struct recipe *r = ab->recipe[arm];
  size_t n = 0;
  if (ab->past[arm].loaded) {
    const struct run_compare_side *side = &ab->past[arm].side;
    int gpus = side->n_gpus > 0 ? side->n_gpus : 1;
    for (size_t i = 0; i < side->n_results && n < max_points; i++) {
      x[n] = fig_get(&side->results[i].figs, FIG_INTERACTIVITY, FIG_VALUE);
      y[n] = fig_get(&side->results[i].figs, FIG_OUTPUT_TPUT, FIG_VALUE) / gpus;
      if (conc)
        conc[n] = side->results[i].max_concurrency;
      n++;
    }
    return n;
  }
  /* every point of the arm measured to the end, the latest at each concurrency */
  const struct snap_points *h = &rv->snap.points;
  for (int i = 0; rv->have_snap && i < h->n && n < max_points; i++) {
    const struct snap_point_result *p = &h->point[i];
    if (!p->measured_to_end)
      continue;
    bool newer = false;
    for (int k = i + 1; k < h->n && !newer; k++)
      newer = h->point[k].measured_to_end && h->point[k].conc == p->conc;
    if (newer)
      continue;
    int gpus = r && p->point_index >= 0 && (size_t)p->point_index < r->n_points
                   ? r->points[p->point_index].tp
                   : 1;
    x[n] = fig_get(&p->figs, FIG_INTERACTIVITY, FIG_VALUE);
    y[n] = fig_get(&p->figs, FIG_OUTPUT_TPUT, FIG_VALUE) / (gpus > 0 ? gpus : 1);
    if (conc)
      conc[n] = p->conc;
    n++;
  }
  return n;
}

/* ---------------------------------------------------------------- drawing */

static void fmt_value(double v, char unit, char *buf, size_t n) {
  if (unit == 'm')
    ui_fmt_ms(v, buf, n);
  else
    ui_fmt_si(v, buf, n);
}

static void put_right(struct ui_grid *g, int x_end, int y, int w, const char *text,
                      enum theme_role role, const struct ui_glyphs *gl) {
  int len = ui_text_cells(text);
  ui_grid_text(g, x_end - (len < w ? len : w), y, w, text, role, gl->braille);
}

enum { ROWS_Y = 1, LABEL_W = 13 };  /* rows start one line into the box */

/* A past column: what was run, and its points (the one shown marked). */
static void render_past_arm(const struct abview *ab, int arm, struct ui_grid *g, struct ui_rect in,
                            int x0, int points_y, const struct ui_glyphs *gl) {
  const struct abview_past *p = &ab->past[arm];
  const struct results_file *shown = abview_past_result(ab, arm);
  int end = in.x + in.w;
  char buf[160];
  snprintf(buf, sizeof buf, "past run%sconc %d%s%zu point%s", gl->separator,
           shown ? shown->max_concurrency : 0, gl->separator, p->side.n_results,
           p->side.n_results == 1 ? "" : "s");
  ui_put(g, x0, in.y, end, buf, THEME_MAIN, gl);
  if (points_y >= in.y + in.h)
    return;
  ui_put(g, in.x + 1, points_y, end, "  conc    out tok/s  tok/s/user", THEME_HEADER, gl);
  /* a point too short for its intervals is marked after its figures */
  for (size_t i = 0; i < p->side.n_results; i++) {
    int y = points_y + 1 + (int)i;
    if (y >= in.y + in.h)
      break;
    const struct results_file *rf = &p->side.results[i];
    char out[16], user[16];
    snprintf(buf, sizeof buf, "%s %4d  %11s  %10s", rf == shown ? ">" : " ", rf->max_concurrency,
             ui_fmt_si(fig_get(&rf->figs, FIG_OUTPUT_TPUT, FIG_VALUE), out, sizeof out),
             ui_fmt_si(fig_get(&rf->figs, FIG_INTERACTIVITY, FIG_VALUE), user, sizeof user));
    int x = ui_put(g, in.x + 1, y, end, buf, rf == shown ? THEME_SELECTED : THEME_MAIN, gl);
    if (run_result_short(rf, NULL, 0))
      ui_put(g, x, y, end, " short", THEME_WARNING, gl);
  }
}

/* Row of the first past point line inside a column (see abview_click). */
static int past_points_y(struct ui_rect in, size_t n_rows) {
  return in.y + ROWS_Y + (int)n_rows + 1;
}

static void render_arm(struct abview *ab, int arm, struct ui_grid *g, struct ui_rect box,
                       const struct ab_row *rows, size_t n_rows, double chart_max,
                       const struct ui_glyphs *gl) {
  const struct runview *rv = &ab->arm[arm];
  const struct recipe *r = ab->recipe[arm];
  const struct abview_past *past = &ab->past[arm];
  enum theme_role arm_role = arm == AB_MTP ? THEME_ARM_MTP : THEME_ARM_OFF;
  char title[320];
  const char *name = past->loaded ? (past->side.name ? past->side.name : past->folder)
                                  : r ? r->name : "not loaded";
  /* provenance first, the selection mark last: a narrow box cuts the name, never those */
  char prefix[64], cut[200];
  snprintf(prefix, sizeof prefix, "%s%s%s", arm == AB_MTP ? spec_word(ab) : "off",
           abview_arm_simulated(ab, arm) ? " SIMULATED" : "", gl->separator);
  const char *suffix = ab->column == arm ? " <" : "";
  int room = box.w - 8 - ui_text_cells(prefix) - ui_text_cells(suffix); /* ui_box's title room */
  snprintf(cut, sizeof cut, "%s", name);
  if (room > 1 && ui_text_cells(cut) > room && (size_t)room < sizeof cut - 4) {
    cut[room - 1] = '\0'; /* recipe names are ASCII */
    strcat(cut, gl->braille ? "…" : "~");
  }
  snprintf(title, sizeof title, "%s%s%s", prefix, cut, suffix);
  ui_box(g, box, title, ab->column == arm ? THEME_HOTKEY : THEME_BORDER, arm_role, gl);
  struct ui_rect in = ui_rect_inner(box);
  int end = in.x + in.w;
  int x0 = in.x + 1; /* the column's first line */
  if (past->loaded) {
    render_past_arm(ab, arm, g, in, x0, past_points_y(in, n_rows), gl);
  } else if (!rv->have_snap) {
    ui_put(g, x0, in.y, end, r ? "waiting for its run" : "empty: L loads a past run",
        THEME_INACTIVE, gl);
  } else {
    /* head, then a mark when points are too short for their intervals (ci_point_short),
     * then the rest: the mark comes before the request counts, which a narrow column cuts */
    char head[96], tail[96], mark[32] = "";
    const struct snap_point_result *pt = abview_shown_point(ab, arm);
    const struct snap_progress *pr = &rv->snap.progress;
    if (pt) {
      char d[16];
      snprintf(head, sizeof head, "conc %d%spoint %d %s", pt->conc, gl->separator,
               pt->point_index + 1, pt->end);
      snprintf(tail, sizeof tail, "%s%lld/%lld req in %s", gl->separator, (long long)pt->completed,
               (long long)pt->total, ui_fmt_duration_s(pt->duration_s, d, sizeof d));
      if (ci_point_short(pt->completed, pt->duration_s, pt->conc, NULL, 0))
        snprintf(mark, sizeof mark, "%sshort", gl->separator);
    } else if (runview_finished(rv) && rv->snap.points.n > 0) {
      /* over: what it measured, from the saved points */
      long long req = 0;
      int n_short = 0;
      for (int i = 0; i < rv->snap.points.n; i++) {
        const struct snap_point_result *p = &rv->snap.points.point[i];
        req += p->completed;
        n_short += ci_point_short(p->completed, p->duration_s, p->conc, NULL, 0);
      }
      snprintf(head, sizeof head, "%s%s%d point%s saved", snap_run_phase_name(pr->phase),
               gl->separator, rv->snap.points.n_written, rv->snap.points.n_written == 1 ? "" : "s");
      snprintf(tail, sizeof tail, "%s%lld req", gl->separator, req);
      if (n_short > 0)
        snprintf(mark, sizeof mark, "%s%d short", gl->separator, n_short);
    } else {
      snprintf(head, sizeof head, "%s%spoint %d/%d%s%lld/%lld req%sconc %d",
               snap_run_phase_name(pr->phase), gl->separator, pr->point_index + 1,
               pr->n_points > 0 ? pr->n_points : 1, gl->separator, (long long)pr->done,
               (long long)pr->total, gl->separator, rv->snap.concurrency.target);
      tail[0] = '\0';
    }
    enum theme_role role = pt ? THEME_SELECTED : THEME_MAIN;
    int x = ui_put(g, x0, in.y, end, head, role, gl);
    x = ui_put(g, x, in.y, end, mark, THEME_WARNING, gl);
    ui_put(g, x, in.y, end, tail, role, gl);
  }
  for (size_t i = 0; i < n_rows && ROWS_Y + (int)i < in.h; i++) {
    int y = in.y + ROWS_Y + (int)i;
    ui_put(g, in.x + 1, y, end, rows[i].label, THEME_INACTIVE, gl);
    char v[16];
    fmt_value(rows[i].value[arm], rows[i].unit, v, sizeof v);
    put_right(g, in.x + LABEL_W + 9, y, 9, v, isnan(rows[i].value[arm]) ? THEME_INACTIVE : THEME_MAIN,
              gl);
    /* how sure: the 95% interval's half-width, in percent of the value */
    double val = rows[i].value[arm], lo = rows[i].lo[arm], hi = rows[i].hi[arm];
    if (isfinite(lo) && isfinite(hi) && val > 0 && in.w > LABEL_W + 18) {
      char pm[16];
      snprintf(pm, sizeof pm, "%s%.0f%%", gl->braille ? "±" : "+-",
               100.0 * fmax(hi - val, val - lo) / val);
      ui_put(g, in.x + LABEL_W + 10, y, end, pm, THEME_INACTIVE, gl);
    }
  }
  if (past->loaded)
    return; /* a result file has no time series to chart: its points are listed instead */
  /* output tok/s over time on the scale both arms share */
  int chart_y = in.y + ROWS_Y + (int)n_rows + 1;
  int chart_h = in.y + in.h - chart_y;
  if (chart_h >= 2 && in.w > 10) {
    double values[RUNVIEW_HISTORY];
    size_t want = (size_t)(in.w - 2) * (size_t)ui_chart_samples_per_col(gl);
    size_t n = runview_series_copy(rv, RUNVIEW_OUTPUT_TOK_S, values,
                                   want < RUNVIEW_HISTORY ? want : RUNVIEW_HISTORY);
    struct ui_series s = {values, n, arm_role};
    struct ui_chart_opts o = {.y_min = 0, .y_max = chart_max};
    ui_chart(g, (struct ui_rect){in.x + 1, chart_y, in.w - 2, chart_h}, &s, 1, &o, gl);
  }
}

/* unlike: the columns are not like with like (abview_unlike): no ratio at all. */
static void render_ratio(struct ui_grid *g, struct ui_rect box, const struct ab_row *rows,
                         size_t n_rows, bool unlike, const char *spec,
                         const struct ui_glyphs *gl) {
  struct ui_rect in = ui_pane(g, box, "ratio", gl);
  char over[16];
  snprintf(over, sizeof over, "%s/off", spec);
  put_right(g, in.x + in.w - 1, in.y, in.w - 1, unlike ? "UNLIKE" : over,
            unlike ? THEME_ERROR : THEME_HEADER, gl);
  for (size_t i = 0; i < n_rows && ROWS_Y + (int)i < in.h; i++) {
    int y = in.y + ROWS_Y + (int)i;
    double a = rows[i].value[AB_OFF], b = rows[i].value[AB_MTP];
    char text[24];
    enum theme_role role = THEME_INACTIVE;
    if (unlike) {
      snprintf(text, sizeof text, "hidden");
      role = THEME_ERROR;
    } else if (isnan(a) || isnan(b) || a == 0) {
      snprintf(text, sizeof text, "-");
    } else {
      /* the ratio and its 95% verdict: faster, slower, n.d. (no difference detected), ?
       * (no interval: live figures, or too few requests) */
      const struct ci_ratio *r = &rows[i].ratio;
      double ratio = isfinite(r->ratio) ? r->ratio : b / a; /* repeats: their geometric mean */
      const char *word = r->verdict == CI_NOT_COMPARABLE ? "n/c"
                         : !r->known                       ? "?"
                         : r->verdict == CI_FASTER         ? "faster"
                         : r->verdict == CI_SLOWER         ? "slower"
                                                           : "n.d.";
      snprintf(text, sizeof text, ratio < 10 ? "%.2f%s %s" : "%.1f%s %s", ratio,
               gl->braille ? "×" : "x", word);
      role = r->verdict == CI_NOT_COMPARABLE                ? THEME_INACTIVE
             : !r->known || r->verdict == CI_NO_DIFFERENCE ? THEME_MAIN
             : r->verdict == CI_FASTER                     ? THEME_OK
                                                           : THEME_WARNING;
    }
    put_right(g, in.x + in.w, y, in.w, text, role, gl);
  }
}

static void render_curve(struct abview *ab, struct ui_grid *g, struct ui_rect box,
                         const struct ui_glyphs *gl) {
  /* per GPU only where both arms counted their GPUs; a CPU run is per server */
  bool per_gpu = abview_arm_counts_gpus(ab, AB_OFF) && abview_arm_counts_gpus(ab, AB_MTP);
  ui_box(g, box,
         per_gpu ? "Throughput per GPU vs interactivity (one point per concurrency)"
                 : "Throughput per server vs interactivity (one point per concurrency)",
         THEME_BORDER, THEME_TITLE, gl);
  struct ui_rect in = ui_rect_inner(box);
  if (in.h < 3 || in.w < 20)
    return;
  double x[2][SNAP_MAX_POINTS], y[2][SNAP_MAX_POINTS];
  int conc[2][SNAP_MAX_POINTS];
  struct ui_xy_series s[2];
  size_t total = 0;
  for (int a = 0; a < 2; a++) {
    size_t n = abview_curve_conc(ab, a, x[a], y[a], conc[a], SNAP_MAX_POINTS);
    s[a] = (struct ui_xy_series){x[a], y[a], n, a == AB_MTP ? THEME_ARM_MTP : THEME_ARM_OFF};
    total += n;
  }
  int end = in.x + in.w;
  int x0 = in.x + 1;
  x0 = ui_put(g, x0, in.y, end, per_gpu ? "tok/s/gpu " : "tok/s/server ", THEME_INACTIVE, gl);
  x0 = ui_put(g, x0 + 1, in.y, end, "off", THEME_ARM_OFF, gl);
  ui_put(g, x0 + 2, in.y, end, spec_word(ab), THEME_ARM_MTP, gl);
  if (total == 0) {
    ui_put(g, in.x + 1, in.y + 1, end, "no finished sweep point yet", THEME_INACTIVE, gl);
    return;
  }
  enum { AXIS = 7 };
  struct ui_rect area = {in.x + AXIS, in.y + 1, in.w - AXIS - 1, in.h - 2};
  double x_max, y_max;
  ui_xy_chart(g, area, s, 2, 0, 0, gl, &x_max, &y_max);
  char label[32];
  /* each point says its concurrency, beside its dot where that cell is free */
  for (int a = 0; a < 2 && x_max > 0 && y_max > 0 && area.w > 2 && area.h > 1; a++)
    for (size_t i = 0; i < s[a].n; i++) {
      if (isnan(x[a][i]) || isnan(y[a][i]))
        continue;
      int cx = area.x + (int)lround(x[a][i] / x_max * (area.w - 1));
      int cy = area.y + (area.h - 1) - (int)lround(y[a][i] / y_max * (area.h - 1));
      snprintf(label, sizeof label, "c%d", conc[a][i]);
      int lx = cx + 1 + (int)strlen(label) <= area.x + area.w ? cx + 1 : cx - (int)strlen(label);
      ui_grid_text(g, lx, cy, (int)strlen(label), label,
                   a == AB_MTP ? THEME_ARM_MTP : THEME_ARM_OFF, gl->braille);
    }
  ui_grid_text(g, in.x + 1, area.y, AXIS - 2, ui_fmt_si(y_max, label, sizeof label), THEME_INACTIVE,
               gl->braille);
  ui_grid_text(g, in.x + 1, area.y + area.h - 1, AXIS - 2, "0", THEME_INACTIVE, gl->braille);
  char xl[48], v[16];
  snprintf(xl, sizeof xl, "%s tok/s/user", ui_fmt_si(x_max, v, sizeof v));
  put_right(g, end - 1, in.y + in.h - 1, in.w - AXIS, xl, THEME_INACTIVE, gl);
  ui_put(g, area.x, in.y + in.h - 1, end, "0  interactivity", THEME_INACTIVE, gl);
}

/* The key table: `?` lists it, the footer shows the hints. */
enum { KEY_CONC = 1, KEY_LOG = 2 }; /* indexes of hints that can be inactive */
static const struct ui_key_help keys[] = {
    {"L", "load a past run folder into the selected column", "load past run", NULL, 'L', 2},
    {"[ / ]", "previous / next concurrency measured (live, past)", "conc", "[ ]", ']', 4},
    {"Esc", "back to the live figures after [ / ]", NULL, NULL, 0, 0},
    {"l", "the log of the arm running (or that ran last)", "log", NULL, 'l', 3},
    {"b", "back to the recipes (stops a running arm first: asks)", "back", NULL, 'b', 0},
    {"Tab Left/Right", "select the off / MTP column (where L loads)", NULL, NULL, 0, 0},
    {"x", "clear the selected column's past run", NULL, NULL, 0, 0},
    {"y / n", "(stop or quit question) yes / no", NULL, NULL, 0, 0},
    {"mouse", "click selects a column or a past point; wheel: [ ]", NULL, NULL, 0, 0},
    {"ratio", "MTP/off and its 95% verdict: faster or slower", NULL, NULL, 0, 0},
    {"n.d. ? n/c", "no difference / no interval (too short) / chunks differ", NULL,
     NULL, 0, 0},
    {"+-N%", "an arm's 95% interval, in percent of its value", NULL, NULL, 0, 0},
    UI_KEY_HELP_ROW,
    {"q", "quit; asks first and stops the server when one is up", "quit", NULL, 'q', 0},
};

void abview_render(struct abview *ab, struct ui_grid *g, const struct ui_layout *l,
                   const struct ui_glyphs *gl) {
  if (!ui_frame_begin(g, l, gl))
    return;
  struct ui_rect h = l->slot[UI_SLOT_HEADER];
  ui_grid_fill(g, h, THEME_HEADER);
  struct ab_row rows[16];
  size_t n_rows = abview_rows(ab, rows, ST_ARRAY_LEN(rows));
  int from_repeats = 0; /* the repeats the ratios rest on (0: one run each) */
  for (size_t i = 0; i < n_rows; i++)
    from_repeats = rows[i].ratio.repeats > from_repeats ? rows[i].ratio.repeats : from_repeats;
  char head[320];
  double eta;
  char eta_text[48] = "", running[48] = "", how_sure[64] = "";
  if (ab->running && abview_job_remaining_s(ab, &eta)) {
    char d[16];
    snprintf(eta_text, sizeof eta_text, "%sETA %s (%s)", gl->separator,
             ui_fmt_duration_s(eta, d, sizeof d), ab->n_repeats > 1 ? "this repeat" : "both arms");
  }
  if (ab->running)
    snprintf(running, sizeof running, "%srunning", gl->separator);
  if (ab->running && ab->n_repeats > 1)
    snprintf(running + strlen(running), sizeof running - strlen(running), " repeat %d/%d",
             ab->repeat + 1, ab->n_repeats);
  if (from_repeats > 1)
    snprintf(how_sure, sizeof how_sure, "%sratios: 95%% CI from %d repeats", gl->separator,
             from_repeats);
  /* what a narrow terminal keeps: that it runs, how long it has left, how sure the ratios are */
  snprintf(head, sizeof head,
           " servetop%sA/B%s%s%s%s%s, same scales%s"
           "ratio: 95%% verdict (n.d. no difference detected, ? no interval)",
           gl->separator, running, eta_text, how_sure, gl->separator,
           spec_is_draft(ab) ? "a draft model against the target alone"
                             : "MTP against its non-MTP twin",
           gl->separator);
  ui_put(g, h.x, h.y, h.x + h.w, head, THEME_HEADER, gl);
  /* unlike columns: said first, in red, in place of the title; no ratio anywhere */
  char why[768];
  bool unlike = abview_unlike(ab, why, sizeof why);
  if (unlike) {
    char line[900];
    snprintf(line, sizeof line, " UNLIKE: %s -- ratios hidden", why);
    ui_grid_fill(g, h, THEME_ERROR);
    ui_put(g, h.x, h.y, h.x + h.w, line, THEME_ERROR, gl);
  }

  /* one scale for both arms' throughput charts */
  double chart_max = 0;
  for (int a = 0; a < 2; a++) {
    double values[RUNVIEW_HISTORY];
    size_t n = runview_series_copy(&ab->arm[a], RUNVIEW_OUTPUT_TOK_S, values, RUNVIEW_HISTORY);
    for (size_t i = 0; i < n; i++)
      if (!isnan(values[i]) && values[i] > chart_max)
        chart_max = values[i];
  }
  if (chart_max <= 0)
    chart_max = 1;
  render_arm(ab, AB_OFF, g, l->slot[UI_SLOT_ARM_A], rows, n_rows, chart_max, gl);
  render_ratio(g, l->slot[UI_SLOT_RATIO], rows, n_rows, unlike, spec_word(ab), gl);
  render_arm(ab, AB_MTP, g, l->slot[UI_SLOT_ARM_B], rows, n_rows, chart_max, gl);
  render_curve(ab, g, l->slot[UI_SLOT_CURVE], gl);
}

static void footer(void *self, struct ui_footer *f) {
  struct abview *ab = self;
  if (ab->confirm == RUNVIEW_CONFIRM_QUIT) {
    f->prompt = "A server is up: stop it and quit? y / n";
    f->prompt_role = THEME_WARNING;
    return;
  }
  if (ab->confirm == RUNVIEW_CONFIRM_BACK) {
    f->prompt = "Stop the A/B run and go back to the recipes? y / n";
    f->prompt_role = THEME_WARNING;
    f->prompt_hint = "(what was measured stays in its run folders)";
    return;
  }
  if (!ab->past[AB_OFF].loaded && !ab->past[AB_MTP].loaded &&
      ab->arm[AB_OFF].snap.points.n == 0 && ab->arm[AB_MTP].snap.points.n == 0)
    f->inactive |= 1u << KEY_CONC;
  if (!ab->arm[AB_OFF].have_snap && !ab->arm[AB_MTP].have_snap)
    f->inactive |= 1u << KEY_LOG;
  f->status = ab->status;
  f->status_role = ab->status_role;
}

/* ---------------------------------------------------------------- input */

/* b and q: while an arm runs, ask first (y stops it); else go at once. */
static void leave_or_ask(struct abview *ab, struct ui_ctx *ctx, enum ui_cmd_kind go,
                         enum runview_confirm ask) {
  if (ab->running)
    ab->confirm = ask;
  else
    ctx->cmd.kind = go;
}

static bool on_key(void *self, int key, struct ui_ctx *ctx) {
  struct abview *ab = self;
  if (ab->confirm != RUNVIEW_CONFIRM_NONE) {
    enum runview_confirm asked = ab->confirm;
    ab->confirm = RUNVIEW_CONFIRM_NONE;
    if (key == 'y' || key == 'Y')
      ctx->cmd.kind = asked == RUNVIEW_CONFIRM_QUIT ? UI_CMD_QUIT : UI_CMD_HOME;
    return true;
  }
  switch (key) {
  case 'L':
    ctx->cmd.kind = UI_CMD_PAST_RUNS;
    ctx->cmd.column = ab->column;
    break;
  case 'l':
    if (!ab->arm[AB_OFF].have_snap && !ab->arm[AB_MTP].have_snap) {
      snprintf(ab->status, sizeof ab->status, "no arm has run yet: no log");
      ab->status_role = THEME_WARNING;
      break;
    }
    ctx->cmd.kind = UI_CMD_OPEN_LOG;
    break;
  case UI_KEY_TAB: ab->column = !ab->column; break;
  case UI_KEY_LEFT: ab->column = AB_OFF; break;
  case UI_KEY_RIGHT: ab->column = AB_MTP; break;
  case '[': abview_step_conc(ab, -1); break;
  case ']': abview_step_conc(ab, 1); break;
  case UI_KEY_ESCAPE:
    if (ab->shown_conc == 0)
      return false;
    ab->shown_conc = 0;
    snprintf(ab->status, sizeof ab->status, "the live figures");
    ab->status_role = THEME_INACTIVE;
    break;
  case 'x':
    if (!ab->past[ab->column].loaded)
      return false;
    past_unload(&ab->past[ab->column]);
    ab->shown_conc = 0;
    break;
  case 'b':
    leave_or_ask(ab, ctx, UI_CMD_HOME, RUNVIEW_CONFIRM_BACK);
    break;
  case 'q':
  case 'Q':
    leave_or_ask(ab, ctx, UI_CMD_QUIT, RUNVIEW_CONFIRM_QUIT);
    break;
  default: return false;
  }
  return true;
}

static bool on_click(void *self, int x, int y, struct ui_ctx *ctx) {
  struct abview *ab = self;
  if (ab->confirm != RUNVIEW_CONFIRM_NONE)
    return false;
  for (int arm = 0; arm < 2; arm++) {
    struct ui_rect box = ctx->layout->slot[arm == AB_OFF ? UI_SLOT_ARM_A : UI_SLOT_ARM_B];
    if (!ui_rect_contains(box, x, y))
      continue;
    ab->column = arm;
    const struct abview_past *p = &ab->past[arm];
    struct ab_row rows[16];
    int first = past_points_y(ui_rect_inner(box), abview_rows(ab, rows, ST_ARRAY_LEN(rows))) + 1;
    if (p->loaded && y >= first && (size_t)(y - first) < p->side.n_results)
      ab->shown_conc = p->side.results[y - first].max_concurrency;
    return true;
  }
  return false;
}

static bool on_wheel(void *self, int x, int y, int lines, struct ui_ctx *ctx) {
  struct abview *ab = self;
  const struct ui_layout *l = ctx->layout;
  if (ab->confirm != RUNVIEW_CONFIRM_NONE)
    return false;
  bool over_columns = ui_rect_contains(l->slot[UI_SLOT_ARM_A], x, y) ||
                      ui_rect_contains(l->slot[UI_SLOT_RATIO], x, y) ||
                      ui_rect_contains(l->slot[UI_SLOT_ARM_B], x, y);
  if (!over_columns)
    return false;
  abview_step_conc(ab, lines > 0 ? 1 : -1);
  return true;
}

static void render(void *self, struct ui_grid *g, const struct ui_ctx *ctx) {
  abview_render(self, g, ctx->layout, ctx->gl);
}

const struct ui_screen abview_screen = {
    .name = "ab",
    .help_title = "A/B view keys",
    .keys = keys,
    .n_keys = ST_ARRAY_LEN(keys),
    .view = UI_VIEW_AB,
    .key = on_key,
    .click = on_click,
    .wheel = on_wheel,
    .render = render,
    .footer = footer,
};
