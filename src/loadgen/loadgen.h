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

#include <signal.h>
#include <stdatomic.h>
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

/* ---------------------------------------------------------------- the server's tokenizer
 * The tokenizer endpoints a server has (SGLang, vLLM, llama.cpp shapes: one
 * table in tokenizer.c), found by probing its base URL. Called before a run,
 * never by the load loops; many calls run concurrently on keep-alive
 * connections, batched where the endpoint takes lists. */
struct lg_tokenizer_config {
  const char *base_url;     /* http://host:port */
  const char *model;        /* "model" where the dialect sends one */
  const char *api_key;      /* NULL: "Bearer None", as the reference */
  double timeout_s;         /* per call; <= 0: 600 */
  int max_parallel;         /* calls in flight; <= 0: 8 */
};
struct lg_tokenizer;
/* NULL with why (one line) when the server answers no known dialect. */
struct lg_tokenizer *lg_tokenizer_open(const struct lg_tokenizer_config *cfg, char *why,
                                       size_t why_len);
void lg_tokenizer_close(struct lg_tokenizer *t);
const char *lg_tokenizer_dialect(const struct lg_tokenizer *t);   /* "sglang", "vllm", "llama.cpp" */
int lg_tokenizer_vocab_size(const struct lg_tokenizer *t);        /* from the server; 0: not said */
/* How the chat template is rendered on this server, or NULL when it cannot be. */
const char *lg_tokenizer_template_method(const struct lg_tokenizer *t);
uint64_t lg_tokenizer_calls(const struct lg_tokenizer *t);        /* since open (probes excluded) */

/* ---------------------------------------------------------------- random dataset
 * benchmark_serving.py's `random` dataset, draw for draw: numpy's legacy RNG
 * seeded with --seed gives the prefix, the input and output lengths (uniform
 * integers on [int(L*ratio), L]), the offsets and -- after the dataset -- the
 * arrival gaps, exactly as the reference draws them. With a tokenizer (the
 * server's own), prompt i is the reference's: ids prefix + (offset_i + i + j)
 * % vocab decoded to text, re-encoded and padded (ids from the reference's
 * per-chunk RNGs) or cut up to ten times until the length is exact, then the
 * chat template (rendered by the server, or DeepSeek-V4's framing) and the
 * client's token count. Without one, completions send those ids as a token
 * array (exact lengths) and chat sends calibrated text (lg_chat_sizer). */
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
  uint64_t seed;            /* np.random.seed: 0 .. 2^32 - 1 */
  double request_rate;      /* finite: arrival gaps drawn after the dataset, as the reference */
  double burstiness;
  struct lg_tokenizer *tokenizer; /* the server's tokenizer, or NULL */
  bool use_chat_template;   /* render the chat template around each prompt (needs a tokenizer
                               that can, or dsv4) */
  bool dsv4;                /* DeepSeek-V4's framing (encoding_dsv4) instead of the template */
  int random_num_workers;   /* the reference's --random-num-workers: 0 = min(CPUs, 8) */
  const struct lg_chat_sizer *chat_sizer; /* chat text without a tokenizer */
  const atomic_int *cancel; /* non-zero: stop building (Ctrl-C) */
};

/* How the prompts were made (recorded in the result). */
struct lg_prompts_info {
  const char *path;         /* "server_tokenizer", "token_ids", "chat_calibrated" */
  const char *tokenizer;    /* dialect, or NULL */
  const char *chat_template;/* how it was rendered, or NULL without one */
  int chat_template_len;    /* subtracted from the input length, as the reference */
  int random_num_workers;   /* chunks (RNG streams) the padding was drawn in */
  double avg_token_mismatch;/* mean(prompt_len - target) */
  int64_t prompts_off_target;
  int64_t tokenizer_calls;
  double build_s;
};

struct lg_workload {
  struct lg_prompt *prompts;
  size_t n_prompts;
  char **bodies;            /* owned bodies, one per prompt */
  int64_t *arrival_ns;      /* finite rate: request i's arrival after the start; else NULL */
  char *first_prompt_json;  /* request 0's "prompt" value (JSON) */
  struct lg_prompts_info info;
};

int lg_workload_random(const struct lg_dataset_config *cfg, struct lg_workload *out,
                       struct st_err *err);
/* The reference's /start_profile (start) or /stop_profile body: the first
 * request's completions payload (model as given), ignore_eos where the
 * reference sends it, and start's {"num_steps": 1, "merge_profiles": true,
 * "profile_by_stage": true}. Heap string. */
char *lg_workload_profile_body_alloc(const struct lg_workload *w, const char *model, bool start,
                                     bool ignore_eos);
/* A workload of n copies of src's first prompt (the reference's warmups). The
 * copies borrow src's body: free them before src. */
