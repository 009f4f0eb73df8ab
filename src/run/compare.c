/* run: `servetop compare` — two results, runs or sweeps side by side. */
#include "run/run.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---------------------------------------------------------------- loading */
static cJSON *load_json_file(const char *path, struct st_err *err) {
  char *text = file_read_all(path, NULL, err);
  if (!text)
    return NULL;
  cJSON *doc = cJSON_Parse(text);
  free(text);
  if (!doc)
    err_setf(err, "%s: not valid JSON", path);
  return doc;
}

static const char *json_string(const cJSON *obj, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* GPUs of the run: tp of the first recipe point in recipe.json beside it;
 * none when its runner is the CPU. */
static void gpus_from_recipe_json(const char *dir, struct run_compare_side *side) {
  char *path = path_join_alloc(dir, "recipe.json");
  cJSON *doc = path_exists(path) ? load_json_file(path, NULL) : NULL;
  free(path);
  const char *runner = json_string(doc, "runner");
  side->on_cpu = runner && strcmp(runner, "cpu") == 0;
  if (runner && !side->gpu_type)
    side->gpu_type = xstrdup(runner);
  const cJSON *points = cJSON_GetObjectItemCaseSensitive(doc, "points");
  const cJSON *first = cJSON_IsArray(points) ? cJSON_GetArrayItem(points, 0) : NULL;
  const cJSON *tp = first ? cJSON_GetObjectItemCaseSensitive(first, "tp") : NULL;
  if (!side->on_cpu && cJSON_IsNumber(tp) && tp->valueint > 0)
    side->n_gpus = tp->valueint;
  cJSON_Delete(doc);
}

static void add_result(struct run_compare_side *side, struct results_file *rf) {
  side->results = xreallocarray(side->results, side->n_results + 1, sizeof(*side->results));
  side->results[side->n_results++] = *rf;
  const cJSON *run = cJSON_GetObjectItemCaseSensitive((cJSON *)rf->json, "servetop_run");
  if (!side->spec_label && json_string(run, "spec_decoding_label"))
    side->spec_label = xstrdup(json_string(run, "spec_decoding_label"));
  if (!side->name && json_string(run, "recipe"))
    side->name = xstrdup(json_string(run, "recipe"));
}

/* The knobs a result was measured with (servetop_run.overrides, comma-joined; "" none). */
static void result_overrides(const struct results_file *rf, char *out, size_t n) {
  const cJSON *run = cJSON_GetObjectItemCaseSensitive((cJSON *)rf->json, "servetop_run");
  const cJSON *item;
  size_t len = 0;
  out[0] = '\0';
  cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(run, "overrides")) {
    if (cJSON_IsString(item) && len < n)
      len += (size_t)snprintf(out + len, n - len, "%s%s", len ? "," : "", item->valuestring);
  }
}

/* Whether a and b are one configuration: one concurrency, the same knobs. */
static bool same_config(const struct results_file *a, const struct results_file *b) {
  char ka[512], kb[512];
  result_overrides(a, ka, sizeof ka);
  result_overrides(b, kb, sizeof kb);
  return a->max_concurrency == b->max_concurrency && strcmp(ka, kb) == 0;
}

/* A run folder's result of a segment (manifest entry end): each configuration once, by
 * the segment measured to the end ("done"), else the last one cut (a +/-, a restart, a
 * stop): one result, one configuration. */
static void add_segment(struct run_compare_side *side, struct results_file *rf, bool done) {
  for (size_t i = 0; i < side->n_results; i++) {
    struct results_file *had = &side->results[i];
    if (!same_config(had, rf))
      continue;
    const cJSON *run = cJSON_GetObjectItemCaseSensitive((cJSON *)had->json, "servetop_run");
    const char *end = json_string(run, "end");
    bool had_done = end && strcmp(end, "done") == 0;
    if (done || !had_done) {
      results_file_fini(had);
      *had = *rf;
    } else {
      results_file_fini(rf);
    }
    return;
  }
  add_result(side, rf);
}

static int by_concurrency(const void *pa, const void *pb) {
  const struct results_file *a = pa, *b = pb;
  return (a->max_concurrency > b->max_concurrency) - (a->max_concurrency < b->max_concurrency);
}

