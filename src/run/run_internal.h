/* run: state shared by the run module's files (not a public header). */
#ifndef SERVETOP_RUN_RUN_INTERNAL_H
#define SERVETOP_RUN_RUN_INTERNAL_H

#include "run/run.h"

#include "engine/engine.h"
#include "launcher/launcher.h"
#include "loadgen/loadgen.h"
#include "measure/measure.h"
#include "metrics/metrics.h"
#include "recipe/recipe.h"
#include "snapshot/snapshot.h"
#include "telemetry/telemetry.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>

struct cJSON;

enum { RUN_CONFIG_LABEL_BYTES = SNAP_CONFIG_LABEL_BYTES }; /* what a point's result shows */

/* What the server said about itself after it became ready. */
struct run_server_info {
  bool info_valid;                /* the engine's server info answered */
  bool spec_known;                /* it says whether speculative decoding is on */
  char spec_algorithm[32];        /* "" = none */
  int64_t max_total_num_tokens;   /* KV capacity in tokens, -1 unknown */
  int64_t kv_per_slot_tokens;     /* KV one request can hold, -1 unknown */
  int batch_cap;                  /* requests decoded at once, -1 unknown */
  char model_id[256];             /* /v1/models data[0].id, "" unknown */
  bool simulated;                 /* the server says it is servetop sim */
};

/* How a point's load ended. */
/* POINT_REQUESTS_FAILED: measured and saved, but more than 5% of the
 * requests failed (the reference's rule, as `servetop bench`). */
enum point_end {
  POINT_DONE,
  POINT_STOPPED,
  POINT_SERVER_DIED,
  POINT_RESTART,
  POINT_FAILED,
  POINT_REQUESTS_FAILED,
  POINT_CONC_CHANGED              /* run_set_concurrency ended the segment ("conc_changed") */
};
const char *run_point_end_name(enum point_end end);

/* One result file written, as recorded in the manifest: one segment of a sweep point,
 * measured at one concurrency on one server configuration. */
struct run_point_record {
  int point_index;
  int segment;                    /* 1 = the point's first; +1 at each +/- or restart */
  int conc;                       /* the segment's concurrency (its max_concurrency) */
  char result_file[64];
  enum point_end end;
  char config[RUN_CONFIG_LABEL_BYTES]; /* "conc 8 kv-cache=0.9" (run_files_config_label) */
  char **overrides;               /* the run's overrides while it was measured (owned) */
  size_t n_overrides;
};

/* What run_files_write_point adds to the results module's JSON. */
struct run_point_extras {
  int point_index;
  int segment;                    /* 1-based within the point (file name, servetop_run) */
  int conc;
  enum point_end end;
  const double *mark_s;           /* concurrency changes during the point */
  const int *mark_conc;
  int n_marks;
  const struct sig_summary *signals;
  const struct tm_series *gpu_series; /* NULL: no telemetry */
};

struct run {
  struct run_config cfg;          /* strings and arrays below are owned copies */
  char **overrides_owned;
  char **extra_args_owned;
  size_t n_overrides_start;       /* the --set ones; those after are restarts' knobs */

  pthread_t thread;
  bool thread_started;
  struct snap_slot *slot;

  pthread_mutex_t lock;           /* guards everything below up to the run-thread-only part */
  pthread_cond_t done_cond;
  bool done;
  struct run_outcome outcome;
  int pending_conc;               /* > 0: apply on the next tick */
  char *pending_knob;             /* run_restart_with: applied by the run thread */
  char *pending_value;
  bool pending_restart;
  struct eng_log_state log_state; /* folded server log lines (launcher's reader thread) */
  bool measuring;
  bool between_segments;          /* a +/- or restart ended a segment; the next one is not
                                     measuring yet: both are taken for it (pending_*) */
  /* points on demand (run_measure_point): the one asked for, and its answer */
  pthread_cond_t demand_cond;     /* a point asked for, or no more */
  int demand_conc;                /* > 0: measure this next */
  bool demand_end;                /* run_end_points */
  bool demand_ready;              /* the point asked for ended: demand_* below say how */
  bool demand_measured;
  struct snap_point_result demand_result;

  atomic_int stop_requested;     /* lock-free: set from signal handlers and other threads */
  atomic_int cancel_measure;     /* the same, as measure's hooks watch it */

