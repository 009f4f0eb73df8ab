/* engine: the descriptor table — command lines, flag rows and knobs (lookup,
 * generic knobs, validation), launch recognition in script words, the sim's
 * reading of other engines' flags, server info readers on captured text. */
#include "engine/engine.h"
#include "engine/engine_internal.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *build_line(const struct eng_ops *e, const struct eng_target *t) {
  struct launch_cmd cmd;
  struct st_err err = {{0}};
  launch_cmd_init(&cmd);
  ck_assert_msg(eng_build_cmd(e, &cmd, t, &err) == 0, "%s", err.msg);
  ck_assert_ptr_null(cmd.argv[cmd.argc]);
  char *line = launch_cmd_format_alloc(&cmd);
  launch_cmd_fini(&cmd);
  return line;
}

START_TEST(engine_command_lines) {
  char *args[] = {"--tp", "8", "--port", "30000", "--host=0.0.0.0", "--mem-fraction-static=0.8"};
  char *env[] = {"SGLANG_ENABLE_SPEC_V2=1", "PYTHONNOUSERSITE=1"};
  struct eng_target t = {.model = "org/model", .server_args = args,
                         .n_server_args = ST_ARRAY_LEN(args), .env = env,
                         .n_env = ST_ARRAY_LEN(env), .port = 4567, .gpus = "2,3"};
  struct launch_cmd cmd;
  struct st_err err = {{0}};
  launch_cmd_init(&cmd);
  ck_assert_int_eq(eng_build_cmd(eng_find("sglang"), &cmd, &t, &err), 0);
  char *line = launch_cmd_format_alloc(&cmd);
  ck_assert_str_eq(line, "SGLANG_ENABLE_SPEC_V2=1 PYTHONNOUSERSITE=1 CUDA_VISIBLE_DEVICES=2,3 "
                         "HIP_VISIBLE_DEVICES=2,3 python3 -m sglang.launch_server --model-path "
                         "org/model --tp 8 --mem-fraction-static=0.8 --host 127.0.0.1 --port 4567");
  free(line);
  ck_assert_ptr_null(cmd.argv[cmd.argc]);
  ck_assert_str_eq(launch_cmd_get_env(&cmd, "CUDA_VISIBLE_DEVICES"), "2,3");
  launch_cmd_set_env(&cmd, "PYTHONNOUSERSITE", "0"); /* replaces, not appends */
  ck_assert_uint_eq(cmd.n_env, 4);
  ck_assert_str_eq(launch_cmd_get_env(&cmd, "PYTHONNOUSERSITE"), "0");
  launch_cmd_fini(&cmd);

  t.n_server_args = 2;
  t.n_env = 0;
  t.gpus = NULL;
  line = build_line(eng_find("vllm"), &t);
  ck_assert_str_eq(line, "vllm serve org/model --tp 8 --host 127.0.0.1 --port 4567");
  free(line);

  char *sim_args[] = {"--model-path", "x y", "--speculative-algorithm", "EAGLE"};
  t = (struct eng_target){.model = "ignored", .server_args = sim_args, .n_server_args = 4,
                          .port = 9, .servetop_exe = "/opt/servetop"};
  line = build_line(eng_sim(), &t);
  ck_assert_str_eq(line, "/opt/servetop sim --model-path 'x y' --speculative-algorithm EAGLE "
                         "--host 127.0.0.1 --port 9");
  free(line);

  t.port = 0;
  launch_cmd_init(&cmd);
  ck_assert_int_eq(eng_build_cmd(eng_sim(), &cmd, &t, &err), -1);
  ck_assert(strstr(err.msg, "port") != NULL);
  launch_cmd_fini(&cmd);

  t = (struct eng_target){.port = 9};
  launch_cmd_init(&cmd);
  ck_assert_int_eq(eng_build_cmd(eng_find("vllm"), &cmd, &t, &err), -1);
  ck_assert_msg(strstr(err.msg, "needs a model") != NULL, "%s", err.msg);
  launch_cmd_fini(&cmd);

  ck_assert_ptr_eq(eng_find("vllm"), eng_at(2));
  ck_assert_ptr_null(eng_find("trt"));
  ck_assert_ptr_null(eng_find(NULL));
  ck_assert(eng_sim()->simulated);
}
END_TEST