int run_compare_side_load(const char *path, struct run_compare_side *out, struct st_err *err) {
  memset(out, 0, sizeof(*out));
  out->path = xstrdup(path);
  struct stat sb;
  if (stat(path, &sb) != 0)
    return err_setf(err, "%s: no such result file or run folder", path);
  if (S_ISDIR(sb.st_mode)) {
    char *manifest_path = path_join_alloc(path, "manifest.json");
    cJSON *manifest = load_json_file(manifest_path, err);
    free(manifest_path);
    if (!manifest)
      return err_prefixf(err, "%s: not a servetop run folder", path);
    if (json_string(manifest, "recipe"))
      out->name = xstrdup(json_string(manifest, "recipe"));
    if (json_string(manifest, "spec_decoding_label"))
      out->spec_label = xstrdup(json_string(manifest, "spec_decoding_label"));
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(manifest, "results");
    const cJSON *item;
    int rc = 0;
    cJSON_ArrayForEach(item, list) {
      const char *file = json_string(item, "file");
      const char *end = json_string(item, "end");
      if (!file)
        continue;
      char *result_path = path_join_alloc(path, file);
      struct results_file rf;
      rc = results_load(result_path, &rf, err);
      free(result_path);
      if (rc != 0)
        break;
      add_segment(out, &rf, end && strcmp(end, "done") == 0);
    }
    cJSON_Delete(manifest);
    if (rc != 0)
      return -1;
    if (out->n_results == 0)
      return err_setf(err, "%s: the run has no result", path);
    gpus_from_recipe_json(path, out);
  } else {
    struct results_file rf;
    if (results_load(path, &rf, err) != 0)
      return -1;
    add_result(out, &rf);
    char *dir = xstrdup(path);
    char *slash = strrchr(dir, '/');
    if (slash) {
      *slash = '\0';
      gpus_from_recipe_json(dir, out);
    }
    free(dir);
    if (!out->name) {
      const char *base = strrchr(path, '/');
      out->name = xstrdup(base ? base + 1 : path);
    }
  }
  qsort(out->results, out->n_results, sizeof(*out->results), by_concurrency);
  return 0;
}

int run_compare_side_add_repeat(struct run_compare_side *side, const char *path,
                                struct st_err *err) {
  struct run_compare_side one;
  if (run_compare_side_load(path, &one, err) != 0) {
    run_compare_side_fini(&one);
    return -1;
  }
  side->more = xreallocarray(side->more, side->n_more + 1, sizeof(*side->more));
  side->more[side->n_more++] = one;
  return 0;
}

int run_compare_side_load_repeats(const char *const *paths, size_t n,
                                  struct run_compare_side *out, struct st_err *err) {
  if (run_compare_side_load(paths[0], out, err) != 0)
    return -1;
  for (size_t k = 1; k < n; k++)
    if (run_compare_side_add_repeat(out, paths[k], err) != 0)
      return -1;
  return 0;
}

void run_compare_side_fini(struct run_compare_side *side) {
  for (size_t i = 0; i < side->n_more; i++)
    run_compare_side_fini(&side->more[i]);
  free(side->more);
  for (size_t i = 0; i < side->n_results; i++)
    results_file_fini(&side->results[i]);
  free(side->results);
  free(side->path);
  free(side->name);
  free(side->spec_label);
  free(side->gpu_type);
  memset(side, 0, sizeof(*side));
}

/* ---------------------------------------------------------------- figures */
/* compare's rows: every figure of the model shown in compare (FIG_SHOW_COMPARE),
 * in the table's order; a distribution gives three rows (mean, median, p99). */
struct metric_row {
  enum fig_id id;
  enum fig_stat stat;
  char key[64];        /* JSON key: the figure's name, or "<stat>_<name>_ms" */
  char title[64];      /* table label */
  bool higher_is_better;
  bool count;          /* a whole number (requests): no decimals */
};

static size_t metric_rows_fill(struct metric_row *rows, size_t cap) {
  static const struct {
    enum fig_stat stat;
    const char *word;
  } stats[] = {{FIG_STAT_MEAN, "mean"}, {FIG_STAT_P50, "median"}, {FIG_STAT_P99, "p99"}};
  size_t n = 0;
  for (int i = 0; i < FIG_N; i++) {
    const struct fig_desc *d = fig_desc((enum fig_id)i);
    if (!(d->shown & FIG_SHOW_COMPARE))
      continue;
    size_t n_stats = d->kind == FIG_DIST ? ST_ARRAY_LEN(stats) : 1;
    for (size_t k = 0; k < n_stats && n < cap; k++) {
      struct metric_row *r = &rows[n++];
      r->id = d->id;
      r->higher_is_better = d->higher_is_better;
      r->count = d->combine == FIG_COMBINE_COUNT;
      if (d->kind == FIG_DIST) {
        r->stat = stats[k].stat;
        bool ms = strcmp(d->unit, "ms") == 0; /* the unit in the key as in the reference's */
        snprintf(r->key, sizeof r->key, "%s_%s%s", stats[k].word, d->name, ms ? "_ms" : "");
        if (d->unit[0])
          snprintf(r->title, sizeof r->title, "%s %s (%s)", d->label, stats[k].word, d->unit);
        else
          snprintf(r->title, sizeof r->title, "%s %s", d->label, stats[k].word);
      } else {
        r->stat = FIG_VALUE;
        snprintf(r->key, sizeof r->key, "%s", d->name);
        snprintf(r->title, sizeof r->title, "%s", d->title);
      }
    }
  }
  return n;
}

