/* InferenceX checkouts: runners.yaml, the benchmark workflow, runner
 * launchers and launch scripts. A route is found by reading the launcher
 * itself: it is interpreted statically with the environment the checkout's
 * workflow gives it for the recipe, its `[[ -f ]]` tests are answered from
 * the checkout, and the benchmarks/...sh path it runs is the route. Nothing
 * is executed. */
#include "recipe/recipe_internal.h"

#include <ctype.h>
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

/* ---------------------------------------------------------------- runners.yaml */
static void add_label(struct recipe_set *set, const struct ynode *key, const struct ynode *list,
                      const char *file) {
  const char *label = key->scalar;
  set->labels = xreallocarray(set->labels, set->n_labels + 1, sizeof *set->labels);
  struct ix_label *lb = &set->labels[set->n_labels++];
  *lb = (struct ix_label){.name = recipe_set_str(set, label), .line = key->line};
  if (list->kind != YN_SEQ) {
    recipe_set_diag(set, file, list->line, list->col, NULL, label,
             "%s: expected a list of runner names", label);
    return;
  }
  for (size_t k = 0; k < list->n_kids; k++) {
    const struct ynode *r = list->kids[k];
    if (r->kind != YN_SCALAR) {
      recipe_set_diag(set, file, r->line, r->col, NULL, label, "%s: runner names must be strings", label);
      continue;
    }
    size_t n = lb->n_runners++;
    lb->runners = xreallocarray(lb->runners, n + 1, sizeof *lb->runners);
    lb->runner_lines = xreallocarray(lb->runner_lines, n + 1, sizeof *lb->runner_lines);
    lb->runners[n] = recipe_set_str(set, r->scalar);
    lb->runner_lines[n] = r->line;
  }
}

/* runners.yaml: `labels:` + `hardware:`, or the legacy flat label -> list. */
static void load_runners(struct recipe_set *set, const char *path) {
  size_t len;
  struct st_err err;
  char *data = file_read_regular(path, FILE_INPUT_MAX_BYTES, &len, &err);
  if (!data) {
    recipe_set_diag(set, path, 0, 0, NULL, NULL, "%s", err.msg);
    return;
  }
  struct ynode *root = ytree_parse(data, len, path, &err);
  free(data);
  if (!root) {
    recipe_set_diag(set, path, 0, 0, NULL, NULL, "%s", err.msg);
    return;
  }
  set->have_runners = true;
  set->runners_file = (char *)recipe_set_str(set, path);
  const struct ynode *labels = ytree_map_get(root, "labels");
  const struct ynode *hw = ytree_map_get(root, "hardware");
  const struct ynode *flat = labels ? labels : root;
  set->runners_flat = !labels;
  if (flat->kind == YN_MAP) {
    for (size_t i = 0; i + 1 < flat->n_kids; i += 2) {
      const struct ynode *k = flat->kids[i];
      if (k->kind != YN_SCALAR || (!labels && (strcmp(k->scalar, "hardware") == 0)))
        continue;
      add_label(set, k, flat->kids[i + 1], path);
    }
  }
  if (hw && hw->kind == YN_MAP) {
    for (size_t i = 0; i + 1 < hw->n_kids; i += 2) {
      const struct ynode *spec = hw->kids[i + 1];
      static const char *const int_keys[] = {"available-cpu-dram-mib", "gpus-per-node"};
      for (size_t k = 0; k < ST_ARRAY_LEN(int_keys); k++) {
        const struct ynode *v = ytree_map_get(spec, int_keys[k]);
        long x;
        if (v && ytree_scalar_long(v, &x) < 0) /* YAML 1.1: 3_091_589 is an int */
          recipe_set_diag(set, path, v->line, v->col, NULL, int_keys[k],
                   "hardware.%s.%s: expected an integer, got '%s'",
                   hw->kids[i]->kind == YN_SCALAR ? hw->kids[i]->scalar : "?", int_keys[k],
                   v->kind == YN_SCALAR ? v->scalar : "non-scalar");
      }
    }
  }
  ytree_free(root);
}

int ix_label_index(const struct recipe_set *set, const char *label, size_t *runner) {
  *runner = SIZE_MAX;
  for (size_t i = 0; i < set->n_labels; i++)
    if (strcmp(set->labels[i].name, label) == 0)
      return (int)i;
  /* the flat runners.yaml let an entry name one runner ("a valid runner (key
   * or value) from runners.yaml", CONFIGS.md of the time) */
  for (size_t i = 0; set->runners_flat && i < set->n_labels; i++)
    for (size_t k = 0; k < set->labels[i].n_runners; k++)
      if (strcmp(set->labels[i].runners[k], label) == 0) {
        *runner = k;
        return (int)i;
      }
  return -1;
}

