/* The recipe doctor: mechanical review rules (reference section 4) over a
 * loaded set. Route rules read the routes the launchers build; flag rules
 * read the server command resolved per sweep point. */
#include "recipe/recipe_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct rule {
  const char *id;
  const char *name;
};

static const struct rule R_SCHEMA = {"L19", "SCHEMA"};
static const struct rule R_ROUTE_MISSING = {"L01", "ROUTE_MISSING"};
static const struct rule R_MTP_NOT_ROUTED = {"L02", "MTP_NOT_ROUTED"};
static const struct rule R_ROUTE_SCENARIO = {"L03", "ROUTE_SCENARIO_MISMATCH"};
static const struct rule R_MTP_NO_SPEC = {"L04", "MTP_SCRIPT_NO_SPEC_FLAGS"};
static const struct rule R_STP_HAS_SPEC = {"L05", "STP_SCRIPT_HAS_SPEC"};
/* L06 SGLANG_SPEC_V2 and L23 ENGINE_FLAG_RETIRED: rows of the engine's table of
 * version-bound rules (eng_version.c), which name their rule */
static const struct rule R_MAX_RUNNING = {"L07", "MAX_RUNNING_REQUESTS_LT_CONC"};
static const struct rule R_CUDA_GRAPH = {"L08", "CUDA_GRAPH_MAX_BS_LT_CONC"};
static const struct rule R_MAX_NUM_SEQS = {"L09", "MAX_NUM_SEQS_LT_CONC"};
static const struct rule R_LABEL = {"L13", "RUNNER_LABEL_UNKNOWN"};
static const struct rule R_NO_LAUNCHER = {"L14", "NO_LAUNCHER"};
static const struct rule R_CHAT = {"R01", "MTP_CHAT_TEMPLATE"};
static const struct rule R_SCRIPT_SYNTAX = {"S01", "SCRIPT_SYNTAX"};
static const struct rule R_UPSTREAM_IMAGE = {"R05", "UPSTREAM_IMAGE"};
static const struct rule R_PUBLIC_IMAGE = {"L18", "PUBLIC_IMAGE"};
static const struct rule R_VLLM_EP = {"L16", "VLLM_EP_CONDITIONAL"};
static const struct rule R_SPEC_UNUSED = {"L20", "SPEC_FLAGS_DO_NOTHING"};
static const struct rule R_MEMFRAC = {"L11", "MTP_MEMFRAC_ABOVE_SIBLING"};
static const struct rule R_EVAL_CONC = {"L12", "EVAL_CONC_UNCAPPED"};
static const struct rule R_ENV_NOT_PASSED = {"L21", "ENV_NOT_PASSED"};
static const struct rule R_ENGINE_MISMATCH = {"L22", "ROUTE_ENGINE_MISMATCH"};
static const struct rule R_LOADER_ENV = {"L24", "LOADER_ENV"};

static struct recipe_finding *add(struct recipe_findings *out, const struct rule *rule,
                                  enum recipe_severity sev, const char *recipe, const char *file,
                                  int line, const char *fmt, ...) ST_PRINTF(7, 8);
static struct recipe_finding *add(struct recipe_findings *out, const struct rule *rule,
                                  enum recipe_severity sev, const char *recipe, const char *file,
                                  int line, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *msg = xvasprintf(fmt, ap);
  va_end(ap);
  out->items = xreallocarray(out->items, out->n + 1, sizeof *out->items);
  struct recipe_finding *f = &out->items[out->n++];
  f->rule = rule->name;
  f->rule_id = rule->id;
  f->severity = sev;
  f->recipe = xstrdup(recipe ? recipe : "");
  f->file = xstrdup(file ? file : "");
  f->line = line;
  f->col = 0;
  f->message = msg;
  f->related = NULL;
  f->n_related = 0;
  return f;
}

/* A further location of finding f (the entry behind a script finding, the
 * sibling compared with, the launcher line that built a path). */
static void relate(struct recipe_finding *f, const char *file, int line, const char *fmt, ...)
    ST_PRINTF(4, 5);
static void relate(struct recipe_finding *f, const char *file, int line, const char *fmt, ...) {
  if (!file || !*file)
    return;
  for (size_t i = 0; i < f->n_related; i++)
    if (f->related[i].line == line && strcmp(f->related[i].file, file) == 0)
      return;
  va_list ap;
  va_start(ap, fmt);
  char *what = xvasprintf(fmt, ap);
  va_end(ap);
  f->related = xreallocarray(f->related, f->n_related + 1, sizeof *f->related);
  f->related[f->n_related++] = (struct recipe_location){xstrdup(file), line, what};
}

/* The master-config entry behind a finding elsewhere. */
static void relate_entry(struct recipe_finding *f, const struct recipe *r) {
  relate(f, r->file, r->line, "entry %s", r->entry);
}

const char *recipe_severity_name(enum recipe_severity sev) {
  return sev == RECIPE_SEV_ERROR ? "error" : sev == RECIPE_SEV_WARNING ? "warning" : "note";
}

static void finding_free(struct recipe_finding *x) {
  free((char *)x->recipe);
  free((char *)x->file);
  free((char *)x->message);
  for (size_t k = 0; k < x->n_related; k++) {
    free((char *)x->related[k].file);
    free((char *)x->related[k].what);
  }
  free(x->related);
}

void recipe_findings_fini(struct recipe_findings *f) {
  for (size_t i = 0; i < f->n; i++)
    finding_free(&f->items[i]);
  free(f->items);
  f->items = NULL;
  f->n = 0;
}

size_t recipe_findings_errors(const struct recipe_findings *f) {
  size_t n = 0;
  for (size_t i = 0; i < f->n; i++)
    n += f->items[i].severity == RECIPE_SEV_ERROR;
  return n;
}

/* ---------------------------------------------------------------- static scans */
/* Any speculative-decoding configuration anywhere in the script, as the
 * engines spell it (eng_word_enables_spec). */
static bool script_has_spec(const struct sh_script *s) {
  for (size_t i = 0; i < s->n_cmds; i++) {
    const struct sh_cmd *c = &s->cmds[i];
    for (size_t k = 0; k < c->n_words; k++)
      if (eng_word_enables_spec(c->words[k].raw, k + 1 < c->n_words ? c->words[k + 1].raw : NULL))
        return true;
  }
  return false;
}

/* The run_benchmark_serving calls: *n_calls of them, first at *line; true
 * when one passes --use-chat-template or --dsv4. */
static bool script_chat_template(const struct sh_script *s, size_t *n_calls, int *line) {
  bool found = false;
  *n_calls = 0;
  *line = 0;
  for (size_t i = 0; i < s->n_cmds; i++) {
    const struct sh_cmd *c = &s->cmds[i];
    if (c->n_words == 0 || strcmp(c->words[0].raw, "run_benchmark_serving") != 0)
      continue;
    if (!*n_calls)
      *line = c->line;
    (*n_calls)++;
    for (size_t k = 1; k < c->n_words; k++)
      if (strstr(c->words[k].raw, "--use-chat-template") || strstr(c->words[k].raw, "--dsv4"))
        found = true;
  }
  return found;
}

static bool cmd_has_spec(const struct recipe_cmd *cmd) {
  return eng_args_enable_spec(cmd->engine, cmd->argv, cmd->argc);
}

/* An integer knob; false when absent or not a literal integer. */
static bool knob_int(const struct recipe_cmd *cmd, const char *key, long *out) {
  const char *v = recipe_cmd_knob(cmd, key);
  return v && parse_long(v, out) == 0;
}