enum { MAX_METRIC_ROWS = 3 * FIG_N };

struct pairing {
  const struct results_file *a, *b;
};

/* A recipe's speculative-decoding label says it is on ("mtp", "draft_model"...). */
static bool is_spec(const char *label) {
  return label && strcmp(label, "none") != 0;
}

/* ---------------------------------------------------------------- how sure */
/* The result of side's repeat k (0: the side itself, ref; k: its k-th more) of ref's
 * configuration (its concurrency and its knobs: a folder may hold several segments at one
 * concurrency, after a restart with other knobs). */
static const struct results_file *repeat_result(const struct run_compare_side *side, size_t k,
                                                const struct results_file *ref) {
  if (k == 0 || !ref)
    return ref;
  const struct run_compare_side *r = k <= side->n_more ? &side->more[k - 1] : NULL;
  for (size_t i = 0; r && i < r->n_results; i++)
    if (same_config(&r->results[i], ref))
      return &r->results[i];
  return NULL;
}

/* v[stat] of figure id in rf with its interval (NaN when not known); the side's GPUs for the
 * per-GPU figure. False when the value is not known. */
static bool figure_of(const struct run_compare_side *side, const struct results_file *rf,
                      enum fig_id id, enum fig_stat stat, double *v, double *lo, double *hi) {
  *lo = *hi = (double)NAN;
  if (!rf)
    return false;
  struct fig_set figs = rf->figs;
  fig_set_derive(&figs, side->n_gpus);
  if (!fig_has(&figs, id, stat))
    return false;
  *v = fig_get(&figs, id, stat);
  fig_get_ci(&figs, id, stat, lo, hi);
  return true;
}

/* run_compare_figure's values and ratio, before the per-chunk rule. */
static bool compare_figure_ratio(const struct run_compare_side *a, const struct results_file *ra,
                                 const struct run_compare_side *b, const struct results_file *rb,
                                 enum fig_id id, enum fig_stat stat,
                                 struct run_compare_value *out) {
  memset(out, 0, sizeof *out);
  ci_ratio_init(&out->ratio);
  bool higher = fig_desc(id)->higher_is_better;
  double alo, ahi, blo, bhi;
  out->has_a = figure_of(a, ra, id, stat, &out->a, &alo, &ahi);
  out->has_b = figure_of(b, rb, id, stat, &out->b, &blo, &bhi);
  if (!out->has_a && !out->has_b)
    return false;
  /* repeats: every repeat both sides measured at these concurrencies */
  size_t n_rep = (a->n_more < b->n_more ? a->n_more : b->n_more) + 1;
  if (n_rep > 1 && out->has_a && out->has_b) {
    double *ratios = xcalloc(n_rep, sizeof *ratios), sum_a = 0, sum_b = 0;
    size_t m = 0;
    for (size_t k = 0; k < n_rep; k++) {
      double va, vb, l, h;
      if (figure_of(a, repeat_result(a, k, ra), id, stat, &va, &l, &h) &&
          figure_of(b, repeat_result(b, k, rb), id, stat, &vb, &l, &h) && va > 0) {
        ratios[m++] = vb / va;
        sum_a += va;
        sum_b += vb;
      }
    }
    if (m > 1) {
      out->a = sum_a / (double)m;
      out->b = sum_b / (double)m;
      ci_ratio_of_repeats(ratios, m, higher, &out->ratio);
      free(ratios);
      return true;
    }
    free(ratios);
  }
  if (out->has_a && out->has_b)
    ci_ratio_of_intervals(out->a, alo, ahi, out->b, blo, bhi, higher, &out->ratio);
  return true;
}

int run_spec_label_on(const char *label) {
  return label ? is_spec(label) : -1;
}

bool run_compare_figure(const struct run_compare_side *a, const struct results_file *ra,
                        const struct run_compare_side *b, const struct results_file *rb,
                        enum fig_id id, enum fig_stat stat, struct run_compare_value *out) {
  if (!compare_figure_ratio(a, ra, b, rb, id, stat, out))
    return false;
  if (out->has_a && out->has_b &&
      fig_not_comparable(id, &ra->figs, run_spec_label_on(a->spec_label), &rb->figs,
                         run_spec_label_on(b->spec_label)))
    out->ratio.verdict = CI_NOT_COMPARABLE;
  return true;
}

bool run_result_short(const struct results_file *rf, char *why, size_t why_len) {
  return ci_point_short((int64_t)fig_get(&rf->figs, FIG_COMPLETED, FIG_VALUE),
                        fig_get(&rf->figs, FIG_DURATION, FIG_VALUE), rf->max_concurrency, why,
                        why_len);
}

