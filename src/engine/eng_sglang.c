/* SGLang: `python3 -m sglang.launch_server` (or `sglang serve`), its flags,
 * log lines, sglang: metrics and /get_server_info. servetop sim speaks the
 * same, so eng_sim.c reuses the readers here. */
#include "engine/engine_internal.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---------------------------------------------------------------- recipes */
static size_t sglang_recognise(char *const *w, size_t n, size_t i) {
  (void)n;
  return eng_recognise_module_or_serve(w, i, "sglang.launch_server", "sglang");
}

const struct eng_flag eng_sglang_flags[] = {
    {{"--mem-fraction-static"}, ENG_KNOB_KV_CACHE, ENG_VALUE_FRACTION},
    {{"--max-running-requests"}, ENG_KNOB_BATCH_CAP, ENG_VALUE_COUNT},
    {{"--context-length"}, ENG_KNOB_NONE, ENG_VALUE_COUNT},
    {{"--cuda-graph-max-bs"}, ENG_KNOB_GRAPH_BATCH, ENG_VALUE_COUNT},
    {{"--chunked-prefill-size"}, ENG_KNOB_NONE, ENG_VALUE_INT},
    {{"--max-prefill-tokens"}, ENG_KNOB_NONE, ENG_VALUE_COUNT},
    {{"--speculative-num-steps"}, ENG_KNOB_NONE, ENG_VALUE_COUNT},
    {{"--speculative-eagle-topk"}, ENG_KNOB_NONE, ENG_VALUE_COUNT},
    {{"--speculative-num-draft-tokens"}, ENG_KNOB_NONE, ENG_VALUE_COUNT},
    {{"--stream-interval"}, ENG_KNOB_NONE, ENG_VALUE_COUNT},
    {{NULL}, ENG_KNOB_NONE, ENG_VALUE_ANY},
};

/* Every flag of SGLang's server (without dashes), as the engine table's full
 * list: `--set` keys that are none of these are refused with a did-you-mean
 * (eng_check_knob_name). From SGLang's own table of its server arguments,
 * docs/advanced_features/server_arguments.md of sgl-project/sglang at commit
 * b36e8e198b71553316b55bce53de6ecf9b3a9a47 (the v0.5.4 series; every flag
 * python/sglang/srt/server_args.py's add_cli_args registers then), and the
 * later flags InferenceX's SGLang launch scripts use (v0.5.14 images). A flag
 * newer than this list goes in with --server-arg. docs/recipes.md says so. */
