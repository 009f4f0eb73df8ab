/* The performance model: GPU and model presets, memory (SGLang's
 * --mem-fraction-static rule), step times and the acceptance model. Formulas
 * and the sources of every constant are in docs/sim.md. */
#include "sim/sim_internal.h"

#include <math.h>
#include <string.h>
#include <strings.h>

#define GIB 1073741824.0
#define MIB 1048576.0

/* Memory: what nvidia-smi / amd-smi report as total where known, else the
 * datasheet figure. Bandwidth and dense (no sparsity) FLOP/s: datasheets. */
static const struct sim_gpu_preset gpu_presets[] = {
    {"h100", "NVIDIA H100 80GB HBM3", 81559 * MIB, 3.35e12, 989e12, 1979e12, 0, 70, 700},
    {"h200", "NVIDIA H200", 143771 * MIB, 4.8e12, 989e12, 1979e12, 0, 75, 700},
    {"b200", "NVIDIA B200", 183359 * MIB, 8.0e12, 2.25e15, 4.5e15, 9.0e15, 120, 1000},
    {"b300", "NVIDIA B300", 288e9, 8.0e12, 2.25e15, 4.5e15, 13.5e15, 130, 1100},
    {"mi300x", "AMD Instinct MI300X", 192 * GIB, 5.3e12, 1307e12, 2615e12, 0, 140, 750},
    {"mi325x", "AMD Instinct MI325X", 256 * GIB, 6.0e12, 1307e12, 2615e12, 0, 150, 1000},
    {"mi355x", "AMD Instinct MI355X", 288 * GIB, 8.0e12, 2.5e15, 5.0e15, 10.0e15, 160, 1400},
};

/* From each model's Hugging Face config.json (see docs/sim.md). */
static const struct sim_model_preset model_presets[] = {
    /* key, match, total, active, layers, kv_layers, kv_heads, head_dim, attn_dim, mla, ctx, vocab,
       dtype, moe */
    {"qwen3.5-397b", "qwen3.5-397b", 397e9, 17e9, 60, 15, 2, 256, 8192, 0, 262144, 248320, "bf16",
     true},
    {"deepseek-r1", "deepseek-r1", 671e9, 37e9, 61, 61, 0, 0, 24576, 576, 163840, 129280, "fp8",
     true},
    {"deepseek-v3", "deepseek-v3", 671e9, 37e9, 61, 61, 0, 0, 24576, 576, 163840, 129280, "fp8",
     true},
    {"gpt-oss-120b", "gpt-oss-120b", 116.8e9, 5.1e9, 36, 18, 8, 64, 4096, 0, 131072, 201088, "fp4",
     true},
    {"gpt-oss-20b", "gpt-oss-20b", 20.9e9, 3.6e9, 24, 12, 8, 64, 4096, 0, 131072, 201088, "fp4",
     true},
    {"llama-3.1-8b", "llama-3.1-8b", 8.03e9, 8.03e9, 32, 32, 8, 128, 4096, 0, 131072, 128256,
     "bf16", false},
    {"llama-3.1-70b", "llama-3.1-70b", 70.6e9, 70.6e9, 80, 80, 8, 128, 8192, 0, 131072, 128256,
     "bf16", false},
    {"llama-3.3-70b", "llama-3.3-70b", 70.6e9, 70.6e9, 80, 80, 8, 128, 8192, 0, 131072, 128256,
     "bf16", false},
};

size_t sim_gpu_count(void) {
  return ST_ARRAY_LEN(gpu_presets);
}
const struct sim_gpu_preset *sim_gpu_at(size_t i) {
  return i < ST_ARRAY_LEN(gpu_presets) ? &gpu_presets[i] : NULL;
}
size_t sim_model_count(void) {
  return ST_ARRAY_LEN(model_presets);
}
const struct sim_model_preset *sim_model_at(size_t i) {
  return i < ST_ARRAY_LEN(model_presets) ? &model_presets[i] : NULL;
}

const struct sim_gpu_preset *sim_gpu_find(const char *key) {
  for (size_t i = 0; key && i < ST_ARRAY_LEN(gpu_presets); i++)
    if (strcasecmp(gpu_presets[i].key, key) == 0)
      return &gpu_presets[i];
  return NULL;
}

const struct sim_model_preset *sim_model_find(const char *key) {
  for (size_t i = 0; key && i < ST_ARRAY_LEN(model_presets); i++)
    if (strcasecmp(model_presets[i].key, key) == 0)
      return &model_presets[i];
  return NULL;
}

const struct sim_model_preset *sim_model_match(const char *model_path) {
  if (!model_path)
    return NULL;
  for (size_t i = 0; i < ST_ARRAY_LEN(model_presets); i++)
    if (strcasestr(model_path, model_presets[i].match))
      return &model_presets[i];
  return NULL;
}

