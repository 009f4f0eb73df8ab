/* vLLM: `vllm serve MODEL` (or the OpenAI api_server module), its flags, log
 * lines and vllm: metrics (acceptance from the spec-decoding counters). It
 * has no server-info endpoint. */
#include "engine/engine_internal.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- recipes */
static size_t vllm_recognise(char *const *w, size_t n, size_t i) {
  (void)n;
  return eng_recognise_module_or_serve(w, i, "vllm.entrypoints.openai.api_server", "vllm");
}

static const struct eng_flag vllm_flags[] = {
    {{"--gpu-memory-utilization"}, ENG_KNOB_KV_CACHE, ENG_VALUE_FRACTION},
    {{"--max-num-seqs"}, ENG_KNOB_BATCH_CAP, ENG_VALUE_COUNT},
    {{"--max-model-len"}, ENG_KNOB_NONE, ENG_VALUE_COUNT},
    {{"--max-num-batched-tokens"}, ENG_KNOB_NONE, ENG_VALUE_COUNT},
    {{"--enable-expert-parallel"}, ENG_KNOB_EXPERT_PARALLEL, ENG_VALUE_NONE},
    /* The flags of the list below whose value is JSON (EngineArgs fields typed
     * as a config dataclass or a dict in vllm/engine/arg_utils.py): --set takes
     * them whole (compilation-config='{"level": 3}') or one member at a time
     * (compilation-config.level=3, eng_ops.dotted_json_flags). */
    {{"--compilation-config"}, ENG_KNOB_NONE, ENG_VALUE_JSON},
    {{"--speculative-config"}, ENG_KNOB_NONE, ENG_VALUE_JSON},
    {{"--kv-transfer-config"}, ENG_KNOB_NONE, ENG_VALUE_JSON},
    {{"--kv-events-config"}, ENG_KNOB_NONE, ENG_VALUE_JSON},
    {{"--structured-outputs-config"}, ENG_KNOB_NONE, ENG_VALUE_JSON},
    {{"--attention-config"}, ENG_KNOB_NONE, ENG_VALUE_JSON},
    {{"--additional-config"}, ENG_KNOB_NONE, ENG_VALUE_JSON},
    {{"--eplb-config"}, ENG_KNOB_NONE, ENG_VALUE_JSON},
    {{"--hf-overrides"}, ENG_KNOB_NONE, ENG_VALUE_JSON},
    {{"--rope-scaling"}, ENG_KNOB_NONE, ENG_VALUE_JSON},
    {{"--pooler-config"}, ENG_KNOB_NONE, ENG_VALUE_JSON},
    {{"--override-pooler-config"}, ENG_KNOB_NONE, ENG_VALUE_JSON},
    {{"--override-generation-config"}, ENG_KNOB_NONE, ENG_VALUE_JSON},
    {{"--model-loader-extra-config"}, ENG_KNOB_NONE, ENG_VALUE_JSON},
    {{"--limit-mm-per-prompt"}, ENG_KNOB_NONE, ENG_VALUE_JSON},
    {{"--mm-processor-kwargs"}, ENG_KNOB_NONE, ENG_VALUE_JSON},
    {{"--media-io-kwargs"}, ENG_KNOB_NONE, ENG_VALUE_JSON},
    {{"--default-mm-loras"}, ENG_KNOB_NONE, ENG_VALUE_JSON},
    {{NULL}, ENG_KNOB_NONE, ENG_VALUE_ANY},
};

/* Every flag of `vllm serve` (without dashes), as the engine table's full
 * list: `--set` keys that are none of these are refused with a did-you-mean
 * (eng_check_knob_name). vLLM's parser (FlexibleArgumentParser) also takes
 * underscores for dashes and --no-NAME for every switch (flexible_flags), and
 * NAME.key for a member of a JSON flag (--compilation-config.level: the
 * ENG_VALUE_JSON rows above, dotted_json_flags): the check reads them so. From
 * vllm-project/vllm at the v0.11 series (v0.12.0 drops only the flags marked
 * deprecated there): EngineArgs.add_cli_args in vllm/engine/arg_utils.py at
 * commit 99d7eb5d6a512cfcc5a2b104f24ebf2d6cda772b, `vllm serve`'s own and
 * FrontendArgs in vllm/entrypoints/openai/cli_args.py at commit
 * 789340fbad95a900ca3c467c9cee33b3d905fd61, AsyncEngineArgs' request logging,
 * and the later flags InferenceX's vLLM scripts use. A flag newer than this
 * list goes in with --server-arg. docs/recipes.md says so. */