START_TEST(table_rows_are_whole) {
  ck_assert_uint_ge(eng_count(), 3);
  for (size_t i = 0; i < eng_count(); i++) {
    const struct eng_ops *e = eng_at(i);
    ck_assert_msg(e->name && e->title && e->program && e->program_words && e->probe, "%s",
                  e->name);
    ck_assert_msg(e->ready_timeout_ms > 0 && e->parse_log_line && e->read_metrics && e->summarize,
                  "%s", e->name);
    ck_assert_ptr_eq(eng_find(e->name), e);
    for (size_t k = 0; k < i; k++)
      ck_assert_str_ne(eng_at(k)->name, e->name);
  }
  ck_assert_ptr_nonnull(strstr(eng_names(false), "sim, sglang"));
  ck_assert_ptr_nonnull(strstr(eng_names(false), " or "));
  ck_assert_ptr_null(strstr(eng_names(true), "sim"));
  ck_assert_str_eq(eng_program_of("vllm"), "vllm serve");
  ck_assert_str_eq(eng_program_of("trt"), "python3 -m sglang.launch_server");
}
END_TEST

static size_t recognise(const char *line, const char **engine) {
  char *copy = xstrdup(line), *save = NULL, *words[16];
  size_t n = 0;
  for (char *w = strtok_r(copy, " ", &save); w && n < 16; w = strtok_r(NULL, " ", &save))
    words[n++] = w;
  *engine = "untouched";
  size_t k = eng_recognise_launch(words, n, engine);
  free(copy);
  return k;
}

START_TEST(launch_recognition) {
  const char *e;
  ck_assert_uint_eq(recognise("python3 -m sglang.launch_server --tp 8", &e), 3);
  ck_assert_str_eq(e, "sglang");
  ck_assert_uint_eq(recognise("/usr/bin/sglang serve --model-path m", &e), 2);
  ck_assert_str_eq(e, "sglang");
  ck_assert_uint_eq(recognise("vllm serve m --tp 8", &e), 2);
  ck_assert_str_eq(e, "vllm");
  ck_assert_uint_eq(recognise("numactl -N 0 python3 -m vllm.entrypoints.openai.api_server --x 1", &e),
                    6);
  ck_assert_str_eq(e, "vllm");
  ck_assert_uint_eq(recognise("python3 -m atom.entrypoints.openai_server --x", &e), 3);
  ck_assert_ptr_null(e);
  ck_assert_uint_eq(recognise("echo sglang serve", &e), 3); /* as before: within 6 words */
  ck_assert_uint_eq(recognise("run_benchmark_serving --model m", &e), 0);
  ck_assert_uint_eq(recognise("vllm", &e), 0);
}
END_TEST

START_TEST(flag_rows_and_generic_knobs) {
  const struct eng_ops *sg = eng_find("sglang"), *vl = eng_find("vllm");
  /* InferenceX spellings are one flag on both */
  const struct eng_flag *tp = eng_flag_lookup(sg, "tp", 2);
  ck_assert_ptr_nonnull(tp);
  ck_assert_ptr_eq(eng_flag_lookup(vl, "tensor-parallel-size", 20), tp);
  ck_assert_ptr_eq(eng_flag_lookup(NULL, "tp-size", 7), tp); /* unknown engines too */
  ck_assert_str_eq(eng_flag_spelling(tp, "tp-size", 7), "--tp-size");
  /* the generic knobs land on each engine's own flag */
  const struct eng_flag *kv = eng_flag_lookup(sg, "kv-cache", 8);
  ck_assert_str_eq(kv->names[0], "--mem-fraction-static");
  ck_assert_ptr_eq(eng_flag_lookup(sg, "mem-fraction", 12), kv);
  ck_assert_str_eq(eng_flag_lookup(vl, "mem-fraction", 12)->names[0], "--gpu-memory-utilization");
  ck_assert_str_eq(eng_flag_lookup(sg, "max-batch", 9)->names[0], "--max-running-requests");
  ck_assert_str_eq(eng_flag_lookup(vl, "batch-cap", 9)->names[0], "--max-num-seqs");
  ck_assert_str_eq(eng_flag_lookup(eng_sim(), "max-batch", 9)->names[0], "--max-running-requests");
  ck_assert_ptr_null(eng_flag_lookup(sg, "no-such-flag", 12));
  ck_assert(eng_arg_is_flag(sg, "--anything"));
  ck_assert(!eng_arg_is_flag(sg, "-x"));
  ck_assert(!eng_arg_is_flag(sg, "8"));

  char *args[] = {"--tp", "8", "--max-running-requests=64", "--max-num-seqs", "32"};
  ck_assert_int_eq(eng_batch_cap_from_args(sg, args, 3), 64);
  ck_assert_int_eq(eng_batch_cap_from_args(vl, args, 5), 32);
  ck_assert_int_eq(eng_batch_cap_from_args(vl, args, 3), -1);
}
END_TEST

