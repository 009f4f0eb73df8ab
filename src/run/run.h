/* run: one measured run of a recipe — launch the server, wait until it is
 * ready, drive it with the load generator at one concurrency or over the
 * recipe's sweep, stop it — with live snapshots for the dashboard and the
 * headless status line, and a run folder on disk.
 *
 * Threads. run_start() returns at once; the run's own thread does the work
 * and publishes a struct snap_run at 10 Hz. Every other call may come from
 * any thread (the dashboard's UI thread, a signal-watching main loop).
 *
 * Run folder (<results dir>/<UTC time>-<recipe>[-<label>]/):
 *   manifest.json        what ran, how it ended, one entry per result saved (written again
 *                        after each, so a run ended any way lists what it saved), and
 *                        "configurations_measured" / "summary"
 *   recipe.json          the resolved recipe: server argv/env after --set
 *   server.log           the server's stdout + stderr
 *   result-conc<N>.json  one benchmark_serving-compatible result per segment: one
 *                        concurrency on one server configuration. A sweep point is one
 *                        segment unless +/- (run_set_concurrency) or a restart with a knob
 *                        (run_restart_with) ends it: its requests so far are saved as that
 *                        segment's result (end "conc_changed" / "restarted") and the next
 *                        segment K (2, 3, ...) of the point is result-conc<M>-seg<K>.json at
 *                        its own concurrency M. "-2", "-3" follow a name already taken (two
 *                        sweep points at one concurrency). Each result's servetop_run says
 *                        its segment, "configuration" ("conc 8 kv-cache=0.9") and overrides.
 */
#ifndef SERVETOP_RUN_RUN_H
#define SERVETOP_RUN_RUN_H

#include "engine/engine.h"
#include "launcher/launcher.h"
#include "recipe/recipe.h"
#include "results/results.h"
#include "snapshot/snapshot.h"
#include "tune/tune.h"
#include "util/util.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct run_config {
  const struct recipe *recipe;  /* borrowed; must outlive the run */
  const struct eng_ops *engine; /* what to launch (run_config_init: the sim); ignored with
                                   attach_url (told from what the server serves) */
  const char *attach_url;       /* non-NULL: measure the server already running at this
                                   http:// URL; nothing is launched, stopped or restarted */
  const char *results_dir;      /* base folder; NULL = XDG data dir /runs */
  const char *label;            /* folder suffix and result tag ("mtp", "off"); NULL = none */
  const char *servetop_exe;     /* for the sim engine; NULL = this binary (its path) */
  int conc;                     /* > 0: one point at this concurrency */
  bool sweep;                   /* every point of the recipe's sweep (server kept up) */
  char *const *overrides;       /* "KEY=VALUE" knob overrides (--set), applied in order */
  size_t n_overrides;
  char *const *extra_server_args; /* appended to the server command as given */
  size_t n_extra_server_args;
  int num_prompts;              /* > 0: requests per point; 0 = conc x recipe factor */
  int num_prompts_min;          /* > 0: at least this many requests per point (tune: a p99's
                                   interval needs ci_quantile_min_n(0.99), 368) */
  int num_warmups;              /* >= 0: warmup requests; < 0 = none */
  int isl, osl;                 /* > 0: override the recipe's input / output length
                                   (run_workload_len) */
  int chat_template;            /* 1 / 0: measure with / without the chat template; -1 (the
                                 * default): as the recipe's benchmark says */
  const char *gpus;             /* CUDA_VISIBLE_DEVICES for the server; NULL = all */
  int port;                     /* > 0: this port; 0 = a free one */
  int64_t ready_timeout_ms;     /* 0 = 1800 s (sim: 120 s) */
  double request_timeout_s;     /* per request; 0 = 6 h, as benchmark_serving.py */
  int num_workers;              /* load generator loops; 0 (LG_NUM_WORKERS_AUTO): by the load */
  int64_t stop_grace_ms;        /* 0 = 10 s */
  bool allow_mislabel;          /* a mislabelled run is not a failure */
  uint64_t seed;
  bool range_ratio_set;         /* range_ratio overrides the recipe's random range ratio */
  double range_ratio;
  bool points_on_demand;        /* no point of its own: run_measure_point asks for each (tune) */
  int server_conc;              /* > 0: the server command's $CONC is this whatever the point's
                                   concurrency (tune: one launch per configuration) */
};
void run_config_init(struct run_config *cfg);

enum run_status {
  RUN_STATUS_RUNNING = 0,
  RUN_STATUS_OK,                /* every point measured */
  RUN_STATUS_MISLABELLED,       /* measured, but the spec-decoding label is wrong */
  RUN_STATUS_SERVER_FAILED,     /* launch failure, not ready, or crash mid-run */
  RUN_STATUS_INTERRUPTED,       /* run_stop() before the end */
  RUN_STATUS_ERROR,             /* anything else (disk, recipe) */
};
const char *run_status_name(enum run_status status); /* "ok", "mislabelled"... */