static const char *const vllm_all_flags[] = {
    /* ModelConfig */
    "model",
    "runner",
    "convert",
    "task",
    "tokenizer",
    "tokenizer-mode",
    "trust-remote-code",
    "dtype",
    "seed",
    "hf-config-path",
    "allowed-local-media-path",
    "allowed-media-domains",
    "revision",
    "code-revision",
    "rope-scaling",
    "rope-theta",
    "tokenizer-revision",
    "max-model-len",
    "quantization",
    "q",
    "enforce-eager",
    "max-logprobs",
    "logprobs-mode",
    "disable-sliding-window",
    "disable-cascade-attn",
    "skip-tokenizer-init",
    "enable-prompt-embeds",
    "served-model-name",
    "config-format",
    "hf-token",
    "hf-overrides",
    "pooler-config",
    "override-pooler-config",
    "logits-processor-pattern",
    "generation-config",
    "override-generation-config",
    "enable-sleep-mode",
    "model-impl",
    "override-attention-dtype",
    "logits-processors",
    "io-processor-plugin",
    /* LoadConfig */
    "load-format",
    "download-dir",
    "safetensors-load-strategy",
    "model-loader-extra-config",
    "ignore-patterns",
    "use-tqdm-on-load",
    "pt-load-map-location",
    /* StructuredOutputsConfig */
    "reasoning-parser",
    "guided-decoding-backend",
    "guided-decoding-disable-fallback",
    "guided-decoding-disable-any-whitespace",
    "guided-decoding-disable-additional-properties",
    /* ParallelConfig */
    "distributed-executor-backend",
    "pipeline-parallel-size",
    "pp",
    "tensor-parallel-size",
    "tp",
    "decode-context-parallel-size",
    "dcp",
    "data-parallel-size",
    "dp",
    "data-parallel-rank",
    "dpn",
    "data-parallel-start-rank",
    "dpr",
    "data-parallel-size-local",
    "dpl",
    "data-parallel-address",
    "dpa",
    "data-parallel-rpc-port",
    "dpp",
    "data-parallel-backend",
    "dpb",
    "data-parallel-hybrid-lb",
    "enable-expert-parallel",
    "all2all-backend",
    "enable-dbo",
    "dbo-decode-token-threshold",
    "dbo-prefill-token-threshold",
    "disable-nccl-for-dp-synchronization",
    "enable-eplb",
    "eplb-config",
    "expert-placement-strategy",
    "num-redundant-experts",
    "eplb-window-size",
    "eplb-step-interval",
    "eplb-log-balancedness",
    "max-parallel-loading-workers",
    "ray-workers-use-nsight",
    "disable-custom-all-reduce",
    "worker-cls",
    "worker-extension-cls",
    "enable-multimodal-encoder-data-parallel",
    /* CacheConfig */
    "block-size",
    "gpu-memory-utilization",
    "kv-cache-memory-bytes",
    "swap-space",
    "kv-cache-dtype",
    "num-gpu-blocks-override",
    "enable-prefix-caching",
    "prefix-caching-hash-algo",
    "cpu-offload-gb",
    "calculate-kv-scales",
    "kv-sharing-fast-prefill",
    "mamba-cache-dtype",
    "mamba-ssm-cache-dtype",
    "mamba-block-size",
    /* MultiModalConfig */
    "limit-mm-per-prompt",
    "enable-mm-embeds",
    "media-io-kwargs",
    "mm-processor-kwargs",
    "mm-processor-cache-gb",
    "disable-mm-preprocessor-cache",
    "mm-processor-cache-type",
    "mm-shm-cache-max-object-size-mb",
    "mm-encoder-tp-mode",
    "mm-encoder-attn-backend",
    "interleave-mm-strings",
    "skip-mm-profiling",
    "video-pruning-rate",
    /* LoRAConfig */
    "enable-lora",
    "max-loras",
    "max-lora-rank",
    "lora-extra-vocab-size",
    "lora-dtype",
    "max-cpu-loras",
    "fully-sharded-loras",
    "default-mm-loras",
    /* ObservabilityConfig */
    "show-hidden-metrics-for-version",
    "otlp-traces-endpoint",
    "collect-detailed-traces",
    /* SchedulerConfig */
    "max-num-batched-tokens",
    "max-num-seqs",
    "max-num-partial-prefills",
    "max-long-partial-prefills",
    "long-prefill-token-threshold",
    "num-lookahead-slots",
    "scheduling-policy",
    "enable-chunked-prefill",
    "disable-chunked-mm-input",
    "scheduler-cls",
    "disable-hybrid-kv-cache-manager",
    "async-scheduling",
    /* CompilationConfig */
    "cudagraph-capture-sizes",
    "cuda-graph-sizes",
    "max-cudagraph-capture-size",
    /* VllmConfig */
    "speculative-config",
    "kv-transfer-config",
    "kv-events-config",
    "compilation-config",
    "O",
    "additional-config",
    "structured-outputs-config",
    /* the engine's own */
    "disable-log-stats",
    "aggregate-engine-logging",
    "enable-log-requests",
    "disable-log-requests",
    /* `vllm serve` and its OpenAI frontend */
    "headless",
    "api-server-count",
    "asc",
    "config",
    "host",
    "port",
    "uds",
    "uvicorn-log-level",
    "disable-uvicorn-access-log",
    "allow-credentials",
    "allowed-origins",
    "allowed-methods",
    "allowed-headers",
    "api-key",
    "lora-modules",
    "chat-template",
    "chat-template-content-format",
    "trust-request-chat-template",
    "response-role",
    "ssl-keyfile",
    "ssl-certfile",
    "ssl-ca-certs",
    "enable-ssl-refresh",
    "ssl-cert-reqs",
    "root-path",
    "middleware",
    "return-tokens-as-token-ids",
    "disable-frontend-multiprocessing",
    "enable-request-id-headers",
    "enable-auto-tool-choice",
    "exclude-tools-when-tool-choice-none",
    "tool-call-parser",
    "tool-parser-plugin",
    "tool-server",
    "log-config-file",
    "max-log-len",
    "disable-fastapi-docs",
    "enable-prompt-tokens-details",
    "enable-server-load-tracking",
    "enable-force-include-usage",
    "enable-tokenizer-info-endpoint",
    "enable-log-outputs",
    "h11-max-incomplete-event-size",
    "h11-max-header-count",
    "log-error-stack",
    "tokens-only",
    /* later flags InferenceX's vLLM scripts pass */
    "attention-backend",
    "attention-config",
    "language-model-only",
    "linear-backend",
    "moe-backend",
    "enable-flashinfer-autotune",
    "stream-interval",
    NULL,
};

