/* engine: everything servetop knows about the inference servers it drives,
 * one descriptor per engine (eng_<name>.c) in one table (engine.c), in the
 * shape of the telemetry backends' ops table.
 *
 * A descriptor says how a launch of the engine is recognised in a script's
 * words (the recipe reader), which flags mean what (aliases and the generic
 * knobs: one name for "KV cache size" or "batch cap" on every engine), how its
 * command line is built, how it says it is ready, how its log lines, /metrics
 * and server-info endpoint read, whether it can run here, and which batch cap
 * it runs with. Nothing outside this module names an engine's flags, metric
 * names or endpoints.
 *
 * The module also holds the server-signals scraper (sig_*): the thread that
 * reads /metrics and the server info during a measured run and derives
 * run-scoped speculative-decoding acceptance with the engine's reader.
 *
 * Dependencies: util, metrics (Prometheus text), launcher (struct launch_cmd,
 * which a descriptor fills). The recipe reader, the run and the CLI use it.
 */
#ifndef SERVETOP_ENGINE_ENGINE_H
#define SERVETOP_ENGINE_ENGINE_H

#include "launcher/launcher.h"
#include "metrics/metrics.h"
#include "util/util.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct eng_ops;

/* ---------------------------------------------------------------- flags and knobs
 * A flag row lists the spellings of one server flag, canonical first, dashes
 * included ({"--ctx-size", "-c"}). Rows tie a flag to a generic knob where one
 * applies, and say what value it takes (checked by eng_check_knob). */
enum eng_knob {
  ENG_KNOB_NONE = 0,
  ENG_KNOB_KV_CACHE,  /* --set kv-cache=V (or mem-fraction=V): the KV cache size in the
                         engine's unit (a fraction of GPU memory, or tokens) */
  ENG_KNOB_BATCH_CAP, /* --set max-batch=N (or batch-cap=N): requests decoded at once */
  ENG_KNOB_MODEL,     /* the model flag (--model-path, -m) */
  /* roles without a generic --set name, which the recipe doctor asks about */
  ENG_KNOB_GRAPH_BATCH,     /* the largest batch run as a captured CUDA graph (SGLang
                               --cuda-graph-max-bs); held per DP rank */
  ENG_KNOB_EXPERT_PARALLEL, /* a switch that turns expert parallelism on (vLLM
                               --enable-expert-parallel), where a size does not */
};

enum eng_value {
  ENG_VALUE_ANY = 0,  /* any text */
  ENG_VALUE_NONE,     /* a switch: takes no value */
  ENG_VALUE_COUNT,    /* a whole number >= 1 */
  ENG_VALUE_COUNT_OR_AUTO, /* a whole number >= 1, or -1 (the engine decides) */
  ENG_VALUE_NATURAL,  /* a whole number >= 0 */
  ENG_VALUE_INT,      /* a whole number */
  ENG_VALUE_FRACTION, /* a number in (0, 1] */
  ENG_VALUE_POSITIVE, /* a number > 0 */
  ENG_VALUE_NONNEG,   /* a number >= 0 */
  ENG_VALUE_PROBABILITY, /* a number in [0, 1] */
  ENG_VALUE_JSON,     /* a JSON value, not empty (the engine parses it): vLLM's config
                         flags (--compilation-config '{"level": 3}'); where the engine
                         has dotted_json_flags, HEAD.PATH[+] sets one member of it */
};
/* Numbers are decimal as Python's float() and int() read them in the engines
 * ("0.5", "5e-1"); hexadecimal ("0x1p-1"), nan and inf are refused. */

struct eng_flag {
  const char *names[4];  /* spellings, canonical first; NULL-terminated when fewer */
  enum eng_knob knob;
  enum eng_value value;
};

/* The row a flag name belongs to, for engine e (NULL: an engine servetop does
 * not know, which gets the InferenceX spellings every engine shares: tp =
 * tp-size = tensor-parallel-size, ...). name is without leading dashes and
 * len bytes long; a generic knob name ("kv-cache") gives the engine's row for
 * that knob. NULL when no row has it. */
const struct eng_flag *eng_flag_lookup(const struct eng_ops *e, const char *name, size_t len);
/* The spelling of row f that name (without dashes) is, with its dashes; the
 * canonical spelling when name is the generic knob's or not one of f's. */
const char *eng_flag_spelling(const struct eng_flag *f, const char *name, size_t len);
/* True when arg is a flag of engine e: "--anything", or a single-dash
 * spelling in e's rows ("-np"). */