/* Weight precision: --quantization, else the model name (…-FP8, …-NVFP4), else the preset's. */
static const char *weight_dtype_of(const struct sim_config *cfg, const struct sim_model_preset *m) {
  const char *q = cfg->quantization;
  if (q && *q) {
    if (strcasestr(q, "fp4") || strcasestr(q, "mxfp4"))
      return "fp4";
    if (strcasestr(q, "fp8") || strcasestr(q, "w8a8"))
      return "fp8";
  }
  const char *name = cfg->model_path ? cfg->model_path : "";
  if (strcasestr(name, "fp4"))
    return "fp4";
  if (strcasestr(name, "fp8"))
    return "fp8";
  return m->default_dtype;
}

static double bytes_per_param(const char *dtype) {
  if (strcmp(dtype, "fp8") == 0)
    return 1.0;
  if (strcmp(dtype, "fp4") == 0)
    return 0.5625; /* 4-bit values + one 8-bit scale per 16-32 values, attention kept wider */
  return 2.0;
}

double sim_default_mem_fraction(double gpu_memory_bytes, int tp) {
  /* SGLang server_args (pre-2025 rule, by TP size), raised for >= 120 GB
   * GPUs where the fixed activation reserve is a smaller share. */
  double f = tp >= 16 ? 0.79 : tp >= 8 ? 0.81 : tp >= 4 ? 0.85 : tp >= 2 ? 0.87 : 0.88;
  if (gpu_memory_bytes >= 120 * GIB)
    f += 0.04;
  return f;
}

