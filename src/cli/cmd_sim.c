/* servetop sim: SGLang launch_server flags → struct sim_config → sim_main(). */
#include "cli/cli.h"
#include "sim/sim.h" /* includes util/util.h, which must be included once */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sim_cli {
  struct sim_options opts;
  const char **unknown; /* "--name[=value]" strings, owned */
  size_t n_unknown;
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

int cmd_sim_main(int argc, char **argv) {
  struct sim_cli cli;
  memset(&cli, 0, sizeof cli);
  struct sim_config *c = &cli.opts.cfg;
  sim_config_init(c);
  struct opt_spec specs[SIM_OPTIONS_MAX];
  size_t n_specs = sim_options_specs(&cli.opts, specs, NULL, ST_ARRAY_LEN(specs));
  if (n_specs > ST_ARRAY_LEN(specs)) /* check_sim holds the table to its size */
    n_specs = ST_ARRAY_LEN(specs);
  struct opt_parser parser = {
      .usage = "servetop sim [SGLang launch_server flags] [--sim-* flags]",
      .description = description,
      .specs = specs,
      .n_specs = n_specs,
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
  for (size_t i = 0; i < cli.opts.faults.n; i++) {
    if (c->n_faults >= ST_ARRAY_LEN(c->faults)) {
      fprintf(stderr, "servetop sim: too many --sim-fault options\n");
      goto out;
    }
    if (sim_fault_parse(cli.opts.faults.items[i], &c->faults[c->n_faults++], &err) < 0) {
      fprintf(stderr, "servetop sim: %s\n", err.msg);
      goto out;
    }
  }
  if (cli.opts.seed_text) {
    long seed;
    if (parse_long(cli.opts.seed_text, &seed) < 0 || seed < 0) {
      fprintf(stderr, "servetop sim: --sim-seed %s: expected an integer >= 0\n",
              cli.opts.seed_text);
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
  free(cli.opts.faults.items);
  return status;
}
