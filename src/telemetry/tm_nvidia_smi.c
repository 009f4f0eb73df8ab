/* nvidia-smi backend: the CSV query interface, for machines where NVML cannot
 * be loaded into our process (containers with only the tool, odd installs).
 * Each query is a fork/exec with a deadline; results are cached for 1 s so
 * a faster sampler never runs the tool more than once a second. */
#include "telemetry/telemetry_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { NVSMI_MAX_FIELDS = 32, NVSMI_CACHE_NS = 1000000000 };

static const uint64_t MIB = 1024ull * 1024ull;

/* ---------------------------------------------------------------- CSV helpers */

/* The column name of a header cell, without " [unit]". */
static void header_name(const char *cell, char *name, size_t name_len) {
  tm_copy_str(name, name_len, cell);
  char *bracket = strchr(name, '[');
  if (bracket)
    *bracket = '\0';
  char *trimmed = str_trim(name);
  memmove(name, trimmed, strlen(trimmed) + 1);
}

/* Next line of text (in place); NULL at the end. Skips blank lines. */
static char *next_line(char **cursor, int *line_no) {
  while (**cursor) {
    char *line = *cursor;
    char *nl = strpbrk(line, "\r\n");
    if (nl) {
      *cursor = nl + 1 + (nl[0] == '\r' && nl[1] == '\n');
      *nl = '\0';
    } else {
      *cursor = line + strlen(line);
    }
    (*line_no)++;
    if (*str_trim(line))
      return line;
  }
  return NULL;
}

/* ---------------------------------------------------------------- --query-gpu */

enum gpu_col {
  COL_INDEX, COL_UUID, COL_NAME, COL_MEM_TOTAL, COL_MEM_USED, COL_MEM_RESERVED,
  COL_UTIL, COL_POWER, COL_POWER_LIMIT, COL_OTHER,
};

static int gpu_col_of(const char *name) {
  static const struct tm_csv_col map[] = {
      {"index", COL_INDEX},
      {"uuid", COL_UUID},
      {"name", COL_NAME},
      {"gpu_name", COL_NAME},
      {"memory.total", COL_MEM_TOTAL},
      {"memory.used", COL_MEM_USED},
      {"memory.reserved", COL_MEM_RESERVED},
      {"utilization.gpu", COL_UTIL},
      {"power.draw", COL_POWER},
      {"power.draw.average", COL_POWER},
      {"power.draw.instant", COL_POWER},
      {"power.limit", COL_POWER_LIMIT},
      {"enforced.power.limit", COL_POWER_LIMIT},
  };
  return tm_csv_col_of(map, ST_ARRAY_LEN(map), name, COL_OTHER);
}

/* Fills cols from a header line when the line is one ("index, ..."). */
static bool read_header(char *line, int (*col_of)(const char *), const char *first_name,
                        int *cols, size_t *n_cols) {
  char *fields[NVSMI_MAX_FIELDS];
  char copy[1024];
  tm_copy_str(copy, sizeof copy, line);
  size_t n = tm_split_csv(copy, fields, NVSMI_MAX_FIELDS);
  char name[64];
  header_name(fields[0], name, sizeof name);
  if (strcmp(name, first_name) != 0)
    return false;
  for (size_t i = 0; i < n; i++) {
    header_name(fields[i], name, sizeof name);
    cols[i] = col_of(name);
  }
  *n_cols = n;
  return true;
}

/* The first column name of a query, which a header line starts with. */
static void first_column(const char *query, char *name, size_t name_len) {
  tm_copy_str(name, name_len, query);
  name[strcspn(name, ",")] = '\0';
}

static void default_columns(const char *query, int (*col_of)(const char *), int *cols,
                            size_t *n_cols) {
  char copy[512];
  tm_copy_str(copy, sizeof copy, query);
  char *fields[NVSMI_MAX_FIELDS];
  *n_cols = tm_split_csv(copy, fields, NVSMI_MAX_FIELDS);
  for (size_t i = 0; i < *n_cols; i++)
    cols[i] = col_of(fields[i]);
}

/* A query's output, line by line: its columns are the query's until a header
 * line names them. */
struct csv_rows {
  char *copy, *cursor;
  int (*col_of)(const char *);
  char first[64];               /* the query's first column, which a header starts with */
  int cols[NVSMI_MAX_FIELDS];
  size_t n_cols;
  int line_no;
  char *fields[NVSMI_MAX_FIELDS]; /* the current row's cells (rows_next) */
  size_t n_fields;
};

static void rows_open(struct csv_rows *r, const char *text, const char *query,
                      int (*col_of)(const char *)) {
  r->copy = r->cursor = xstrdup(text);
  r->col_of = col_of;
  r->line_no = 0;
  first_column(query, r->first, sizeof r->first);
  default_columns(query, col_of, r->cols, &r->n_cols);
}

/* The next line that is neither blank nor a header, split into r->fields;
 * false at the end. */
