/* Defaults (SGLang's where SGLang has one), fault specs and validation. */
#include "sim/sim_internal.h"

#include <math.h>
#include <string.h>
#include <strings.h>

void sim_config_init(struct sim_config *cfg) {
  memset(cfg, 0, sizeof *cfg);
  cfg->model_path = "servetop-sim/llama-3.1-8b";
  cfg->host = "127.0.0.1";
  cfg->port = 30000;
  cfg->tp_size = 1;
  cfg->ep_size = 1;
  cfg->dp_size = 1;
  cfg->kv_cache_dtype = "auto";
  cfg->max_prefill_tokens = 16384;
  cfg->stream_interval = 1;
  cfg->decode_log_interval = 40;
  cfg->gpu_name = "h200";
  cfg->fixed_ttft_ms = NAN; /* unset (no number typed is NaN: parse_double refuses it) */
  cfg->fixed_tpot_ms = NAN;
  cfg->context_length = SIM_UNSET_INT;
  cfg->accept_chat = 0.80;
  cfg->accept_random = 0.35;
  cfg->decode_efficiency = 0.65;
  cfg->prefill_efficiency = 0.45;
  cfg->speed = 1.0;
  cfg->health_delay_ms = 20;
  cfg->warmup_ms = 200;
  cfg->seed = 0;
  cfg->stop_fd = -1;
}

bool sim_config_fixed_mode(const struct sim_config *cfg) {
  return cfg->fixed_ttft_ms >= 0 && cfg->fixed_tpot_ms >= 0;
}

static const struct {
  const char *name;
  enum sim_fault_kind kind;
  bool needs_n;
} fault_names[] = {
    {"crash-after", SIM_FAULT_CRASH_AFTER, true},
    {"stall-after", SIM_FAULT_STALL_AFTER, true},
    {"bad-json-after", SIM_FAULT_BAD_JSON_AFTER, true},
    {"reset-after", SIM_FAULT_RESET_AFTER, true},
    {"http-500", SIM_FAULT_HTTP_500, false},
    {"http-503", SIM_FAULT_HTTP_503, false},
    {"trickle", SIM_FAULT_TRICKLE, false},
    {"error-event-after", SIM_FAULT_ERROR_EVENT_AFTER, true},
    {"no-usage-after", SIM_FAULT_NO_USAGE_AFTER, true},
};

int sim_fault_parse(const char *text, struct sim_fault *f, struct st_err *err) {
  const char *eq = strchr(text, '=');
  size_t name_len = eq ? (size_t)(eq - text) : strlen(text);
  for (size_t i = 0; i < ST_ARRAY_LEN(fault_names); i++) {
    if (strlen(fault_names[i].name) != name_len ||
        strncmp(fault_names[i].name, text, name_len) != 0)
      continue;
    f->kind = fault_names[i].kind;
    f->n = 0;
    if (eq) {
      if (parse_long(eq + 1, &f->n) < 0 || f->n < 0)
        return err_setf(err, "--sim-fault %s: N must be an integer >= 0", text);
    } else if (fault_names[i].needs_n) {
      return err_setf(err, "--sim-fault %s: needs =N (e.g. %s=10)", text, fault_names[i].name);
    }
    return 0;
  }
  return err_setf(err,
                  "--sim-fault %s: unknown fault (crash-after=N, stall-after=N, bad-json-after=N, "
                  "reset-after=N, http-500[=N], http-503[=N], trickle[=BYTES_PER_MS], "
                  "error-event-after=N, no-usage-after=N)",
                  text);
}

