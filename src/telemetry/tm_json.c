/* JSON forms of snapshots and backend reports, and the per-second series that
 * run results embed. Unknown values are null, numbers stay numbers, units are
 * in key names. */
#include "telemetry/telemetry_internal.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

static void add_bytes(cJSON *o, const char *key, bool valid, uint64_t bytes) {
  if (valid)
    cJSON_AddNumberToObject(o, key, (double)bytes); /* exact below 2^53 bytes */
  else
    cJSON_AddNullToObject(o, key);
}
/* A GPU's identity: its members of both the snapshot and the series. */
static void add_gpu_ident(cJSON *o, const struct tm_gpu *g) {
  cJSON_AddNumberToObject(o, "index", g->index);
  json_add_text_or_null(o, "name", g->name);
  json_add_text_or_null(o, "uuid", g->uuid);
  json_add_text_or_null(o, "host", g->host);
}

/* The start of a snapshot or series document (backend NULL: null). */
static cJSON *doc_new(const char *backend, bool simulated) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "schema_version", 1);
  json_add_string_or_null(o, "backend", backend);
  cJSON_AddBoolToObject(o, "simulated", simulated);
  return o;
}

static cJSON *gpu_to_json(const struct tm_gpu *g) {
  cJSON *o = cJSON_CreateObject();
  add_gpu_ident(o, g);
  uint32_t v = g->valid;
  add_bytes(o, "mem_used_bytes", v & TM_GPU_MEM_USED, g->mem_used_bytes);
  add_bytes(o, "mem_total_bytes", v & TM_GPU_MEM_TOTAL, g->mem_total_bytes);
  add_bytes(o, "mem_reserved_bytes", v & TM_GPU_MEM_RESERVED, g->mem_reserved_bytes);
  add_bytes(o, "server_mem_bytes", v & TM_GPU_SERVER_MEM, g->server_mem_bytes);
  add_bytes(o, "other_mem_bytes", v & TM_GPU_SERVER_MEM, g->other_mem_bytes);
  json_add_number_or_null(o, "util_pct", v & TM_GPU_UTIL, g->util_pct);
  json_add_number_or_null(o, "power_w", v & TM_GPU_POWER, g->power_w);
  json_add_number_or_null(o, "power_limit_w", v & TM_GPU_POWER_LIMIT, g->power_limit_w);
  json_add_number_or_null(o, "energy_j", v & TM_GPU_ENERGY, g->energy_j);
  if (v & TM_GPU_SIM_BREAKDOWN) {
    cJSON *sim = cJSON_AddObjectToObject(o, "simulated_breakdown");
    cJSON_AddNumberToObject(sim, "weights_bytes", (double)g->sim_weights_bytes);
    cJSON_AddNumberToObject(sim, "kv_pool_bytes", (double)g->sim_kv_pool_bytes);
    cJSON_AddNumberToObject(sim, "kv_used_bytes", (double)g->sim_kv_used_bytes);
    cJSON_AddNumberToObject(sim, "cuda_graph_bytes", (double)g->sim_cuda_graph_bytes);
    cJSON_AddNumberToObject(sim, "activations_bytes", (double)g->sim_activations_bytes);
  }
  return o;
}

cJSON *tm_snapshot_to_json(const struct tm_snapshot *snap) {
  cJSON *o = doc_new(snap->backend, snap->simulated);
  cJSON_AddBoolToObject(o, "stale", snap->stale);
  json_add_text_or_null(o, "error", snap->error);
  json_add_text_or_null(o, "note", snap->note);
  json_add_number_or_null(o, "taken_unix_s", snap->seq > 0, snap->taken_real_s);
  json_add_number_or_null(o, "server_pid", snap->server_pid > 0, snap->server_pid);
  cJSON *gpus = cJSON_AddArrayToObject(o, "gpus");
  for (int i = 0; i < snap->n_gpus; i++)
    cJSON_AddItemToArray(gpus, gpu_to_json(&snap->gpus[i]));
  if (snap->procs_listed) {
    cJSON *procs = cJSON_AddArrayToObject(o, "processes");
    for (int i = 0; i < snap->n_procs; i++) {
      const struct tm_proc *p = &snap->procs[i];
      cJSON *po = cJSON_CreateObject();
      cJSON_AddNumberToObject(po, "pid", p->pid);
      json_add_number_or_null(po, "gpu_index", p->gpu_index >= 0, p->gpu_index);
      json_add_text_or_null(po, "name", p->name);
      add_bytes(po, "mem_bytes", p->mem_valid, p->mem_bytes);
      cJSON_AddBoolToObject(po, "in_server_tree", p->in_server_tree);
      cJSON_AddItemToArray(procs, po);
    }
  } else {
    cJSON_AddNullToObject(o, "processes"); /* the backend cannot list them */
  }
  cJSON_AddBoolToObject(o, "processes_truncated", snap->procs_truncated);
  return o;
}

static const char *state_name(enum tm_backend_state s) {
  switch (s) {
  case TM_BACKEND_USED: return "used";
  case TM_BACKEND_AVAILABLE: return "available";
  case TM_BACKEND_UNAVAILABLE: return "unavailable";
  case TM_BACKEND_NOT_PROBED: return "not_probed";
  }
  return "unknown";
}