static bool is_regular_file(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

bool recipe_path_is_directory(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* ---------------------------------------------------------------- workflow
 * The benchmark workflow's top-level env: block is evaluated per sweep point:
 * `${{ ... }}` expressions over the workflow's inputs (the matrix row: the
 * entry's, scenario item's and search-space row's values, and what the
 * sweep generator derives: exp-name, conc, scenario-type, ...). */
enum gv_kind { GV_NULL, GV_BOOL, GV_STR, GV_UNKNOWN };

/* A value: strings point into the expression or the inputs (no copies). */
struct gv {
  enum gv_kind kind;
  bool b;
  const char *s;
  size_t len;
};

/* One workflow input: inputs.<k> reads v. */
struct gin {
  const char *k;
  size_t klen;
  const char *v;
  bool per_point;  /* differs between the points of one recipe */
};

struct gexpr {
  const char *p;
  const struct gin *inputs; /* the last one of a key wins */
  size_t n_inputs;
  bool read_per_point;      /* the expression read a per_point input */
};

static const struct gv gv_unknown = {.kind = GV_UNKNOWN};

/* 1 truthy, 0 falsy, -1 unknown (GitHub: null, false, 0, '' are falsy). */
static int gv_truth(const struct gv *v) {
  switch (v->kind) {
  case GV_NULL:
    return 0;
  case GV_BOOL:
    return v->b;
  case GV_STR:
    return v->len > 0 && !(v->len == 1 && v->s[0] == '0');
  case GV_UNKNOWN:
    break;
  }
  return -1;
}

static void gv_text(const struct gv *v, const char **s, size_t *len) {
  if (v->kind == GV_STR) {
    *s = v->s;
    *len = v->len;
  } else if (v->kind == GV_BOOL) {
    *s = v->b ? "true" : "false";
    *len = strlen(*s);
  } else {
    *s = "";
    *len = 0;
  }
}

static void g_ws(struct gexpr *g) {
  while (*g->p == ' ' || *g->p == '\t' || *g->p == '\n')
    g->p++;
}

static struct gv g_or(struct gexpr *g);

/* Search-space keys, and what the sweep generator derives per point. */
static bool per_point_input(const char *k) {
  static const char *const keys[] = {
      "conc-list", "conc-start", "conc-end", "spec-decoding", "tp", "ep", "dp-attn",
      "kv-offloading", "kv-offload-backend", "router", "kv-p2p-transfer", "dcp-size", "pp",
      "pcp-size", "offloading", "conc", "exp-name"};
  for (size_t i = 0; i < ST_ARRAY_LEN(keys); i++)
    if (strcmp(k, keys[i]) == 0)
      return true;
  return false;
}

static const char *input_value(struct gexpr *g, const char *name, size_t len) {
  for (size_t i = g->n_inputs; i-- > 0;)
    if (g->inputs[i].klen == len && memcmp(g->inputs[i].k, name, len) == 0) {
      g->read_per_point = g->read_per_point || g->inputs[i].per_point;
      return g->inputs[i].v;
    }
  char key[64];
  if (len < sizeof key) { /* absent here; a row of the recipe may still give it */
    memcpy(key, name, len);
    key[len] = '\0';
    g->read_per_point = g->read_per_point || per_point_input(key);
  } else {
    g->read_per_point = true;
  }
  return NULL;
}

static struct gv g_primary(struct gexpr *g) {
  g_ws(g);
  if (*g->p == '(') {
    g->p++;
    struct gv v = g_or(g);
    g_ws(g);
    if (*g->p == ')')
      g->p++;
    return v;
  }
  if (*g->p == '!') {
    g->p++;
    struct gv v = g_primary(g);
    int t = gv_truth(&v);
    return t < 0 ? gv_unknown : (struct gv){.kind = GV_BOOL, .b = !t};
  }
  if (*g->p == '\'') {
    const char *start = ++g->p;
    while (*g->p && *g->p != '\'')
      g->p++;
    struct gv v = {.kind = GV_STR, .s = start, .len = (size_t)(g->p - start)};
    if (*g->p == '\'')
      g->p++;
    if (*g->p == '\'') /* '' inside a literal: not read here */
      return gv_unknown;
    return v;
  }
  const char *start = g->p;
  while (*g->p && (isalnum((unsigned char)*g->p) || strchr("_-.*", *g->p)))
    g->p++;
  size_t len = (size_t)(g->p - start);
  g_ws(g);
  if (len == 0) {
    if (*g->p)
      g->p++; /* an operator this reader does not know */
    return gv_unknown;
  }
  if (*g->p == '(') { /* contains(), format(), fromJSON(), ...: not evaluated */
    int depth = 0;
    for (; *g->p; g->p++) {
      if (*g->p == '(')
        depth++;
      else if (*g->p == ')' && --depth == 0) {
        g->p++;
        break;
      }
    }
    return gv_unknown;
  }
  if (len == 4 && memcmp(start, "true", 4) == 0)
    return (struct gv){.kind = GV_BOOL, .b = true};
  if (len == 5 && memcmp(start, "false", 5) == 0)
    return (struct gv){.kind = GV_BOOL, .b = false};
  if (len == 4 && memcmp(start, "null", 4) == 0)
    return (struct gv){.kind = GV_NULL};
  if (isdigit((unsigned char)start[0]) || start[0] == '-')
    return (struct gv){.kind = GV_STR, .s = start, .len = len};
  if (len > 7 && memcmp(start, "inputs.", 7) == 0) {
    const char *v = input_value(g, start + 7, len - 7);
    if (!v)
      return (struct gv){.kind = GV_NULL};
    if (strcmp(v, "true") == 0 || strcmp(v, "false") == 0)
      return (struct gv){.kind = GV_BOOL, .b = v[0] == 't'};
    return (struct gv){.kind = GV_STR, .s = v, .len = strlen(v)};
  }
  return gv_unknown; /* secrets, github, env, vars, matrix... */
}

static struct gv g_cmp(struct gexpr *g) {
  struct gv a = g_primary(g);
  g_ws(g);
  bool eq = strncmp(g->p, "==", 2) == 0, ne = strncmp(g->p, "!=", 2) == 0;
  if (!eq && !ne)
    return a;
  g->p += 2;
  struct gv b = g_primary(g);
  if (a.kind == GV_UNKNOWN || b.kind == GV_UNKNOWN)
    return gv_unknown;
  /* GitHub compares strings case-insensitively; null equals '' */
  const char *as, *bs;
  size_t al, bl;
  gv_text(&a, &as, &al);
  gv_text(&b, &bs, &bl);
  bool same = al == bl && strncasecmp(as, bs, al) == 0;
  return (struct gv){.kind = GV_BOOL, .b = eq ? same : !same};
}

/* One level of a && b (op "&&") or a || b (op "||") over operand: a when a
 * decides (falsy for &&, truthy for ||), else b; unknown when a is. */
static struct gv g_logical(struct gexpr *g, const char *op, struct gv (*operand)(struct gexpr *)) {
  bool is_and = op[0] == '&';
  struct gv v = operand(g);
  for (;;) {
    g_ws(g);
    if (strncmp(g->p, op, 2) != 0)
      return v;
    g->p += 2;
    struct gv r = operand(g);
    int t = gv_truth(&v);
    if (t < 0)
      v = gv_unknown;
    else if ((t > 0) == is_and)
      v = r;
  }
}

static struct gv g_and(struct gexpr *g) { return g_logical(g, "&&", g_cmp); }
static struct gv g_or(struct gexpr *g) { return g_logical(g, "||", g_and); }

/* A workflow value with its ${{ }} parts evaluated; NULL when one of them
 * reads something not known statically (a secret, the run's context). */
static char *workflow_value_alloc(const char *text, const struct gin *inputs, size_t n_inputs,
                                  bool *per_point) {
  struct sbuf sb = {0};
  const char *p = text;
  for (;;) {
    const char *open = strstr(p, "${{");
    if (!open) {
      sbuf_puts(&sb, p);
      break;
    }
    sbuf_append(&sb, p, (size_t)(open - p));
    const char *close = strstr(open, "}}");
    if (!close) {
      sbuf_free(&sb);
      return NULL;
    }
    /* the expression ends at "}}": evaluate a copy-free view by bounding the
     * parser with a NUL written into a small local copy when needed */
    size_t blen = (size_t)(close - open - 3);
    char stackbuf[256];
    char *body = blen < sizeof stackbuf ? stackbuf : xmalloc(blen + 1);
    memcpy(body, open + 3, blen);
    body[blen] = '\0';
    struct gexpr g = {.p = body, .inputs = inputs, .n_inputs = n_inputs};
    struct gv v = g_or(&g);
    g_ws(&g);
    if (per_point)
      *per_point = *per_point || g.read_per_point;
    bool ok = v.kind != GV_UNKNOWN && *g.p == '\0';
    if (ok) {
      const char *vs;
      size_t vl;
      gv_text(&v, &vs, &vl);
      sbuf_append(&sb, vs, vl); /* a literal points into body: copy before it goes */
    }
    if (body != stackbuf)
      free(body);
    if (!ok) {
      sbuf_free(&sb);
      return NULL;
    }
    p = close + 2;
  }
  return sb.data ? sbuf_take(&sb) : xstrdup("");
}

/* What the workflow file sets that servetop's defaults also set: without a
 * line in env: the launcher sees it unset (as it did in that state). */
static const char *const workflow_owned[] = {
    "MODEL", "MODEL_PREFIX", "PRECISION", "FRAMEWORK", "IMAGE", "TP", "EP_SIZE", "PP_SIZE",
    "DCP_SIZE", "PCP_SIZE", "DP_ATTENTION", "CONC", "SPEC_DECODING", "DISAGG", "RUN_EVAL",
    "EVAL_ONLY", "RANDOM_RANGE_RATIO", "SCENARIO_TYPE", "SCENARIO_SUBDIR", "IS_AGENTIC",
    "KV_OFFLOADING", "ISL", "OSL", "MAX_MODEL_LEN", "EXP_NAME"};

/* `env:` and the declared input defaults of the workflow file. */
static void load_workflow(struct recipe_set *set, const char *root) {
  struct ix_workflow *wf = xcalloc(1, sizeof *wf);
  set->workflow = wf;
  char *fixed = path_join_alloc(root, "benchmarks/single_node/fixed_seq_len");
  wf->fixed_subdir = recipe_path_is_directory(fixed) ? "fixed_seq_len/" : ""; /* before #1571: '' */
  free(fixed);
  char *path = path_join_alloc(root, ".github/workflows/benchmark-tmpl.yml");
  size_t len;
  struct st_err err;
  char *data = path_exists(path) ? file_read_regular(path, FILE_INPUT_MAX_BYTES, &len, &err) : NULL;
  struct ynode *doc = data ? ytree_parse_ex(data, len, path, true, &err) : NULL;
  free(data);
  if (!doc) {
    if (path_exists(path))
      recipe_set_diag(set, path, 0, 0, NULL, NULL, "%s (SCENARIO_SUBDIR inferred from the folders)",
               err.msg);
    free(path);
    return;
  }
  wf->file = path;
  const struct ynode *env = ytree_map_get(doc, "env");
  for (size_t i = 0; env && env->kind == YN_MAP && i + 1 < env->n_kids; i += 2) {
    if (env->kids[i]->kind != YN_SCALAR || env->kids[i + 1]->kind != YN_SCALAR)
      continue;
    recipe_strv_push(&wf->names, &wf->n, env->kids[i]->scalar);
    size_t n = wf->n - 1;
    recipe_strv_push(&wf->values, &n, env->kids[i + 1]->scalar);
  }
  ytree_free(doc);
  for (size_t i = 0; i < ST_ARRAY_LEN(workflow_owned); i++) {
    bool defined = false;
    for (size_t k = 0; k < wf->n && !defined; k++)
      defined = strcmp(wf->names[k], workflow_owned[i]) == 0;
    if (!defined)
      wf->undefined[wf->n_undefined++] = workflow_owned[i];
  }
}

/* The workflow's inputs for point pt (servetop's defaults in env): the row
 * as written, then what the sweep generator derives (the last of a key
 * wins). Values read from env point into it: use them before env changes.
 * tell_per_point: mark the inputs that differ between a recipe's points. */
static struct gin *workflow_inputs(const struct recipe_priv *p, const struct recipe_point *pt,
                                   const struct sh_env *env, bool tell_per_point, size_t *n_out) {
  const struct recipe *r = &p->pub;
  const char *const *raw = NULL;
  for (size_t i = 0; p->point_inputs && i < r->n_points && !raw; i++)
    if (r->points[i].line == pt->line) /* pt may be a copy with another conc */
      raw = p->point_inputs[i];
  size_t n_raw = 0;
  while (raw && raw[n_raw])
    n_raw++;
  static const char *const from_env[][2] = {
      {"exp-name", "EXP_NAME"}, {"max-model-len", "MAX_MODEL_LEN"}, {"isl", "ISL"},
      {"osl", "OSL"}, {"spec-decoding", "SPEC_DECODING"}, {"scenario-type", "SCENARIO_TYPE"},
      {"kv-offloading", "KV_OFFLOADING"}, {"dp-attn", "DP_ATTENTION"}, {"model", "MODEL"},
      {"model-prefix", "MODEL_PREFIX"}, {"precision", "PRECISION"}, {"framework", "FRAMEWORK"},
      {"image", "IMAGE"}, {"tp", "TP"}, {"ep", "EP_SIZE"}, {"conc", "CONC"}};
  static const char *const fixed[][2] = {{"pp", "1"},         {"dcp-size", "1"},
                                         {"pcp-size", "1"},   {"disagg", "false"},
                                         {"run-eval", "false"}, {"eval-only", "false"}};
  size_t cap = n_raw / 2 + ST_ARRAY_LEN(from_env) + ST_ARRAY_LEN(fixed) + 1;
  struct gin *in = xcalloc(cap, sizeof *in);
  size_t n = 0;
#define GIN(key, val)                                                                    \
  (in[n] = (struct gin){(key), strlen(key), (val), tell_per_point && per_point_input(key)}, n++)
  for (size_t i = 0; i + 1 < n_raw; i += 2)
    GIN(raw[i], raw[i + 1]);
  for (size_t i = 0; i < ST_ARRAY_LEN(from_env); i++) {
    const char *v = sh_env_get(env, from_env[i][1]);
    if (v)
      GIN(from_env[i][0], v);
  }
  for (size_t i = 0; i < ST_ARRAY_LEN(fixed); i++)
    GIN(fixed[i][0], fixed[i][1]);
  GIN("runner", r->runner);
#undef GIN
  *n_out = n;
  return in;
}

void ix_workflow_env(const struct recipe_priv *p, const struct recipe_point *pt,
                     struct sh_env *env) {
  const struct ix_workflow *wf = p->workflow;
  const struct recipe *r = &p->pub;
  if (!wf)
    return;
  if (!wf->file) {
    if (r->scenario == RECIPE_SCENARIO_FIXED_SEQ_LEN)
      sh_env_set(env, "SCENARIO_SUBDIR", wf->fixed_subdir);
    return;
  }
  /* every value first (the inputs point into env), then into env */
  size_t n;
  struct gin *in = workflow_inputs(p, pt, env, false, &n);
  char *stack[64];
  char **fresh = wf->n <= ST_ARRAY_LEN(stack) ? stack : xcalloc(wf->n, sizeof *fresh);
  for (size_t k = 0; k < wf->n; k++) {
    /* what reads only the recipe's constants was evaluated at load */
    const struct wf_value *c = p->wf_cache ? &p->wf_cache[k] : NULL;
    fresh[k] = c && !c->per_point ? NULL : workflow_value_alloc(wf->values[k], in, n, NULL);
  }
  free(in);
  for (size_t i = 0; i < wf->n_undefined; i++)
    sh_env_unset(env, wf->undefined[i]);
  for (size_t k = 0; k < wf->n; k++) {
    const struct wf_value *c = p->wf_cache ? &p->wf_cache[k] : NULL;
    const char *v = c && !c->per_point ? c->value : fresh[k];
    if (v)
      sh_env_set(env, wf->names[k], v);
    else
      sh_env_unset(env, wf->names[k]);
    free(fresh[k]);
  }
  if (fresh != stack)
    free(fresh);
  for (size_t i = 0; i < env->n_vars; i++)
    env->vars[i].exported = false;
}

/* The workflow values that are the same at every point of the recipe. */
static void workflow_cache(struct recipe_set *set, struct recipe_priv *p) {
  const struct ix_workflow *wf = p->workflow;
  if (!wf || !wf->file || p->pub.n_points == 0)
    return;
  struct recipe_priv plain = *p; /* servetop's defaults alone */
  plain.workflow = NULL;
  struct sh_env env = {0};
  recipe_point_env(&plain.pub, &plain.pub.points[0], &env);
  size_t n;
  struct gin *in = workflow_inputs(p, &p->pub.points[0], &env, true, &n);
  struct wf_value *cache = recipe_set_block(set, (wf->n ? wf->n : 1) * sizeof *cache);
  for (size_t k = 0; k < wf->n; k++) {
    bool per_point = false;
    char *v = strstr(wf->values[k], "${{") ? workflow_value_alloc(wf->values[k], in, n, &per_point)
                                            : xstrdup(wf->values[k]);
    cache[k].per_point = per_point;
    cache[k].value = v ? recipe_set_str(set, v) : NULL;
    free(v);
  }
  free(in);
  sh_env_fini(&env);
  p->wf_cache = cache;
}

/* ---------------------------------------------------------------- scripts */
static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every benchmarks/...sh of the checkout (relative), for route analysis. */
static void list_bench_files(struct recipe_set *set, const char *root, const char *rel, int depth) {
  char *dir = path_join_alloc(root, rel);
  DIR *d = depth < 6 ? opendir(dir) : NULL;
  free(dir);
  if (!d)
    return;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.')
      continue;
    char *sub = xasprintf("%s/%s", rel, e->d_name);
    char *full = path_join_alloc(root, sub);
    if (str_ends_with(e->d_name, ".sh") && is_regular_file(full))
      recipe_strv_push(&set->bench_files, &set->n_bench_files, sub);
    else if (recipe_path_is_directory(full) && strcmp(e->d_name, "multi_node") != 0)
      list_bench_files(set, root, sub, depth + 1);
    free(full);
    free(sub);
  }
  closedir(d);
}

