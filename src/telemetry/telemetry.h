/* telemetry: GPU memory, utilization and power, per GPU and per server process.
 *
 * Backends (one file each, one ops table each, listed in one const table in
 * tm_registry.c, tried in this order by "auto"):
 *   nvml         libnvidia-ml.so.1 loaded with dlopen (no NVML header or link)
 *   nvidia-smi   CSV queries run as a subprocess with a deadline, cached 1 s
 *   amd-smi      `amd-smi metric -m -p -u --csv`, same subprocess rules
 *   dcgm         dcgm-exporter Prometheus endpoints (only with a URL)
 *   sim          `servetop sim`'s GET /sim/gpu_memory (only with a URL);
 *                every value it gives is labelled simulated
 *
 * Every metric carries a validity bit: unknown is never reported as 0.
 *
 * Threads: tm_start() runs the backend on its own sampler thread (backend calls,
 * NVML included, happen only there). Readers call tm_latest(), which copies a
 * value snapshot under a mutex held only for the copy, so neither the load
 * generator nor the UI ever waits on a backend. A backend that fails or hangs
 * makes the snapshot stale (tm_snapshot.stale), it never blocks a reader.
 *
 * Typical use (servetop run / the dashboard):
 *
 *   struct tm_config cfg = {0};              // auto, 1 s, no URL
 *   cfg.server_pid = launched_pid;           // attribute memory to the server
 *   struct st_err err;
 *   struct tm_sampler *tm = tm_open(&cfg, &err);   // auto never fails
 *   tm_start(tm, &err);
 *   struct tm_series *series = tm_series_new();
 *   ... every second:  struct tm_snapshot snap;
 *                      if (tm_latest(tm, &snap)) tm_series_append(series, &snap);
 *   cJSON_AddItemToObject(result, "gpu_telemetry", tm_series_to_json(series));
 *   tm_series_free(series); tm_close(tm);
 */
#ifndef SERVETOP_TELEMETRY_TELEMETRY_H
#define SERVETOP_TELEMETRY_TELEMETRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/util.h"

struct cJSON;

enum {
  TM_MAX_GPUS = 16,
  TM_MAX_PROCS = 128,
  TM_NAME_LEN = 96,      /* NVML_DEVICE_NAME_V2_BUFFER_SIZE */
  TM_UUID_LEN = 96,      /* NVML_DEVICE_UUID_V2_BUFFER_SIZE */
  TM_HOST_LEN = 64,
  TM_PROC_NAME_LEN = 64,
  TM_TEXT_LEN = 256,
};

/* Validity bits of struct tm_gpu.valid. */
enum tm_gpu_field {
  TM_GPU_MEM_USED = 1u << 0,
  TM_GPU_MEM_TOTAL = 1u << 1,
  TM_GPU_MEM_RESERVED = 1u << 2,  /* driver-reserved, not in mem_used (NVML v2 semantics) */
  TM_GPU_UTIL = 1u << 3,
  TM_GPU_POWER = 1u << 4,
  TM_GPU_ENERGY = 1u << 5,
  TM_GPU_POWER_LIMIT = 1u << 6,
  TM_GPU_SERVER_MEM = 1u << 7,    /* server_mem_bytes and other_mem_bytes */
  TM_GPU_SIM_BREAKDOWN = 1u << 8, /* the sim's weights/kv/graph/activation split */
};

struct tm_gpu {
  uint32_t valid;                 /* enum tm_gpu_field bits */
  int index;                      /* the backend's GPU index */
  char name[TM_NAME_LEN];         /* "" when unknown */
  char uuid[TM_UUID_LEN];         /* "" when unknown */
  char host[TM_HOST_LEN];         /* dcgm-exporter's Hostname label; "" for this node */
  uint64_t mem_used_bytes;
  uint64_t mem_total_bytes;
  uint64_t mem_reserved_bytes;
  double util_pct;                /* % of time a kernel ran in the last sample period */
  double power_w;
  double energy_j;                /* since driver load */
  double power_limit_w;
  /* Memory of processes in the server's tree on this GPU, and of all other
   * processes (the "rest" that NVML lists). Valid only with a server pid and
   * a backend that lists processes. */
  uint64_t server_mem_bytes;
  uint64_t other_mem_bytes;
  /* TM_GPU_SIM_BREAKDOWN: the simulated server's own accounting. */
  uint64_t sim_weights_bytes;
  uint64_t sim_kv_pool_bytes;
  uint64_t sim_kv_used_bytes;
  uint64_t sim_cuda_graph_bytes;
  uint64_t sim_activations_bytes;
};

struct tm_proc {
  pid_t pid;                      /* in the backend's PID namespace */
  int gpu_index;                  /* -1 when the GPU could not be matched */
  char name[TM_PROC_NAME_LEN];    /* "" when unknown */
  bool mem_valid;
  uint64_t mem_bytes;             /* memory this process holds on gpu_index */
  bool in_server_tree;            /* pid is the server pid or one of its descendants */
};