/* What the recipe doctor asks the table instead of naming engines itself. */
START_TEST(doctor_questions) {
  const struct eng_ops *sg = eng_find("sglang"), *vl = eng_find("vllm"),
                       *lc = eng_find("llamacpp");
  /* InferenceX framework -> engine, and its upstream image */
  ck_assert_ptr_eq(eng_for_framework("sglang"), sg);
  ck_assert_ptr_eq(eng_for_framework("vllm"), vl);
  ck_assert_ptr_null(eng_for_framework("trt"));
  ck_assert_ptr_null(eng_for_framework("dynamo-sglang"));
  ck_assert_ptr_null(eng_for_framework(NULL));
  ck_assert_str_eq(sg->upstream_image, "lmsysorg/sglang");
  ck_assert_str_eq(vl->upstream_image, "vllm/vllm-openai");
  /* the KV cache as a fraction of GPU memory: not llama.cpp's tokens */
  ck_assert_str_eq(eng_gpu_memory_flag(sg), "mem-fraction-static");
  ck_assert_str_eq(eng_gpu_memory_flag(vl), "gpu-memory-utilization");
  ck_assert_ptr_null(eng_gpu_memory_flag(lc));
  ck_assert_ptr_null(eng_gpu_memory_flag(NULL));
  /* batch limits and how they split over DP ranks */
  ck_assert_str_eq(eng_knob_row(sg, ENG_KNOB_GRAPH_BATCH)->names[0], "--cuda-graph-max-bs");
  ck_assert_ptr_null(eng_knob_row(vl, ENG_KNOB_GRAPH_BATCH));
  ck_assert_ptr_null(eng_knob_row(NULL, ENG_KNOB_BATCH_CAP));
  ck_assert_ptr_null(eng_knob_row(sg, ENG_KNOB_NONE));
  ck_assert(!eng_knob_per_dp_rank(sg, ENG_KNOB_BATCH_CAP)); /* SGLang divides it itself */
  ck_assert(eng_knob_per_dp_rank(vl, ENG_KNOB_BATCH_CAP));
  ck_assert(eng_knob_per_dp_rank(sg, ENG_KNOB_GRAPH_BATCH));
  /* vLLM's expert-parallel switch takes no value */
  const struct eng_flag *ep = eng_knob_row(vl, ENG_KNOB_EXPERT_PARALLEL);
  ck_assert_str_eq(ep->names[0], "--enable-expert-parallel");
  char *ep_args[] = {"--enable-expert-parallel", "m"};
  ck_assert_str_eq(eng_arg_value(vl, ep_args, 2, "enable-expert-parallel"), "");
  ck_assert_ptr_null(eng_knob_row(sg, ENG_KNOB_EXPERT_PARALLEL));

  /* speculative decoding as InferenceX's engines spell it */
  ck_assert(eng_word_enables_spec("--speculative-algorithm", NULL));
  ck_assert(eng_word_enables_spec("--speculative-config={\"method\":\"mtp\"}", NULL));
  ck_assert(eng_word_enables_spec("speculative_config:", NULL));
  ck_assert(eng_word_enables_spec("--method", "'eagle3'"));
  ck_assert(!eng_word_enables_spec("--method", "tp"));
  ck_assert(!eng_word_enables_spec("--method", NULL));
  ck_assert(eng_word_enables_spec("(--method eagle3 --num-speculative-tokens 3)", NULL));
  ck_assert(eng_word_enables_spec("(--method=mtp)", NULL));
  ck_assert(!eng_word_enables_spec("(--method tp)", NULL));
  ck_assert(!eng_word_enables_spec("--methods", NULL));
  char *atom[] = {"--model", "m", "--method", "mtp"};
  ck_assert(eng_args_enable_spec("atom", atom, 4)); /* an engine servetop does not drive */
  ck_assert(!eng_args_enable_spec("atom", atom, 3));
  ck_assert_str_eq(eng_spec_switch_flags()[0], "speculative-algorithm");

  /* SGLang's advice: EAGLE with topk 1 belongs on the v2 path */
  char buf[256];
  const char *flag = NULL;
  char *eagle[] = {"--speculative-algo", "EAGLE", "--speculative-eagle-topk", "1"};
  char *env_off[] = {"SGLANG_ENABLE_SPEC_V2=0"}, *env_on[] = {"X=1", "SGLANG_ENABLE_SPEC_V2=True"};
  ck_assert(eng_args_spec_advice("sglang", eagle, 4, env_off, 1, buf, sizeof buf, &flag));
  ck_assert_str_eq(flag, "speculative-algorithm");
  ck_assert_ptr_nonnull(strstr(buf, "SGLang EAGLE with topk 1 without SGLANG_ENABLE_SPEC_V2=1"));
  ck_assert(eng_args_spec_advice("sglang", eagle, 2, NULL, 0, buf, sizeof buf, &flag));
  ck_assert(!eng_args_spec_advice("sglang", eagle, 4, env_on, 2, buf, sizeof buf, &flag));
  char *topk4[] = {"--speculative-algorithm", "NEXTN", "--speculative-eagle-topk", "4"};
  ck_assert(!eng_args_spec_advice("sglang", topk4, 4, NULL, 0, buf, sizeof buf, &flag));
  ck_assert(!eng_args_spec_advice("vllm", eagle, 4, NULL, 0, buf, sizeof buf, &flag));
  ck_assert(!eng_args_spec_advice("trt", eagle, 4, NULL, 0, buf, sizeof buf, &flag));
}
END_TEST

