/* JSON documents (/get_server_info, /v1/models, /get_model_info,
 * /sim/gpu_memory) and the Prometheus text of /metrics. Not hot: cJSON. */
#include "sim/sim_internal.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define GIB 1073741824.0

/* SGLang collector.py default buckets */
const double sim_ttft_bounds_s[] = {0.1, 0.2, 0.4, 0.6, 0.8, 1,  2,   4,   6,
                                    8,   10,  20,  40,  60,  80, 100, 200, 400};
const size_t sim_ttft_n_bounds = ST_ARRAY_LEN(sim_ttft_bounds_s);
const double sim_itl_bounds_s[] = {0.002, 0.004, 0.006, 0.008, 0.010, 0.015, 0.020, 0.025,
                                   0.030, 0.035, 0.040, 0.060, 0.080, 0.100, 0.200, 0.400,
                                   0.600, 0.800, 1.0,   2.0,   4.0,   6.0,   8.0};
const size_t sim_itl_n_bounds = ST_ARRAY_LEN(sim_itl_bounds_s);
const double sim_e2e_bounds_s[] = {0.1, 0.2, 0.4, 0.6, 0.8, 1,   2,   4,   6,  8,
                                   10,  20,  40,  60,  80,  100, 200, 400, 800};
const size_t sim_e2e_n_bounds = ST_ARRAY_LEN(sim_e2e_bounds_s);

void sim_hist_observe(uint64_t *buckets, const double *bounds, size_t n_bounds, double *sum,
                      uint64_t *count, double value_s) {
  size_t i = 0;
  while (i < n_bounds && value_s > bounds[i])
    i++;
  buckets[i]++; /* buckets[n_bounds] is +Inf */
  *sum += value_s;
  (*count)++;
}

static cJSON *model_card(const struct sim_server *srv) {
  cJSON *card = cJSON_CreateObject();
  cJSON_AddStringToObject(card, "id", srv->model_name);
  cJSON_AddStringToObject(card, "object", "model");
  cJSON_AddNumberToObject(card, "created", (double)time(NULL));
  cJSON_AddStringToObject(card, "owned_by", "servetop-sim (simulated)");
  cJSON_AddStringToObject(card, "root", srv->cfg->model_path);
  cJSON_AddItemToObject(card, "parent", cJSON_CreateNull());
  cJSON_AddNumberToObject(card, "max_model_len", srv->perf.context_length);
  return card;
}

char *sim_info_model_card_json_alloc(const struct sim_server *srv) {
  return sim_json_take_alloc(model_card(srv));
}

char *sim_info_models_json_alloc(const struct sim_server *srv) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "object", "list");
  cJSON *data = cJSON_AddArrayToObject(o, "data");
  cJSON_AddItemToArray(data, model_card(srv));
  return sim_json_take_alloc(o);
}

char *sim_info_model_info_json_alloc(const struct sim_server *srv) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "model_path", srv->cfg->model_path);
  cJSON_AddStringToObject(o, "tokenizer_path", srv->cfg->model_path);
  cJSON_AddBoolToObject(o, "is_generation", true);
  cJSON_AddItemToObject(o, "preferred_sampling_params", cJSON_CreateNull());
  cJSON_AddStringToObject(o, "weight_version", "default");
  cJSON_AddBoolToObject(o, "simulated", true);
  return sim_json_take_alloc(o);
}

/* The ServerArgs fields servetop sim knows, as SGLang names them. */
static void add_server_args(cJSON *o, const struct sim_server *srv) {
  const struct sim_config *c = srv->cfg;
  const struct sim_perf *p = &srv->perf;
  cJSON_AddStringToObject(o, "model_path", c->model_path);
  cJSON_AddStringToObject(o, "tokenizer_path", c->model_path);
  cJSON_AddStringToObject(o, "served_model_name", srv->model_name);
  cJSON_AddStringToObject(o, "host", c->host);
  cJSON_AddNumberToObject(o, "port", srv->port);
  cJSON_AddNumberToObject(o, "tp_size", p->tp);
  cJSON_AddNumberToObject(o, "dp_size", p->dp);
  cJSON_AddNumberToObject(o, "ep_size", p->ep);
  cJSON_AddBoolToObject(o, "enable_dp_attention", c->enable_dp_attention);
  cJSON_AddNumberToObject(o, "mem_fraction_static", p->mem_fraction_static);
  cJSON_AddNumberToObject(o, "max_running_requests", p->max_running_requests);
  cJSON_AddNumberToObject(o, "chunked_prefill_size", p->chunked_prefill_size);
  cJSON_AddNumberToObject(o, "max_prefill_tokens", p->max_prefill_tokens);
  cJSON_AddNumberToObject(o, "cuda_graph_max_bs", p->cuda_graph_max_bs);
  cJSON_AddNumberToObject(o, "context_length", p->context_length);
  cJSON_AddStringToObject(o, "kv_cache_dtype", c->kv_cache_dtype ? c->kv_cache_dtype : "auto");
  json_add_string_or_null(o, "quantization", c->quantization);
  cJSON_AddNumberToObject(o, "stream_interval", c->stream_interval);
  cJSON_AddNumberToObject(o, "decode_log_interval", c->decode_log_interval);
  cJSON_AddBoolToObject(o, "enable_metrics", c->enable_metrics);
  cJSON_AddBoolToObject(o, "disable_radix_cache", c->disable_radix_cache);
  cJSON_AddBoolToObject(o, "skip_server_warmup", c->skip_server_warmup);
  json_add_string_or_null(o, "speculative_algorithm", p->spec ? c->speculative_algorithm : NULL);
  if (p->spec) {
    cJSON_AddNumberToObject(o, "speculative_num_steps", p->spec_steps);
    cJSON_AddNumberToObject(o, "speculative_eagle_topk", p->spec_topk);
    cJSON_AddNumberToObject(o, "speculative_num_draft_tokens", p->spec_draft_tokens);
  } else {
    cJSON_AddItemToObject(o, "speculative_num_steps", cJSON_CreateNull());
    cJSON_AddItemToObject(o, "speculative_eagle_topk", cJSON_CreateNull());
    cJSON_AddItemToObject(o, "speculative_num_draft_tokens", cJSON_CreateNull());
  }
}