static const char *const sglang_all_flags[] = {
    "model-path", "model", "tokenizer-path", "tokenizer-mode", "tokenizer-worker-num",
    "skip-tokenizer-init", "load-format", "model-loader-extra-config", "trust-remote-code",
    "context-length", "is-embedding", "enable-multimodal", "revision", "model-impl", "host", "port",
    "skip-server-warmup", "warmups", "nccl-port", "dtype", "quantization",
    "quantization-param-path", "modelopt-quant", "modelopt-checkpoint-restore-path",
    "modelopt-checkpoint-save-path", "kv-cache-dtype", "enable-fp32-lm-head", "mem-fraction-static",
    "max-running-requests", "max-queued-requests", "max-total-tokens", "chunked-prefill-size",
    "max-prefill-tokens", "schedule-policy", "enable-priority-scheduling",
    "schedule-low-priority-values-first", "priority-scheduling-preemption-threshold",
    "schedule-conservativeness", "page-size", "hybrid-kvcache-ratio", "swa-full-tokens-ratio",
    "disable-hybrid-swa-memory", "device", "elastic-ep-backend", "mooncake-ib-device",
    "tensor-parallel-size", "tp-size", "pipeline-parallel-size", "pp-size",
    "pp-max-micro-batch-size", "stream-interval", "stream-output", "random-seed",
    "constrained-json-whitespace-pattern", "constrained-json-disable-any-whitespace",
    "watchdog-timeout", "dist-timeout", "download-dir", "base-gpu-id", "gpu-id-step",
    "sleep-on-idle", "mm-process-config", "log-level", "log-level-http", "log-requests",
    "log-requests-level", "crash-dump-folder", "crash-on-nan", "show-time-cost", "enable-metrics",
    "enable-metrics-for-all-schedulers", "tokenizer-metrics-custom-labels-header",
    "tokenizer-metrics-allowed-custom-labels", "bucket-time-to-first-token",
    "bucket-inter-token-latency", "bucket-e2e-request-latency", "collect-tokens-histogram",
    "prompt-tokens-buckets", "generation-tokens-buckets", "gc-warning-threshold-secs",
    "decode-log-interval", "enable-request-time-stats-logging", "kv-events-config", "enable-trace",
    "oltp-traces-endpoint", "api-key", "served-model-name", "weight-version", "chat-template",
    "completion-template", "file-storage-path", "enable-cache-report", "reasoning-parser",
    "tool-call-parser", "sampling-defaults", "tool-server", "data-parallel-size", "dp-size",
    "load-balance-method", "load-watch-interval", "prefill-round-robin-balance", "dist-init-addr",
    "nccl-init-addr", "nnodes", "node-rank", "json-model-override-args",
    "preferred-sampling-params", "enable-lora", "max-lora-rank", "lora-target-modules",
    "lora-paths", "max-loras-per-batch", "max-loaded-loras", "lora-eviction-policy", "lora-backend",
    "max-lora-chunk-size", "attention-backend", "prefill-attention-backend",
    "decode-attention-backend", "sampling-backend", "grammar-backend", "mm-attention-backend",
    "nsa-prefill", "nsa-decode", "fp8-gemm-backend", "speculative-algorithm",
    "speculative-draft-model-path", "speculative-draft-model", "speculative-draft-model-revision",
    "speculative-num-steps", "speculative-eagle-topk", "speculative-num-draft-tokens",
    "speculative-accept-threshold-single", "speculative-accept-threshold-acc",
    "speculative-token-map", "speculative-attention-mode", "speculative-moe-runner-backend",
    "speculative-moe-a2a-backend", "speculative-ngram-min-match-window-size",
    "speculative-ngram-max-match-window-size", "speculative-ngram-min-bfs-breadth",
    "speculative-ngram-max-bfs-breadth", "speculative-ngram-match-type",
    "speculative-ngram-branch-length", "speculative-ngram-capacity", "expert-parallel-size",
    "ep-size", "ep", "moe-a2a-backend", "moe-runner-backend", "flashinfer-mxfp4-moe-precision",
    "enable-flashinfer-allreduce-fusion", "deepep-mode", "ep-num-redundant-experts",
    "ep-dispatch-algorithm", "init-expert-location", "enable-eplb", "eplb-algorithm",
    "eplb-rebalance-num-iterations", "eplb-rebalance-layers-per-chunk",
    "eplb-min-rebalancing-utilization-threshold", "expert-distribution-recorder-mode",
    "expert-distribution-recorder-buffer-size", "enable-expert-distribution-metrics",
    "deepep-config", "moe-dense-tp-size", "max-mamba-cache-size", "mamba-ssm-dtype",
    "mamba-full-memory-ratio", "multi-item-scoring-delimiter", "enable-hierarchical-cache",
    "hicache-ratio", "hicache-size", "hicache-write-policy", "radix-eviction-policy",
    "hicache-io-backend", "hicache-mem-layout", "hicache-storage-backend",
    "hicache-storage-prefetch-policy", "hicache-storage-backend-extra-config", "enable-lmcache",
    "enable-double-sparsity", "ds-channel-config-path", "ds-heavy-channel-num",
    "ds-heavy-token-num", "ds-heavy-channel-type", "ds-sparse-decode-threshold", "cpu-offload-gb",
    "offload-group-size", "offload-num-in-group", "offload-prefetch-step", "offload-mode",
    "disable-radix-cache", "cuda-graph-max-bs", "cuda-graph-bs", "disable-cuda-graph",
    "disable-cuda-graph-padding", "enable-profile-cuda-graph", "enable-cudagraph-gc",
    "enable-nccl-nvls", "enable-symm-mem", "disable-flashinfer-cutlass-moe-fp4-allgather",
    "enable-tokenizer-batch-encode", "disable-outlines-disk-cache", "disable-custom-all-reduce",
    "enable-mscclpp", "enable-torch-symm-mem", "disable-overlap-schedule", "enable-mixed-chunk",
    "enable-dp-attention", "enable-dp-lm-head", "enable-two-batch-overlap",
    "enable-single-batch-overlap", "tbo-token-distribution-threshold", "enable-torch-compile",
    "enable-torch-compile-debug-mode", "enable-piecewise-cuda-graph", "piecewise-cuda-graph-tokens",
    "torch-compile-max-bs", "piecewise-cuda-graph-max-tokens", "torchao-config",
    "enable-nan-detection", "enable-p2p-check", "triton-attention-reduce-in-fp32",
    "triton-attention-num-kv-splits", "triton-attention-split-tile-size",
    "num-continuous-decode-steps", "delete-ckpt-after-loading", "enable-memory-saver",
    "enable-weights-cpu-backup", "allow-auto-truncate", "enable-custom-logit-processor",
    "flashinfer-mla-disable-ragged", "disable-shared-experts-fusion",
    "disable-chunked-prefix-cache", "disable-fast-image-processor", "keep-mm-feature-on-device",
    "enable-return-hidden-states", "scheduler-recv-interval", "numa-node",
    "enable-layerwise-nvtx-marker", "enable-attn-tp-input-scattered",
    "enable-nsa-prefill-context-parallel", "forward-hooks", "debug-tensor-dump-output-folder",
    "debug-tensor-dump-input-file", "debug-tensor-dump-inject", "enable-dynamic-batch-tokenizer",
    "dynamic-batch-tokenizer-batch-size", "dynamic-batch-tokenizer-batch-timeout",
    "disaggregation-mode", "disaggregation-transfer-backend", "disaggregation-bootstrap-port",
    "disaggregation-decode-tp", "disaggregation-decode-dp", "disaggregation-prefill-pp",
    "disaggregation-ib-device", "disaggregation-decode-enable-offload-kvcache",
    "num-reserved-decode-tokens", "disaggregation-decode-polling-interval", "custom-weight-loader",
    "weight-loader-disable-mmap", "remote-instance-weight-loader-seed-instance-ip",
    "remote-instance-weight-loader-seed-instance-service-port",
    "remote-instance-weight-loader-send-weights-group-ports", "enable-pdmux", "pdmux-config-path",
    "sm-group-num", "enable-deterministic-inference", "enable-ep-moe", "enable-deepep-moe",
    "enable-flashinfer-cutlass-moe", "enable-flashinfer-cutedsl-moe",
    "enable-flashinfer-trtllm-moe", "enable-triton-kernel-moe", "enable-flashinfer-mxfp4-moe",
    "config",
    /* later flags InferenceX's SGLang scripts pass (v0.5.14) */
    "cuda-graph-max-bs-decode", "disable-flashinfer-autotune", "disable-piecewise-cuda-graph",
    "enable-aiter-allreduce-fusion", "fp4-gemm-backend", "mamba-scheduler-strategy",
    "nsa-decode-backend", "nsa-prefill-backend",
    NULL,
};