/* Benchmark settings as the script calls run_benchmark_serving. */
static void bench_from_script(struct recipe_set *set, struct recipe_priv *p) {
  struct recipe *r = &p->pub;
  if (!p->script || r->n_points == 0)
    return;
  struct sh_env env = {0};
  recipe_point_env(r, &r->points[0], &env);
  struct sh_result own;
  const struct sh_result *res = sh_run_memo(p->memo, p->script, &env, &own);
  sh_env_fini(&env);
  struct recipe_bench *b = &r->bench;
  if (res->bench.n_words > 0) {
    b->line = res->bench.line;
    b->extra_argv = xcalloc(res->bench.n_words, sizeof *b->extra_argv);
    for (size_t i = 1; i < res->bench.n_words; i++) {
      const char *w = res->bench.words[i];
      const char *next = i + 1 < res->bench.n_words ? res->bench.words[i + 1] : NULL;
      b->extra_argv[b->n_extra_argv++] = (char *)recipe_set_str(set, w);
      if (strcmp(w, "--use-chat-template") == 0 || strcmp(w, "--dsv4") == 0)
        b->use_chat_template = true;
      else if (strcmp(w, "--backend") == 0 && next)
        b->backend = recipe_set_str(set, next);
      else if (strcmp(w, "--random-range-ratio") == 0 && next)
        parse_double(next, &b->random_range_ratio);
      else if (strcmp(w, "--num-warmups") == 0 && next)
        parse_int(next, &b->num_warmups);
      else if (strcmp(w, "--num-prompts") == 0 && next) {
        long n;
        int conc = r->points[0].conc;
        if (parse_long(next, &n) == 0 && conc > 0 && n % conc == 0)
          b->num_prompts_factor = (int)(n / conc);
      }
    }
  }
  sh_result_fini(&own);
}

