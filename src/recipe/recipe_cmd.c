/* The server command of a recipe at one sweep point, and knob edits. */
#include "recipe/recipe_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void env_int(struct sh_env *env, const char *name, long v) {
  char buf[24], *p = buf + sizeof buf; /* decimal, without printf's cost per point */
  unsigned long u = v < 0 ? 0ul - (unsigned long)v : (unsigned long)v;
  *--p = '\0';
  do
    *--p = (char)('0' + u % 10);
  while ((u /= 10) != 0);
  if (v < 0)
    *--p = '-';
  sh_env_set(env, name, p);
}

/* What InferenceX's benchmark workflow and launchers export to a script. */
void recipe_point_env(const struct recipe *r, const struct recipe_point *pt, struct sh_env *env) {
  sh_env_set(env, "MODEL", r->model);
  sh_env_set(env, "MODEL_PREFIX", r->model_prefix);
  sh_env_set(env, "PRECISION", r->precision);
  sh_env_set(env, "FRAMEWORK", r->framework);
  if (r->image)
    sh_env_set(env, "IMAGE", r->image);
  env_int(env, "TP", pt->tp);
  env_int(env, "EP_SIZE", pt->ep);
  env_int(env, "PP_SIZE", 1);
  env_int(env, "DCP_SIZE", 1);
  env_int(env, "PCP_SIZE", 1);
  env_int(env, "GPU_COUNT", pt->tp);
  sh_env_set(env, "DP_ATTENTION", pt->dp_attn ? "true" : "false");
  env_int(env, "CONC", pt->conc);
  sh_env_set(env, "SPEC_DECODING", recipe_spec_name(r->spec));
  sh_env_set(env, "DISAGG", "false");
  sh_env_set(env, "RUN_EVAL", "false");
  sh_env_set(env, "EVAL_ONLY", "false");
  sh_env_set(env, "PORT", "8888");
  char rr[32];
  snprintf(rr, sizeof rr, "%g", r->bench.random_range_ratio);
  sh_env_set(env, "RANDOM_RANGE_RATIO", rr);
  char *exp;
  if (r->scenario == RECIPE_SCENARIO_AGENTIC) {
    sh_env_set(env, "SCENARIO_TYPE", "agentic-coding");
    sh_env_set(env, "SCENARIO_SUBDIR", "agentic/");
    sh_env_set(env, "IS_AGENTIC", "true");
    sh_env_set(env, "KV_OFFLOADING", pt->kv_offloading ? pt->kv_offloading : "none");
    exp = xasprintf("%s_tp%d_conc%d_%s%s", r->model_prefix, pt->tp, pt->conc,
                    pt->kv_offloading ? pt->kv_offloading : "none",
                    r->spec == RECIPE_SPEC_MTP ? "_spec-mtp" : "");
  } else {
    sh_env_set(env, "SCENARIO_TYPE", "fixed-seq-len");
    sh_env_set(env, "SCENARIO_SUBDIR", "fixed_seq_len/");
    sh_env_set(env, "IS_AGENTIC", "false");
    env_int(env, "ISL", r->isl);
    env_int(env, "OSL", r->osl);
    env_int(env, "MAX_MODEL_LEN", (long)r->isl + r->osl + 256);
    exp = xasprintf("%s_%s", r->model_prefix, recipe_seq_tag(r));
  }
  sh_env_set(env, "EXP_NAME", exp);
  free(exp);
  ix_workflow_env((const struct recipe_priv *)r, pt, env);
  /* what the workflow passes along as environment */
  for (size_t i = 0; i < env->n_vars; i++)
    env->vars[i].exported = false;
}

static char *join_words(char **w, size_t n) {
  struct sbuf sb = {0};
  for (size_t i = 0; i < n; i++)
    sbuf_printf(&sb, "%s%s", i ? " " : "", w[i]);
  return sb.data ? sbuf_take(&sb) : xstrdup("");
}

static void finish_unresolved(struct recipe_cmd *out) {
  for (size_t i = 0; i < out->argc; i++)
    out->has_unresolved = out->has_unresolved || sh_is_unresolved(out->argv[i]);
  for (size_t i = 0; i < out->n_env; i++)
    out->has_unresolved = out->has_unresolved || sh_is_unresolved(out->env[i]);
}

/* An argv item of a servetop recipe is read as shell words: "--tp $TP" is two
 * arguments, quotes keep JSON values whole. */