/* A value type (about 19 KB): copy it freely, but heap-allocate it on small stacks. */
struct tm_snapshot {
  uint64_t seq;                   /* 0 = no sample yet; +1 per successful sample */
  int64_t taken_mono_ns;          /* CLOCK_MONOTONIC of the sample */
  double taken_real_s;            /* CLOCK_REALTIME, seconds since the epoch */
  char backend[16];               /* "nvml", ... or "none" */
  bool simulated;                 /* values come from a model, not hardware */
  bool stale;                     /* the last sample failed or is older than 3 intervals */
  char error[TM_TEXT_LEN];        /* why the last sample failed ("" when it did not) */
  char note[TM_TEXT_LEN];         /* e.g. a fallback in use ("" when none) */
  pid_t server_pid;               /* 0 when no server is watched */
  int n_gpus;
  struct tm_gpu gpus[TM_MAX_GPUS];
  bool procs_listed;              /* the backend lists processes (an empty list = none run) */
  int n_procs;
  bool procs_truncated;           /* more than TM_MAX_PROCS processes were listed */
  struct tm_proc procs[TM_MAX_PROCS];
};

struct tm_config {
  const char *backend;            /* NULL or "auto", or one backend name */
  const char *const *urls;        /* --telemetry-url values (dcgm endpoints or the sim's base URL) */
  size_t n_urls;
  double interval_s;              /* sampler period; 0 → 1 s */
  pid_t server_pid;               /* root of the server's process tree, 0 = none */
  int timeout_ms;                 /* per backend call (subprocess, HTTP); 0 → 2000 */
  bool probe_all;                 /* also probe the backends after the chosen one (for reports) */
  /* Overrides, for tests and unusual installs (NULL = default). */
  const char *nvml_library;       /* default "libnvidia-ml.so.1", then "libnvidia-ml.so" */
  const char *nvidia_smi_path;    /* default "nvidia-smi" looked up in PATH */
  const char *amd_smi_path;       /* default "amd-smi" looked up in PATH */
};

/* A backend: one of these per file. open() probes and returns 0, or -1 with
 * err = the reason it is unavailable. sample() fills out's gpus and procs (out
 * is zeroed, backend set); it runs on the sampler thread only. */
struct tm_backend_ops {
  const char *name;
  int (*open)(const struct tm_config *cfg, void **state_out, struct st_err *err);
  int (*sample)(void *state, struct tm_snapshot *out, struct st_err *err);
  void (*close)(void *state);
};

/* What happened to each backend when a sampler was opened. */
enum tm_backend_state {
  TM_BACKEND_USED,
  TM_BACKEND_AVAILABLE,           /* probed fine, not chosen */
  TM_BACKEND_UNAVAILABLE,         /* reason says why */
  TM_BACKEND_NOT_PROBED,          /* auto stopped before it (probe_all false) */
};
struct tm_backend_status {
  const char *name;
  enum tm_backend_state state;
  char reason[TM_TEXT_LEN];
};

struct tm_sampler;

/* Names of the built-in backends, in auto order. */
size_t tm_backend_count(void);
const char *tm_backend_name(size_t i);

/* Opens the backend cfg->backend names, or with "auto" the first that works
 * (dcgm and sim only when a URL is given). Auto always succeeds (backend
 * "none" when nothing works, with every reason kept); a named backend that is
 * unavailable or unknown returns NULL with err set. cfg is copied (strings
 * and the URL array too). */
struct tm_sampler *tm_open(const struct tm_config *cfg, struct st_err *err);
/* Test hook: a sampler over one given backend (not in the built-in table). */
struct tm_sampler *tm_open_with_backend(const struct tm_backend_ops *ops,
                                        const struct tm_config *cfg, struct st_err *err);
/* Stops the thread (if started), closes the backend, frees. NULL is fine. */
void tm_close(struct tm_sampler *tm);

const char *tm_chosen_backend(const struct tm_sampler *tm);  /* "none" when none */
size_t tm_backend_report(const struct tm_sampler *tm, struct tm_backend_status *out,
                         size_t max);

/* Samples now on the calling thread and publishes the result (for one-shot
 * use; do not mix with tm_start). Returns 0, or -1 with err when the backend
 * failed (out then holds the previous values marked stale). */
int tm_sample_now(struct tm_sampler *tm, struct tm_snapshot *out, struct st_err *err);

/* Starts the sampler thread: one sample at once, then every interval. */
int tm_start(struct tm_sampler *tm, struct st_err *err);
/* Copies the latest published snapshot; returns false when none exists yet.
 * Sets stale when the newest successful sample is older than 3 intervals. */
bool tm_latest(struct tm_sampler *tm, struct tm_snapshot *out);
/* Changes the watched server process tree (thread-safe): the published
 * figures turn stale and a new sample is taken at once (a restarted server). */
void tm_set_server_pid(struct tm_sampler *tm, pid_t server_pid);

/* Stable JSON of one snapshot (null for unknown values); caller owns it. */
struct cJSON *tm_snapshot_to_json(const struct tm_snapshot *snap);
/* {"name","status","reason"} per backend; caller owns it. */
struct cJSON *tm_backend_report_to_json(const struct tm_backend_status *st, size_t n);

/* ---------------------------------------------------------------- series for run results
 * A per-second record of memory used per GPU and by the server's processes,
 * power and utilization. Appending the same snapshot twice (same seq) is a
 * no-op, so callers may append on their own timer. */
struct tm_series;
struct tm_series *tm_series_new(void);
void tm_series_append(struct tm_series *s, const struct tm_snapshot *snap);
size_t tm_series_len(const struct tm_series *s);
/* {"schema_version":1,"backend","simulated","gpus":[{index,name,uuid,mem_total_bytes}],
 *  "samples":[{"t_s","stale","gpus":[{index,mem_used_bytes,server_mem_bytes,power_w,util_pct}]}]}
 * with t_s relative to the first sample; caller owns it. */
struct cJSON *tm_series_to_json(const struct tm_series *s);
void tm_series_free(struct tm_series *s);

#endif