  /* run thread only */
  struct launcher *launcher;
  uint64_t log_write_failures;  /* of the launchers freed so far (run_server_free) */
  int n_file_failures;          /* files of the run folder written elsewhere (rescued) */
  int log_write_errno;
  struct sig_scraper *scraper;    /* the point's /metrics scraper while its load runs (measure's) */
  bool point_accept_final;        /* snap.spec holds the saved result's acceptance */
  bool last_wave_eta_valid;       /* the ETA once every request left is in flight: it */
  double last_wave_eta_s, last_wave_elapsed_s; /* only counts down from there */
  struct tm_sampler *telemetry;
  struct tm_snapshot *tm_snap;    /* reused buffer for tm_latest (about 19 KB) */
  struct tm_series *gpu_series;   /* per-second GPU samples of the point being measured */
  struct recipe_cmd rcmd;         /* server command of the current point, overrides applied */
  bool rcmd_valid;
  char *server_cmd_line;          /* formatted launch command of the running server */
  struct run_server_info server;
  int64_t kv_capacity_was;        /* the previous server's KV capacity, -1 none (restarts) */
  int64_t kv_capacity_running;    /* the KV capacity of the last server that became ready */
  bool restart_pending_check;     /* the last override is a restart's, its server not up yet */
  struct snap_run snap;
  struct run_point_record *points; /* one per result file written */
  size_t n_points_done;
  int segment;                    /* of the sweep point being measured: 1, 2, ... */
  int port;
  char host[128];                 /* where the server listens: 127.0.0.1, or the attached URL's */
  double started_unix_s;
  char dir[1024];
};

/* run.c: fills the server part of the snapshot and publishes it (run thread). */
void run_publish(struct run *run);
/* "http://host:port" of the server. */
void run_base_url(const struct run *run, char *buf, size_t n);

/* run_server.c */
/* Resolves the recipe's command for point (overrides applied) into cmd. */
int run_server_prepare(struct run *run, const struct recipe_point *point, struct launch_cmd *cmd,
                       struct st_err *err);
/* The first point's server command of cfg (overrides applied) into cmd, as run_start would
 * launch it, with nothing started (run_check_server_cmd keeps only whether it builds). */
int run_server_cmd_build(const struct run_config *cfg, struct launch_cmd *cmd,
                         struct st_err *err);
/* Launches cmd and waits until the server is ready; then reads its info. */
int run_server_start(struct run *run, const struct launch_cmd *cmd, struct st_err *err);
void run_server_stop(struct run *run);
void run_server_free(struct run *run);
void run_server_query_info(struct run *run);
/* Nothing known of a server (before one starts): every figure unknown. */
void run_server_info_reset(struct run_server_info *info);
void run_server_on_log_line(void *ctx, const char *line, int64_t mono_ns);
/* The batch cap of the running server: what it says (server info), its log,
 * else what its command line sets (the engine's flag); -1 unknown. */
int run_batch_cap(const struct run *run, const struct eng_log_state *ls);

/* run_files.c */
/* <results_dir (NULL: the default)>/<UTC time>-<name>[-<suffix>][-N]/, made new (never an
 * existing entry); its path into dir_out. */
int run_files_mkdir_stamped(const char *results_dir, const char *name, const char *suffix,
                            char *dir_out, size_t dir_bytes, struct st_err *err);
int run_files_make_dir(struct run *run, struct st_err *err);
/* recipe.json: the recipe and the resolved server command about to run. */
int run_files_write_recipe(struct run *run, const struct launch_cmd *cmd,
                           const struct recipe_point *point, struct st_err *err);
int run_files_write_manifest(struct run *run, struct st_err *err);
/* result-conc<N>[-seg<K>][-k].json (run.h's folder comment): the measured segment's JSON
 * (results module) + a "servetop_run" object; the snapshot's history gets the segment's
 * figures from res itself (the same numbers the JSON holds: it is never read back); the
 * manifest is written again, so that it lists every result saved whenever the run ends. */
int run_files_write_point(struct run *run, const struct measure_result *res,
                          const struct run_point_extras *extras, struct st_err *err);
/* A segment's configuration in words, as summaries, the manifest and servetop_run say it:
 * "conc 8", then the sweep point's tp / ep where the sweep varies them, then the knobs the
 * run's restarts added (each key once, its last value): "conc 8 kv-cache=0.9". */
void run_files_config_label(const struct run *run, int point_index, int conc, char *out,
                            size_t out_bytes);
/* What the saved results measured, in configurations (results with one label count once):
 * "3 configurations measured: conc 4, conc 8, conc 8 kv-cache=0.9", "1 configuration
 * measured (2 results): conc 4", or "nothing measured yet". Returns the count. */
int run_files_summary(struct run *run, char *out, size_t out_bytes);
/* Frees the records' owned parts. */
void run_files_free_records(struct run *run);

#endif
