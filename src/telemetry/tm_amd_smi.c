/* amd-smi backend: `amd-smi metric -m -p -u --csv` (VRAM, power, activity) for
 * AMD Instinct GPUs. amd-smi's CSV flattens each metric group into columns of
 * one row per GPU, "gpu" being the key column; watch mode (-w) repeats the
 * header and adds a leading "timestamp" column, and some versions print
 * preamble lines first, so the parser finds the header by name and skips
 * anything else. VRAM is in MB meaning MiB (bytes / 1024^2). amd-smi has no
 * per-process memory here, so server attribution stays unknown. */
#include "telemetry/telemetry_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { AMD_MAX_FIELDS = 64 };
enum amd_col { AMD_OTHER, AMD_GPU, AMD_VRAM_TOTAL, AMD_VRAM_USED, AMD_POWER, AMD_GFX_ACTIVITY };

static enum amd_col amd_col_of(const char *name) {
  static const struct tm_csv_col map[] = {
      {"gpu", AMD_GPU},
      {"total_vram", AMD_VRAM_TOTAL},
      {"used_vram", AMD_VRAM_USED},
      {"socket_power", AMD_POWER},
      {"current_socket_power", AMD_POWER},
      {"average_socket_power", AMD_POWER},
      {"gfx_activity", AMD_GFX_ACTIVITY},
  };
  return (enum amd_col)tm_csv_col_of(map, ST_ARRAY_LEN(map), name, AMD_OTHER);
}

/* "N/A" and empty cells are unknown; a value may carry a unit word. */
static bool amd_value(const char *v, double *out) {
  return !tm_csv_unknown(v) && tm_csv_number(v, out) == 0 && *out >= 0;
}

static struct tm_gpu *gpu_slot(struct tm_snapshot *snap, int index) {
  for (int i = 0; i < snap->n_gpus; i++)
    if (snap->gpus[i].index == index)
      return &snap->gpus[i]; /* watch mode: a newer row replaces the older one */
  if (snap->n_gpus >= TM_MAX_GPUS)
    return NULL;
  struct tm_gpu *g = &snap->gpus[snap->n_gpus++];
  memset(g, 0, sizeof *g);
  g->index = index;
  return g;
}

int tm_amdsmi_parse(const char *text, struct tm_snapshot *snap, struct st_err *err) {
  char *copy = xstrdup(text);
  enum amd_col cols[AMD_MAX_FIELDS];
  size_t n_cols = 0;
  int gpu_col = -1, line_no = 0, rc = 0;
  char *save = NULL;
  /* Blank lines are skipped, so line numbers count non-blank lines. */
  for (char *line = strtok_r(copy, "\r\n", &save); line; line = strtok_r(NULL, "\r\n", &save)) {
    line_no++;
    char *fields[AMD_MAX_FIELDS];
    size_t n = tm_split_csv(line, fields, AMD_MAX_FIELDS);
    int header_gpu = -1;
    for (size_t i = 0; i < n; i++)
      if (strcmp(fields[i], "gpu") == 0)
        header_gpu = (int)i;
    if (header_gpu >= 0) {
      for (size_t i = 0; i < n; i++)
        cols[i] = amd_col_of(fields[i]);
      n_cols = n;
      gpu_col = header_gpu;
      continue;
    }
    int index;
    if (gpu_col < 0 || (size_t)gpu_col >= n || parse_int(fields[gpu_col], &index) < 0 || index < 0)
      continue; /* preamble or a line that is not a GPU row */
    if (n < n_cols) {
      rc = err_setf(err, "amd-smi --csv line %d: %zu fields, the header has %zu", line_no, n, n_cols);
      break;
    }
    struct tm_gpu *g = gpu_slot(snap, index);
    if (!g)
      break;
    g->valid = 0;
    for (size_t i = 0; i < n_cols; i++) {
      double x;
      if (cols[i] == AMD_OTHER || cols[i] == AMD_GPU || !amd_value(fields[i], &x))
        continue;
      switch (cols[i]) {
      case AMD_VRAM_TOTAL: g->mem_total_bytes = (uint64_t)llround(x) << 20; g->valid |= TM_GPU_MEM_TOTAL; break;
      case AMD_VRAM_USED: g->mem_used_bytes = (uint64_t)llround(x) << 20; g->valid |= TM_GPU_MEM_USED; break;
      case AMD_POWER: g->power_w = x; g->valid |= TM_GPU_POWER; break;
      case AMD_GFX_ACTIVITY: g->util_pct = x; g->valid |= TM_GPU_UTIL; break;
      default: break;
      }
    }
  }
  free(copy);
  if (rc == 0 && snap->n_gpus == 0)
    rc = err_setf(err, "amd-smi --csv: no header with a 'gpu' column followed by GPU rows");
  return rc;
}

/* The state is a struct tm_source: where is the amd-smi program. */
static int amdsmi_open(const struct tm_config *cfg, void **state_out, struct st_err *err) {
  static const char *const args[] = {"metric", "-m", "-p", "-u", "--csv", NULL};
  char *tool = xstrdup(cfg->amd_smi_path ? cfg->amd_smi_path : "amd-smi");
  return tm_source_open_parsed(tool, args, tm_amdsmi_parse, cfg, state_out, err);
}

const struct tm_backend_ops tm_amd_smi_ops = {
    .name = "amd-smi",
    .open = amdsmi_open,
    .sample = tm_source_sample,
    .close = tm_source_close,
};