START_TEST(knob_values_are_checked_before_anything_stops) {
  const struct eng_ops *sg = eng_find("sglang"), *vl = eng_find("vllm");
  struct st_err err = {{0}};
  ck_assert_int_eq(eng_check_knob(sg, "mem-fraction-static", "0.85", &err), 0);
  ck_assert_int_eq(eng_check_knob(sg, "--kv-cache", "0.5", &err), 0);
  ck_assert_int_eq(eng_check_knob(sg, "mem-fraction-static", "1.5", &err), -1);
  ck_assert_msg(strstr(err.msg, "fraction") && strstr(err.msg, "--mem-fraction-static"), "%s",
                err.msg);
  ck_assert_int_eq(eng_check_knob(vl, "mem-fraction", "high", &err), -1);
  ck_assert_msg(strstr(err.msg, "--gpu-memory-utilization"), "%s", err.msg);
  ck_assert_int_eq(eng_check_knob(sg, "max-batch", "0", &err), -1);
  ck_assert_int_eq(eng_check_knob(sg, "tp", "4", &err), 0);
  ck_assert_int_eq(eng_check_knob(sg, "tp", "four", &err), -1);
  /* flags servetop does not list pass: SGLang has hundreds */
  ck_assert_int_eq(eng_check_knob(sg, "attention-backend", "fa3", &err), 0);
  ck_assert_int_eq(eng_check_knob(sg, "", "1", &err), -1);
  ck_assert_int_eq(eng_check_knob(sg, "a b", "1", &err), -1);
  /* an engine servetop does not know has no kv-cache flag to map to */
  ck_assert_int_eq(eng_check_knob(NULL, "kv-cache", "0.5", &err), -1);
  ck_assert_msg(strstr(err.msg, "no KV cache flag"), "%s", err.msg);
}
END_TEST