int sim_perf_init(struct sim_perf *p, const struct sim_config *cfg, struct st_err *err) {
  memset(p, 0, sizeof *p);
  p->gpu = sim_gpu_find(cfg->gpu_name ? cfg->gpu_name : "h200");
  if (!p->gpu)
    return err_setf(err, "--sim-gpu %s: unknown GPU preset", cfg->gpu_name);
  if (cfg->model_preset) {
    p->model = sim_model_find(cfg->model_preset);
    if (!p->model)
      return err_setf(err, "--sim-model %s: unknown model preset", cfg->model_preset);
  } else {
    p->model = sim_model_match(cfg->model_path);
    if (!p->model) {
      if (!sim_config_fixed_mode(cfg))
        return err_setf(err,
                        "--model %s: no model preset matches; pass --sim-model PRESET "
                        "(see servetop sim --help) or use fixed-latency mode",
                        cfg->model_path);
      p->model = sim_model_find("llama-3.1-8b"); /* fixed mode: memory figures only */
    }
  }
  const struct sim_model_preset *m = p->model;
  p->tp = cfg->tp_size > 0 ? cfg->tp_size : 1;
  p->ep = cfg->ep_size > 0 ? cfg->ep_size : 1;
  p->dp = cfg->dp_size > 0 ? cfg->dp_size : 1;
  p->ranks = cfg->enable_dp_attention ? p->tp : p->tp * p->dp;

  p->weight_dtype = weight_dtype_of(cfg, m);
  p->weight_bytes_per_param = bytes_per_param(p->weight_dtype);
  const char *kvd = cfg->kv_cache_dtype ? cfg->kv_cache_dtype : "auto";
  p->kv_bytes_per_elem = strncmp(kvd, "fp8", 3) == 0   ? 1.0
                         : strncmp(kvd, "fp4", 3) == 0 ? 0.5
                                                       : 2.0;
  p->flops_per_s = strcmp(p->weight_dtype, "fp4") == 0 && p->gpu->fp4_flops > 0 ? p->gpu->fp4_flops
                   : strcmp(p->weight_dtype, "bf16") == 0                       ? p->gpu->bf16_flops
                                                                                : p->gpu->fp8_flops;
  p->decode_efficiency = cfg->decode_efficiency;
  p->prefill_efficiency = cfg->prefill_efficiency;

  /* speculative decoding (EAGLE/EAGLE3/NEXTN/MTP share the step structure) */
  const char *algo = cfg->speculative_algorithm;
  p->spec = algo && *algo && strcasecmp(algo, "none") != 0;
  if (p->spec) {
    p->spec_steps = cfg->speculative_num_steps > 0 ? cfg->speculative_num_steps : 3;
    p->spec_topk = cfg->speculative_eagle_topk > 0 ? cfg->speculative_eagle_topk : 1;
    p->spec_draft_tokens = cfg->speculative_num_draft_tokens > 0 ? cfg->speculative_num_draft_tokens
                                                                 : p->spec_steps + 1;
    p->spec_v2 = cfg->spec_v2;
    p->spec_overhead = cfg->spec_v2 ? 0.10 : 0.25;
    p->accept_chat = cfg->accept_chat;
    p->accept_random = cfg->accept_random;
    p->simulate_acc_len = cfg->simulate_acc_len;
  }

  /* memory per GPU (rank) */
  double weights = m->total_params * p->weight_bytes_per_param / p->tp;
  if (p->spec) /* the draft (MTP/EAGLE) head: about one decoder layer */
    weights += m->total_params / m->layers * p->weight_bytes_per_param / p->tp;
  p->weights_bytes_per_gpu = weights;
  double cell;
  if (m->mla_kv_dim > 0) {
    cell = (double)m->mla_kv_dim * m->kv_layers * p->kv_bytes_per_elem;
  } else {
    int heads = m->kv_heads / p->tp > 0 ? m->kv_heads / p->tp : 1;
    cell = (double)heads * m->head_dim * 2 * m->kv_layers * p->kv_bytes_per_elem;
  }
  if (p->spec)
    cell *= (double)(m->kv_layers + 1) / m->kv_layers;
  p->kv_cell_bytes = cell;
  p->mem_fraction_static = cfg->mem_fraction_static > 0
                               ? cfg->mem_fraction_static
                               : sim_default_mem_fraction(p->gpu->memory_bytes, p->tp);
  p->cuda_graph_max_bs =
      cfg->cuda_graph_max_bs > 0 ? cfg->cuda_graph_max_bs : (p->tp < 4 ? 256 : 512);
  p->chunked_prefill_size = cfg->chunked_prefill_size > 0 ? cfg->chunked_prefill_size : 8192;
  p->max_prefill_tokens = cfg->max_prefill_tokens > 0 ? cfg->max_prefill_tokens : 16384;
  p->cuda_graph_bytes_per_gpu = 0.5 * GIB + p->cuda_graph_max_bs * 4 * MIB;
  p->activations_bytes_per_gpu = 0.25 * GIB + (double)p->chunked_prefill_size * 64 * 1024;
  /* SGLang profile_max_num_token: rest = available_after_weights - total * (1 - mf). The
   * reserve total * (1 - mf) holds the CUDA graphs and the activations; where they need more
   * (a high mf with a large --cuda-graph-max-bs), the excess comes out of the KV pool (SGLang
   * would fail its graph capture or lower mf itself: docs/sim.md). */
  double total = p->gpu->memory_bytes;
  double reserve = total * (1.0 - p->mem_fraction_static);
  double outside = p->cuda_graph_bytes_per_gpu + p->activations_bytes_per_gpu;
  double rest = (total - weights) - (reserve > outside ? reserve : outside);
  if (weights >= total || rest <= 0 || floor(rest / cell) <= 0)
    return err_setf(err, "Not enough memory. Please try to increase --mem-fraction-static.");
  p->max_total_num_tokens = (long)floor(rest / cell);
  p->kv_pool_bytes_per_gpu = (double)p->max_total_num_tokens * cell;
  p->context_length = cfg->context_length > 0 ? cfg->context_length : m->context_length;
  if (cfg->max_running_requests > 0) {
    p->max_running_requests = cfg->max_running_requests;
  } else {
    double r = (double)p->max_total_num_tokens / p->context_length * 512;
    p->max_running_requests = (int)(r < 2048 ? 2048 : r > 4096 ? 4096 : r);
  }
  return 0;
}

/* Weights one forward pass reads per GPU. A MoE batch touches more experts as
 * it holds more sequences (independent routing per sequence); the extra
 * tokens of one sequence in a verify pass mostly reuse its experts, so each
 * counts as SIM_SPEC_EXPERT_REUSE of a sequence. */
#define SIM_SPEC_EXPERT_REUSE 0.03
static double weight_read_bytes(const struct sim_perf *p, int seqs, double tokens_per_seq) {
  const struct sim_model_preset *m = p->model;
  double params = m->total_params;
  if (m->is_moe) {
    double frac = m->active_params / m->total_params;
    double routed = seqs * (1.0 + SIM_SPEC_EXPERT_REUSE * (tokens_per_seq - 1.0));
    params = m->total_params * (1.0 - pow(1.0 - frac, routed));
  }
  return params * p->weight_bytes_per_param / p->tp;
}

/* Fixed costs of one forward pass: kernel launches (cheap under a CUDA graph)
 * and two all-reduces per layer when TP > 1. */
static double step_fixed_s(const struct sim_perf *p, int bs) {
  const struct sim_model_preset *m = p->model;
  double launch = bs <= p->cuda_graph_max_bs ? 150e-6 : m->layers * 20e-6;
  double comm = p->tp > 1 ? m->layers * 2 * 8e-6 : 0.0;
  return launch + comm;
}