void eng_sglang_chain_spec_args(struct launch_cmd *out, const char *algorithm, long steps) {
  char num[24];
  launch_cmd_add_arg(out, "--speculative-algorithm");
  launch_cmd_add_arg(out, algorithm);
  launch_cmd_add_arg(out, "--speculative-num-steps");
  snprintf(num, sizeof num, "%ld", steps);
  launch_cmd_add_arg(out, num);
  launch_cmd_add_arg(out, "--speculative-eagle-topk");
  launch_cmd_add_arg(out, "1");
  launch_cmd_add_arg(out, "--speculative-num-draft-tokens");
  snprintf(num, sizeof num, "%ld", steps + 1);
  launch_cmd_add_arg(out, num);
}

extern const struct eng_ops eng_sglang_ops;

/* EAGLE/NEXTN with topk 1 runs the v2 speculative path only with
 * SGLANG_ENABLE_SPEC_V2=1 (InferenceX's convention since #1017) on images
 * where V2 was not yet the default: the version-bound rule in eng_version.c
 * says which. */
static bool sglang_spec_advice(char *const *argv, size_t argc, char *const *env, size_t n_env,
                               char *buf, size_t buf_bytes, const char **flag) {
  const char *algo = eng_arg_value(&eng_sglang_ops, argv, argc, "speculative-algorithm");
  const char *topk = eng_arg_value(&eng_sglang_ops, argv, argc, "speculative-eagle-topk");
  if (!algo || !(strcmp(algo, "EAGLE") == 0 || strcmp(algo, "NEXTN") == 0 ||
                 strcmp(algo, "EAGLE3") == 0) ||
      (topk && strcmp(topk, "1") != 0))
    return false;
  static const char v2_name[] = "SGLANG_ENABLE_SPEC_V2";
  const char *v2 = NULL; /* the last assignment wins */
  for (size_t i = 0; i < n_env; i++)
    if (strncmp(env[i], v2_name, sizeof v2_name - 1) == 0 && env[i][sizeof v2_name - 1] == '=')
      v2 = env[i] + sizeof v2_name;
  if (v2 && (strcmp(v2, "1") == 0 || strcasecmp(v2, "true") == 0))
    return false;
  snprintf(buf, buf_bytes,
           "SGLang %s with topk 1 without SGLANG_ENABLE_SPEC_V2=1 (the convention since "
           "InferenceX #1017; the v1 path is slower)",
           algo);
  *flag = "speculative-algorithm";
  return true;
}