/* Whether a side's result of ref's configuration is too short for its intervals, in any
 * repeat; why gets the first reason. */
static bool side_short(const struct run_compare_side *side, const struct results_file *ref,
                       char *why, size_t why_len) {
  for (size_t k = 0; k <= side->n_more; k++) {
    const struct results_file *rf = repeat_result(side, k, ref);
    if (rf && run_result_short(rf, why, why_len))
      return true;
  }
  return false;
}

/* The ratio turned over (A / B from B / A): its interval too. */
static void ratio_invert(struct ci_ratio *r, bool higher_is_better) {
  double lo = r->lo, hi = r->hi;
  r->ratio = 1.0 / r->ratio;
  r->lo = 1.0 / hi;
  r->hi = 1.0 / lo;
  r->verdict = ci_verdict_of(r, higher_is_better);
}

/* Pairs by concurrency and configuration: first each result of A with B's at its
 * concurrency with the same knobs, then those left with one of B's left at their
 * concurrency (like-with-like then says how they differ); each result in one pair at most;
 * a single result on each side pairs regardless. In A's order. */
static size_t pair_results(const struct run_compare_side *a, const struct run_compare_side *b,
                           struct pairing *pairs) {
  if (a->n_results == 1 && b->n_results == 1) {
    pairs[0] = (struct pairing){&a->results[0], &b->results[0]};
    return 1;
  }
  bool *used = xcalloc(b->n_results + 1, sizeof(*used));
  size_t *pick = xcalloc(a->n_results + 1, sizeof(*pick));
  for (size_t i = 0; i < a->n_results; i++)
    pick[i] = b->n_results; /* none */
  for (int pass = 0; pass < 2; pass++)
    for (size_t i = 0; i < a->n_results; i++)
      for (size_t j = 0; j < b->n_results && pick[i] == b->n_results; j++) {
        const struct results_file *ra = &a->results[i], *rb = &b->results[j];
        if (!used[j] && (pass == 0 ? same_config(ra, rb)
                                   : ra->max_concurrency == rb->max_concurrency))
          used[pick[i] = j] = true;
      }
  size_t n = 0;
  for (size_t i = 0; i < a->n_results; i++)
    if (pick[i] < b->n_results)
      pairs[n++] = (struct pairing){&a->results[i], &b->results[pick[i]]};
  free(pick);
  free(used);
  return n;
}

/* A side's speculative decoding in words: its recipe label said plainly. */
static const char *spec_words(const char *label) {
  if (!label)
    return "unknown (no recipe label in the result)";
  if (strcmp(label, "none") == 0)
    return "off";
  if (strcmp(label, "mtp") == 0)
    return "MTP (multi-token prediction)";
  if (strcmp(label, "draft_model") == 0)
    return "draft model";
  return label;
}

/* Short name of a speculative method for the speedup line. */
static const char *spec_short(const char *label) {
  if (strcmp(label, "mtp") == 0)
    return "MTP";
  if (strcmp(label, "draft_model") == 0)
    return "draft model";
  return label;
}

/* Speculative side / other side ratio of throughput per GPU and interactivity. */
struct speedup {
  bool valid;
  char spec_side;            /* 'a' or 'b': the side with speculative decoding on */
  const char *spec_label;    /* its recipe label: "mtp", "draft_model", ... */
  const char *base_label;    /* the other side's: "none" */
  bool per_gpu;              /* GPU counts known (else plain throughput) */
  bool throughput_valid, interactivity_valid;
  double throughput, interactivity;
  struct ci_ratio throughput_ci, interactivity_ci; /* spec side / other side, with intervals */
};

static void spec_speedup(const struct run_compare_side *a, const struct run_compare_side *b,
                         const struct pairing *p, struct speedup *out) {
  memset(out, 0, sizeof(*out));
  if (is_spec(a->spec_label) == is_spec(b->spec_label) || !a->spec_label || !b->spec_label)
    return;
  out->valid = true;
  out->spec_side = is_spec(a->spec_label) ? 'a' : 'b';
  const struct run_compare_side *sside = out->spec_side == 'a' ? a : b;
  const struct run_compare_side *oside = out->spec_side == 'a' ? b : a;
  out->spec_label = sside->spec_label;
  out->base_label = oside->spec_label;
  out->per_gpu = sside->n_gpus > 0 && oside->n_gpus > 0;
  /* B / A of throughput (per GPU where both count GPUs) and interactivity (1000 / TPOT p50),
   * turned over when A is the speculative side */
  struct run_compare_value t, i;
  run_compare_figure(a, p->a, b, p->b,
                     out->per_gpu ? FIG_OUTPUT_TPUT_PER_GPU : FIG_OUTPUT_TPUT, FIG_VALUE, &t);
  run_compare_figure(a, p->a, b, p->b, FIG_INTERACTIVITY,
                     FIG_VALUE, &i);
  out->throughput_ci = t.ratio;
  out->interactivity_ci = i.ratio;
  if (out->spec_side == 'a') {
    ratio_invert(&out->throughput_ci, true);
    ratio_invert(&out->interactivity_ci, true);
  }
  out->throughput_valid = out->throughput_ci.ratio > 0 && isfinite(out->throughput_ci.ratio);
  out->throughput = out->throughput_ci.ratio;
  out->interactivity_valid =
      out->interactivity_ci.ratio > 0 && isfinite(out->interactivity_ci.ratio);
  out->interactivity = out->interactivity_ci.ratio;
}