/* ---------------------------------------------------------------- fitting scripts */
bool recipe_path_has_dir(const char *path, const char *dir) {
  size_t n = strlen(dir);
  for (const char *p = strstr(path, dir); p; p = strstr(p + 1, dir))
    if ((p == path || p[-1] == '/') && p[n] == '/')
      return true;
  return false;
}

static bool is_framework_token(const struct recipe_set *set, const char *tok, size_t len) {
  for (size_t i = 0; i < set->n_recipes; i++) {
    const char *fw = set->recipes[i]->pub.framework;
    if (fw && strlen(fw) == len && memcmp(fw, tok, len) == 0)
      return true;
  }
  return false;
}

/* Does the checkout's script at path serve recipe r as its name says:
 * <model-prefix>_<precision>_<gpu>[_<framework>][_mtp][_...].sh in the
 * scenario's folder (agentic/ or not)? A framework token must be r's. */
static bool script_fits(const struct recipe_set *set, const struct recipe *r, const char *prefix,
                        const char *path, enum recipe_scenario scenario, enum recipe_spec spec,
                        bool deprecated) {
  const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
  size_t n = strlen(prefix);
  if (strncmp(base, prefix, n) != 0 || (base[n] != '_' && base[n] != '.'))
    return false;
  if (recipe_path_has_dir(path, "deprecated") != deprecated || recipe_path_has_dir(path, "speedbench") ||
      recipe_path_has_dir(path, "multi_node"))
    return false;
  if ((scenario == RECIPE_SCENARIO_AGENTIC) != recipe_path_has_dir(path, "agentic"))
    return false;
  bool mtp = false, other_fw = false;
  const char *p = base + n;
  while (*p == '_') {
    p++;
    size_t len = strcspn(p, "_.");
    if (len == 3 && memcmp(p, "mtp", 3) == 0)
      mtp = true;
    else if (is_framework_token(set, p, len) &&
             !(strlen(r->framework) == len && memcmp(r->framework, p, len) == 0))
      other_fw = true;
    p += len;
  }
  return !other_fw && mtp == (spec != RECIPE_SPEC_NONE);
}