/* The version-bound rules' checks (eng_version.c's table). */
bool eng_sglang_spec_v2_missing(char *const *argv, size_t argc, char *const *env, size_t n_env,
                                struct eng_vrule_hit *hit) {
  const char *flag = NULL;
  if (!sglang_spec_advice(argv, argc, env, n_env, hit->what, sizeof hit->what, &flag))
    return false;
  hit->at_launch = true; /* a prefix (or export) before the launch command */
  hit->env_name = "SGLANG_ENABLE_SPEC_V2";
  return true;
}

bool eng_sglang_spec_v2_retired(char *const *argv, size_t argc, char *const *env, size_t n_env,
                                struct eng_vrule_hit *hit) {
  (void)argv, (void)argc;
  static const char name[] = "SGLANG_ENABLE_SPEC_V2";
  for (size_t i = 0; i < n_env; i++)
    if (strncmp(env[i], name, sizeof name - 1) == 0 && env[i][sizeof name - 1] == '=') {
      snprintf(hit->what, sizeof hit->what,
               "%s is set, but this SGLang no longer reads it: every speculative algorithm runs "
               "the V2 workers (a no-op that only logs a removal notice); it can go",
               env[i]);
      hit->env_name = "SGLANG_ENABLE_SPEC_V2";
      return true;
    }
  return false;
}

/* ---------------------------------------------------------------- launching */
static int sglang_program_words(struct launch_cmd *cmd, const struct eng_target *t,
                                struct st_err *err) {
  (void)t, (void)err;
  launch_cmd_add_arg(cmd, "python3");
  launch_cmd_add_arg(cmd, "-m");
  launch_cmd_add_arg(cmd, "sglang.launch_server");
  return 0;
}

static bool sglang_probe(char *why, size_t why_bytes) {
  const char *argv[] = {"python3", "-c", "import sglang", NULL};
  return eng_probe_gpu_command(argv, "python3 cannot import sglang", why, why_bytes);
}