static void expand_shell_words(struct sh_env *env, const char *item, const char *file,
                               char ***argv, size_t *argc) {
  struct sh_script words;
  if (sh_parse(item, strlen(item), file, &words, NULL) < 0) {
    recipe_strv_push(argv, argc, item); /* unbalanced quotes: kept as written */
    return;
  }
  for (size_t c = 0; c < words.n_cmds; c++)
    for (size_t w = 0; w < words.cmds[c].n_words; w++)
      sh_expand_word(env, words.cmds[c].words[w].raw, argv, argc);
  sh_script_fini(&words);
}

int recipe_server_cmd(const struct recipe *r, const struct recipe_point *point,
                      struct recipe_cmd *out, struct st_err *err) {
  const struct recipe_priv *p = (const struct recipe_priv *)r;
  return recipe_server_cmd_script(r, p->script, r->script_file, point, true, out, err);
}

int recipe_server_launch(const struct recipe *r, const struct recipe_point *point,
                         struct recipe_cmd *out, struct st_err *err) {
  const struct recipe_priv *p = (const struct recipe_priv *)r;
  return recipe_server_cmd_script(r, p->script, r->script_file, point, false, out, err);
}

int recipe_server_cmd_script(const struct recipe *r, const struct sh_script *script,
                             const char *script_file, const struct recipe_point *point,
                             bool with_bench, struct recipe_cmd *out, struct st_err *err) {
  const struct recipe_priv *p = (const struct recipe_priv *)r;
  memset(out, 0, sizeof *out);
  if (!point && r->n_points == 0)
    return err_setf(err, "%s: no sweep points", r->name);
  if (!point)
    point = &r->points[0];
  struct sh_env env = {0};
  recipe_point_env(r, point, &env);
  if (r->origin == RECIPE_ORIGIN_SERVETOP) {
    /* servetop's own: where the llama.cpp setup script puts models and binaries */
    char *cache = path_cache_dir_alloc();
    sh_env_set(&env, "SERVETOP_CACHE", cache);
    free(cache);
    out->engine = xstrdup(r->engine);
    out->program = xstrdup(eng_program_of(r->engine));
    for (size_t i = 0; i < p->n_tmpl_env; i++) {
      char *eq = strchr(p->tmpl_env[i], '=');
      char **f = NULL;
      size_t nf = 0;
      /* the value is one string; quote it so expansion does not split it */
      char *quoted = xasprintf("\"%s\"", eq + 1);
      sh_expand_word(&env, quoted, &f, &nf);
      char *kv = xasprintf("%.*s=%s", (int)(eq - p->tmpl_env[i]), p->tmpl_env[i], nf ? f[0] : "");
      recipe_strv_push(&out->env, &out->n_env, kv);
      free(kv);
      free(quoted);
      str_vec_free(f, nf);
    }
    for (size_t i = 0; i < p->n_tmpl_argv; i++)
      expand_shell_words(&env, p->tmpl_argv[i], r->file, &out->argv, &out->argc);
    out->file = r->file;
    out->line = p->server_line;
    sh_env_fini(&env);
    finish_unresolved(out);
    return 0;
  }
  if (!script) {
    sh_env_fini(&env);
    return err_setf(err, "%s: no launch script resolved%s", r->name,
                    r->multinode ? " (multinode recipes are not resolved)" : "");
  }
  /* nothing after the launch and the benchmark call changes them */
  env.stop = r->scenario == RECIPE_SCENARIO_AGENTIC || !with_bench ? SH_STOP_AFTER_SERVER
                                                                     : SH_STOP_AFTER_BENCH;
  struct sh_result own;
  const struct sh_result *res = sh_run_memo(p->memo, script, &env, &own);
  sh_env_fini(&env);
  if (res->server.n_words == 0) {
    sh_result_fini(&own);
    return err_setf(err, "%s: no server launch (%s) found",
                    r->script_path ? r->script_path : r->name, eng_launch_forms());
  }
  out->engine = xstrdup(res->server_engine ? res->server_engine : r->engine);
  out->program = join_words(res->server.words, res->program_words);
  for (size_t i = res->program_words; i < res->server.n_words; i++)
    recipe_strv_push(&out->argv, &out->argc, res->server.words[i]);
  for (size_t i = 0; i < res->server.n_env; i++)
    recipe_strv_push(&out->env, &out->n_env, res->server.env[i]);
  for (size_t i = 1; i < res->bench.n_words; i++)
    recipe_strv_push(&out->bench_argv, &out->n_bench_argv, res->bench.words[i]);
  out->conditional = res->server.conditional;
  out->file = script_file;
  out->line = res->server.line;
  sh_result_fini(&own);
  finish_unresolved(out);
  return 0;
}

