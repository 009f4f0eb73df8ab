/* recipe: the static launch-script reader (tokens, expansion, branches). */
#include "recipe/recipe_internal.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Runs text with NAME=VALUE pairs; returns the result (caller finis). */
static void run_text(const char *text, const char *const *vars, struct sh_env *env,
                     struct sh_result *res) {
  struct sh_script s;
  struct st_err err;
  ck_assert_msg(sh_parse(text, strlen(text), "t.sh", &s, &err) == 0, "%s", err.msg);
  memset(env, 0, sizeof *env);
  for (size_t i = 0; vars && vars[i]; i += 2)
    sh_env_set(env, vars[i], vars[i + 1]);
  sh_run(&s, env, res);
  sh_script_fini(&s);
}

static char *joined(char **w, size_t n) {
  struct sbuf sb = {0};
  for (size_t i = 0; i < n; i++)
    sbuf_printf(&sb, "%s[%s]", i ? " " : "", w[i]);
  return sb.data ? sbuf_take(&sb) : xstrdup("");
}

static void expect_server(const char *text, const char *const *vars, const char *want_words,
                          const char *want_env) {
  struct sh_env env;
  struct sh_result res;
  run_text(text, vars, &env, &res);
  char *w = joined(res.server.words, res.server.n_words);
  char *e = joined(res.server.env, res.server.n_env);
  ck_assert_str_eq(w, want_words);
  if (want_env)
    ck_assert_str_eq(e, want_env);
  free(w);
  free(e);
  sh_result_fini(&res);
  sh_env_fini(&env);
}

static const char *const base_vars[] = {"MODEL", "m/M", "TP", "8", "CONC", "64", "EP_SIZE", "8",
                                        NULL};

START_TEST(continuations_env_prefix_redirects) {
  expect_server("SGLANG_ENABLE_SPEC_V2=1 \\\nPYTHONNOUSERSITE=1 \\\npython3 -m sglang.launch_server \\\n"
                "  --model-path \"$MODEL\" \\\n  --tp $TP > /tmp/log 2>&1 &\n",
                base_vars,
                "[python3] [-m] [sglang.launch_server] [--model-path] [m/M] [--tp] [8]",
                "[SGLANG_ENABLE_SPEC_V2=1] [PYTHONNOUSERSITE=1]");
}
END_TEST

START_TEST(arrays_and_unquoted_scalars) {
  expect_server("PARALLEL_ARGS=(--tp \"$TP\"\n  # comment inside\n  --ep-size \"$EP_SIZE\")\n"
                "EXTRA=\"--enable-metrics --stream-interval 10\"\n"
                "CMD=(\n  python3 -m sglang.launch_server\n  \"${PARALLEL_ARGS[@]}\"\n)\n"
                "CMD+=(--model-path \"$MODEL\")\n"
                "NONE=()\n"
                "\"${CMD[@]}\" \"${NONE[@]}\" $EXTRA\n",
                base_vars,
                "[python3] [-m] [sglang.launch_server] [--tp] [8] [--ep-size] [8] [--model-path] "
                "[m/M] [--enable-metrics] [--stream-interval] [10]",
                "");
}
END_TEST

START_TEST(case_on_conc_picks_the_arm) {
  const char *text = "case \"$CONC\" in\n  4|8) MR=16 ;;\n  16|32)\n    MR=48\n    ;;\n"
                     "  *) MR=$CONC ;;\nesac\nvllm serve $MODEL --max-num-seqs $MR\n";
  const char *v8[] = {"MODEL", "m", "CONC", "8", NULL};
  expect_server(text, v8, "[vllm] [serve] [m] [--max-num-seqs] [16]", NULL);
  const char *v32[] = {"MODEL", "m", "CONC", "32", NULL};
  expect_server(text, v32, "[vllm] [serve] [m] [--max-num-seqs] [48]", NULL);
  const char *v256[] = {"MODEL", "m", "CONC", "256", NULL};
  expect_server(text, v256, "[vllm] [serve] [m] [--max-num-seqs] [256]", NULL);
  /* CONC unknown: the value is unresolved, never guessed */
  const char *none[] = {"MODEL", "m", NULL};
  expect_server(text, none, "[vllm] [serve] [m] [--max-num-seqs] [<unresolved: $MR>]", NULL);
}
END_TEST

