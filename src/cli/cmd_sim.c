/* servetop sim: SGLang launch_server flags → struct sim_config → sim_main(). */
#include "cli/cli.h"
#include "sim/sim.h" /* includes util/util.h, which must be included once */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sim_cli {
  struct sim_config cfg;
  struct opt_list faults;
  const char **unknown; /* "--name[=value]" strings, owned */
  size_t n_unknown;
  const char *seed_text;
};

static int on_unknown(void *ctx, const char *name, const char *value, bool *consumed_next) {
  struct sim_cli *cli = ctx;
  cli->unknown = xreallocarray(cli->unknown, cli->n_unknown + 1, sizeof *cli->unknown);
  cli->unknown[cli->n_unknown++] =
      value ? xasprintf("--%s=%s", name, value) : xasprintf("--%s", name);
  *consumed_next = value != NULL;
  return 0; /* sim_main warns once per flag in its log */
}

static const char description[] =
    "A SIMULATED SGLang server: the same HTTP endpoints, SSE formats, /metrics names and log lines "
    "as\n"
    "`python -m sglang.launch_server`, with timing from a stated performance model of a GPU and a "
    "model\n"
    "(docs/sim.md), or exact fixed latencies with --sim-fixed-ttft-ms/--sim-fixed-tpot-ms. No GPU "
    "work is\n"
    "done and it always says so. Any other SGLang flag is accepted, warned about and listed in\n"
    "/get_server_info under \"unrecognized_args\".\n"
    "\n"
    "Environment: SGLANG_ENABLE_SPEC_V2=1 (overlapped draft/verify: smaller step overhead; needs "
    "topk 1),\n"
    "SGLANG_SIMULATE_ACC_LEN=X (pins the mean accept length, as SGLang does).\n"
    "\n"
    "Endpoints: POST /v1/completions, /v1/chat/completions, /generate; GET /health, "
    "/health_generate,\n"
    "/v1/models, /get_model_info, /get_server_info (/server_info), /metrics (--enable-metrics),\n"
    "/sim/gpu_memory (simulated GPU memory and power, JSON), /get_load, /ping.\n"
    "\n"
    "GPU presets: h100 h200 b200 b300 mi300x mi325x mi355x. Model presets: qwen3.5-397b "
    "deepseek-r1\n"
    "deepseek-v3 gpt-oss-120b gpt-oss-20b llama-3.1-8b llama-3.1-70b llama-3.3-70b (matched from "
    "--model).\n"
    "Faults (--sim-fault, repeatable): crash-after=N, stall-after=N, bad-json-after=N, "
    "reset-after=N,\n"
    "http-500[=N: every Nth], http-503[=N], trickle[=BYTES_PER_MS], error-event-after=N,\n"
    "no-usage-after=N. SGLang's tokenizer endpoints (/tokenize, /detokenize) and /start_profile,\n"
    "/stop_profile are served (docs/sim.md).\n"
    "Exit status: 0 after SIGINT/SIGTERM, 1 on a startup failure or a simulated crash, 2 on bad "
    "flags.";

/* Every table row: no callback, no "seen" flag. */
#define SPEC(names, kind, target, metavar, help)                                                   \
  { names, kind, target, metavar, help, NULL, NULL }