/* The line where --flag is written: in a servetop recipe the argv item, in a
 * script the word (inside an array body, counted from the array's line).
 * fallback when the flag is not written literally. */
static bool flag_at(const char *text, const char *flag, size_t *offset) {
  size_t n = strlen(flag);
  for (const char *p = strstr(text, flag); p; p = strstr(p + 1, flag)) {
    bool start = p == text || p[-1] == '(' || p[-1] == '"' || p[-1] == '\'' ||
                 p[-1] == ' ' || p[-1] == '\t' || p[-1] == '\n';
    char e = p[n];
    if (start && (e == '\0' || e == '=' || e == ' ' || e == '\t' || e == '\n' || e == '"' ||
                  e == '\'' || e == ')')) {
      *offset = (size_t)(p - text);
      return true;
    }
  }
  return false;
}

/* The line of --flag_name in a script: the occurrence in the launch command
 * (at or after its first line, `fallback`), else where an array or variable
 * sets it earlier, else fallback. */
static int script_flag_line(const struct sh_script *s, const char *flag_name, int fallback) {
  char *flag = xasprintf("--%s", flag_name);
  size_t off;
  int after = 0, any = 0;
  for (size_t c = 0; c < s->n_cmds; c++) {
    const struct sh_cmd *cmd = &s->cmds[c];
    for (size_t w = 0; w < cmd->n_words; w++) {
      const char *raw = cmd->words[w].raw;
      if (!flag_at(raw, flag, &off))
        continue;
      int l = cmd->words[w].line;
      for (size_t k = 0; k < off; k++)
        l += raw[k] == '\n';
      if (!any)
        any = l;
      if (l >= fallback && (!after || l < after))
        after = l;
    }
  }
  free(flag);
  return after ? after : any ? any : fallback;
}

static int flag_line(const struct recipe_priv *p, const char *flag_name, int fallback) {
  if (p->pub.origin == RECIPE_ORIGIN_INFERENCEX)
    return p->script ? script_flag_line(p->script, flag_name, fallback) : fallback;
  char *flag = xasprintf("--%s", flag_name);
  int line = fallback;
  size_t off;
  for (size_t i = 0; i < p->n_tmpl_argv && line == fallback; i++)
    if (flag_at(p->tmpl_argv[i], flag, &off))
      line = p->tmpl_argv_lines[i];
  free(flag);
  return line;
}

/* The line of the first of flags (without dashes, NULL-terminated) written
 * in the recipe, else fallback: each one's line is looked for with the next
 * one's as its fallback. */
static int first_flag_line(const struct recipe_priv *p, const char *const *flags, int fallback) {
  size_t n = 0;
  while (flags[n])
    n++;
  int line = fallback;
  while (n-- > 0)
    line = flag_line(p, flags[n], line);
  return line;
}

/* The line of flag (without dashes) under any of its engine's spellings,
 * the canonical one first. */
static int engine_flag_line(const struct recipe_priv *p, const char *engine, const char *flag,
                            int fallback) {
  const struct eng_flag *row = eng_flag_lookup(eng_find(engine), flag, strlen(flag));
  const char *names[ST_ARRAY_LEN(row->names) + 1] = {flag, NULL};
  for (size_t k = 0, n = 0; row && k < ST_ARRAY_LEN(row->names) && row->names[k]; k++)
    if (str_starts_with(row->names[k], "--"))
      names[n++] = row->names[k] + 2, names[n] = NULL;
  return first_flag_line(p, names, fallback);
}

/* ---------------------------------------------------------------- launches read once */
/* The server launch of a recipe's script at its first point: its flag
 * rules, its routes' script rules and the sibling rules all ask for it;
 * read once per lint. */
struct first_launch {
  const struct recipe *r;
  const struct sh_script *script;
  bool have;
  struct recipe_cmd cmd;
};

struct lint_ctx {
  struct first_launch **items;
  size_t n;
};

/* script: one of r's (NULL for servetop recipes, which have none); the
 * command's file is the script's own path. NULL when it launches no server. */
static const struct recipe_cmd *first_launch(struct lint_ctx *cx, const struct recipe *r,
                                             const struct sh_script *script) {
  for (size_t i = 0; i < cx->n; i++)
    if (cx->items[i]->r == r && cx->items[i]->script == script)
      return cx->items[i]->have ? &cx->items[i]->cmd : NULL;
  struct first_launch *fl = xcalloc(1, sizeof *fl);
  fl->r = r;
  fl->script = script;
  const char *file = script ? script->file : r->script_file;
  fl->have = r->n_points > 0 &&
             recipe_server_cmd_script(r, script, file, &r->points[0], false, &fl->cmd, NULL) == 0;
  cx->items = xreallocarray(cx->items, cx->n + 1, sizeof *cx->items);
  cx->items[cx->n++] = fl;
  return fl->have ? &fl->cmd : NULL;
}

static const struct recipe_cmd *recipe_first_launch(struct lint_ctx *cx,
                                                    const struct recipe_priv *p) {
  return first_launch(cx, &p->pub, p->script);
}

static void lint_ctx_fini(struct lint_ctx *cx) {
  for (size_t i = 0; i < cx->n; i++) {
    if (cx->items[i]->have)
      recipe_cmd_fini(&cx->items[i]->cmd);
    free(cx->items[i]);
  }
  free(cx->items);
}

/* ---------------------------------------------------------------- the line to change */
/* The first line of script s where NAME is assigned (NAME=..., export
 * NAME=..., a prefix), 0: none. */
static int assignment_line(const struct sh_script *s, const char *name) {
  size_t n = strlen(name);
  for (size_t i = 0; i < s->n_cmds; i++)
    for (size_t k = 0; k < s->cmds[i].n_words; k++) {
      const char *w = s->cmds[i].words[k].raw;
      if (strncmp(w, name, n) == 0 && w[n] == '=')
        return s->cmds[i].words[k].line;
    }
  return 0;
}

/* The variable --flag_name's value is, where the flag is written at `line`
 * of s as `--flag $NAME`, `--flag=${NAME}` or `--flag "$NAME"` (inside an
 * array body too): NAME into var, true; false when the value is written
 * otherwise. */
static bool flag_value_var(const struct sh_script *s, const char *flag_name, int line, char *var,
                           size_t var_bytes) {
  char *flag = xasprintf("--%s", flag_name);
  bool found = false;
  for (size_t c = 0; c < s->n_cmds && !found; c++) {
    const struct sh_cmd *cmd = &s->cmds[c];
    for (size_t w = 0; w < cmd->n_words && !found; w++) {
      const char *raw = cmd->words[w].raw;
      size_t off;
      if (!flag_at(raw, flag, &off))
        continue;
      int l = cmd->words[w].line;
      for (size_t k = 0; k < off; k++)
        l += raw[k] == '\n';
      if (l != line)
        continue;
      /* the value: after '=' in the same word, else the next word (in an
       * array body: the next token of its text) */
      const char *v = raw + off + strlen(flag);
      if (*v == '=')
        v++;
      else {
        while (*v == ' ' || *v == '\t' || *v == '\\' || *v == '\n')
          v++;
        if (!*v || *v == ')') {
          if (w + 1 >= cmd->n_words)
            break;
          v = cmd->words[w + 1].raw;
        }
      }
      if (*v == '"')
        v++;
      if (*v != '$')
        break;
      v++;
      bool brace = *v == '{';
      v += brace;
      size_t n = 0;
      while ((v[n] >= 'A' && v[n] <= 'Z') || (v[n] >= 'a' && v[n] <= 'z') || v[n] == '_' ||
             (n > 0 && v[n] >= '0' && v[n] <= '9'))
        n++;
      char e = v[n];
      if (n == 0 || n >= var_bytes || (brace && e != '}') ||
          (!brace && !(e == '\0' || e == '"' || e == ' ' || e == '\t' || e == '\n' ||
                       e == ')' || e == '\\')))
        break;
      memcpy(var, v, n);
      var[n] = '\0';
      found = true;
    }
  }
  free(flag);
  return found;
}