START_TEST(if_tests_and_arithmetic) {
  const char *text =
      "if [[ \"$DP_ATTENTION\" == \"true\" ]]; then\n  DP=\"--enable-dp-attention --dp-size $TP\"\n"
      "elif [ \"$EP_SIZE\" -gt 1 ]; then\n  DP=\"--ep-size $EP_SIZE\"\nelse\n  DP=\"\"\nfi\n"
      "BS=$(( CONC * 3 / 2 > 8 ? CONC * 3 / 2 : 8 ))\n"
      "python3 -m sglang.launch_server $DP --cuda-graph-max-bs \"$BS\"\n";
  const char *dpa[] = {"TP", "8", "EP_SIZE", "8", "CONC", "4", "DP_ATTENTION", "true", NULL};
  expect_server(text, dpa,
                "[python3] [-m] [sglang.launch_server] [--enable-dp-attention] [--dp-size] [8] "
                "[--cuda-graph-max-bs] [8]",
                NULL);
  const char *ep[] = {"TP", "8", "EP_SIZE", "8", "CONC", "64", "DP_ATTENTION", "false", NULL};
  expect_server(text, ep,
                "[python3] [-m] [sglang.launch_server] [--ep-size] [8] [--cuda-graph-max-bs] [96]",
                NULL);
  const char *none[] = {"TP", "8", "EP_SIZE", "1", "CONC", "64", "DP_ATTENTION", "false", NULL};
  expect_server(text, none, "[python3] [-m] [sglang.launch_server] [--cuda-graph-max-bs] [96]",
                NULL);
  /* an undecidable test: what it assigns is unresolved */
  const char *unk[] = {"TP", "8", "EP_SIZE", "1", "CONC", "64", NULL};
  expect_server(text, unk,
                "[python3] [-m] [sglang.launch_server] [<unresolved: $DP>] [--cuda-graph-max-bs] "
                "[96]",
                NULL);
}
END_TEST

START_TEST(parameter_forms_and_command_substitution) {
  const char *text = "MODEL_CODE=\"${EXP_NAME%%_*}\"\nTAIL=${EXP_NAME#*_}\nX=${UNSET:-dflt}\n"
                     "SUF=$([[ \"$SPEC\" == \"mtp\" ]] && printf '_mtp' || printf '')\n"
                     "UP=${MODEL_CODE^^}\nN=${#MODEL_CODE}\n"
                     "vllm serve $MODEL_CODE $TAIL $X $SUF $UP $N `echo hi` $(uname -r)\n";
  const char *v[] = {"EXP_NAME", "qwen3.5_8k1k", "SPEC", "mtp", NULL};
  expect_server(text, v,
                "[vllm] [serve] [qwen3.5] [8k1k] [dflt] [_mtp] [QWEN3.5] [7] [hi] "
                "[<unresolved: $(uname -r)>]",
                NULL);
  const char *n[] = {"EXP_NAME", "qwen3.5_8k1k", "SPEC", "none", NULL};
  expect_server("SUF=$([[ \"$SPEC\" == \"mtp\" ]] && printf '_mtp' || printf '')\nvllm serve x$SUF\n",
                n, "[vllm] [serve] [x]", NULL);
}
END_TEST

