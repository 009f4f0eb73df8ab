/* loadgen: the in-process load generator behind `servetop bench`.
 *
 * N worker threads, each one epoll loop driving its own libcurl multi handle
 * through the multi-socket interface (curl_multi_socket_action with
 * CURLMOPT_SOCKETFUNCTION / CURLMOPT_TIMERFUNCTION; libcurl's timeout is the
 * epoll_wait timeout). The loops do nothing but network work and timestamping
 * (CLOCK_MONOTONIC: the bytes of a read get the moment epoll_wait reported
 * their socket ready, so the loop's own delay before it reaches a socket is not
 * in them; later reads of the same socket action, when libcurl hands them over). Every request
 * leaves one compact struct lg_record; figures are computed after the run
 * (results module) from all samples.
 *
 * Semantics follow InferenceX's benchmark_serving.py (docs/bench.md lists every
 * difference): a request's clock starts right before it is handed to libcurl,
 * after its concurrency slot was acquired, so connect time is inside TTFT and
 * slot waiting is not; by default every request opens a new connection.
 *
 * Threads: lg_run_start() returns at once; lg_run_live(), lg_run_set_max_concurrency()
 * and lg_run_stop() may be called from any thread (lg_run_stop() also from a
 * signal handler); lg_run_finish() joins and hands the records over.
 */
#ifndef SERVETOP_LOADGEN_LOADGEN_H
#define SERVETOP_LOADGEN_LOADGEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "metrics/metrics.h"
#include "util/util.h"

/* ---------------------------------------------------------------- requests */
enum lg_api {
  LG_API_COMPLETIONS, /* POST /v1/completions, `prompt`, TTFT at the first chunk with choices */
  LG_API_CHAT,        /* POST /v1/chat/completions, `messages`, TTFT at the first text chunk */
};

/* One request's input, prepared before the run (the loop only sends it). */
struct lg_prompt {
  const char *body;       /* JSON request body (owned by the workload) */
  size_t body_len;
  uint32_t prompt_len;    /* input tokens as the client counts them */
  uint32_t output_len;    /* max_tokens asked for */
};

/* ---------------------------------------------------------------- random dataset
 * benchmark_serving.py's `random` dataset without a tokenizer. Lengths are
 * uniform integers on [floor(L*ratio), L] (numpy randint semantics; servetop's
 * own RNG, so the same distribution but not numpy's exact draws).
 * Completions: `prompt` is a token-id array, ids (offset_i + i + j) % vocab_size
 * after a shared random prefix, so the input length is exact.
 * Chat: `messages` with text sized through a calibration (lg_chat_sizer) so the
 * server's own prompt_tokens hits the target. */
struct lg_chat_sizer {
  double overhead_tokens;   /* server tokens for a message of zero filler words */
  double tokens_per_word;   /* server tokens per filler word */
};

struct lg_dataset_config {
  enum lg_api api;
  const char *model;        /* "model" in the body (served model name) */
  int input_len;            /* --random-input-len */
  int output_len;           /* --random-output-len */
  double range_ratio;       /* --random-range-ratio, 0..1 */
  int prefix_len;           /* --random-prefix-len */
  int num_prompts;
  int vocab_size;           /* ids are taken modulo this */
  bool ignore_eos;
  uint64_t seed;
  const struct lg_chat_sizer *chat_sizer; /* required for LG_API_CHAT */
};

struct lg_workload {
  struct lg_prompt *prompts;
  size_t n_prompts;
  char **bodies;            /* owned bodies, one per prompt */
};

int lg_workload_random(const struct lg_dataset_config *cfg, struct lg_workload *out,
                       struct st_err *err);
/* A workload of n copies of src's first prompt (the reference's warmups). The
 * copies borrow src's body: free them before src. */
void lg_workload_repeat_first(const struct lg_workload *src, size_t n, struct lg_workload *out);
void lg_workload_free(struct lg_workload *w);
/* Chat text: n_prefix_words shared words, a per-request tag, then n_words
 * filler words (heap string). */
char *lg_chat_text_alloc(uint32_t request_index, uint32_t n_prefix_words, uint32_t n_words);

/* Calibrates chat text size against the server's own token count: probe requests
 * (max_tokens 1, non-streaming) whose usage.prompt_tokens fixes overhead and
 * slope, then a check at the target. Fails when the server reports no usage. */