char *sim_info_server_json_alloc(const struct sim_server *srv) {
  const struct sim_perf *p = &srv->perf;
  const struct sim_stats *st = &srv->stats;
  cJSON *o = cJSON_CreateObject();
  add_server_args(o, srv);
  cJSON_AddStringToObject(o, "status", srv->ready ? "ready" : "starting");
  cJSON_AddNumberToObject(o, "max_total_num_tokens", (double)p->max_total_num_tokens);
  cJSON_AddNumberToObject(o, "max_req_input_len", (double)(p->context_length - 1));
  cJSON *states = cJSON_AddArrayToObject(o, "internal_states");
  int dp_ranks = srv->cfg->enable_dp_attention ? p->dp : 1;
  for (int r = 0; r < dp_ranks; r++) {
    cJSON *s = cJSON_CreateObject();
    add_server_args(s, srv);
    cJSON_AddNumberToObject(s, "dp_rank", r);
    cJSON_AddNumberToObject(s, "last_gen_throughput", st->gen_throughput);
    cJSON *mem = cJSON_AddObjectToObject(s, "memory_usage");
    cJSON_AddNumberToObject(mem, "weight", p->weights_bytes_per_gpu / GIB);
    cJSON_AddNumberToObject(mem, "kvcache", p->kv_pool_bytes_per_gpu / GIB);
    cJSON_AddNumberToObject(mem, "token_capacity", (double)p->max_total_num_tokens);
    cJSON_AddNumberToObject(mem, "graph", p->cuda_graph_bytes_per_gpu / GIB);
    cJSON_AddNumberToObject(s, "effective_max_running_requests_per_dp", p->max_running_requests);
    cJSON_AddNumberToObject(s, "num_retracted_reqs", (double)st->retracted_total);
    cJSON_AddNumberToObject(s, "new_token_ratio", srv->new_token_ratio);
    if (p->spec && st->spec_forward_total > 0)
      cJSON_AddNumberToObject(s, "avg_spec_accept_length",
                              st->spec_accepted_total / st->spec_forward_total);
    cJSON_AddItemToArray(states, s);
  }
  cJSON_AddStringToObject(o, "version", "servetop-sim-" SERVETOP_VERSION);
  cJSON_AddBoolToObject(o, "simulated", true);
  cJSON *sim = cJSON_AddObjectToObject(o, "sim");
  cJSON_AddStringToObject(sim, "mode", srv->fixed_mode ? "fixed" : "model");
  cJSON_AddStringToObject(sim, "gpu", p->gpu->key);
  cJSON_AddNumberToObject(sim, "gpus", p->ranks);
  cJSON_AddStringToObject(sim, "model_preset", p->model->key);
  cJSON_AddStringToObject(sim, "weight_dtype", p->weight_dtype);
  cJSON_AddNumberToObject(sim, "speed", srv->cfg->speed);
  if (srv->fixed_mode) {
    cJSON_AddNumberToObject(sim, "fixed_ttft_ms", srv->cfg->fixed_ttft_ms);
    cJSON_AddNumberToObject(sim, "fixed_tpot_ms", srv->cfg->fixed_tpot_ms);
  }
  cJSON_AddBoolToObject(sim, "spec_v2", srv->cfg->spec_v2);
  if (srv->cfg->simulate_acc_len > 0)
    cJSON_AddNumberToObject(sim, "simulate_acc_len", srv->cfg->simulate_acc_len);
  cJSON *unk = cJSON_AddArrayToObject(o, "unrecognized_args");
  for (size_t i = 0; i < srv->cfg->n_unrecognized_args; i++)
    cJSON_AddItemToArray(unk, cJSON_CreateString(srv->cfg->unrecognized_args[i]));
  return sim_json_take_alloc(o);
}