/* Where the value of --flag_name (written at flag_line) is set for point pt:
 * the line of the last assignment of the variable it reads, as the script
 * runs for that point (a branch not taken is not it); 0 when the value is
 * written at the flag. var gets the variable's name. */
static int flag_value_line(const struct recipe_priv *p, const struct recipe_point *pt,
                           const char *flag_name, int flag_line, char *var, size_t var_bytes) {
  if (p->pub.origin != RECIPE_ORIGIN_INFERENCEX || !p->script ||
      !flag_value_var(p->script, flag_name, flag_line, var, var_bytes))
    return 0;
  struct sh_env env = {0};
  recipe_point_env(&p->pub, pt, &env);
  env.stop = SH_STOP_AFTER_SERVER;
  struct sh_result res;
  sh_run(p->script, &env, &res);
  const struct sh_var *v = sh_env_var(&env, var);
  int line = v && v->line > 0 ? v->line : 0;
  sh_result_fini(&res);
  sh_env_fini(&env);
  return line;
}

/* ---------------------------------------------------------------- per recipe */
/* L07-L09: a limit on the requests decoded at once below a sweep point's
 * concurrency. The reference names each rule after the flag it reads; the
 * engine table says which engine has which limit and whether, with DP
 * attention, it holds per DP rank. Agentic conc counts sessions whose
 * requests come and go, so graph sizes are a trade-off there, not a limit. */
static const struct {
  const struct rule *rule;
  const char *flag;
} limit_rules[] = {
    {&R_MAX_RUNNING, "max-running-requests"},
    {&R_CUDA_GRAPH, "cuda-graph-max-bs"},
    {&R_MAX_NUM_SEQS, "max-num-seqs"},
};
static const enum eng_knob limit_knobs[] = {ENG_KNOB_BATCH_CAP, ENG_KNOB_GRAPH_BATCH};

struct limit_check {
  int first_conc, first_value, first_line, first_need, first_row, violations;
  int dp;
  size_t first_point;
};

/* The doctor's rules whose truth depends on the engine's version (the
 * engine module's table): each applies in its range of the version the
 * recipe's image carries; where the version is unknown, a rule that says so
 * is a note naming its range. The finding goes where the edit goes: an
 * environment prefix on the launch command's first line (or where the
 * variable is already set), a variable at its assignment, a flag at the
 * flag. */
static void lint_version_rules(const struct recipe_priv *p, const struct recipe_cmd *cmd,
                               const char *file, int cmd_line, struct recipe_findings *out) {
  const struct recipe *r = &p->pub;
  const struct eng_ops *eng = eng_find(cmd->engine);
  if (!eng)
    return;
  struct eng_version ver;
  eng_version_of_image(eng, r->image, &ver);
  for (size_t i = 0; i < eng_version_rule_count(); i++) {
    const struct eng_version_rule *vr = eng_version_rule_at(i);
    if (strcmp(vr->engine, eng->name) != 0)
      continue;
    bool in = eng_version_in_range(&ver, &vr->applies);
    if (!in && !(!ver.known && vr->when_unknown))
      continue;
    struct eng_vrule_hit hit;
    memset(&hit, 0, sizeof hit);
    if (!vr->check(cmd->argv, cmd->argc, cmd->env, cmd->n_env, &hit))
      continue;
    int line = cmd_line;
    if (hit.env_name && p->script) {
      int at = assignment_line(p->script, hit.env_name);
      line = at ? at : cmd_line;
    } else if (hit.flag) {
      line = engine_flag_line(p, cmd->engine, hit.flag, cmd_line);
    }
    enum recipe_severity sev =
        in && vr->level == ENG_VRULE_WARNING ? RECIPE_SEV_WARNING : RECIPE_SEV_NOTE;
    const struct rule rule = {vr->rule_id, vr->rule}; /* the row's; its strings are static */
    struct recipe_finding *f;
    if (in)
      f = add(out, &rule, sev, r->name, file, line, "%s [%s %s: this holds for %s; %s]", hit.what, eng->title, ver.text,
              vr->applies.text, vr->source);
    else
      f = add(out, &rule, sev, r->name, file, line, "%s [%s version %s: this holds only for %s; %s]", hit.what, eng->title, ver.text,
              vr->applies.text, vr->source);
    if (line != cmd_line && hit.at_launch)
      relate(f, file, cmd_line, "the %s launch", eng->title);
    relate_entry(f, r);
  }
}