/* ---------------------------------------------------------------- log lines */
static const struct eng_log_field batch_fields[] = {
    ENG_FIELD("#running-req", ENG_FIELD_INT, running, ENG_LOG_HAS_RUNNING),
    ENG_FIELD("#queue-req", ENG_FIELD_INT, queued, ENG_LOG_HAS_QUEUED),
    ENG_FIELD("token usage", ENG_FIELD_NUM, token_usage_frac, ENG_LOG_HAS_TOKEN_USAGE),
    ENG_FIELD("full token usage", ENG_FIELD_NUM, token_usage_frac, ENG_LOG_HAS_TOKEN_USAGE),
    ENG_FIELD("#token", ENG_FIELD_INT, num_tokens, ENG_LOG_HAS_NUM_TOKENS),
    ENG_FIELD("#full token", ENG_FIELD_INT, num_tokens, ENG_LOG_HAS_NUM_TOKENS),
    ENG_FIELD("accept len", ENG_FIELD_NUM, accept_length, ENG_LOG_HAS_ACCEPT_LENGTH),
    ENG_FIELD("accept rate", ENG_FIELD_NUM, accept_rate_frac, ENG_LOG_HAS_ACCEPT_RATE),
    ENG_FIELD("gen throughput (token/s)", ENG_FIELD_NUM, gen_tok_per_s,
              ENG_LOG_HAS_GEN_THROUGHPUT),
    ENG_FIELD("input throughput (token/s)", ENG_FIELD_NUM, input_tok_per_s,
              ENG_LOG_HAS_INPUT_THROUGHPUT),
    ENG_FIELD("#new-seq", ENG_FIELD_INT, new_seq, ENG_LOG_HAS_NEW_SEQ),
    ENG_FIELD("#new-token", ENG_FIELD_INT, new_tokens, ENG_LOG_HAS_NEW_TOKENS),
    ENG_FIELD("#cached-token", ENG_FIELD_INT, cached_tokens, ENG_LOG_HAS_CACHED_TOKENS),
};

static const struct eng_log_field kv_fields[] = {
    ENG_FIELD("max_total_num_tokens", ENG_FIELD_INT, max_total_num_tokens,
              ENG_LOG_HAS_MAX_TOTAL_TOKENS),
    ENG_FIELD("max_running_requests", ENG_FIELD_INT, max_running_requests,
              ENG_LOG_HAS_MAX_RUNNING),
    ENG_FIELD("context_len", ENG_FIELD_INT, context_len, ENG_LOG_HAS_CONTEXT_LEN),
};

static void parse_batch(const char *rest, struct eng_log_record *r) {
  /* rest follows "Prefill batch" / "Decode batch": "[ [iter]], k: v, ..." */
  while (*rest == ' ' || *rest == '.')
    rest++;
  if (*rest == '[') {
    int64_t iter;
    if (eng_leading_int(rest + 1, strlen(rest + 1), &iter))
      r->iter = iter;
    const char *close = strchr(rest, ']');
    rest = close ? close + 1 : rest;
  }
  while (*rest == ',' || *rest == ' ')
    rest++;
  struct eng_pair pairs[ENG_MAX_PAIRS];
  size_t n = eng_split_pairs(rest, ": ", pairs, ENG_MAX_PAIRS);
  eng_apply_fields(pairs, n, batch_fields, ST_ARRAY_LEN(batch_fields), r);
}

static void parse_kv_capacity(const char *body, struct eng_log_record *r) {
  struct eng_pair pairs[ENG_MAX_PAIRS];
  size_t n = eng_split_pairs(body, "=", pairs, ENG_MAX_PAIRS);
  eng_apply_fields(pairs, n, kv_fields, ST_ARRAY_LEN(kv_fields), r);
}