/* vLLM flags servetop sim (SGLang-flavoured) understands under another
 * name, so a vLLM recipe can run on the sim. */
static const struct {
  const char *vllm;
  const char *sglang;
} as_sglang[] = {
    {"--gpu-memory-utilization", "--mem-fraction-static"},
    {"--max-num-seqs", "--max-running-requests"},
    {"--tensor-parallel-size", "--tp"},
    {"--max-model-len", "--context-length"},
    {"--max-num-batched-tokens", "--chunked-prefill-size"},
    /* the largest batch run as a captured CUDA graph; larger ones run eagerly, slower (the
     * flag, or its dotted compilation-config member) */
    {"--max-cudagraph-capture-size", "--cuda-graph-max-bs"},
    {"--compilation-config.max_cudagraph_capture_size", "--cuda-graph-max-bs"},
};

/* --speculative-config '{"method":"mtp","num_speculative_tokens":3}' ->
 * --speculative-algorithm NEXTN --speculative-num-steps 3 ... */
static void spec_config_as_sglang(const char *json_text, struct launch_cmd *out) {
  cJSON *spec = cJSON_Parse(json_text);
  if (!spec)
    return;
  const cJSON *method = cJSON_GetObjectItemCaseSensitive(spec, "method");
  const cJSON *steps = cJSON_GetObjectItemCaseSensitive(spec, "num_speculative_tokens");
  if (cJSON_IsString(method)) {
    bool mtp = strcmp(method->valuestring, "mtp") == 0;
    int n_steps = cJSON_IsNumber(steps) ? steps->valueint : 3;
    eng_sglang_chain_spec_args(out, mtp ? "NEXTN" : "EAGLE", n_steps);
  }
  cJSON_Delete(spec);
}