struct run_outcome {
  enum run_status status;
  char dir[1024];               /* the run folder ("" if it could not be made) */
  char message[512];            /* one line: why it failed / what was wrong */
  int n_points_done;            /* results saved: segments with a result file */
  int n_configs_done;           /* the configurations they measured (run_files_summary) */
  int n_points;
  bool mislabelled;
  bool simulated;
  int64_t max_total_num_tokens; /* as the server reported it; -1 unknown */
};

/* The workload's input and output lengths: given (> 0), else the recipe's (> 0), else
 * benchmark_serving.py's random defaults (1024 in, 128 out). One rule for run, tune, attach
 * and the dashboard's forms. */
enum { RUN_DEFAULT_ISL = 1024, RUN_DEFAULT_OSL = 128 };
int run_workload_len(int given, int recipe_len, int fallback);

struct run; /* opaque */
struct run_session; /* opaque: see "session" below */

/* Starts the run's thread. Returns NULL with err set only when nothing could
 * start (bad config); everything later is reported by the outcome. */
struct run *run_start(const struct run_config *cfg, struct st_err *err);
/* The first point's server command built as run_start would build it, with
 * nothing started and no folder made: -1 with err (a model file that is not
 * there, a piece that does not resolve) for the caller to say before it starts
 * anything. 0 for attached runs. */
int run_check_server_cmd(const struct run_config *cfg, struct st_err *err);
/* Whether a knob's change moves servetop sim: recipe's command with the override set_a
 * ("KEY=VALUE"; NULL: the recipe as written) against set_b's must differ in a flag the sim
 * models (sim_flag_modelled). 0 when it does (or the commands are the same), or engine is not
 * the sim; 1 when it does not (err says which flag: the figures would differ by noise alone);
 * -1 when a command cannot be built (err). `tune` refuses such a knob, `run --set` warns. */
int run_sim_models_change(const struct recipe *recipe, const struct eng_ops *engine,
                          const char *set_a, const char *set_b, struct st_err *err);

/* Latest snapshot, copied only when newer than *last_seq (see snap_slot_read). */
bool run_snapshot(struct run *run, struct snap_run *out, uint64_t *last_seq);

/* Changes the concurrency now: the segment being measured ends (its requests
 * so far are saved as its result, at its own concurrency) and the point goes on
 * in a new segment at conc on the same server (no warmups; conc x the recipe's
 * factor requests, or --num-prompts). Returns 0, or -1 with err set when no
 * point is being measured. */
int run_set_concurrency(struct run *run, int conc, struct st_err *err);

/* Ends the segment being measured (saved as its own result, with the
 * configuration it had), stops the server, sets knob=value (as --set does),
 * starts it again and measures the point in a new segment from the start, at
 * the concurrency it has now. Returns 0 when the
 * request was queued, -1 with err when the run is over or the knob is bad
 * for the recipe's engine (eng_check_knob: checked before anything stops). */
int run_restart_with(struct run *run, const char *knob, const char *value, struct st_err *err);

/* Points on demand (run_config.points_on_demand; `servetop tune`): the run measures no point
 * of its own. Each run_measure_point measures one at concurrency conc on the run's server
 * (launched at the first; kept up while its command stays the same) and blocks until it
 * ends: 0 with *out (the saved result's figures, as the snapshot's point list holds them;
 * out->end says how it ended), or -1 with why (one line: the server did not start, with
 * its reason; it died; the run was stopped or is over). One caller at a time.
 * run_end_points: no more points; the run ends ok (its server stopped). */
int run_measure_point(struct run *run, int conc, const atomic_int *cancel,
                      struct snap_point_result *out, char *why, size_t why_len);
void run_end_points(struct run *run);

/* Asks the run to end: load stopped, partial results saved, server stopped.
 * Returns at once; async-signal-safe. */
void run_stop(struct run *run);

/* Waits up to timeout_ms (< 0: forever) for the run to end; true when over. */
bool run_wait(struct run *run, int64_t timeout_ms);

void run_get_outcome(struct run *run, struct run_outcome *out);

/* Stops (if needed), joins and frees. NULL is fine. */
void run_free(struct run *run);

