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

/* GPUs of the run: tp of the first recipe point in recipe.json beside it. */
static int gpus_from_recipe_json(const char *dir) {
  char *path = path_join_alloc(dir, "recipe.json");
  cJSON *doc = path_exists(path) ? load_json_file(path, NULL) : NULL;
  free(path);
  int n_gpus = 0;
  const cJSON *points = cJSON_GetObjectItemCaseSensitive(doc, "points");
  const cJSON *first = cJSON_IsArray(points) ? cJSON_GetArrayItem(points, 0) : NULL;
  const cJSON *tp = first ? cJSON_GetObjectItemCaseSensitive(first, "tp") : NULL;
  if (cJSON_IsNumber(tp) && tp->valueint > 0)
    n_gpus = tp->valueint;
  cJSON_Delete(doc);
  return n_gpus;
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
      if (!file || (end && strcmp(end, "restarted") == 0))
        continue; /* a point measured again after a restart counts once */
      char *result_path = path_join_alloc(path, file);
      struct results_file rf;
      rc = results_load(result_path, &rf, err);
      free(result_path);
      if (rc != 0)
        break;
      add_result(out, &rf);
    }
    cJSON_Delete(manifest);
    if (rc != 0)
      return -1;
    if (out->n_results == 0)
      return err_setf(err, "%s: the run has no result", path);
    out->n_gpus = gpus_from_recipe_json(path);
  } else {
    struct results_file rf;
    if (results_load(path, &rf, err) != 0)
      return -1;
    add_result(out, &rf);
    char *dir = xstrdup(path);
    char *slash = strrchr(dir, '/');
    if (slash) {
      *slash = '\0';
      out->n_gpus = gpus_from_recipe_json(dir);
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

void run_compare_side_fini(struct run_compare_side *side) {
  for (size_t i = 0; i < side->n_results; i++)
    results_file_fini(&side->results[i]);
  free(side->results);
  free(side->path);
  free(side->name);
  free(side->spec_label);
  memset(side, 0, sizeof(*side));
}

/* ---------------------------------------------------------------- figures */
struct metric_row {
  const char *key;     /* JSON key */
  const char *title;   /* table label */
  bool higher_is_better;
};

static const struct metric_row metric_rows[] = {
    {"request_throughput", "request throughput (req/s)", true},
    {"output_throughput", "output throughput (tok/s)", true},
    {"total_token_throughput", "total throughput (tok/s)", true},
    {"output_throughput_per_gpu", "output tok/s per GPU", true},
    {"interactivity", "interactivity (tok/s/user)", true},
    {"mean_ttft_ms", "TTFT mean (ms)", false},
    {"median_ttft_ms", "TTFT median (ms)", false},
    {"p99_ttft_ms", "TTFT p99 (ms)", false},
    {"mean_tpot_ms", "TPOT mean (ms)", false},
    {"median_tpot_ms", "TPOT median (ms)", false},
    {"p99_tpot_ms", "TPOT p99 (ms)", false},
    {"mean_itl_ms", "ITL mean (ms)", false},
    {"median_itl_ms", "ITL median (ms)", false},
    {"p99_itl_ms", "ITL p99 (ms)", false},
    {"mean_e2el_ms", "E2EL mean (ms)", false},
    {"median_e2el_ms", "E2EL median (ms)", false},
    {"p99_e2el_ms", "E2EL p99 (ms)", false},
    {"accept_length", "accept length (tokens/step)", true},
    {"completed", "completed requests", true},
    {"duration_s", "duration (s)", false},
};

/* Value of row for one result; false when unknown. */
static bool metric_value(const struct run_compare_side *side, const struct results_file *rf,
                         size_t row, double *out) {
  const char *key = metric_rows[row].key;
  if (strcmp(key, "request_throughput") == 0)
    *out = rf->request_throughput;
  else if (strcmp(key, "output_throughput") == 0)
    *out = rf->output_throughput;
  else if (strcmp(key, "total_token_throughput") == 0)
    *out = rf->total_token_throughput;
  else if (strcmp(key, "output_throughput_per_gpu") == 0) {
    if (side->n_gpus <= 0)
      return false;
    *out = rf->output_throughput / side->n_gpus;
  } else if (strcmp(key, "interactivity") == 0) {
    if (!rf->has_stat[RESULTS_TPOT] || rf->median_ms[RESULTS_TPOT] <= 0)
      return false;
    *out = 1000.0 / rf->median_ms[RESULTS_TPOT];
  } else if (strcmp(key, "accept_length") == 0) {
    if (!rf->accept_length_valid)
      return false;
    *out = rf->accept_length;
  } else if (strcmp(key, "completed") == 0)
    *out = (double)rf->completed;
  else if (strcmp(key, "duration_s") == 0)
    *out = rf->duration_s;
  else {
    /* mean_/median_/p99_ + metric + _ms */
    for (int m = 0; m < RESULTS_N_METRICS; m++) {
      const char *name = results_metric_name((enum results_metric_id)m);
      const double *columns[] = {rf->mean_ms, rf->median_ms, rf->p99_ms};
      const char *prefixes[] = {"mean", "median", "p99"};
      for (size_t c = 0; c < ST_ARRAY_LEN(columns) && rf->has_stat[m]; c++) {
        char want[48];
        snprintf(want, sizeof(want), "%s_%s_ms", prefixes[c], name);
        if (strcmp(key, want) == 0) {
          *out = columns[c][m];
          return true;
        }
      }
    }
    return false;
  }
  return true;
}

struct pairing {
  const struct results_file *a, *b;
};

/* Pairs by concurrency; a single result on each side pairs regardless. */
static size_t pair_results(const struct run_compare_side *a, const struct run_compare_side *b,
                           struct pairing *pairs) {
  size_t n = 0;
  if (a->n_results == 1 && b->n_results == 1) {
    pairs[0] = (struct pairing){&a->results[0], &b->results[0]};
    return 1;
  }
  for (size_t i = 0; i < a->n_results; i++)
    for (size_t j = 0; j < b->n_results; j++)
      if (a->results[i].max_concurrency == b->results[j].max_concurrency) {
        pairs[n++] = (struct pairing){&a->results[i], &b->results[j]};
        break;
      }
  return n;
}

static bool is_spec(const char *label) {
  return label && strcmp(label, "none") != 0;
}

/* MTP side / other side ratio of throughput per GPU and interactivity. */
struct speedup {
  bool valid;
  char mtp_side;             /* 'a' or 'b' */
  bool per_gpu;              /* GPU counts known (else plain throughput) */
  bool throughput_valid, interactivity_valid;
  double throughput, interactivity;
};

static void mtp_speedup(const struct run_compare_side *a, const struct run_compare_side *b,
                        const struct pairing *p, struct speedup *out) {
  memset(out, 0, sizeof(*out));
  if (is_spec(a->spec_label) == is_spec(b->spec_label) || !a->spec_label || !b->spec_label)
    return;
  out->valid = true;
  out->mtp_side = is_spec(a->spec_label) ? 'a' : 'b';
  const struct run_compare_side *mside = out->mtp_side == 'a' ? a : b;
  const struct run_compare_side *oside = out->mtp_side == 'a' ? b : a;
  const struct results_file *m = out->mtp_side == 'a' ? p->a : p->b;
  const struct results_file *o = out->mtp_side == 'a' ? p->b : p->a;
  out->per_gpu = mside->n_gpus > 0 && oside->n_gpus > 0;
  double mt = m->output_throughput / (out->per_gpu ? mside->n_gpus : 1);
  double ot = o->output_throughput / (out->per_gpu ? oside->n_gpus : 1);
  if (ot > 0) {
    out->throughput_valid = true;
    out->throughput = mt / ot;
  }
  if (m->has_stat[RESULTS_TPOT] && o->has_stat[RESULTS_TPOT] && m->median_ms[RESULTS_TPOT] > 0 &&
      o->median_ms[RESULTS_TPOT] > 0) {
    out->interactivity_valid = true;
    out->interactivity = o->median_ms[RESULTS_TPOT] / m->median_ms[RESULTS_TPOT];
  }
}

/* ---------------------------------------------------------------- table */
static void print_num(FILE *out, bool valid, double v) {
  if (!valid)
    fprintf(out, " %12s", "-");
  else if (fabs(v) >= 100000 || v == floor(v))
    fprintf(out, " %12.0f", v);
  else
    fprintf(out, " %12.2f", v);
}

void run_compare_print(FILE *out, const struct run_compare_side *a, const struct run_compare_side *b) {
  fprintf(out, "A: %s (%s, spec-decoding %s, %s)\n", a->name ? a->name : "?", a->path,
          a->spec_label ? a->spec_label : "unknown",
          a->n_gpus > 0 ? "GPUs known" : "GPU count unknown");
  fprintf(out, "B: %s (%s, spec-decoding %s, %s)\n", b->name ? b->name : "?", b->path,
          b->spec_label ? b->spec_label : "unknown",
          b->n_gpus > 0 ? "GPUs known" : "GPU count unknown");
  struct pairing *pairs = xcalloc(a->n_results + 1, sizeof(*pairs));
  size_t n_pairs = pair_results(a, b, pairs);
  if (n_pairs == 0)
    fprintf(out, "\nno concurrency is measured on both sides\n");
  for (size_t p = 0; p < n_pairs; p++) {
    fprintf(out, "\nconcurrency %d", pairs[p].a->max_concurrency);
    if (pairs[p].b->max_concurrency != pairs[p].a->max_concurrency)
      fprintf(out, " vs %d", pairs[p].b->max_concurrency);
    fprintf(out, "\n%-30s %12s %12s %12s %12s\n", "metric", "A", "B", "B-A", "B/A");
    for (size_t r = 0; r < ST_ARRAY_LEN(metric_rows); r++) {
      double va = 0, vb = 0;
      bool ha = metric_value(a, pairs[p].a, r, &va);
      bool hb = metric_value(b, pairs[p].b, r, &vb);
      if (!ha && !hb)
        continue;
      fprintf(out, "%-30s", metric_rows[r].title);
      print_num(out, ha, va);
      print_num(out, hb, vb);
      print_num(out, ha && hb, vb - va);
      if (ha && hb && va != 0)
        fprintf(out, " %11.3fx", vb / va);
      else
        fprintf(out, " %12s", "-");
      fputc('\n', out);
    }
    struct speedup su;
    mtp_speedup(a, b, &pairs[p], &su);
    if (su.valid) {
      fprintf(out, "MTP speedup (%c = MTP): throughput%s ", su.mtp_side == 'a' ? 'A' : 'B',
              su.per_gpu ? " per GPU" : " (GPU counts unknown)");
      if (su.throughput_valid)
        fprintf(out, "%.3fx", su.throughput);
      else
        fputs("-", out);
      fputs(", interactivity ", out);
      if (su.interactivity_valid)
        fprintf(out, "%.3fx\n", su.interactivity);
      else
        fputs("-\n", out);
    }
  }
  free(pairs);
}

/* ---------------------------------------------------------------- JSON */
static cJSON *side_json(const struct run_compare_side *s) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "path", s->path);
  if (s->name)
    cJSON_AddStringToObject(o, "name", s->name);
  else
    cJSON_AddNullToObject(o, "name");
  if (s->spec_label)
    cJSON_AddStringToObject(o, "spec_decoding", s->spec_label);
  else
    cJSON_AddNullToObject(o, "spec_decoding");
  if (s->n_gpus > 0)
    cJSON_AddNumberToObject(o, "n_gpus", s->n_gpus);
  else
    cJSON_AddNullToObject(o, "n_gpus");
  cJSON *concs = cJSON_AddArrayToObject(o, "concurrencies");
  for (size_t i = 0; i < s->n_results; i++)
    cJSON_AddItemToArray(concs, cJSON_CreateNumber(s->results[i].max_concurrency));
  return o;
}

