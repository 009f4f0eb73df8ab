/* util: allocation, errors, clocks, logging, buffers, files, number parsing and JSON helpers.
 *
 * Conventions used by every module:
 *  - x* allocators never return NULL: on failure they run the OOM hook (the UI
 *    restores the terminal there) and abort.
 *  - Fallible calls return 0 on success and -1 on failure, and fill an optional
 *    caller-supplied struct st_err with one human-readable line.
 *  - Functions whose name ends in _new/_dup/_alloc or starts with x*printf return
 *    heap memory the caller frees.
 */
#ifndef SERVETOP_UTIL_UTIL_H
#define SERVETOP_UTIL_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#if defined(__GNUC__)
#define ST_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#define ST_NORETURN __attribute__((noreturn))
#else
#define ST_PRINTF(fmt, args)
#define ST_NORETURN
#endif

#define ST_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* ---------------------------------------------------------------- allocation */
void *xmalloc(size_t size_bytes);
void *xcalloc(size_t count, size_t size_bytes);
void *xrealloc(void *ptr, size_t size_bytes);
void *xreallocarray(void *ptr, size_t count, size_t size_bytes);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t len);
char *xasprintf(const char *fmt, ...) ST_PRINTF(1, 2);
char *xvasprintf(const char *fmt, va_list ap) ST_PRINTF(1, 0);
/* Called once before abort() when an allocation fails (e.g. endwin()). */
void util_set_oom_hook(void (*hook)(void));
ST_NORETURN void util_die_oom(size_t size_bytes);

/* ---------------------------------------------------------------- errors */
struct st_err {
  char msg[512];
};
/* Sets err->msg (when err is not NULL) and returns -1, so callers can write
 * `return err_setf(err, "...")`. */
int err_setf(struct st_err *err, const char *fmt, ...) ST_PRINTF(2, 3);
/* Prefixes an existing message: "<prefix>: <old message>". Returns -1. */
int err_prefixf(struct st_err *err, const char *fmt, ...) ST_PRINTF(2, 3);

/* ---------------------------------------------------------------- clocks */
int64_t clock_mono_ns(void);           /* CLOCK_MONOTONIC */
int64_t clock_mono_us(void);
double clock_real_s(void);             /* CLOCK_REALTIME, seconds since the epoch */
void clock_sleep_us(int64_t us);       /* restarts on EINTR */
/* pthread_cond_init with a CLOCK_MONOTONIC clock (timed waits against
 * clock_mono_ns deadlines, immune to wall-clock steps). */
void clock_cond_init_mono(pthread_cond_t *cv);

/* ---------------------------------------------------------------- threads */
/* pthread_create with every signal blocked in the new thread, so that signals
 * stay with the caller (its handlers may touch state the new thread does not
 * own). The caller's own mask is unchanged. Returns whether the thread started. */
bool thread_start_unsignalled(pthread_t *thread, void *(*fn)(void *), void *arg);

/* ---------------------------------------------------------------- logging */
enum log_level { LOG_DEBUG, LOG_INFO, LOG_WARN, LOG_ERROR };
void log_set_level(enum log_level min_level);
void log_set_program(const char *name);   /* prefix, "servetop" by default */
void log_msg(enum log_level level, const char *fmt, ...) ST_PRINTF(2, 3);

/* ---------------------------------------------------------------- growable byte buffer */
struct sbuf {
  char *data;   /* always NUL-terminated when cap > 0 */
  size_t len;
  size_t cap;
};
void sbuf_reserve(struct sbuf *sb, size_t extra_bytes);
void sbuf_append(struct sbuf *sb, const void *data, size_t len);
void sbuf_puts(struct sbuf *sb, const char *s);
void sbuf_putc(struct sbuf *sb, char c);
void sbuf_printf(struct sbuf *sb, const char *fmt, ...) ST_PRINTF(2, 3);
void sbuf_consume(struct sbuf *sb, size_t n_bytes);  /* drop n bytes from the front */
void sbuf_reset(struct sbuf *sb);                    /* len = 0, keeps memory */
void sbuf_free(struct sbuf *sb);
/* Gives the buffer's string to the caller (never NULL) and empties sb. */
char *sbuf_take(struct sbuf *sb);
/* Appends len bytes of s escaped as the inside of a JSON string (no quotes):
 * \" \\ \n \r \t, other control characters as \u00XX. */