const char *ix_fitting_script(const struct recipe_set *set, const struct recipe *r,
                              enum recipe_scenario scenario, enum recipe_spec spec,
                              bool deprecated) {
  /* <model-prefix>_<precision>_<gpu>, the start of the name */
  char *prefix = xasprintf("%s_%s_%s", r->model_prefix, r->precision, r->gpu);
  const char *found = NULL;
  for (int pass = 0; pass < (deprecated ? 2 : 1) && !found; pass++)
    for (size_t i = 0; i < set->n_bench_files && !found; i++)
      if (script_fits(set, r, prefix, set->bench_files[i], scenario, spec, pass == 1))
        found = set->bench_files[i];
  free(prefix);
  return found;
}

/* ---------------------------------------------------------------- routes */
/* Runs launcher ls for the recipe's first point as runner `runner` would,
 * with spec-decoding `spec`. */
static const struct sh_result *run_launcher(const struct recipe_priv *p,
                                            const struct sh_script *ls, const char *root,
                                            const char *runner, enum recipe_spec spec,
                                            struct sh_result *own) {
  struct recipe_priv as = *p; /* the same entry with the other spec-decoding */
  as.pub.spec = spec;
  struct sh_env env = {.root_dir = root, .unset_is_empty = true};
  recipe_point_env(&as.pub, &as.pub.points[0], &env);
  sh_env_set(&env, "RUNNER_NAME", runner);
  sh_env_set(&env, "RUNNER_TYPE", p->pub.runner);
  sh_env_set(&env, "IS_MULTINODE", "false");
  sh_env_set(&env, "GITHUB_WORKSPACE", ".");
  const struct sh_result *res = sh_run_memo(p->memo, ls, &env, own);
  sh_env_fini(&env);
  return res;
}

