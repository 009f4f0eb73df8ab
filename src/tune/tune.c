/* The search core of `servetop tune`: --slo and --knob parsing, the per-configuration
 * concurrency search (bracket and bisect), the coordinate search over configurations with
 * pruning. docs/tune.md says why each choice. */
#include "tune/tune_internal.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- --slo */
static const char *const figure_keys[TUNE_N_FIGURES] = {
    "ttft_p99_ms", "tpot_p99_ms", "e2el_p99_ms", "itl_p99_ms", "min_tok_s_per_user",
};

const char *tune_figure_key(enum tune_figure f) {
  return (unsigned)f < TUNE_N_FIGURES ? figure_keys[f] : "?";
}

bool tune_slo_has_p99(const struct tune_slo *slo, const char **key) {
  for (int f = 0; f < TUNE_N_FIGURES; f++)
    if (slo->set[f] && f != TUNE_MIN_TOK_S_PER_USER) {
      if (key)
        *key = figure_keys[f];
      return true;
    }
  return false;
}

/* A whole-string finite number. */
static bool parse_number(const char *s, size_t len, double *out) {
  char buf[64];
  if (len == 0 || len >= sizeof buf)
    return false;
  memcpy(buf, s, len);
  buf[len] = '\0';
  char *end;
  errno = 0;
  double v = strtod(buf, &end);
  if (errno || *end || !isfinite(v) || isspace((unsigned char)buf[0]))
    return false;
  *out = v;
  return true;
}

/* A whole-string positive finite number. */
static bool parse_positive(const char *s, size_t len, double *out) {
  double v;
  if (!parse_number(s, len, &v) || v <= 0)
    return false;
  *out = v;
  return true;
}

int tune_slo_parse(const char *text, struct tune_slo *slo, struct st_err *err) {
  memset(slo, 0, sizeof *slo);
  if (!text || !*text)
    return err_setf(err, "--slo: empty; want KEY=VALUE[,KEY=VALUE...] with keys ttft_p99_ms, "
                         "tpot_p99_ms, e2el_p99_ms, itl_p99_ms, min_tok_s_per_user");
  const char *p = text;
  for (;;) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    const char *eq = memchr(p, '=', len);
    if (len == 0)
      return err_setf(err, "--slo '%s': an empty part (two commas, or a comma at an end)", text);
    if (!eq)
      return err_setf(err, "--slo: '%.*s': want KEY=VALUE", (int)len, p);
    size_t klen = (size_t)(eq - p);
    int f = -1;
    for (int i = 0; i < TUNE_N_FIGURES; i++)
      if (strlen(figure_keys[i]) == klen && strncmp(figure_keys[i], p, klen) == 0)
        f = i;
    if (f < 0)
      return err_setf(err,
                      "--slo: unknown target '%.*s' (known: ttft_p99_ms, tpot_p99_ms, "
                      "e2el_p99_ms, itl_p99_ms, min_tok_s_per_user)",
                      (int)klen, p);
    if (slo->set[f])
      return err_setf(err, "--slo: '%s' given twice", figure_keys[f]);
    double v;
    size_t vlen = len - klen - 1;
    if (!parse_positive(eq + 1, vlen, &v))
      return err_setf(err, "--slo: %s='%.*s': not a positive number", figure_keys[f], (int)vlen,
                      eq + 1);
    slo->set[f] = true;
    slo->target[f] = v;
    if (!end)
      break;
    p = end + 1;
  }
  return 0;
}

/* ---------------------------------------------------------------- --knob */
void tune_knob_free(struct tune_knob *k) {
  for (size_t i = 0; i < k->n_values; i++)
    free(k->values[i]);
  free(k->values);
  free(k->name);
  memset(k, 0, sizeof *k);
}

static void knob_add(struct tune_knob *k, char *value) {
  k->values = xrealloc(k->values, (k->n_values + 1) * sizeof *k->values);
  k->values[k->n_values++] = value;
}

