/* launcher: start, watch and stop an inference server process and read its
 * log. It knows no engine: the command, the ready line and what to do with
 * each log line come from the caller (the engine module builds them).
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

/* ---------------------------------------------------------------- commands */
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

/* A TCP port on 127.0.0.1 that was free a moment ago (bind to 0, read, close). */
int launch_pick_free_port(struct st_err *err);

/* ---------------------------------------------------------------- running a server */
typedef void (*launch_line_fn)(void *ctx, const char *line, int64_t mono_ns);

struct launch_opts {
  const struct launch_cmd *cmd;
  const char *log_path;           /* server stdout+stderr are appended here */
  const char *host;               /* for /health; NULL = 127.0.0.1 */
  int port;                       /* for /health */
  const char *ready_line;         /* a log line holding it means ready; NULL = /health only */
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
  uint64_t log_write_failures; /* writes to the server log file that failed or were short
                                  (said once on stderr, then counted here) */
  int log_write_errno;       /* the first one's errno (0: a short write) */
};

struct launcher; /* opaque; every call is thread-safe; the status and tail calls and
                    launcher_wait_exit take NULL (no process: never exited, no lines) */

/* Starts the supervisor and the server. Returns NULL with err set when the
 * log file cannot be opened or fork fails; an exec failure shows up as an
 * early exit with status 127 and a log line saying why. */
struct launcher *launcher_start(const struct launch_opts *opts, struct st_err *err);

/* Blocks until the server is ready: GET /health answers 200, or a log line
 * holding opts->ready_line appears. Returns 0 when ready; -1 with err set on
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



#endif