bool eng_arg_is_flag(const struct eng_ops *e, const char *arg);
/* True when arg is the flag key (without dashes) names: the same row (an
 * alias, a generic knob) or, for flags no row has, the same name.
 * *prefix_len gets the length of its dashes and name (up to any '='). */
bool eng_arg_matches(const struct eng_ops *e, const char *arg, const char *key,
                     size_t *prefix_len);
/* True when argv[i], a flag, takes argv[i + 1] as its value (not a switch,
 * and the next argument is not a flag). */
bool eng_arg_takes_value(const struct eng_ops *e, char *const *argv, size_t argc, size_t i);
/* The value of the last argument that is the flag key names: after '=', or the
 * next argument when it takes one, "" for a flag without value; NULL when
 * absent (the last one wins, as with argparse). */
const char *eng_arg_value(const struct eng_ops *e, char *const *argv, size_t argc,
                          const char *key);

/* Checks KEY=VALUE (as --set and a restart give it) against engine e before
 * anything is stopped: a generic knob the engine has no flag for, or a value
 * that a row's type refuses (mem-fraction-static=1.5, -np=0), is an error
 * naming the flag; flags servetop does not list pass (the engine has hundreds).
 * A key is a flag name (letters, digits, '-', '_') or, on an engine with
 * dotted_json_flags (vLLM), HEAD.PATH or HEAD.PATH+ where HEAD is one of its
 * ENG_VALUE_JSON rows and PATH is dot-separated members (letters, digits, '_',
 * '-'): one member of that flag's JSON, '+' a list element (vLLM's JSON CLI
 * arguments); its value must be there, the engine parses it. A dotted key on
 * another engine, or with a HEAD that is not a JSON flag, is an error (with a
 * did-you-mean where one is near). Returns 0 or -1 with err set. */
int eng_check_knob(const struct eng_ops *e, const char *key, const char *value,
                   struct st_err *err);
/* Is key (without dashes) a name the engine takes: a row of its own, a
 * shared or generic knob, the sim's own flags where the sim stands in, a flag
 * of the command line argv (the recipe's), or, for an engine whose binary
 * lists its flags (llama.cpp's --help of the binary in use, read once), one
 * of those, or one of the engine table's full list (eng_ops.all_flags: SGLang,
 * vLLM)? When not, -1 with err "KEY is not a flag of ENGINE; did you mean
 * NEAREST?". Without a full list (llama.cpp whose --help is not kept yet on
 * the UI thread, an engine servetop does not know), a key is refused only when
 * it is a near miss of a known one (edit distance <= 2: a typo), and passes
 * otherwise. */
int eng_check_knob_name(const struct eng_ops *e, const char *key, char *const *argv, size_t argc,
                        struct st_err *err);
/* The calling thread (the dashboard's UI thread) never runs an engine's
 * program to read its flags: eng_ops.help_flags gives it only what is kept
 * (in memory or on disk), else NULL, and eng_check_knob_name then knows only
 * near misses. The engine probe (a worker thread) reads and keeps the list. */
void eng_help_flags_never_run_here(void);
/* Whether the calling thread may run a program for help_flags (for the
 * descriptors). */
bool eng_help_flags_may_run(void);

/* "kv-cache (KV cache size: ...), max-batch (...)" for --help texts. */
const char *eng_generic_knobs_help(void);

/* The batch cap a command line sets (the engine's BATCH_CAP flag), or -1. */
int eng_batch_cap_from_args(const struct eng_ops *e, char *const *argv, size_t argc);

/* Engine e's row for a knob or role (its own rows, then the shared ones);
 * NULL when it has none (e NULL: an engine servetop does not know). */
const struct eng_flag *eng_knob_row(const struct eng_ops *e, enum eng_knob knob);
/* With DP attention, does the knob's value hold for each DP rank rather than
 * the whole server? (vLLM's --max-num-seqs and every engine's CUDA graph
 * sizes do; SGLang divides --max-running-requests over its ranks itself.) */
bool eng_knob_per_dp_rank(const struct eng_ops *e, enum eng_knob knob);
/* The flag (without dashes) that sizes the KV cache as a fraction of GPU
 * memory (SGLang --mem-fraction-static, vLLM --gpu-memory-utilization); NULL
 * when the engine sizes it otherwise (llama.cpp: tokens) or is unknown. */
const char *eng_gpu_memory_flag(const struct eng_ops *e);