enum eng_log_kind eng_sglang_parse_log_line(const char *line, struct eng_log_record *r) {
  eng_log_record_clear(r);
  const char *body = eng_strip_prefix(line, r->rank_tag, sizeof(r->rank_tag));
  const char *hit;
  if ((hit = strstr(body, "Decode batch")) != NULL) {
    r->kind = ENG_LOG_DECODE;
    parse_batch(hit + strlen("Decode batch"), r);
  } else if ((hit = strstr(body, "Prefill batch")) != NULL) {
    r->kind = ENG_LOG_PREFILL;
    parse_batch(hit + strlen("Prefill batch"), r);
  } else if ((hit = strstr(body, "max_total_num_tokens=")) != NULL) {
    r->kind = ENG_LOG_KV_CAPACITY;
    parse_kv_capacity(hit, r);
  } else if ((hit = strstr(body, "server_args=ServerArgs(")) != NULL) {
    r->kind = ENG_LOG_SERVER_ARGS;
    const char *dp = strstr(hit, " dp_size=");
    if (!dp)
      dp = strstr(hit, "(dp_size=");
    if (dp && eng_leading_int(dp + strlen(" dp_size="), strcspn(dp + strlen(" dp_size="), ",)"),
                              &r->dp_size))
      r->has |= ENG_LOG_HAS_DP_SIZE;
  } else if (strstr(body, ENG_SGLANG_READY_LINE)) {
    r->kind = ENG_LOG_READY;
  }
  return r->kind;
}

/* ---------------------------------------------------------------- /metrics */
static bool sglang_owns_metrics(const struct prom_set *set) {
  return prom_find(set, "sglang:num_running_reqs", NULL) ||
         prom_find(set, "sglang:token_usage", NULL);
}

void eng_sglang_read_metrics(const struct prom_set *set, struct sig_point *out) {
  out->accept_length = eng_prom_mean(set, "sglang:spec_accept_length");
  out->accept_rate = eng_prom_mean(set, "sglang:spec_accept_rate");
  out->kv_usage_frac = eng_prom_mean(set, "sglang:token_usage");
  out->num_running = eng_prom_sum(set, "sglang:num_running_reqs");
  out->num_queued = eng_prom_sum(set, "sglang:num_queue_reqs");
  out->gen_tokens_total = eng_prom_sum(set, "sglang:generation_tokens_total");
}

/* Best source first: the cumulative server-info average and the
 * generation-token counter at both ends; then the gauges over the scrapes
 * inside the run, weighted by the tokens generated. */
void eng_sglang_summarize(struct sig_summary *sum) {
  const struct sig_point *first = &sum->points[0], *last = &sum->points[sum->n_points - 1];
  double g0 = first->gen_tokens_total, g1 = last->gen_tokens_total;
  double l0 = first->avg_spec_accept_length, l1 = last->avg_spec_accept_length;
  if (!isnan(g0) && !isnan(g1) && !isnan(l1) && l1 > 0 && g1 > g0) {
    double steps0 = (!isnan(l0) && l0 > 0) ? g0 / l0 : 0.0; /* none before: no steps */
    double steps = g1 / l1 - steps0;
    if (steps > 0) {
      sum->accept_length_valid = true;
      sum->accept_length = (g1 - g0) / steps;
      sum->accept_length_method = "sglang_server_info_cumulative_delta";
    }
  }
  double w_len = 0, acc_len = 0, w_rate = 0, acc_rate = 0;
  for (size_t i = 1; i < sum->n_points; i++) {
    const struct sig_point *a = &sum->points[i - 1], *b = &sum->points[i];
    double dg = b->gen_tokens_total - a->gen_tokens_total;
    if (isnan(dg) || dg <= 0)
      continue;
    if (!isnan(b->accept_length) && b->accept_length > 0) {
      acc_len += b->accept_length * dg;
      w_len += dg;
    }
    if (!isnan(b->accept_rate) && b->accept_rate > 0) {
      acc_rate += b->accept_rate * dg;
      w_rate += dg;
    }
  }
  if (!sum->accept_length_valid && w_len > 0) {
    sum->accept_length_valid = true;
    sum->accept_length = acc_len / w_len;
    sum->accept_length_method = "sglang_metrics_gauge_weighted";
  }
  if (w_rate > 0) {
    sum->accept_rate_valid = true;
    sum->accept_rate = acc_rate / w_rate;
    sum->accept_rate_method = "sglang_metrics_gauge_weighted";
  }
}

/* ---------------------------------------------------------------- /get_server_info */
static int json_int_or(const cJSON *obj, const char *key, int fallback) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  return cJSON_IsNumber(v) ? v->valueint : fallback; /* (cJSON saturates valueint at INT_MAX) */
}

