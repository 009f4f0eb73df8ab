/* dcgm backend: scrapes dcgm-exporter endpoints (Prometheus text), the way to
 * watch GPUs of other nodes. Series carry the labels gpu, UUID, modelName and
 * Hostname; FB_* are MiB, POWER_USAGE is W, TOTAL_ENERGY_CONSUMPTION is mJ.
 * The exporter has no per-process memory, so server attribution stays
 * unknown. Parsing is metrics.h's prom_parse (one Prometheus parser in the
 * project). */
#include "telemetry/telemetry_internal.h"

#include "metrics/metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum dcgm_field { F_FB_USED, F_FB_FREE, F_FB_RESERVED, F_GPU_UTIL, F_POWER, F_ENERGY, N_FIELDS };

static const char *const field_names[N_FIELDS] = {
    "DCGM_FI_DEV_FB_USED",     "DCGM_FI_DEV_FB_FREE",     "DCGM_FI_DEV_FB_RESERVED",
    "DCGM_FI_DEV_GPU_UTIL",    "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
};

struct dcgm_gpu_acc {
  bool have[N_FIELDS];
  double value[N_FIELDS];
};

static int find_field(const char *name) {
  for (int f = 0; f < N_FIELDS; f++)
    if (strcmp(field_names[f], name) == 0)
      return f;
  return -1;
}

/* The GPU of (host, index) in snap, added after first_new when new. */
static int gpu_of(struct tm_snapshot *snap, int first_new, const char *host, int index,
                  struct dcgm_gpu_acc *acc) {
  for (int i = first_new; i < snap->n_gpus; i++)
    if (snap->gpus[i].index == index && strcmp(snap->gpus[i].host, host) == 0)
      return i;
  if (snap->n_gpus >= TM_MAX_GPUS)
    return -1;
  int i = snap->n_gpus++;
  memset(&snap->gpus[i], 0, sizeof snap->gpus[i]);
  memset(&acc[i], 0, sizeof acc[i]);
  snap->gpus[i].index = index;
  tm_copy_str(snap->gpus[i].host, sizeof snap->gpus[i].host, host);
  return i;
}

int tm_dcgm_parse(const char *text, size_t len, struct tm_snapshot *snap, struct st_err *err) {
  struct prom_set set;
  prom_parse(text, len, &set);
  struct dcgm_gpu_acc acc[TM_MAX_GPUS];
  int first_new = snap->n_gpus;
  for (size_t s = 0; s < set.n_samples; s++) {
    const struct prom_sample *sm = &set.samples[s];
    int f = find_field(sm->name);
    if (f < 0 || !isfinite(sm->value))
      continue;
    const char *mig = prom_label_value(sm, "GPU_I_ID");
    if (mig && mig[0])
      continue; /* a MIG instance: the whole-GPU series carries the totals */
    const char *gpu_label = prom_label_value(sm, "gpu");
    int index;
    if (!gpu_label || parse_int(gpu_label, &index) < 0 || index < 0)
      continue;
    const char *host = prom_label_value(sm, "Hostname");
    int g = gpu_of(snap, first_new, host ? host : "", index, acc);
    if (g < 0)
      break;
    const char *uuid = prom_label_value(sm, "UUID");
    const char *model = prom_label_value(sm, "modelName");
    if (uuid && !snap->gpus[g].uuid[0])
      tm_copy_str(snap->gpus[g].uuid, sizeof snap->gpus[g].uuid, uuid);
    if (model && !snap->gpus[g].name[0])
      tm_copy_str(snap->gpus[g].name, sizeof snap->gpus[g].name, model);
    acc[g].have[f] = true;
    acc[g].value[f] = sm->value;
  }
  size_t n_samples = set.n_samples;
  prom_set_free(&set);
  if (snap->n_gpus == first_new)
    return err_setf(err, "no DCGM_FI_DEV_* series with a gpu label (%zu samples read)", n_samples);

  const double mib = 1024.0 * 1024.0;
  for (int i = first_new; i < snap->n_gpus; i++) {
    struct tm_gpu *g = &snap->gpus[i];
    const struct dcgm_gpu_acc *a = &acc[i];
    if (a->have[F_FB_USED]) {
      g->mem_used_bytes = (uint64_t)llround(a->value[F_FB_USED] * mib);
      g->valid |= TM_GPU_MEM_USED;
    }
    if (a->have[F_FB_RESERVED]) {
      g->mem_reserved_bytes = (uint64_t)llround(a->value[F_FB_RESERVED] * mib);
      g->valid |= TM_GPU_MEM_RESERVED;
    }
    /* The exporter has no total: used + free (+ reserved, when exported,
     * since used excludes it as in NVML v2). */
    if (a->have[F_FB_USED] && a->have[F_FB_FREE]) {
      double total = a->value[F_FB_USED] + a->value[F_FB_FREE] +
                     (a->have[F_FB_RESERVED] ? a->value[F_FB_RESERVED] : 0);
      g->mem_total_bytes = (uint64_t)llround(total * mib);
      g->valid |= TM_GPU_MEM_TOTAL;
    }
    if (a->have[F_GPU_UTIL]) {
      g->util_pct = a->value[F_GPU_UTIL];
      g->valid |= TM_GPU_UTIL;
    }
    if (a->have[F_POWER]) {
      g->power_w = a->value[F_POWER];
      g->valid |= TM_GPU_POWER;
    }
    if (a->have[F_ENERGY]) {
      g->energy_j = a->value[F_ENERGY] / 1000.0;
      g->valid |= TM_GPU_ENERGY;
    }
  }
  return 0;
}

