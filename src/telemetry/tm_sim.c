/* sim backend: the modelled GPU memory of `servetop sim`, read from
 * GET <base>/sim/gpu_memory. Every snapshot it makes is marked simulated. */
#include "telemetry/telemetry_internal.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A non-negative number member as bytes; false when absent, not a number or
 * beyond int64 (the body is outside input: no out-of-range conversion). */
static bool json_bytes(const cJSON *o, const char *key, uint64_t *out) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0 ||
      v->valuedouble >= 0x1p63)
    return false;
  *out = (uint64_t)llround(v->valuedouble);
  return true;
}

static bool json_double(const cJSON *o, const char *key, double *out) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
    return false;
  *out = v->valuedouble;
  return true;
}

int tm_sim_parse(const char *json, struct tm_snapshot *snap, struct st_err *err) {
  cJSON *root = cJSON_Parse(json);
  if (!root)
    return err_setf(err, "/sim/gpu_memory: not JSON (near '%.40s')",
                    cJSON_GetErrorPtr() ? cJSON_GetErrorPtr() : "");
  int rc = 0;
  const cJSON *gpus = cJSON_GetObjectItemCaseSensitive(root, "gpus");
  const cJSON *sim_flag = cJSON_GetObjectItemCaseSensitive(root, "simulated");
  if (!cJSON_IsTrue(sim_flag)) {
    rc = err_setf(err, "/sim/gpu_memory: field simulated: expected true");
    goto out;
  }
  if (!cJSON_IsArray(gpus)) {
    rc = err_setf(err, "/sim/gpu_memory: field gpus: expected an array");
    goto out;
  }
  snap->simulated = true;
  double pid_num = 0;
  bool have_pid = json_double(root, "pid", &pid_num) && pid_num > 0 && pid_num <= INT_MAX;
  snap->procs_listed = have_pid;
  int i = 0;
  const cJSON *item;
  cJSON_ArrayForEach(item, gpus) {
    if (snap->n_gpus >= TM_MAX_GPUS)
      break;
    struct tm_gpu *g = &snap->gpus[snap->n_gpus];
    memset(g, 0, sizeof *g);
    double index;
    if (!json_double(item, "index", &index) || index < 0 || index > INT_MAX) {
      rc = err_setf(err, "/sim/gpu_memory: gpus[%d].index: expected a non-negative integer", i);
      goto out;
    }
    g->index = (int)index;
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(item, "name");
    if (cJSON_IsString(name))
      tm_copy_str(g->name, sizeof g->name, name->valuestring);
    if (json_bytes(item, "total_bytes", &g->mem_total_bytes))
      g->valid |= TM_GPU_MEM_TOTAL;
    if (json_bytes(item, "used_bytes", &g->mem_used_bytes))
      g->valid |= TM_GPU_MEM_USED;
    if (json_double(item, "power_w", &g->power_w))
      g->valid |= TM_GPU_POWER;
    if (json_double(item, "utilization_pct", &g->util_pct))
      g->valid |= TM_GPU_UTIL;
    if (json_bytes(item, "weights_bytes", &g->sim_weights_bytes) &&
        json_bytes(item, "kv_pool_bytes", &g->sim_kv_pool_bytes) &&
        json_bytes(item, "kv_used_bytes", &g->sim_kv_used_bytes) &&
        json_bytes(item, "cuda_graph_bytes", &g->sim_cuda_graph_bytes) &&
        json_bytes(item, "activations_bytes", &g->sim_activations_bytes))
      g->valid |= TM_GPU_SIM_BREAKDOWN;
    snap->n_gpus++;
    /* The simulated server is one process holding all the modelled memory. */
    if (have_pid && (g->valid & TM_GPU_MEM_USED)) {
      struct tm_proc *p = tm_add_proc(snap);
      if (p) {
        p->pid = (pid_t)pid_num;
        p->gpu_index = g->index;
        p->mem_bytes = g->mem_used_bytes;
        p->mem_valid = true;
        tm_copy_str(p->name, sizeof p->name, "servetop sim");
      }
    }
    i++;
  }
  if (snap->n_gpus == 0)
    rc = err_setf(err, "/sim/gpu_memory: field gpus: empty");
out:
  cJSON_Delete(root);
  return rc;
}

/* The state is a struct tm_source: where is <base>/sim/gpu_memory. */
static int sim_open(const struct tm_config *cfg, void **state_out, struct st_err *err) {
  if (cfg->n_urls == 0)
    return err_setf(err, "no --telemetry-url given (the sim's base URL)");
  return tm_source_open_parsed(path_join_alloc(cfg->urls[0], "sim/gpu_memory"), NULL,
                               tm_sim_parse, cfg, state_out, err);
}

const struct tm_backend_ops tm_sim_ops = {
    .name = "sim",
    .open = sim_open,
    .sample = tm_source_sample,
    .close = tm_source_close,
};