/* Share of wall time a forward pass was in flight since the previous sample
 * (at least 200 ms back, like a driver's sampling period). Fixed mode has no
 * forward passes: busy while any request is in progress. */
static double gpu_utilization(struct sim_server *srv) {
  if (srv->fixed_mode)
    return srv->n_active > 0 ? 1.0 : 0.0;
  int64_t now = sim_now_ns();
  double busy_s = srv->stats.busy_s;
  if (srv->step_in_flight)
    busy_s += (double)(now - srv->step_started_ns) / 1e9;
  struct sim_util_sample *u = &srv->util_sample;
  if (u->at_ns == 0) {
    u->at_ns = srv->start_ns;
    u->busy_s = 0;
  }
  if (now - u->at_ns >= 200000000) {
    double share = (busy_s - u->busy_s) / ((double)(now - u->at_ns) / 1e9);
    u->share = share < 0 ? 0 : share > 1 ? 1 : share;
    u->at_ns = now;
    u->busy_s = busy_s;
  }
  return u->share;
}

char *sim_info_gpu_memory_json_alloc(struct sim_server *srv) {
  const struct sim_perf *p = &srv->perf;
  cJSON *o = cJSON_CreateObject();
  cJSON_AddBoolToObject(o, "simulated", true);
  cJSON_AddNumberToObject(o, "pid", (double)getpid());
  cJSON_AddStringToObject(o, "gpu", p->gpu->key);
  cJSON *gpus = cJSON_AddArrayToObject(o, "gpus");
  double util = gpu_utilization(srv);
  double kv_used = (double)sim_engine_kv_tokens(srv) * p->kv_cell_bytes;
  for (int i = 0; i < p->ranks; i++) {
    cJSON *g = cJSON_CreateObject();
    char name[96];
    snprintf(name, sizeof name, "%s (simulated)", p->gpu->name);
    cJSON_AddNumberToObject(g, "index", i);
    cJSON_AddStringToObject(g, "name", name);
    double used = p->weights_bytes_per_gpu + p->kv_pool_bytes_per_gpu +
                  p->cuda_graph_bytes_per_gpu + p->activations_bytes_per_gpu;
    /* whole bytes, like a driver reports them */
    cJSON_AddNumberToObject(g, "total_bytes", floor(p->gpu->memory_bytes));
    cJSON_AddNumberToObject(g, "used_bytes", floor(used));
    cJSON_AddNumberToObject(g, "weights_bytes", floor(p->weights_bytes_per_gpu));
    cJSON_AddNumberToObject(g, "kv_pool_bytes", floor(p->kv_pool_bytes_per_gpu));
    cJSON_AddNumberToObject(g, "kv_used_bytes", floor(kv_used));
    cJSON_AddNumberToObject(g, "cuda_graph_bytes", floor(p->cuda_graph_bytes_per_gpu));
    cJSON_AddNumberToObject(g, "activations_bytes", floor(p->activations_bytes_per_gpu));
    /* power: idle + load share of (max - idle) */
    cJSON_AddNumberToObject(
        g, "power_w", p->gpu->idle_power_w + util * (p->gpu->max_power_w - p->gpu->idle_power_w));
    cJSON_AddNumberToObject(g, "utilization_pct", util * 100.0);
    cJSON_AddItemToArray(gpus, g);
  }
  return sim_json_take_alloc(o);
}

/* ---------------------------------------------------------------- /metrics */
static void prom_hist(struct sbuf *sb, const char *name, const char *help, const char *labels,
                      const uint64_t *buckets, const double *bounds, size_t n_bounds, double sum,
                      uint64_t count) {
  sbuf_printf(sb, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name);
  uint64_t cum = 0;
  for (size_t i = 0; i < n_bounds; i++) {
    cum += buckets[i];
    sbuf_printf(sb, "%s_bucket{%s,le=\"%g\"} %" PRIu64 "\n", name, labels, bounds[i], cum);
  }
  cum += buckets[n_bounds];
  sbuf_printf(sb, "%s_bucket{%s,le=\"+Inf\"} %" PRIu64 "\n", name, labels, cum);
  sbuf_printf(sb, "%s_sum{%s} %.9g\n%s_count{%s} %" PRIu64 "\n", name, labels, sum, name, labels,
              count);
}

static void prom_gauge(struct sbuf *sb, const char *name, const char *help, const char *labels,
                       double v) {
  sbuf_printf(sb, "# HELP %s %s\n# TYPE %s gauge\n%s{%s} %.10g\n", name, help, name, name, labels,
              v);
}