/* ---------------------------------------------------------------- launching */
/* What to run: the pieces of a recipe a command line is built from. */
struct eng_target {
  const char *model;              /* added with the engine's model flag (or as vllm serve's
                                     positional) when the arguments have none */
  char *const *server_args;       /* recipe's server flags, e.g. {"--tp", "8", "--mem-fraction-static=0.8"} */
  size_t n_server_args;
  char *const *env;               /* recipe's environment, "NAME=VALUE" */
  size_t n_env;
  const char *host;               /* NULL = 127.0.0.1 */
  int port;                       /* required, > 0 (see launch_pick_free_port) */
  const char *gpus;               /* "0,1" -> CUDA_VISIBLE_DEVICES and HIP_VISIBLE_DEVICES; NULL = leave */
  const char *servetop_exe;       /* sim only: the servetop binary; NULL = this one (its path) */
};

/* Fills cmd (initialised by the caller) with engine e's command line: the
 * program, the model flag when the arguments have none, the arguments with any
 * --host/--port (both "--port N" and "--port=N") replaced by the target's,
 * the engine's always-on flags, the environment. Returns 0, or -1 with err set
 * (bad port, the program cannot be found: err says how to get it). */
int eng_build_cmd(const struct eng_ops *e, struct launch_cmd *cmd, const struct eng_target *t,
                  struct st_err *err);

/* ---------------------------------------------------------------- server log lines
 * Pure parsers for the lines the engines print (reference/server-protocol.md
 * C.5, D.2, D.3), used when /metrics is off. Loose on purpose: the body is
 * split into "key: value" pairs on ", " and read by key, so absent keys,
 * hybrid-model variants, trailing commas, an optional "[iter]" and rank tags
 * ("[2026-06-23 01:10:14 DP0 TP0 EP0] ...") are all fine. */
enum eng_log_kind {
  ENG_LOG_OTHER = 0,
  ENG_LOG_KV_CAPACITY,   /* SGLang "max_total_num_tokens=..., ...", vLLM "GPU KV cache size: N tokens" */
  ENG_LOG_SERVER_ARGS,   /* SGLang "server_args=ServerArgs(... dp_size=N ...)" */
  ENG_LOG_PREFILL,       /* SGLang "Prefill batch..." */
  ENG_LOG_DECODE,        /* SGLang "Decode batch..." */
  ENG_LOG_STATS,         /* vLLM "Engine 000: Avg prompt throughput: ..." */
  ENG_LOG_SPEC,          /* vLLM "SpecDecoding metrics: ..." */
  ENG_LOG_READY,         /* the engine's ready line */
};

/* struct eng_log_record.has bits: which fields the line carried. One bit
 * each, in this order: ENG_LOG_HAS_<NAME> = 1u << ENG_LOG_BIT_<NAME>. */
#define ENG_LOG_HAS_FIELDS(X)                                                                  \
  X(MAX_TOTAL_TOKENS)                                                                          \
  X(RUNNING)                                                                                   \
  X(QUEUED)                                                                                    \
  X(TOKEN_USAGE)                                                                               \
  X(NUM_TOKENS)                                                                                \
  X(ACCEPT_LENGTH)                                                                             \
  X(ACCEPT_RATE)                                                                               \
  X(GEN_THROUGHPUT)                                                                            \
  X(INPUT_THROUGHPUT)                                                                          \
  X(NEW_SEQ)                                                                                   \
  X(NEW_TOKENS)                                                                                \
  X(CACHED_TOKENS)                                                                             \
  X(PER_POSITION)                                                                              \
  X(SPEC_TOKENS) /* accepted_tokens + drafted_tokens */                                        \
  X(DP_SIZE)                                                                                   \
  X(MAX_RUNNING)                                                                               \
  X(CONTEXT_LEN)                                                                               \
  X(PREFIX_HIT)

#define ENG_LOG_BIT_ROW(name) ENG_LOG_BIT_##name,
enum { ENG_LOG_HAS_FIELDS(ENG_LOG_BIT_ROW) ENG_LOG_BIT_COUNT };
#undef ENG_LOG_BIT_ROW
#define ENG_LOG_HAS_ROW(name) ENG_LOG_HAS_##name = 1u << ENG_LOG_BIT_##name,
enum { ENG_LOG_HAS_FIELDS(ENG_LOG_HAS_ROW) };
#undef ENG_LOG_HAS_ROW

#define ENG_LOG_MAX_POSITIONS 8