START_TEST(exports_functions_and_eval_branches) {
  const char *text = "export SGLANG_ENABLE_SPEC_V2=1\nstart() {\n  python3 -m sglang.launch_server --tp $TP\n}\n"
                     "if [ \"$EVAL_ONLY\" = \"true\" ]; then\n  sglang serve --eval\nelse\n  start\nfi\n"
                     "run_benchmark_serving --model \"$MODEL\" --num-prompts \"$((CONC * 10))\" \\\n"
                     "  --use-chat-template\n";
  struct sh_env env;
  struct sh_result res;
  const char *v[] = {"MODEL", "m", "TP", "4", "CONC", "8", "EVAL_ONLY", "false", NULL};
  run_text(text, v, &env, &res);
  char *w = joined(res.server.words, res.server.n_words);
  ck_assert_str_eq(w, "[python3] [-m] [sglang.launch_server] [--tp] [4]");
  free(w);
  w = joined(res.server.env, res.server.n_env);
  ck_assert_str_eq(w, "[SGLANG_ENABLE_SPEC_V2=1]");
  free(w);
  w = joined(res.bench.words, res.bench.n_words);
  ck_assert_str_eq(w, "[run_benchmark_serving] [--model] [m] [--num-prompts] [80] "
                      "[--use-chat-template]");
  free(w);
  ck_assert(!res.server.conditional);
  sh_result_fini(&res);
  sh_env_fini(&env);
}
END_TEST

START_TEST(heredocs_are_skipped_and_kept_for_scans) {
  const char *text = "cat > cfg.yml <<EOF\nspeculative_config:\n  decoding_type: MTP\nEOF\n"
                     "vllm serve $MODEL\n";
  struct sh_script s;
  struct st_err err;
  ck_assert_int_eq(sh_parse(text, strlen(text), "t.sh", &s, &err), 0);
  ck_assert_uint_eq(s.n_cmds, 2);
  ck_assert(strstr(s.cmds[0].words[s.cmds[0].n_words - 1].raw, "decoding_type: MTP") != NULL);
  ck_assert_int_eq(s.cmds[1].line, 5);
  sh_script_fini(&s);
}
END_TEST

static void expect_parse_error(const char *text, const char *want) {
  struct sh_script s;
  struct st_err err;
  ck_assert_int_eq(sh_parse(text, strlen(text), "t.sh", &s, &err), -1);
  ck_assert_str_eq(err.msg, want);
}

/* bash runs a script whose last line ends in '\' (the command just ends
 * there): that is no syntax error (InferenceX's dsr1_fp8_mi355x_atom_mtp.sh
 * ended so for months and ran). */
START_TEST(continuation_at_end_of_file_ends_the_command) {
  expect_server("python3 -m sglang.launch_server \\\n  --tp $TP \\\n", base_vars,
                "[python3] [-m] [sglang.launch_server] [--tp] [8]", NULL);
  expect_server("vllm serve $MODEL --tp $TP\\", base_vars, "[vllm] [serve] [m/M] [--tp] [8]",
                NULL);
}
END_TEST

/* A launcher's route: what it runs, where the path was built, what it tried. */
static void expect_route(const char *text, const char *root, const char *want, int want_line,
                         int want_built) {
  static const char *const vars[] = {"EXP_NAME", "qwen3.5_8k1k", "PRECISION", "fp8",
                                     "FRAMEWORK", "sglang", "SPEC_DECODING", "mtp",
                                     "SCENARIO_SUBDIR", "fixed_seq_len/", NULL};
  struct sh_env env;
  struct sh_result res;
  run_text(text, vars, &env, &res);
  (void)root;
  ck_assert_msg(res.bench_script, "no script for:\n%s", text);
  ck_assert_str_eq(res.bench_script, want);
  ck_assert_int_eq(res.bench_script_line, want_line);
  ck_assert_int_eq(res.bench_script_built_line, want_built);
  sh_result_fini(&res);
  sh_env_fini(&env);
}