void recipe_cmd_fini(struct recipe_cmd *cmd) {
  free(cmd->engine);
  free(cmd->program);
  str_vec_free(cmd->argv, cmd->argc);
  str_vec_free(cmd->env, cmd->n_env);
  str_vec_free(cmd->bench_argv, cmd->n_bench_argv);
  memset(cmd, 0, sizeof *cmd);
}

/* ---------------------------------------------------------------- knobs
 * Flag spellings and aliases are the engine's (engine module): tp =
 * tensor-parallel-size, -c = --ctx-size, the generic kv-cache and max-batch. */
static const struct eng_ops *engine_of(const struct recipe_cmd *cmd) {
  return eng_find(cmd->engine);
}

const char *recipe_cmd_knob(const struct recipe_cmd *cmd, const char *key) {
  return eng_arg_value(engine_of(cmd), cmd->argv, cmd->argc, key);
}

void recipe_cmd_set_knob(struct recipe_cmd *cmd, const char *key, const char *value) {
  const struct eng_ops *e = engine_of(cmd);
  bool done = false;
  for (size_t i = 0; i < cmd->argc;) {
    size_t len;
    if (!eng_arg_matches(e, cmd->argv[i], key, &len)) {
      i++;
      continue;
    }
    bool inline_value = cmd->argv[i][len] == '=';
    size_t span = inline_value ? 1 : eng_arg_takes_value(e, cmd->argv, cmd->argc, i) ? 2 : 1;
    if (value && !done) {
      char *flag = xstrndup(cmd->argv[i], len);
      free(cmd->argv[i]);
      if (inline_value) {
        cmd->argv[i] = xasprintf("%s=%s", flag, value);
        free(flag);
      } else if (span == 2) {
        cmd->argv[i] = flag;
        free(cmd->argv[i + 1]);
        cmd->argv[i + 1] = xstrdup(value);
      } else {
        cmd->argv[i] = flag;
        if (*value) { /* a flag that gains a value */
          recipe_strv_push(&cmd->argv, &cmd->argc, value); /* grows the vector, then moved */
          char *moved = cmd->argv[cmd->argc - 1];
          memmove(&cmd->argv[i + 2], &cmd->argv[i + 1], (cmd->argc - i - 2) * sizeof *cmd->argv);
          cmd->argv[i + 1] = moved;
          span = 2;
        }
      }
      done = true;
      i += span;
      continue;
    }
    for (size_t k = 0; k < span; k++)
      free(cmd->argv[i + k]);
    memmove(&cmd->argv[i], &cmd->argv[i + span], (cmd->argc - i - span) * sizeof *cmd->argv);
    cmd->argc -= span;
  }
  if (value && !done) {
    /* a new flag: spelled as the key names it (the engine's canonical flag for
     * a generic knob), "--key" when the engine has no row for it */
    const struct eng_flag *row = eng_flag_lookup(e, key, strlen(key));
    char *flag = row ? xstrdup(eng_flag_spelling(row, key, strlen(key))) : xasprintf("--%s", key);
    recipe_strv_push(&cmd->argv, &cmd->argc, flag);
    free(flag);
    if (*value)
      recipe_strv_push(&cmd->argv, &cmd->argc, value);
  }
  cmd->has_unresolved = false;
  finish_unresolved(cmd);
}

int recipe_cmd_apply_override(struct recipe_cmd *cmd, const char *assignment, struct st_err *err) {
  const char *eq = strchr(assignment, '=');
  if (!eq || eq == assignment)
    return err_setf(err, "'%s': expected KEY=VALUE (e.g. mem-fraction-static=0.85)", assignment);
  const char *k = assignment;
  while (*k == '-')
    k++;
  char *key = xstrndup(k, (size_t)(eq - k));
  recipe_cmd_set_knob(cmd, key, eq + 1);
  free(key);
  return 0;
}

const char *recipe_cmd_env(const struct recipe_cmd *cmd, const char *key) {
  size_t len = strlen(key);
  const char *found = NULL;
  for (size_t i = 0; i < cmd->n_env; i++)
    if (strncmp(cmd->env[i], key, len) == 0 && cmd->env[i][len] == '=')
      found = cmd->env[i] + len + 1;
  return found;
}