struct eng_log_record {
  enum eng_log_kind kind;
  unsigned has;                   /* ENG_LOG_HAS_* */
  char rank_tag[48];              /* "DP0 TP0 EP0", "TP0", "EngineCore_DP0"; "" = none */
  int64_t iter;                   /* "[iter]" after "Decode batch", -1 = absent */
  int64_t max_total_num_tokens;   /* KV capacity in tokens */
  int64_t max_running_requests;   /* the batch cap */
  int64_t context_len;
  int64_t dp_size;
  int64_t running;                /* #running-req / Running: N reqs */
  int64_t queued;                 /* #queue-req / Waiting: N reqs */
  int64_t num_tokens;             /* #token (KV slots in use) */
  int64_t new_seq, new_tokens, cached_tokens;
  double token_usage_frac;        /* token usage / GPU KV cache usage, 0..1 */
  double accept_length;           /* SGLang accept len, vLLM Mean acceptance length */
  double accept_rate_frac;        /* SGLang accept rate, vLLM Avg Draft acceptance rate / 100 */
  double gen_tok_per_s;           /* gen throughput / Avg generation throughput */
  double input_tok_per_s;         /* input throughput / Avg prompt throughput */
  double prefix_hit_frac;
  int64_t accepted_tokens, drafted_tokens;
  int n_positions;
  double per_position_rate_frac[ENG_LOG_MAX_POSITIONS];
};

/* Parses one log line (no trailing newline needed) as engine e prints it; e
 * NULL tries every engine's parser. Returns the kind (also in out->kind);
 * ENG_LOG_OTHER leaves only kind/has meaningful. */
enum eng_log_kind eng_log_parse_line(const struct eng_ops *e, const char *line,
                                     struct eng_log_record *out);

/* The latest server-side figures folded from log lines, for one run. */
struct eng_log_state {
  bool max_total_num_tokens_valid;
  int64_t max_total_num_tokens;   /* summed over distinct rank tags, x dp_size for one tag */
  int64_t dp_size;                /* from the server_args line, 0 = unknown */
  bool max_running_valid;
  int64_t max_running_requests;   /* the batch cap, when a line says it */
  bool load_valid;                /* running/queued/usage from the last batch line */
  int64_t running, queued;
  bool token_usage_valid;
  double token_usage_frac;
  bool gen_valid;
  double gen_tok_per_s;           /* last Decode line, summed over ranks is not attempted */
  bool spec_seen;                 /* any accept field seen: the server does speculative decoding */
  bool accept_length_valid;
  double accept_length;           /* last reported */
  bool accept_rate_valid;
  double accept_rate_frac;
  int n_positions;
  double per_position_rate_frac[ENG_LOG_MAX_POSITIONS];
  int64_t n_decode_lines, n_prefill_lines;
  int64_t last_update_mono_ns;
  /* private: distinct KV capacity tags */
  int n_kv_tags_;
  char kv_tags_[16][48];
  int64_t kv_per_tag_[16];
};

void eng_log_state_init(struct eng_log_state *st);
/* Folds one parsed record in (records of kind ENG_LOG_OTHER are ignored). */
void eng_log_state_add(struct eng_log_state *st, const struct eng_log_record *rec,
                       int64_t mono_ns);

/* ---------------------------------------------------------------- server info
 * What the engine's own info endpoint(s) say (SGLang /get_server_info,
 * llama.cpp /props and /slots), read once the server is ready and at both
 * ends of a measured run. Unknown fields stay at -1 / NaN / false. */
struct eng_server_info {
  bool valid;                     /* the endpoint answered with what the engine serves */
  bool spec_valid;                /* it says whether speculative decoding is on */
  bool spec_on;
  char spec_algorithm[32];        /* "EAGLE", "draft"...; "" when off or unnamed */
  int spec_num_steps, spec_num_draft_tokens, stream_interval;
  double avg_spec_accept_length;  /* lifetime mean accept length (SGLang), NaN unknown */
  int64_t kv_capacity_tokens;     /* KV cache in tokens over all slots/ranks, -1 unknown */
  int64_t kv_per_slot_tokens;     /* KV tokens one request can hold (a slot), -1 unknown */
  int batch_cap;                  /* requests decoded at once, -1 unknown */
  bool simulated;                 /* the server says it is servetop sim */
};
void eng_server_info_init(struct eng_server_info *info);
/* Reads engine e's server info from base_url ("http://host:port"). Returns 0
 * with info->valid, or -1 with err set when the engine has no info endpoint or
 * it did not answer (info then stays unknown). */
int eng_query_server_info(const struct eng_ops *e, const char *base_url, double timeout_s,
                          struct eng_server_info *info, struct st_err *err);

