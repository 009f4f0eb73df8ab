/* launcher: start, watch and stop an inference server (SGLang, vLLM or
 * `servetop sim`) and read its log.
 *
 * Process model. launcher_start() forks a small supervisor process, which
 * forks the server:
 *
 *   servetop ──(life pipe)──► supervisor (own session, child subreaper)
 *                                └─► server (own process group, PDEATHSIG=KILL)
 *                                       └─► its children (same group)
 *
 * The supervisor holds the read end of a "life" pipe whose write end only
 * servetop holds. When servetop exits for any reason, SIGKILL included, the
 * pipe reads EOF and the supervisor stops the server's group (SIGTERM, grace,
 * SIGKILL), then kills every orphan that was re-parented to it (processes
 * that left the group with setsid), reaps them and exits. The server also gets
 * SIGKILL should the supervisor itself die. The server's stdout and stderr go
 * through a pipe to a reader thread in servetop that appends them to the log
 * file, keeps the last lines in a ring and hands each line to a callback.
 *
 * Every process started gets SERVETOP_LAUNCH_ID=<id> in its environment, so a
 * test (or a user) can find what is left of a launch in /proc.
 *
 * The server command is always an argv vector run with execvp, never a shell
 * string.
 */
#ifndef SERVETOP_LAUNCHER_LAUNCHER_H
#define SERVETOP_LAUNCHER_LAUNCHER_H

#include "util/util.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---------------------------------------------------------------- engines and commands */
enum launch_engine {
  LAUNCH_ENGINE_SGLANG, /* python3 -m sglang.launch_server ARGS --host H --port P */
  LAUNCH_ENGINE_VLLM,   /* vllm serve MODEL ARGS --host H --port P */
  LAUNCH_ENGINE_SIM,    /* <servetop> sim ARGS --host H --port P */
};

const char *launch_engine_name(enum launch_engine engine); /* "sglang", "vllm", "sim" */
/* Accepts "sglang", "vllm", "sim"; returns 0 or -1. */
int launch_engine_parse(const char *name, enum launch_engine *out);

#define LAUNCH_ID_ENV "SERVETOP_LAUNCH_ID"

/* An argv vector and the environment entries to add. Owns its strings. */
struct launch_cmd {
  char **argv;      /* NULL-terminated; argv[0] is looked up on PATH */
  size_t argc;
  char **env;       /* "NAME=VALUE", set on top of servetop's environment */
  size_t n_env;
  size_t argv_cap_;
  size_t env_cap_;
};

void launch_cmd_init(struct launch_cmd *cmd);
void launch_cmd_fini(struct launch_cmd *cmd);
void launch_cmd_add_arg(struct launch_cmd *cmd, const char *arg);
/* Sets (or replaces) NAME in the added environment. */
void launch_cmd_set_env(struct launch_cmd *cmd, const char *name, const char *value);
/* Value of NAME in the added environment, or NULL. */
const char *launch_cmd_get_env(const struct launch_cmd *cmd, const char *name);
/* The command as one line for logs and manifests, shell-quoted where needed
 * (env entries first). Heap string. */
char *launch_cmd_format_alloc(const struct launch_cmd *cmd);

/* What to run: the pieces of a recipe the launcher needs. */
struct launch_target {
  enum launch_engine engine;
  const char *model;              /* vLLM: positional; SGLang / sim: --model-path when not in args */
  char *const *server_args;       /* recipe's server flags, e.g. {"--tp", "8", "--mem-fraction-static=0.8"} */
  size_t n_server_args;
  char *const *env;               /* recipe's environment, "NAME=VALUE" */
  size_t n_env;
  const char *host;               /* NULL = 127.0.0.1 */
  int port;                       /* required, > 0 (see launch_pick_free_port) */
  const char *gpus;               /* "0,1" -> CUDA_VISIBLE_DEVICES and HIP_VISIBLE_DEVICES; NULL = leave */
  const char *servetop_exe;       /* sim only: the servetop binary; NULL = this one (its path) */
};

/* Fills cmd (initialised by the caller) with the engine's command line. Any
 * --host/--port in server_args (both "--port N" and "--port=N") is replaced by
 * the target's. Returns 0, or -1 with err set. */
int launch_cmd_build(struct launch_cmd *cmd, const struct launch_target *target,
                     struct st_err *err);

/* A TCP port on 127.0.0.1 that was free a moment ago (bind to 0, read, close). */
int launch_pick_free_port(struct st_err *err);

/* ---------------------------------------------------------------- running a server */
typedef void (*launch_line_fn)(void *ctx, const char *line, int64_t mono_ns);