/* Digits after the decimal point as written ("0.04" -> 2). */
static int decimals_of(const char *s, size_t len) {
  const char *dot = memchr(s, '.', len);
  if (!dot)
    return 0;
  int n = 0;
  for (const char *q = dot + 1; q < s + len && isdigit((unsigned char)*q); q++)
    n++;
  return n;
}

enum { TUNE_KNOB_MAX_VALUES = 1000 };

static int knob_range(struct tune_knob *k, const char *vals, const char *text,
                      struct st_err *err) {
  const char *c1 = strchr(vals, ':');
  const char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
  if (!c2 || strchr(c2 + 1, ':'))
    return err_setf(err, "--knob %s: '%s': a range is LO:HI:STEP", text, vals);
  double lo, hi, step;
  size_t l1 = (size_t)(c1 - vals), l2 = (size_t)(c2 - c1 - 1), l3 = strlen(c2 + 1);
  if (!parse_number(vals, l1, &lo))
    return err_setf(err, "--knob %s: LO '%.*s' is not a number", text, (int)l1, vals);
  if (!parse_number(c1 + 1, l2, &hi))
    return err_setf(err, "--knob %s: HI '%.*s' is not a number", text, (int)l2, c1 + 1);
  if (!parse_number(c2 + 1, l3, &step) || step <= 0)
    return err_setf(err, "--knob %s: STEP '%s' is not a positive number", text, c2 + 1);
  if (hi < lo)
    return err_setf(err, "--knob %s: HI %.*s is below LO %.*s", text, (int)l2, c1 + 1, (int)l1,
                    vals);
  double n = floor((hi - lo) / step + 1e-9) + 1;
  if (n > TUNE_KNOB_MAX_VALUES)
    return err_setf(err, "--knob %s: %.0f values (at most %d)", text, n,
                    TUNE_KNOB_MAX_VALUES);
  int dec = decimals_of(vals, l1);
  int d2 = decimals_of(c1 + 1, l2), d3 = decimals_of(c2 + 1, l3);
  dec = dec > d2 ? dec : d2;
  dec = dec > d3 ? dec : d3;
  for (long i = 0; i < (long)n; i++)
    knob_add(k, xasprintf("%.*f", dec, lo + (double)i * step));
  return 0;
}

int tune_knob_parse(const char *text, struct tune_knob *k, struct st_err *err) {
  memset(k, 0, sizeof *k);
  const char *t = text ? text : "";
  const char *eq = strchr(t, '=');
  if (!eq)
    return err_setf(err, "--knob '%s': want NAME=LO:HI:STEP or NAME=V1,V2,...", t);
  const char *name = t;
  while (*name == '-')
    name++;
  size_t nlen = (size_t)(eq - name);
  if (name > eq || nlen == 0)
    return err_setf(err, "--knob '%s': no knob name before '='", t);
  for (size_t i = 0; i < nlen; i++) {
    char ch = name[i];
    if (!isalnum((unsigned char)ch) && ch != '-' && ch != '_' && ch != '.' && ch != '+')
      return err_setf(err, "--knob '%s': the name '%.*s' has '%c' (letters, digits, - _, and . +"
                      " in vLLM's dotted JSON keys)", t, (int)nlen, name, ch);
  }
  const char *vals = eq + 1;
  if (!*vals)
    return err_setf(err, "--knob '%s': no values after '='", t);
  k->name = xstrndup(name, nlen);
  int rc = 0;
  if (strchr(vals, ':')) {
    rc = knob_range(k, vals, t, err);
  } else {
    const char *p = vals;
    for (;;) {
      const char *end = strchr(p, ',');
      size_t len = end ? (size_t)(end - p) : strlen(p);
      if (len == 0) {
        rc = err_setf(err, "--knob '%s': an empty value (two commas, or a comma at an end)", t);
        break;
      }
      for (size_t i = 0; i < k->n_values && rc == 0; i++)
        if (strlen(k->values[i]) == len && strncmp(k->values[i], p, len) == 0)
          rc = err_setf(err, "--knob '%s': the value '%.*s' is given twice", t, (int)len, p);
      if (rc)
        break;
      if (k->n_values >= TUNE_KNOB_MAX_VALUES) {
        rc = err_setf(err, "--knob '%s': more than %d values", t, TUNE_KNOB_MAX_VALUES);
        break;
      }
      knob_add(k, xstrndup(p, len));
      if (!end)
        break;
      p = end + 1;
    }
  }
  if (rc)
    tune_knob_free(k);
  return rc;
}