void lg_workload_repeat_first(const struct lg_workload *src, size_t n, struct lg_workload *out);
void lg_workload_free(struct lg_workload *w);
/* Chat text: n_prefix_words shared words, a per-request tag, then n_words
 * filler words (heap string). */
char *lg_chat_text_alloc(uint32_t request_index, uint32_t n_prefix_words, uint32_t n_words);
/* DeepSeek-V4's encode_messages([user: content], thinking_mode="thinking")
 * (the reference's encoding_dsv4.py), heap string. */
char *lg_dsv4_user_prompt_alloc(const char *content);

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
  const int64_t *arrival_ns;  /* finite rate: the workload's arrival times (else drawn here) */
  int max_concurrency;        /* <= 0: unlimited */
  double request_rate;        /* requests/s; INFINITY: every request arrives at t = 0 */
  double burstiness;          /* gamma shape; 1 = Poisson */
  uint64_t seed;              /* arrival times */
  int num_workers;            /* loops (threads), 1..LG_MAX_WORKERS; LG_NUM_WORKERS_AUTO (0):
                                 lg_auto_workers() at the start */
  bool reuse_connections;     /* false: a new TCP connection per request (reference) */
  bool keep_text;             /* keep generated text (for --save-detailed) */
  double request_timeout_s;   /* whole request; reference: 6 h */
  double drain_timeout_s;     /* after lg_run_stop(): grace for in-flight requests */
};
/* Fills the reference's defaults (rate inf, burstiness 1, 6 h timeout, ...; loops: auto). */
void lg_config_init(struct lg_config *cfg);

/* ---------------------------------------------------------------- how many loops
 * `--num-workers auto` (the default of bench and run): one loop per
 * LG_STREAMS_PER_LOOP streams (the concurrency, or every request when it is
 * unlimited), at least 1, at most the CPUs this process may run on
 * (sched_getaffinity: a taskset or cgroup cpuset bounds it) and LG_MAX_WORKERS.
 * 128 paced streams x 10 ms/token are ~13 k events/s, ~10% of one core at
 * 8 us/event (docs/bench.md): a loop that busy stamps well under a millisecond late. */
enum { LG_NUM_WORKERS_AUTO = 0, LG_MAX_WORKERS = 64, LG_STREAMS_PER_LOOP = 128 };
/* The CPUs this process may run on (>= 1). */
int lg_usable_cpus(void);
/* Loops for `streams` streams (<= 0: one loop) on `cpus` CPUs. */
int lg_auto_workers(long streams, int cpus);
/* Parses --num-workers: "auto" -> LG_NUM_WORKERS_AUTO, 1..LG_MAX_WORKERS -> it; -1 otherwise. */
int lg_parse_num_workers(const char *text);

/* ---------------------------------------------------------------- client health
 * Whether the client keeps up (docs/figures.md, "Is the client keeping up?"):
 *  - loop busy share: the part of wall time a loop spent outside epoll_wait
 *    (handling events, starting requests; time its thread waited for a CPU
 *    counts as busy). Bytes that arrive while a loop is busy are stamped when
 *    it next returns from epoll_wait.
 *  - send lag (FIG_SEND_LAG): when a request was handed to libcurl against when
 *    it could have gone (its arrival, or the moment its slot freed).
 *  - receive lag (FIG_RECV_LAG): the stamp a read's bytes get (the epoll_wait
 *    return that reported their socket) minus the kernel's receive time of
 *    them (SO_TIMESTAMPNS, read with a 1-byte MSG_PEEK before libcurl reads),
 *    on every LG_RECV_LAG_SAMPLE_EVERY-th readiness event of each loop. It is
 *    the error the client adds to that timestamp. When several segments wait
 *    in a socket the kernel keeps the newest one's time: a lower bound then.
 * Past a threshold the run is "client-bound": its latencies hold the
 * client's delay, not only the server's. */
#define LG_CLIENT_BOUND_BUSY_FRAC 0.90      /* a loop busy this share of the time */
#define LG_CLIENT_BOUND_RECV_LAG_P99_MS 1.0 /* receive lag p99 */
#define LG_CLIENT_BOUND_SEND_LAG_P50_MS 10.0/* send lag p50 (a start burst's p99 is long) */
/* the receive lag's p99 decides only over this many samples: below, it is one of the few
 * largest, and one scheduling hiccup on a lightly loaded client would call it client-bound */