static void lint_points(struct lint_ctx *cx, const struct recipe_priv *p,
                        struct recipe_findings *out) {
  const struct recipe *r = &p->pub;
  struct limit_check checks[ST_ARRAY_LEN(limit_rules)];
  memset(checks, 0, sizeof checks);
  const char *file = NULL;
  bool spec_seen = false, cmd_seen = false;
  int cmd_line = 0;
  const struct recipe_cmd *firstp = NULL;
  for (size_t i = 0; i < r->n_points; i++) {
    const struct recipe_point *pt = &r->points[i];
    struct recipe_cmd own;
    const struct recipe_cmd *c = i == 0 ? recipe_first_launch(cx, p)
                                 : recipe_server_launch(r, pt, &own, NULL) == 0 ? &own
                                                                                : NULL;
    if (!c)
      return;
    const struct recipe_cmd cmd = *c; /* a view: owned by own or the context */
    cmd_seen = true;
    file = file ? file : cmd.file;
    cmd_line = cmd.line;
    spec_seen = spec_seen || cmd_has_spec(&cmd);
    const struct eng_ops *eng = eng_find(cmd.engine);
    for (size_t q = 0; q < ST_ARRAY_LEN(limit_knobs); q++) {
      const struct eng_flag *row = eng_knob_row(eng, limit_knobs[q]);
      size_t k = 0;
      while (row && k < ST_ARRAY_LEN(limit_rules) &&
             strcmp(limit_rules[k].flag, row->names[0] + 2) != 0)
        k++;
      if (!row || k == ST_ARRAY_LEN(limit_rules)) /* no rule reads this engine's flag */
        continue;
      struct limit_check *ck = &checks[k];
      long v;
      if (!knob_int(&cmd, limit_rules[k].flag, &v))
        continue;
      if (limit_knobs[q] == ENG_KNOB_GRAPH_BATCH && r->scenario != RECIPE_SCENARIO_FIXED_SEQ_LEN)
        continue;
      long need = pt->conc;
      if (eng_knob_per_dp_rank(eng, limit_knobs[q]) && pt->dp_attn) {
        long dp = 0;
        if (!knob_int(&cmd, "dp", &dp) || dp <= 0)
          dp = pt->tp;
        need = (pt->conc + dp - 1) / dp; /* each DP rank serves its share */
        ck->dp = (int)dp;
      }
      if (v < need) {
        if (ck->violations++ == 0) {
          ck->first_conc = pt->conc;
          ck->first_value = (int)v;
          ck->first_line = cmd.line;
          ck->first_need = (int)need;
          ck->first_row = pt->line;
          ck->first_point = i;
        }
      }
    }
    if (i == 0)
      firstp = c;
    else
      recipe_cmd_fini(&own);
  }
  for (size_t k = 0; k < ST_ARRAY_LEN(checks); k++) {
    struct limit_check *ck = &checks[k];
    const char *flag = limit_rules[k].flag;
    if (!ck->violations)
      continue;
    ck->first_line = flag_line(p, flag, ck->first_line);
    /* a value from a variable: the edit goes where the variable is set */
    char var[64];
    int use_line = ck->first_line;
    int set_line = flag_value_line(p, &r->points[ck->first_point], flag, use_line, var, sizeof var);
    if (set_line)
      ck->first_line = set_line;
    struct recipe_finding *f;
    if (ck->first_need != ck->first_conc)
      f = add(out, limit_rules[k].rule, RECIPE_SEV_ERROR, r->name, file, ck->first_line,
              "--%s %d is below %d, the per-DP-rank share of conc %d over %d ranks "
              "(dp-attention; %d of %zu sweep points)",
              flag, ck->first_value, ck->first_need, ck->first_conc, ck->dp, ck->violations,
              r->n_points);
    else
      f = add(out, limit_rules[k].rule, RECIPE_SEV_ERROR, r->name, file, ck->first_line,
              "--%s %d is below the sweep's concurrency %d (%d of %zu sweep points)", flag,
              ck->first_value, ck->first_conc, ck->violations, r->n_points);
    if (set_line)
      relate(f, file, use_line, "--%s $%s reads it here", flag, var);
    relate(f, r->file, ck->first_row, "search-space row of %s (conc %d)", r->entry,
           ck->first_conc);
  }
  if (!cmd_seen)
    return;
  const struct recipe_cmd first = *firstp;
  /* spec flags in the command that actually runs */
  if (r->spec == RECIPE_SPEC_NONE && spec_seen)
    relate_entry(
        add(out, &R_STP_HAS_SPEC, RECIPE_SEV_ERROR, r->name, file,
            first_flag_line(p, eng_spec_switch_flags(), cmd_line),
            "spec-decoding is none but the server command enables speculative decoding "
            "(results would be mislabelled)"),
        r);
  /* speculative-decoding flags that do not do what they look like (the engine says) */
  const char *unused = eng_args_spec_problem(first.engine, first.argv, first.argc);
  if (unused)
    relate_entry(add(out, &R_SPEC_UNUSED,
                     r->spec != RECIPE_SPEC_NONE ? RECIPE_SEV_ERROR : RECIPE_SEV_WARNING, r->name,
                     file, cmd_line, "%s%s", unused,
                     r->spec != RECIPE_SPEC_NONE ? " (results would be mislabelled)" : ""),
                 r);
  if (r->spec != RECIPE_SPEC_NONE && !spec_seen && !unused && r->origin == RECIPE_ORIGIN_SERVETOP)
    add(out, &R_MTP_NO_SPEC, RECIPE_SEV_ERROR, r->name, file, cmd_line,
        "spec-decoding is %s but the server command has no speculative-decoding flags",
        recipe_spec_name(r->spec));
  lint_version_rules(p, &first, file, cmd_line, out);
  /* scripts serve several EP sizes: an engine's expert-parallel switch must
   * follow EP_SIZE. Resolve at EP_SIZE=1; a switch still there is hard-coded. */
  const struct eng_flag *ep_row = eng_knob_row(eng_find(first.engine), ENG_KNOB_EXPERT_PARALLEL);
  const char *ep_flag = ep_row ? ep_row->names[0] + 2 : NULL;
  if (r->origin == RECIPE_ORIGIN_INFERENCEX && ep_flag && recipe_cmd_knob(&first, ep_flag)) {
    struct recipe_point ep1 = r->points[0];
    ep1.ep = 1;
    struct recipe_cmd cmd1;
    if (recipe_server_launch(r, &ep1, &cmd1, NULL) == 0) {
      if (recipe_cmd_knob(&cmd1, ep_flag))
        relate_entry(add(out, &R_VLLM_EP, RECIPE_SEV_WARNING, r->name, file,
                         flag_line(p, ep_flag, cmd_line),
                         "--%s is on even with EP_SIZE=1; gate it on EP_SIZE > 1", ep_flag),
                     r);
      recipe_cmd_fini(&cmd1);
    }
  }
}

/* ---------------------------------------------------------------- route analysis */
/* The launcher of route rt, as a path findings can name. */
#define LAUNCHER_FILE (rx && rx->launcher_file ? rx->launcher_file : rt->launcher)

/* The run_benchmark_serving calls' line helpers and check_env_vars. */
static bool script_mentions(const struct sh_script *s, const char *needle) {
  for (size_t i = 0; i < s->n_cmds; i++)
    for (size_t k = 0; k < s->cmds[i].n_words; k++)
      if (strstr(s->cmds[i].words[k].raw, needle))
        return true;
  return false;
}

/* Variables the script requires (check_env_vars NAME...), first call's line. */
static void script_required_env(const struct sh_script *s, char ***names, size_t *n, int *line) {
  *line = 0;
  for (size_t i = 0; i < s->n_cmds; i++) {
    const struct sh_cmd *c = &s->cmds[i];
    if (c->n_words == 0 || strcmp(c->words[0].raw, "check_env_vars") != 0)
      continue;
    if (!*line)
      *line = c->line;
    for (size_t k = 1; k < c->n_words; k++) {
      const char *w = c->words[k].raw;
      bool name = w[0] != '\0';
      for (const char *q = w; *q && name; q++)
        name = (*q >= 'A' && *q <= 'Z') || (*q >= 'a' && *q <= 'z') || *q == '_' ||
               (q > w && *q >= '0' && *q <= '9');
      if (name)
        recipe_strv_push(names, n, w);
    }
  }
}

/* Is `fits` in another folder than `built`, a folder that holds scripts? */
static bool misplaced(const struct recipe_set *set, const char *fits, const char *built) {
  const char *fs = strrchr(fits, '/'), *bs = strrchr(built, '/');
  if (!fs || !bs)
    return false;
  size_t fd = (size_t)(fs - fits), bd = (size_t)(bs - built);
  if (fd == bd && memcmp(fits, built, fd) == 0)
    return false;
  for (size_t i = 0; i < set->n_bench_files; i++) {
    const char *b = set->bench_files[i];
    if (strncmp(b, built, bd + 1) == 0 && !strchr(b + bd + 1, '/'))
      return true;
  }
  return false;
}

/* Is mtp the MTP sibling of off: the same path with _mtp before .sh
 * (x.sh / x_mtp.sh)? */
static bool mtp_sibling_path(const char *mtp, const char *off) {
  size_t n = strlen(off);
  return n > 3 && strcmp(off + n - 3, ".sh") == 0 && strlen(mtp) == n + 4 &&
         strncmp(mtp, off, n - 3) == 0 && strcmp(mtp + n - 3, "_mtp.sh") == 0;
}

/* Is mtp's entry name off's with "-mtp" appended? */
static bool mtp_entry_name(const char *mtp, const char *off) {
  size_t n = strlen(off);
  return strlen(mtp) == n + 4 && strncmp(mtp, off, n) == 0 && strcmp(mtp + n, "-mtp") == 0;
}

static bool str_same(const char *a, const char *b) {
  return a && b && strcmp(a, b) == 0;
}

/* r's twin of the other spec-decoding side: the set's twin (same model,
 * precision, GPU, engine and scenario), else a recipe of the same precision,
 * GPU, engine and scenario whose script is r's script sibling (x.sh /
 * x_mtp.sh) or whose entry name is r's with or without -mtp (model names
 * differ by a suffix: amd/DeepSeek-R1-0528-MXFP4 vs ...-MXFP4-Preview). */