static bool rows_next(struct csv_rows *r) {
  char *line;
  while ((line = next_line(&r->cursor, &r->line_no)) != NULL)
    if (!read_header(line, r->col_of, r->first, r->cols, &r->n_cols)) {
      r->n_fields = tm_split_csv(line, r->fields, NVSMI_MAX_FIELDS);
      return true;
    }
  return false;
}

static int set_gpu_field(struct tm_gpu *g, enum gpu_col col, const char *v, int line_no,
                         const char *col_name, struct st_err *err) {
  if (col == COL_OTHER || col == COL_INDEX)
    return 0;
  if (col == COL_UUID || col == COL_NAME) {
    if (!tm_csv_unknown(v))
      tm_copy_str(col == COL_UUID ? g->uuid : g->name, col == COL_UUID ? sizeof g->uuid : sizeof g->name, v);
    return 0;
  }
  if (tm_csv_unknown(v))
    return 0;
  double x;
  if (tm_csv_number(v, &x) < 0 || x < 0)
    return err_setf(err, "nvidia-smi --query-gpu line %d: field %s: '%s' is not a number", line_no,
                    col_name, v);
  switch (col) {
  case COL_MEM_TOTAL: g->mem_total_bytes = (uint64_t)llround(x) * MIB; g->valid |= TM_GPU_MEM_TOTAL; break;
  case COL_MEM_USED: g->mem_used_bytes = (uint64_t)llround(x) * MIB; g->valid |= TM_GPU_MEM_USED; break;
  case COL_MEM_RESERVED: g->mem_reserved_bytes = (uint64_t)llround(x) * MIB; g->valid |= TM_GPU_MEM_RESERVED; break;
  case COL_UTIL: g->util_pct = x; g->valid |= TM_GPU_UTIL; break;
  case COL_POWER: g->power_w = x; g->valid |= TM_GPU_POWER; break;
  case COL_POWER_LIMIT: g->power_limit_w = x; g->valid |= TM_GPU_POWER_LIMIT; break;
  default: break;
  }
  return 0;
}

static const char *gpu_col_label(enum gpu_col col) {
  static const char *const labels[] = {"index", "uuid", "name", "memory.total", "memory.used",
                                       "memory.reserved", "utilization.gpu", "power.draw",
                                       "power.limit", "other"};
  return labels[col];
}

int tm_nvsmi_parse_gpus(const char *text, const char *query, struct tm_snapshot *snap,
                        struct st_err *err) {
  struct csv_rows rows;
  rows_open(&rows, text, query, gpu_col_of);
  int rc = 0;
  while (rows_next(&rows)) {
    char **fields = rows.fields;
    size_t n = rows.n_fields;
    int index = -1;
    for (size_t i = 0; i < n && i < rows.n_cols; i++)
      if (rows.cols[i] == COL_INDEX && parse_int(fields[i], &index) < 0)
        index = -1;
    if (index < 0) {
      rc = err_setf(err, "nvidia-smi --query-gpu line %d: field index: not a GPU row: '%.80s'",
                    rows.line_no, fields[0]);
      break;
    }
    if (snap->n_gpus >= TM_MAX_GPUS)
      break;
    struct tm_gpu *g = &snap->gpus[snap->n_gpus];
    memset(g, 0, sizeof *g);
    g->index = index;
    /* Columns past the end of a short row stay unknown. */
    for (size_t i = 0; i < n && i < rows.n_cols && rc == 0; i++)
      rc = set_gpu_field(g, (enum gpu_col)rows.cols[i], fields[i], rows.line_no,
                         gpu_col_label((enum gpu_col)rows.cols[i]), err);
    if (rc < 0)
      break;
    snap->n_gpus++;
  }
  free(rows.copy);
  if (rc == 0 && snap->n_gpus == 0)
    rc = err_setf(err, "nvidia-smi --query-gpu: no GPU rows");
  return rc;
}

/* ---------------------------------------------------------------- --query-compute-apps */

enum app_col { APP_UUID, APP_PID, APP_NAME, APP_MEM, APP_OTHER };

static int app_col_of(const char *name) {
  /* nvidia-smi prints canonical names in the header (used_gpu_memory). */
  static const struct tm_csv_col map[] = {
      {"gpu_uuid", APP_UUID},   {"pid", APP_PID},         {"process_name", APP_NAME},
      {"name", APP_NAME},       {"used_memory", APP_MEM}, {"used_gpu_memory", APP_MEM},
  };
  return tm_csv_col_of(map, ST_ARRAY_LEN(map), name, APP_OTHER);
}