struct dcgm_state {
  struct tm_source src;         /* where: NULL, the URLs are these */
  char **urls;
  size_t n_urls;
};

static void dcgm_close(void *state) {
  struct dcgm_state *st = state;
  if (!st)
    return;
  for (size_t i = 0; i < st->n_urls; i++)
    free(st->urls[i]);
  free(st->urls);
  tm_source_close(st);
}

/* Every endpoint in turn; one that fails is named in the note while the
 * others still count. Fails only when none answers. */
static int dcgm_sample(void *state, struct tm_snapshot *out, struct st_err *err) {
  struct dcgm_state *st = state;
  struct tm_source *src = &st->src;
  size_t n_ok = 0;
  for (size_t i = 0; i < st->n_urls; i++) {
    struct st_err one = {{0}};
    if (tm_http_get(st->urls[i], src->timeout_ms, &src->text, &one) < 0 ||
        tm_dcgm_parse(src->text.data, src->text.len, out, &one) < 0) {
      if (!out->note[0]) {
        char *msg = xasprintf("%s: %s", st->urls[i], one.msg);
        tm_copy_str(out->note, sizeof out->note, msg);
        free(msg);
      }
      if (n_ok == 0 && i + 1 == st->n_urls)
        return err_setf(err, "%s", out->note);
      continue;
    }
    n_ok++;
  }
  return 0;
}

static int dcgm_open(const struct tm_config *cfg, void **state_out, struct st_err *err) {
  if (cfg->n_urls == 0)
    return err_setf(err, "no --telemetry-url given (dcgm-exporter /metrics)");
  struct dcgm_state *st = tm_source_new(sizeof *st, NULL, cfg);
  st->n_urls = cfg->n_urls;
  st->urls = xcalloc(cfg->n_urls, sizeof *st->urls);
  for (size_t i = 0; i < cfg->n_urls; i++) {
    /* A bare host:port means the exporter's usual path. */
    const char *u = cfg->urls[i];
    const char *after_scheme = strstr(u, "://");
    after_scheme = after_scheme ? after_scheme + 3 : u;
    st->urls[i] = strchr(after_scheme, '/') ? xstrdup(u) : xasprintf("%s/metrics", u);
  }
  return tm_open_probed(st, dcgm_sample, dcgm_close, state_out, err);
}

const struct tm_backend_ops tm_dcgm_ops = {
    .name = "dcgm",
    .open = dcgm_open,
    .sample = dcgm_sample,
    .close = dcgm_close,
};
