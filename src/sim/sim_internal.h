/* sim internals shared by the files of src/sim (and its tests). Each part is a
 * pure function over its inputs except the event loop in server.c. */
#ifndef SERVETOP_SIM_SIM_INTERNAL_H
#define SERVETOP_SIM_SIM_INTERNAL_H

#include "sim/sim.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The struct that embeds member `field` at address ptr (via void * so that
 * -Wcast-align accepts it: the pointer came from that struct). */
#define SIM_CONTAINER_OF(ptr, type, field) ((type *)(void *)((char *)(ptr)-offsetof(type, field)))

/* ---------------------------------------------------------------- httpd.c: request parser */
enum {
  SIM_HTTP_MAX_HEADER_BYTES = 16 * 1024,
  SIM_HTTP_MAX_BODY_BYTES = 64 * 1024 * 1024,
};

enum sim_http_result {
  SIM_HTTP_COMPLETE = 0,     /* one full request is in the buffer */
  SIM_HTTP_INCOMPLETE = 1,   /* need more bytes */
  SIM_HTTP_BAD = -1,         /* 400 */
  SIM_HTTP_TOO_LARGE = -2,   /* 413 (body) or 431 (headers) */
  SIM_HTTP_UNSUPPORTED = -3, /* 501 (e.g. chunked request bodies) */
};

struct sim_http_request {
  const char *method; /* pointers into the parsed buffer, not NUL-terminated */
  size_t method_len;
  const char *target; /* path + query */
  size_t target_len;
  size_t path_len;   /* target up to '?' */
  int minor_version; /* HTTP/1.x */
  bool keep_alive;   /* after this request */
  bool expect_continue;
  const char *body;
  size_t body_len;
  size_t total_bytes; /* header + body: consume this much */
};

/* Parses one HTTP/1.x request at the start of buf[0..len). Pure: no
 * allocation, never reads past len. */
enum sim_http_result sim_http_parse(const char *buf, size_t len, struct sim_http_request *req);
bool sim_http_path_is(const struct sim_http_request *req, const char *path);
bool sim_http_method_is(const struct sim_http_request *req, const char *method);

/* ---------------------------------------------------------------- tokenize.c */
/* Token count of a text without a real tokenizer (rule in docs/sim.md): a run of
 * ASCII letters is one token (a single space before it is free), every digit,
 * punctuation byte and non-ASCII code point is one token, and any other run of
 * whitespace is one token. */
long sim_count_tokens(const char *text, size_t len);
/* Chat template overhead: tokens added per message and for the generation prompt. */
enum { SIM_CHAT_TOKENS_PER_MESSAGE = 5, SIM_CHAT_TOKENS_GENERATION_PROMPT = 3 };
/* The sim's tokenizer, consistent with sim_count_tokens (docs/sim.md):
 * encodes text into at most cap ids (returns how many there are), and
 * appends one id's text. Special ids: <|im_start|>, <|im_end|>. */
enum { SIM_TOK_SPECIAL_FIRST = 1, SIM_TOK_N_SPECIAL = 2 };
size_t sim_tokenize(const char *text, size_t len, uint32_t vocab, uint32_t *ids, size_t cap);
void sim_detokenize_append(struct sbuf *out, uint32_t id, uint32_t vocab, bool skip_special);
/* The sim's chat template (ChatML): one message, and the generation prompt;
 * their token overheads are SIM_CHAT_TOKENS_PER_MESSAGE / _GENERATION_PROMPT. */
void sim_chat_render_append(struct sbuf *out, const char *role, const char *content);
void sim_chat_generation_prompt_append(struct sbuf *out);
/* Deterministic text of output token i: " word" (one token by the rule above). */
const char *sim_token_text(uint64_t i, size_t *len);
/* Does the prompt look chat-formatted (a chat template's markers)? */
bool sim_text_is_chat_formatted(const char *text, size_t len);

