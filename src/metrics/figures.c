/* The figures model: the one table of figures (FIG_TABLE in metrics.h) and
 * the helpers every producer and consumer of a struct fig_set shares. */
#include "metrics/metrics.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define FIG_DESC_ROW(id_, name_, json_style_, json_, label_, brief_, title_, unit_, format_,    \
                     kind_, combine_, higher_, shown_, meaning_)                               \
  [id_] = {.id = id_, .name = name_, .json_style = json_style_, .json = json_, .label = label_, \
           .brief = brief_, .title = title_, .unit = unit_, .format = format_, .kind = kind_,  \
           .combine = combine_, .higher_is_better = higher_, .shown = shown_,                 \
           .meaning = meaning_},
static const struct fig_desc fig_rows[FIG_N] = {FIG_TABLE(FIG_DESC_ROW)};
#undef FIG_DESC_ROW

const struct fig_desc *fig_desc(enum fig_id id) {
  return (unsigned)id < FIG_N ? &fig_rows[id] : NULL;
}

const struct fig_desc *fig_by_name(const char *name) {
  for (int i = 0; i < FIG_N; i++)
    if (strcmp(fig_rows[i].name, name) == 0)
      return &fig_rows[i];
  return NULL;
}

const char *fig_stat_name(enum fig_stat s) {
  static const char *const names[FIG_N_STATS] = {"mean", "p50", "p90", "p99"};
  return (unsigned)s < FIG_N_STATS ? names[s] : "?";
}

void fig_set_clear(struct fig_set *set) {
  for (int i = 0; i < FIG_N; i++) {
    set->f[i].valid = false;
    set->f[i].n = 0;
    for (int k = 0; k < FIG_N_STATS; k++)
      set->f[i].v[k] = set->f[i].lo[k] = set->f[i].hi[k] = (double)NAN;
  }
}

void fig_set_ci(struct fig_set *set, enum fig_id id, enum fig_stat stat, double lo, double hi) {
  if ((unsigned)id >= FIG_N || (unsigned)stat >= FIG_N_STATS)
    return;
  set->f[id].lo[stat] = lo;
  set->f[id].hi[stat] = hi;
}

bool fig_get_ci(const struct fig_set *set, enum fig_id id, enum fig_stat stat, double *lo,
                double *hi) {
  if ((unsigned)id >= FIG_N || (unsigned)stat >= FIG_N_STATS || !set->f[id].valid ||
      !isfinite(set->f[id].lo[stat]) || !isfinite(set->f[id].hi[stat]))
    return false;
  *lo = set->f[id].lo[stat];
  *hi = set->f[id].hi[stat];
  return true;
}

void fig_set_scalar(struct fig_set *set, enum fig_id id, bool valid, double v) {
  struct fig_value *f = &set->f[id];
  f->valid = valid;
  f->n = 0;
  for (int k = 0; k < FIG_N_STATS; k++)
    f->v[k] = f->lo[k] = f->hi[k] = (double)NAN;
  f->v[FIG_VALUE] = v;
}

void fig_set_dist(struct fig_set *set, enum fig_id id, int64_t n, double mean, double p50,
                  double p90, double p99) {
  struct fig_value *f = &set->f[id];
  f->valid = n > 0;
  f->n = n;
  for (int k = 0; k < FIG_N_STATS; k++)
    f->lo[k] = f->hi[k] = (double)NAN;
  f->v[FIG_STAT_MEAN] = mean;
  f->v[FIG_STAT_P50] = p50;
  f->v[FIG_STAT_P90] = p90;
  f->v[FIG_STAT_P99] = p99;
}

double fig_get(const struct fig_set *set, enum fig_id id, enum fig_stat stat) {
  if ((unsigned)id >= FIG_N || (unsigned)stat >= FIG_N_STATS || !set->f[id].valid)
    return (double)NAN;
  return set->f[id].v[stat];
}

bool fig_has(const struct fig_set *set, enum fig_id id, enum fig_stat stat) {
  return isfinite(fig_get(set, id, stat));
}