/* ---------------------------------------------------------------- session
 * The session controller: everything one launch asks for — one run, a run on
 * an attached server, or the two arms of an A/B (a recipe and its MTP/off
 * twin) one after the other or at the same time (--ab-parallel) — started,
 * sequenced, watched, restarted with a knob and stopped here. The dashboard
 * (ui/tui.c) and the headless `servetop run` / `servetop attach` drive their
 * runs only through it.
 *
 * Threads: none of its own. Each arm is a run (its own thread, run_start);
 * run_session_poll() never blocks: it takes each arm's newest snapshot and,
 * when an arm has ended, starts the next one. The owner calls it (the
 * dashboard's UI thread at 10 Hz, the headless loop); run_session_stop() is
 * async-signal-safe and may come from a signal handler. Every other call
 * comes from the owner's thread.
 *
 * Sequencing: arm 0 first, then arm 1 (parallel: both at once). The next arm
 * starts when the one before has ended, however it ended, unless the session
 * was stopped or an arm could not start (run_start refused it). */
#define RUN_SESSION_MAX_ARMS 2

struct run_session_config {
  /* each arm's run, complete (recipe, engine, label, gpus...); what the
   * configs point at is borrowed and must outlive the session (an arm starts
   * later than run_session_start) */
  struct run_config arm[RUN_SESSION_MAX_ARMS];
  /* arm[i].engine NULL (and no attach_url): why that arm cannot run here (the
   * engine probe's line); it is not started and start_error says this */
  const char *engine_why[RUN_SESSION_MAX_ARMS];
  size_t n_arms;                 /* 1, or 2 for an A/B */
  bool parallel;                 /* the arms at the same time (each config its own GPUs) */
  /* Repeated, interleaved measurement (run --ab --repeats N): every arm is run repeats times,
   * the arms alternating (A B A B ..., each run all its points; parallel: both at once, N
   * times); each repeat its own run folder, labelled "<label>-r<k>". <= 1: once. */
  int repeats;
};
enum { RUN_SESSION_MAX_REPEATS = 20 };

enum run_arm_state {
  RUN_ARM_WAITING = 0,           /* not started: an arm before it runs */
  RUN_ARM_RUNNING,               /* started and not over (its server may still be loading) */
  RUN_ARM_ENDED,                 /* over: outcome says how */
  RUN_ARM_NOT_STARTED,           /* never will: start_error says why, or (empty) the session was
                                    stopped / an arm before it could not start */
};
const char *run_arm_state_name(enum run_arm_state state); /* "waiting", "running"... */

struct run_session_arm {
  enum run_arm_state state;
  const struct recipe *recipe;   /* borrowed (the config's) */
  int n_points;                  /* points it measures: its sweep's, else 1 */
  int points_done;               /* points with a saved result so far */
  bool started;                  /* outcome is valid: live while running (dir, status
                                    RUN_STATUS_RUNNING), final once ENDED */
  struct run_outcome outcome;
  bool have_snap;                /* run_session_snapshot has a picture of it */
  char start_error[512];            /* RUN_ARM_NOT_STARTED: why (empty: called off) */
  int repeat;                    /* the repeat it runs or ran last (0-based) */
  int repeats_done;              /* repeats ended (run_session_repeat_outcome has them) */
};

/* The session as a value (progress of the whole job for a screen). */
struct run_session_status {
  size_t n_arms;
  bool parallel;
  bool stop_requested;
  int current;                   /* the first arm running now; -1 when none */
  size_t n_running, n_ended;
  bool over;                     /* no arm runs and none will start */
  bool remaining_valid;          /* remaining_s is known */
  double remaining_s;            /* what is left of the whole job, every arm
                                    (run_arms_remaining_s over the arms' pictures) */
  struct run_session_arm arm[RUN_SESSION_MAX_ARMS];
};

/* Starts arm 0 (parallel: every arm) and returns at once. NULL with err only
 * for a config that names no arm or an arm without recipe; an arm that cannot
 * start is RUN_ARM_NOT_STARTED with its start_error. */
/* The arms of an A/B measure one workload, so that their ratios compare like with like
 * (run_like_check): where one arm's recipe benchmarks with the chat template and the other's
 * without (InferenceX's MTP recipes use it, their off twins do not), both arms use it, as
 * the speculative arm's acceptance is only honest with it. Arms whose chat_template the
 * caller set are kept. run_session_start calls it. */
void run_session_same_workload(struct run_session_config *cfg);
struct run_session *run_session_start(const struct run_session_config *cfg, struct st_err *err);
/* Takes each running arm's newest snapshot, notices arms that ended and
 * starts the next one. Never blocks; true when anything changed. */
bool run_session_poll(struct run_session *s);
/* Arm's newest picture as of the last poll (kept after it ended), copied only
 * when newer than *last_seq (NULL: always); false before its first. */
bool run_session_snapshot(const struct run_session *s, size_t arm, struct snap_run *out,
                          uint64_t *last_seq);