/* ---------------------------------------------------------------- model.c: performance model */
struct sim_perf {
  const struct sim_gpu_preset *gpu;
  const struct sim_model_preset *model;
  const char *weight_dtype; /* "bf16", "fp8", "fp4" */
  double weight_bytes_per_param;
  double kv_bytes_per_elem;
  int tp, ep, dp, ranks; /* ranks = tp * dp when DP attention, else tp */
  double weights_bytes_per_gpu;
  double kv_cell_bytes; /* per token, per GPU (all layers) */
  double mem_fraction_static;
  double kv_pool_bytes_per_gpu;
  double cuda_graph_bytes_per_gpu;
  double activations_bytes_per_gpu;
  long max_total_num_tokens; /* per DP rank (what SGLang logs) */
  int max_running_requests;  /* per DP rank */
  int context_length;
  int chunked_prefill_size;
  int max_prefill_tokens;
  int cuda_graph_max_bs;
  double flops_per_s; /* dense at the weight precision, per GPU */
  double decode_efficiency, prefill_efficiency;
  /* speculative decoding */
  bool spec;
  int spec_steps, spec_topk, spec_draft_tokens;
  bool spec_v2;         /* SGLANG_ENABLE_SPEC_V2: overlapped draft/verify */
  double spec_overhead; /* cost of a draft+verify step relative to a plain decode step */
  double accept_chat, accept_random;
  double simulate_acc_len; /* > 0: pinned mean accept length */
};

/* Builds the model from the config. Fails with SGLang's messages, e.g. "Not
 * enough memory. Please try to increase --mem-fraction-static." */
int sim_perf_init(struct sim_perf *p, const struct sim_config *cfg, struct st_err *err);
/* SGLang's default --mem-fraction-static for a GPU of this size and TP. */
double sim_default_mem_fraction(double gpu_memory_bytes, int tp);
/* Seconds of one decode forward pass (no spec) for a batch of bs requests
 * holding kv_tokens tokens of KV in total. */
double sim_decode_step_s(const struct sim_perf *p, int bs, long kv_tokens);
/* Seconds of one speculative (draft + verify) step. */
double sim_spec_step_s(const struct sim_perf *p, int bs, long kv_tokens);
/* Seconds to prefill new_tokens (compute-bound) on top of cached context. */
double sim_prefill_s(const struct sim_perf *p, long new_tokens, long context_tokens);
/* Probability that draft position k (0-based) is accepted given all before it were. */
double sim_accept_prob(const struct sim_perf *p, bool chat_prompt, int k);
/* Expected accept length (including the bonus token) for one verify step. */
double sim_expected_accept_len(const struct sim_perf *p, bool chat_prompt);
/* Draws the tokens one verify step yields (1 .. steps+1); u01 is a uniform draw source. */
int sim_draw_accept_len(const struct sim_perf *p, bool chat_prompt, uint64_t *rng);
/* Per-user tokens/s at a steady batch of `concurrency` (model only; for tests/docs). */
double sim_per_user_tokens_per_s(const struct sim_perf *p, int concurrency, long ctx_tokens,
                                 bool chat_prompt);
uint64_t sim_rng_next(uint64_t *state);
double sim_rng_uniform(uint64_t *state);

/* ---------------------------------------------------------------- tokenize.c: chunking rule */
/* SGLang's stream-interval rule: after a decode step left the request with
 * out_len output tokens, is a chunk sent now? */
bool sim_stream_should_send(int stream_interval, long out_len, bool finished);

/* ---------------------------------------------------------------- timer.c: deadline heap */
struct sim_server;
struct sim_timer;
typedef void (*sim_timer_fn)(struct sim_server *srv, struct sim_timer *t);
struct sim_timer {
  int64_t at_ns;     /* CLOCK_MONOTONIC */
  size_t heap_index; /* SIM_TIMER_IDLE when not armed */
  sim_timer_fn fire;
};
#define SIM_TIMER_IDLE SIZE_MAX
struct sim_timer_heap {
  struct sim_timer **items;
  size_t n, cap;
};
void sim_timer_init(struct sim_timer *t, sim_timer_fn fire);
void sim_timer_arm(struct sim_timer_heap *h, struct sim_timer *t, int64_t at_ns);
void sim_timer_cancel(struct sim_timer_heap *h, struct sim_timer *t);
/* Earliest armed timer, or NULL. */
struct sim_timer *sim_timer_peek(const struct sim_timer_heap *h);
void sim_timer_heap_free(struct sim_timer_heap *h);

/* ---------------------------------------------------------------- runtime objects */
enum sim_req_kind { SIM_REQ_COMPLETION, SIM_REQ_CHAT, SIM_REQ_GENERATE };
enum sim_req_phase { SIM_PHASE_WAITING, SIM_PHASE_PREFILL, SIM_PHASE_DECODE, SIM_PHASE_DONE };

struct sim_conn;