START_TEST(vllm_recipes_read_as_sglang_on_the_sim) {
  char *args[] = {"--gpu-memory-utilization", "0.9", "--speculative-config",
                  "{\"method\":\"mtp\",\"num_speculative_tokens\":2}", "--max-num-seqs=8",
                  "--trust-remote-code"};
  struct launch_cmd out;
  launch_cmd_init(&out);
  eng_find("vllm")->args_for_sim(args, ST_ARRAY_LEN(args), &out);
  char *line = launch_cmd_format_alloc(&out);
  /* renamed in either form, "--flag value" and "--flag=value" (the sim models
   * --max-running-requests, not --max-num-seqs); flags without a twin pass as written */
  ck_assert_str_eq(line, "--mem-fraction-static 0.9 --speculative-algorithm NEXTN "
                         "--speculative-num-steps 2 --speculative-eagle-topk 1 "
                         "--speculative-num-draft-tokens 3 --max-running-requests=8 "
                         "--trust-remote-code");
  free(line);
  launch_cmd_fini(&out);
}
END_TEST


/* ---------------------------------------------------------------- llama.cpp */
/* An executable file to stand in for llama-server (the command is built, not run). */
static char *fake_program(void) {
  char *path = xasprintf("%s/check_engine_llama_server_%d", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
                         (int)getpid());
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fputs("#!/bin/sh\nexit 0\n", f);
  fclose(f);
  ck_assert_int_eq(chmod(path, 0755), 0);
  return path;
}

START_TEST(llamacpp_command_line_and_binary) {
  const struct eng_ops *e = eng_find("llamacpp");
  ck_assert_ptr_nonnull(e);
  ck_assert(!e->simulated && e->recipe_engine && !e->sim_stands_in);
  ck_assert_ptr_null(e->ready_line); /* /health: 503 while loading, then 200 */
  char *prog = fake_program();
  struct st_err err = {{0}};
  ck_assert_int_eq(eng_set_program_path("llama-server", "/nonexistent/llama-server", &err), -1);
  ck_assert_int_eq(eng_set_program_path("no-such-program", prog, &err), -1);
  ck_assert_msg(eng_set_program_path("llama-server", prog, &err) == 0, "%s", err.msg);
  ck_assert_str_eq(eng_program_path(e), prog);
  char path[4096], why[512];
  ck_assert(e->locate(path, sizeof path, why, sizeof why));
  ck_assert_str_eq(path, prog);
  ck_assert(e->probe(why, sizeof why)); /* --version exits 0 */

  /* the model exists (the fake program stands in for it); --host/--port ours, --metrics on */
  char *args[] = {"-m", prog, "-c", "4096", "-np", "4", "--port", "8080", "--host=0.0.0.0"};
  struct eng_target t = {.model = "ignored", .server_args = args,
                         .n_server_args = ST_ARRAY_LEN(args), .port = 9};
  char *line = build_line(e, &t);
  char *want = xasprintf("%s -m %s -c 4096 -np 4 --metrics --host 127.0.0.1 --port 9", prog, prog);
  ck_assert_str_eq(line, want);
  free(line);
  free(want);
  /* no -m: the recipe's model; --metrics given is not doubled */
  char *args2[] = {"--metrics", "-t", "1"};
  t = (struct eng_target){.model = prog, .server_args = args2, .n_server_args = 3, .port = 9};
  line = build_line(e, &t);
  want = xasprintf("%s -m %s --metrics -t 1 --host 127.0.0.1 --port 9", prog, prog);
  ck_assert_str_eq(line, want);
  free(line);
  free(want);
  /* a model file that is not there is said before anything starts */
  char *args3[] = {"-m", prog, "-md", "/nonexistent/draft.gguf"};
  t = (struct eng_target){.server_args = args3, .n_server_args = 4, .port = 9};
  struct launch_cmd cmd;
  launch_cmd_init(&cmd);
  ck_assert_int_eq(eng_build_cmd(e, &cmd, &t, &err), -1);
  ck_assert_msg(strstr(err.msg, "/nonexistent/draft.gguf") && strstr(err.msg, "GGUF"),
                "%s", err.msg);
  launch_cmd_fini(&cmd);
  /* one of the setup script's pairs: which --models writes it */
  char *args4[] = {"-m", prog, "-md", "/nonexistent/small-draft.gguf"};
  t = (struct eng_target){.server_args = args4, .n_server_args = 4, .port = 9};
  launch_cmd_init(&cmd);
  ck_assert_int_eq(eng_build_cmd(e, &cmd, &t, &err), -1);
  ck_assert_msg(strstr(err.msg, "scripts/setup-llamacpp.sh --models small writes it"), "%s",
                err.msg);
  launch_cmd_fini(&cmd);
  unlink(prog);
  free(prog);
}
END_TEST