static void add_number_or_null(cJSON *o, const char *key, bool valid, double v) {
  if (valid && isfinite(v))
    cJSON_AddNumberToObject(o, key, v);
  else
    cJSON_AddNullToObject(o, key);
}

char *run_compare_json_alloc(const struct run_compare_side *a, const struct run_compare_side *b) {
  cJSON *doc = cJSON_CreateObject();
  cJSON_AddNumberToObject(doc, "schema_version", 1);
  cJSON_AddItemToObject(doc, "a", side_json(a));
  cJSON_AddItemToObject(doc, "b", side_json(b));
  cJSON *points = cJSON_AddArrayToObject(doc, "points");
  struct pairing *pairs = xcalloc(a->n_results + 1, sizeof(*pairs));
  size_t n_pairs = pair_results(a, b, pairs);
  for (size_t p = 0; p < n_pairs; p++) {
    cJSON *po = cJSON_CreateObject();
    cJSON_AddNumberToObject(po, "concurrency_a", pairs[p].a->max_concurrency);
    cJSON_AddNumberToObject(po, "concurrency_b", pairs[p].b->max_concurrency);
    cJSON *metrics = cJSON_AddObjectToObject(po, "metrics");
    for (size_t r = 0; r < ST_ARRAY_LEN(metric_rows); r++) {
      double va = 0, vb = 0;
      bool ha = metric_value(a, pairs[p].a, r, &va);
      bool hb = metric_value(b, pairs[p].b, r, &vb);
      cJSON *m = cJSON_AddObjectToObject(metrics, metric_rows[r].key);
      add_number_or_null(m, "a", ha, va);
      add_number_or_null(m, "b", hb, vb);
      add_number_or_null(m, "delta", ha && hb, vb - va);
      add_number_or_null(m, "ratio", ha && hb && va != 0, va != 0 ? vb / va : 0);
      cJSON_AddBoolToObject(m, "higher_is_better", metric_rows[r].higher_is_better);
    }
    struct speedup su;
    mtp_speedup(a, b, &pairs[p], &su);
    if (su.valid) {
      cJSON *s = cJSON_AddObjectToObject(po, "mtp_speedup");
      char side[2] = {su.mtp_side, '\0'};
      cJSON_AddStringToObject(s, "mtp_side", side);
      cJSON_AddBoolToObject(s, "per_gpu", su.per_gpu);
      add_number_or_null(s, "throughput", su.throughput_valid, su.throughput);
      add_number_or_null(s, "interactivity", su.interactivity_valid, su.interactivity);
    } else {
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