static bool route_exists(const char *root, const char *script) {
  if (!script || sh_is_unresolved(script))
    return false;
  char *sp = path_join_alloc(root, script);
  bool ok = is_regular_file(sp);
  free(sp);
  return ok;
}

static void resolve_recipe_routes(struct recipe_set *set, struct recipe_priv *p, const char *root,
                                  int li, size_t only) {
  struct recipe *r = &p->pub;
  struct recipe_route *routes = NULL;
  size_t n_routes = 0;
  struct route_extra *x = NULL;
  enum recipe_spec other = r->spec == RECIPE_SPEC_NONE ? RECIPE_SPEC_MTP : RECIPE_SPEC_NONE;
  const struct ix_label *lb = &set->labels[li];
  for (size_t k = 0; k < lb->n_runners; k++) {
    if (only != SIZE_MAX && k != only)
      continue;
    const char *runner = lb->runners[k];
    size_t plen = strcspn(runner, "_");
    bool seen = false;
    for (size_t q = 0; q < n_routes && !seen; q++)
      seen = strlen(routes[q].family) == plen && memcmp(routes[q].family, runner, plen) == 0;
    if (seen)
      continue;
    routes = xreallocarray(routes, n_routes + 1, sizeof *routes);
    x = xreallocarray(x, n_routes + 1, sizeof *x);
    struct recipe_route *rt = &routes[n_routes];
    struct route_extra *rx = &x[n_routes];
    n_routes++;
    memset(rt, 0, sizeof *rt);
    memset(rx, 0, sizeof *rx);
    char *family = xstrndup(runner, plen);
    rt->family = recipe_set_str(set, family);
    rt->runner = recipe_set_str(set, runner);
    char *rel = xasprintf("runners/launch_%s.sh", family);
    char *full = path_join_alloc(root, rel);
    const struct sh_script *ls = is_regular_file(full) ? recipe_set_script(set, full, full) : NULL;
    if (is_regular_file(full)) {
      rt->launcher = recipe_set_str(set, rel);
      rx->launcher_file = recipe_set_str(set, full);
    }
    if (ls) {
      struct sh_result own;
      const struct sh_result *res = run_launcher(p, ls, root, runner, r->spec, &own);
      if (res->bench_script) {
        rt->script = recipe_set_str(set, res->bench_script);
        rt->launcher_line = res->bench_script_built_line;
        rt->run_line = res->bench_script_line;
        rt->exists = route_exists(root, res->bench_script);
        rx->env_listed = res->bench_env_listed;
        if (res->n_bench_env) {
          rx->env = recipe_set_block(set, res->n_bench_env * sizeof *rx->env);
          for (size_t q = 0; q < res->n_bench_env; q++)
            rx->env[q] = recipe_set_str(set, res->bench_env[q]);
          rx->n_env = res->n_bench_env;
        }
      }
      if (res->n_probes) {
        const char **tried = recipe_set_block(set, res->n_probes * sizeof *tried);
        int *lines = recipe_set_block(set, res->n_probes * sizeof *lines);
        for (size_t q = 0; q < res->n_probes; q++) {
          tried[q] = recipe_set_str(set, res->probes[q]);
          lines[q] = res->probe_lines[q];
        }
        rt->tried = tried;
        rt->tried_lines = lines;
        rt->n_tried = res->n_probes;
      }
      sh_result_fini(&own);
      /* the same entry with the other spec-decoding: does the launcher tell
       * them apart (MTP_NOT_ROUTED), would the other one exist (a config
       * value that is wrong)? */
      if (r->spec == RECIPE_SPEC_MTP || !rt->exists) {
        res = run_launcher(p, ls, root, runner, other, &own);
        if (res->bench_script) {
          rx->alt = recipe_set_str(set, res->bench_script);
          rx->alt_exists = route_exists(root, res->bench_script);
        }
        sh_result_fini(&own);
      }
    }
    free(rel);
    free(full);
    free(family);
  }
  r->routes = routes;
  r->n_routes = n_routes;
  p->route_x = x;
  p->route_scripts = xcalloc(n_routes ? n_routes : 1, sizeof *p->route_scripts);
  for (size_t k = 0; k < n_routes; k++) {
    if (!routes[k].exists)
      continue;
    char *full = path_join_alloc(root, routes[k].script);
    p->route_scripts[k] = recipe_set_script(set, full, full);
    if (!r->script_path) {
      r->script_path = routes[k].script;
      r->script_file = recipe_set_str(set, full);
      p->script = p->route_scripts[k];
    }
    free(full);
  }
}