/* ---------------------------------------------------------------- judging a point */
bool tune_slo_holds(const struct tune_slo *slo, const struct tune_point *pt) {
  for (int f = 0; f < TUNE_N_FIGURES; f++) {
    if (!slo->set[f])
      continue;
    if (f == TUNE_MIN_TOK_S_PER_USER) {
      if (!(pt->figure[f].lo >= slo->target[f]))
        return false;
    } else if (!(pt->figure[f].hi <= slo->target[f])) {
      return false;
    }
  }
  return true;
}

static void options_defaults(const struct tune_options *in, struct tune_options *o) {
  *o = *in;
  if (o->conc_min < 1)
    o->conc_min = 1;
  if (o->conc_max < 1)
    o->conc_max = 1024;
}

static int ceil_log2(long n) {
  int d = 0;
  while ((1L << d) < n)
    d++;
  return d;
}

int tune_points_per_config_max(const struct tune_options *opt_in) {
  struct tune_options o;
  options_defaults(opt_in, &o);
  /* the worst case over where the bracket first fails: k + 1 bracket points, then a bisection
   * of the gap between the last concurrency that held and the one that failed */
  int worst = 1;
  long prev = o.conc_min, c = o.conc_min;
  for (int k = 1; c < o.conc_max; k++) {
    c = 2 * c < o.conc_max ? 2 * c : o.conc_max;
    int pts = k + 1 + ceil_log2(c - prev);
    if (pts > worst)
      worst = pts;
    prev = c;
  }
  int all_hold = 1;
  for (long x = o.conc_min; x < o.conc_max; x = 2 * x < o.conc_max ? 2 * x : o.conc_max)
    all_hold++;
  return worst > all_hold ? worst : all_hold;
}

const char *tune_status_name(enum tune_status s) {
  switch (s) {
  case TUNE_CFG_BEST_FOUND:
    return "best found";
  case TUNE_CFG_NONE_HOLDS:
    return "SLO fails at the lowest concurrency";
  case TUNE_CFG_PRUNED:
    return "pruned";
  case TUNE_CFG_START_FAILED:
    return "failed to start";
  case TUNE_CFG_OUT_OF_BUDGET:
    return "budget ran out";
  }
  return "?";
}

void tune_config_describe(const struct tune_space *space, const struct tune_config *cfg, char *buf,
                          size_t len) {
  size_t used = 0;
  if (len)
    buf[0] = '\0';
  for (size_t k = 0; k < space->n_knobs && used < len; k++) {
    int n = snprintf(buf + used, len - used, "%s%s=%s", k ? " " : "", space->knobs[k].name,
                     space->knobs[k].values[cfg->idx[k]]);
    if (n < 0)
      break;
    used += (size_t)n;
  }
}

/* ---------------------------------------------------------------- the search */
struct search {
  const struct tune_space *space;
  const struct tune_slo *slo;
  struct tune_options opt;
  tune_measure_fn measure;
  void *ctx;
  struct tune_result *res;
  struct st_err *err;
  bool failed; /* the callback returned -1 */
};

bool tune_config_eq(const struct tune_space *space, const struct tune_config *a,
                    const struct tune_config *b) {
  for (size_t k = 0; k < space->n_knobs; k++)
    if (a->idx[k] != b->idx[k])
      return false;
  return true;
}

long tune_config_find(const struct tune_result *res, const struct tune_space *space,
                      const struct tune_config *cfg) {
  for (size_t i = 0; i < res->n_configs; i++)
    if (tune_config_eq(space, &res->configs[i].cfg, cfg))
      return (long)i;
  return -1;
}

bool tune_config_is_candidate(const struct tune_config_result *c) {
  return c->best_conc > 0 &&
         (c->status == TUNE_CFG_BEST_FOUND || c->status == TUNE_CFG_OUT_OF_BUDGET);
}