static void read_info(const cJSON *json, struct eng_server_info *out) {
  out->valid = true;
  const cJSON *algo = cJSON_GetObjectItemCaseSensitive(json, "speculative_algorithm");
  if (algo) { /* null (or "None") when off */
    out->spec_valid = true;
    out->spec_on = cJSON_IsString(algo) && algo->valuestring[0] &&
                   strcasecmp(algo->valuestring, "none") != 0;
    if (out->spec_on)
      snprintf(out->spec_algorithm, sizeof(out->spec_algorithm), "%s", algo->valuestring);
  }
  out->spec_num_steps = json_int_or(json, "speculative_num_steps", -1);
  out->spec_num_draft_tokens = json_int_or(json, "speculative_num_draft_tokens", -1);
  out->stream_interval = json_int_or(json, "stream_interval", -1);
  const cJSON *kv = cJSON_GetObjectItemCaseSensitive(json, "max_total_num_tokens");
  if (cJSON_IsNumber(kv) && kv->valuedouble >= 0 && kv->valuedouble < 9e18)
    out->kv_capacity_tokens = (int64_t)kv->valuedouble;
  out->batch_cap = json_int_or(json, "max_running_requests", -1);
  const cJSON *sim = cJSON_GetObjectItemCaseSensitive(json, "simulated");
  out->simulated = cJSON_IsTrue(sim) || cJSON_IsObject(sim);
  /* avg_spec_accept_length per DP rank: the mean over ranks */
  double total = 0;
  int n = 0;
  const cJSON *states = cJSON_GetObjectItemCaseSensitive(json, "internal_states");
  const cJSON *st;
  cJSON_ArrayForEach(st, states) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(st, "avg_spec_accept_length");
    if (cJSON_IsNumber(v)) {
      total += v->valuedouble;
      n++;
    }
  }
  out->avg_spec_accept_length = n > 0 ? total / n : (double)NAN;
}

int eng_sglang_query_info(const char *base_url, double timeout_s, struct eng_server_info *out,
                          struct st_err *err) {
  long status = 0;
  char *body = eng_http_get_alloc(base_url, "/get_server_info", timeout_s, &status, err);
  if (!body && status == 404) /* older SGLang */
    body = eng_http_get_alloc(base_url, "/server_info", timeout_s, &status, err);
  if (!body)
    return -1;
  cJSON *json = cJSON_Parse(body);
  free(body);
  if (!cJSON_IsObject(json)) {
    cJSON_Delete(json);
    return err_setf(err, "server info is not a JSON object");
  }
  read_info(json, out);
  cJSON_Delete(json);
  return 0;
}

const struct eng_ops eng_sglang_ops = {
    .name = "sglang",
    .title = "SGLang",
    .recipe_engine = true,
    .frameworks = (const char *const[]){"sglang", NULL},
    .upstream_image = "lmsysorg/sglang",
    .image_repos = (const char *const[]){"lmsysorg/sglang", "lmsysorg/sglang-rocm",
                                         "rocm/sgl-dev", NULL},
    .sim_stands_in = true,
    .program = "python3 -m sglang.launch_server",
    .launch_forms = "python3 -m sglang.launch_server, sglang serve",
    .recognise = sglang_recognise,
    .flags = eng_sglang_flags,
    .all_flags = sglang_all_flags,
    .all_flags_source = "servetop's list of SGLang's flags, v0.5.4 and those InferenceX uses",
    .shared_flags = true,
    .spec_advice = sglang_spec_advice,
    .program_words = sglang_program_words,
    .model_flag = "--model-path",
    .probe = sglang_probe,
    .ready_line = ENG_SGLANG_READY_LINE,
    .ready_timeout_ms = 1800000, /* big models load for many minutes */
    .parse_log_line = eng_sglang_parse_log_line,
    .owns_metrics = sglang_owns_metrics,
    .read_metrics = eng_sglang_read_metrics,
    .summarize = eng_sglang_summarize,
    .query_info = eng_sglang_query_info,
};
