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
    {{NULL}, ENG_KNOB_NONE, ENG_VALUE_ANY},
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

static void vllm_args_for_sim(char *const *argv, size_t argc, struct launch_cmd *out) {
  for (size_t i = 0; i < argc; i++) {
    const char *arg = argv[i];
    if (strcmp(arg, "--speculative-config") == 0 && i + 1 < argc) {
      spec_config_as_sglang(argv[++i], out);
      continue;
    }
    for (size_t t = 0; t < ST_ARRAY_LEN(as_sglang); t++)
      if (strcmp(arg, as_sglang[t].vllm) == 0)
        arg = as_sglang[t].sglang;
    launch_cmd_add_arg(out, arg);
  }
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