struct sim_req {
  uint64_t seq; /* 1-based arrival order of generation requests */
  char rid[40];
  struct sim_conn *conn; /* NULL once the client went away */
  enum sim_req_kind kind;
  enum sim_req_phase phase;
  bool stream, include_usage, continuous_usage, chat_prompt, is_warmup;
  bool role_sent;
  long prompt_tokens, max_tokens;
  long prefilled_tokens; /* of prefill_target, computed so far (chunked prefill) */
  long prefill_target;   /* prompt_tokens; after a retraction prompt + the output so far */
  int retractions;       /* times this request was retracted */
  long out_len;          /* tokens generated */
  long sent_len;         /* tokens already in sent chunks */
  int64_t recv_ns, first_token_ns, last_chunk_ns;
  int64_t created_s;      /* "created" field */
  struct sim_timer timer; /* fixed mode: next chunk due; also delayed replies */
  char *chunk_head;       /* "data: {...,\"text\":\"" preformatted for the hot path */
  size_t chunk_head_len;
  struct sbuf trace;           /* JSON array body of chunk send times (µs), when tracing */
  struct sim_req *prev, *next; /* scheduler list */
  bool in_step;                /* part of the batch in flight */
  long step_tokens;            /* prompt tokens this prefill step computes */
  bool fault_bad_json, fault_reset, fault_stall, fault_error_event, fault_no_usage;
  uint64_t prompt_hash;
};

struct sim_conn {
  int fd;
  uint64_t id;
  struct sbuf in;
  struct sbuf out;
  size_t out_sent;     /* bytes of out already written */
  struct sim_req *req; /* the generation request being served, if any */
  bool keep_alive;
  bool want_write;                /* EPOLLOUT registered */
  bool closing;                   /* close once out is flushed */
  bool continue_sent;             /* "100 Continue" already sent for the pending request */
  bool dispatching;               /* inside sim_api_dispatch: no nested parsing */
  struct sim_timer trickle_timer; /* --sim-fault trickle: next bytes */
  struct sim_timer reply_timer;   /* a delayed /health answer */
  struct sim_conn *prev, *next;
};

struct sim_stats {
  /* counters since start (tokenizer-side metrics) */
  uint64_t num_requests, num_aborted, prompt_tokens, generation_tokens;
  /* histograms: bucket counts + sum + count */
  double ttft_sum_s, itl_sum_s, e2e_sum_s;
  uint64_t ttft_count, itl_count, e2e_count;
  uint64_t ttft_buckets[32], itl_buckets[32], e2e_buckets[32];
  /* gauges (updated at Prefill/Decode logs, like SGLang) */
  int num_running, num_queue;
  long num_used_tokens;
  double token_usage, gen_throughput, spec_accept_length, spec_accept_rate;
  /* spec counters: interval (reset at each Decode log) and lifetime */
  double spec_accepted_interval, spec_forward_interval;
  double spec_accepted_total, spec_forward_total;
  long tokens_since_log;
  int64_t last_decode_log_ns;
  uint64_t decode_steps;
  uint64_t eager_decode_steps; /* decode batches above --cuda-graph-max-bs (no CUDA graph) */
  uint64_t retracted_total;    /* requests retracted since start (KV pool full) */
  int retracted_interval;      /* ... since the last Decode log (sglang:num_retracted_reqs) */
  double busy_s; /* GPU busy time, for utilization/power */
};

/* Histogram bucket bounds (seconds), SGLang's defaults. */
extern const double sim_ttft_bounds_s[];
extern const size_t sim_ttft_n_bounds;
extern const double sim_itl_bounds_s[];
extern const size_t sim_itl_n_bounds;
extern const double sim_e2e_bounds_s[];
extern const size_t sim_e2e_n_bounds;
void sim_hist_observe(uint64_t *buckets, const double *bounds, size_t n_bounds, double *sum,
                      uint64_t *count, double value_s);

/* The previous utilization sample of /sim/gpu_memory. */
struct sim_util_sample {
  int64_t at_ns;
  double busy_s;
  double share;
};