struct launch_opts {
  const struct launch_cmd *cmd;
  const char *log_path;           /* server stdout+stderr are appended here */
  const char *host;               /* for /health; NULL = 127.0.0.1 */
  int port;                       /* for /health */
  enum launch_engine engine;      /* picks the ready log line */
  int64_t stop_grace_ms;          /* SIGTERM -> SIGKILL; 0 = 10000 */
  /* Called on the launcher's reader thread for every complete log line
   * (without the newline). Keep it short; it must not call launcher_*. */
  launch_line_fn on_line;
  void *on_line_ctx;
  /* Optional: launcher_wait_ready gives up (and a pending /health poll is cut)
   * as soon as *cancel becomes non-zero, e.g. from a SIGINT handler. */
  const atomic_int *cancel;
};

enum launch_state {
  LAUNCH_STARTING,
  LAUNCH_READY,
  LAUNCH_STOPPING,
  LAUNCH_EXITED, /* the server was reaped (exit status known) */
};

enum launch_ready_by { LAUNCH_READY_NOT_YET, LAUNCH_READY_HEALTH, LAUNCH_READY_LOG_LINE };

struct launch_status {
  enum launch_state state;
  int pid;                   /* server pid = its process group id; 0 until known */
  int supervisor_pid;
  char launch_id[32];        /* value of SERVETOP_LAUNCH_ID */
  bool exited;               /* exit_code / exit_signal are set */
  int exit_code;             /* when it exited by itself, else -1 */
  int exit_signal;           /* signal that ended it, else 0 */
  bool stop_requested;       /* exit was asked for by launcher_stop (or servetop's exit) */
  enum launch_ready_by ready_by;
  int64_t started_mono_ns;
  int64_t ready_after_ms;    /* launch -> ready; -1 until ready */
  uint64_t n_log_lines;      /* lines read so far */
};

struct launcher; /* opaque; every call is thread-safe */

/* Starts the supervisor and the server. Returns NULL with err set when the
 * log file cannot be opened or fork fails; an exec failure shows up as an
 * early exit with status 127 and a log line saying why. */
struct launcher *launcher_start(const struct launch_opts *opts, struct st_err *err);

/* Blocks until the server is ready: GET /health answers 200, or the engine's
 * ready log line appears (SGLang and sim: "The server is fired up and ready to
 * roll!"; vLLM: uvicorn's "Application startup complete.", which SGLang also
 * prints but before its warmup). Returns 0 when ready; -1 with err set on
 * timeout, early exit (with exit status and the last log lines), *cancel, or
 * when launcher_stop was called meanwhile. */
int launcher_wait_ready(struct launcher *l, int64_t timeout_ms, struct st_err *err);

void launcher_get_status(struct launcher *l, struct launch_status *out);

/* Copies up to max_lines newest log lines, oldest first, into a caller array of
 * max_lines rows of line_bytes each (truncated, NUL-terminated). Returns the
 * number of rows written. */
size_t launcher_copy_tail(struct launcher *l, char *rows, size_t max_lines, size_t line_bytes);
/* The last n lines joined with "\n" (heap string, "" when none). */
char *launcher_tail_alloc(struct launcher *l, size_t n_lines);

/* Waits up to timeout_ms for the server to exit on its own. True when exited. */
bool launcher_wait_exit(struct launcher *l, int64_t timeout_ms);

/* SIGTERM to the server's group, SIGKILL after the grace period, orphans
 * killed, everything reaped. Blocks until the supervisor is gone. Idempotent;
 * returns 0. */
int launcher_stop(struct launcher *l);

/* Stops (if needed) and frees. NULL is fine. */
void launcher_free(struct launcher *l);

/* Polls GET http://host:port/path once; returns the HTTP status or -1. */
int launch_http_get_status(const char *host, int port, const char *path, int64_t timeout_ms);
/* GET http://host:port/path; returns the body (heap, NUL-terminated) when the
 * status is 200, else NULL with err set. */
char *launch_http_get_alloc(const char *host, int port, const char *path, int64_t timeout_ms,
                            struct st_err *err);



/* ---------------------------------------------------------------- server log lines
 * Pure parsers for the lines SGLang and vLLM print (reference/server-protocol.md
 * C.5, D.2, D.3), used when /metrics is off. Loose on purpose: the body is
 * split into "key: value" pairs on ", " and read by key, so absent keys,
 * hybrid-model variants, trailing commas, an optional "[iter]" and rank tags
 * ("[2026-06-23 01:10:14 DP0 TP0 EP0] ...") are all fine. */