void sbuf_put_json_escaped(struct sbuf *sb, const char *s, size_t len);
/* Appends s as one POSIX shell word: bare when it has only safe characters
 * (letters, digits, -_=./,:+@%), else single-quoted, so pasting the line into
 * a shell never expands or runs anything in it. */
void sbuf_put_shell_word(struct sbuf *sb, const char *s);
/* Appends an environment entry "NAME=VALUE" as a shell assignment prefix:
 * NAME= bare and VALUE as a shell word (a quoted "NAME=..." would be a command). */
void sbuf_put_shell_assignment(struct sbuf *sb, const char *name_value);

/* ---------------------------------------------------------------- files and paths */
/* Reads a whole file; returns a NUL-terminated heap buffer, or NULL with err set. */
char *file_read_all(const char *path, size_t *len_out, struct st_err *err);
/* The most servetop reads from one recipe, config or launch script (the
 * largest InferenceX master config is about 0.2 MiB). */
#define FILE_INPUT_MAX_BYTES ((size_t)16 << 20)
/* file_read_all for input that others may have written (recipes, configs,
 * launch scripts, themes): only a regular file (a symlink to one is fine) of at
 * most max_bytes; a FIFO, device, socket or directory is refused without
 * blocking, err naming what it is ("x.yaml: a FIFO, not a regular file: skipped"). */
char *file_read_regular(const char *path, size_t max_bytes, size_t *len_out, struct st_err *err);
/* Writes data atomically: a temp file beside path (O_EXCL, mode), fsync, rename.
 * Never follows a symlink at path's temp name; a symlink at path is replaced,
 * not followed. Returns 0 or -1 with err set (ENOSPC, EROFS... are named). */
int file_write_atomic(const char *path, const void *data, size_t len, mode_t mode,
                      struct st_err *err);
/* For measured results, which must never be lost: writes path atomically, or
 * when that fails (disk full, read-only, removed folder) saves the same bytes
 * as $TMPDIR/servetop-rescue-<pid>-<file name> (or /tmp), or when that fails
 * too prints them to stderr between marker lines. Returns 0 when path was
 * written; otherwise -1 with err saying why and where the data went. */
int file_write_or_rescue(const char *path, const void *data, size_t len, mode_t mode,
                         struct st_err *err);
/* mkdir -p; existing directories are fine. */
int path_mkdir_p(const char *path, mode_t mode, struct st_err *err);
/* $XDG_DATA_HOME/servetop or ~/.local/share/servetop (heap string). */
char *path_data_dir_alloc(void);
/* ${XDG_CACHE_HOME:-$HOME/.cache}/servetop (heap string): what the llama.cpp
 * setup script in scripts/ fills (bin/llama-server, models/). */
char *path_cache_dir_alloc(void);
/* Joins two path parts with exactly one '/' (heap string). */
char *path_join_alloc(const char *a, const char *b);
bool path_exists(const char *path);
/* Directory of the running executable (from /proc/self/exe), heap string or NULL. */
char *path_self_dir_alloc(void);

/* ---------------------------------------------------------------- strings and numbers */
bool str_starts_with(const char *s, const char *prefix);
bool str_ends_with(const char *s, const char *suffix);
/* Trims ASCII whitespace in place; returns s advanced past leading space. */
char *str_trim(char *s);
/* Frees the first n strings of v and v itself (NULL v: nothing);
 * n == STR_VEC_TO_NULL: every string up to v's NULL terminator. */
#define STR_VEC_TO_NULL ((size_t)-1)
void str_vec_free(char **v, size_t n);
/* Strict parsers: the whole string must be a number (no trailing garbage,
 * no overflow). Return 0 or -1. */