long tune_best_config(const struct tune_result *res, long except) {
  long best = -1;
  for (size_t i = 0; i < res->n_configs; i++) {
    const struct tune_config_result *c = &res->configs[i];
    if ((long)i == except || !tune_config_is_candidate(c))
      continue;
    if (best < 0 || c->goodput.point > res->configs[best].goodput.point)
      best = (long)i;
  }
  return best;
}

long tune_best_probe(const struct tune_result *res, size_t c) {
  if (c >= res->n_configs || res->configs[c].best_conc <= 0)
    return -1;
  long found = -1;
  for (size_t i = 0; i < res->n_probes; i++)
    if (res->probes[i].config == c && res->probes[i].concurrency == res->configs[c].best_conc &&
        res->probes[i].holds)
      found = (long)i;
  return found;
}

/* Best goodput so far (-inf when none). */
static double best_goodput(const struct search *s) {
  long b = tune_best_config(s->res, -1);
  return b >= 0 ? s->res->configs[b].goodput.point : -(double)INFINITY;
}

int tune_probe(const struct tune_slo *slo, const struct tune_options *opt,
               tune_measure_fn measure, void *ctx, struct tune_result *res, size_t config,
               int conc, struct tune_point *pt, struct st_err *err) {
  struct tune_config_result *c = &res->configs[config];
  if (opt->max_points > 0 && res->points >= opt->max_points) {
    res->out_of_budget = true;
    return TUNE_PROBE_END;
  }
  if (opt->stop && atomic_load(opt->stop)) {
    res->stopped = res->out_of_budget = true;
    return TUNE_PROBE_END;
  }
  memset(pt, 0, sizeof *pt);
  char why[sizeof c->why] = "";
  int rc = measure(ctx, &c->cfg, conc, pt, why, sizeof why, err);
  if (rc == TUNE_STOPPED) {
    res->stopped = res->out_of_budget = true;
    return TUNE_PROBE_END;
  }
  if (rc != 0 && rc != TUNE_START_FAILED)
    return TUNE_PROBE_ERROR;
  res->points++;
  c->points++;
  if (rc == TUNE_START_FAILED) {
    snprintf(c->why, sizeof c->why, "%s", why[0] ? why : "the server did not start");
    return TUNE_PROBE_START_FAILED;
  }
  if (why[0] && !c->why[0]) /* a note on the point (its interval unknown) */
    snprintf(c->why, sizeof c->why, "%s", why);
  bool holds = tune_slo_holds(slo, pt);
  res->probes = xreallocarray(res->probes, res->n_probes + 1, sizeof *res->probes);
  res->probes[res->n_probes++] = (struct tune_probe){config, conc, *pt, holds};
  return holds ? TUNE_PROBE_HOLDS : TUNE_PROBE_FAILS;
}

/* One point: 1 holds, 0 fails, -2 start failed (c->why set), -3 budget, -1 callback error. */
static int probe(struct search *s, struct tune_config_result *c, int conc, struct tune_point *pt) {
  int r = tune_probe(s->slo, &s->opt, s->measure, s->ctx, s->res, (size_t)(c - s->res->configs),
                     conc, pt, s->err);
  if (r == TUNE_PROBE_ERROR)
    s->failed = true;
  if (r >= 0 && s->opt.on_point)
    s->opt.on_point(s->ctx, s->res);
  return r;
}

/* Can the concurrencies still open, [lo, fail), beat `best`? Two bounds (docs/tune.md):
 *  - per user: the tok/s per user does not rise with load, so throughput at c < fail is at
 *    most (fail - 1) x the per-user upper bound measured at lo (when the callback gives it);
 *  - throughput: where the failing point's throughput is not below lo's (no sign of the drop
 *    that retraction or preemption causes past the KV limit), throughput is taken to be
 *    rising on [lo, fail], so its upper bound at fail bounds every c in between.
 * Either below the best goodput so far: the configuration cannot win and is dropped. */