struct sim_server {
  const struct sim_config *cfg;
  struct sim_perf perf;
  bool fixed_mode;
  int64_t fixed_ttft_ns, fixed_tpot_ns;
  double time_scale;     /* wall seconds per simulated second = 1 / speed */
  char *model_name;      /* served name */
  char *model_name_json; /* JSON-escaped, without quotes */
  int epfd, listen_fd, timer_fd, signal_fd;
  int stop_fd; /* cfg->stop_fd (borrowed, never closed here) */
  int port;
  int64_t start_ns;
  bool ready; /* warmup done: /health may answer 200 */
  bool stopping;
  struct sim_timer_heap timers;
  int64_t timerfd_armed_ns; /* what timer_fd is set to (0: disarmed) */
  bool use_pwait2;          /* epoll_pwait2 timeouts; false: the timerfd */
  struct sim_conn *conns;   /* list of open connections */
  /* Connections closed during one loop iteration, freed at its end, so an
   * epoll event later in the same batch never touches freed memory. */
  struct sim_conn *dead_conns;
  uint64_t next_conn_id;
  uint64_t next_req_seq;
  struct sim_stats stats;
  FILE *trace;
  /* engine (model mode) */
  struct sim_req *waiting_head, *waiting_tail; /* FIFO queue */
  struct sim_req *running_head;                /* decoding or prefilling */
  struct sim_req *running_tail;
  int n_waiting, n_running;
  int n_active;            /* generation requests accepted and not yet finished or aborted */
  double new_token_ratio;  /* SGLang's estimate of the share of max_tokens still to come */
  bool quiet;              /* no log lines (the virtual run of sched.c) */
  struct sim_timer step_timer;
  bool step_in_flight;
  int64_t step_started_ns;
  int step_prefill_reqs; /* what the step in flight does */
  long step_prefill_tokens;
  bool step_decode;
  uint64_t rng;
  struct sim_timer warmup_timer;
  struct sim_req *warmup_req;
  bool crashed;                       /* --sim-fault crash-after fired */
  struct sim_util_sample util_sample; /* /sim/gpu_memory utilization */
  struct sbuf scratch;                /* formatting */
};

/* ---------------------------------------------------------------- format.c: wire formats */
/* One HTTP chunk of chunked transfer encoding around payload. */
void sim_fmt_http_chunk(struct sbuf *out, const char *payload, size_t len);
void sim_fmt_response_head(struct sbuf *out, int status, const char *content_type,
                           long content_length /* -1: chunked */, bool keep_alive);
const char *sim_http_reason(int status);
/* Full JSON response with a body. */
void sim_fmt_json_response(struct sbuf *out, int status, const char *json, bool keep_alive);
/* Prints a cJSON document compactly into a heap string (xmalloc'd) and frees it. */
struct cJSON;
char *sim_json_take_alloc(struct cJSON *o);
/* OpenAI-style error body as SGLang sends it. */
char *sim_fmt_error_json_alloc(int status, const char *message);

/* ---------------------------------------------------------------- request.c: request bodies */
struct sim_gen_params {
  long prompt_tokens;
  long max_tokens;
  bool stream, include_usage, continuous_usage;
  bool chat_prompt; /* chat endpoint or a chat-template-formatted prompt */
  uint64_t prompt_hash; /* FNV-1a of a string prompt (0 for token ids), for --sim-trace */
};
/* Parses and validates a generation request body. Returns 0, or -1 with
 * SGLang's 400 message in why (bad JSON, wrong types, empty prompt,
 * max_tokens < 1, prompt + max_tokens above context_length). */
int sim_request_parse(enum sim_req_kind kind, const char *body, size_t body_len,
                      long context_length, struct sim_gen_params *g, char *why, size_t why_len);

/* ---------------------------------------------------------------- api.c: endpoints */
/* Routes one complete HTTP request of conn. */
void sim_api_dispatch(struct sim_server *srv, struct sim_conn *conn,
                      const struct sim_http_request *hreq);
/* Queues the chunk that carries req's tokens sent_len..upto_len (no flush).
 * When finished, also the end of the response. Returns false when req is
 * gone (finished, reset by a fault, or the process is crashing): the caller
 * must not touch req then. */
bool sim_api_send_chunk(struct sim_server *srv, struct sim_req *req, long upto_len, bool finished);
/* Frees a request (its connection must no longer point at it). */
void sim_req_free(struct sim_req *req);
/* conn->reply_timer: a delayed /health answer is due. */
void sim_api_reply_timer(struct sim_server *srv, struct sim_timer *t);

/* ---------------------------------------------------------------- batching.c: scheduling */
void sim_engine_init(struct sim_server *srv);
void sim_engine_submit(struct sim_server *srv, struct sim_req *req);
/* The client went away: drop req from the engine and free it. */
void sim_engine_abort(struct sim_server *srv, struct sim_req *req);
/* Fixed mode: sends what is due for req (also when its connection can take
 * more bytes). May free req. */
void sim_engine_pump(struct sim_server *srv, struct sim_req *req);
void sim_engine_fini(struct sim_server *srv);
/* KV slots holding tokens now (prompt computed so far + output). */
long sim_engine_kv_tokens(const struct sim_server *srv);
/* Model mode, the scheduler without the clock (batching.c; the virtual run uses it too):
 * queues a request without starting a step; */