/* ---------------------------------------------------------------- like with like */
size_t run_compare_unlike(const struct run_compare_side *a, const struct run_compare_side *b,
                          char *why, size_t why_bytes) {
  if (why_bytes)
    why[0] = '\0';
  struct pairing *pairs = xcalloc(a->n_results + 1, sizeof(*pairs));
  size_t n_pairs = pair_results(a, b, pairs), n_unlike = 0;
  if (n_pairs == 0)
    n_unlike = 1, snprintf(why, why_bytes, "concurrency differs: no concurrency is measured on both "
                                           "sides");
  for (size_t p = 0; p < n_pairs && n_unlike == 0; p++) {
    struct run_like_facts fa, fb;
    run_like_facts_from_result(a, pairs[p].a, &fa);
    run_like_facts_from_result(b, pairs[p].b, &fb);
    n_unlike = run_like_check(&fa, &fb, why, why_bytes);
  }
  free(pairs);
  return n_unlike;
}

/* 1: every result of the side is simulated; 0: none; -1: unknown or mixed. */
static int side_simulated(const struct run_compare_side *s) {
  int sim = -2;
  for (size_t i = 0; i < s->n_results; i++) {
    int v = run_result_simulated(&s->results[i]);
    sim = sim == -2 ? v : sim == v ? sim : -1;
  }
  return sim == -2 ? -1 : sim;
}

/* ---------------------------------------------------------------- table */
enum { SIG_DIGITS = 4, MAX_DECIMALS = 9 };

/* v to SIG_DIGITS significant digits, never in exponent form (>= 10^4
 * keeps every integer digit); a count is a whole number. */
static void format_sig(char *buf, size_t len, double v, bool count) {
  if (count || v == 0 || fabs(v) >= 1000) {
    snprintf(buf, len, "%.0f", v);
    return;
  }
  int decimals = SIG_DIGITS - 1 - (int)floor(log10(fabs(v)));
  if (decimals > MAX_DECIMALS)
    decimals = MAX_DECIMALS;
  snprintf(buf, len, "%.*f", decimals, v);
}

static void print_num(FILE *out, bool valid, double v, bool count) {
  char buf[48] = "-";
  if (valid)
    format_sig(buf, sizeof buf, v, count);
  fprintf(out, " %12s", buf);
}

static void print_ratio(FILE *out, bool valid, double v) {
  char buf[48] = "-";
  if (valid) {
    format_sig(buf, sizeof buf - 1, v, false);
    strcat(buf, "x");
  }
  fprintf(out, " %12s", buf);
}

/* Figures with no interval of their own (counts, spans, the server's figures): no verdict. */
static bool fig_gets_interval(enum fig_id id) {
  enum fig_combine c = fig_desc(id)->combine;
  return c != FIG_COMBINE_COUNT && c != FIG_COMBINE_SPAN && c != FIG_COMBINE_SERVER;
}

/* "[0.951, 1.102]" (or "[?]" when not known) and the verdict. */
static void ratio_ci_text(const struct ci_ratio *r, char *ci, size_t ci_len) {
  if (r->known)
    snprintf(ci, ci_len, "[%.3f, %.3f]", r->lo, r->hi);
  else
    snprintf(ci, ci_len, "[?]");
}

static void print_ratio_ci(FILE *out, const struct ci_ratio *r, bool applies) {
  char ci[64] = "-";
  if (applies && isfinite(r->ratio))
    ratio_ci_text(r, ci, sizeof ci);
  fprintf(out, " %-18s %s", ci, applies && isfinite(r->ratio) ? ci_verdict_word(r->verdict) : "-");
}

/* How the intervals of a pair were found, for the line under its table. */
static size_t pair_repeats(const struct run_compare_side *a, const struct run_compare_side *b,
                           const struct pairing *p) {
  size_t n = (a->n_more < b->n_more ? a->n_more : b->n_more) + 1, m = 0;
  for (size_t k = 0; k < n; k++)
    m += repeat_result(a, k, p->a) && repeat_result(b, k, p->b);
  return m;
}