static void prom_counter(struct sbuf *sb, const char *name, const char *help, const char *labels,
                         double v) {
  sbuf_printf(sb, "# HELP %s_total %s\n# TYPE %s_total counter\n%s_total{%s} %.10g\n", name, help,
              name, name, labels, v);
}

char *sim_info_metrics_text_alloc(const struct sim_server *srv) {
  const struct sim_stats *st = &srv->stats;
  const struct sim_perf *p = &srv->perf;
  struct sbuf sb = {0};
  struct sbuf esc = {0};
  /* label values escape like JSON strings minus the unicode forms */
  sbuf_put_json_escaped(&esc, srv->model_name, strlen(srv->model_name));
  char *sched =
      xasprintf("engine_type=\"unified\",model_name=\"%s\",pp_rank=\"0\",tp_rank=\"0\"", esc.data);
  char *tok = xasprintf("model_name=\"%s\"", esc.data);
  sbuf_free(&esc);
  sbuf_puts(&sb, "# servetop sim: SIMULATED SGLang metrics (no GPU work is done)\n");
  /* fixed mode has no scheduler: every accepted request counts as running */
  prom_gauge(&sb, "sglang:num_running_reqs", "The number of running requests. (simulated)", sched,
             srv->fixed_mode ? srv->n_active : st->num_running);
  prom_gauge(&sb, "sglang:num_queue_reqs",
             "The number of requests in the waiting queue. (simulated)", sched, st->num_queue);
  prom_gauge(&sb, "sglang:num_used_tokens", "The number of used tokens. (simulated)", sched,
             (double)st->num_used_tokens);
  prom_gauge(&sb, "sglang:token_usage", "The token usage. (simulated)", sched, st->token_usage);
  prom_gauge(&sb, "sglang:max_total_num_tokens",
             "Maximum total number of tokens in the KV pool. (simulated)", sched,
             (double)p->max_total_num_tokens);
  prom_gauge(&sb, "sglang:gen_throughput", "The generation throughput (token/s). (simulated)",
             sched, st->gen_throughput);
  prom_gauge(&sb, "sglang:cache_hit_rate", "The prefix cache hit rate. (simulated)", sched, 0);
  prom_gauge(&sb, "sglang:spec_accept_length",
             "The average acceptance length of speculative decoding. (simulated)", sched,
             st->spec_accept_length);
  prom_gauge(&sb, "sglang:spec_accept_rate",
             "The average acceptance rate of speculative decoding. (simulated)", sched,
             st->spec_accept_rate);
  prom_gauge(&sb, "sglang:is_cuda_graph", "Whether the batch is using CUDA graph. (simulated)",
             sched, (st->num_running + p->dp - 1) / p->dp <= p->cuda_graph_max_bs ? 1 : 0);
  prom_gauge(&sb, "sglang:num_retracted_reqs",
             "The number of retracted requests (since the last Decode log). (simulated)", sched,
             st->retracted_interval);
  prom_counter(&sb, "sglang:num_retracted_requests",
               "Number of requests retracted because the KV cache pool was full. (simulated)",
               sched, (double)st->retracted_total);
  prom_counter(&sb, "sglang:prompt_tokens", "Number of prefill tokens processed. (simulated)", tok,
               (double)st->prompt_tokens);
  prom_counter(&sb, "sglang:generation_tokens",
               "Number of generation tokens processed. (simulated)", tok,
               (double)st->generation_tokens);
  prom_counter(&sb, "sglang:cached_tokens", "Number of cached prompt tokens. (simulated)", tok, 0);
  prom_counter(&sb, "sglang:num_requests", "Number of requests processed. (simulated)", tok,
               (double)st->num_requests);
  prom_counter(&sb, "sglang:num_aborted_requests", "Number of requests aborted. (simulated)", tok,
               (double)st->num_aborted);
  prom_hist(&sb, "sglang:time_to_first_token_seconds",
            "Histogram of time to first token in seconds. (simulated)", tok, st->ttft_buckets,
            sim_ttft_bounds_s, sim_ttft_n_bounds, st->ttft_sum_s, st->ttft_count);
  prom_hist(&sb, "sglang:inter_token_latency_seconds",
            "Histogram of inter-token latency in seconds. (simulated)", tok, st->itl_buckets,
            sim_itl_bounds_s, sim_itl_n_bounds, st->itl_sum_s, st->itl_count);
  prom_hist(&sb, "sglang:e2e_request_latency_seconds",
            "Histogram of End-to-end request latency in seconds (simulated)", tok, st->e2e_buckets,
            sim_e2e_bounds_s, sim_e2e_n_bounds, st->e2e_sum_s, st->e2e_count);
  free(sched);
  free(tok);
  return sbuf_take(&sb);
}