#define SPEC_DOTTED "--speculative-config."

/* The dotted members --speculative-config.KEY VALUE (or =VALUE) of argv as
 * vLLM's parser gathers them (a value that is not JSON is a string); NULL
 * when there are none. The one-level keys are all the sim reads. */
static cJSON *spec_config_members(char *const *argv, size_t argc) {
  cJSON *obj = NULL;
  for (size_t i = 0; i < argc; i++) {
    if (strncmp(argv[i], SPEC_DOTTED, strlen(SPEC_DOTTED)) != 0)
      continue;
    const char *key = argv[i] + strlen(SPEC_DOTTED), *eq = strchr(key, '=');
    const char *value = eq ? eq + 1 : i + 1 < argc ? argv[i + 1] : "";
    char *name = eq ? xstrndup(key, (size_t)(eq - key)) : xstrdup(key);
    cJSON *v = cJSON_Parse(value);
    if (!obj)
      obj = cJSON_CreateObject();
    cJSON_DeleteItemFromObjectCaseSensitive(obj, name); /* the last one wins */
    cJSON_AddItemToObject(obj, name, v ? v : cJSON_CreateString(value));
    free(name);
  }
  return obj;
}

static void vllm_args_for_sim(char *const *argv, size_t argc, struct launch_cmd *out) {
  /* Dotted speculative-config members with a method: vLLM passes them as one
   * --speculative-config after every other argument and keeps that one, so
   * the sim runs them (and not a whole --speculative-config of the recipe).
   * Without a method they pass as they are: the sim logs them as not
   * modelled. */
  cJSON *members = spec_config_members(argv, argc);
  bool dotted_spec = cJSON_IsString(cJSON_GetObjectItemCaseSensitive(members, "method"));
  for (size_t i = 0; i < argc; i++) {
    const char *arg = argv[i];
    if (strcmp(arg, "--speculative-config") == 0 && i + 1 < argc) {
      if (!dotted_spec)
        spec_config_as_sglang(argv[i + 1], out);
      i++;
      continue;
    }
    if (dotted_spec && strncmp(arg, SPEC_DOTTED, strlen(SPEC_DOTTED)) == 0) {
      i += !strchr(arg, '=') && i + 1 < argc; /* its value too */
      continue;
    }
    char *renamed = NULL; /* "--max-num-seqs=8" -> "--max-running-requests=8" */
    size_t name_len = strcspn(arg, "=");
    for (size_t t = 0; t < ST_ARRAY_LEN(as_sglang); t++)
      if (strlen(as_sglang[t].vllm) == name_len &&
          strncmp(arg, as_sglang[t].vllm, name_len) == 0) {
        renamed = xasprintf("%s%s", as_sglang[t].sglang, arg + name_len);
        break;
      }
    launch_cmd_add_arg(out, renamed ? renamed : arg);
    free(renamed);
  }
  if (dotted_spec) {
    char *json = cJSON_PrintUnformatted(members);
    spec_config_as_sglang(json, out);
    free(json);
  }
  cJSON_Delete(members);
}

/* The version-bound rules' check (eng_version.c's table): --disable-log-requests,
 * deprecated for --enable-log-requests (request logging is off by default). */