START_TEST(launcher_paths_subshells_groups_bash_c) {
  /* built in two steps, then `( ... || { ...; exit 1; } )`: the exit ends the
   * subshell only, and a variable set inside stays there */
  expect_route("B=\"benchmarks/single_node/${SCENARIO_SUBDIR}${EXP_NAME%%_*}_${PRECISION}_b300\"\n"
               "S=\"${B}_${FRAMEWORK}_mtp.sh\"\n"
               "(\n  X=inner\n  flock -w 600 9 || { echo no lock >&2; exit 1; }\n  exit 1\n)\n"
               "srun bash \"$S\"\n",
               NULL, "benchmarks/single_node/fixed_seq_len/qwen3.5_fp8_b300_sglang_mtp.sh", 8, 2);
  /* `false || { ...; exit 1; }` ends the script: nothing after it runs */
  struct sh_env env;
  struct sh_result res;
  run_text("false || { echo fatal; exit 1; }\nbash benchmarks/x.sh\n", NULL, &env, &res);
  ck_assert_ptr_null(res.bench_script);
  sh_result_fini(&res);
  sh_env_fini(&env);
  /* `true || { exit 1; }` does not */
  run_text("true || { echo fatal; exit 1; }\nbash benchmarks/x.sh\n", NULL, &env, &res);
  ck_assert_str_eq(res.bench_script, "benchmarks/x.sh");
  sh_result_fini(&res);
  sh_env_fini(&env);
  /* an alias of an alias: the line where the value was made */
  expect_route("FW=\"benchmarks/single_node/a_${PRECISION}_h200.sh\"\nPICK=\"$FW\"\n"
               "bash \"$PICK\"\n",
               NULL, "benchmarks/single_node/a_fp8_h200.sh", 3, 1);
  /* bash -c "bash benchmarks/...sh; cleanup" */
  expect_route("srun --export=ALL \\\n  bash -c \"bash benchmarks/${EXP_NAME%%_*}_h200.sh; rm -rf /x\"\n",
               NULL, "benchmarks/qwen3.5_h200.sh", 1, 2); /* the word's own line */
  /* a message that names a path runs nothing */
  run_text("echo \"running benchmarks/y.sh\"\n", NULL, &env, &res);
  ck_assert_ptr_null(res.bench_script);
  sh_result_fini(&res);
  sh_env_fini(&env);
}
END_TEST

START_TEST(launcher_probes_and_container_env) {
  /* [[ -f ]] tests on benchmarks/ paths are kept, in order, with lines */
  struct sh_env env;
  struct sh_result res;
  run_text("if [[ -f benchmarks/a.sh ]]; then S=benchmarks/a.sh\nelif [ -f benchmarks/b.sh ]; then\n"
           "  S=benchmarks/b.sh\nfi\n",
           NULL, &env, &res);
  ck_assert_uint_eq(res.n_probes, 2);
  ck_assert_str_eq(res.probes[0], "benchmarks/a.sh");
  ck_assert_int_eq(res.probe_lines[1], 2);
  sh_result_fini(&res);
  sh_env_fini(&env);
  /* docker run hands the container its -e / --env list only */
  static const char *const vars[] = {"PORT", "8888", NULL};
  run_text("docker run --rm -e MODEL --env TP -e PORT=\"$PORT\" --env=CONC img bash benchmarks/s.sh\n",
           vars, &env, &res);
  ck_assert(res.bench_env_listed);
  ck_assert_uint_eq(res.n_bench_env, 4);
  ck_assert_str_eq(res.bench_env[2], "PORT");
  ck_assert_str_eq(res.bench_env[3], "CONC");
  sh_result_fini(&res);
  sh_env_fini(&env);
  run_text("docker run --env-file e.list img bash benchmarks/s.sh\n", NULL, &env, &res);
  ck_assert(!res.bench_env_listed); /* not readable statically: all may pass */
  sh_result_fini(&res);
  sh_env_fini(&env);
  run_text("srun --export=ALL bash benchmarks/s.sh\n", NULL, &env, &res);
  ck_assert(!res.bench_env_listed);
  sh_result_fini(&res);
  sh_env_fini(&env);
}
END_TEST

/* A ')' inside a function closes a subshell its caller opened: the frames
 * are gone once, never again when the call returns (fuzzer find). */
START_TEST(unbalanced_subshell_in_function) {
  static const char *const vars[] = {"PRECISION", "fp8", NULL};
  struct sh_env env;
  struct sh_result res;
  run_text("(\nf() {\n  )\n  A=1\n}\nf\nB=2 C=3 D=4 E=5 F=6 G=7 H=8\n"
           "bash benchmarks/x_${PRECISION}.sh\n",
           vars, &env, &res);
  ck_assert_str_eq(res.bench_script, "benchmarks/x_fp8.sh");
  sh_result_fini(&res);
  sh_env_fini(&env);
}
END_TEST