enum { LG_RECV_LAG_SAMPLE_EVERY = 16, LG_CLIENT_BOUND_LEN = 160, LG_CLIENT_BOUND_RECV_LAG_MIN_N = 100 };
/* Client-bound by figs (FIG_LOOP_BUSY, FIG_RECV_LAG, FIG_SEND_LAG), each loop's
 * busy share and its thread's CPU share (CPU time / wall time; NULL: not known),
 * 0..1, n_loops of them: true with the reason in why
 * ("loop 2 of 4 busy 96% (limit 90%)", or the lag past its limit and the busiest loop), else
 * false and why "". The first limit passed decides: busy share, receive lag p99, send lag p50.
 * A lag with loops mostly idle means their threads waited for a CPU (said so). */
bool lg_client_bound(const struct fig_set *figs, const double *loop_busy, const double *loop_cpu,
                     int n_loops, char *why, size_t why_len);

/* ---------------------------------------------------------------- records */
/* Why a request failed. A request succeeds only when the server said it
 * finished: HTTP 200, at least one token chunk, no error event, a finish
 * reason, and a usage chunk with completion_tokens (its token count). */
enum lg_failure {
  LG_OK = 0,
  LG_FAIL_HTTP,          /* status != 200 */
  LG_FAIL_CONNECT,       /* could not connect */
  LG_FAIL_TIMEOUT,       /* request timeout */
  LG_FAIL_TRANSFER,      /* reset / truncated / other transport error */
  LG_FAIL_MALFORMED,     /* a line that is not valid JSON / SSE */
  LG_FAIL_NO_CHUNK,      /* 200 but no token chunk ("Never received a valid chunk ...") */
  LG_FAIL_STREAM_ERROR,  /* a `data: {"error": ...}` event after HTTP 200 */
  LG_FAIL_NO_FINISH,     /* the stream ended without a finish_reason */
  LG_FAIL_NO_USAGE,      /* the stream ended without a usage chunk */
  LG_FAIL_USAGE_NO_COUNT,/* the last usage object had no completion_tokens */
  LG_FAIL_INTERRUPTED,   /* still in flight when the run was stopped */
  LG_FAIL_NOT_SENT,      /* never dispatched (run stopped first), or refused by a dead server:
                            its connection refused after the last request the server answered
                            (detail LG_SERVER_GONE; lg_run_finish) */
  LG_FAIL_N_KINDS
};
const char *lg_failure_name(enum lg_failure f);

enum {
  LG_REC_USAGE_SEEN = 1u << 0,   /* a usage object with completion_tokens arrived */
  LG_REC_STREAM_ERROR = 1u << 1, /* a `data: {"error": ...}` line arrived */
  LG_REC_FINISH_SEEN = 1u << 2,  /* a choice carried a finish_reason */
  LG_REC_USAGE_NO_COUNT = 1u << 3,/* the last usage object had no completion_tokens */
  LG_REC_LAST_CHUNK_NO_TOKEN = 1u << 4, /* the last token chunk was finish-only, without text
                                           (llama.cpp's): it carries no token */
  LG_REC_REFUSED = 1u << 5       /* the connection was refused (ECONNREFUSED): no byte sent */
};
/* The detail of a request a dead server never received (LG_FAIL_NOT_SENT). */
#define LG_SERVER_GONE "server gone"


/* One request, as compact as the figures allow (88 bytes + 4 per chunk gap).
 * Times are nanoseconds; scheduled/dispatch are offsets from the run start. */
struct lg_record {
  int64_t scheduled_ns;        /* when it could have gone: arrival, or slot freed */
  int64_t dispatch_ns;         /* handed to libcurl (the reference's `st`) */
  int64_t ttft_ns;             /* first token chunk - dispatch; 0 when none */
  int64_t e2el_ns;             /* last token chunk - dispatch */
  uint32_t *chunk_gaps_us;     /* n_chunk_gaps gaps between token chunks (ITL), µs */
  char *detail;                /* why it failed (the server's words kept); generated text with keep_text */
  uint32_t n_chunk_gaps;
  uint32_t token_chunks;       /* token chunks received (kept for failures too) */
  uint32_t prompt_len;         /* client-side input tokens */
  int32_t server_prompt_tokens;/* usage.prompt_tokens, -1 when not reported */
  int32_t output_tokens;       /* usage.completion_tokens; 0 for a failure */
  int32_t draft_tokens;        /* llama.cpp timings.draft_n of the final chunk; -1 absent */
  int32_t draft_accepted;      /* timings.draft_n_accepted; -1 absent */
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
  /* Client health (see lg_client_bound): each loop's busy share over its
   * run, and the receive lag samples (µs) of every loop. */
  double loop_busy[LG_MAX_WORKERS];
  double loop_cpu[LG_MAX_WORKERS];  /* each loop thread's CPU time / the same span */
  uint32_t *recv_lag_us;
  size_t n_recv_lag;
};
/* Bytes the records hold (structs + gap arrays + detail strings). */
size_t lg_result_record_bytes(const struct lg_result *r);
void lg_result_free(struct lg_result *r);

