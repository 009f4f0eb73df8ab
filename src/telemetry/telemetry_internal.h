/* telemetry internals shared by the backends, the registry and the tests. */
#ifndef SERVETOP_TELEMETRY_TELEMETRY_INTERNAL_H
#define SERVETOP_TELEMETRY_TELEMETRY_INTERNAL_H

#include "telemetry/telemetry.h"

/* The built-in backends (one per tm_<name>.c). */
extern const struct tm_backend_ops tm_nvml_ops;
extern const struct tm_backend_ops tm_nvidia_smi_ops;
extern const struct tm_backend_ops tm_amd_smi_ops;
extern const struct tm_backend_ops tm_dcgm_ops;
extern const struct tm_backend_ops tm_sim_ops;

enum { TM_DEFAULT_TIMEOUT_MS = 2000 };

/* ---------------------------------------------------------------- subprocess
 * Runs argv (argv[0] looked up in PATH, no shell) with stdin and stderr on
 * /dev/null, collecting stdout into out (reset first). The child is killed
 * (SIGKILL) and reaped when timeout_ms passes. Returns 0 when it exited with
 * status 0; -1 with err naming the program and why (not found, timed out,
 * exit status with the first output line). */
int tm_run_capture(const char *const *argv, int timeout_ms, struct sbuf *out, struct st_err *err);

/* ---------------------------------------------------------------- HTTP
 * GET url through the HTTP helper (connect and total timeout timeout_ms, its body
 * cap and proxy policy); body into out
 * (reset first). Non-2xx statuses are errors. */
int tm_http_get(const char *url, int timeout_ms, struct sbuf *out, struct st_err *err);

/* ---------------------------------------------------------------- process tree
 * All pids whose ancestry (through /proc/<pid>/stat ppid) reaches root,
 * root included, sorted ascending; heap array in *pids_out (caller frees).
 * Returns the count (0 when root does not exist). proc_root is "/proc" outside
 * tests. */
size_t tm_proc_tree(const char *proc_root, pid_t root, pid_t **pids_out);
/* Marks procs in the tree and sums server/other memory per GPU. */
void tm_attribute_server_memory(struct tm_snapshot *snap, const pid_t *tree, size_t n_tree);
/* The short command name of pid from /proc/<pid>/comm into name ("" if gone). */
void tm_proc_comm(pid_t pid, char *name, size_t name_len);

/* ---------------------------------------------------------------- small shared helpers */
/* Copies src into a fixed buffer, truncating, always NUL-terminated. */
void tm_copy_str(char *dst, size_t dst_len, const char *src);
/* Index of the GPU with this uuid in snap, or -1. */
int tm_gpu_by_uuid(const struct tm_snapshot *snap, const char *uuid);
/* Adds a process row; false (and procs_truncated set) when full. */
struct tm_proc *tm_add_proc(struct tm_snapshot *snap);
/* A backend's per-call timeout: cfg's, else TM_DEFAULT_TIMEOUT_MS. */
int tm_timeout_ms(const struct tm_config *cfg);
/* The end of a backend's open: one real sample as the probe. When it works,
 * *state_out = state and 0; else close(state) and -1 with err saying why. */
int tm_open_probed(void *state, int (*sample)(void *, struct tm_snapshot *, struct st_err *),
                   void (*close)(void *), void **state_out, struct st_err *err);

/* ---------------------------------------------------------------- fetching backends
 * What a backend that reads text each sample (a program's stdout: nvidia-smi,
 * amd-smi; a URL's body: sim, dcgm) keeps. Its state struct starts with this. */
struct tm_source {
  char *where;                  /* the program or the URL (owned; NULL for dcgm's list) */
  int timeout_ms;               /* tm_timeout_ms(cfg) */
  struct sbuf text;             /* the latest output */
  /* tm_source_sample's: the program's arguments (NULL: where is a URL to GET),
   * and the parser of the text */
  const char *const *args;
  int (*parse)(const char *text, struct tm_snapshot *snap, struct st_err *err);
};
enum { TM_SOURCE_MAX_ARGS = 15 };
/* A zeroed state of state_bytes (at least sizeof struct tm_source) whose
 * tm_source takes where (owned) and cfg's timeout. */