/* "A: name (path)" and a line of what it is: speculative decoding, GPUs. */
static void print_side(FILE *out, char letter, const struct run_compare_side *s) {
  fprintf(out, "%c: %s (%s)\n", letter, s->name ? s->name : "?", s->path);
  fprintf(out, "   speculative decoding: %s", spec_words(s->spec_label));
  if (s->spec_label && is_spec(s->spec_label) && strcmp(spec_words(s->spec_label), s->spec_label))
    fprintf(out, " (recipe: %s)", s->spec_label);
  if (s->on_cpu)
    fputs("; no GPU (runs on the CPU): no per-GPU figures\n", out);
  else if (s->n_gpus > 0)
    fprintf(out, "; %d GPU%s (tp of its recipe)\n", s->n_gpus, s->n_gpus == 1 ? "" : "s");
  else
    fputs("; GPU count unknown (no recipe.json beside it): no per-GPU figures\n", out);
  int sim = side_simulated(s);
  if (sim > 0)
    fputs("   SIMULATED: these figures come from servetop sim, not from hardware\n", out);
  else if (sim < 0)
    fputs("   provenance unknown: the result does not say whether it was simulated\n", out);
}

/* A run's segment's configuration (servetop_run.configuration: "conc 8 kv-cache=0.9"),
 * NULL when the result does not say. */
static const char *result_config(const struct results_file *rf) {
  return json_string(cJSON_GetObjectItemCaseSensitive((cJSON *)rf->json, "servetop_run"),
                     "configuration");
}

/* A pair's configurations where a restart's knobs make one more than its concurrency. */
static void print_configs(FILE *out, const struct pairing *p) {
  const struct results_file *rf[2] = {p->a, p->b};
  const char *cfg[2];
  bool more = false;
  for (int k = 0; k < 2; k++) {
    cfg[k] = result_config(rf[k]);
    char plain[32];
    snprintf(plain, sizeof plain, "conc %d", rf[k]->max_concurrency);
    more |= cfg[k] && strcmp(cfg[k], plain) != 0;
  }
  if (more)
    fprintf(out, " [A: %s; B: %s]", cfg[0] ? cfg[0] : "?", cfg[1] ? cfg[1] : "?");
}

void run_compare_print(FILE *out, const struct run_compare_side *a, const struct run_compare_side *b) {
  print_side(out, 'A', a);
  print_side(out, 'B', b);
  char why[1024];
  if (run_compare_unlike(a, b, why, sizeof why) > 0)
    fprintf(out, "\n!!! UNLIKE: %s\n!!! these are not the same experiment: the ratios below do "
                 "not measure one setting against another\n", why);
  struct pairing *pairs = xcalloc(a->n_results + 1, sizeof(*pairs));
  size_t n_pairs = pair_results(a, b, pairs);
  if (n_pairs == 0)
    fprintf(out, "\nno concurrency is measured on both sides\n");
  for (size_t p = 0; p < n_pairs; p++) {
    fprintf(out, "\nconcurrency %d", pairs[p].a->max_concurrency);
    if (pairs[p].b->max_concurrency != pairs[p].a->max_concurrency)
      fprintf(out, " vs %d", pairs[p].b->max_concurrency);
    print_configs(out, &pairs[p]);
    size_t reps = pair_repeats(a, b, &pairs[p]);
    char why_a[160], why_b[160];
    bool short_a = side_short(a, pairs[p].a, why_a, sizeof why_a);
    bool short_b = side_short(b, pairs[p].b, why_b, sizeof why_b);
    fprintf(out, " (figures to %d significant digits", SIG_DIGITS);
    if (reps > 1)
      fprintf(out, "; A and B the means of %zu interleaved repeats", reps);
    fprintf(out, ")\n");
    if (short_a)
      fprintf(out, "A %s: its intervals are wide or unknown\n", why_a);
    if (short_b)
      fprintf(out, "B %s: its intervals are wide or unknown\n", why_b);
    fprintf(out, "%-30s %12s %12s %12s %12s %-18s %s\n", "metric", "A", "B", "B-A", "B/A",
            "95% CI of B/A", "verdict (B against A)");
    struct metric_row rows[MAX_METRIC_ROWS];
    size_t n_rows = metric_rows_fill(rows, ST_ARRAY_LEN(rows));
    for (size_t r = 0; r < n_rows; r++) {
      struct run_compare_value cv;
      if (!run_compare_figure(a, pairs[p].a, b, pairs[p].b,
                              rows[r].id, rows[r].stat, &cv))
        continue;
      bool count = rows[r].count;
      fprintf(out, "%-30s", rows[r].title);
      print_num(out, cv.has_a, cv.a, count);
      print_num(out, cv.has_b, cv.b, count);
      print_num(out, cv.has_a && cv.has_b, cv.b - cv.a, count);
      print_ratio(out, isfinite(cv.ratio.ratio), cv.ratio.ratio);
      print_ratio_ci(out, &cv.ratio, fig_gets_interval(rows[r].id));
      fputc('\n', out);
    }
    if (reps > 1)
      fprintf(out, "95%% CI: from the spread of the %zu repeats' ratios (t interval of the mean "
                   "log ratio)\n", reps);
    else
      fprintf(out, "95%% CI: from each point's own requests (docs/figures.md, \"How sure\"); "
                   "[?]: too few requests for an interval\n");
    struct speedup su;
    spec_speedup(a, b, &pairs[p], &su);
    if (su.valid) {
      char spec_side = su.spec_side == 'a' ? 'A' : 'B', base_side = su.spec_side == 'a' ? 'B' : 'A';
      char t[48] = "-", i[48] = "-", tci[64] = "", ici[64] = "";
      if (su.throughput_valid) {
        format_sig(t, sizeof t, su.throughput, false);
        ratio_ci_text(&su.throughput_ci, tci, sizeof tci);
      }
      if (su.interactivity_valid) {
        format_sig(i, sizeof i, su.interactivity, false);
        ratio_ci_text(&su.interactivity_ci, ici, sizeof ici);
      }
      fprintf(out, "%s speedup (%c = %s, %c = %s): throughput%s %s%s %s %s, interactivity %s%s "
                   "%s %s\n",
              strcmp(su.spec_label, "mtp") == 0 ? "MTP" : "speculative decoding", spec_side,
              spec_short(su.spec_label), base_side, spec_words(su.base_label),
              su.per_gpu ? " per GPU" : (a->on_cpu || b->on_cpu ? "" : " (GPU counts unknown)"),
              t, su.throughput_valid ? "x" : "", tci,
              su.throughput_valid ? ci_verdict_word(su.throughput_ci.verdict) : "", i,
              su.interactivity_valid ? "x" : "", ici,
              su.interactivity_valid ? ci_verdict_word(su.interactivity_ci.verdict) : "");
    }
  }
  free(pairs);
}