/* ---------------------------------------------------------------- server signals
 * A scraper thread (never the load generator's loop) that reads the server's
 * /metrics at start, every interval and at the end, and the server info at
 * start and end, then derives run-scoped speculative-decoding acceptance with
 * the engine's reader (the engine is told by the /metrics names):
 *  - vLLM: deltas of vllm:spec_decode_num_{drafts,draft_tokens,accepted_tokens}
 *    (and _per_pos) between the first and last scrape (D.2 formulas);
 *  - SGLang /metrics: sglang:spec_accept_length / _rate are gauges over the last
 *    decode-log interval; the run value is their mean over the scrapes taken
 *    during the run, weighted by the generation tokens produced between scrapes;
 *  - SGLang /get_server_info: avg_spec_accept_length is cumulative since boot
 *    (accepted / verify steps); with the generation-token counter G at both ends,
 *    verify steps = G / L, so the run value is (G1 - G0) / (G1/L1 - G0/L0).
 * The start point is scraped before sig_scraper_start returns and the end
 * point by sig_scraper_finish, so the run-scoped figures cover exactly what
 * happened between the two calls (measure: after the warmups, until the
 * last measured request ended). When the start point's server info carries
 * a cumulative acceptance (SGLang), every scrape asks for it, so the live
 * run-scoped figure (sig_live.run_*) is derived as the final one is: the
 * same function over the points so far. Absent endpoints are recorded as
 * unavailable, never as errors. */
enum { SIG_MAX_POSITIONS = 8 };

/* One /metrics scrape, reduced to what servetop uses (NaN = not reported). */
struct sig_point {
  double t_s;                 /* since the scraper started */
  double accept_length;       /* sglang gauge, or the interval value of counters */
  double accept_rate;
  double kv_usage_frac;
  double num_running;
  double num_queued;
  double gen_tokens_total;    /* counter (sum over series) */
  double drafts_total, draft_tokens_total, accepted_tokens_total; /* spec-decoding counters */
  double accepted_per_pos_total[SIG_MAX_POSITIONS];
  double avg_spec_accept_length; /* server info (start and end points only) */
};

struct sig_config {
  const char *base_url;       /* http://host:port */
  double interval_s;          /* 1.0 */
  double timeout_s;           /* per scrape; 2.0 */
};

struct sig_summary {
  const struct eng_ops *engine; /* told by the /metrics names (or the server info); NULL unknown */
  bool metrics_available;     /* at least one /metrics answered 200 with samples */
  char metrics_unavailable_reason[160];
  bool server_info_available;
  char server_info_unavailable_reason[160];
  bool simulated;             /* the server info says it is servetop sim */
  int n_scrapes, n_scrape_failures;
  size_t n_prom_malformed;    /* lines skipped over all scrapes */
  bool spec_enabled_valid, spec_enabled;
  char spec_algorithm[32];
  int spec_num_steps, spec_num_draft_tokens, stream_interval; /* -1 unknown */
  /* Run-scoped acceptance and how it was derived ("vllm_counter_deltas",
   * "sglang_server_info_cumulative_delta", "sglang_metrics_gauge_weighted"...). */
  bool accept_length_valid;
  double accept_length;
  const char *accept_length_method;
  bool accept_rate_valid;
  double accept_rate;
  const char *accept_rate_method;
  int n_positions;
  double per_position_rate[SIG_MAX_POSITIONS];
  /* The spec-decoding counter deltas behind them (counter engines: vLLM, llama.cpp). */
  bool counter_deltas_valid;
  double drafts_delta, draft_tokens_delta, accepted_tokens_delta;
  /* Lifetime values as the server reports them (for reference). */
  bool server_info_accept_length_start_valid, server_info_accept_length_end_valid;
  double server_info_accept_length_start, server_info_accept_length_end;
  struct sig_point *points;   /* every successful scrape, in order */
  size_t n_points;
  int64_t first_mono_ns, last_mono_ns; /* when the first and last point were asked for; 0 none */
};

/* Live values: the latest scrape, and the run-scoped acceptance so far. */
struct sig_live {
  bool valid;
  /* the latest scrape; acceptance over the interval before it (a gauge, or
   * the counter deltas between the last two scrapes); NaN = absent */
  double accept_length, accept_rate, kv_usage_frac, num_running, num_queued;
  /* From the start scrape to the latest one, by the method of the final
   * summary (sig_summarize_points over the points so far): once the end
   * scrape is in, exactly the result's figure. */
  bool run_accept_length_valid, run_accept_rate_valid;
  double run_accept_length, run_accept_rate;
  const char *run_accept_length_method, *run_accept_rate_method;
  int run_n_positions;
  double run_per_position_rate[SIG_MAX_POSITIONS];
  double run_span_s;          /* start scrape -> latest scrape */
};