START_TEST(scalar_grown_into_an_array) {
  /* a scalar's value vector takes appended elements (past its first) */
  expect_server("X=--tp\nX+=(8 --ep-size 8 --dp 2 --mem-fraction-static 0.8)\n"
                "python3 -m sglang.launch_server \"${X[@]}\"\n",
                base_vars,
                "[python3] [-m] [sglang.launch_server] [--tp] [8] [--ep-size] [8] [--dp] [2] "
                "[--mem-fraction-static] [0.8]",
                "");
}
END_TEST

START_TEST(echo_prints_and_launches_nothing) {
  /* a launch written after echo is text; in $(...) echo still gives its words */
  expect_server("echo python3 -m sglang.launch_server --tp 1\n"
                "ARGS=$(echo --tp $TP)\n"
                "python3 -m sglang.launch_server $ARGS\n",
                base_vars, "[python3] [-m] [sglang.launch_server] [--tp] [8]", "");
  /* an expansion that assigns still happens */
  expect_server("echo ${PORT:=9000}\npython3 -m sglang.launch_server --port $PORT\n", base_vars,
                "[python3] [-m] [sglang.launch_server] [--port] [9000]", "");
}
END_TEST

START_TEST(many_variables_and_subshells) {
  /* past the size where names are indexed; a subshell's variables end with it */
  struct sbuf sb = {0};
  sbuf_puts(&sb, "(\n");
  for (int i = 0; i < 60; i++)
    sbuf_printf(&sb, "  IN_%d=%d\n", i, i);
  sbuf_puts(&sb, ")\n");
  for (int i = 0; i < 60; i++)
    sbuf_printf(&sb, "OUT_%d=o%d\n", i, i);
  sbuf_puts(&sb, "python3 -m sglang.launch_server --a \"${IN_7:-gone}\" --b $OUT_42 --c $OUT_0\n");
  expect_server(sb.data, base_vars,
                "[python3] [-m] [sglang.launch_server] [--a] [gone] [--b] [o42] [--c] [o0]", "");
  sbuf_free(&sb);
}
END_TEST

/* sh_run_memo from an environment of NAME, VALUE pairs. */
static const struct sh_result *memo_run(struct sh_memo *m, const struct sh_script *s,
                                        const char *const *vars, struct sh_result *own) {
  struct sh_env env = {0};
  for (size_t i = 0; vars[i]; i += 2)
    sh_env_set(&env, vars[i], vars[i + 1]);
  const struct sh_result *r = sh_run_memo(m, s, &env, own);
  sh_env_fini(&env);
  return r;
}