void ix_resolve_routes(struct recipe_set *set, const char *root) {
  for (size_t i = 0; i < set->n_recipes; i++) {
    struct recipe_priv *p = set->recipes[i];
    struct recipe *r = &p->pub;
    if (r->origin != RECIPE_ORIGIN_INFERENCEX || p->checkout || r->n_points == 0)
      continue;
    p->checkout = recipe_set_str(set, root);
    p->workflow = set->workflow;
    workflow_cache(set, p);
    size_t only;
    int li = ix_label_index(set, r->runner, &only);
    if (li >= 0) /* else RUNNER_LABEL_UNKNOWN (lint) */
      resolve_recipe_routes(set, p, root, li, only);
    if (r->scenario == RECIPE_SCENARIO_AGENTIC && r->spec == RECIPE_SPEC_MTP && r->gpu) {
      const char *fixed =
          ix_fitting_script(set, r, RECIPE_SCENARIO_FIXED_SEQ_LEN, RECIPE_SPEC_MTP, true);
      if (fixed) {
        char *full = path_join_alloc(root, fixed);
        p->fixed_mtp_file = recipe_set_str(set, full);
        p->fixed_mtp_script = recipe_set_script(set, full, full);
        free(full);
      }
    }
    bench_from_script(set, p);
  }
}

int recipe_set_add_inferencex(struct recipe_set *set, const char *dir, struct st_err *err) {
  char *cfg = path_join_alloc(dir, "configs");
  struct st_err e1;
  if (ix_load_master_files(set, cfg, &e1) < 0) {
    free(cfg);
    cfg = path_join_alloc(dir, ".github/configs"); /* before #1992 */
    struct st_err e2;
    if (ix_load_master_files(set, cfg, &e2) < 0) {
      free(cfg);
      return err_setf(err, "%s: not an InferenceX checkout (no configs/*-master.yaml or "
                           ".github/configs/*-master.yaml)",
                      dir);
    }
  }
  char *runners = path_join_alloc(cfg, "runners.yaml");
  if (path_exists(runners))
    load_runners(set, runners);
  else
    recipe_set_diag(set, runners, 0, 0, NULL, NULL, "missing: runner labels cannot be checked or routed");
  free(runners);
  free(cfg);
  load_workflow(set, dir);
  list_bench_files(set, dir, "benchmarks", 0);
  if (set->n_bench_files > 1)
    qsort(set->bench_files, set->n_bench_files, sizeof *set->bench_files, cmp_str);
  ix_resolve_routes(set, dir);
  return 0;
}