int tm_nvsmi_parse_apps(const char *text, const char *query, struct tm_snapshot *snap,
                        struct st_err *err) {
  struct csv_rows rows;
  rows_open(&rows, text, query, app_col_of);
  int rc = 0;
  snap->procs_listed = true;
  while (rows_next(&rows)) {
    char **fields = rows.fields;
    size_t n = rows.n_fields;
    if (strstr(fields[0], "No running processes found")) /* one cell: it has no comma */
      continue;
    /* A process name may itself hold commas: when the row is longer than
     * the columns, the extra cells belong to the name column. */
    size_t extra = n > rows.n_cols ? n - rows.n_cols : 0;
    const char *uuid = NULL, *mem = NULL;
    char name[TM_PROC_NAME_LEN] = "";
    long pid = -1;
    for (size_t c = 0, f = 0; c < rows.n_cols && f < n; c++, f++) {
      switch ((enum app_col)rows.cols[c]) {
      case APP_UUID: uuid = fields[f]; break;
      case APP_PID:
        if (parse_long(fields[f], &pid) < 0 || pid <= 0) {
          rc = err_setf(err, "nvidia-smi --query-compute-apps line %d: field pid: '%s' is not a pid",
                        rows.line_no, fields[f]);
        }
        break;
      case APP_NAME:
        tm_copy_str(name, sizeof name, fields[f]);
        for (; extra > 0; extra--) {
          size_t used = strlen(name);
          snprintf(name + used, sizeof name - used, ",%s", fields[++f]);
        }
        break;
      case APP_MEM: mem = fields[f]; break;
      default: break;
      }
    }
    if (rc < 0)
      break;
    if (pid <= 0) {
      rc = err_setf(err, "nvidia-smi --query-compute-apps line %d: field pid: missing",
                    rows.line_no);
      break;
    }
    struct tm_proc *p = tm_add_proc(snap);
    if (!p)
      break;
    p->pid = (pid_t)pid;
    p->gpu_index = uuid ? tm_gpu_by_uuid(snap, uuid) : -1;
    if (p->gpu_index >= 0)
      p->gpu_index = snap->gpus[p->gpu_index].index;
    char *slash = strrchr(name, '/');
    if (!tm_csv_unknown(name)) /* "[Not Found]" when the process is gone or hidden */
      tm_copy_str(p->name, sizeof p->name, slash ? slash + 1 : name);
    double mib;
    if (mem && !tm_csv_unknown(mem)) {
      if (tm_csv_number(mem, &mib) < 0 || mib < 0) {
        rc = err_setf(err, "nvidia-smi --query-compute-apps line %d: field used_memory: '%s' is not a number",
                      rows.line_no, mem);
        break;
      }
      p->mem_bytes = (uint64_t)llround(mib) * MIB;
      p->mem_valid = true;
    }
  }
  free(rows.copy);
  return rc;
}

/* ---------------------------------------------------------------- backend */

struct nvsmi_state {
  struct tm_source src;         /* where: "nvidia-smi" or the configured path */
  int64_t cached_at_ns;         /* 0 = nothing cached */
  struct tm_snapshot cached;
};

static int nvsmi_query(struct nvsmi_state *st, struct tm_snapshot *snap, struct st_err *err) {
  struct tm_source *src = &st->src;
  const char *gpu_argv[] = {src->where, "--query-gpu=" TM_NVSMI_GPU_QUERY,
                            "--format=csv,noheader,nounits", NULL};
  const char *apps_argv[] = {src->where, "--query-compute-apps=" TM_NVSMI_APPS_QUERY,
                             "--format=csv,noheader,nounits", NULL};
  if (tm_run_capture(gpu_argv, src->timeout_ms, &src->text, err) < 0 ||
      tm_nvsmi_parse_gpus(src->text.data, TM_NVSMI_GPU_QUERY, snap, err) < 0)
    return -1;
  if (tm_run_capture(apps_argv, src->timeout_ms, &src->text, err) < 0 ||
      tm_nvsmi_parse_apps(src->text.data, TM_NVSMI_APPS_QUERY, snap, err) < 0)
    return -1;
  return 0;
}

static int nvsmi_sample(void *state, struct tm_snapshot *out, struct st_err *err) {
  struct nvsmi_state *st = state;
  int64_t now = clock_mono_ns();
  if (st->cached_at_ns == 0 || now - st->cached_at_ns >= NVSMI_CACHE_NS) {
    memset(&st->cached, 0, sizeof st->cached);
    if (nvsmi_query(st, &st->cached, err) < 0) {
      st->cached_at_ns = 0;
      return -1;
    }
    st->cached_at_ns = now;
  }
  out->n_gpus = st->cached.n_gpus;
  memcpy(out->gpus, st->cached.gpus, sizeof out->gpus);
  out->n_procs = st->cached.n_procs;
  out->procs_listed = st->cached.procs_listed;
  out->procs_truncated = st->cached.procs_truncated;
  memcpy(out->procs, st->cached.procs, sizeof out->procs);
  return 0;
}

static int nvsmi_open(const struct tm_config *cfg, void **state_out, struct st_err *err) {
  char *tool = xstrdup(cfg->nvidia_smi_path ? cfg->nvidia_smi_path : "nvidia-smi");
  /* The probe is a real query; its result is the first cached sample. */
  return tm_source_open(sizeof(struct nvsmi_state), tool, cfg, nvsmi_sample, state_out, err);
}

const struct tm_backend_ops tm_nvidia_smi_ops = {
    .name = "nvidia-smi",
    .open = nvsmi_open,
    .sample = nvsmi_sample,
    .close = tm_source_close,
};