static const struct recipe *lint_twin(const struct recipe_set *set, const struct recipe *r) {
  const struct recipe *t = recipe_set_twin(set, r);
  if (t)
    return t;
  bool want_spec = r->spec == RECIPE_SPEC_NONE;
  for (size_t i = 0; i < set->n_recipes; i++) {
    const struct recipe *o = &set->recipes[i]->pub;
    if (o == r || (o->spec != RECIPE_SPEC_NONE) != want_spec || o->scenario != r->scenario ||
        o->isl != r->isl || o->osl != r->osl || !str_same(o->engine, r->engine) ||
        !str_same(o->gpu, r->gpu) || !str_same(o->precision, r->precision) ||
        o->origin != r->origin)
      continue;
    const struct recipe *m = want_spec ? o : r, *off = want_spec ? r : o;
    if ((m->script_path && off->script_path && mtp_sibling_path(m->script_path, off->script_path)) ||
        mtp_entry_name(m->entry, off->entry))
      return o;
  }
  return NULL;
}

/* A route to a script that is not there. built: the path the launcher runs,
 * or (a launcher that stops when its candidates are missing) the first one it
 * tried; its line is rt->launcher_line, or line. */
static void lint_missing_route(const struct recipe_set *set, const struct recipe_priv *p,
                               size_t i, const char *built, int line,
                               struct recipe_findings *out) {
  const struct recipe *r = &p->pub;
  const struct recipe_route *rt = &r->routes[i];
  const struct route_extra *rx = p->route_x ? &p->route_x[i] : NULL;
  struct recipe_finding *f;
  const char *runs = rt->script ? "runs" : "tries";
  if (sh_is_unresolved(built)) {
    f = add(out, &R_ROUTE_MISSING, RECIPE_SEV_ERROR, r->name, LAUNCHER_FILE, line,
            "entry %s: the script path built here cannot be known statically (%s)", r->entry,
            built);
    relate_entry(f, r);
    return;
  }
  const char *fits = ix_fitting_script(set, r, r->scenario, r->spec, false);
  enum recipe_spec other = r->spec == RECIPE_SPEC_NONE ? RECIPE_SPEC_MTP : RECIPE_SPEC_NONE;
  const struct recipe *twin = NULL;
  if (fits && misplaced(set, fits, built)) {
    /* the script is there, outside the folder where the scenario's scripts
     * live and the launcher looks: the file is what moves */
    char *full = path_join_alloc(p->checkout, fits);
    f = add(out, &R_ROUTE_MISSING, RECIPE_SEV_ERROR, r->name, full, 1,
            "entry %s: this script is where no launcher looks: family %s runs %s (the folder of "
            "the scenario's other scripts), which does not exist",
            r->entry, rt->family, built);
    free(full);
    relate(f, LAUNCHER_FILE, line, "the path is built here");
    relate_entry(f, r);
  } else if (fits) {
    /* the script this entry needs is there: the path is built wrong */
    f = add(out, &R_ROUTE_MISSING, RECIPE_SEV_ERROR, r->name, LAUNCHER_FILE, line,
            "entry %s: family %s builds %s, which does not exist; %s is the script for this "
            "model, precision, GPU and spec-decoding",
            r->entry, rt->family, built, fits);
    relate_entry(f, r);
  } else if (rx && rx->alt_exists && (twin = lint_twin(set, r)) != NULL) {
    /* the other side's entry is there and runs the script that exists: this
     * entry lost its script (switching its spec-decoding would run the other
     * side's script and file its numbers under this side) */
    f = add(out, &R_ROUTE_MISSING, RECIPE_SEV_ERROR, r->name, r->file, r->line,
            "entry %s: family %s %s %s, which does not exist, while its %s twin %s runs %s: "
            "the script is missing; restore %s or remove this entry (not a spec-decoding "
            "change: that would file %s numbers as %s)",
            r->entry, rt->family, runs, built, recipe_spec_name(other), twin->entry, rx->alt,
            built, recipe_spec_name(other), recipe_spec_name(r->spec));
    relate(f, LAUNCHER_FILE, line, "the path is built here");
    relate(f, twin->file, twin->line, "entry %s", twin->entry);
  } else if (rx && rx->alt_exists) {
    /* the entry's spec-decoding is what does not match the scripts */
    f = add(out, &R_ROUTE_MISSING, RECIPE_SEV_ERROR, r->name, r->file,
            r->n_points ? r->points[0].line : r->line,
            "entry %s: family %s %s %s, which does not exist; with spec-decoding: %s it would "
            "run %s, which does: the search-space rows should say spec-decoding: %s (they say "
            "%s%s)",
            r->entry, rt->family, runs, built, recipe_spec_name(other), rx->alt,
            recipe_spec_name(other), recipe_spec_name(r->spec),
            r->spec == RECIPE_SPEC_NONE ? ", the default" : "");
    relate(f, LAUNCHER_FILE, line, "the path is built here");
  } else {
    f = add(out, &R_ROUTE_MISSING, RECIPE_SEV_ERROR, r->name, r->file, r->line,
            "entry %s: family %s %s %s, which does not exist (no script in the checkout "
            "fits this model, precision, GPU and spec-decoding)",
            r->entry, rt->family, runs, built);
    relate(f, LAUNCHER_FILE, line, "the path is built here");
  }
  for (size_t k = 0; k < rt->n_tried; k++)
    if (strcmp(rt->tried[k], built) != 0 && strcmp(rt->tried[k], rt->script ? rt->script : "") != 0)
      relate(f, LAUNCHER_FILE, rt->tried_lines[k], "also tried %s", rt->tried[k]);
}