static bool prune_at(struct search *s, struct tune_config_result *c, int lo,
                     const struct tune_point *lo_pt, int fail, const struct tune_point *pt,
                     double best) {
  if (!isfinite(best))
    return false;
  const struct tune_estimate *user = &lo_pt->figure[TUNE_MIN_TOK_S_PER_USER];
  double per_user_bound = user->hi > 0 ? (double)(fail - 1) * user->hi : (double)INFINITY;
  bool rising = pt->throughput.point >= lo_pt->throughput.point;
  double tp_bound = rising ? pt->throughput.hi : (double)INFINITY;
  if (!(per_user_bound < best) && !(tp_bound < best))
    return false;
  c->status = TUNE_CFG_PRUNED;
  if (tp_bound < best)
    snprintf(c->why, sizeof c->why,
             "at concurrency %d the SLO fails and the throughput, rising since %d, is at most "
             "%.4g: below the best goodput %.4g",
             fail, lo, tp_bound, best);
  else
    snprintf(c->why, sizeof c->why,
             "below concurrency %d (the SLO fails there) the throughput is at most %d x %.4g "
             "tok/s per user = %.4g: below the best goodput %.4g",
             fail, fail - 1, user->hi, per_user_bound, best);
  return true;
}

/* One probe's answer r at concurrency conc: where the SLO holds (r == 1) it is
 * the best so far and raises lo; else it lowers hi. Returns true when the
 * config is pruned there (nothing more to probe). */
static bool take_probe(struct search *s, struct tune_config_result *c, int r, int conc,
                       const struct tune_point *pt, int *lo, struct tune_point *lo_pt, int *hi,
                       double best) {
  if (r == 1) {
    *lo = conc;
    c->best_conc = conc;
    c->goodput = pt->throughput;
    *lo_pt = *pt;
    return false;
  }
  *hi = conc;
  c->fail_conc = conc;
  return prune_at(s, c, *lo, lo_pt, *hi, pt, best);
}

/* Bracket (doubling) and bisect: the highest concurrency whose SLO holds. */
static void search_config(struct search *s, struct tune_config_result *c) {
  double best = best_goodput(s);
  struct tune_point pt;
  int lo = s->opt.conc_min, hi = 0;
  int r = probe(s, c, lo, &pt);
  if (r < 0) {
    c->status = r == -2 ? TUNE_CFG_START_FAILED : TUNE_CFG_OUT_OF_BUDGET;
    return;
  }
  if (r == 0) {
    c->status = TUNE_CFG_NONE_HOLDS;
    c->fail_conc = lo;
    return;
  }
  c->best_conc = lo;
  c->goodput = pt.throughput;
  struct tune_point lo_pt = pt;
  while (lo < s->opt.conc_max) {
    int next = 2 * lo < s->opt.conc_max ? 2 * lo : s->opt.conc_max;
    r = probe(s, c, next, &pt);
    if (r < 0)
      break;
    if (take_probe(s, c, r, next, &pt, &lo, &lo_pt, &hi, best))
      return;
    if (r != 1)
      break;
  }
  while (r >= 0 && hi > 0 && hi - lo > 1) {
    int mid = lo + (hi - lo) / 2;
    r = probe(s, c, mid, &pt);
    if (r < 0)
      break;
    if (take_probe(s, c, r, mid, &pt, &lo, &lo_pt, &hi, best))
      return;
  }
  c->status = r == -2 ? TUNE_CFG_START_FAILED : r == -3 ? TUNE_CFG_OUT_OF_BUDGET
                                                        : TUNE_CFG_BEST_FOUND;
  if (c->status == TUNE_CFG_START_FAILED)
    c->best_conc = 0; /* it died mid-search: nothing it measured counts */
}

/* Visits cfg once: returns its index, or -1 when the search must stop. */
static long visit(struct search *s, const struct tune_config *cfg) {
  long i = tune_config_find(s->res, s->space, cfg);
  if (i >= 0)
    return i;
  if (s->res->out_of_budget || s->failed)
    return -1;
  struct tune_result *res = s->res;
  res->configs = xrealloc(res->configs, (res->n_configs + 1) * sizeof *res->configs);
  struct tune_config_result *c = &res->configs[res->n_configs];
  memset(c, 0, sizeof *c);
  c->cfg = *cfg;
  res->n_configs++;
  search_config(s, c);
  return s->failed ? -1 : (long)(res->n_configs - 1);
}