START_TEST(interpretations_remembered_by_what_they_read) {
  const char *text = "if [ \"$CONC\" -ge 64 ]; then EXTRA=--big; fi\n"
                     "python3 -m sglang.launch_server --tp $TP $EXTRA ${OPT:+--opt}\n";
  struct sh_script s;
  ck_assert_int_eq(sh_parse(text, strlen(text), "t.sh", &s, NULL), 0);
  struct sh_memo *m = sh_memo_new();
  struct sh_result own[8];
  const char *const a[] = {"TP", "8", "CONC", "64", "MODEL", "x", NULL};
  const char *const b[] = {"TP", "8", "CONC", "64", "MODEL", "y", NULL}; /* MODEL is not read */
  const char *const c[] = {"TP", "8", "CONC", "4", "MODEL", "x", NULL};  /* CONC is */
  const char *const d[] = {"TP", "8", "CONC", "64", "MODEL", "x", "OPT", "1", NULL}; /* missed */
  const char *const e[] = {"CONC", "64", "TP", "8", "MODEL", "x", NULL}; /* another order */
  const struct sh_result *ra = memo_run(m, &s, a, &own[0]);
  const struct sh_result *rb = memo_run(m, &s, b, &own[1]);
  const struct sh_result *rc = memo_run(m, &s, c, &own[2]);
  const struct sh_result *rd = memo_run(m, &s, d, &own[3]);
  const struct sh_result *re = memo_run(m, &s, e, &own[4]);
  ck_assert_ptr_eq(ra, rb);
  ck_assert_ptr_ne(ra, rc);
  ck_assert_ptr_ne(ra, rd);
  ck_assert_ptr_ne(ra, re); /* order matters to the exports a launch collects */
  char *wa = joined(ra->server.words, ra->server.n_words);
  char *wc = joined(rc->server.words, rc->server.n_words);
  char *wd = joined(rd->server.words, rd->server.n_words);
  ck_assert_str_eq(wa, "[python3] [-m] [sglang.launch_server] [--tp] [8] [--big]");
  ck_assert_str_eq(wc, "[python3] [-m] [sglang.launch_server] [--tp] [8] [<unresolved: $EXTRA>]");
  ck_assert_str_eq(wd, "[python3] [-m] [sglang.launch_server] [--tp] [8] [--big] [--opt]");
  free(wa);
  free(wc);
  free(wd);
  /* an exported variable is read by every launch: it is part of the key */
  const char *text2 = "export LOG=1\npython3 -m sglang.launch_server --tp $TP\n";
  struct sh_script s2;
  ck_assert_int_eq(sh_parse(text2, strlen(text2), "t.sh", &s2, NULL), 0);
  struct sh_env env = {0};
  sh_env_set(&env, "TP", "8");
  sh_env_set(&env, "HF", "a");
  env.vars[1].exported = true;
  const struct sh_result *r1 = sh_run_memo(m, &s2, &env, &own[5]);
  sh_env_fini(&env);
  sh_env_set(&env, "TP", "8");
  sh_env_set(&env, "HF", "b");
  env.vars[1].exported = true;
  const struct sh_result *r2 = sh_run_memo(m, &s2, &env, &own[6]);
  sh_env_fini(&env);
  ck_assert_ptr_ne(r1, r2);
  char *e2 = joined(r2->server.env, r2->server.n_env);
  ck_assert_str_eq(e2, "[HF=b] [LOG=1]");
  free(e2);
  /* without a memo the result is the caller's */
  const struct sh_result *r3 = memo_run(NULL, &s, a, &own[7]);
  ck_assert_ptr_eq(r3, &own[7]);
  for (size_t i = 0; i < 8; i++)
    sh_result_fini(&own[i]);
  sh_memo_free(m);
  sh_script_fini(&s);
  sh_script_fini(&s2);
}
END_TEST

START_TEST(parse_errors_have_positions) {
  expect_parse_error("echo ok\nX='abc\n", "t.sh:2:3: unterminated single quote");
  expect_parse_error("X=\"abc\n", "t.sh:1:3: unterminated double quote");
  expect_parse_error("ARGS=(--tp 8\n--ep 8\n", "t.sh:1:6: unterminated '(' (array or substitution)");
  expect_parse_error("echo ${X\n", "t.sh:1:7: unterminated '${'");
  /* a quote left open closes on the next string's opening quote: the error
   * names the line where it was left open, not where bash gives up */
  expect_parse_error("serve --model \"$MODEL \\\n  --tp \"$TP\"\n",
                     "t.sh:1:15: unterminated double quote: the quote opened here runs to 2:8, "
                     "so the one at 2:12 never closes");
  expect_parse_error("echo 'a\nb' 'c\n", "t.sh:1:6: unterminated single quote: the quote "
                                           "opened here runs to 2:2, so the one at 2:4 never closes");
}
END_TEST

/* Sub-scripts parsed under s, all levels. */
static size_t count_subs(const struct sh_script *s) {
  size_t n = s->n_subs;
  for (size_t i = 0; i < s->n_subs; i++)
    n += count_subs(&s->subs[i].parsed);
  return n;
}

static char *nested_subst(int depth) {
  struct sbuf sb = {0};
  sbuf_puts(&sb, "Z=");
  for (int i = 0; i < depth; i++)
    sbuf_puts(&sb, "$(echo ");
  sbuf_puts(&sb, "x");
  for (int i = 0; i < depth; i++)
    sbuf_putc(&sb, ')');
  sbuf_putc(&sb, '\n');
  return sbuf_take(&sb);
}