static void lint_routes(struct lint_ctx *cx, const struct recipe_set *set,
                        const struct recipe_priv *p, struct recipe_findings *out) {
  const struct recipe *r = &p->pub;
  for (size_t i = 0; i < r->n_routes; i++) {
    const struct recipe_route *rt = &r->routes[i];
    const struct route_extra *rx = p->route_x ? &p->route_x[i] : NULL;
    struct recipe_finding *f;
    if (!rt->launcher) {
      /* the runners.yaml line that names a runner of this family */
      const char *rf = set->runners_file;
      int rline = 0;
      size_t only;
      int l = ix_label_index(set, r->runner, &only);
      for (size_t k = 0; l >= 0 && k < set->labels[l].n_runners && !rline; k++)
        if (strcmp(set->labels[l].runners[k], rt->runner) == 0)
          rline = set->labels[l].runner_lines[k];
      f = add(out, &R_NO_LAUNCHER, RECIPE_SEV_ERROR, r->name, rf, rline,
              "label '%s' has runner '%s' (family %s) but there is no runners/launch_%s.sh",
              r->runner, rt->runner, rt->family, rt->family);
      relate(f, r->file, r->runner_line, "runner: of entry %s", r->entry);
      continue;
    }
    if (!rt->script && rt->n_tried) {
      /* it tested its candidates, found none and stopped */
      lint_missing_route(set, p, i, rt->tried[0], rt->tried_lines[0], out);
      continue;
    }
    if (!rt->script) {
      f = add(out, &R_ROUTE_MISSING, RECIPE_SEV_ERROR, r->name, LAUNCHER_FILE, 1,
              "entry %s: %s runs no benchmarks/...sh script for a single-node entry", r->entry,
              rt->launcher);
      relate_entry(f, r);
      continue;
    }
    const struct sh_script *s = p->route_scripts ? p->route_scripts[i] : NULL;
    /* the launcher builds one path for mtp and none: SPEC_SUFFIX is not
     * appended (a script that branches on SPEC_DECODING itself is fine) */
    bool not_routed = r->spec == RECIPE_SPEC_MTP && rx && rx->alt &&
                      strcmp(rx->alt, rt->script) == 0 &&
                      !(s && script_mentions(s, "SPEC_DECODING"));
    if (not_routed) {
      f = add(out, &R_MTP_NOT_ROUTED, RECIPE_SEV_ERROR, r->name, LAUNCHER_FILE, rt->launcher_line,
              "entry %s: spec-decoding: mtp and none both run %s on %s: the path built here "
              "does not append SPEC_SUFFIX",
              r->entry, rt->script, rt->family);
      relate_entry(f, r);
    }
    if (!rt->exists) {
      lint_missing_route(set, p, i, rt->script, rt->launcher_line, out);
      continue;
    }
    bool in_agentic = recipe_path_has_dir(rt->script, "agentic");
    bool in_fixed = recipe_path_has_dir(rt->script, "fixed_seq_len");
    if (r->scenario == RECIPE_SCENARIO_AGENTIC && !in_agentic)
      relate_entry(add(out, &R_ROUTE_SCENARIO, RECIPE_SEV_ERROR, r->name, LAUNCHER_FILE,
                       rt->launcher_line,
                       "entry %s: agentic-coding runs %s on %s, outside agentic/", r->entry,
                       rt->script, rt->family),
                   r);
    else if (r->scenario == RECIPE_SCENARIO_FIXED_SEQ_LEN &&
             (in_agentic || (!in_fixed && recipe_path_has_dir(rt->script, "speedbench"))))
      relate_entry(add(out, &R_ROUTE_SCENARIO, RECIPE_SEV_ERROR, r->name, LAUNCHER_FILE,
                       rt->launcher_line,
                       "entry %s: fixed-seq-len runs %s on %s, outside fixed_seq_len/", r->entry,
                       rt->script, rt->family),
                   r);
    /* script-level rules, once per distinct script */
    bool dup = false;
    for (size_t k = 0; k < i && !dup; k++)
      dup = r->routes[k].script && strcmp(r->routes[k].script, rt->script) == 0;
    if (!s)
      continue;
    const struct recipe_cmd *cmdp = first_launch(cx, r, s);
    bool have_cmd = cmdp != NULL;
    const struct recipe_cmd cmd = cmdp ? *cmdp : (struct recipe_cmd){0}; /* a view */
    /* the script launches another engine than the entry's framework: one
     * that InferenceX entries name as their framework (launches the reader
     * does not name keep the entry's engine) */
    const struct eng_ops *launched = have_cmd ? eng_find(cmd.engine) : NULL;
    if (launched && launched->frameworks && strcmp(cmd.engine, r->engine) != 0) {
      f = add(out, &R_ENGINE_MISMATCH, RECIPE_SEV_ERROR, r->name, LAUNCHER_FILE,
              rt->launcher_line,
              "entry %s (framework %s) runs %s on %s, which launches %s: results would be "
              "labelled with the wrong engine",
              r->entry, r->framework, rt->script, rt->family, cmd.engine);
      relate(f, s->file, cmd.line, "the %s server launch", cmd.engine);
      relate_entry(f, r);
    }
    /* a container started with an explicit -e list must get what the script
     * requires */
    if (rx && rx->env_listed) {
      char **need = NULL;
      size_t n_need = 0;
      int check_line;
      script_required_env(s, &need, &n_need, &check_line);
      struct sbuf missing = {0};
      size_t n_missing = 0;
      for (size_t k = 0; k < n_need; k++) {
        bool passed = false;
        for (size_t q = 0; q < rx->n_env && !passed; q++)
          passed = strcmp(rx->env[q], need[k]) == 0;
        if (!passed)
          sbuf_printf(&missing, "%s%s", n_missing++ ? ", " : "", need[k]);
      }
      if (n_missing) {
        f = add(out, &R_ENV_NOT_PASSED, RECIPE_SEV_ERROR, r->name, LAUNCHER_FILE, rt->run_line,
                "entry %s: %s requires %s, which the container started here is not given "
                "(no -e/--env)",
                r->entry, rt->script, missing.data);
        relate(f, s->file, check_line, "check_env_vars");
        relate_entry(f, r);
      }
      sbuf_free(&missing);
      str_vec_free(need, n_need);
    }
    /* a non-MTP script reached by an MTP entry: the launcher line above is
     * the finding, its symptoms in the script are not repeated */
    if (!dup && !not_routed) {
      bool spec = script_has_spec(s);
      if (r->spec != RECIPE_SPEC_NONE && !spec)
        relate_entry(add(out, &R_MTP_NO_SPEC, RECIPE_SEV_ERROR, r->name, s->file,
                         have_cmd ? cmd.line : 1,
                         "reached through spec-decoding: %s but configures no speculative "
                         "decoding (--speculative-*, speculative_config, --method mtp)",
                         recipe_spec_name(r->spec)),
                     r);
      size_t n_calls;
      int line;
      bool chat = script_chat_template(s, &n_calls, &line);
      if (r->scenario == RECIPE_SCENARIO_FIXED_SEQ_LEN && (r->spec != RECIPE_SPEC_NONE || spec) &&
          n_calls > 0 && !chat)
        relate_entry(add(out, &R_CHAT, RECIPE_SEV_ERROR, r->name, s->file, line,
                         "speculative decoding is on but run_benchmark_serving has no "
                         "--use-chat-template (or --dsv4): acceptance on raw random tokens is "
                         "not what production sees"),
                     r);
    }
  }
}

/* Entry-level rules that need the checkout: runner labels. */
static void lint_labels(const struct recipe_set *set, const struct recipe_priv *p, bool agentic,
                        struct recipe_findings *out) {
  const struct recipe *r = &p->pub;
  if (set->have_runners) {
    size_t only;
    if (ix_label_index(set, r->runner, &only) < 0) {
      add(out, &R_LABEL, RECIPE_SEV_ERROR, r->entry, r->file, r->runner_line,
          "entry %s: runner label '%s' is not under labels: in %s", r->entry, r->runner,
          set->runners_file);
      return;
    }
  }
  if (set->schema.agentic_cluster_label && agentic && !str_starts_with(r->runner, "cluster:"))
    add(out, &R_LABEL, RECIPE_SEV_ERROR, r->entry, r->file, r->runner_line,
        "entry %s: agentic entries need a cluster:<name> runner label, got '%s'", r->entry,
        r->runner);
}

/* ---------------------------------------------------------------- siblings */
struct sib {
  const struct recipe_priv *p;
  bool have;
  const char *mem_flag;   /* the engine's GPU memory fraction flag (no dashes); NULL: none */
  double mem;             /* < 0: not a literal */
  int mem_line;           /* the flag (mem_set_line: where its value is set) */
  bool eval_cap;          /* caps EVAL_CONCURRENT_REQUESTS below the top concurrency */
  int eval_line;          /* the cap's line; without one, the run_eval call's */
  const char *file;       /* the script or recipe file */
};

static int command_line(const struct sh_script *s, const char *name) {
  for (size_t i = 0; i < s->n_cmds; i++)
    if (s->cmds[i].n_words && strcmp(s->cmds[i].words[0].raw, name) == 0)
      return s->cmds[i].line;
  return 0;
}

/* Does the script cap the eval's concurrency below the sweep's top point?
 * (`${EVAL_CONCURRENT_REQUESTS:-$CONC}` is run_lm_eval's own default.) */