/* ---------------------------------------------------------------- live figures */
/* A copy of what the loops published (each every 100 ms, and once more when
 * it ends: the copy taken after the run is over is exact for every count).
 *
 * Window: the current second of the point and the LG_LIVE_WINDOW_S - 1 whole
 * seconds before it (seconds counted from the first dispatch), or the point
 * so far when it is shorter; window_s is the time that covers, and every
 * window rate is divided by it -- never by a shorter span, so a window that
 * is not full yet is not inflated. Window output tokens are counted where
 * their chunks arrived, as the result's time_series does: a completed
 * request's tokens spread evenly over its token-carrying chunks (not a
 * finish-only chunk without text); a failed request's count 0. A chunk of a
 * request still streaming counts one token while the point's first window
 * fills (window_s < LG_LIVE_WINDOW_S - 1), then the point's mean tokens per
 * chunk so far (completed requests' tokens / their chunks). So with one
 * token per chunk (llama.cpp, SGLang's default stream interval without
 * speculative decoding) the window is exact at every moment; with more
 * (speculative decoding) it is below the truth, never above, while the
 * first window fills, and then off by the in-flight requests' deviation
 * from the mean. A stream that later fails counts until it fails.
 *
 * Latency percentiles come from log-linear histograms: each is the value of
 * the ceil(p/100 * n)-th sample to within 1/128 (0.8%); final results never
 * use them. `point` covers every completed request of the run so far. */
enum { LG_LIVE_WINDOW_S = 10, LG_ACCEPT_BINS = 10 };
struct lg_live {
  int64_t total;               /* requests in the run */
  int64_t dispatched, completed, failed, in_flight;
  int max_concurrency;         /* current setting (<= 0: unlimited) */
  double elapsed_s;            /* since the first dispatch; once finished, to the end of the
                                  last request (the result's duration) */
  int64_t output_tokens;       /* of completed requests (the result's total_output_tokens) */
  int64_t input_tokens;        /* the client's count, of completed requests */
  double window_from_s;        /* the window is [window_from_s, window_from_s + window_s] in */
  double window_s;             /* seconds from the first dispatch (see above); 0 before it */
  /* The figures of the model (metrics.h), live. window: FIG_OUTPUT_TPUT (tokens by chunk
   * arrival / window_s), FIG_REQ_TPUT (completions / window_s), FIG_TOTAL_TPUT (the
   * output plus req/s x the point's mean prompt length), the latencies (histograms).
   * point: the same over elapsed_s (FIG_OUTPUT_TPUT once finished: the result's
   * output_throughput), FIG_COMPLETED, FIG_DURATION. Others stay unknown. */
  struct fig_set window, point;
  /* llama.cpp's per-request acceptance (final-chunk timings) of the completed
   * requests so far: the result's per_request_acceptance. */
  int64_t accept_requests;     /* with draft_n > 0 */
  int64_t accept_draft_tokens, accept_accepted_tokens;
  double accept_rate_sum;      /* sum of accepted / drafted per request */
  int64_t accept_rate_bins[LG_ACCEPT_BINS]; /* per-request rate in [k/10, (k+1)/10) (1.0: last) */
  bool finished;               /* every loop has exited */
  /* The window's output figure counts chunks of streams without continuous
   * usage (stream_options.continuous_usage_stats: SGLang, vLLM and the sim
   * send it; llama.cpp does not) at an estimated tokens per chunk (1 while
   * the first window fills, then the completed requests' own): screens
   * label it "(est.)". False when every streaming token is the server's count,
   * or every completed request so far had exactly one token per chunk. */
  bool output_estimated;
  /* Client health: each loop's busy share (0..1) over the window and over the
   * point, and the verdict on the window ("" while the client keeps up). */
  int n_loops;
  double loop_busy_window[LG_MAX_WORKERS], loop_busy_point[LG_MAX_WORKERS];
  double loop_cpu_window[LG_MAX_WORKERS], loop_cpu_point[LG_MAX_WORKERS]; /* thread CPU share */
  char client_bound[LG_CLIENT_BOUND_LEN];
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
  bool has_error;             /* "error": an object or a string (null is no error) */
  bool has_timings;           /* llama.cpp's "timings" object */
  int64_t completion_tokens;  /* usage.completion_tokens; -1 when absent or null, -2 when
                                 impossible (negative, not whole, past 9e15) */
  int64_t prompt_tokens;      /* -1 when absent, -2 when impossible */
  int64_t draft_n;            /* timings.draft_n (llama.cpp); -1 absent, -2 impossible */
  int64_t draft_n_accepted;   /* timings.draft_n_accepted; -1 absent, -2 impossible */
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