bool eng_vllm_disable_log_requests(char *const *argv, size_t argc, char *const *env, size_t n_env,
                                   struct eng_vrule_hit *hit) {
  (void)env, (void)n_env;
  for (size_t i = 0; i < argc; i++)
    if (strcmp(argv[i], "--disable-log-requests") == 0 ||
        strncmp(argv[i], "--disable-log-requests=", 23) == 0) {
      snprintf(hit->what, sizeof hit->what,
               "vLLM --disable-log-requests: replaced by --enable-log-requests (request logging "
               "is off by default); it can go");
      hit->flag = "disable-log-requests";
      return true;
    }
  return false;
}

/* ---------------------------------------------------------------- launching */
static int vllm_program_words(struct launch_cmd *cmd, const struct eng_target *t,
                              struct st_err *err) {
  if (!t->model || !*t->model)
    return err_setf(err, "launcher: vllm serve needs a model");
  launch_cmd_add_arg(cmd, "vllm");
  launch_cmd_add_arg(cmd, "serve");
  launch_cmd_add_arg(cmd, t->model);
  return 0;
}

static bool vllm_probe(char *why, size_t why_bytes) {
  const char *argv[] = {"vllm", "--version", NULL};
  return eng_probe_gpu_command(argv, "no working 'vllm' on PATH", why, why_bytes);
}

/* ---------------------------------------------------------------- log lines */
static const struct eng_log_field stats_fields[] = {
    ENG_FIELD("Avg prompt throughput", ENG_FIELD_NUM, input_tok_per_s,
              ENG_LOG_HAS_INPUT_THROUGHPUT),
    ENG_FIELD("Avg generation throughput", ENG_FIELD_NUM, gen_tok_per_s,
              ENG_LOG_HAS_GEN_THROUGHPUT),
    ENG_FIELD("Running", ENG_FIELD_INT, running, ENG_LOG_HAS_RUNNING),
    ENG_FIELD("Waiting", ENG_FIELD_INT, queued, ENG_LOG_HAS_QUEUED),
    ENG_FIELD("GPU KV cache usage", ENG_FIELD_PERCENT, token_usage_frac, ENG_LOG_HAS_TOKEN_USAGE),
    ENG_FIELD("Prefix cache hit rate", ENG_FIELD_PERCENT, prefix_hit_frac,
              ENG_LOG_HAS_PREFIX_HIT),
    ENG_FIELD("Mean acceptance length", ENG_FIELD_NUM, accept_length, ENG_LOG_HAS_ACCEPT_LENGTH),
    ENG_FIELD("Avg Draft acceptance rate", ENG_FIELD_PERCENT, accept_rate_frac,
              ENG_LOG_HAS_ACCEPT_RATE),
    ENG_FIELD("Accepted", ENG_FIELD_INT, accepted_tokens, 0),
    ENG_FIELD("Drafted", ENG_FIELD_INT, drafted_tokens, ENG_LOG_HAS_SPEC_TOKENS),
};

/* "0.9, 0.8, 0.7" -> per-position rates. */
static void parse_positions(const char *v, size_t vl, struct eng_log_record *r) {
  const char *q = v, *end = v + vl;
  r->n_positions = 0;
  double d;
  while (q < end && r->n_positions < ENG_LOG_MAX_POSITIONS &&
         eng_leading_number(q, (size_t)(end - q), &d)) {
    r->per_position_rate_frac[r->n_positions++] = d;
    const char *comma = memchr(q, ',', (size_t)(end - q));
    if (!comma)
      break;
    q = comma + 1;
  }
  if (r->n_positions > 0)
    r->has |= ENG_LOG_HAS_PER_POSITION;
}

static void parse_stats(const char *body, struct eng_log_record *r) {
  struct eng_pair pairs[ENG_MAX_PAIRS];
  size_t n = eng_split_pairs(body, ": ", pairs, ENG_MAX_PAIRS);
  eng_apply_fields(pairs, n, stats_fields, ST_ARRAY_LEN(stats_fields), r);
  for (size_t i = 0; i < n; i++)
    if (eng_key_is(&pairs[i], "Per-position acceptance rate"))
      parse_positions(pairs[i].value, pairs[i].value_len, r);
}

/* uvicorn's; SGLang prints it too, before its warmup, so only vLLM may be
 * taken at its word there. */
