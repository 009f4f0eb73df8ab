/* run: like with like — whether two measurements may be divided (run.h). */
#include "run/run.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void run_like_facts_init(struct run_like_facts *f) {
  memset(f, 0, sizeof(*f));
  f->n_gpus = -1;
  f->isl = f->osl = -1;
  f->range_ratio = NAN;
  f->simulated = -1;
  f->concurrency = -1;
}

static const cJSON *obj(const cJSON *o, const char *key) {
  return cJSON_GetObjectItemCaseSensitive(o, key); /* NULL o: NULL */
}

static void copy_string(char *dst, size_t n, const cJSON *v) {
  if (cJSON_IsString(v) && v->valuestring[0])
    snprintf(dst, n, "%s", v->valuestring);
}

static int tri_bool(const cJSON *v) {
  return cJSON_IsBool(v) ? (cJSON_IsTrue(v) ? 1 : 0) : -1;
}

int run_result_simulated(const struct results_file *rf) {
  const cJSON *root = rf ? (const cJSON *)rf->json : NULL;
  int sim = tri_bool(obj(obj(root, "servetop"), "simulated"));
  if (sim < 0) /* results before the field: the run's own record of its engine */
    sim = tri_bool(obj(obj(obj(root, "servetop_run"), "server"), "simulated"));
  return sim;
}

/* FNV-1a: two chat templates agree when their texts do. */
static unsigned long long text_hash(const char *s) {
  unsigned long long h = 1469598103934665603ull;
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

void run_like_facts_from_result(const struct run_compare_side *side, const struct results_file *rf,
                                struct run_like_facts *out) {
  run_like_facts_init(out);
  const cJSON *root = (const cJSON *)rf->json;
  const cJSON *st = obj(root, "servetop"), *run = obj(root, "servetop_run");
  const cJSON *client = obj(st, "client");
  copy_string(out->model, sizeof out->model, obj(root, "model_id"));
  copy_string(out->engine, sizeof out->engine, obj(st, "engine"));
  if (!out->engine[0])
    copy_string(out->engine, sizeof out->engine, obj(obj(run, "server"), "engine"));
  if (side && side->gpu_type)
    snprintf(out->gpu_type, sizeof out->gpu_type, "%s", side->gpu_type);
  if (side && side->on_cpu)
    out->n_gpus = 0;
  else if (side && side->n_gpus > 0)
    out->n_gpus = side->n_gpus;
  double x = cJSON_GetNumberValue(obj(client, "random_input_len")); /* NaN: absent */
  if (isfinite(x))
    out->isl = (int)x;
  x = cJSON_GetNumberValue(obj(client, "random_output_len"));
  if (isfinite(x))
    out->osl = (int)x;
  out->range_ratio = cJSON_GetNumberValue(obj(client, "random_range_ratio"));
  const cJSON *api = obj(client, "api");
  if (cJSON_IsString(api)) {
    const cJSON *tmpl = obj(obj(client, "prompts"), "chat_template");
    if (cJSON_IsString(tmpl))
      snprintf(out->chat, sizeof out->chat, "%s, chat template of %zu chars #%016llx",
               api->valuestring, strlen(tmpl->valuestring), text_hash(tmpl->valuestring));
    else
      snprintf(out->chat, sizeof out->chat, "%s, no chat template", api->valuestring);
  }
  const cJSON *ov = obj(run, "overrides");
  if (cJSON_IsArray(ov) || run) { /* a run always records its overrides; a bench has none */
    out->overrides_known = true;
    const cJSON *item;
    cJSON_ArrayForEach(item, ov) {
      if (!cJSON_IsString(item))
        continue;
      size_t len = strlen(out->overrides);
      snprintf(out->overrides + len, sizeof out->overrides - len, "%s%s", len ? "," : "",
               item->valuestring);
    }
  } else if (st) {
    out->overrides_known = true; /* `servetop bench`: no server settings of its own */
  }
  out->simulated = run_result_simulated(rf);
  x = cJSON_GetNumberValue(obj(st, "schema_version"));
  out->schema_version = isfinite(x) ? (int)x : 0;
  out->concurrency = rf->max_concurrency;
}

struct why_buf {
  char *buf;
  size_t n;
  size_t count;
};

static void differs(struct why_buf *w, const char *what, const char *fmt, ...) {
  w->count++;
  if (!w->buf || w->n == 0)
    return;
  size_t len = strlen(w->buf);
  if (len + 1 >= w->n)
    return;
  snprintf(w->buf + len, w->n - len, "%s%s differs (", len ? "; " : "", what);
  len = strlen(w->buf);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(w->buf + len, w->n - len, fmt, ap);
  va_end(ap);
  len = strlen(w->buf);
  snprintf(w->buf + len, w->n - len, ")");
}

static void cmp_text(struct why_buf *w, const char *what, const char *a, const char *b) {
  if (a[0] && b[0] && strcmp(a, b) != 0)
    differs(w, what, "A: %s, B: %s", a, b);
}

static void cmp_int(struct why_buf *w, const char *what, int a, int b) {
  if (a >= 0 && b >= 0 && a != b)
    differs(w, what, "A: %d, B: %d", a, b);
}

static const char *sim_word(int s) {
  return s > 0 ? "SIMULATED" : s == 0 ? "real" : "unknown";
}

size_t run_like_check(const struct run_like_facts *a, const struct run_like_facts *b, char *why,
                      size_t why_bytes) {
  struct why_buf w = {why, why_bytes, 0};
  if (why && why_bytes)
    why[0] = '\0';
  cmp_text(&w, "model", a->model, b->model);
  cmp_text(&w, "engine", a->engine, b->engine);
  cmp_text(&w, "GPU type", a->gpu_type, b->gpu_type);
  cmp_int(&w, "GPU count", a->n_gpus, b->n_gpus);
  cmp_int(&w, "isl", a->isl, b->isl);
  cmp_int(&w, "osl", a->osl, b->osl);
  if (isfinite(a->range_ratio) && isfinite(b->range_ratio) && a->range_ratio != b->range_ratio)
    differs(&w, "range ratio", "A: %g, B: %g", a->range_ratio, b->range_ratio);
  cmp_text(&w, "chat template", a->chat, b->chat);
  if (a->overrides_known && b->overrides_known && strcmp(a->overrides, b->overrides) != 0)
    differs(&w, "overrides", "A: %s, B: %s", a->overrides[0] ? a->overrides : "none",
            b->overrides[0] ? b->overrides : "none");
  if (a->simulated != b->simulated)
    differs(&w, "simulated or real", "A: %s, B: %s", sim_word(a->simulated),
            sim_word(b->simulated));
  if (a->schema_version != b->schema_version)
    differs(&w, "result schema", "A: %d, B: %d", a->schema_version, b->schema_version);
  cmp_int(&w, "concurrency", a->concurrency, b->concurrency);
  return w.count;
}
