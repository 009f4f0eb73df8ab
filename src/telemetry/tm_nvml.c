/* nvml backend: libnvidia-ml loaded with dlopen. The few NVML types used are
 * declared here (from nvml.h, NVML_API_VERSION 13), so building needs no CUDA
 * header and the binary never links libnvidia-ml. Versioned symbols are looked
 * up by their real names (nvml.h #defines map the plain names onto them). */
#include "telemetry/telemetry_internal.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int nvml_return;                 /* nvmlReturn_t */
typedef struct nvml_device_st *nvml_device; /* nvmlDevice_t (opaque) */

enum {
  NVML_SUCCESS = 0,
  NVML_ERROR_INSUFFICIENT_SIZE = 7,
  NVML_DEVICE_NAME_BUFFER = 96,          /* NVML_DEVICE_NAME_V2_BUFFER_SIZE */
  NVML_DEVICE_UUID_BUFFER = 96,          /* NVML_DEVICE_UUID_V2_BUFFER_SIZE */
};

struct nvml_memory_v1 { /* nvmlMemory_t: used includes driver-reserved memory */
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

struct nvml_memory_v2 { /* nvmlMemory_v2_t: used excludes reserved, as nvidia-smi shows */
  unsigned int version;
  unsigned long long total;
  unsigned long long reserved;
  unsigned long long free;
  unsigned long long used;
};
#define NVML_MEMORY_V2_VERSION ((unsigned int)(sizeof(struct nvml_memory_v2) | (2u << 24)))

struct nvml_utilization { /* nvmlUtilization_t */
  unsigned int gpu;
  unsigned int memory;
};

struct nvml_process_info { /* nvmlProcessInfo_t (v2/v3), 24 bytes on x86-64 */
  unsigned int pid;
  unsigned long long used_gpu_memory;
  unsigned int gpu_instance_id;
  unsigned int compute_instance_id;
};
#define NVML_VALUE_NOT_AVAILABLE_ULL (~0ULL) /* usedGpuMemory when not known (e.g. MIG) */

struct nvml_api {
  void *lib;
  nvml_return (*init_v2)(void);
  nvml_return (*shutdown)(void);
  const char *(*error_string)(nvml_return);
  nvml_return (*get_count_v2)(unsigned int *);
  nvml_return (*get_handle_by_index_v2)(unsigned int, nvml_device *);
  nvml_return (*get_name)(nvml_device, char *, unsigned int);
  nvml_return (*get_uuid)(nvml_device, char *, unsigned int);
  nvml_return (*get_memory_info)(nvml_device, struct nvml_memory_v1 *);
  nvml_return (*get_memory_info_v2)(nvml_device, struct nvml_memory_v2 *); /* optional */
  nvml_return (*get_utilization)(nvml_device, struct nvml_utilization *);  /* optional */
  nvml_return (*get_power_usage)(nvml_device, unsigned int *);             /* optional, mW */
  nvml_return (*get_total_energy)(nvml_device, unsigned long long *);      /* optional, mJ */
  nvml_return (*get_enforced_power_limit)(nvml_device, unsigned int *);    /* optional, mW */
  nvml_return (*get_compute_procs_v3)(nvml_device, unsigned int *,
                                      struct nvml_process_info *);          /* optional */
  nvml_return (*get_process_name)(unsigned int, char *, unsigned int);     /* optional */
};

struct nvml_state {
  struct nvml_api api;
  const char *library;          /* the soname that loaded */
  unsigned int n_devices;
  nvml_device devices[TM_MAX_GPUS];
  struct nvml_process_info *procs; /* reused process buffer */
  unsigned int procs_cap;
};

static const char *nvml_strerror(const struct nvml_api *api, nvml_return rc) {
  return api->error_string ? api->error_string(rc) : "NVML error (nvmlErrorString missing)";
}

/* Where dlsym's result goes: the function pointer's storage, so that no cast
 * between object and function pointer types is needed (ISO C forbids it;
 * POSIX guarantees the representation). */
#define NVML_SLOT(api, field) ((void **)&(api)->field)

static int load_library(const struct tm_config *cfg, struct nvml_state *st, struct st_err *err) {
  const char *names[2] = {"libnvidia-ml.so.1", "libnvidia-ml.so"};
  size_t n_names = 2;
  if (cfg->nvml_library) {
    names[0] = cfg->nvml_library;
    n_names = 1;
  }
  char reasons[TM_TEXT_LEN] = "";
  for (size_t i = 0; i < n_names; i++) {
    st->api.lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (st->api.lib) {
      st->library = names[i];
      return 0;
    }
    const char *why = dlerror();
    size_t used = strlen(reasons);
    snprintf(reasons + used, sizeof reasons - used, "%s%s", used ? "; " : "",
             why ? why : names[i]);
  }
  return err_setf(err, "dlopen: %s", reasons);
}

/* The symbols servetop calls; a missing required one fails the backend, a
 * missing optional one leaves its figure unknown. */
static int resolve_symbols(struct nvml_state *st, struct st_err *err) {
  struct nvml_api *api = &st->api;
  const struct {
    void **slot;
    const char *symbol;
    bool required;
  } symbols[] = {
      {NVML_SLOT(api, error_string), "nvmlErrorString", false},
      {NVML_SLOT(api, init_v2), "nvmlInit_v2", true},
      {NVML_SLOT(api, shutdown), "nvmlShutdown", true},
      {NVML_SLOT(api, get_count_v2), "nvmlDeviceGetCount_v2", true},
      {NVML_SLOT(api, get_handle_by_index_v2), "nvmlDeviceGetHandleByIndex_v2", true},
      {NVML_SLOT(api, get_name), "nvmlDeviceGetName", true},
      {NVML_SLOT(api, get_uuid), "nvmlDeviceGetUUID", true},
      {NVML_SLOT(api, get_memory_info), "nvmlDeviceGetMemoryInfo", true},
      {NVML_SLOT(api, get_memory_info_v2), "nvmlDeviceGetMemoryInfo_v2", false},
      {NVML_SLOT(api, get_utilization), "nvmlDeviceGetUtilizationRates", false},
      {NVML_SLOT(api, get_power_usage), "nvmlDeviceGetPowerUsage", false},
      {NVML_SLOT(api, get_total_energy), "nvmlDeviceGetTotalEnergyConsumption", false},
      {NVML_SLOT(api, get_enforced_power_limit), "nvmlDeviceGetEnforcedPowerLimit", false},
      /* Only the _v3 symbol takes the 24-byte struct; the plain one is v1 (16 bytes). */
      {NVML_SLOT(api, get_compute_procs_v3), "nvmlDeviceGetComputeRunningProcesses_v3", false},
      {NVML_SLOT(api, get_process_name), "nvmlSystemGetProcessName", false},
  };
  for (size_t i = 0; i < ST_ARRAY_LEN(symbols); i++) {
    *symbols[i].slot = dlsym(api->lib, symbols[i].symbol);
    if (!*symbols[i].slot && symbols[i].required)
      return err_setf(err, "%s: symbol %s not found (driver too old?)", st->library,
                      symbols[i].symbol);
  }
  return 0;
}

static void nvml_close(void *state) {
  struct nvml_state *st = state;
  if (!st)
    return;
  /* Only called after nvmlInit_v2 succeeded. */
  st->api.shutdown();
  dlclose(st->api.lib);
  free(st->procs);
  free(st);
}

static int nvml_open(const struct tm_config *cfg, void **state_out, struct st_err *err) {
  struct nvml_state *st = xcalloc(1, sizeof *st);
  if (load_library(cfg, st, err) < 0) {
    free(st);
    return -1;
  }
  if (resolve_symbols(st, err) < 0) {
    dlclose(st->api.lib);
    free(st);
    return -1;
  }
  nvml_return rc = st->api.init_v2();
  if (rc != NVML_SUCCESS) {
    err_setf(err, "nvmlInit_v2: %s", nvml_strerror(&st->api, rc));
    dlclose(st->api.lib);
    free(st);
    return -1;
  }
  unsigned int count = 0;
  rc = st->api.get_count_v2(&count);
  if (rc != NVML_SUCCESS || count == 0) {
    if (rc != NVML_SUCCESS)
      err_setf(err, "nvmlDeviceGetCount_v2: %s", nvml_strerror(&st->api, rc));
    else
      err_setf(err, "NVML found no GPU");
    nvml_close(st);
    return -1;
  }
  if (count > TM_MAX_GPUS)
    count = TM_MAX_GPUS;
  for (unsigned int i = 0; i < count; i++) {
    rc = st->api.get_handle_by_index_v2(i, &st->devices[i]);
    if (rc != NVML_SUCCESS) {
      err_setf(err, "nvmlDeviceGetHandleByIndex_v2(%u): %s", i, nvml_strerror(&st->api, rc));
      nvml_close(st);
      return -1;
    }
  }
  st->n_devices = count;
  *state_out = st;
  return 0;
}

static void sample_memory(struct nvml_state *st, nvml_device dev, struct tm_gpu *g,
                          struct tm_snapshot *out) {
  if (st->api.get_memory_info_v2) {
    struct nvml_memory_v2 m2 = {.version = NVML_MEMORY_V2_VERSION};
    if (st->api.get_memory_info_v2(dev, &m2) == NVML_SUCCESS) {
      g->mem_total_bytes = m2.total;
      g->mem_used_bytes = m2.used;
      g->mem_reserved_bytes = m2.reserved;
      g->valid |= TM_GPU_MEM_TOTAL | TM_GPU_MEM_USED | TM_GPU_MEM_RESERVED;
      return;
    }
  }
  struct nvml_memory_v1 m1;
  if (st->api.get_memory_info(dev, &m1) == NVML_SUCCESS) {
    g->mem_total_bytes = m1.total;
    g->mem_used_bytes = m1.used;
    g->valid |= TM_GPU_MEM_TOTAL | TM_GPU_MEM_USED;
    tm_copy_str(out->note, sizeof out->note,
                "nvml: nvmlDeviceGetMemoryInfo_v2 unavailable; memory used includes "
                "driver-reserved memory (v1), unlike nvidia-smi");
  }
}

static void sample_processes(struct nvml_state *st, nvml_device dev, int gpu_index,
                             struct tm_snapshot *out) {
  unsigned int count = 0;
  /* Ask for the size first; the list can grow between calls, so leave room. */
  nvml_return rc = st->api.get_compute_procs_v3(dev, &count, NULL);
  if (rc == NVML_SUCCESS && count == 0)
    return;
  for (int attempt = 0; attempt < 3 && rc == NVML_ERROR_INSUFFICIENT_SIZE; attempt++) {
    unsigned int want = count + 8;
    if (want > st->procs_cap) {
      st->procs = xreallocarray(st->procs, want, sizeof *st->procs);
      st->procs_cap = want;
    }
    count = st->procs_cap;
    rc = st->api.get_compute_procs_v3(dev, &count, st->procs);
  }
  if (rc != NVML_SUCCESS)
    return;
  for (unsigned int i = 0; i < count; i++) {
    struct tm_proc *p = tm_add_proc(out);
    if (!p)
      return;
    p->pid = (pid_t)st->procs[i].pid;
    p->gpu_index = gpu_index;
    if (st->procs[i].used_gpu_memory != NVML_VALUE_NOT_AVAILABLE_ULL) {
      p->mem_bytes = st->procs[i].used_gpu_memory;
      p->mem_valid = true;
    }
    if (!st->api.get_process_name ||
        st->api.get_process_name(st->procs[i].pid, p->name, sizeof p->name) != NVML_SUCCESS)
      tm_proc_comm(p->pid, p->name, sizeof p->name);
    /* NVML gives a full path; the table shows the program. */
    char *slash = strrchr(p->name, '/');
    if (slash)
      memmove(p->name, slash + 1, strlen(slash + 1) + 1);
  }
}

static int nvml_sample(void *state, struct tm_snapshot *out, struct st_err *err) {
  struct nvml_state *st = state;
  (void)err;
  out->procs_listed = st->api.get_compute_procs_v3 != NULL;
  for (unsigned int i = 0; i < st->n_devices; i++) {
    nvml_device dev = st->devices[i];
    struct tm_gpu *g = &out->gpus[out->n_gpus++];
    g->index = (int)i;
    if (st->api.get_name(dev, g->name, sizeof g->name) != NVML_SUCCESS)
      g->name[0] = '\0';
    if (st->api.get_uuid(dev, g->uuid, sizeof g->uuid) != NVML_SUCCESS)
      g->uuid[0] = '\0';
    sample_memory(st, dev, g, out);
    struct nvml_utilization util;
    if (st->api.get_utilization && st->api.get_utilization(dev, &util) == NVML_SUCCESS) {
      g->util_pct = util.gpu;
      g->valid |= TM_GPU_UTIL;
    }
    unsigned int mw;
    if (st->api.get_power_usage && st->api.get_power_usage(dev, &mw) == NVML_SUCCESS) {
      g->power_w = mw / 1000.0;
      g->valid |= TM_GPU_POWER;
    }
    if (st->api.get_enforced_power_limit &&
        st->api.get_enforced_power_limit(dev, &mw) == NVML_SUCCESS) {
      g->power_limit_w = mw / 1000.0;
      g->valid |= TM_GPU_POWER_LIMIT;
    }
    unsigned long long mj;
    if (st->api.get_total_energy && st->api.get_total_energy(dev, &mj) == NVML_SUCCESS) {
      g->energy_j = (double)mj / 1000.0;
      g->valid |= TM_GPU_ENERGY;
    }
    if (st->api.get_compute_procs_v3)
      sample_processes(st, dev, (int)i, out);
  }
  if (!out->note[0] && !st->api.get_compute_procs_v3)
    tm_copy_str(out->note, sizeof out->note,
                "nvml: nvmlDeviceGetComputeRunningProcesses_v3 missing; no per-process memory");
  return 0;
}

const struct tm_backend_ops tm_nvml_ops = {
    .name = "nvml",
    .open = nvml_open,
    .sample = nvml_sample,
    .close = nvml_close,
};