int sim_config_validate(const struct sim_config *c, struct st_err *err) {
  if (c->port < 0 || c->port > 65535)
    return err_setf(err, "--port %d: must be 0..65535", c->port);
  if (c->tp_size < 1 || c->ep_size < 1 || c->dp_size < 1)
    return err_setf(err, "--tp/--ep/--dp must be >= 1");
  if (c->mem_fraction_static != 0 && (c->mem_fraction_static <= 0 || c->mem_fraction_static >= 1))
    return err_setf(err, "--mem-fraction-static %g: must be in (0, 1)", c->mem_fraction_static);
  if (c->max_running_requests < 0)
    return err_setf(err, "--max-running-requests %d: must be >= 1", c->max_running_requests);
  if (c->chunked_prefill_size < 0 && c->chunked_prefill_size != -1)
    return err_setf(err, "--chunked-prefill-size %d: must be >= 1", c->chunked_prefill_size);
  if (c->max_prefill_tokens < 1)
    return err_setf(err, "--max-prefill-tokens %d: must be >= 1", c->max_prefill_tokens);
  if (c->stream_interval < 1)
    return err_setf(err, "--stream-interval %d: must be >= 1", c->stream_interval);
  if (c->decode_log_interval < 1)
    return err_setf(err, "--decode-log-interval %d: must be >= 1", c->decode_log_interval);
  if (c->context_length != SIM_UNSET_INT && c->context_length < 1)
    return err_setf(err, "--context-length %d: must be >= 1", c->context_length);
  if (c->kv_cache_dtype && strcmp(c->kv_cache_dtype, "auto") != 0 &&
      strcmp(c->kv_cache_dtype, "bf16") != 0 && strcmp(c->kv_cache_dtype, "bfloat16") != 0 &&
      strncmp(c->kv_cache_dtype, "fp8", 3) != 0 && strncmp(c->kv_cache_dtype, "fp4", 3) != 0)
    return err_setf(err, "--kv-cache-dtype %s: expected auto, bf16, fp8_e4m3, fp8_e5m2 or fp4_e2m1",
                    c->kv_cache_dtype);
  const char *algo = c->speculative_algorithm;
  if (algo && *algo) {
    static const char *const known[] = {"EAGLE",      "EAGLE3", "NEXTN", "MTP",
                                        "STANDALONE", "NGRAM",  "NONE"};
    bool ok = false;
    for (size_t i = 0; i < ST_ARRAY_LEN(known); i++)
      ok = ok || strcasecmp(algo, known[i]) == 0;
    if (!ok)
      return err_setf(
          err,
          "--speculative-algorithm %s: expected EAGLE, EAGLE3, NEXTN, MTP, STANDALONE or NGRAM",
          algo);
  }
  if (c->speculative_num_steps < 0 || c->speculative_num_steps > 16)
    return err_setf(err, "--speculative-num-steps %d: must be 1..16", c->speculative_num_steps);
  if (c->speculative_eagle_topk < 0 || c->speculative_eagle_topk > 16)
    return err_setf(err, "--speculative-eagle-topk %d: must be 1..16", c->speculative_eagle_topk);
  if (c->speculative_num_draft_tokens < 0 || c->speculative_num_draft_tokens > 256)
    return err_setf(err, "--speculative-num-draft-tokens %d: must be 1..256",
                    c->speculative_num_draft_tokens);
  if (c->spec_v2 && c->speculative_eagle_topk > 1)
    return err_setf(err, "SGLANG_ENABLE_SPEC_V2 requires --speculative-eagle-topk 1");
  if (c->simulate_acc_len != 0 && c->simulate_acc_len < 1)
    return err_setf(err, "SGLANG_SIMULATE_ACC_LEN=%g: must be >= 1", c->simulate_acc_len);
  if (!sim_gpu_find(c->gpu_name))
    return err_setf(err, "--sim-gpu %s: unknown (h100, h200, b200, b300, mi300x, mi325x, mi355x)",
                    c->gpu_name);
  if (c->model_preset && !sim_model_find(c->model_preset))
    return err_setf(err, "--sim-model %s: unknown preset (see servetop sim --help)",
                    c->model_preset);
  if (!sim_config_fixed_mode(c) && !c->model_preset && !sim_model_match(c->model_path))
    return err_setf(
        err,
        "--model %s: no model preset matches; pass --sim-model PRESET (see --help) or use "
        "fixed-latency mode (--sim-fixed-ttft-ms/--sim-fixed-tpot-ms)",
        c->model_path);
  if (!isnan(c->fixed_ttft_ms) && !(c->fixed_ttft_ms >= 0 && isfinite(c->fixed_ttft_ms)))
    return err_setf(err, "--sim-fixed-ttft-ms %g: must be >= 0", c->fixed_ttft_ms);
  if (!isnan(c->fixed_tpot_ms) && !(c->fixed_tpot_ms >= 0 && isfinite(c->fixed_tpot_ms)))
    return err_setf(err, "--sim-fixed-tpot-ms %g: must be >= 0", c->fixed_tpot_ms);
  if ((c->fixed_ttft_ms >= 0) != (c->fixed_tpot_ms >= 0))
    return err_setf(err,
                    "fixed-latency mode needs both --sim-fixed-ttft-ms and --sim-fixed-tpot-ms");
  if (c->accept_chat < 0 || c->accept_chat > 1 || c->accept_random < 0 || c->accept_random > 1)
    return err_setf(err, "--sim-accept-chat/--sim-accept-random must be in [0, 1]");
  if (c->decode_efficiency <= 0 || c->decode_efficiency > 1 || c->prefill_efficiency <= 0 ||
      c->prefill_efficiency > 1)
    return err_setf(err, "--sim-decode-efficiency/--sim-prefill-efficiency must be in (0, 1]");
  if (!(c->speed > 0) || !isfinite(c->speed))
    return err_setf(err, "--sim-speed %g: must be > 0", c->speed);
  if (c->health_delay_ms < 0 || c->warmup_ms < 0)
    return err_setf(err, "--sim-health-delay-ms/--sim-warmup-ms must be >= 0");
  if (c->gpus != 0 && c->gpus < 1)
    return err_setf(err, "--sim-gpus %d: must be >= 1", c->gpus);
  if (c->enable_dp_attention && c->dp_size > c->tp_size)
    return err_setf(err, "--dp %d: with --enable-dp-attention it must not exceed --tp %d",
                    c->dp_size, c->tp_size);
  int ranks = c->enable_dp_attention ? c->tp_size : c->tp_size * c->dp_size;
  if (c->gpus > 0 && ranks > c->gpus)
    return err_setf(err, "--tp %d x --dp %d needs %d GPUs but --sim-gpus is %d", c->tp_size,
                    c->enable_dp_attention ? 1 : c->dp_size, ranks, c->gpus);
  return 0;
}