/* ---------------------------------------------------------------- JSON */
static cJSON *side_json(const struct run_compare_side *s) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "path", s->path);
  json_add_string_or_null(o, "name", s->name);
  json_add_string_or_null(o, "spec_decoding", s->spec_label);
  if (s->n_gpus > 0)
    cJSON_AddNumberToObject(o, "n_gpus", s->n_gpus);
  else if (s->on_cpu)
    cJSON_AddNumberToObject(o, "n_gpus", 0);
  else
    cJSON_AddNullToObject(o, "n_gpus");
  cJSON_AddBoolToObject(o, "on_cpu", s->on_cpu);
  int sim = side_simulated(s);
  if (sim >= 0)
    cJSON_AddBoolToObject(o, "simulated", sim > 0);
  else
    cJSON_AddNullToObject(o, "simulated");
  cJSON *concs = cJSON_AddArrayToObject(o, "concurrencies");
  for (size_t i = 0; i < s->n_results; i++)
    cJSON_AddItemToArray(concs, cJSON_CreateNumber(s->results[i].max_concurrency));
  return o;
}

/* "<key>_ci": [lo, hi] or null, "<key>_verdict": the verdict's words (null where the figure
 * has no interval of its own or no ratio). */
static void add_ratio_ci(cJSON *o, const char *key, const struct ci_ratio *r, bool applies) {
  char name[64];
  snprintf(name, sizeof name, "%s_ci", key);
  if (applies && r->known) {
    cJSON *pair = cJSON_AddArrayToObject(o, name);
    cJSON_AddItemToArray(pair, cJSON_CreateNumber(r->lo));
    cJSON_AddItemToArray(pair, cJSON_CreateNumber(r->hi));
  } else {
    cJSON_AddNullToObject(o, name);
  }
  snprintf(name, sizeof name, "%s_verdict", key);
  if (applies && isfinite(r->ratio))
    cJSON_AddStringToObject(o, name, ci_verdict_word(r->verdict));
  else
    cJSON_AddNullToObject(o, name);
}