void run_session_status(const struct run_session *s, struct run_session_status *out);
/* The outcome of arm's repeat k (0-based, < repeats_done): false when it has not ended. */
bool run_session_repeat_outcome(const struct run_session *s, size_t arm, int k,
                                struct run_outcome *out);
/* The run folders of the repeats every arm finished with a result (status ok, a point saved),
 * in order: dirs[arm][k]; returns how many (the fewest of any arm: a round the other arm has not
 * finished yet, or one stopped or failed, and those after it, are left out). */
int run_session_repeat_dirs(const struct run_session *s,
                            char dirs[][RUN_SESSION_MAX_REPEATS][1024]);
/* run_set_concurrency / run_restart_with on arm's run (-1 with err when it has
 * not started, or as those calls say). */
int run_session_set_concurrency(struct run_session *s, size_t arm, int conc, struct st_err *err);
int run_session_restart_with(struct run_session *s, size_t arm, const char *knob,
                             const char *value, struct st_err *err);
/* run_sim_models_change of knob=value on arm's recipe and engine (against the recipe as
 * written): 1 with err when the sim stands in and does not model it (the restart goes on; its
 * figures will not move), else 0 (-1 when no command builds). */
int run_session_models_change(const struct run_session *s, size_t arm, const char *knob,
                              const char *value, struct st_err *err);
/* Every running arm stops (load stopped, partial results saved, server
 * stopped) and no other arm starts. Returns at once; async-signal-safe. */
void run_session_stop(struct run_session *s);
/* Polls until no arm runs and none will start (true), or timeout_ms passes
 * (false; < 0: no limit). */
bool run_session_wait(struct run_session *s, int64_t timeout_ms);
/* Stops what still runs, joins every arm (no server is left) and frees. NULL
 * is fine. */
void run_session_free(struct run_session *s);

/* What is left of n arms measured one after the other (parallel: at the same
 * time): a started arm by its picture (snap_run_remaining_s), an arm not
 * started (arms[i] NULL) as its n_points at the typical point length of the
 * others plus their server's start; skip[i] (NULL: none) leaves arm i out.
 * False when nothing is known yet. */
bool run_arms_remaining_s(const struct snap_run *const *arms, const int *n_points,
                          const bool *skip, size_t n, bool parallel, double *out_s);

/* ---------------------------------------------------------------- tune
 * `servetop tune` and the dashboard's Tune screen: the search of src/tune (tune_search) driven
 * on real launches. One launch per server configuration (restarted only when the configuration
 * changes), a measured point per concurrency the search asks for, each point's figures with
 * their 95% intervals (fig_get_ci), a configuration that fails to start recorded with the
 * server's reason. Its own thread; every call below may come from any thread.
 *
 * Tune folder (<results dir>/<UTC time>-tune-<recipe>/): tune.json (the space, the SLO, every
 * probe and configuration), one run folder per configuration with every probe's result JSON,
 * report.md, tune.png and tune.svg. */
struct run_tune_config {
  const struct recipe *recipe;   /* borrowed; the search starts at its setting */
  const struct recipe *twin;     /* its MTP/off twin (knob "spec"); NULL: none */
  const struct eng_ops *engine;  /* what to launch (NULL: run_pick_engine) */
  const char *results_dir;       /* NULL: XDG data dir /runs */
  const char *servetop_exe;      /* for the sim engine; NULL = this binary */
  struct tune_slo slo;
  const struct tune_knob *knobs; /* borrowed */
  size_t n_knobs;
  int conc_min, conc_max;        /* 0: 1 .. 1024 */
  double budget_s;               /* wall-clock budget (0: none): no point starts after it */
  int max_points;                /* 0: no limit */
  bool grid;                     /* the full grid instead of the search (tune_grid) */
  int num_prompts;               /* > 0: requests per point (at least run_tune_p99_min_prompts()
                                    with a p99 target); 0: the run's default (concurrency x
                                    10, at least RUN_TUNE_P99_MIN_PROMPTS with a p99 target) */
  int isl, osl;                  /* > 0: override the recipe's */
  double range_ratio;            /* >= 0: override; < 0: the recipe's */
  int chat_template;             /* 1 / 0 / -1: as the recipe's benchmark says */
  const char *gpus;
  uint64_t seed;
  char *const *extra_server_args; /* appended to every server command (run_config's) */
  size_t n_extra_server_args;
};
/* Requests per point by default where the SLO has a latency (p99) target: the exact
 * order-statistic interval of a p99 needs run_tune_p99_min_prompts() (368; docs/figures.md
 * "How sure"), and a few requests may fail. */
