/* sim: a simulated SGLang-compatible inference server (`servetop sim`).
 *
 * One epoll loop serves SGLang's HTTP endpoints (OpenAI completions and chat
 * streaming, /health, /v1/models, /get_server_info, /metrics, ...) and times
 * every token either from a stated performance model of a GPU + model
 * (docs/sim.md) or, in fixed-latency mode, from two exact numbers. It always
 * says that it is simulated. */
#ifndef SERVETOP_SIM_SIM_H
#define SERVETOP_SIM_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/util.h"

#include <limits.h>

/* An int option nobody typed (every value a user can type is checked). */
#define SIM_UNSET_INT INT_MIN

/* --sim-fault KIND[=N] */
enum sim_fault_kind {
  SIM_FAULT_CRASH_AFTER,    /* the process exits while serving request N+1 */
  SIM_FAULT_STALL_AFTER,    /* request N+1 and later never get another byte */
  SIM_FAULT_BAD_JSON_AFTER, /* request N+1 and later get a malformed SSE line */
  SIM_FAULT_RESET_AFTER,    /* request N+1 and later: connection closed mid-stream */
  SIM_FAULT_HTTP_500,       /* every generation request: 500 (N > 0: every Nth) */
  SIM_FAULT_HTTP_503,       /* every generation request: 503 (N > 0: every Nth) */
  SIM_FAULT_TRICKLE,        /* response bytes sent slowly: N bytes per ms (default 1) */
  SIM_FAULT_ERROR_EVENT_AFTER, /* request N+1 and later: a `data: {"error": ...}` event after the first chunk */
  SIM_FAULT_NO_USAGE_AFTER,    /* request N+1 and later: the stream has no usage chunk */
};

struct sim_fault {
  enum sim_fault_kind kind;
  long n;
};

/* Everything `servetop sim` can be told. Strings are borrowed (argv/env) and
 * must outlive sim_main(). sim_config_init() sets SGLang's defaults. */
struct sim_config {
  /* SGLang launch_server flags */
  const char *model_path;        /* --model / --model-path */
  const char *served_model_name; /* NULL: model_path */
  const char *host;
  int port; /* 0: pick a free port */
  int tp_size, ep_size, dp_size;
  bool enable_dp_attention;
  double mem_fraction_static; /* <= 0: SGLang's default rule */
  int max_running_requests;   /* <= 0: SGLang's default rule */
  int chunked_prefill_size;   /* <= 0: default (8192) */
  int max_prefill_tokens;     /* prompt tokens in one prefill batch (16384) */
  int cuda_graph_max_bs;      /* <= 0: default by GPU memory */
  int context_length;         /* <= 0 (SIM_UNSET_INT by default): the model preset's;
                                 typed, it must be >= 1 */
  const char *kv_cache_dtype; /* "auto", "fp8_e4m3", "fp8_e5m2", "bf16" */
  const char *quantization;   /* NULL: from the model name / preset */
  int stream_interval;
  int decode_log_interval;
  bool enable_metrics;
  bool disable_radix_cache;
  bool skip_server_warmup;
  const char *speculative_algorithm; /* NULL/"": off; "EAGLE", "EAGLE3", "NEXTN", "STANDALONE" */
  int speculative_num_steps;
  int speculative_eagle_topk;
  int speculative_num_draft_tokens;
  /* environment */
  bool spec_v2;            /* SGLANG_ENABLE_SPEC_V2 */
  double simulate_acc_len; /* SGLANG_SIMULATE_ACC_LEN; <= 0: unset */
  /* simulator settings (--sim-*) */
  const char *gpu_name;     /* preset key: "h200" ... */
  int gpus;                 /* GPUs on the node; <= 0: tp*dp */
  const char *model_preset; /* NULL: matched from model_path */
  double fixed_ttft_ms;     /* NaN: unset (typed, >= 0); fixed mode needs both */
  double fixed_tpot_ms;
  double accept_chat;        /* per-position draft acceptance, chat prompts */
  double accept_random;      /* ... raw random-token prompts */
  double decode_efficiency;  /* fraction of HBM bandwidth a decode step reaches */
  double prefill_efficiency; /* fraction of dense FLOP/s a prefill reaches */
  double speed;              /* time scale: 2 = everything twice as fast */
  double health_delay_ms;    /* /health latency once up (SGLang: ~1 s) */
  double warmup_ms;          /* simulated weight load + warmup before ready */
  const char *port_file;     /* write the port + "\n" once listening */
  const char *trace_path;    /* JSON lines of server-side timestamps */
  uint64_t seed;
  /* embedding: in_process leaves signals alone (no signalfd, no mask); the
   * server stops when stop_fd (e.g. an eventfd, -1 = none) becomes readable */
  bool in_process;
  int stop_fd;
  struct sim_fault faults[16];
  size_t n_faults;
  /* flags servetop sim does not know: accepted, warned about, published */
  const char *const *unrecognized_args;
  size_t n_unrecognized_args;
};