char *run_compare_json_alloc(const struct run_compare_side *a, const struct run_compare_side *b) {
  cJSON *doc = cJSON_CreateObject();
  cJSON_AddNumberToObject(doc, "schema_version", 1);
  cJSON_AddItemToObject(doc, "a", side_json(a));
  cJSON_AddItemToObject(doc, "b", side_json(b));
  char why[1024];
  bool like = run_compare_unlike(a, b, why, sizeof why) == 0;
  cJSON_AddBoolToObject(doc, "like", like);
  if (like)
    cJSON_AddNullToObject(doc, "unlike");
  else
    cJSON_AddStringToObject(doc, "unlike", why);
  cJSON_AddBoolToObject(doc, "simulated", side_simulated(a) > 0 || side_simulated(b) > 0);
  cJSON *points = cJSON_AddArrayToObject(doc, "points");
  struct pairing *pairs = xcalloc(a->n_results + 1, sizeof(*pairs));
  size_t n_pairs = pair_results(a, b, pairs);
  for (size_t p = 0; p < n_pairs; p++) {
    cJSON *po = cJSON_CreateObject();
    cJSON_AddNumberToObject(po, "concurrency_a", pairs[p].a->max_concurrency);
    cJSON_AddNumberToObject(po, "concurrency_b", pairs[p].b->max_concurrency);
    /* each segment's configuration (servetop_run), or null */
    json_add_string_or_null(po, "configuration_a", result_config(pairs[p].a));
    json_add_string_or_null(po, "configuration_b", result_config(pairs[p].b));
    size_t reps = pair_repeats(a, b, &pairs[p]);
    cJSON_AddNumberToObject(po, "repeats", (double)reps);
    char short_why[160];
    bool is_short = side_short(a, pairs[p].a, short_why, sizeof short_why);
    cJSON_AddBoolToObject(po, "short_a", is_short);
    if (is_short)
      cJSON_AddStringToObject(po, "short_a_why", short_why);
    is_short = side_short(b, pairs[p].b, short_why, sizeof short_why);
    cJSON_AddBoolToObject(po, "short_b", is_short);
    if (is_short)
      cJSON_AddStringToObject(po, "short_b_why", short_why);
    cJSON_AddStringToObject(po, "ci_method", reps > 1 ? "repeats: t interval of the mean log ratio"
                                                      : "one run each: both results' own "
                                                        "intervals, combined on the log scale");
    cJSON *metrics = cJSON_AddObjectToObject(po, "metrics");
    struct metric_row rows[MAX_METRIC_ROWS];
    size_t n_rows = metric_rows_fill(rows, ST_ARRAY_LEN(rows));
    for (size_t r = 0; r < n_rows; r++) {
      struct run_compare_value cv;
      run_compare_figure(a, pairs[p].a, b, pairs[p].b,
                         rows[r].id, rows[r].stat, &cv);
      cJSON *m = cJSON_AddObjectToObject(metrics, rows[r].key);
      json_add_number_or_null(m, "a", cv.has_a, cv.a);
      json_add_number_or_null(m, "b", cv.has_b, cv.b);
      json_add_number_or_null(m, "delta", cv.has_a && cv.has_b, cv.b - cv.a);
      json_add_number_or_null(m, "ratio", isfinite(cv.ratio.ratio), cv.ratio.ratio);
      add_ratio_ci(m, "ratio", &cv.ratio, fig_gets_interval(rows[r].id));
      cJSON_AddBoolToObject(m, "higher_is_better", rows[r].higher_is_better);
    }
    /* spec_speedup for any method; mtp_speedup (as before) only for MTP */
    struct speedup su;
    spec_speedup(a, b, &pairs[p], &su);
    if (su.valid) {
      char side[2] = {su.spec_side, '\0'};
      cJSON *s = cJSON_AddObjectToObject(po, "spec_speedup");
      cJSON_AddStringToObject(s, "spec_side", side);
      cJSON_AddStringToObject(s, "spec_method", su.spec_label);
      cJSON_AddStringToObject(s, "baseline_method", su.base_label);
      cJSON_AddBoolToObject(s, "per_gpu", su.per_gpu);
      json_add_number_or_null(s, "throughput", su.throughput_valid, su.throughput);
      add_ratio_ci(s, "throughput", &su.throughput_ci, su.throughput_valid);
      json_add_number_or_null(s, "interactivity", su.interactivity_valid, su.interactivity);
      add_ratio_ci(s, "interactivity", &su.interactivity_ci, su.interactivity_valid);
      if (strcmp(su.spec_label, "mtp") == 0) {
        cJSON *m = cJSON_AddObjectToObject(po, "mtp_speedup");
        cJSON_AddStringToObject(m, "mtp_side", side);
        cJSON_AddBoolToObject(m, "per_gpu", su.per_gpu);
        json_add_number_or_null(m, "throughput", su.throughput_valid, su.throughput);
        add_ratio_ci(m, "throughput", &su.throughput_ci, su.throughput_valid);
        json_add_number_or_null(m, "interactivity", su.interactivity_valid, su.interactivity);
        add_ratio_ci(m, "interactivity", &su.interactivity_ci, su.interactivity_valid);
      } else {
        cJSON_AddNullToObject(po, "mtp_speedup");
      }
    } else {
      cJSON_AddNullToObject(po, "spec_speedup");
      cJSON_AddNullToObject(po, "mtp_speedup");
    }
    cJSON_AddItemToArray(points, po);
  }
  free(pairs);
  char *text = cJSON_Print(doc);
  cJSON_Delete(doc);
  char *out = xstrdup(text);
  cJSON_free(text);
  return out;
}