/* Which engine serves at base_url, told by what it serves: its /metrics names,
 * else the first info endpoint that answers (SGLang /get_server_info,
 * llama.cpp /props); servetop sim when that says it is simulated. NULL when
 * nothing tells (any OpenAI-compatible server). how gets one line: how it was
 * told, or why not. May take up to a few timeouts: not on the UI thread. */
const struct eng_ops *eng_detect(const char *base_url, double timeout_s, char *how,
                                 size_t how_bytes);

struct sig_scraper;
/* Scrapes the "start" point, then starts the thread. */
struct sig_scraper *sig_scraper_start(const struct sig_config *cfg);
void sig_scraper_live(struct sig_scraper *s, struct sig_live *out);
/* Takes the "end" scrape, stops the thread, fills *out (free with sig_summary_fini). */
void sig_scraper_finish(struct sig_scraper *s, struct sig_summary *out);
void sig_summary_fini(struct sig_summary *sum);
/* Reduces one parsed /metrics text to a point with the reader of the engine
 * whose names it carries; *engine is set when it was NULL (exposed for tests). */
void sig_point_from_prom(const struct prom_set *set, struct sig_point *out,
                         const struct eng_ops **engine);
/* Run-scoped acceptance from points[0..n-1] (first = before the run, last =
 * after) with sum->engine's method. */
void sig_summarize_points(struct sig_summary *sum);

/* ---------------------------------------------------------------- the descriptor */
struct eng_ops {
  const char *name;               /* "sim", "sglang", "vllm", ...: --engine, recipes, results */
  const char *title;              /* as people write it: "SGLang", "vLLM" */
  bool simulated;                 /* numbers come from a model, not hardware (servetop sim;
                                     it also serves its own GPU telemetry) */
  bool recipe_engine;             /* a servetop recipe's server.engine may name it */
  const char *const *frameworks;  /* InferenceX `framework:` values whose entries launch it,
                                     NULL-terminated; NULL = none */
  const char *upstream_image;     /* the engine's own container image repository
                                     ("lmsysorg/sglang"); NULL = none */
  bool sim_stands_in;             /* where it cannot run, the sim runs its recipes (said so) */
  const char *const *image_repos; /* container image repositories whose tags carry its
                                     version (eng_version_of_image), NULL-terminated */

  /* ---- recipes */
  const char *program;            /* the program as a recipe shows it */
  const char *launch_forms;       /* how recognise knows it, for messages:
                                     "python3 -m sglang.launch_server, sglang serve" */
  /* Words of a script's command that are this engine's program when they
   * start at words[at] (`-m sglang.launch_server` at 1: 3); 0 = not here. */
  size_t (*recognise)(char *const *words, size_t n, size_t at);
  const struct eng_flag *flags;   /* its own flag rows, searched first; ends with a row
                                     whose names[0] is NULL */
  /* Every flag name (without dashes) of the engine as its own sources list
   * them at one version, NULL-terminated: what a --set key must be
   * (eng_check_knob_name). NULL = no such list (llama.cpp: help_flags, read
   * from the binary in use). all_flags_source says whose list it is. */
  const char *const *all_flags;
  const char *all_flags_source;   /* "SGLang v0.5.4's server arguments ..." */
  bool flexible_flags;            /* its parser also takes '_' for '-' and --no-NAME for a
                                     switch (vLLM) */
  bool dotted_json_flags;         /* its parser takes --HEAD.PATH VALUE for one member of a
                                     JSON flag (an ENG_VALUE_JSON row) and --HEAD.PATH+ VALUE
                                     for a list element, gathered into one --HEAD JSON put
                                     after every other argument (vLLM's JSON CLI arguments) */
  bool shared_flags;              /* the InferenceX spellings (tp, ep, dp...) apply too */
  bool model_positional;          /* a recipe's first argument is the model (`vllm serve MODEL`) */
  bool batch_cap_per_dp_rank;     /* with DP attention the batch cap holds per DP rank */
  /* True when the arguments turn speculative decoding on in a way the
   * generic --speculative-* reading does not see; NULL = none. */
  bool (*enables_spec)(char *const *argv, size_t argc);
  /* A speculative-decoding setting that does not do what it looks like
   * (a draft model that is loaded but never used), as one line; NULL = fine. */
  const char *(*spec_problem)(char *const *argv, size_t argc);
  /* A speculative-decoding setting that works but leaves the engine off its
   * better path (SGLang EAGLE with topk 1 on the v1 path), as one line in
   * buf, and the flag (without dashes) it concerns; false = none. env holds
   * the launch's NAME=VALUE environment. NULL = no advice. */
  bool (*spec_advice)(char *const *argv, size_t argc, char *const *env, size_t n_env, char *buf,
                      size_t buf_bytes, const char **flag);
  /* This engine's recipe arguments as servetop sim (SGLang flags) reads
   * them, appended to out's argv; NULL = taken as they are. */
  void (*args_for_sim)(char *const *argv, size_t argc, struct launch_cmd *out);