void sim_engine_enqueue(struct sim_server *srv, struct sim_req *req);
/* plans the next forward pass: admits waiting requests (sched.c's rule), retracts when a
 * decode step would overflow the KV pool, marks the batch (req->in_step) and returns its
 * simulated seconds (< 0: nothing to run); */
double sim_engine_plan_step(struct sim_server *srv);
/* applies the finished pass to one request of the batch: the tokens it gained (0: only a
 * prompt chunk); *finished when it is done (it is then off the running list). */
long sim_engine_step_advance(struct sim_server *srv, struct sim_req *req, bool *finished);

/* ---------------------------------------------------------------- sched.c: KV capacity rules */
/* SGLang's constants (docs/sim.md, "KV capacity"): SGLANG_INIT_NEW_TOKEN_RATIO,
 * SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR, SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS,
 * CLIP_MAX_NEW_TOKENS_ESTIMATION and global_config.retract_decode_steps. */
#define SIM_SCHED_INIT_NEW_TOKEN_RATIO 0.7
#define SIM_SCHED_MIN_NEW_TOKEN_RATIO_FACTOR 0.14
#define SIM_SCHED_NEW_TOKEN_RATIO_DECAY_STEPS 600
#define SIM_SCHED_CLIP_MAX_NEW_TOKENS 4096
#define SIM_SCHED_RETRACT_DECODE_STEPS 20
/* The ratio after one decode step without retraction (linear decay to the floor). */
double sim_sched_ratio_decay(double ratio);
/* Tokens a request occupies once prefilled (prompt + output so far) and the tokens the
 * admission rule still expects of it: min(max_tokens - out_len, 4096) x ratio. */
long sim_sched_req_tokens(const struct sim_req *r);
double sim_sched_req_future(const struct sim_req *r, double ratio);
/* Does a request fit beside requests that hold or expect `committed` tokens? */
bool sim_sched_admit_fits(double committed, const struct sim_req *r, double ratio,
                          long capacity_tokens);
/* SGLang's retract_decode: reqs[0..n) are decoding and free_tokens slots are free, each
 * request needing tokens_per_req this step. Orders reqs so that the victims are last (most
 * output first, then shortest prompt), returns how many to retract from the end (0: the step
 * fits; never all) and sets *ratio to SGLang's new estimate. */
int sim_sched_retract(struct sim_req **reqs, int n, long free_tokens, long tokens_per_req,
                      double *ratio);

/* The virtual run (sim_vrun) is declared in sim.h. */

/* ---------------------------------------------------------------- server.c: I/O */
enum { SIM_CONN_HIGH_WATER_BYTES = 256 * 1024 };
/* Writes as much of conn->out as the socket takes; arms EPOLLOUT for the rest.
 * Returns false when the connection was closed (conn is then freed). */
bool sim_conn_flush(struct sim_server *srv, struct sim_conn *conn);
/* The response on conn is complete: keep-alive or close. */
void sim_conn_response_done(struct sim_server *srv, struct sim_conn *conn);
void sim_conn_close(struct sim_server *srv, struct sim_conn *conn);
/* Bytes queued but not written yet. */
size_t sim_conn_backlog(const struct sim_conn *conn);
int64_t sim_now_ns(void);
void sim_log(const struct sim_server *srv, const char *fmt, ...) ST_PRINTF(2, 3);
/* Simulated seconds → wall nanoseconds (honours --sim-speed). */
int64_t sim_wall_ns(const struct sim_server *srv, double sim_seconds);

/* ---------------------------------------------------------------- tokenapi.c */
/* POST /tokenize or /detokenize (detok): the reply JSON (SGLang's shapes) and
 * its status (200, or 400 with SGLang's error object). */
char *sim_tokenizer_endpoint_alloc(const struct sim_server *srv, bool detok, const char *body,
                                   size_t body_len, int *status);

/* ---------------------------------------------------------------- info.c: JSON documents */
char *sim_info_server_json_alloc(const struct sim_server *srv);
char *sim_info_models_json_alloc(const struct sim_server *srv);
char *sim_info_model_card_json_alloc(const struct sim_server *srv);
char *sim_info_model_info_json_alloc(const struct sim_server *srv);
/* Not const: utilization is sampled between calls. */
char *sim_info_gpu_memory_json_alloc(struct sim_server *srv);
char *sim_info_metrics_text_alloc(const struct sim_server *srv);

#endif