START_TEST(llamacpp_flags_knobs_and_spec) {
  const struct eng_ops *e = eng_find("llamacpp");
  struct st_err err = {{0}};
  /* short spellings are flags of this engine only */
  ck_assert(eng_arg_is_flag(e, "-np"));
  ck_assert(eng_arg_is_flag(e, "-c"));
  ck_assert(eng_arg_is_flag(e, "-md"));
  ck_assert(!eng_arg_is_flag(e, "-zz"));
  ck_assert(!eng_arg_is_flag(eng_find("sglang"), "-np"));
  /* generic knobs: the KV cache is -c tokens, the batch cap the slots */
  ck_assert_str_eq(eng_flag_lookup(e, "kv-cache", 8)->names[0], "--ctx-size");
  ck_assert_str_eq(eng_flag_lookup(e, "mem-fraction", 12)->names[1], "-c");
  ck_assert_str_eq(eng_flag_lookup(e, "max-batch", 9)->names[0], "--parallel");
  ck_assert_ptr_eq(eng_flag_lookup(e, "np", 2), eng_flag_lookup(e, "parallel", 8));
  ck_assert_str_eq(eng_flag_spelling(eng_flag_lookup(e, "np", 2), "np", 2), "-np");
  ck_assert_ptr_null(eng_flag_lookup(e, "tp", 2)); /* no InferenceX spellings here */
  ck_assert_int_eq(eng_check_knob(e, "kv-cache", "8192", &err), 0);
  ck_assert_int_eq(eng_check_knob(e, "mem-fraction", "0.5", &err), -1);
  ck_assert_msg(strstr(err.msg, "--ctx-size") && strstr(err.msg, "llama.cpp"), "%s", err.msg);
  ck_assert_int_eq(eng_check_knob(e, "np", "0", &err), -1);
  ck_assert_int_eq(eng_check_knob(e, "np", "-1", &err), 0); /* auto */
  ck_assert_int_eq(eng_check_knob(e, "metrics", "", &err), 0);
  ck_assert_int_eq(eng_check_knob(e, "metrics", "yes", &err), -1);
  char *args[] = {"-m", "x.gguf", "--metrics", "-np", "6", "-c", "4096"};
  ck_assert_int_eq(eng_batch_cap_from_args(e, args, ST_ARRAY_LEN(args)), 6);

  /* the mislabel trap: a draft model without --spec-type is loaded and never used */
  char *off[] = {"-m", "t.gguf", "-md", "d.gguf", "-td", "1"};
  char *on[] = {"-m", "t.gguf", "--model-draft", "d.gguf", "--spec-type", "draft-simple"};
  char *none[] = {"-m", "t.gguf", "-md", "d.gguf", "--spec-type=none"};
  ck_assert(!eng_args_enable_spec("llamacpp", off, 6));
  ck_assert_ptr_nonnull(strstr(eng_args_spec_problem("llamacpp", off, 6), "--spec-type"));
  ck_assert(eng_args_enable_spec("llamacpp", on, 6));
  ck_assert_ptr_null(eng_args_spec_problem("llamacpp", on, 6));
  ck_assert(!eng_args_enable_spec("llamacpp", none, 5));
  ck_assert_ptr_nonnull(eng_args_spec_problem("llamacpp", none, 5));
  ck_assert_ptr_null(eng_args_spec_problem("sglang", off, 6));
  ck_assert(!eng_args_enable_spec("trt", on, 6));

  /* on the sim (asked for with --engine sim): slots and a used draft in SGLang's terms */
  char *recipe[] = {"-m", "t.gguf", "-c", "4096", "-np", "4", "-t", "1", "-md", "d.gguf",
                    "--spec-type", "draft-simple", "--spec-draft-n-max", "8", "-td", "1"};
  struct launch_cmd out;
  launch_cmd_init(&out);
  e->args_for_sim(recipe, ST_ARRAY_LEN(recipe), &out);
  char *line = launch_cmd_format_alloc(&out);
  ck_assert_str_eq(line, "--max-running-requests 4 --speculative-algorithm STANDALONE "
                         "--speculative-num-steps 8 --speculative-eagle-topk 1 "
                         "--speculative-num-draft-tokens 9 --sim-model llama-3.1-8b "
                         "--enable-metrics");
  free(line);
  launch_cmd_fini(&out);
  launch_cmd_init(&out);
  e->args_for_sim(off, 6, &out); /* the unused draft stays unused on the sim too */
  line = launch_cmd_format_alloc(&out);
  ck_assert_str_eq(line, "--sim-model llama-3.1-8b --enable-metrics");
  free(line);
  launch_cmd_fini(&out);

  const char *name = NULL;
  ck_assert_uint_eq(recognise("/opt/llama.cpp/bin/llama-server -m x.gguf -c 4096", &name), 1);
  ck_assert_str_eq(name, "llamacpp");
  ck_assert_uint_eq(recognise("numactl -C 0 llama-server -m x", &name), 4);
}
END_TEST