static bool eval_capped(const struct recipe *r, const struct sh_script *s) {
  if (!assignment_line(s, "EVAL_CONCURRENT_REQUESTS"))
    return false;
  const struct recipe_point *top = &r->points[0];
  for (size_t i = 1; i < r->n_points; i++)
    if (r->points[i].conc > top->conc)
      top = &r->points[i];
  struct sh_env env = {0};
  recipe_point_env(r, top, &env);
  sh_env_set(&env, "RUN_EVAL", "true");
  struct sh_result res;
  sh_run(s, &env, &res);
  const char *v = sh_env_get(&env, "EVAL_CONCURRENT_REQUESTS");
  long cap;
  bool capped = v && parse_long(v, &cap) == 0 && cap < top->conc;
  sh_result_fini(&res);
  sh_env_fini(&env);
  return capped;
}

static void sib_fill(struct lint_ctx *cx, const struct recipe_priv *p, struct sib *out) {
  memset(out, 0, sizeof *out);
  out->p = p;
  out->mem = -1;
  const struct recipe_cmd *cmdp = recipe_first_launch(cx, p);
  if (!cmdp)
    return;
  const struct recipe_cmd cmd = *cmdp; /* a view */
  out->have = true;
  out->file = cmd.file;
  out->mem_flag = eng_gpu_memory_flag(eng_find(cmd.engine));
  const char *v = out->mem_flag ? recipe_cmd_knob(&cmd, out->mem_flag) : NULL;
  double d;
  if (v && parse_double(v, &d) == 0) {
    out->mem = d;
    out->mem_line = flag_line(p, out->mem_flag, cmd.line);
  }
  if (p->script && p->pub.spec == RECIPE_SPEC_MTP) {
    out->eval_cap = eval_capped(&p->pub, p->script);
    out->eval_line = out->eval_cap ? assignment_line(p->script, "EVAL_CONCURRENT_REQUESTS")
                                   : command_line(p->script, "run_eval");
    if (!out->eval_line)
      out->eval_line = cmd.line;
  }
}

static bool same_str(const char *a, const char *b) {
  return a && b && strcmp(a, b) == 0;
}

/* The same launch script (InferenceX); servetop recipes of one file are
 * each their own. */
static bool same_script(const struct sib *a, const struct sib *b) {
  return a->p->pub.origin == RECIPE_ORIGIN_INFERENCEX && b->p->pub.origin == RECIPE_ORIGIN_INFERENCEX &&
         same_str(a->file, b->file);
}

/* Where s's memory value is set: the variable's assignment the flag reads
 * (its use into *use_line and var), else the flag (*use_line 0). Asked only
 * for findings: it interprets the script once more. */
static int mem_set_line(const struct sib *s, int *use_line, char *var, size_t var_bytes) {
  int set = flag_value_line(s->p, &s->p->pub.points[0], s->mem_flag, s->mem_line, var, var_bytes);
  *use_line = set ? s->mem_line : 0;
  return set ? set : s->mem_line;
}

static bool same_model(const struct recipe *a, const struct recipe *b) {
  return same_str(a->model_prefix, b->model_prefix) && same_str(a->precision, b->precision);
}

/* L11: an MTP script's memory knob above its non-MTP twin's (the draft's
 * weights and KV need room), or, agentic, above the fixed-seq-len MTP
 * script's on the same model, precision, GPU and engine (the proven MTP
 * setting). L12: an MTP script without the EVAL_CONCURRENT_REQUESTS cap that
 * its MTP siblings (same model, precision, engine and scenario) set. Once per
 * script. */
static void lint_siblings(struct lint_ctx *cx, const struct recipe_set *set,
                          struct recipe_findings *out) {
  struct sib *sibs = xcalloc(set->n_recipes ? set->n_recipes : 1, sizeof *sibs);
  for (size_t i = 0; i < set->n_recipes; i++)
    sib_fill(cx, set->recipes[i], &sibs[i]);
  for (size_t i = 0; i < set->n_recipes; i++) {
    const struct sib *m = &sibs[i];
    const struct recipe *r = &m->p->pub;
    if (r->spec != RECIPE_SPEC_MTP || !m->have)
      continue;
    bool seen = false; /* this script was judged for an earlier recipe */
    for (size_t k = 0; k < i && !seen; k++)
      seen = sibs[k].have && sibs[k].p->pub.spec == RECIPE_SPEC_MTP && same_script(&sibs[k], m);
    if (seen)
      continue;
    const struct sib *twin = NULL, *capper = NULL;
    const struct recipe *t = lint_twin(set, r);
    for (size_t k = 0; k < set->n_recipes; k++) {
      const struct sib *o = &sibs[k];
      const struct recipe *q = &o->p->pub;
      if (!o->have || o == m || same_script(o, m))
        continue;
      if (q == t)
        twin = o;
      if (q->spec == RECIPE_SPEC_MTP && same_model(q, r) && same_str(q->engine, r->engine) &&
          q->scenario == r->scenario && o->eval_cap && !capper)
        capper = o;
    }
    const char *knob = m->mem_flag; /* set where m->mem is */
    struct recipe_finding *f = NULL;
    int use_line = 0;
    char var[64];
    if (m->mem >= 0 && twin && twin->mem >= 0 && m->mem > twin->mem) {
      int twin_use, at = mem_set_line(m, &use_line, var, sizeof var);
      char twin_var[64];
      f = add(out, &R_MEMFRAC, RECIPE_SEV_WARNING, r->name, m->file, at,
              "MTP uses --%s %g, more than its non-MTP sibling's %g (%s): the draft model's "
              "weights and KV need room too",
              knob, m->mem, twin->mem, twin->file);
      relate(f, twin->file, mem_set_line(twin, &twin_use, twin_var, sizeof twin_var),
             "non-MTP sibling (%s)", twin->p->pub.name);
    } else if (m->mem >= 0 && m->p->fixed_mtp_script) {
      /* an agentic MTP script against the fixed-seq-len MTP setting proven on
       * the same GPU: agentic recipes come after it, and inherit their non-MTP
       * agentic sibling's settings (InferenceX 732a0e3a9) */
      struct recipe_cmd sc;
      if (recipe_server_cmd_script(r, m->p->fixed_mtp_script, m->p->fixed_mtp_file,
                                   &r->points[0], false, &sc, NULL) == 0) {
        const char *v = strcmp(sc.engine, r->engine) == 0 ? recipe_cmd_knob(&sc, knob) : NULL;
        double d;
        if (v && parse_double(v, &d) == 0 && m->mem > d) {
          int line = script_flag_line(m->p->fixed_mtp_script, knob, sc.line);
          f = add(out, &R_MEMFRAC, RECIPE_SEV_WARNING, r->name, m->file,
                  mem_set_line(m, &use_line, var, sizeof var),
                  "agentic MTP uses --%s %g, more than %g in %s, the fixed-seq-len MTP setting "
                  "of the same model, precision, GPU and engine",
                  knob, m->mem, d, m->p->fixed_mtp_file);
          relate(f, m->p->fixed_mtp_file, line, "fixed-seq-len MTP sibling");
        }
        recipe_cmd_fini(&sc);
      }
    }
    if (f && use_line)
      relate(f, m->file, use_line, "--%s $%s reads it here", knob, var);
    if (f)
      relate_entry(f, r);
    if (capper && !m->eval_cap && r->origin == RECIPE_ORIGIN_INFERENCEX && m->p->script) {
      f = add(out, &R_EVAL_CONC, RECIPE_SEV_WARNING, r->name, m->file, m->eval_line,
              "no EVAL_CONCURRENT_REQUESTS cap, while the MTP sibling %s caps it: the eval "
              "runs at the sweep's highest concurrency (run_lm_eval's default)",
              capper->file);
      relate(f, capper->file, capper->eval_line, "EVAL_CONCURRENT_REQUESTS in %s",
             capper->p->pub.name);
      relate_entry(f, r);
    }
  }
  free(sibs);
}