#define VLLM_READY_LINE "Application startup complete."

static enum eng_log_kind vllm_parse_log_line(const char *line, struct eng_log_record *r) {
  eng_log_record_clear(r);
  const char *body = eng_strip_prefix(line, r->rank_tag, sizeof(r->rank_tag));
  const char *hit;
  if ((hit = strstr(body, "GPU KV cache size:")) != NULL) {
    int64_t k;
    const char *v = hit + strlen("GPU KV cache size:");
    if (eng_leading_int(v, strlen(v), &k) && strstr(v, "tokens")) {
      r->kind = ENG_LOG_KV_CAPACITY;
      r->max_total_num_tokens = k;
      r->has |= ENG_LOG_HAS_MAX_TOTAL_TOKENS;
    }
  } else if ((hit = strstr(body, "SpecDecoding metrics:")) != NULL) {
    r->kind = ENG_LOG_SPEC;
    parse_stats(hit + strlen("SpecDecoding metrics:"), r);
  } else if ((hit = strstr(body, "Avg prompt throughput:")) != NULL) {
    r->kind = ENG_LOG_STATS;
    parse_stats(hit, r);
  } else if (strstr(body, VLLM_READY_LINE)) {
    r->kind = ENG_LOG_READY;
  }
  return r->kind;
}

/* ---------------------------------------------------------------- /metrics */
static bool vllm_owns_metrics(const struct prom_set *set) {
  return prom_find(set, "vllm:num_requests_running", NULL) != NULL;
}

static void vllm_read_metrics(const struct prom_set *set, struct sig_point *out) {
  out->kv_usage_frac = eng_prom_mean(set, "vllm:kv_cache_usage_perc");
  if (isnan(out->kv_usage_frac))
    out->kv_usage_frac = eng_prom_mean(set, "vllm:gpu_cache_usage_perc");
  out->num_running = eng_prom_sum(set, "vllm:num_requests_running");
  out->num_queued = eng_prom_sum(set, "vllm:num_requests_waiting");
  out->gen_tokens_total = eng_prom_sum(set, "vllm:generation_tokens_total");
  out->drafts_total = eng_prom_sum(set, "vllm:spec_decode_num_drafts_total");
  out->draft_tokens_total = eng_prom_sum(set, "vllm:spec_decode_num_draft_tokens_total");
  out->accepted_tokens_total = eng_prom_sum(set, "vllm:spec_decode_num_accepted_tokens_total");
  eng_prom_per_position(set, "vllm:spec_decode_num_accepted_tokens_per_pos_total",
                        out->accepted_per_pos_total, SIG_MAX_POSITIONS);
}

static void vllm_summarize(struct sig_summary *sum) {
  sig_summarize_counters(sum, "vllm_counter_deltas");
}

const struct eng_ops eng_vllm_ops = {
    .name = "vllm",
    .title = "vLLM",
    .recipe_engine = true,
    .frameworks = (const char *const[]){"vllm", NULL},
    .upstream_image = "vllm/vllm-openai",
    .image_repos = (const char *const[]){"vllm/vllm-openai", "vllm/vllm-openai-rocm", NULL},
    .sim_stands_in = true,
    .program = "vllm serve",
    .launch_forms = "vllm serve",
    .recognise = vllm_recognise,
    .flags = vllm_flags,
    .all_flags = vllm_all_flags,
    .all_flags_source = "servetop's list of vllm serve's flags, v0.11 and those InferenceX uses",
    .flexible_flags = true,
    .dotted_json_flags = true,
    .shared_flags = true,
    .model_positional = true,
    .batch_cap_per_dp_rank = true, /* --max-num-seqs is per DP engine */
    .args_for_sim = vllm_args_for_sim,
    .program_words = vllm_program_words,
    .probe = vllm_probe,
    .ready_line = VLLM_READY_LINE,
    .ready_timeout_ms = 1800000,
    .parse_log_line = vllm_parse_log_line,
    .owns_metrics = vllm_owns_metrics,
    .read_metrics = vllm_read_metrics,
    .accept_from_counters = true,
    .summarize = vllm_summarize,
};