enum { RUN_TUNE_P99_MIN_PROMPTS = 400 };
/* The fewest requests a point needs for a p99's 95% interval: ci_quantile_min_n(0.99). */
int run_tune_p99_min_prompts(void);
/* -1 with err (naming --num-prompts, the minimum and why) when num_prompts (> 0: given) is
 * too few for a p99's interval and slo has a p99 target: that target could never hold. */
int run_tune_check_prompts(const struct tune_slo *slo, int num_prompts, struct st_err *err);
struct run_tune; /* opaque */

struct run_tune_status {
  char dir[1024];                /* the tune folder ("" until made) */
  bool over;                     /* the search ended (answer, budget, stop or error) */
  bool failed;                   /* ended by an error: message says why */
  enum tune_end end;             /* how it ended (once over and not failed) */
  char message[512];             /* one line: what it is doing now / how it ended */
  long config;                   /* configuration being measured (index into configs), -1 */
  int concurrency;               /* its point being measured, 0 when none */
  double elapsed_s, budget_s;    /* budget_s 0: none */
  bool eta_valid;
  double eta_s;                  /* left until the search ends (at most the budget left) */
  int n_gpus;                    /* the throughput is per GPU when > 0, else in all */
  char engine[32];               /* the engine launched ("sim", "sglang", "llama.cpp") */
  bool simulated;                /* servetop sim: a model's figures */
  unsigned long generation;      /* bumped whenever a probe or the state above changes (not
                                    elapsed_s): >= 1, so a zeroed status is always stale */
};

/* Starts the search; NULL with err for a bad config (a knob the engine does not take, an
 * empty SLO). */
struct run_tune *run_tune_start(const struct run_tune_config *cfg, struct st_err *err);
/* The search's space (knobs and the start) as the driver built it, for tune_config_describe. */
const struct tune_space *run_tune_space(const struct run_tune *t);
/* Copies the progress and (res non-NULL) the search so far (free res with tune_result_free). */
void run_tune_poll(struct run_tune *t, struct run_tune_status *st, struct tune_result *res);
/* As run_tune_poll, but copies the search so far into res (when non-NULL) only when the
 * generation is not `seen` (a status's generation): true then; false leaves res untouched.
 * The progress is always copied. */
bool run_tune_poll_changed(struct run_tune *t, unsigned long seen, struct run_tune_status *st,
                           struct tune_result *res);
/* Ends the search before its next point; what was measured is kept and reported.
 * Async-signal-safe. */
void run_tune_stop(struct run_tune *t);
bool run_tune_wait(struct run_tune *t, int64_t timeout_ms); /* true when over */
void run_tune_free(struct run_tune *t);
/* The answer, from a result (run_tune_poll's once over): the winner and the runner-up with
 * goodput and interval, and how it compares with the recipe as written (the start), as lines
 * (markdown: list items). */
void run_tune_answer(const struct run_tune *t, const struct tune_result *res, struct sbuf *sb,
                     bool markdown);
/* Every configuration visited with its status, best concurrency, goodput and interval, and
 * why (a markdown table, readable as text). */
void run_tune_config_table(const struct run_tune *t, const struct tune_result *res,
                           struct sbuf *sb);
/* One saved point as the search reads it: TTFT / TPOT / E2EL / ITL p99 and the tok/s per
 * user with their 95% intervals, the output throughput (per GPU when n_gpus > 0). A point
 * with failed requests, or cut before its end, never holds. */
void run_tune_point_from_figs(const struct snap_point_result *p, int n_gpus,
                              struct tune_point *out);

/* ---------------------------------------------------------------- helpers */
/* The engine to use for a recipe here: its own when its probe says it can run
 * (sglang: `python3 -c 'import sglang'` works and a GPU device exists; vllm:
 * `vllm` on PATH and a GPU), else the sim for engines the sim stands in for
 * (why gets a one-line reason), else NULL (why says how to get the engine).
 * Probes may take seconds: call it off the UI thread. */
const struct eng_ops *run_pick_engine(const struct recipe *recipe, char *why, size_t why_bytes);

/* "http://HOST[:PORT][/...]" -> host, port (80 when absent). -1 with err for
 * anything else (https is not read: the readiness and info probes are plain
 * HTTP). */
int run_parse_http_url(const char *url, char *host, size_t host_bytes, int *port,
                       struct st_err *err);

/* ---------------------------------------------------------------- attach
 * `servetop attach URL` and the dashboard's Attach: a server servetop did not
 * launch, measured with the same pipeline. Its recipe stands for the load only
 * (model, lengths, the concurrencies); the engine is told by what the server
 * serves. */