  /* ---- launching */
  /* Adds the program words (and a positional model) to cmd. */
  int (*program_words)(struct launch_cmd *cmd, const struct eng_target *t, struct st_err *err);
  const char *model_flag;         /* added with the target's model when no ENG_KNOB_MODEL flag
                                     is given; NULL = none (or positional) */
  const char *const *always_args; /* flags always passed (unless given), NULL-terminated */
  /* Can it run here? May take seconds (imports, --version): call it from any
   * thread but the UI's. why gets the reason when not (and how to get it). */
  bool (*probe)(char *why, size_t why_bytes);
  /* Where its program is, for engines whose binary servetop finds itself
   * (eng_set_program_path, PATH, a cache); NULL = left to PATH at exec. */
  bool (*locate)(char *path, size_t path_bytes, char *why, size_t why_bytes);
  /* Every flag name (without dashes) the program in use takes, as its
   * --help lists them (NULL-terminated, kept for the process); NULL when the
   * engine has no such list or its program cannot be run here. The list is
   * kept on disk too (the cache folder's help/, keyed by the binary's path,
   * modification time and size), so --help runs once per binary; on a thread
   * that called eng_help_flags_never_run_here() only what is kept is read. */
  const char *const *(*help_flags)(void);
  const char *ready_line;         /* a log line holding it means ready; NULL = /health only */
  int64_t ready_timeout_ms;       /* how long loading may take */

  /* ---- reading */
  enum eng_log_kind (*parse_log_line)(const char *line, struct eng_log_record *out);
  bool (*owns_metrics)(const struct prom_set *set); /* its /metrics names are there */
  void (*read_metrics)(const struct prom_set *set, struct sig_point *out);
  /* Read at every scrape besides /metrics (KV use from an endpoint); NULL = none. */
  void (*read_live)(const char *base_url, double timeout_s, struct sig_point *pt);
  bool accept_from_counters;      /* acceptance from spec-decoding counter deltas */
  void (*summarize)(struct sig_summary *sum); /* run-scoped acceptance from sum's points */
  int (*query_info)(const char *base_url, double timeout_s, struct eng_server_info *out,
                    struct st_err *err);
};

/* ---------------------------------------------------------------- the table */
size_t eng_count(void);
const struct eng_ops *eng_at(size_t i);
/* The engine called name, or NULL. */
const struct eng_ops *eng_find(const char *name);
/* The simulated server: every recipe can run on it. */
const struct eng_ops *eng_sim(void);
/* A server whose engine nothing tells (servetop attach to any OpenAI-compatible
 * server): named "openai", no flags, no readers, no launch. Not in the table. */
const struct eng_ops *eng_unknown(void);
/* "sim, sglang, vllm or ..." (or only recipe engines): for messages. Static text. */
const char *eng_names(bool recipe_engines_only);
/* Every launch form the recipe reader recognises, for messages:
 * "python3 -m sglang.launch_server, sglang serve, vllm serve". Static text. */
const char *eng_launch_forms(void);
/* The program a recipe with this engine shows (SGLang's for names the table
 * does not have, as InferenceX scripts default to it). */
const char *eng_program_of(const char *engine_name);
/* The engine InferenceX entries of `framework: name` launch ("sglang",
 * "vllm"), or NULL ("trt", "atom", "dynamo-sglang": engines servetop does
 * not drive). */
const struct eng_ops *eng_for_framework(const char *framework);

/* Where the server program ends in a script command's words: the number of
 * words that are the program (`python3 -m sglang.launch_server ...`: 3), 0
 * when the words launch no server. *engine_name gets the engine, or NULL for
 * a server servetop recognises but does not drive (ATOM). */
size_t eng_recognise_launch(char *const *words, size_t n, const char **engine_name);

/* A word of a script or command line that configures speculative decoding
 * as the engines InferenceX runs spell it: SGLang's and vLLM's
 * --speculative-*, TRT's speculative_config, ATOM's --num-speculative-tokens,
 * --draft-model and --method mtp|eagle*|dspark, also inside one word that
 * holds several (an array body "(--method eagle3 ...)"). next: the word
 * after it (the value of a lone --method), or NULL. */