enum launch_log_kind {
  LAUNCH_LOG_OTHER = 0,
  LAUNCH_LOG_KV_CAPACITY,   /* SGLang "max_total_num_tokens=..., ..." */
  LAUNCH_LOG_SERVER_ARGS,   /* SGLang "server_args=ServerArgs(... dp_size=N ...)" */
  LAUNCH_LOG_PREFILL,       /* SGLang "Prefill batch..." */
  LAUNCH_LOG_DECODE,        /* SGLang "Decode batch..." */
  LAUNCH_LOG_VLLM_KV_SIZE,  /* vLLM "GPU KV cache size: 1,234,567 tokens" */
  LAUNCH_LOG_VLLM_ENGINE,   /* vLLM "Engine 000: Avg prompt throughput: ..." */
  LAUNCH_LOG_VLLM_SPEC,     /* vLLM "SpecDecoding metrics: ..." */
  LAUNCH_LOG_READY,         /* either engine's ready line */
};

enum { /* struct launch_log_record.has bits: which fields the line carried */
  LAUNCH_LOG_HAS_MAX_TOTAL_TOKENS = 1u << 0,
  LAUNCH_LOG_HAS_RUNNING = 1u << 1,
  LAUNCH_LOG_HAS_QUEUED = 1u << 2,
  LAUNCH_LOG_HAS_TOKEN_USAGE = 1u << 3,
  LAUNCH_LOG_HAS_NUM_TOKENS = 1u << 4,
  LAUNCH_LOG_HAS_ACCEPT_LENGTH = 1u << 5,
  LAUNCH_LOG_HAS_ACCEPT_RATE = 1u << 6,
  LAUNCH_LOG_HAS_GEN_THROUGHPUT = 1u << 7,
  LAUNCH_LOG_HAS_INPUT_THROUGHPUT = 1u << 8,
  LAUNCH_LOG_HAS_NEW_SEQ = 1u << 9,
  LAUNCH_LOG_HAS_NEW_TOKENS = 1u << 10,
  LAUNCH_LOG_HAS_CACHED_TOKENS = 1u << 11,
  LAUNCH_LOG_HAS_PER_POSITION = 1u << 12,
  LAUNCH_LOG_HAS_SPEC_TOKENS = 1u << 13, /* accepted_tokens + drafted_tokens */
  LAUNCH_LOG_HAS_DP_SIZE = 1u << 14,
  LAUNCH_LOG_HAS_MAX_RUNNING = 1u << 15,
  LAUNCH_LOG_HAS_CONTEXT_LEN = 1u << 16,
  LAUNCH_LOG_HAS_PREFIX_HIT = 1u << 17,
};

#define LAUNCH_LOG_MAX_POSITIONS 8

struct launch_log_record {
  enum launch_log_kind kind;
  unsigned has;                   /* LAUNCH_LOG_HAS_* */
  char rank_tag[48];              /* "DP0 TP0 EP0", "TP0", "EngineCore_DP0"; "" = none */
  int64_t iter;                   /* "[iter]" after "Decode batch", -1 = absent */
  int64_t max_total_num_tokens;   /* KV capacity (SGLang), "GPU KV cache size" (vLLM) */
  int64_t max_running_requests;
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
  double per_position_rate_frac[LAUNCH_LOG_MAX_POSITIONS];
};

/* Parses one log line (no trailing newline needed). Returns its kind (also in
 * out->kind); LAUNCH_LOG_OTHER leaves only kind/has meaningful. */
enum launch_log_kind launch_log_parse_line(const char *line, struct launch_log_record *out);

/* The latest server-side figures folded from log lines, for one run. */
struct launch_log_state {
  bool max_total_num_tokens_valid;
  int64_t max_total_num_tokens;   /* summed over distinct rank tags, x dp_size for one tag */
  int64_t dp_size;                /* from the server_args line, 0 = unknown */
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
  double per_position_rate_frac[LAUNCH_LOG_MAX_POSITIONS];
  int64_t n_decode_lines, n_prefill_lines;
  int64_t last_update_mono_ns;
  /* private: distinct KV capacity tags */
  int n_kv_tags_;
  char kv_tags_[16][48];
  int64_t kv_per_tag_[16];
};

void launch_log_state_init(struct launch_log_state *st);
/* Folds one parsed record in (records of kind LAUNCH_LOG_OTHER are ignored). */
void launch_log_state_add(struct launch_log_state *st, const struct launch_log_record *rec,
                          int64_t mono_ns);
#endif