int parse_long(const char *s, long *out);
int parse_int(const char *s, int *out);
int parse_double(const char *s, double *out);
/* Accepts true/false/yes/no/on/off/1/0 (case-insensitive). */
int parse_bool(const char *s, bool *out);
/* A duration above zero: "30m", "90s", "2h", "1h30m", or a bare number of seconds ("45"). */
int parse_duration_s(const char *s, double *out_s);
/* After an item of a ','-separated list that `close` ends (JSON objects and
 * arrays, Prometheus label sets): consumes a ',' at *p (PARSE_LIST_MORE) or
 * close (PARSE_LIST_END); anything else, or the end, is PARSE_LIST_BAD and
 * leaves *p as it was. */
enum parse_list_step { PARSE_LIST_BAD = -1, PARSE_LIST_END = 0, PARSE_LIST_MORE = 1 };
enum parse_list_step parse_list_next(const char **p, const char *end, char close);
/* Consumes the character c at *p (before end): true, or false and *p as it was. */
bool parse_char(const char **p, const char *end, char c);

/* ---------------------------------------------------------------- JSON (cJSON)
 * Members whose value may be unknown: null stands for it. */
struct cJSON;
/* key: s, or null when s is NULL. */
void json_add_string_or_null(struct cJSON *o, const char *key, const char *s);
/* key: s, or null when s is NULL or empty. */
void json_add_text_or_null(struct cJSON *o, const char *key, const char *s);
/* key: v, or null when !valid or v is not finite. */
void json_add_number_or_null(struct cJSON *o, const char *key, bool valid, double v);

/* ---------------------------------------------------------------- command-line options
 * One table per subcommand. Long options only, as Python's argparse writes them:
 * "--name value" and "--name=value"; a name may list aliases: "ep|ep-size".
 * OPT_FLAG takes no value (a "=false" suffix is accepted). */
#include <stdio.h>

enum opt_kind { OPT_FLAG, OPT_STRING, OPT_INT, OPT_LONG, OPT_DOUBLE, OPT_LIST, OPT_CALLBACK };

struct opt_list { /* OPT_LIST target: every value of a repeatable option */
  char **items;   /* borrowed from argv */
  size_t n;
};

struct opt_spec {
  const char *names;      /* "max-concurrency" or "ep|expert-parallel-size" */
  enum opt_kind kind;
  void *target;           /* bool*, const char**, int*, long*, double*, struct opt_list* */
  const char *metavar;    /* shown in --help, e.g. "N" */
  const char *help;
  /* OPT_CALLBACK: called with the value (NULL for none); returns 0 or -1 with err set. */
  int (*callback)(void *ctx, const char *name, const char *value, struct st_err *err);
  bool *seen;             /* optional: set true when the option is given */
};

struct opt_parser {
  const char *usage;        /* "servetop bench [options]" */
  const char *description;  /* a paragraph for --help */
  const struct opt_spec *specs;
  size_t n_specs;
  /* Optional: unknown "--name[=value]" options go here instead of failing.
   * value is the "=value" part, or the next argument when it does not start
   * with "--", or NULL. Return 0 to accept (and *consumed_next = true when the
   * next argument was used as the value). */
  int (*unknown)(void *ctx, const char *name, const char *value, bool *consumed_next);
  void *ctx;
};

enum { OPT_OK = 0, OPT_HELP = 1, OPT_ERROR = -1 };
/* Parses argv[0..argc-1] (argv[0] is an option or positional, not the program).
 * Positional arguments are collected in order into pos (at most max_pos).
 * Returns OPT_OK, OPT_HELP (for -h/--help) or OPT_ERROR with err set to
 * "option --x: <why>". */
int opt_parse(const struct opt_parser *p, int argc, char **argv, char **pos, size_t max_pos,
              size_t *n_pos, struct st_err *err);
void opt_print_help(const struct opt_parser *p, FILE *out);
/* Whether name (name_len bytes, without dashes) is one of names' '|'-separated spellings
 * (struct opt_spec.names). */
bool opt_names_match(const char *names, const char *name, size_t name_len);
/* Help text is wrapped at blanks to this many columns (lines kept). */
#define OPT_HELP_COLS 80
/* text wrapped to OPT_HELP_COLS, its own line breaks kept. */
void opt_print_wrapped(FILE *out, const char *text);

#endif