/* ---------------------------------------------------------------- images */
/* Established SKUs, where vLLM/SGLang entries must run the upstream image. */
static bool established_gpu(const char *gpu) {
  static const char *const gpus[] = {"h100", "h200", "b200", "b300", "gb200",
                                     "gb300", "mi300x", "mi325x", "mi355x"};
  for (size_t i = 0; i < ST_ARRAY_LEN(gpus); i++)
    if (gpu && strcmp(gpu, gpus[i]) == 0)
      return true;
  return false;
}

static void lint_image(const struct recipe *r, struct recipe_findings *out) {
  const char *img = r->image;
  if (!img)
    return;
  if (img[0] == '/' || str_starts_with(img, "./") || strstr(img, ".sqsh")) {
    add(out, &R_PUBLIC_IMAGE, RECIPE_SEV_ERROR, r->entry, r->file, r->line,
        "image '%s' is a local path or squash file; use a public registry image", img);
    return;
  }
  const struct eng_ops *eng = eng_for_framework(r->framework);
  const char *want = eng ? eng->upstream_image : NULL;
  if (!want || !established_gpu(r->gpu))
    return;
  /* repository: up to the tag or digest; enroot writes '#' for the first '/' */
  char *repo = xstrndup(img, strcspn(img, ":@"));
  for (char *c = repo; *c; c++)
    if (*c == '#')
      *c = '/';
  const char *name = str_starts_with(repo, "docker.io/") ? repo + 10 : repo;
  size_t n = strlen(want);
  bool ok = strncmp(name, want, n) == 0 && (name[n] == '\0' || strcmp(name + n, "-rocm") == 0);
  if (!ok)
    add(out, &R_UPSTREAM_IMAGE, RECIPE_SEV_ERROR, r->entry, r->file, r->line,
        "framework %s on %s must use the upstream %s[-rocm] image, got '%s'", r->framework,
        r->gpu, want, img);
  free(repo);
}

/* ---------------------------------------------------------------- trust */
/* The server's environment sets loader or interpreter variables: code from
 * outside the image runs in it (issue 22.6). Said, never refused. */
static void lint_loader_env(const struct recipe *r, struct recipe_findings *out) {
  struct recipe_cmd cmd;
  if (r->n_points == 0 || recipe_server_cmd(r, NULL, &cmd, NULL) != 0)
    return;
  char names[256];
  size_t n = recipe_loader_env(&cmd, names, sizeof names);
  if (n)
    add(out, &R_LOADER_ENV, RECIPE_SEV_NOTE, r->name, cmd.file ? cmd.file : r->file,
        cmd.file ? cmd.line : r->line,
        "the server is launched with %s set: %s load%s or run%s code from outside the image; "
        "read what %s before running a recipe you did not write", names,
        n == 1 ? "it makes the server" : "they make the server", "", "",
        n == 1 ? "it points at" : "they point at");
  recipe_cmd_fini(&cmd);
}

static int cmp_finding(const void *a, const void *b) {
  const struct recipe_finding *x = a, *y = b;
  int c = strcmp(x->file, y->file);
  if (c)
    return c;
  if (x->line != y->line)
    return x->line < y->line ? -1 : 1;
  c = strcmp(x->rule, y->rule);
  return c ? c : strcmp(x->recipe, y->recipe);
}

/* One finding for one defect: the same rule, place and message reached
 * through several recipes (a script two entries run, a launcher line every
 * family member shares) is kept once; the other recipes' locations are added
 * to it. out is sorted. */
static void merge_repeats(struct recipe_findings *out) {
  size_t k = 0;
  for (size_t i = 0; i < out->n; i++) {
    struct recipe_finding *x = &out->items[i];
    struct recipe_finding *keep = NULL;
    for (size_t j = k; j-- > 0 && !keep;) {
      struct recipe_finding *y = &out->items[j];
      if (y->line != x->line || strcmp(y->file, x->file) != 0)
        break;
      if (strcmp(y->rule, x->rule) == 0 && strcmp(y->message, x->message) == 0)
        keep = y;
    }
    if (!keep) {
      out->items[k++] = *x;
      continue;
    }
    for (size_t r = 0; r < x->n_related; r++)
      relate(keep, x->related[r].file, x->related[r].line, "%s", x->related[r].what);
    finding_free(x);
  }
  out->n = k;
}

void recipe_lint(const struct recipe_set *set, struct recipe_findings *out) {
  memset(out, 0, sizeof *out);
  struct lint_ctx cx = {0};
  for (size_t i = 0; i < set->n_diags; i++) {
    const struct recipe_diag *d = &set->diags[i];
    struct recipe_finding *f =
        add(out, str_ends_with(d->file, ".sh") ? &R_SCRIPT_SYNTAX : &R_SCHEMA, RECIPE_SEV_ERROR,
            d->entry, d->file, d->line, "%s", d->message);
    f->col = d->col;
  }
  for (size_t i = 0; i < set->n_recipes; i++) {
    const struct recipe_priv *p = set->recipes[i];
    const struct recipe *r = &p->pub;
    /* entry-level rules once per entry (its recipes are contiguous) */
    bool first_of_entry = i == 0 || strcmp(set->recipes[i - 1]->pub.entry, r->entry) != 0 ||
                          strcmp(set->recipes[i - 1]->pub.file, r->file) != 0;
    if (first_of_entry)
      lint_image(r, out);
    lint_loader_env(r, out);
    if (r->origin == RECIPE_ORIGIN_INFERENCEX) {
      if (p->checkout) {
        if (first_of_entry) {
          bool agentic = false; /* any of the entry's recipes */
          for (size_t k = i; k < set->n_recipes && !agentic; k++) {
            const struct recipe *q = &set->recipes[k]->pub;
            if (strcmp(q->entry, r->entry) != 0 || strcmp(q->file, r->file) != 0)
              break;
            agentic = q->scenario == RECIPE_SCENARIO_AGENTIC;
          }
          lint_labels(set, p, agentic, out);
        }
        lint_routes(&cx, set, p, out);
      }
      /* a script of the other scenario (ROUTE_SCENARIO_MISMATCH) is not
       * judged against this scenario's sweep */
      bool other_scenario =
          r->script_path && (r->scenario == RECIPE_SCENARIO_AGENTIC) !=
                                recipe_path_has_dir(r->script_path, "agentic");
      if (p->script && !other_scenario)
        lint_points(&cx, p, out);
    } else {
      if (r->scenario == RECIPE_SCENARIO_FIXED_SEQ_LEN && r->spec != RECIPE_SPEC_NONE &&
          !r->bench.use_chat_template)
        add(out, &R_CHAT, RECIPE_SEV_ERROR, r->name, r->file,
            r->bench.line ? r->bench.line : r->line,
            "spec-decoding: %s but benchmark.use-chat-template is not true",
            recipe_spec_name(r->spec));
      lint_points(&cx, p, out);
    }
  }
  lint_siblings(&cx, set, out);
  lint_ctx_fini(&cx);
  if (out->n > 1)
    qsort(out->items, out->n, sizeof *out->items, cmp_finding);
  merge_repeats(out);
}