/* The centre: the best configuration so far, else the start. */
static struct tune_config centre_of(const struct search *s) {
  long b = tune_best_config(s->res, -1);
  return b >= 0 ? s->res->configs[b].cfg : s->space->start;
}

/* One pass along every knob: 1 when the best changed, 0 when not, -1 to stop. */
static int axis_pass(struct search *s) {
  long before = tune_best_config(s->res, -1);
  for (size_t k = 0; k < s->space->n_knobs; k++) {
    struct tune_config centre = centre_of(s);
    size_t n = s->space->knobs[k].n_values, at = centre.idx[k];
    for (size_t dist = 1; dist < n; dist++) {
      for (int side = -1; side <= 1; side += 2) {
        if ((side < 0 && dist > at) || (side > 0 && at + dist >= n))
          continue;
        struct tune_config cfg = centre;
        cfg.idx[k] = side < 0 ? at - dist : at + dist;
        if (visit(s, &cfg) < 0)
          return -1;
      }
    }
  }
  return tune_best_config(s->res, -1) != before;
}

/* One step along each pair of knobs from the best: what a single-axis move cannot see (a batch
 * cap that only pays with more KV memory). 1 when the best changed, 0 when not, -1 to stop. */
static int diagonal_pass(struct search *s) {
  long before = tune_best_config(s->res, -1);
  struct tune_config centre = centre_of(s);
  for (size_t j = 0; j < s->space->n_knobs; j++)
    for (size_t k = j + 1; k < s->space->n_knobs; k++)
      for (int dj = -1; dj <= 1; dj += 2)
        for (int dk = -1; dk <= 1; dk += 2) {
          if ((dj < 0 && centre.idx[j] == 0) || (dk < 0 && centre.idx[k] == 0) ||
              (dj > 0 && centre.idx[j] + 1 >= s->space->knobs[j].n_values) ||
              (dk > 0 && centre.idx[k] + 1 >= s->space->knobs[k].n_values))
            continue;
          struct tune_config cfg = centre;
          cfg.idx[j] = dj < 0 ? centre.idx[j] - 1 : centre.idx[j] + 1;
          cfg.idx[k] = dk < 0 ? centre.idx[k] - 1 : centre.idx[k] + 1;
          if (visit(s, &cfg) < 0)
            return -1;
        }
  return tune_best_config(s->res, -1) != before;
}

int tune_search(const struct tune_space *space, const struct tune_slo *slo,
                const struct tune_options *opt, tune_measure_fn measure, void *ctx,
                struct tune_result *res, struct st_err *err) {
  if (opt->grid) /* the reference: every configuration (src/tune/full_grid.c) */
    return tune_grid(space, slo, opt, measure, ctx, res, err);
  memset(res, 0, sizeof *res);
  res->winner = res->runner_up = -1;
  if (space->n_knobs > TUNE_MAX_KNOBS)
    return err_setf(err, "tune: %zu knobs (at most %d)", space->n_knobs, TUNE_MAX_KNOBS);
  for (size_t k = 0; k < space->n_knobs; k++) {
    if (space->knobs[k].n_values == 0)
      return err_setf(err, "--knob %s: no values", space->knobs[k].name);
    if (space->start.idx[k] >= space->knobs[k].n_values)
      return err_setf(err, "--knob %s: the start value index %zu is out of range",
                      space->knobs[k].name, space->start.idx[k]);
  }
  struct search s = {space, slo, {0}, measure, ctx, res, err, false};
  options_defaults(opt, &s.opt);
  if (s.opt.conc_min > s.opt.conc_max)
    return err_setf(err, "tune: the lowest concurrency %d is above the highest %d",
                    s.opt.conc_min, s.opt.conc_max);
  /* Coordinate search from the recipe's setting (docs/tune.md): along one knob at a time,
   * every value of it (nearest the centre first) with the others at the best configuration so
   * far; passes over all knobs until one improves nothing; then one step along each pair of
   * knobs at once (the four diagonal neighbours of the best), back to the axes when that
   * improves. */
  if (visit(&s, &space->start) < 0)
    goto done;
  for (;;) {
    int rc = axis_pass(&s);
    if (rc < 0)
      goto done;
    if (rc > 0)
      continue;
    rc = diagonal_pass(&s);
    if (rc <= 0)
      break;
  }
done:
  return tune_finish(res, s.failed);
}