struct run_attach_load {
  const char *url;
  const char *model;            /* NULL: the server's first /v1/models id ("attached" until read) */
  int isl, osl;                 /* <= 0: RUN_DEFAULT_ISL / RUN_DEFAULT_OSL */
  const int *concs;             /* the points; NULL: one point at 1 */
  size_t n_concs;
  int num_prompts_factor;       /* requests per point = conc x factor; <= 0: 10 */
  bool chat;                    /* the chat endpoint (openai-chat), else completions */
};
/* A set holding the one recipe ("attach <host:port>") the run of an attached
 * server measures with; NULL with err on a bad URL. */
struct recipe_set *run_attach_recipes_alloc(const struct run_attach_load *load,
                                            struct st_err *err);
/* "1,4,16" -> concs (up to max), as `servetop attach --conc-list` and the
 * dashboard's attach form read it; -1 with err ("1,x: expected ...") when a
 * word is not a whole number >= 1, there are more than max, or none. */
int run_parse_conc_list(const char *text, int *concs, size_t max, size_t *n, struct st_err *err);

/* ---------------------------------------------------------------- knob overrides
 * "KEY=VALUE" as `--set`, the launch form and the run view's `m` take it:
 * KEY is a server flag without its dashes (the engine's spelling or alias)
 * or a generic knob (kv-cache, max-batch: eng_check_knob), mapped to the
 * recipe's engine's own flag when the command is built; on vLLM also a
 * dotted JSON key (compilation-config.level, speculative-config.x+), which
 * becomes --HEAD.PATH VALUE as typed, never merged into --HEAD's own value. */
/* Splits an assignment (leading dashes dropped: "--tp=8" is tp) into key
 * (key_n bytes) and *value (points into it; "" is a flag without value). -1
 * with err naming what is wrong: no '=', an empty key, a character that
 * cannot be in a flag name. */
int run_override_split(const char *assignment, char *key, size_t key_n, const char **value,
                       struct st_err *err);
/* Every assignment checked against the recipe before anything starts or
 * stops: the syntax, the value against the recipe's engine (a generic knob it
 * has no flag for, mem-fraction-static=2, np=0), and that the server command
 * of its first sweep point resolves with all of them applied. -1 with err
 * naming the assignment and what is wrong. */
int run_check_overrides(const struct recipe *recipe, char *const *assignments, size_t n,
                        struct st_err *err);
/* Benchmark settings typed where server flags are (the launch form): key
 * num-prompts (alias prompts), isl, osl or duration is one, never a server
 * flag. Returns 1 with *value_out set (num-prompts, isl, osl: a whole number
 * >= 1, as `servetop run --num-prompts/--isl/--osl` take it; *which gets
 * 'n', 'i' or 'o'), 0 when key is no benchmark setting, -1 with err naming
 * it (a bad value; duration, which servetop run measures by requests). */
int run_bench_setting(const char *key, const char *value, char *which, int *value_out,
                      struct st_err *err);

/* The mislabel rule: true when the recipe's label and what the server reports
 * disagree (label mtp/draft_model but no speculative decoding, or label none
 * but speculative decoding on). server_spec_known = false never mislabels. */
bool run_spec_mislabelled(enum recipe_spec label, bool server_spec_known, bool server_spec_on);

/* ---------------------------------------------------------------- compare
 * `servetop compare A B`: each side is one result JSON, or a run folder
 * (manifest.json: each configuration once, by its segment measured to the end,
 * else its last one cut). Points pair by concurrency and configuration (the
 * same knobs first; a single result on each side pairs regardless). */
struct run_compare_side {
  char *path;
  char *name;                   /* recipe (run folder / servetop_run) or file name */
  char *spec_label;             /* "mtp", "none", ... or NULL when unknown */
  int n_gpus;                   /* tp of the recipe point (recipe.json); 0 = unknown or CPU */
  bool on_cpu;                  /* recipe.json's runner is "cpu": no GPU */
  struct results_file *results; /* sorted by max_concurrency */
  size_t n_results;
  char *gpu_type;               /* recipe.json's runner ("h200", "cpu"); NULL unknown */
  /* Repeats (run --ab --repeats N): the same arm measured again, interleaved with the other
   * arm; each a side of its own (n_more, none of their own more). With repeats on both sides
   * a ratio's interval comes from the spread of the repeats' ratios, else from each result's
   * own intervals (docs/figures.md, "How sure"). */
  struct run_compare_side *more;
  size_t n_more;
};
int run_compare_side_load(const char *path, struct run_compare_side *out, struct st_err *err);
/* Loads path (a run folder or result) as side's next repeat. */
int run_compare_side_add_repeat(struct run_compare_side *side, const char *path,
                                struct st_err *err);
/* One arm's repeats as one side: paths[0] loaded, paths[1..n) its repeats (n >= 1). On error
 * (err names the folder) out is still to be finished with run_compare_side_fini. */