/* issue 22.1: Z=$($($(... x ...))) cost 2^depth (each level indexed every
 * body inside it again): 361 MB at depth 20, a crash past 25. Each body is now
 * parsed once, and past SH_MAX_NESTING the script is refused with a position. */
START_TEST(deep_command_substitution_is_linear_and_capped) {
  for (int depth = 1; depth <= SH_MAX_NESTING; depth++) {
    char *text = nested_subst(depth);
    struct sh_script s;
    struct st_err err;
    ck_assert_msg(sh_parse(text, strlen(text), "t.sh", &s, &err) == 0, "depth %d: %s", depth,
                  err.msg);
    ck_assert_uint_eq(count_subs(&s), (size_t)depth); /* one per level, not 2^depth - 1 */
    sh_script_fini(&s);
    free(text);
  }
  const int deep[] = {SH_MAX_NESTING + 1, 500, 50000};
  for (size_t k = 0; k < sizeof deep / sizeof deep[0]; k++) {
    char *text = nested_subst(deep[k]);
    struct sh_script s;
    struct st_err err;
    ck_assert_int_eq(sh_parse(text, strlen(text), "t.sh", &s, &err), -1);
    char want[128];
    snprintf(want, sizeof want, "t.sh:1:%d: substitutions, arrays and groups nested more than %d deep",
             3 + 7 * SH_MAX_NESTING + 1, SH_MAX_NESTING);
    ck_assert_msg(strncmp(err.msg, want, strlen(want)) == 0, "%s", err.msg);
    free(text);
  }
  /* quotes count as levels too: "$("$("... alternate */
  struct sbuf sb = {0};
  sbuf_puts(&sb, "Z=");
  for (int i = 0; i < 200; i++)
    sbuf_puts(&sb, "\"$(");
  for (int i = 0; i < 200; i++)
    sbuf_puts(&sb, ")\"");
  struct sh_script s;
  struct st_err err;
  ck_assert_int_eq(sh_parse(sb.data, sb.len, "t.sh", &s, &err), -1);
  ck_assert_ptr_nonnull(strstr(err.msg, "nested more than"));
  sbuf_free(&sb);
  /* a nested substitution still resolves */
  struct sh_env env;
  struct sh_result res;
  run_text("A=$(echo $(echo $(echo 7)))\nsglang serve --tp \"$A\"\n", NULL, &env, &res);
  char *w = joined(res.server.words, res.server.n_words);
  ck_assert_str_eq(w, "[sglang] [serve] [--tp] [7]");
  free(w);
  sh_result_fini(&res);
  sh_env_fini(&env);
}
END_TEST

int main(void) {
  Suite *s = suite_create("recipe_shell");
  TCase *tc = tcase_create("reader");
  tcase_add_test(tc, continuations_env_prefix_redirects);
  tcase_add_test(tc, arrays_and_unquoted_scalars);
  tcase_add_test(tc, case_on_conc_picks_the_arm);
  tcase_add_test(tc, if_tests_and_arithmetic);
  tcase_add_test(tc, parameter_forms_and_command_substitution);
  tcase_add_test(tc, exports_functions_and_eval_branches);
  tcase_add_test(tc, heredocs_are_skipped_and_kept_for_scans);
  tcase_add_test(tc, parse_errors_have_positions);
  tcase_add_test(tc, continuation_at_end_of_file_ends_the_command);
  tcase_add_test(tc, launcher_paths_subshells_groups_bash_c);
  tcase_add_test(tc, launcher_probes_and_container_env);
  tcase_add_test(tc, unbalanced_subshell_in_function);
  tcase_add_test(tc, scalar_grown_into_an_array);
  tcase_add_test(tc, echo_prints_and_launches_nothing);
  tcase_add_test(tc, many_variables_and_subshells);
  tcase_add_test(tc, interpretations_remembered_by_what_they_read);
  tcase_add_test(tc, deep_command_substitution_is_linear_and_capped);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