/* Lines of a real llama-server (tests/data/engine/llamacpp_server.log, commit 80fb11a). */
START_TEST(llamacpp_log_lines) {
  const struct eng_ops *e = eng_find("llamacpp");
  struct eng_log_record r;
  ck_assert_int_eq(eng_log_parse_line(e, "0.00.204.226 I srv    load_model: initializing, "
                                         "n_slots = 4, n_ctx_slot = 1024, kv_unified = 'false'",
                                      &r),
                   ENG_LOG_KV_CAPACITY);
  ck_assert_int_eq(r.max_total_num_tokens, 4096);
  ck_assert_int_eq(r.max_running_requests, 4);
  ck_assert_int_eq(r.context_len, 1024);
  /* one cache shared by the slots (-kvu, or -np auto): the slot's context is the whole */
  eng_log_parse_line(e, "I srv load_model: initializing, n_slots = 4, n_ctx_slot = 4096, "
                        "kv_unified = 'true'", &r);
  ck_assert_int_eq(r.max_total_num_tokens, 4096);
  ck_assert_int_eq(eng_log_parse_line(e, "0.00.368.984 I slot print_timing: id  3 | task 4 | "
                                         "draft acceptance = 0.93103 (   27 accepted /    29 "
                                         "generated), mean len =  7.75",
                                      &r),
                   ENG_LOG_SPEC);
  ck_assert(fabs(r.accept_rate_frac - 0.93103) < 1e-9 && fabs(r.accept_length - 7.75) < 1e-9);
  ck_assert_int_eq(r.accepted_tokens, 27);
  ck_assert_int_eq(r.drafted_tokens, 29);
  /* counts past int64 (found by fuzz_engine_log: a double-to-integer overflow) are not read */
  ck_assert_int_eq(eng_log_parse_line(e, "draft acceptance = 0.6 (   25 accepted / 2222222222222222222222"
                                         "22222222 generated)",
                                      &r),
                   ENG_LOG_SPEC);
  ck_assert(!(r.has & ENG_LOG_HAS_SPEC_TOKENS));
  ck_assert_int_eq(eng_log_parse_line(e, "initializing, n_slots = x", &r), ENG_LOG_OTHER);

  /* the whole captured log folds into the run's figures */
  size_t len;
  struct st_err err;
  char *text = file_read_all(TEST_DATA_DIR "/engine/llamacpp_server.log", &len, &err);
  ck_assert_msg(text != NULL, "%s", err.msg);
  struct eng_log_state st;
  eng_log_state_init(&st);
  int n_spec = 0;
  char *save = NULL;
  for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
    n_spec += eng_log_parse_line(e, l, &r) == ENG_LOG_SPEC;
    eng_log_state_add(&st, &r, 1);
  }
  free(text);
  ck_assert(st.max_total_num_tokens_valid && st.max_total_num_tokens == 4096);
  ck_assert(st.max_running_valid && st.max_running_requests == 4);
  ck_assert(st.spec_seen && st.accept_length_valid);
  ck_assert_int_eq(n_spec, 8); /* one per request of the run */
  /* the same lines read as any engine (no engine given) */
  eng_log_parse_line(NULL, "srv load_model: initializing, n_slots = 2, n_ctx_slot = 512, kv_unified = 'false'",
                     &r);
  ck_assert_int_eq(r.max_total_num_tokens, 1024);
}
END_TEST