int cmd_sim_main(int argc, char **argv) {
  struct sim_cli cli;
  memset(&cli, 0, sizeof cli);
  struct sim_config *c = &cli.cfg;
  sim_config_init(c);
  bool trust_remote_code = false;
  const char *tokenizer_path = NULL;
  const struct opt_spec specs[] = {
      SPEC("model|model-path", OPT_STRING, &c->model_path, "PATH",
           "model name or path (selects the model preset)"),
      SPEC("served-model-name", OPT_STRING, &c->served_model_name, "NAME",
           "name in responses and /v1/models"),
      SPEC("tokenizer-path", OPT_STRING, &tokenizer_path, "PATH",
           "(accepted; the sim needs no tokenizer)"),
      SPEC("host", OPT_STRING, &c->host, "ADDR", "listen address (default 127.0.0.1)"),
      SPEC("port", OPT_INT, &c->port, "PORT", "listen port (default 30000; 0 = pick a free port)"),
      SPEC("tp|tp-size|tensor-parallel-size", OPT_INT, &c->tp_size, "N", "tensor parallel size"),
      SPEC("ep|ep-size|expert-parallel-size", OPT_INT, &c->ep_size, "N", "expert parallel size"),
      SPEC("dp|dp-size|data-parallel-size", OPT_INT, &c->dp_size, "N", "data parallel size"),
      SPEC("enable-dp-attention", OPT_FLAG, &c->enable_dp_attention, NULL,
           "DP attention (ranks = tp)"),
      SPEC("mem-fraction-static", OPT_DOUBLE, &c->mem_fraction_static, "F",
           "(weights + KV pool) / GPU memory; default by SGLang's TP rule"),
      SPEC("max-running-requests", OPT_INT, &c->max_running_requests, "N",
           "batch limit (default SGLang's rule)"),
      SPEC("chunked-prefill-size", OPT_INT, &c->chunked_prefill_size, "N",
           "prefill tokens per batch (default 8192)"),
      SPEC("max-prefill-tokens", OPT_INT, &c->max_prefill_tokens, "N",
           "prompt tokens per prefill batch (16384)"),
      SPEC("cuda-graph-max-bs", OPT_INT, &c->cuda_graph_max_bs, "N",
           "larger decode batches run slower"),
      SPEC("context-length", OPT_INT, &c->context_length, "N", "default: the model preset's"),
      SPEC("kv-cache-dtype", OPT_STRING, &c->kv_cache_dtype, "T",
           "auto | bf16 | fp8_e4m3 | fp8_e5m2 | fp4_e2m1"),
      SPEC("quantization", OPT_STRING, &c->quantization, "Q",
           "weight precision (fp8, mxfp4, modelopt_fp4...)"),
      SPEC("stream-interval", OPT_INT, &c->stream_interval, "N",
           "tokens per streamed chunk (SGLang's rule)"),
      SPEC("decode-log-interval", OPT_INT, &c->decode_log_interval, "N",
           "Decode batch log every N steps (40)"),
      SPEC("enable-metrics", OPT_FLAG, &c->enable_metrics, NULL, "serve Prometheus /metrics"),
      SPEC("disable-radix-cache", OPT_FLAG, &c->disable_radix_cache, NULL,
           "(no prefix cache is simulated)"),
      SPEC("skip-server-warmup", OPT_FLAG, &c->skip_server_warmup, NULL,
           "ready without the warmup request"),
      SPEC("speculative-algorithm|speculative-algo", OPT_STRING, &c->speculative_algorithm, "A",
           "EAGLE | EAGLE3 | NEXTN | MTP | STANDALONE"),
      SPEC("speculative-num-steps", OPT_INT, &c->speculative_num_steps, "N",
           "draft steps (default 3)"),
      SPEC("speculative-eagle-topk", OPT_INT, &c->speculative_eagle_topk, "K",
           "draft branching (default 1)"),
      SPEC("speculative-num-draft-tokens", OPT_INT, &c->speculative_num_draft_tokens, "N",
           "verified tokens per step (default steps+1)"),
      SPEC("trust-remote-code", OPT_FLAG, &trust_remote_code, NULL, "(accepted)"),
      SPEC("sim-gpu", OPT_STRING, &c->gpu_name, "NAME", "GPU preset (default h200)"),
      SPEC("sim-gpus", OPT_INT, &c->gpus, "N",
           "GPUs on the node (default tp*dp); fewer than needed is an error"),
      SPEC("sim-model", OPT_STRING, &c->model_preset, "PRESET",
           "model preset (default: matched from --model)"),
      SPEC("sim-fixed-ttft-ms", OPT_DOUBLE, &c->fixed_ttft_ms, "MS",
           "fixed mode: first chunk MS after the request is received"),
      SPEC("sim-fixed-tpot-ms", OPT_DOUBLE, &c->fixed_tpot_ms, "MS",
           "fixed mode: then one token every MS"),
      SPEC("sim-accept-chat", OPT_DOUBLE, &c->accept_chat, "P",
           "draft acceptance, chat prompts (0.80; position k: P*0.95^k)"),
      SPEC("sim-accept-random", OPT_DOUBLE, &c->accept_random, "P",
           "... raw random-token prompts (0.35)"),
      SPEC("sim-decode-efficiency", OPT_DOUBLE, &c->decode_efficiency, "F",
           "share of HBM bandwidth (0.65)"),
      SPEC("sim-prefill-efficiency", OPT_DOUBLE, &c->prefill_efficiency, "F",
           "share of dense FLOP/s (0.45)"),
      SPEC("sim-speed", OPT_DOUBLE, &c->speed, "X",
           "time scale: 2 = twice as fast as modelled (1)"),
      SPEC("sim-health-delay-ms", OPT_DOUBLE, &c->health_delay_ms, "MS",
           "/health latency once ready (20)"),
      SPEC("sim-warmup-ms", OPT_DOUBLE, &c->warmup_ms, "MS",
           "weight load before the warmup request (200)"),
      SPEC("sim-port-file", OPT_STRING, &c->port_file, "PATH",
           "write the port + newline once listening"),
      SPEC("sim-trace", OPT_STRING, &c->trace_path, "FILE",
           "JSON lines: per request received/chunk times (us)"),
      SPEC("sim-fault", OPT_LIST, &cli.faults, "KIND[=N]",
           "inject a fault (repeatable; see above)"),
      SPEC("sim-seed", OPT_STRING, &cli.seed_text, "N", "random seed (acceptance draws, ids)"),
  };
  struct opt_parser parser = {
      .usage = "servetop sim [SGLang launch_server flags] [--sim-* flags]",
      .description = description,
      .specs = specs,
      .n_specs = ST_ARRAY_LEN(specs),
      .unknown = on_unknown,
      .ctx = &cli,
  };
  struct st_err err = {{0}};
  int status = EXIT_USAGE;
  int prc = cli_parse_options(&parser, "sim", argc - 1, argv + 1, NULL, 0, NULL);
  if (prc != CLI_GO_ON) {
    status = prc;
    goto out;
  }
  for (size_t i = 0; i < cli.faults.n; i++) {
    if (c->n_faults >= ST_ARRAY_LEN(c->faults)) {
      fprintf(stderr, "servetop sim: too many --sim-fault options\n");
      goto out;
    }
    if (sim_fault_parse(cli.faults.items[i], &c->faults[c->n_faults++], &err) < 0) {
      fprintf(stderr, "servetop sim: %s\n", err.msg);
      goto out;
    }
  }
  if (cli.seed_text) {
    long seed;
    if (parse_long(cli.seed_text, &seed) < 0 || seed < 0) {
      fprintf(stderr, "servetop sim: --sim-seed %s: expected an integer >= 0\n", cli.seed_text);
      goto out;
    }
    c->seed = (uint64_t)seed;
  }
  const char *v2 = getenv("SGLANG_ENABLE_SPEC_V2");
  if (v2 && *v2 && parse_bool(v2, &c->spec_v2) < 0) {
    fprintf(stderr, "servetop sim: SGLANG_ENABLE_SPEC_V2=%s: expected 1/0/true/false\n", v2);
    goto out;
  }
  const char *acc = getenv("SGLANG_SIMULATE_ACC_LEN");
  if (acc && *acc && parse_double(acc, &c->simulate_acc_len) < 0) {
    fprintf(stderr, "servetop sim: SGLANG_SIMULATE_ACC_LEN=%s: expected a number\n", acc);
    goto out;
  }
  c->unrecognized_args = cli.unknown;
  c->n_unrecognized_args = cli.n_unknown;
  if (sim_config_validate(c, &err) < 0) {
    fprintf(stderr, "servetop sim: %s\n", err.msg);
    goto out;
  }
  fflush(stdout);
  if (sim_main(c, &err) < 0) {
    fprintf(stderr, "servetop sim: %s\n", err.msg);
    status = 1;
    goto out;
  }
  status = EXIT_OK;
out:
  for (size_t i = 0; i < cli.n_unknown; i++)
    free((void *)cli.unknown[i]);
  free(cli.unknown);
  free(cli.faults.items);
  return status;
}