struct lg_calibration {
  struct lg_chat_sizer sizer;
  int n_probes;
  int check_target_tokens;   /* length checked after fitting */
  int check_server_tokens;   /* what the server counted for it */
};
int lg_chat_calibrate(const char *url, const char *model, const char *api_key, int max_target_tokens,
                      struct lg_calibration *out, struct st_err *err);

/* ---------------------------------------------------------------- run configuration */
struct lg_config {
  const char *url;            /* full request URL (base + endpoint) */
  const char *api_key;        /* NULL: "Authorization: Bearer None", as the reference sends */
  enum lg_api api;
  const struct lg_prompt *prompts; /* request i sends prompts[i] */
  size_t n_prompts;
  int max_concurrency;        /* <= 0: unlimited */
  double request_rate;        /* requests/s; INFINITY: every request arrives at t = 0 */
  double burstiness;          /* gamma shape; 1 = Poisson */
  uint64_t seed;              /* arrival times */
  int num_workers;            /* loops (threads); >= 1 */
  bool reuse_connections;     /* false: a new TCP connection per request (reference) */
  bool keep_text;             /* keep generated text (for --save-detailed) */
  double request_timeout_s;   /* whole request; reference: 6 h */
  double drain_timeout_s;     /* after lg_run_stop(): grace for in-flight requests */
};
/* Fills the reference's defaults (rate inf, burstiness 1, 1 worker, 6 h timeout, ...). */
void lg_config_init(struct lg_config *cfg);

/* ---------------------------------------------------------------- records */
enum lg_failure {
  LG_OK = 0,
  LG_FAIL_HTTP,          /* status != 200 */
  LG_FAIL_CONNECT,       /* could not connect */
  LG_FAIL_TIMEOUT,       /* request timeout */
  LG_FAIL_TRANSFER,      /* reset / truncated / other transport error */
  LG_FAIL_MALFORMED,     /* a line that is not valid JSON / SSE */
  LG_FAIL_NO_CHUNK,      /* 200 but no token chunk ("Never received a valid chunk ...") */
  LG_FAIL_INTERRUPTED,   /* still in flight when the run was stopped */
  LG_FAIL_NOT_SENT,      /* never dispatched (run stopped first) */
};
const char *lg_failure_name(enum lg_failure f);

enum {
  LG_REC_USAGE_SEEN = 1u << 0,  /* a usage object with completion_tokens arrived */
  LG_REC_STREAM_ERROR = 1u << 1 /* a `data: {"error": ...}` line arrived */
};

/* One request, as compact as the figures allow (72 bytes + 4 per chunk gap).
 * Times are nanoseconds; scheduled/dispatch are offsets from the run start. */
struct lg_record {
  int64_t scheduled_ns;        /* when it could have gone: arrival, or slot freed */
  int64_t dispatch_ns;         /* handed to libcurl (the reference's `st`) */
  int64_t ttft_ns;             /* first token chunk - dispatch; 0 when none */
  int64_t e2el_ns;             /* last token chunk - dispatch */
  uint32_t *chunk_gaps_us;     /* n_chunk_gaps gaps between token chunks (ITL), µs */
  char *detail;                /* error text for failures; generated text with keep_text */
  uint32_t n_chunk_gaps;
  uint32_t prompt_len;         /* client-side input tokens */
  int32_t server_prompt_tokens;/* usage.prompt_tokens, -1 when not reported */
  int32_t output_tokens;       /* usage.completion_tokens; 0 without a usage chunk */
  uint32_t connect_us;         /* dispatch -> TCP connected (libcurl); 0 on a reused connection */
  uint16_t http_status;        /* 0: no response */
  uint8_t failure;             /* enum lg_failure */
  uint8_t flags;               /* LG_REC_* */
};

struct lg_result {
  struct lg_record *records;   /* n_records, index = request index */
  size_t n_records;
  int64_t start_mono_ns;       /* first dispatch (benchmark_start_time) */
  int64_t end_mono_ns;         /* last request finished */
  double start_unix_s;         /* wall clock at start / end */
  double end_unix_s;
  bool interrupted;            /* lg_run_stop() before the end */
  int num_workers;
  bool reuse_connections;
  uint64_t events;             /* SSE lines handled by the loops */
  uint64_t body_bytes;         /* response body bytes */
  /* How long after epoll_wait returned the loop got to the bytes (the write
   * callback), µs, one sample per callback (approximate histogram). The first
   * read of a socket action is stamped at the epoll return, so this delay is
   * not in its timestamps. */
  struct live_hist callback_delay;
};
/* Bytes the records hold (structs + gap arrays + detail strings). */
size_t lg_result_record_bytes(const struct lg_result *r);
void lg_result_free(struct lg_result *r);