void *tm_source_new(size_t state_bytes, char *where, const struct tm_config *cfg);
/* Frees a state from tm_source_new with nothing else to free (NULL is fine). */
void tm_source_close(void *state);
/* The whole open of such a backend: tm_source_new, then tm_open_probed with
 * sample and tm_source_close. */
int tm_source_open(size_t state_bytes, char *where, const struct tm_config *cfg,
                   int (*sample)(void *, struct tm_snapshot *, struct st_err *), void **state_out,
                   struct st_err *err);
/* The sample of a backend that only reads one text and parses it: runs the
 * program where with args (at most TM_SOURCE_MAX_ARGS), or GETs the URL where
 * when args is NULL, then parse. */
int tm_source_sample(void *state, struct tm_snapshot *out, struct st_err *err);
/* The whole open of such a backend (where owned): its state, then the probe
 * with tm_source_sample and tm_source_close. */
int tm_source_open_parsed(char *where, const char *const *args,
                          int (*parse)(const char *, struct tm_snapshot *, struct st_err *),
                          const struct tm_config *cfg, void **state_out, struct st_err *err);

/* ---------------------------------------------------------------- CSV cells (the *-smi tools)
 * Splits line at commas in place into at most max_fields trimmed fields;
 * returns the count. */
size_t tm_split_csv(char *line, char **fields, size_t max_fields);
/* A header's column name and the column it is (aliases: several names, one col). */
struct tm_csv_col {
  const char *name;
  int col;
};
/* The col of name in map[0..n), else other. */
int tm_csv_col_of(const struct tm_csv_col *map, size_t n, const char *name, int other);
/* "[N/A]", "[Not Supported]", "[Insufficient Permissions]", "N/A", "": no value. */
bool tm_csv_unknown(const char *cell);
/* A finite number, optionally followed by one unit word ("350.5 W"): 0, else -1. */
int tm_csv_number(const char *cell, double *out);

/* ---------------------------------------------------------------- parsers (pure, tested on captured output)
 * Each fills snap's gpus / procs from a tool's text output and returns 0, or
 * -1 with err naming the line and field that could not be read. Unknown
 * values ([N/A], [Not Supported], N/A, missing columns) leave the validity
 * bit clear. */

/* nvidia-smi --query-gpu=<query> --format=csv[,noheader][,nounits].
 * With a header line the columns are taken from it (units in brackets are
 * allowed: "memory.used [MiB]"); without one they are the query's, in order.
 * Columns servetop does not use are ignored; an "index" column is required. */
#define TM_NVSMI_GPU_QUERY                                                                     \
  "index,uuid,name,memory.total,memory.used,memory.reserved,utilization.gpu,power.draw,"       \
  "power.limit"
int tm_nvsmi_parse_gpus(const char *text, const char *query, struct tm_snapshot *snap,
                        struct st_err *err);
/* nvidia-smi --query-compute-apps=<query> --format=csv[,noheader][,nounits];
 * GPUs are matched by uuid against snap's gpus (parse the GPUs first). */
#define TM_NVSMI_APPS_QUERY "gpu_uuid,pid,process_name,used_memory"
int tm_nvsmi_parse_apps(const char *text, const char *query, struct tm_snapshot *snap,
                        struct st_err *err);

/* amd-smi metric ... --csv: a header line starting with "gpu," then one row per
 * GPU; preamble lines and repeated headers (watch mode) are skipped. Columns
 * by name: total_vram / used_vram (MB = MiB), socket_power (W; also
 * current_socket_power / average_socket_power), gfx_activity (%). */
int tm_amdsmi_parse(const char *text, struct tm_snapshot *snap, struct st_err *err);

/* dcgm-exporter /metrics text: one GPU per (Hostname, gpu) label pair,
 * appended after the GPUs already in snap (several endpoints). MIG instance
 * series (GPU_I_ID label) are skipped. */
int tm_dcgm_parse(const char *text, size_t len, struct tm_snapshot *snap, struct st_err *err);

/* servetop sim's GET /sim/gpu_memory JSON. */
int tm_sim_parse(const char *json, struct tm_snapshot *snap, struct st_err *err);

#endif