cJSON *tm_backend_report_to_json(const struct tm_backend_status *st, size_t n) {
  cJSON *arr = cJSON_CreateArray();
  for (size_t i = 0; i < n; i++) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", st[i].name);
    cJSON_AddStringToObject(o, "status", state_name(st[i].state));
    json_add_text_or_null(o, "reason",
                          st[i].state == TM_BACKEND_USED || st[i].state == TM_BACKEND_AVAILABLE
                              ? NULL
                              : st[i].reason);
    cJSON_AddItemToArray(arr, o);
  }
  return arr;
}

/* ---------------------------------------------------------------- series */

struct series_gpu_point {
  int index;
  uint32_t valid;
  uint64_t mem_used_bytes;
  uint64_t server_mem_bytes;
  double power_w;
  double util_pct;
};

struct series_point {
  int64_t taken_mono_ns;
  bool stale;
  int n_gpus;
  struct series_gpu_point gpus[TM_MAX_GPUS];
};

struct tm_series {
  char backend[16];
  bool simulated;
  uint64_t last_seq;
  int n_gpus;                            /* GPU identities from the first sample */
  struct tm_gpu ident[TM_MAX_GPUS];
  struct series_point *points;
  size_t n_points, cap_points;
};

struct tm_series *tm_series_new(void) { return xcalloc(1, sizeof(struct tm_series)); }

void tm_series_append(struct tm_series *s, const struct tm_snapshot *snap) {
  if (snap->seq == 0 || snap->seq == s->last_seq)
    return;
  if (s->n_points == 0) {
    tm_copy_str(s->backend, sizeof s->backend, snap->backend);
    s->simulated = snap->simulated;
    s->n_gpus = snap->n_gpus;
    memcpy(s->ident, snap->gpus, sizeof s->ident);
  }
  s->last_seq = snap->seq;
  if (s->n_points == s->cap_points) {
    s->cap_points = s->cap_points ? s->cap_points * 2 : 64;
    s->points = xreallocarray(s->points, s->cap_points, sizeof *s->points);
  }
  struct series_point *p = &s->points[s->n_points++];
  memset(p, 0, sizeof *p);
  p->taken_mono_ns = snap->taken_mono_ns;
  p->stale = snap->stale;
  p->n_gpus = snap->n_gpus;
  for (int i = 0; i < snap->n_gpus; i++) {
    const struct tm_gpu *g = &snap->gpus[i];
    p->gpus[i] = (struct series_gpu_point){
        .index = g->index,
        .valid = g->valid,
        .mem_used_bytes = g->mem_used_bytes,
        .server_mem_bytes = g->server_mem_bytes,
        .power_w = g->power_w,
        .util_pct = g->util_pct,
    };
  }
}

size_t tm_series_len(const struct tm_series *s) { return s->n_points; }

/* A GPU of the series, once: what does not change from sample to sample. */
static cJSON *series_ident_to_json(const struct tm_gpu *g) {
  cJSON *o = cJSON_CreateObject();
  add_gpu_ident(o, g);
  add_bytes(o, "mem_total_bytes", g->valid & TM_GPU_MEM_TOTAL, g->mem_total_bytes);
  return o;
}

/* A GPU in one sample of the series. */
static cJSON *series_gpu_to_json(const struct series_gpu_point *gp) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "index", gp->index);
  add_bytes(o, "mem_used_bytes", gp->valid & TM_GPU_MEM_USED, gp->mem_used_bytes);
  add_bytes(o, "server_mem_bytes", gp->valid & TM_GPU_SERVER_MEM, gp->server_mem_bytes);
  json_add_number_or_null(o, "power_w", gp->valid & TM_GPU_POWER, gp->power_w);
  json_add_number_or_null(o, "util_pct", gp->valid & TM_GPU_UTIL, gp->util_pct);
  return o;
}

cJSON *tm_series_to_json(const struct tm_series *s) {
  cJSON *o = doc_new(s->n_points && s->backend[0] ? s->backend : NULL, s->simulated);
  cJSON *gpus = cJSON_AddArrayToObject(o, "gpus");
  for (int i = 0; i < s->n_gpus; i++)
    cJSON_AddItemToArray(gpus, series_ident_to_json(&s->ident[i]));
  cJSON *samples = cJSON_AddArrayToObject(o, "samples");
  int64_t t0 = s->n_points ? s->points[0].taken_mono_ns : 0;
  for (size_t i = 0; i < s->n_points; i++) {
    const struct series_point *p = &s->points[i];
    cJSON *po = cJSON_CreateObject();
    cJSON_AddNumberToObject(po, "t_s", (double)(p->taken_mono_ns - t0) / 1e9);
    cJSON_AddBoolToObject(po, "stale", p->stale);
    cJSON *pg = cJSON_AddArrayToObject(po, "gpus");
    for (int g = 0; g < p->n_gpus; g++)
      cJSON_AddItemToArray(pg, series_gpu_to_json(&p->gpus[g]));
    cJSON_AddItemToArray(samples, po);
  }
  return o;
}

void tm_series_free(struct tm_series *s) {
  if (!s)
    return;
  free(s->points);
  free(s);
}