int run_compare_side_load_repeats(const char *const *paths, size_t n,
                                  struct run_compare_side *out, struct st_err *err);
void run_compare_side_fini(struct run_compare_side *side);
/* One figure of B against A at one configuration each: ra, a result of side a (b: rb), paired
 * (a concurrency, the knobs); in each repeat the result of the same configuration. A's and B's
 * values (the means over the repeats where both sides have them) and the ratio B / A with its
 * 95% interval and verdict (ci_ratio_of_repeats over the repeats, else ci_ratio_of_intervals);
 * a per-chunk figure of unlike chunks (fig_chunks_unlike: speculative decoding on one side, or
 * other tokens per chunk) keeps its ratio with the verdict CI_NOT_COMPARABLE.
 * False when neither ra nor rb has the figure. */
struct run_compare_value {
  bool has_a, has_b;
  double a, b;
  struct ci_ratio ratio;         /* ratio.ratio NaN when either is unknown or A is 0 */
};
bool run_compare_figure(const struct run_compare_side *a, const struct results_file *ra,
                        const struct run_compare_side *b, const struct results_file *rb,
                        enum fig_id id, enum fig_stat stat, struct run_compare_value *out);
/* A speculative-decoding label (run_compare_side.spec_label): 1 on ("mtp", "draft_model"...),
 * 0 off ("none"), -1 not known (NULL), as fig_chunks_unlike takes it. */
int run_spec_label_on(const char *label);
/* The side-by-side table: every headline metric with delta (B - A) and ratio
 * (B / A) to 4 significant digits with its 95% interval and verdict (faster, slower, no
 * difference detected), acceptance, and per concurrency the
 * speculative-decoding speedup (MTP, or a draft model), naming each side's
 * method, in throughput per GPU and in interactivity (tok/s/user = 1000 /
 * median TPOT). */
void run_compare_print(FILE *out, const struct run_compare_side *a, const struct run_compare_side *b);
/* Whether A and B may be divided (run_like_check on every pair of results at one concurrency;
 * none at one concurrency is a difference): the number of differences, why in words. */
size_t run_compare_unlike(const struct run_compare_side *a, const struct run_compare_side *b,
                          char *why, size_t why_bytes);
/* The same as JSON (heap string): "like", "unlike" (why, or null), "simulated" (either side),
 * and per side "simulated" (true, false, null: unknown or mixed). */
char *run_compare_json_alloc(const struct run_compare_side *a, const struct run_compare_side *b);

/* ---------------------------------------------------------------- a sweep's end
 * What a run of a sweep leaves besides its results (docs/charts.md): sweep.md (the table of
 * points: conc, req/s, output tok/s and per GPU, tok/s per user, TTFT and TPOT p50/p99, with
 * their 95% intervals where the results have them) and the chart, sweep.png and sweep.svg
 * (output throughput per GPU against tok/s per user, each point labelled with its
 * concurrency), from the results its manifest lists. The run thread writes them when a
 * sweep ends (RUN_SWEEP_CHART in its folder; stopped ones too, with what was measured).
 * -1 with err naming the folder or the file that could not be read or written. */
#define RUN_SWEEP_CHART "sweep.png"
int run_sweep_report(const char *run_dir, struct st_err *err);
/* The same table of points as text (markdown, aligned) appended to out. */
int run_sweep_table(const char *run_dir, struct sbuf *out, struct st_err *err);

/* ---------------------------------------------------------------- like with like
 * The one decision whether two measurements may be divided (run/like.c), used by
 * `servetop compare`, the headless `run --ab` summary and the A/B view: the same model,
 * engine, GPU type and count, isl / osl / range ratio, chat template, overrides (--set),
 * simulated or real, result schema, and concurrency. A fact unknown on both sides agrees;
 * one known on one side only is compared only for "simulated or real" (provenance must be
 * known); otherwise it is skipped. */
struct run_like_facts {
  char model[160];               /* the result's model_id; "" unknown */
  char engine[32];               /* "sim", "sglang", "llama.cpp"...; "" unknown */
  char gpu_type[32];             /* the recipe's runner ("h200", "cpu"); "" unknown */
  int n_gpus;                    /* tp of the recipe; -1 unknown */
  int isl, osl;                  /* the measured workload; -1 unknown */
  double range_ratio;            /* NaN unknown */
  char chat[96];                 /* "completions" / "chat", and the template's length and hash */
  char overrides[512];           /* --set items, comma-joined ("" none) */
  bool overrides_known;
  int simulated;                 /* 1 simulated (servetop sim), 0 real, -1 unknown */
  int schema_version;            /* servetop.schema_version; 0 = no servetop section */
  int concurrency;               /* max_concurrency; -1 unknown */
};
/* Everything unknown. */
void run_like_facts_init(struct run_like_facts *f);
/* The facts of one result (its JSON: servetop, servetop_run) of side (its recipe.json:
 * GPU type and count; side may be NULL). */
