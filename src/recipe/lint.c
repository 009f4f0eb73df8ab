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
static const struct rule R_SPEC_V2 = {"L06", "SGLANG_SPEC_V2"};
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

static void add(struct recipe_findings *out, const struct rule *rule, enum recipe_severity sev,
                const char *recipe, const char *file, int line, const char *fmt, ...)
    ST_PRINTF(7, 8);
static void add(struct recipe_findings *out, const struct rule *rule, enum recipe_severity sev,
                const char *recipe, const char *file, int line, const char *fmt, ...) {
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
  f->message = msg;
}

const char *recipe_severity_name(enum recipe_severity sev) {
  return sev == RECIPE_SEV_ERROR ? "error" : sev == RECIPE_SEV_WARNING ? "warning" : "note";
}

void recipe_findings_fini(struct recipe_findings *f) {
  for (size_t i = 0; i < f->n; i++) {
    free((char *)f->items[i].recipe);
    free((char *)f->items[i].file);
    free((char *)f->items[i].message);
  }
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
static bool is_spec_method(const char *v) {
  return strcmp(v, "mtp") == 0 || strcmp(v, "dspark") == 0 || strncmp(v, "eagle", 5) == 0;
}

static bool word_enables_spec(const char *w) {
  return strstr(w, "--speculative-") || strstr(w, "speculative_config") ||
         strstr(w, "speculative-config");
}

/* Any speculative-decoding configuration anywhere in the script. */
static bool script_has_spec(const struct sh_script *s) {
  for (size_t i = 0; i < s->n_cmds; i++) {
    const struct sh_cmd *c = &s->cmds[i];
    for (size_t k = 0; k < c->n_words; k++) {
      const char *w = c->words[k].raw;
      if (word_enables_spec(w) || strstr(w, "--method mtp") || strstr(w, "--method dspark"))
        return true;
      if (strcmp(w, "--method") == 0 && k + 1 < c->n_words && is_spec_method(c->words[k + 1].raw))
        return true;
    }
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
  if (eng_args_enable_spec(cmd->engine, cmd->argv, cmd->argc)) /* the engine's own flags */
    return true;
  for (size_t i = 0; i < cmd->argc; i++) {
    if (word_enables_spec(cmd->argv[i]))
      return true;
    if (strcmp(cmd->argv[i], "--method") == 0 && i + 1 < cmd->argc &&
        is_spec_method(cmd->argv[i + 1]))
      return true;
  }
  return false;
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

static int flag_line(const struct recipe_priv *p, const char *flag_name, int fallback) {
  char *flag = xasprintf("--%s", flag_name);
  int line = fallback;
  size_t off;
  if (p->pub.origin == RECIPE_ORIGIN_SERVETOP) {
    for (size_t i = 0; i < p->n_tmpl_argv && line == fallback; i++)
      if (flag_at(p->tmpl_argv[i], flag, &off))
        line = p->tmpl_argv_lines[i];
  } else if (p->script) {
    /* prefer the occurrence in the launch command (at or after its first
     * line); otherwise where an array or variable sets it earlier */
    int after = 0, any = 0;
    for (size_t c = 0; c < p->script->n_cmds; c++) {
      const struct sh_cmd *cmd = &p->script->cmds[c];
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
    line = after ? after : any ? any : fallback;
  }
  free(flag);
  return line;
}

/* ---------------------------------------------------------------- per recipe */
struct limit_check {
  const struct rule *rule;
  const char *flag;
  const char *engine;      /* only for this engine */
  int first_conc, first_value, first_line, first_need, violations;
  int dp;
};

static void lint_points(const struct recipe_priv *p, struct recipe_findings *out) {
  const struct recipe *r = &p->pub;
  struct limit_check checks[] = {
      {&R_MAX_RUNNING, "max-running-requests", "sglang", 0, 0, 0, 0, 0, 0},
      {&R_CUDA_GRAPH, "cuda-graph-max-bs", "sglang", 0, 0, 0, 0, 0, 0},
      {&R_MAX_NUM_SEQS, "max-num-seqs", "vllm", 0, 0, 0, 0, 0, 0},
  };
  const char *file = NULL;
  bool spec_seen = false, cmd_seen = false;
  int cmd_line = 0;
  struct recipe_cmd first = {0};
  bool have_first = false;
  for (size_t i = 0; i < r->n_points; i++) {
    const struct recipe_point *pt = &r->points[i];
    struct recipe_cmd cmd;
    if (recipe_server_cmd(r, pt, &cmd, NULL) < 0)
      return;
    cmd_seen = true;
    file = file ? file : cmd.file;
    cmd_line = cmd.line;
    spec_seen = spec_seen || cmd_has_spec(&cmd);
    for (size_t k = 0; k < ST_ARRAY_LEN(checks); k++) {
      struct limit_check *ck = &checks[k];
      long v;
      if (strcmp(cmd.engine, ck->engine) != 0 || !knob_int(&cmd, ck->flag, &v))
        continue;
      long need = pt->conc;
      if (ck->rule == &R_CUDA_GRAPH && pt->dp_attn) {
        long dp = 0;
        if (!knob_int(&cmd, "dp", &dp) || dp <= 0)
          dp = pt->tp;
        need = (pt->conc + dp - 1) / dp; /* graphs are captured per DP rank */
        ck->dp = (int)dp;
      }
      if (v < need) {
        if (ck->violations++ == 0) {
          ck->first_conc = pt->conc;
          ck->first_value = (int)v;
          ck->first_line = cmd.line;
          ck->first_need = (int)need;
        }
      }
    }
    if (!have_first) {
      first = cmd;
      have_first = true;
    } else {
      recipe_cmd_fini(&cmd);
    }
  }
  for (size_t k = 0; k < ST_ARRAY_LEN(checks); k++) {
    struct limit_check *ck = &checks[k];
    if (ck->violations)
      ck->first_line = flag_line(p, ck->flag, ck->first_line);
    if (ck->violations && ck->first_need != ck->first_conc)
      add(out, ck->rule, RECIPE_SEV_ERROR, r->name, file, ck->first_line,
          "--%s %d is below %d, the per-DP-rank share of conc %d over %d ranks "
          "(dp-attention; %d of %zu sweep points)",
          ck->flag, ck->first_value, ck->first_need, ck->first_conc, ck->dp, ck->violations,
          r->n_points);
    else if (ck->violations)
      add(out, ck->rule, RECIPE_SEV_ERROR, r->name, file, ck->first_line,
          "--%s %d is below the sweep's concurrency %d (%d of %zu sweep points)", ck->flag,
          ck->first_value, ck->first_conc, ck->violations, r->n_points);
  }
  if (!cmd_seen)
    return;
  /* spec flags in the command that actually runs */
  if (r->spec == RECIPE_SPEC_NONE && spec_seen)
    add(out, &R_STP_HAS_SPEC, RECIPE_SEV_ERROR, r->name, file,
        flag_line(p, "speculative-algorithm",
                  flag_line(p, "speculative-algo", flag_line(p, "speculative-config", cmd_line))),
        "spec-decoding is none but the server command enables speculative decoding "
        "(results would be mislabelled)");
  /* speculative-decoding flags that do not do what they look like (the engine says) */
  const char *unused = eng_args_spec_problem(first.engine, first.argv, first.argc);
  if (unused)
    add(out, &R_SPEC_UNUSED, r->spec != RECIPE_SPEC_NONE ? RECIPE_SEV_ERROR : RECIPE_SEV_WARNING,
        r->name, file, cmd_line, "%s%s", unused,
        r->spec != RECIPE_SPEC_NONE ? " (results would be mislabelled)" : "");
  if (r->spec != RECIPE_SPEC_NONE && !spec_seen && !unused && r->origin == RECIPE_ORIGIN_SERVETOP)
    add(out, &R_MTP_NO_SPEC, RECIPE_SEV_ERROR, r->name, file, cmd_line,
        "spec-decoding is %s but the server command has no speculative-decoding flags",
        recipe_spec_name(r->spec));
  /* SGLang EAGLE/NEXTN with topk 1 should run the v2 speculative path */
  const char *algo = recipe_cmd_knob(&first, "speculative-algorithm");
  const char *topk = recipe_cmd_knob(&first, "speculative-eagle-topk");
  if (strcmp(first.engine, "sglang") == 0 && algo &&
      (strcmp(algo, "EAGLE") == 0 || strcmp(algo, "NEXTN") == 0 || strcmp(algo, "EAGLE3") == 0) &&
      (!topk || strcmp(topk, "1") == 0)) {
    const char *v2 = recipe_cmd_env(&first, "SGLANG_ENABLE_SPEC_V2");
    if (!v2 || (strcmp(v2, "1") != 0 && strcasecmp(v2, "true") != 0))
      add(out, &R_SPEC_V2, RECIPE_SEV_WARNING, r->name, file,
          flag_line(p, "speculative-algorithm", flag_line(p, "speculative-algo", cmd_line)),
          "SGLang %s with topk 1 without SGLANG_ENABLE_SPEC_V2=1 (the convention since "
          "InferenceX #1017; the v1 path is slower)",
          algo);
  }
  /* vLLM scripts serve several EP sizes: expert parallelism must follow
   * EP_SIZE. Resolve at EP_SIZE=1; a flag still there is hard-coded. */
  if (r->origin == RECIPE_ORIGIN_INFERENCEX && strcmp(first.engine, "vllm") == 0 &&
      recipe_cmd_knob(&first, "enable-expert-parallel")) {
    struct recipe_point ep1 = r->points[0];
    ep1.ep = 1;
    struct recipe_cmd cmd1;
    if (recipe_server_cmd(r, &ep1, &cmd1, NULL) == 0) {
      if (recipe_cmd_knob(&cmd1, "enable-expert-parallel"))
        add(out, &R_VLLM_EP, RECIPE_SEV_WARNING, r->name, file,
            flag_line(p, "enable-expert-parallel", cmd_line),
            "--enable-expert-parallel is on even with EP_SIZE=1; gate it on EP_SIZE > 1");
      recipe_cmd_fini(&cmd1);
    }
  }
  recipe_cmd_fini(&first);
}

static bool path_has_dir(const char *path, const char *dir) {
  size_t n = strlen(dir);
  for (const char *p = strstr(path, dir); p; p = strstr(p + 1, dir))
    if ((p == path || p[-1] == '/') && p[n] == '/')
      return true;
  return false;
}

static void lint_routes(const struct recipe_set *set, const struct recipe_priv *p,
                        struct recipe_findings *out) {
  const struct recipe *r = &p->pub;
  if (set->have_runners) {
    bool known = false;
    for (size_t i = 0; i < set->n_labels && !known; i++)
      known = strcmp(set->labels[i], r->runner) == 0;
    if (!known) {
      add(out, &R_LABEL, RECIPE_SEV_ERROR, r->name, r->file, r->line,
          "runner label '%s' is not under labels: in %s", r->runner, set->runners_file);
      return;
    }
  }
  if (r->scenario == RECIPE_SCENARIO_AGENTIC && !str_starts_with(r->runner, "cluster:"))
    add(out, &R_LABEL, RECIPE_SEV_ERROR, r->name, r->file, r->line,
        "agentic entries need a cluster:<name> runner label, got '%s'", r->runner);
  for (size_t i = 0; i < r->n_routes; i++) {
    const struct recipe_route *rt = &r->routes[i];
    if (!rt->launcher) {
      add(out, &R_NO_LAUNCHER, RECIPE_SEV_ERROR, r->name, r->file, r->line,
          "label '%s' has runners '%s_*' but there is no runners/launch_%s.sh", r->runner,
          rt->family, rt->family);
      continue;
    }
    if (!rt->script) {
      add(out, &R_ROUTE_MISSING, RECIPE_SEV_ERROR, r->name, r->file, r->line,
          "%s names no benchmarks/...sh script for this entry", rt->launcher);
      continue;
    }
    if (!rt->exists) {
      add(out, &R_ROUTE_MISSING, RECIPE_SEV_ERROR, r->name, r->file, r->line,
          "%s (family %s) resolves to %s, which does not exist", rt->launcher, rt->family,
          rt->script);
      continue;
    }
    size_t len = strlen(rt->script);
    bool mtp_named = len > 7 && strcmp(rt->script + len - 7, "_mtp.sh") == 0;
    if (r->spec == RECIPE_SPEC_MTP && !mtp_named)
      add(out, &R_MTP_NOT_ROUTED, RECIPE_SEV_ERROR, r->name, r->file, r->line,
          "spec-decoding: mtp resolves to %s on %s (not an _mtp script: the launcher does not "
          "append SPEC_SUFFIX)",
          rt->script, rt->family);
    bool in_agentic = path_has_dir(rt->script, "agentic");
    bool in_fixed = path_has_dir(rt->script, "fixed_seq_len");
    if (r->scenario == RECIPE_SCENARIO_AGENTIC && !in_agentic)
      add(out, &R_ROUTE_SCENARIO, RECIPE_SEV_ERROR, r->name, r->file, r->line,
          "agentic-coding resolves to %s on %s, outside agentic/", rt->script, rt->family);
    else if (r->scenario == RECIPE_SCENARIO_FIXED_SEQ_LEN && (in_agentic || (!in_fixed && path_has_dir(rt->script, "speedbench"))))
      add(out, &R_ROUTE_SCENARIO, RECIPE_SEV_ERROR, r->name, r->file, r->line,
          "fixed-seq-len resolves to %s on %s, outside fixed_seq_len/", rt->script, rt->family);
    /* script-level rules, once per distinct script */
    bool dup = false;
    for (size_t k = 0; k < i && !dup; k++)
      dup = r->routes[k].script && strcmp(r->routes[k].script, rt->script) == 0;
    const struct sh_script *s = p->route_scripts ? p->route_scripts[i] : NULL;
    if (dup || !s)
      continue;
    bool spec = script_has_spec(s);
    if (r->spec != RECIPE_SPEC_NONE && !spec)
      add(out, &R_MTP_NO_SPEC, RECIPE_SEV_ERROR, r->name, s->file, 1,
          "reached through spec-decoding: %s but configures no speculative decoding "
          "(--speculative-*, speculative_config, --method mtp)",
          recipe_spec_name(r->spec));
    size_t n_calls;
    int line;
    bool chat = script_chat_template(s, &n_calls, &line);
    if (r->scenario == RECIPE_SCENARIO_FIXED_SEQ_LEN && (r->spec != RECIPE_SPEC_NONE || spec) &&
        n_calls > 0 && !chat)
      add(out, &R_CHAT, RECIPE_SEV_ERROR, r->name, s->file, line,
          "speculative decoding is on but run_benchmark_serving has no --use-chat-template "
          "(or --dsv4): acceptance on raw random tokens is not what production sees");
  }
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
  bool vllm = strcmp(r->framework, "vllm") == 0, sglang = strcmp(r->framework, "sglang") == 0;
  if ((!vllm && !sglang) || !established_gpu(r->gpu))
    return;
  /* repository: up to the tag or digest; enroot writes '#' for the first '/' */
  char *repo = xstrndup(img, strcspn(img, ":@"));
  for (char *c = repo; *c; c++)
    if (*c == '#')
      *c = '/';
  const char *name = str_starts_with(repo, "docker.io/") ? repo + 10 : repo;
  const char *want = vllm ? "vllm/vllm-openai" : "lmsysorg/sglang";
  size_t n = strlen(want);
  bool ok = strncmp(name, want, n) == 0 && (name[n] == '\0' || strcmp(name + n, "-rocm") == 0);
  if (!ok)
    add(out, &R_UPSTREAM_IMAGE, RECIPE_SEV_ERROR, r->entry, r->file, r->line,
        "framework %s on %s must use the upstream %s[-rocm] image, got '%s'", r->framework,
        r->gpu, want, img);
  free(repo);
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

void recipe_lint(const struct recipe_set *set, struct recipe_findings *out) {
  memset(out, 0, sizeof *out);
  for (size_t i = 0; i < set->n_diags; i++) {
    const struct recipe_diag *d = &set->diags[i];
    char *entry = d->field ? xstrndup(d->field, strcspn(d->field, ".[")) : NULL;
    add(out, str_ends_with(d->file, ".sh") ? &R_SCRIPT_SYNTAX : &R_SCHEMA, RECIPE_SEV_ERROR, entry,
        d->file, d->line, "%s", d->message);
    free(entry);
  }
  for (size_t i = 0; i < set->n_recipes; i++) {
    const struct recipe_priv *p = set->recipes[i];
    const struct recipe *r = &p->pub;
    /* entry-level rules once per entry (its recipes are contiguous) */
    if (i == 0 || strcmp(set->recipes[i - 1]->pub.entry, r->entry) != 0 ||
        strcmp(set->recipes[i - 1]->pub.file, r->file) != 0)
      lint_image(r, out);
    if (r->origin == RECIPE_ORIGIN_INFERENCEX) {
      if (p->checkout)
        lint_routes(set, p, out);
      if (p->script)
        lint_points(p, out);
    } else {
      if (r->scenario == RECIPE_SCENARIO_FIXED_SEQ_LEN && r->spec != RECIPE_SPEC_NONE &&
          !r->bench.use_chat_template)
        add(out, &R_CHAT, RECIPE_SEV_ERROR, r->name, r->file,
            r->bench.line ? r->bench.line : r->line,
            "spec-decoding: %s but benchmark.use-chat-template is not true",
            recipe_spec_name(r->spec));
      lint_points(p, out);
    }
  }
  if (out->n > 1)
    qsort(out->items, out->n, sizeof *out->items, cmp_finding);
}
