/* servetop sim's command line, in one table: SGLang's launch_server flags it models (they move
 * its timing or capacity), those it accepts as they are, and its own --sim-* settings. `servetop
 * sim` parses with it; sim_flag_modelled answers from it which flags a search may vary. */
#include "sim/sim.h"

#include <string.h>

/* One row: into the table, and whether it is modelled. */
#define ROW(is_modelled, names, kind, target, metavar, help)                                       \
  do {                                                                                             \
    if (n < max) {                                                                                 \
      specs[n] = (struct opt_spec){names, kind, target, metavar, help, NULL, NULL};                \
      if (modelled)                                                                                \
        modelled[n] = is_modelled;                                                                 \
    }                                                                                              \
    n++;                                                                                           \
  } while (0)
#define MODELLED(...) ROW(true, __VA_ARGS__)
#define ACCEPTED(...) ROW(false, __VA_ARGS__)

size_t sim_options_specs(struct sim_options *o, struct opt_spec *specs, bool *modelled,
                         size_t max) {
  size_t n = 0;
  MODELLED("model|model-path", OPT_STRING, &o->cfg.model_path, "PATH",
           "model name or path (selects the model preset)");
  ACCEPTED("served-model-name", OPT_STRING, &o->cfg.served_model_name, "NAME",
           "name in responses and /v1/models");
  ACCEPTED("tokenizer-path", OPT_STRING, &o->tokenizer_path, "PATH",
           "(accepted; the sim needs no tokenizer)");
  ACCEPTED("host", OPT_STRING, &o->cfg.host, "ADDR", "listen address (default 127.0.0.1)");
  ACCEPTED("port", OPT_INT, &o->cfg.port, "PORT",
           "listen port (default 30000; 0 = pick a free port)");
  MODELLED("tp|tp-size|tensor-parallel-size", OPT_INT, &o->cfg.tp_size, "N",
           "tensor parallel size");
  MODELLED("ep|ep-size|expert-parallel-size", OPT_INT, &o->cfg.ep_size, "N",
           "expert parallel size");
  MODELLED("dp|dp-size|data-parallel-size", OPT_INT, &o->cfg.dp_size, "N", "data parallel size");
  MODELLED("enable-dp-attention", OPT_FLAG, &o->cfg.enable_dp_attention, NULL,
           "DP attention (ranks = tp)");
  MODELLED("mem-fraction-static", OPT_DOUBLE, &o->cfg.mem_fraction_static, "F",
           "(weights + KV pool) / GPU memory; default by SGLang's TP rule");
  MODELLED("max-running-requests", OPT_INT, &o->cfg.max_running_requests, "N",
           "batch limit (default SGLang's rule)");
  MODELLED("chunked-prefill-size", OPT_INT, &o->cfg.chunked_prefill_size, "N",
           "prefill tokens per batch (default 8192)");
  MODELLED("max-prefill-tokens", OPT_INT, &o->cfg.max_prefill_tokens, "N",
           "prompt tokens per prefill batch (16384)");
  MODELLED("cuda-graph-max-bs", OPT_INT, &o->cfg.cuda_graph_max_bs, "N",
           "larger decode batches run slower");
  MODELLED("context-length", OPT_INT, &o->cfg.context_length, "N", "default: the model preset's");
  MODELLED("kv-cache-dtype", OPT_STRING, &o->cfg.kv_cache_dtype, "T",
           "auto | bf16 | fp8_e4m3 | fp8_e5m2 | fp4_e2m1");
  MODELLED("quantization", OPT_STRING, &o->cfg.quantization, "Q",
           "weight precision (fp8, mxfp4, modelopt_fp4...)");
  MODELLED("stream-interval", OPT_INT, &o->cfg.stream_interval, "N",
           "tokens per streamed chunk (SGLang's rule)");
  ACCEPTED("decode-log-interval", OPT_INT, &o->cfg.decode_log_interval, "N",
           "Decode batch log every N steps (40)");
  ACCEPTED("enable-metrics", OPT_FLAG, &o->cfg.enable_metrics, NULL, "serve Prometheus /metrics");
  ACCEPTED("disable-radix-cache", OPT_FLAG, &o->cfg.disable_radix_cache, NULL,
           "(no prefix cache is simulated)");
  ACCEPTED("skip-server-warmup", OPT_FLAG, &o->cfg.skip_server_warmup, NULL,
           "ready without the warmup request");
  MODELLED("speculative-algorithm|speculative-algo", OPT_STRING, &o->cfg.speculative_algorithm, "A",
           "EAGLE | EAGLE3 | NEXTN | MTP | STANDALONE");
  MODELLED("speculative-num-steps", OPT_INT, &o->cfg.speculative_num_steps, "N",
           "draft steps (default 3)");
  MODELLED("speculative-eagle-topk", OPT_INT, &o->cfg.speculative_eagle_topk, "K",
           "draft branching (default 1)");
  MODELLED("speculative-num-draft-tokens", OPT_INT, &o->cfg.speculative_num_draft_tokens, "N",
           "verified tokens per step (default steps+1)");
  ACCEPTED("trust-remote-code", OPT_FLAG, &o->trust_remote_code, NULL, "(accepted)");
  MODELLED("sim-gpu", OPT_STRING, &o->cfg.gpu_name, "NAME", "GPU preset (default h200)");
  MODELLED("sim-gpus", OPT_INT, &o->cfg.gpus, "N",
           "GPUs on the node (default tp*dp); fewer than needed is an error");
  MODELLED("sim-model", OPT_STRING, &o->cfg.model_preset, "PRESET",
           "model preset (default: matched from --model)");
  MODELLED("sim-fixed-ttft-ms", OPT_DOUBLE, &o->cfg.fixed_ttft_ms, "MS",
           "fixed mode: first chunk MS after the request is received");
  MODELLED("sim-fixed-tpot-ms", OPT_DOUBLE, &o->cfg.fixed_tpot_ms, "MS",
           "fixed mode: then one token every MS");
  MODELLED("sim-accept-chat", OPT_DOUBLE, &o->cfg.accept_chat, "P",
           "draft acceptance, chat prompts (0.80; position k: P*0.95^k)");
  MODELLED("sim-accept-random", OPT_DOUBLE, &o->cfg.accept_random, "P",
           "... raw random-token prompts (0.35)");
  MODELLED("sim-decode-efficiency", OPT_DOUBLE, &o->cfg.decode_efficiency, "F",
           "share of HBM bandwidth (0.65)");
  MODELLED("sim-prefill-efficiency", OPT_DOUBLE, &o->cfg.prefill_efficiency, "F",
           "share of dense FLOP/s (0.45)");
  MODELLED("sim-speed", OPT_DOUBLE, &o->cfg.speed, "X",
           "time scale: 2 = twice as fast as modelled (1)");
  ACCEPTED("sim-health-delay-ms", OPT_DOUBLE, &o->cfg.health_delay_ms, "MS",
           "/health latency once ready (20)");
  ACCEPTED("sim-warmup-ms", OPT_DOUBLE, &o->cfg.warmup_ms, "MS",
           "weight load before the warmup request (200)");
  ACCEPTED("sim-port-file", OPT_STRING, &o->cfg.port_file, "PATH",
           "write the port + newline once listening");
  ACCEPTED("sim-trace", OPT_STRING, &o->cfg.trace_path, "FILE",
           "JSON lines: per request received/chunk times (us)");
  ACCEPTED("sim-fault", OPT_LIST, &o->faults, "KIND[=N]", "inject a fault (repeatable; see above)");
  ACCEPTED("sim-seed", OPT_STRING, &o->seed_text, "N", "random seed (acceptance draws, ids)");
  return n;
}

bool sim_flag_modelled(const char *name, size_t len) {
  static struct sim_options dummy; /* the rows' targets, never written */
  struct opt_spec specs[SIM_OPTIONS_MAX];
  bool modelled[SIM_OPTIONS_MAX];
  size_t n = sim_options_specs(&dummy, specs, modelled, SIM_OPTIONS_MAX);
  for (size_t i = 0; i < n && i < SIM_OPTIONS_MAX; i++)
    if (opt_names_match(specs[i].names, name, len))
      return modelled[i];
  return false; /* not in the table: accepted, warned about, not modelled */
}