bool eng_word_enables_spec(const char *word, const char *next);
/* The flags (without dashes) that switch speculative decoding on, the one to
 * point at first: SGLang's algorithm (and its alias), vLLM's config.
 * NULL-terminated. */
const char *const *eng_spec_switch_flags(void);

/* Speculative decoding as engine `engine_name` reads its arguments: true when
 * an argument configures it (eng_word_enables_spec) or the engine's own
 * flags turn it on (eng_ops.enables_spec); the problem line of
 * eng_ops.spec_problem or NULL; the advice of eng_ops.spec_advice (false:
 * none). Unknown engines: only the spellings every engine shares. */
bool eng_args_enable_spec(const char *engine_name, char *const *argv, size_t argc);
const char *eng_args_spec_problem(const char *engine_name, char *const *argv, size_t argc);
bool eng_args_spec_advice(const char *engine_name, char *const *argv, size_t argc,
                          char *const *env, size_t n_env, char *buf, size_t buf_bytes,
                          const char **flag);

/* ---------------------------------------------------------------- versions */
/* An engine's version as its container image's tag tells it: a release
 * (v0.5.12, v0.5.12.post1, -postN, with CUDA/ROCm/arch variants such as
 * -cu130, -rocm700-mi35x, -amd64), a dated nightly or dev image
 * (nightly-dev-20260402, nightly-dev-cu13-20260605-7dc73766), a release's
 * dated build (v0.5.12-rocm720-mi35x-20260517), or unknown (latest, a model
 * tag, a digest, a commit-named nightly, another repository). */
struct eng_version {
  bool known;              /* a release or a dated build was read */
  bool release;            /* major.minor.patch[.postN] was read */
  int major, minor, patch, post; /* post: 0 when none */
  int date;                /* YYYYMMDD of a dated nightly or build; 0: none */
  bool nightly;            /* a nightly or dev image (its date is what counts) */
  char text[96];           /* "v0.5.12.post1 (lmsysorg/sglang:v0.5.12.post1-cu130)",
                              "nightly of 2026-06-05 (...)", "unknown (...)" */
};
/* Reads e's version from image (NULL or "": unknown, "no image"). */
void eng_version_of_image(const struct eng_ops *e, const char *image, struct eng_version *out);

/* A range of versions: releases from..until (until excluded; 0.0.0: open)
 * and, for nightlies and dated builds, dates from..until (YYYYMMDD, until
 * excluded; 0: open). A release with a date is judged by its release number;
 * a nightly by its date; an unknown version by no range. */
struct eng_version_range {
  int from[3], until[3];
  int from_date, until_date;
  const char *text;        /* as people read it: "up to v0.5.10.post1, nightlies up to 2026-04-14" */
};
bool eng_version_in_range(const struct eng_version *v, const struct eng_version_range *range);

/* One version-bound rule (the doctor's table, eng_version.c): a setting
 * whose meaning depends on the engine's version. check reads a launch
 * (argv after the program, env NAME=VALUE) and fills what and, where the
 * line to change is a flag or a variable, flag (no dashes) or env_name. */
enum eng_vrule_level { ENG_VRULE_WARNING, ENG_VRULE_NOTE };
struct eng_vrule_hit {
  char what[384];
  const char *flag;        /* the flag the finding is about; NULL: none */
  const char *env_name;    /* the variable the finding is about; NULL: none */
  bool at_launch;          /* the edit goes on the launch command's first line (a prefix) */
};
struct eng_version_rule {
  const char *engine;      /* eng_ops.name */
  const char *rule;        /* the doctor's rule name ("SGLANG_SPEC_V2") */
  const char *rule_id;     /* and its id ("L06") */
  enum eng_vrule_level level;
  struct eng_version_range applies;
  bool when_unknown;       /* also (as a note) where the version is unknown */
  const char *source;      /* what says so: PRs, releases, dates */
  bool (*check)(char *const *argv, size_t argc, char *const *env, size_t n_env,
                struct eng_vrule_hit *hit);
};
size_t eng_version_rule_count(void);
const struct eng_version_rule *eng_version_rule_at(size_t i);

/* The path of an engine's program given on the command line (servetop run
 * --llama-server PATH): option is the program's name (eng_ops.program).
 * Call before any thread starts. Returns 0, or -1 with err when no engine
 * launches that program or path is not an executable file. */
int eng_set_program_path(const char *program, const char *path, struct st_err *err);
/* The path given with eng_set_program_path for e, or NULL. */
const char *eng_program_path(const struct eng_ops *e);

#endif