void sim_config_init(struct sim_config *cfg);

/* ---------------------------------------------------------------- the command line */
/* What `servetop sim`'s flags fill in: the config and the values parsed before it. */
struct sim_options {
  struct sim_config cfg;
  struct opt_list faults;     /* --sim-fault, each as given */
  const char *seed_text;      /* --sim-seed */
  bool trust_remote_code;     /* accepted */
  const char *tokenizer_path; /* accepted */
};
enum { SIM_OPTIONS_MAX = 64 };
/* The flag table (src/sim/options.c), its targets in o: up to max rows into specs (and
 * modelled[i]: whether flag i moves the sim's timing or capacity; may be NULL). Returns the
 * number of rows (max must be at least SIM_OPTIONS_MAX). */
size_t sim_options_specs(struct sim_options *o, struct opt_spec *specs, bool *modelled,
                         size_t max);
/* Whether the sim models flag name (len bytes, no dashes, any spelling of its row): false for
 * one it accepts as it is (--host, --disable-radix-cache) or does not know (accepted, warned
 * about, listed in /get_server_info's unrecognized_args). */
bool sim_flag_modelled(const char *name, size_t len);
/* Parses "crash-after=3", "http-500", "trickle=4" ... into f. */
int sim_fault_parse(const char *text, struct sim_fault *f, struct st_err *err);
/* Checks ranges and names (GPU and model presets, spec flags). */
int sim_config_validate(const struct sim_config *cfg, struct st_err *err);
bool sim_config_fixed_mode(const struct sim_config *cfg);

/* Runs the server until SIGINT/SIGTERM (returns 0) or a startup failure
 * (returns -1 with err set; e.g. SGLang's "Not enough memory" message).
 * Logs SGLang-format lines on stderr. Unless cfg->in_process, SIGINT/SIGTERM
 * are blocked in the calling thread while it runs, set to their default
 * action and read from a signalfd (all restored on return). cfg->stop_fd, when
 * set, stops it from another thread. */
int sim_main(const struct sim_config *cfg, struct st_err *err);

/* The virtual run: the scheduler of batching.c over a closed-loop workload in simulated time
 * (no sockets, no clock): `concurrency` clients, each sending a request of isl prompt tokens
 * and osl output tokens as soon as its previous one ends, n_requests in all. Deterministic
 * (a fixed seed for speculative acceptance). For tests, docs/sim.md's tables and a tuner's
 * offline what-if (tests/bench/bench_tune.c). */
struct sim_vrun_workload {
  int concurrency;
  long isl, osl;
  int n_requests;
};
struct sim_vrun_result {
  double ttft_mean_s, ttft_p99_s; /* p99: nearest rank */
  double tpot_mean_s;             /* (e2e - ttft) / (osl - 1), averaged */
  double output_tok_s;            /* output tokens / makespan */
  double makespan_s;
  uint64_t retractions;
  uint64_t decode_steps, eager_decode_steps;
  int max_running, max_queue;
  long kv_capacity_tokens;
};
int sim_vrun(const struct sim_config *cfg, const struct sim_vrun_workload *w,
             struct sim_vrun_result *res, struct st_err *err);

/* ---------------------------------------------------------------- presets (docs/sim.md) */
struct sim_gpu_preset {
  const char *key;  /* "h200" */
  const char *name; /* "NVIDIA H200" */
  double memory_bytes;
  double hbm_bytes_per_s;
  double bf16_flops; /* dense, per second */
  double fp8_flops;
  double fp4_flops; /* 0: no FP4 tensor cores */
  double idle_power_w;
  double max_power_w;
};

struct sim_model_preset {
  const char *key;   /* "qwen3.5-397b" */
  const char *match; /* lowercase substring of --model that selects it */
  double total_params;
  double active_params; /* per token (MoE: shared + routed experts used) */
  int layers;
  int kv_layers; /* layers with a growing KV cache (hybrids: full-attention ones) */
  int kv_heads;  /* MHA/GQA KV heads (0 for MLA) */
  int head_dim;
  int attn_dim;   /* query heads x head dim (attention FLOPs) */
  int mla_kv_dim; /* kv_lora_rank + qk_rope_head_dim (0 for MHA) */
  int context_length;
  int vocab_size;
  const char *default_dtype; /* weight precision when the name does not say: "bf16" */
  bool is_moe;
};

const struct sim_gpu_preset *sim_gpu_find(const char *key);
const struct sim_model_preset *sim_model_find(const char *key);
/* Preset matched from a --model path ("Qwen/Qwen3.5-397B-A17B-FP8"), or NULL. */
const struct sim_model_preset *sim_model_match(const char *model_path);
size_t sim_gpu_count(void);
const struct sim_gpu_preset *sim_gpu_at(size_t i);
size_t sim_model_count(void);
const struct sim_model_preset *sim_model_at(size_t i);

#endif