void run_like_facts_from_result(const struct run_compare_side *side, const struct results_file *rf,
                                struct run_like_facts *out);
/* The number of facts that differ; why gets them in words, "; "-separated:
 * "model differs (A: x, B: y); concurrency differs (A: 8, B: 64)" ("" when alike). */
size_t run_like_check(const struct run_like_facts *a, const struct run_like_facts *b, char *why,
                      size_t why_bytes);
/* "SIMULATED" provenance of a result: 1 simulated, 0 real, -1 unknown. */
int run_result_simulated(const struct results_file *rf);
/* Whether a saved result is too short for its intervals (ci_point_short over its completed
 * requests, duration and concurrency); why gets the reason. */
bool run_result_short(const struct results_file *rf, char *why, size_t why_len);

/* ---------------------------------------------------------------- export
 * `servetop export RUN --inferencex`: the run's tuned knobs as an InferenceX
 * master-config entry (YAML) and a launch-script fragment (bash), from the run
 * folder's recipe.json and manifest.json. Both heap strings. Only what was
 * measured: conc-list holds the points measured to the end with the knobs the
 * run ended with (a segment before a restart had others), and flags that
 * follow the concurrency are written as the recipe writes them ($CONC).
 * Returns 0; -1 with err when the folder cannot be read; 1 with err (the
 * reason) when the run is refused: failed, mislabelled, or no point measured
 * to the end (an interrupted run exports the points it finished). */
int run_export_inferencex(const char *run_dir, char **master_yaml_out, char **script_out,
                          struct st_err *err);
/* The same; a SIMULATED run (servetop sim) is refused (1) unless allow_simulated, and then
 * marked SIMULATED in both. The entry's isl / osl are the ones measured (recipe.json's
 * measured_isl / measured_osl). */
int run_export_inferencex_opts(const char *run_dir, bool allow_simulated, char **master_yaml_out,
                               char **script_out, struct st_err *err);

/* A tune folder (tune.json in it)? */
bool run_is_tune_dir(const char *dir);
/* `servetop export TUNE_DIR`: the tune's winner as a servetop recipe (YAML), an InferenceX
 * master-config entry (conc-list: its best concurrency) and a launch-script fragment (its
 * server command as launched). Heap strings. 0; 1 with err when refused (no winner, its run
 * refused as run_export_inferencex_opts refuses, SIMULATED without allow_simulated); -1 when
 * the folder cannot be read. */
int run_export_tune(const char *tune_dir, bool allow_simulated, char **recipe_yaml_out,
                    char **master_yaml_out, char **script_out, struct st_err *err);

/* ---------------------------------------------------------------- past runs
 * The run folders that `servetop run` and the dashboard leave under a results
 * directory, as their manifest.json describes them. */
struct run_summary {
  char *dir;             /* full path of the run folder */
  char *folder;          /* its last component ("20261201-044210-qwen3.5-...-mtp") */
  char *recipe;          /* "" when the manifest has none */
  char *label;           /* --label / "off" / "mtp" / "ab"; "" when none */
  char *spec_label;      /* "mtp", "none", ...; "" when unknown */
  char *status;          /* "ok", "interrupted", ...; "" when unknown */
  double started_unix_s; /* 0 when unknown */
  int n_points;          /* result files listed in the manifest */
  int n_configs;         /* the configurations they measured (a result each before segments) */
  char *summary;         /* "3 configurations measured: conc 4, conc 8, ..." ("" unknown) */
  int simulated;         /* the manifest's server.simulated: 1 servetop sim, 0 real, -1 unknown */
};

struct run_summary_list {
  struct run_summary *runs;
  size_t n;
};

/* The default results directory, <XDG data dir>/servetop/runs (heap string). */
char *run_default_results_dir_alloc(void);
/* Lists the run folders directly under dir (those with a readable
 * manifest.json; others are skipped), newest first. A missing dir is an
 * empty list; -1 with err only when dir exists but cannot be read. */
int run_list_past(const char *dir, struct run_summary_list *out, struct st_err *err);
void run_summary_list_free(struct run_summary_list *list);
/* What `compare` and `export` were given, as a path: arg itself when it names
 * a file or folder, else (a name without '/', as the past-runs list and the
 * headless output show it: "20261205-101500-tiny-llamacpp-cpu-off") that run
 * folder under results_dir (NULL: the default), with or without its
 * "result-concN.json" under it. NULL with err naming where it looked. */
char *run_resolve_path_alloc(const char *arg, const char *results_dir, struct st_err *err);

#endif