bool fig_chunks_unlike(const struct fig_set *a, int spec_a, const struct fig_set *b, int spec_b) {
  if (spec_a >= 0 && spec_b >= 0 && spec_a != spec_b)
    return true;
  double ta = fig_get(a, FIG_TOKENS_PER_CHUNK, FIG_STAT_P50);
  double tb = fig_get(b, FIG_TOKENS_PER_CHUNK, FIG_STAT_P50);
  if (!(ta > 0) || !(tb > 0))
    return false; /* not known: nothing says they differ */
  double big = ta > tb ? ta : tb, small = ta > tb ? tb : ta;
  return big > small * (1.0 + FIG_CHUNKS_ALIKE_PCT / 100.0);
}

bool fig_not_comparable(enum fig_id id, const struct fig_set *a, int spec_a,
                        const struct fig_set *b, int spec_b) {
  const struct fig_desc *d = fig_desc(id);
  return d && (d->shown & FIG_PER_CHUNK) && fig_chunks_unlike(a, spec_a, b, spec_b);
}

void fig_set_from_hist_us(struct fig_set *set, enum fig_id id, const struct live_hist *h) {
  struct fig_value *f = &set->f[id];
  f->valid = h->total > 0;
  f->n = (int64_t)h->total;
  f->v[FIG_STAT_MEAN] = (double)NAN; /* a histogram keeps no sum */
  f->v[FIG_STAT_P50] = live_hist_percentile_us(h, 50) / 1000.0;
  f->v[FIG_STAT_P90] = live_hist_percentile_us(h, 90) / 1000.0;
  f->v[FIG_STAT_P99] = live_hist_percentile_us(h, 99) / 1000.0;
}

void fig_set_derive(struct fig_set *set, int n_gpus) {
  double out = fig_get(set, FIG_OUTPUT_TPUT, FIG_VALUE), lo, hi;
  fig_set_scalar(set, FIG_OUTPUT_TPUT_PER_GPU, n_gpus > 0 && isfinite(out),
                 n_gpus > 0 ? out / n_gpus : (double)NAN);
  if (n_gpus > 0 && fig_get_ci(set, FIG_OUTPUT_TPUT, FIG_VALUE, &lo, &hi))
    fig_set_ci(set, FIG_OUTPUT_TPUT_PER_GPU, FIG_VALUE, lo / n_gpus, hi / n_gpus);
  double tpot = fig_get(set, FIG_TPOT, FIG_STAT_P50);
  fig_set_scalar(set, FIG_INTERACTIVITY, isfinite(tpot) && tpot > 0,
                 tpot > 0 ? 1000.0 / tpot : (double)NAN);
  /* 1000 / x is monotone: TPOT p50's interval, turned over */
  if (isfinite(tpot) && tpot > 0 && fig_get_ci(set, FIG_TPOT, FIG_STAT_P50, &lo, &hi) && lo > 0)
    fig_set_ci(set, FIG_INTERACTIVITY, FIG_VALUE, 1000.0 / hi, 1000.0 / lo);
}

void fig_format(char *buf, size_t len, const struct fig_set *set, enum fig_id id,
                enum fig_stat stat) {
  double v = fig_get(set, id, stat);
  if (!isfinite(v)) {
    snprintf(buf, len, "-");
    return;
  }
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
  snprintf(buf, len, fig_rows[id].format, v);
#pragma GCC diagnostic pop
}

int64_t fig_spread_tokens(int64_t tokens, uint32_t chunks, uint32_t from, uint32_t to) {
  if (chunks == 0 || tokens <= 0 || to <= from)
    return 0;
  if (to > chunks)
    to = chunks;
  /* floor(tokens * c / chunks), exactly: tokens < 2^31 and c < 2^32 keep the product in 64 bits */
  uint64_t t = (uint64_t)(tokens < INT32_MAX ? tokens : INT32_MAX);
  return (int64_t)(t * to / chunks - t * from / chunks);
}

void fig_spread_by_second(int64_t tokens, uint32_t total, const uint32_t *chunks, size_t n,
                          int64_t *tokens_out) {
  uint32_t end = total;
  for (size_t i = n; i-- > 0;) {
    uint32_t from = chunks[i] <= end ? end - chunks[i] : 0;
    tokens_out[i] = fig_spread_tokens(tokens, total, from, end);
    end = from;
  }
}