#define SIM_DECODE_COMPUTE_SHARE 0.25
static double forward_s(const struct sim_perf *p, int bs, double tokens_per_req, long kv_tokens) {
  const struct sim_model_preset *m = p->model;
  double tokens = bs * tokens_per_req;
  double bytes = weight_read_bytes(p, bs, tokens_per_req) + (double)kv_tokens * p->kv_cell_bytes;
  double mem_s = bytes / (p->gpu->hbm_bytes_per_s * p->decode_efficiency);
  double flops =
      2.0 * m->active_params * tokens / p->tp +
      4.0 * tokens * ((double)kv_tokens / (bs > 0 ? bs : 1)) * m->kv_layers * m->attn_dim / p->tp;
  /* small decode GEMMs (and MoE grouped GEMMs) reach a fraction of what a prefill does */
  double compute_s = flops / (p->flops_per_s * p->prefill_efficiency * SIM_DECODE_COMPUTE_SHARE);
  return mem_s + compute_s + step_fixed_s(p, bs);
}

double sim_decode_step_s(const struct sim_perf *p, int bs, long kv_tokens) {
  return forward_s(p, bs, 1.0, kv_tokens);
}

double sim_spec_step_s(const struct sim_perf *p, int bs, long kv_tokens) {
  /* verify: one target pass over draft_tokens per request; draft: spec_steps
   * passes of a one-layer head; plus the draft/verify sync overhead */
  double verify = forward_s(p, bs, p->spec_draft_tokens, kv_tokens);
  double draft_one = forward_s(p, bs, p->spec_topk, 0) / p->model->layers + 60e-6;
  /* per-request draft bookkeeping (tree build, accept, KV fix-up) on the host;
   * Spec V2 overlaps most of it with the GPU */
  double per_req_s = bs * (p->spec_v2 ? 4e-6 : 12e-6);
  return verify + p->spec_steps * draft_one +
         p->spec_overhead * sim_decode_step_s(p, bs, kv_tokens) + per_req_s;
}

double sim_prefill_s(const struct sim_perf *p, long new_tokens, long context_tokens) {
  const struct sim_model_preset *m = p->model;
  double t = (double)new_tokens;
  double flops = 2.0 * m->active_params * t / p->tp +
                 4.0 * t * ((double)context_tokens + t / 2.0) * m->kv_layers * m->attn_dim / p->tp;
  double compute_s = flops / (p->flops_per_s * p->prefill_efficiency);
  double mem_s = weight_read_bytes(p, (int)fmin(t, 1e6), 1.0) /
                 (p->gpu->hbm_bytes_per_s * p->decode_efficiency);
  return compute_s + mem_s + step_fixed_s(p, p->cuda_graph_max_bs + 1);
}

double sim_accept_prob(const struct sim_perf *p, bool chat_prompt, int k) {
  double a = chat_prompt ? p->accept_chat : p->accept_random;
  /* top-k drafting: any of k candidates may match */
  a = 1.0 - pow(1.0 - a, p->spec_topk > 0 ? p->spec_topk : 1);
  return a * pow(0.95, k); /* later draft positions are harder */
}

double sim_expected_accept_len(const struct sim_perf *p, bool chat_prompt) {
  if (!p->spec)
    return 1.0;
  if (p->simulate_acc_len > 0)
    return fmin(p->simulate_acc_len, p->spec_steps + 1.0);
  double len = 1.0, reach = 1.0;
  for (int k = 0; k < p->spec_steps; k++) {
    reach *= sim_accept_prob(p, chat_prompt, k);
    len += reach;
  }
  return len;
}

uint64_t sim_rng_next(uint64_t *state) {
  /* splitmix64 */
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double sim_rng_uniform(uint64_t *state) {
  return (double)(sim_rng_next(state) >> 11) * 0x1.0p-53;
}

int sim_draw_accept_len(const struct sim_perf *p, bool chat_prompt, uint64_t *rng) {
  if (!p->spec)
    return 1;
  if (p->simulate_acc_len > 0) {
    /* SGLang's SIMULATE_ACC_LEN pins the mean: mix floor and ceil */
    double a = fmin(fmax(p->simulate_acc_len, 1.0), p->spec_steps + 1.0);
    int lo = (int)floor(a);
    return lo + (sim_rng_uniform(rng) < a - lo ? 1 : 0);
  }
  int len = 1;
  for (int k = 0; k < p->spec_steps; k++) {
    if (sim_rng_uniform(rng) >= sim_accept_prob(p, chat_prompt, k))
      break;
    len++;
  }
  return len;
}

double sim_per_user_tokens_per_s(const struct sim_perf *p, int concurrency, long ctx_tokens,
                                 bool chat_prompt) {
  long kv = (long)concurrency * ctx_tokens;
  if (p->spec)
    return sim_expected_accept_len(p, chat_prompt) / sim_spec_step_s(p, concurrency, kv);
  return 1.0 / sim_decode_step_s(p, concurrency, kv);
}