/* issues 22.4 and 19.6: decimal values only; a typo of a known flag is
 * refused with a did-you-mean; --help text gives a binary's flag list. */
START_TEST(knob_names_and_decimal_values) {
  const struct eng_ops *sg = eng_find("sglang");
  struct st_err err;
  const char *bad[] = {"nan", "inf", "0x1p-1", "1e", ".", "2", "0", "-0.5", " 0.5", "0.5 "};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    ck_assert_msg(eng_check_knob(sg, "mem-fraction-static", bad[i], &err) == -1, "%s", bad[i]);
  const char *good[] = {"0.5", "5e-1", "1", ".25", "1.0", "+0.9"};
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
    ck_assert_msg(eng_check_knob(sg, "mem-fraction-static", good[i], &err) == 0, "%s: %s",
                  good[i], err.msg);
  ck_assert_int_eq(eng_check_knob(sg, "host", "0.0.0.0", &err), -1);
  ck_assert_int_eq(eng_check_knob(sg, "port", "1", &err), -1);
  ck_assert_int_eq(eng_check_knob(sg, "sim-speed", "0", &err), -1); /* the sim stands in */
  ck_assert_int_eq(eng_check_knob(sg, "sim-speed", "2.5", &err), 0);
  ck_assert_int_eq(eng_check_knob_name(sg, "mem-fraction-statc", NULL, 0, &err), -1);
  ck_assert_ptr_nonnull(strstr(err.msg, "did you mean mem-fraction-static"));
  ck_assert_int_eq(eng_check_knob_name(sg, "mem-fraction-static", NULL, 0, &err), 0);
  ck_assert_int_eq(eng_check_knob_name(sg, "kv-cache", NULL, 0, &err), 0);
  ck_assert_int_eq(eng_check_knob_name(sg, "enable-metrics", NULL, 0, &err), 0); /* far: passes */
  char *argv[] = {"--enable-torch-compile", "--disable-radix-cache=1"};
  ck_assert_int_eq(eng_check_knob_name(sg, "enable-torch-compile", argv, 2, &err), 0);
  ck_assert_int_eq(eng_check_knob_name(sg, "enable-torch-compil", argv, 2, &err), -1);
  ck_assert_ptr_nonnull(strstr(err.msg, "did you mean enable-torch-compile"));
  char **flags = eng_help_flags_parse("-h,    --help, --usage   print usage\n"
                                      "-c,    --ctx-size N      size (default: -1, -n 5)\n"
                                      "--no-mmap                text-with-dash --x-\n");
  const char *want[] = {"h", "help", "usage", "c", "ctx-size", "n", "no-mmap"};
  size_t n = 0;
  for (; flags[n]; n++)
    ;
  ck_assert_uint_eq(n, sizeof want / sizeof want[0]);
  for (size_t i = 0; i < n; i++) {
    ck_assert_str_eq(flags[i], want[i]);
    free(flags[i]);
  }
  free(flags);
}
END_TEST

int main(void) {
  Suite *s = suite_create("engine");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, engine_command_lines);
  tcase_add_test(tc, table_rows_are_whole);
  tcase_add_test(tc, launch_recognition);
  tcase_add_test(tc, flag_rows_and_generic_knobs);
  tcase_add_test(tc, doctor_questions);
  tcase_add_test(tc, knob_values_are_checked_before_anything_stops);
  tcase_add_test(tc, vllm_recipes_read_as_sglang_on_the_sim);
  tcase_add_test(tc, llamacpp_command_line_and_binary);
  tcase_add_test(tc, llamacpp_flags_knobs_and_spec);
  tcase_add_test(tc, llamacpp_log_lines);
  tcase_add_test(tc, knob_names_and_decimal_values);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