/* ---------------------------------------------------------------- live figures */
struct lg_live_latency {
  bool valid;
  int64_t n;                   /* samples in the window */
  double p50_ms, p90_ms, p99_ms;
};

/* A copy of what the loops published (each at most every 100 ms). Window
 * figures cover the last LG_LIVE_WINDOW_S seconds; percentiles are from a
 * log-linear histogram (~1.6%), never used for final results. */
enum { LG_LIVE_WINDOW_S = 10 };
struct lg_live {
  int64_t total;               /* requests in the run */
  int64_t dispatched, completed, failed, in_flight;
  int max_concurrency;         /* current setting (<= 0: unlimited) */
  double elapsed_s;            /* since the first dispatch */
  int64_t output_tokens;       /* of completed requests */
  int64_t input_tokens;
  double window_output_tok_per_s;
  double window_req_per_s;
  struct lg_live_latency ttft, tpot, itl, e2el; /* window */
  bool finished;               /* every loop has exited */
};

struct lg_run;
/* Starts the loops; the run begins at once. Returns NULL with err on setup
 * failure (nothing left running). cfg->prompts must outlive the run. */
struct lg_run *lg_run_start(const struct lg_config *cfg, struct st_err *err);
void lg_run_live(struct lg_run *run, struct lg_live *out);
/* Closed-loop concurrency, live (>= 1; split over the workers). */
void lg_run_set_max_concurrency(struct lg_run *run, int max_concurrency);
/* Stops dispatching; in-flight requests get drain_timeout_s, then are cut and
 * recorded as interrupted. Async-signal-safe. */
void lg_run_stop(struct lg_run *run);
/* Waits up to timeout_ms (< 0: forever) for the loops to finish. */
bool lg_run_wait(struct lg_run *run, int timeout_ms);
/* Joins the loops and moves the records into *out; frees run. */
void lg_run_finish(struct lg_run *run, struct lg_result *out);

/* ---------------------------------------------------------------- SSE and chunk parsing */
enum { LG_SSE_MAX_LINE_BYTES = 4 << 20 };
struct lg_sse {
  struct sbuf partial; /* bytes of a line not yet terminated */
};
/* Gets one SSE payload (after "data: ", trimmed); returns 0 to go on. */
typedef int (*lg_sse_line_fn)(void *ctx, const char *payload, size_t len);
void lg_sse_init(struct lg_sse *sse);
void lg_sse_fini(struct lg_sse *sse);
/* Feeds bytes in any split; returns 0, the callback's non-zero value, or -1
 * when a line exceeds LG_SSE_MAX_LINE_BYTES. */
int lg_sse_feed(struct lg_sse *sse, const char *data, size_t len, lg_sse_line_fn on_line,
                void *ctx);
/* Delivers an unterminated last line, if any. */
int lg_sse_finish(struct lg_sse *sse, lg_sse_line_fn on_line, void *ctx);

enum lg_chunk_kind {
  LG_CHUNK_MALFORMED = 0, /* not valid JSON (the reference fails the request) */
  LG_CHUNK_DONE,          /* [DONE] */
  LG_CHUNK_CHOICES,       /* non-empty "choices" */
  LG_CHUNK_ERROR,         /* {"error": ...} without choices */
  LG_CHUNK_OTHER,         /* valid JSON without choices (e.g. the usage chunk) */
};
struct lg_chunk {
  enum lg_chunk_kind kind;
  size_t n_choices;
  bool has_text;              /* choices[].text / delta.content / reasoning non-empty */
  bool has_finish_reason;
  bool has_usage;
  bool has_error;
  int64_t completion_tokens;  /* -1 when absent */
  int64_t prompt_tokens;      /* -1 when absent */
  const char *text;           /* raw (escaped) first text, points into the line */
  size_t text_len;
  const char *error_text;     /* raw error JSON / string */
  size_t error_text_len;
};
/* Validates one payload as JSON and extracts what the metrics use. */
enum lg_chunk_kind lg_chunk_scan(const char *payload, size_t len, struct lg_chunk *out);
/* Appends a JSON string body (escapes resolved, UTF-8) to out. */
void lg_json_unescape_append(struct sbuf *out, const char *raw, size_t len);

#endif