int tune_finish(struct tune_result *res, bool failed) {
  if (failed) {
    tune_result_free(res);
    res->winner = res->runner_up = -1;
    return -1;
  }
  res->winner = tune_best_config(res, -1);
  res->runner_up = res->winner >= 0 ? tune_best_config(res, res->winner) : -1;
  res->end = res->stopped         ? TUNE_END_STOPPED
             : res->out_of_budget ? TUNE_END_POINT_BUDGET
                                  : TUNE_END_DONE;
  return 0;
}

void tune_result_free(struct tune_result *res) {
  free(res->configs);
  res->configs = NULL;
  res->n_configs = 0;
  free(res->probes);
  res->probes = NULL;
  res->n_probes = 0;
}

void tune_result_copy(struct tune_result *dst, const struct tune_result *src) {
  *dst = *src;
  dst->configs = src->n_configs ? xcalloc(src->n_configs, sizeof *dst->configs) : NULL;
  if (src->n_configs)
    memcpy(dst->configs, src->configs, src->n_configs * sizeof *dst->configs);
  dst->probes = src->n_probes ? xcalloc(src->n_probes, sizeof *dst->probes) : NULL;
  if (src->n_probes)
    memcpy(dst->probes, src->probes, src->n_probes * sizeof *dst->probes);
}

bool tune_probe_counts(const struct tune_result *res, size_t i) {
  const struct tune_probe *p = &res->probes[i];
  return p->holds &&
         !(p->config < res->n_configs && res->configs[p->config].status == TUNE_CFG_START_FAILED);
}

size_t tune_frontier(const struct tune_result *res, size_t *out) {
  size_t n = res->n_probes;
  double *user = xcalloc(n + 1, sizeof *user), *tput = xcalloc(n + 1, sizeof *tput);
  bool *holds = xcalloc(n + 1, sizeof *holds);
  for (size_t i = 0; i < n; i++) {
    user[i] = res->probes[i].pt.figure[TUNE_MIN_TOK_S_PER_USER].point;
    tput[i] = res->probes[i].pt.throughput.point;
    holds[i] = tune_probe_counts(res, i);
  }
  size_t kept = tune_frontier_of(user, tput, holds, n, out);
  free(user);
  free(tput);
  free(holds);
  return kept;
}

struct by_user {
  double user;
  size_t i;
};

/* tok/s per user ascending, then the order measured: the order is total, as a stable sort's */
static int by_user_cmp(const void *a, const void *b) {
  const struct by_user *x = a, *y = b;
  if (x->user < y->user)
    return -1;
  if (x->user > y->user)
    return 1;
  return x->i < y->i ? -1 : x->i > y->i;
}

size_t tune_frontier_of(const double *user, const double *tput, const bool *holds, size_t n_in,
                        size_t *out) {
  struct by_user *sorted = xcalloc(n_in + 1, sizeof *sorted);
  size_t n = 0;
  for (size_t i = 0; i < n_in; i++)
    if (holds[i] && isfinite(tput[i]) && isfinite(user[i]))
      sorted[n++] = (struct by_user){user[i], i};
  qsort(sorted, n, sizeof *sorted, by_user_cmp);
  /* from the fastest per user down: keep a point only when its throughput beats every point
   * faster per user than it */
  size_t kept = 0;
  double best_tput = -(double)INFINITY;
  for (size_t k = n; k-- > 0;) {
    double t = tput[sorted[k].i];
    if (t > best_tput) {
      best_tput = t;
      out[n - 1 - kept++] = sorted[k].i;
    }
  }
  memmove(out, out + (n - kept), kept * sizeof *out);
  free(sorted);
  return kept;
}
