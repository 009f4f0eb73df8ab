/* Loading entries (InferenceX master-config schema, and servetop's own
 * recipe files which add server: and benchmark: blocks), sweep expansion. */
#include "recipe/recipe_internal.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A loading context: where we are, for messages. */
struct ctx {
  struct recipe_set *set;
  const char *file;
  const char *entry;      /* the entry being loaded (NULL: file level) */
  const struct ix_schema *schema; /* NULL: servetop's own format */
  bool bad;               /* an error-level problem in this entry */
};

/* servetop recipe files: today's schema, multinode optional. */
static const struct ix_schema native_schema = {.multinode_required = false,
                                               .seq_len_configs_ok = true,
                                               .agentic_legacy_ok = false,
                                               .agentic_cluster_label = true};

static void diag(struct ctx *c, const struct ynode *at, const char *field, const char *fmt, ...)
    ST_PRINTF(4, 5);
static void diag(struct ctx *c, const struct ynode *at, const char *field, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *msg = xvasprintf(fmt, ap);
  va_end(ap);
  recipe_set_diag(c->set, c->file, at ? at->line : 0, at ? at->col : 0, c->entry, field, "%s: %s", field,
           msg);
  free(msg);
  c->bad = true;
}

static const char *kind_name(const struct ynode *n) {
  return n->kind == YN_MAP ? "a mapping" : n->kind == YN_SEQ ? "a list" : "a scalar";
}

/* A required list under parent: a diag when node is missing (missing says so)
 * or is not a list (expected: what it must be). Returns whether it is a list. */
static bool required_list(struct ctx *c, const struct ynode *parent, const struct ynode *node,
                          const char *field, const char *missing, const char *expected) {
  if (!node)
    diag(c, parent, field, "%s", missing);
  else if (node->kind != YN_SEQ)
    diag(c, node, field, "expected %s, got %s", expected, kind_name(node));
  else
    return true;
  return false;
}

/* Unknown keys (pydantic extra='forbid'), and duplicate keys. */
static void check_keys(struct ctx *c, const struct ynode *map, const char *path,
                       const char *const *allowed) {
  for (size_t i = 0; i + 1 < map->n_kids; i += 2) {
    const struct ynode *k = map->kids[i];
    if (k->kind != YN_SCALAR) {
      diag(c, k, path, "keys must be scalars");
      continue;
    }
    bool ok = false;
    for (size_t a = 0; allowed[a] && !ok; a++)
      ok = strcmp(allowed[a], k->scalar) == 0;
    char *field = NULL; /* "path.key", made for a diagnostic */
    if (!ok) {
      struct sbuf list = {0};
      for (size_t a = 0; allowed[a]; a++)
        sbuf_printf(&list, "%s%s", a ? ", " : "", allowed[a]);
      field = xasprintf("%s.%s", path, k->scalar);
      diag(c, k, field, "unknown key '%s' (allowed: %s)", k->scalar, list.data);
      sbuf_free(&list);
    }
    for (size_t j = 0; j < i; j += 2)
      if (map->kids[j]->kind == YN_SCALAR && strcmp(map->kids[j]->scalar, k->scalar) == 0) {
        if (!field)
          field = xasprintf("%s.%s", path, k->scalar);
        diag(c, k, field, "duplicate key (first at line %d)", map->kids[j]->line);
      }
    free(field);
  }
}

static const char *get_str(struct ctx *c, const struct ynode *map, const char *path,
                           const char *key, bool required) {
  const struct ynode *v = ytree_map_get(map, key);
  if (!v) {
    if (required) {
      char *field = xasprintf("%s.%s", path, key);
      diag(c, map, field, "missing required key");
      free(field);
    }
    return NULL;
  }
  if (v->kind != YN_SCALAR) {
    char *field = xasprintf("%s.%s", path, key);
    diag(c, v, field, "expected a string, got %s", kind_name(v));
    free(field);
    return NULL;
  }
  return recipe_set_str(c->set, v->scalar);
}

/* 1: present and valid, 0: absent, -1: invalid (diagnosed). */
static int get_int(struct ctx *c, const struct ynode *map, const char *path, const char *key,
                   long min, int *out) {
  const struct ynode *v = ytree_map_get(map, key);
  if (!v)
    return 0;
  long x;
  char *field = xasprintf("%s.%s", path, key);
  int rc = 1;
  if (v->kind != YN_SCALAR || ytree_scalar_long(v, &x) < 0) {
    diag(c, v, field, "expected an integer, got %s%s%s%s", v->kind == YN_SCALAR ? "'" : "",
         v->kind == YN_SCALAR ? v->scalar : kind_name(v), v->kind == YN_SCALAR ? "'" : "", "");
    rc = -1;
  } else if (x < min || x > 1000000000L) {
    diag(c, v, field, "must be >= %ld, got %ld", min, x);
    rc = -1;
  } else {
    *out = (int)x;
  }
  free(field);
  return rc;
}

/* An unquoted scalar that parse reads into out: 1 present and valid, 0
 * absent, -1 invalid (diagnosed "expected <what>, got ..."). */
static int get_plain(struct ctx *c, const struct ynode *map, const char *path, const char *key,
                     const char *what, bool (*parse)(const char *s, void *out), void *out) {
  const struct ynode *v = ytree_map_get(map, key);
  if (!v)
    return 0;
  if (v->kind != YN_SCALAR || v->quoted || !parse(v->scalar, out)) {
    char *field = xasprintf("%s.%s", path, key);
    diag(c, v, field, "expected %s, got %s", what,
         v->kind == YN_SCALAR ? v->scalar : kind_name(v));
    free(field);
    return -1;
  }
  return 1;
}

static bool read_bool(const char *s, void *out) { return parse_bool(s, out) == 0; }
static bool read_double(const char *s, void *out) { return parse_double(s, out) == 0; }

static int get_bool(struct ctx *c, const struct ynode *map, const char *path, const char *key,
                    bool *out) {
  return get_plain(c, map, path, key, "true or false", read_bool, out);
}

static int get_double(struct ctx *c, const struct ynode *map, const char *path, const char *key,
                      double *out) {
  return get_plain(c, map, path, key, "a number", read_double, out);
}

/* ---------------------------------------------------------------- search space */
static const char *const row_keys[] = {
    "conc-list", "conc-start", "conc-end", "spec-decoding", "tp", "ep", "dp-attn",
    "kv-offloading", "kv-offload-backend", "router", "kv-p2p-transfer", "dcp-size", "pp",
    "pcp-size", "prefill", "decode", NULL};
/* agentic rows before AgentX v1.0 (#1970): offloading: none|cpu */
static const char *const row_keys_legacy[] = {
    "conc-list", "conc-start", "conc-end", "spec-decoding", "tp", "ep", "dp-attn",
    "kv-offloading", "kv-offload-backend", "router", "kv-p2p-transfer", "dcp-size", "pp",
    "pcp-size", "prefill", "decode", "offloading", NULL};

struct row {
  int tp, ep, pp, dcp;
  bool dp_attn;
  enum recipe_spec spec;
  int *concs;
  size_t n_concs;
  const char *kv_offloading;
  int line;
  const char **inputs;    /* scalar key/value pairs as written (set-owned strings) */
  size_t n_inputs;
};

/* InferenceX's expansion: start, start*2, ... with the last step clamped to end. */
static void expand_range(int start, int end, int **out, size_t *n) {
  long conc = start;
  for (;;) {
    *out = xreallocarray(*out, *n + 1, sizeof **out);
    (*out)[(*n)++] = (int)conc;
    if (conc >= end)
      break;
    conc *= 2;
    if (conc > end)
      conc = end;
  }
}

static bool load_row(struct ctx *c, const struct ynode *row, const char *path, bool multinode,
                     struct row *out) {
  memset(out, 0, sizeof *out);
  out->tp = 1;
  out->ep = 1;
  out->line = row->line;
  if (row->kind != YN_MAP) {
    diag(c, row, path, "expected a mapping, got %s", kind_name(row));
    return false;
  }
  bool was_bad = c->bad;
  c->bad = false;
  check_keys(c, row, path, c->schema->agentic_legacy_ok ? row_keys_legacy : row_keys);
  for (size_t i = 0; i + 1 < row->n_kids; i += 2)
    if (row->kids[i]->kind == YN_SCALAR && row->kids[i + 1]->kind == YN_SCALAR) {
      out->inputs = xreallocarray(out->inputs, out->n_inputs + 2, sizeof *out->inputs);
      out->inputs[out->n_inputs++] = recipe_set_str(c->set, row->kids[i]->scalar);
      out->inputs[out->n_inputs++] = recipe_set_str(c->set, row->kids[i + 1]->scalar);
    }
  if (!multinode) {
    if (get_int(c, row, path, "tp", 1, &out->tp) == 0)
      diag(c, row, path, "missing required key 'tp' (single-node rows)");
    get_int(c, row, path, "ep", 1, &out->ep);
    get_int(c, row, path, "pp", 1, &out->pp);
    get_int(c, row, path, "dcp-size", 1, &out->dcp);
    get_bool(c, row, path, "dp-attn", &out->dp_attn);
    if (out->dcp > 0 && out->tp % out->dcp != 0)
      diag(c, ytree_map_get(row, "dcp-size"), path, "dcp-size %d does not divide tp %d", out->dcp,
           out->tp);
    for (size_t k = 0; k < 2; k++) {
      const char *wk = k ? "decode" : "prefill";
      if (ytree_map_get(row, wk)) {
        char *field = xasprintf("%s.%s", path, wk);
        diag(c, ytree_map_get(row, wk), field, "worker blocks are only valid with multinode: true");
        free(field);
      }
    }
  }
  const char *spec = get_str(c, row, path, "spec-decoding", false);
  if (spec && !recipe_spec_parse(spec, &out->spec)) {
    char *field = xasprintf("%s.spec-decoding", path);
    diag(c, ytree_map_get(row, "spec-decoding"), field,
         "must be one of mtp, draft_model, none; got '%s'", spec);
    free(field);
  }
  out->kv_offloading = get_str(c, row, path, "kv-offloading", false);
  if (!out->kv_offloading)
    out->kv_offloading = get_str(c, row, path, "offloading", false); /* before #1970 */
  const struct ynode *list = ytree_map_get(row, "conc-list");
  bool has_start = ytree_map_get(row, "conc-start") != NULL, has_end = ytree_map_get(row, "conc-end") != NULL;
  if (list && (has_start || has_end)) {
    diag(c, list, path, "conc-list cannot be combined with conc-start/conc-end");
  } else if (list) {
    char *field = xasprintf("%s.conc-list", path);
    if (list->kind != YN_SEQ || list->n_kids == 0) {
      diag(c, list, field, "expected a non-empty list of integers");
    } else {
      for (size_t i = 0; i < list->n_kids; i++) {
        long v;
        if (ytree_scalar_long(list->kids[i], &v) < 0 || v <= 0 || v > 1000000) {
          diag(c, list->kids[i], field, "expected a positive integer, got %s",
               list->kids[i]->kind == YN_SCALAR ? list->kids[i]->scalar : kind_name(list->kids[i]));
          continue;
        }
        out->concs = xreallocarray(out->concs, out->n_concs + 1, sizeof *out->concs);
        out->concs[out->n_concs++] = (int)v;
      }
    }
    free(field);
  } else if (has_start || has_end) {
    int start = 0, end = 0;
    int rs = get_int(c, row, path, "conc-start", 1, &start);
    int re = get_int(c, row, path, "conc-end", 1, &end);
    if (rs == 0 || re == 0)
      diag(c, row, path, "conc-start and conc-end go together");
    else if (rs > 0 && re > 0 && start > end)
      diag(c, ytree_map_get(row, "conc-start"), path, "conc-start %d > conc-end %d", start, end);
    else if (rs > 0 && re > 0)
      expand_range(start, end, &out->concs, &out->n_concs);
  } else {
    diag(c, row, path, "needs conc-list or conc-start/conc-end");
  }
  bool ok = !c->bad;
  c->bad = c->bad || was_bad;
  return ok;
}

/* ---------------------------------------------------------------- server / benchmark blocks */
static void load_server(struct ctx *c, const struct ynode *srv, const char *path,
                        struct recipe_priv *p) {
  static const char *const keys[] = {"engine", "env", "argv", "args", NULL};
  if (srv->kind != YN_MAP) {
    diag(c, srv, path, "expected a mapping, got %s", kind_name(srv));
    return;
  }
  check_keys(c, srv, path, keys);
  const char *engine = get_str(c, srv, path, "engine", true);
  const struct eng_ops *known = eng_find(engine);
  if (engine && !(known && known->recipe_engine)) {
    char *field = xasprintf("%s.engine", path);
    diag(c, ytree_map_get(srv, "engine"), field, "must be %s, got '%s'", eng_names(true), engine);
    free(field);
  }
  p->tmpl_engine = (char *)engine;
  p->server_line = srv->line;
  const struct ynode *env = ytree_map_get(srv, "env");
  if (env) {
    char *field = xasprintf("%s.env", path);
    if (env->kind == YN_MAP) {
      for (size_t i = 0; i + 1 < env->n_kids; i += 2) {
        const struct ynode *k = env->kids[i], *v = env->kids[i + 1];
        if (k->kind != YN_SCALAR || v->kind != YN_SCALAR) {
          diag(c, v, field, "expected KEY: VALUE scalars");
          continue;
        }
        char *kv = xasprintf("%s=%s", k->scalar, v->scalar);
        recipe_strv_push(&p->tmpl_env, &p->n_tmpl_env, kv);
        free(kv);
      }
    } else if (env->kind == YN_SEQ) {
      for (size_t i = 0; i < env->n_kids; i++) {
        const struct ynode *v = env->kids[i];
        if (v->kind != YN_SCALAR || !strchr(v->scalar, '=')) {
          diag(c, v, field, "expected \"KEY=VALUE\" strings");
          continue;
        }
        recipe_strv_push(&p->tmpl_env, &p->n_tmpl_env, v->scalar);
      }
    } else {
      diag(c, env, field, "expected a mapping or a list of KEY=VALUE, got %s", kind_name(env));
    }
    free(field);
  }
  const struct ynode *argv = ytree_map_get(srv, "argv");
  if (!argv)
    argv = ytree_map_get(srv, "args");
  char *field = xasprintf("%s.argv", path);
  if (required_list(c, srv, argv, field, "missing required key (the server's arguments)",
                    "a list of strings")) {
    for (size_t i = 0; i < argv->n_kids; i++) {
      if (argv->kids[i]->kind != YN_SCALAR) {
        diag(c, argv->kids[i], field, "expected a string, got %s", kind_name(argv->kids[i]));
        continue;
      }
      p->tmpl_argv_lines = xreallocarray(p->tmpl_argv_lines, p->n_tmpl_argv + 1, sizeof(int));
      p->tmpl_argv_lines[p->n_tmpl_argv] = argv->kids[i]->line;
      recipe_strv_push(&p->tmpl_argv, &p->n_tmpl_argv, argv->kids[i]->scalar);
    }
  }
  free(field);
}

static void load_benchmark(struct ctx *c, const struct ynode *b, const char *path,
                           struct recipe_bench *out) {
  static const char *const keys[] = {"random-range-ratio", "use-chat-template",
                                     "num-prompts-factor", "num-warmups", "backend", NULL};
  if (b->kind != YN_MAP) {
    diag(c, b, path, "expected a mapping, got %s", kind_name(b));
    return;
  }
  check_keys(c, b, path, keys);
  /* findings about the chat template point at its line */
  const struct ynode *chat = ytree_map_get(b, "use-chat-template");
  out->line = chat ? chat->line : b->line;
  get_double(c, b, path, "random-range-ratio", &out->random_range_ratio);
  if (out->random_range_ratio < 0 || out->random_range_ratio > 1)
    diag(c, ytree_map_get(b, "random-range-ratio"), path, "random-range-ratio must be in [0, 1]");
  get_bool(c, b, path, "use-chat-template", &out->use_chat_template);
  get_int(c, b, path, "num-prompts-factor", 1, &out->num_prompts_factor);
  get_int(c, b, path, "num-warmups", 0, &out->num_warmups);
  const char *backend = get_str(c, b, path, "backend", false);
  if (backend)
    out->backend = backend;
}

/* ---------------------------------------------------------------- entries */
static const char *const entry_keys_ix[] = {
    "image", "model", "model-prefix", "runner", "precision", "framework", "multinode",
    "scenarios", "disagg", "router", "kv-p2p-transfer", "seq-len-configs", NULL};
static const char *const entry_keys_native[] = {
    "image", "model", "model-prefix", "runner", "precision", "framework", "multinode",
    "scenarios", "disagg", "router", "kv-p2p-transfer", "seq-len-configs", "server", "benchmark",
    "description", NULL};

const char *recipe_gpu_from_runner(struct recipe_set *set, const char *runner) {
  if (!runner)
    return NULL;
  const char *p = str_starts_with(runner, "cluster:") ? runner + 8 : runner;
  size_t n = strcspn(p, "-_");
  char *g = xstrndup(p, n);
  const char *out = recipe_set_str(set, g);
  free(g);
  return out;
}

struct group {
  enum recipe_scenario scen;
  int isl, osl;
  enum recipe_spec spec;
  int line;
  struct recipe_point *pts;
  const char *const **pt_inputs; /* per point: the workflow's inputs */
  size_t n_pts;
};

static struct group *group_for(struct group **gs, size_t *n, enum recipe_scenario scen, int isl,
                               int osl, enum recipe_spec spec, int line) {
  for (size_t i = 0; i < *n; i++)
    if ((*gs)[i].scen == scen && (*gs)[i].isl == isl && (*gs)[i].osl == osl &&
        (*gs)[i].spec == spec && (*gs)[i].line == line)
      return &(*gs)[i];
  *gs = xreallocarray(*gs, *n + 1, sizeof **gs);
  struct group *g = &(*gs)[(*n)++];
  memset(g, 0, sizeof *g);
  g->scen = scen;
  g->isl = isl;
  g->osl = osl;
  g->spec = spec;
  g->line = line;
  return g;
}

/* Scalar key/value pairs of a mapping, appended (set-owned strings). */
static void scalar_inputs(struct recipe_set *set, const struct ynode *map, const char ***kv,
                          size_t *n) {
  for (size_t i = 0; map->kind == YN_MAP && i + 1 < map->n_kids; i += 2)
    if (map->kids[i]->kind == YN_SCALAR && map->kids[i + 1]->kind == YN_SCALAR) {
      *kv = xreallocarray(*kv, *n + 2, sizeof **kv);
      (*kv)[(*n)++] = recipe_set_str(set, map->kids[i]->scalar);
      (*kv)[(*n)++] = recipe_set_str(set, map->kids[i + 1]->scalar);
    }
}

/* outer: the entry's and scenario item's inputs; the row's come after them
 * (a row value wins: the last pair of a key is the one read). */
static void add_row_points(struct recipe_set *set, struct group *g, const struct row *r,
                           const char *const *outer, size_t n_outer) {
  const char **in = recipe_set_block(set, (n_outer + r->n_inputs + 1) * sizeof *in);
  memcpy(in, outer, n_outer * sizeof *in);
  memcpy(in + n_outer, r->inputs, r->n_inputs * sizeof *in);
  in[n_outer + r->n_inputs] = NULL;
  for (size_t i = 0; i < r->n_concs; i++) {
    g->pts = xreallocarray(g->pts, g->n_pts + 1, sizeof *g->pts);
    g->pt_inputs = xreallocarray(g->pt_inputs, g->n_pts + 1, sizeof *g->pt_inputs);
    g->pt_inputs[g->n_pts] = in;
    g->pts[g->n_pts++] = (struct recipe_point){.tp = r->tp, .ep = r->ep, .dp_attn = r->dp_attn,
                                               .conc = r->concs[i],
                                               .kv_offloading = r->kv_offloading,
                                               .line = r->line};
  }
}

/* Loads one list of scenario items (fixed-seq-len, agentic-coding or the
 * legacy seq-len-configs). */
static void load_scenario_list(struct ctx *c, const struct ynode *list, const char *path,
                               enum recipe_scenario scen, bool multinode, struct group **gs,
                               size_t *n_gs, const char *const *entry_inputs,
                               size_t n_entry_inputs) {
  static const char *const fixed_keys[] = {"isl", "osl", "search-space", NULL};
  static const char *const agentic_keys[] = {"search-space", "dram-utilization", NULL};
  /* before AgentX v1.0 (#1970): a run duration per scenario item */
  static const char *const agentic_keys_legacy[] = {"search-space", "dram-utilization",
                                                    "duration", NULL};
  if (list->kind != YN_SEQ) {
    diag(c, list, path, "expected a list, got %s", kind_name(list));
    return;
  }
  for (size_t i = 0; i < list->n_kids; i++) {
    const struct ynode *item = list->kids[i];
    char *ipath = xasprintf("%s[%zu]", path, i);
    if (item->kind != YN_MAP) {
      diag(c, item, ipath, "expected a mapping, got %s", kind_name(item));
      free(ipath);
      continue;
    }
    check_keys(c, item, ipath,
               scen != RECIPE_SCENARIO_AGENTIC  ? fixed_keys
               : c->schema->agentic_legacy_ok ? agentic_keys_legacy
                                               : agentic_keys);
    const char **outer = NULL;
    size_t n_outer = 0;
    for (size_t k = 0; k < n_entry_inputs; k++) {
      outer = xreallocarray(outer, n_outer + 1, sizeof *outer);
      outer[n_outer++] = entry_inputs[k];
    }
    scalar_inputs(c->set, item, &outer, &n_outer);
    int isl = 0, osl = 0;
    if (scen == RECIPE_SCENARIO_FIXED_SEQ_LEN) {
      if (get_int(c, item, ipath, "isl", 1, &isl) == 0)
        diag(c, item, ipath, "missing required key 'isl'");
      if (get_int(c, item, ipath, "osl", 1, &osl) == 0)
        diag(c, item, ipath, "missing required key 'osl'");
    } else {
      double du = 0;
      if (get_double(c, item, ipath, "dram-utilization", &du) > 0 && (du <= 0 || du > 1))
        diag(c, ytree_map_get(item, "dram-utilization"), ipath, "dram-utilization must be in (0, 1]");
    }
    const struct ynode *ss = ytree_map_get(item, "search-space");
    char *spath = xasprintf("%s.search-space", ipath);
    if (required_list(c, item, ss, spath, "missing required key", "a list")) {
      for (size_t r = 0; r < ss->n_kids; r++) {
        char *rpath = xasprintf("%s[%zu]", spath, r);
        struct row row;
        c->set->counts.points++;
        if (load_row(c, ss->kids[r], rpath, multinode, &row) && !multinode) {
          if (scen == RECIPE_SCENARIO_AGENTIC && row.kv_offloading &&
              strcmp(row.kv_offloading, "dram") == 0 && !ytree_map_get(item, "dram-utilization"))
            diag(c, ss->kids[r], rpath, "kv-offloading: dram requires dram-utilization");
          add_row_points(c->set, group_for(gs, n_gs, scen, isl, osl, row.spec, item->line), &row,
                         outer, n_outer);
        }
        free(row.concs);
        free(row.inputs);
        free(rpath);
      }
    }
    free(spath);
    free(ipath);
    free(outer);
  }
}

void recipe_entry_load(struct recipe_set *set, const char *file, const struct ynode *key,
                const struct ynode *val, bool native) {
  const char *name = key->scalar;
  struct ctx c = {.set = set, .file = file, .entry = name,
                  .schema = native ? &native_schema : &set->schema};
  set->counts.entries++;
  if (val->kind != YN_MAP) {
    diag(&c, val, name, "expected a mapping (an entry), got %s", kind_name(val));
    set->counts.entries_failed++;
    return;
  }
  check_keys(&c, val, name, native ? entry_keys_native : entry_keys_ix);
  if (strchr(name, '*'))
    diag(&c, key, name, "'*' is not allowed in entry names");
  const char *image = get_str(&c, val, name, "image", !native);
  const char *model = get_str(&c, val, name, "model", true);
  const char *mp = get_str(&c, val, name, "model-prefix", true);
  const char *runner = get_str(&c, val, name, "runner", true);
  const char *precision = get_str(&c, val, name, "precision", true);
  const char *framework = get_str(&c, val, name, "framework", true);
  bool multinode = false, disagg = false;
  if (get_bool(&c, val, name, "multinode", &multinode) == 0 && c.schema->multinode_required)
    diag(&c, val, name, "missing required key 'multinode'");
  get_bool(&c, val, name, "disagg", &disagg);
  if (mp && strchr(mp, '_')) {
    char *field = xasprintf("%s.model-prefix", name);
    diag(&c, ytree_map_get(val, "model-prefix"), field,
         "must not contain '_' (MODEL_CODE is EXP_NAME up to the first '_')");
    free(field);
  }
  if (multinode) {
    if (disagg)
      set->counts.multinode_disagg++;
    else
      set->counts.multinode_agg++;
  } else {
    set->counts.single_node++;
  }

  struct group *gs = NULL;
  size_t n_gs = 0;
  const char **inputs = NULL; /* the entry's scalars, as the workflow reads them */
  size_t n_inputs = 0;
  scalar_inputs(set, val, &inputs, &n_inputs);
  const struct ynode *scen = ytree_map_get(val, "scenarios");
  const struct ynode *legacy = ytree_map_get(val, "seq-len-configs");
  if (scen && legacy)
    diag(&c, legacy, name, "scenarios and seq-len-configs are exclusive");
  else if (legacy && !c.schema->seq_len_configs_ok)
    diag(&c, legacy, name,
         "seq-len-configs was replaced by scenarios: {fixed-seq-len: ...} (InferenceX #1201), "
         "which the other entries of this checkout use");
  if (scen) {
    static const char *const scen_keys[] = {"fixed-seq-len", "agentic-coding", NULL};
    char *spath = xasprintf("%s.scenarios", name);
    if (scen->kind != YN_MAP) {
      diag(&c, scen, spath, "expected a mapping, got %s", kind_name(scen));
    } else {
      check_keys(&c, scen, spath, scen_keys);
      /* both types in one entry are valid (validation.py: at least one) */
      const struct ynode *fx = ytree_map_get(scen, "fixed-seq-len");
      const struct ynode *ag = ytree_map_get(scen, "agentic-coding");
      if (fx) {
        char *p = xasprintf("%s.fixed-seq-len", spath);
        load_scenario_list(&c, fx, p, RECIPE_SCENARIO_FIXED_SEQ_LEN, multinode, &gs, &n_gs,
                           inputs, n_inputs);
        set->counts.fixed_seq_len++;
        free(p);
      }
      if (ag) {
        char *p = xasprintf("%s.agentic-coding", spath);
        load_scenario_list(&c, ag, p, RECIPE_SCENARIO_AGENTIC, multinode, &gs, &n_gs, inputs,
                           n_inputs);
        set->counts.agentic++;
        free(p);
      }
      if (!fx && !ag) {
        diag(&c, scen, spath, "needs fixed-seq-len or agentic-coding");
      }
    }
    free(spath);
  } else if (legacy) {
    char *p = xasprintf("%s.seq-len-configs", name);
    load_scenario_list(&c, legacy, p, RECIPE_SCENARIO_FIXED_SEQ_LEN, multinode, &gs, &n_gs,
                       inputs, n_inputs);
    set->counts.fixed_seq_len++;
    free(p);
  } else {
    diag(&c, val, name, "missing required key 'scenarios'");
  }

  if (multinode) {
    set->multinode = xreallocarray(set->multinode, set->n_multinode + 1, sizeof(char *));
    set->multinode[set->n_multinode++] = (char *)recipe_set_str(set, name);
  }
  /* the engine/benchmark for the recipes of this entry */
  struct recipe_priv tmpl = {0};
  struct recipe_bench bench = {.random_range_ratio = 0.8, .num_prompts_factor = 10,
                               .num_warmups = -1, .backend = "vllm"};
  if (native) {
    const struct ynode *srv = ytree_map_get(val, "server");
    char *p = xasprintf("%s.server", name);
    if (!srv)
      diag(&c, val, p, "missing required key (servetop recipes say how to start the server)");
    else
      load_server(&c, srv, p, &tmpl);
    for (size_t k = 0; srv && k + 1 < val->n_kids; k += 2)
      if (val->kids[k + 1] == srv)
        tmpl.server_line = val->kids[k]->line; /* the `server:` key, not its first child */
    free(p);
    const struct ynode *b = ytree_map_get(val, "benchmark");
    if (b) {
      p = xasprintf("%s.benchmark", name);
      load_benchmark(&c, b, p, &bench);
      free(p);
    }
  }
  free(inputs);
  bool ok = !c.bad && model && runner && precision && framework && mp;
  if (!ok)
    set->counts.entries_failed++;
  if (multinode || !ok) {
    for (size_t i = 0; i < n_gs; i++) {
      free(gs[i].pts);
      free(gs[i].pt_inputs);
    }
    free(gs);
    str_vec_free(tmpl.tmpl_env, tmpl.n_tmpl_env);
    str_vec_free(tmpl.tmpl_argv, tmpl.n_tmpl_argv);
    free(tmpl.tmpl_argv_lines);
    return;
  }
  for (size_t i = 0; i < n_gs; i++) {
    struct group *g = &gs[i];
    struct recipe_priv *p = recipe_set_add_recipe(set);
    struct recipe *r = &p->pub;
    r->entry = recipe_set_str(set, name);
    /* distinct names when one entry gives several recipes */
    bool many_scen = false, many_spec = false;
    for (size_t k = 0; k < n_gs; k++) {
      many_scen = many_scen || gs[k].line != g->line;
      many_spec = many_spec || gs[k].spec != g->spec;
    }
    struct sbuf nm = {0};
    sbuf_puts(&nm, name);
    if (many_scen) {
      if (g->scen == RECIPE_SCENARIO_AGENTIC)
        sbuf_printf(&nm, ":agentic@%d", g->line);
      else
        sbuf_printf(&nm, ":%d_%d", g->isl, g->osl);
    }
    if (many_spec)
      sbuf_printf(&nm, ":%s", recipe_spec_name(g->spec));
    r->name = recipe_set_str(set, nm.data);
    sbuf_free(&nm);
    r->origin = native ? RECIPE_ORIGIN_SERVETOP : RECIPE_ORIGIN_INFERENCEX;
    r->model = model;
    r->model_prefix = mp;
    r->precision = precision;
    r->runner = runner;
    r->gpu = recipe_gpu_from_runner(set, runner);
    r->framework = framework;
    /* InferenceX: the engine its framework launches (the engine table's),
     * else the framework as written ("trt", "dynamo-sglang"...); a launch
     * script's command may tell it better */
    const struct eng_ops *fw_engine = eng_for_framework(framework);
    const char *eng = native && tmpl.tmpl_engine ? tmpl.tmpl_engine
                      : fw_engine                ? fw_engine->name
                      : framework                ? framework
                                                 : "unknown";
    r->engine = recipe_set_str(set, eng);
    r->image = image;
    r->multinode = false;
    r->disagg = disagg;
    r->scenario = g->scen;
    r->isl = g->isl;
    r->osl = g->osl;
    r->spec = g->spec;
    r->points = g->pts;
    r->n_points = g->n_pts;
    p->point_inputs = g->pt_inputs;
    r->bench = bench;
    r->bench.backend = recipe_set_str(set, bench.backend);
    r->file = recipe_set_str(set, file);
    r->line = key->line;
    const struct ynode *rn = ytree_map_get(val, "runner");
    r->runner_line = rn ? rn->line : key->line;
    r->scenario_line = g->line;
    if (g->scen == RECIPE_SCENARIO_AGENTIC)
      p->seq_tag = "agentic";
    else if (g->isl == 1024 && g->osl == 1024)
      p->seq_tag = "1k1k";
    else if (g->isl == 8192 && g->osl == 1024)
      p->seq_tag = "8k1k";
    else
      p->seq_tag = recipe_set_strf(set, "%d_%d", g->isl, g->osl); /* InferenceX's exp-name form */
    if (native) {
      p->tmpl_engine = (char *)r->engine;
      p->server_line = tmpl.server_line;
      for (size_t k = 0; k < tmpl.n_tmpl_env; k++)
        recipe_strv_push(&p->tmpl_env, &p->n_tmpl_env, tmpl.tmpl_env[k]);
      p->tmpl_argv_lines = xcalloc(tmpl.n_tmpl_argv + 1, sizeof(int));
      for (size_t k = 0; k < tmpl.n_tmpl_argv; k++) {
        p->tmpl_argv_lines[k] = tmpl.tmpl_argv_lines[k];
        recipe_strv_push(&p->tmpl_argv, &p->n_tmpl_argv, tmpl.tmpl_argv[k]);
      }
    }
  }
  free(gs);
  str_vec_free(tmpl.tmpl_env, tmpl.n_tmpl_env);
  str_vec_free(tmpl.tmpl_argv, tmpl.n_tmpl_argv);
  free(tmpl.tmpl_argv_lines);
}

/* ---------------------------------------------------------------- files */
/* The parsed tree of one file, or NULL with a diagnostic (counted as read
 * and as failed). */
static struct ynode *parse_doc(struct recipe_set *set, const char *file, const char *data,
                               size_t len) {
  struct st_err err;
  struct ynode *root = ytree_parse(data, len, file, &err);
  set->counts.files++;
  if (!root) {
    recipe_set_diag_located(set, file, err.msg);
    set->counts.files_failed++;
  }
  return root;
}

static void load_root(struct recipe_set *set, const char *file, const struct ynode *root,
                      bool native) {
  if (root->kind != YN_MAP) {
    recipe_set_diag(set, file, root->line, root->col, NULL, NULL,
             "expected a mapping of entry name to entry at the top level");
    set->counts.files_failed++;
    return;
  }
  for (size_t i = 0; i + 1 < root->n_kids; i += 2) {
    const struct ynode *k = root->kids[i];
    if (k->kind != YN_SCALAR) {
      recipe_set_diag(set, file, k->line, k->col, NULL, NULL, "entry names must be scalars");
      continue;
    }
    bool dup = false;
    for (size_t r = 0; r < set->n_recipes && !dup; r++)
      dup = strcmp(set->recipes[r]->pub.entry, k->scalar) == 0;
    for (size_t m = 0; m < set->n_multinode && !dup; m++)
      dup = strcmp(set->multinode[m], k->scalar) == 0;
    if (dup) {
      set->counts.entries++;
      set->counts.entries_failed++;
      recipe_set_diag(set, file, k->line, k->col, k->scalar, k->scalar, "%s: duplicate entry name",
               k->scalar);
      continue;
    }
    recipe_entry_load(set, file, k, root->kids[i + 1], native);
  }
}

static bool is_agentx_row(const struct ynode *row) {
  return row->kind == YN_MAP && (ytree_map_get(row, "kv-offloading") || ytree_map_get(row, "kv-offload-backend"));
}

void ix_schema_detect(const struct ynode *const *roots, size_t n, struct ix_schema *out) {
  *out = (struct ix_schema){.multinode_required = false, .seq_len_configs_ok = true,
                            .agentic_legacy_ok = true, .agentic_cluster_label = false};
  bool agentx = false;
  for (size_t f = 0; f < n; f++) {
    const struct ynode *root = roots[f];
    for (size_t i = 0; root && root->kind == YN_MAP && i + 1 < root->n_kids; i += 2) {
      const struct ynode *e = root->kids[i + 1];
      if (e->kind != YN_MAP)
        continue;
      out->multinode_required = out->multinode_required || ytree_map_get(e, "multinode");
      const struct ynode *runner = ytree_map_get(e, "runner");
      agentx = agentx || (runner && runner->kind == YN_SCALAR &&
                          str_starts_with(runner->scalar, "cluster:"));
      const struct ynode *scen = ytree_map_get(e, "scenarios");
      if (!scen)
        continue;
      out->seq_len_configs_ok = false;
      const struct ynode *ag = ytree_map_get(scen, "agentic-coding");
      for (size_t k = 0; ag && ag->kind == YN_SEQ && k < ag->n_kids; k++) {
        const struct ynode *item = ag->kids[k];
        agentx = agentx || ytree_map_get(item, "dram-utilization");
        const struct ynode *ss = ytree_map_get(item, "search-space");
        for (size_t r = 0; ss && ss->kind == YN_SEQ && r < ss->n_kids; r++)
          agentx = agentx || is_agentx_row(ss->kids[r]);
      }
    }
  }
  out->agentic_legacy_ok = !agentx;
  out->agentic_cluster_label = agentx;
}

void recipe_set_add_yaml_buffer(struct recipe_set *set, const char *display_name,
                                const char *data, size_t len) {
  struct ynode *root = parse_doc(set, display_name, data, len);
  if (root)
    load_root(set, display_name, root, true);
  ytree_free(root);
}

void recipe_set_add_master_buffer(struct recipe_set *set, const char *display_name,
                                  const char *data, size_t len) {
  struct ynode *root = parse_doc(set, display_name, data, len);
  if (root) {
    const struct ynode *roots[] = {root};
    ix_schema_detect(roots, 1, &set->schema);
    load_root(set, display_name, root, false);
  }
  ytree_free(root);
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names in dir ending with suffix (heap vector). */
static int list_dir(const char *dir, const char *suffix, char ***out, size_t *n,
                    struct st_err *err) {
  DIR *d = opendir(dir);
  if (!d)
    return err_setf(err, "%s: cannot open directory", dir);
  struct dirent *e;
  while ((e = readdir(d)) != NULL)
    if (e->d_name[0] != '.' && str_ends_with(e->d_name, suffix))
      recipe_strv_push(out, n, e->d_name);
  closedir(d);
  if (*n)
    qsort(*out, *n, sizeof **out, cmp_str);
  return 0;
}

/* Loads every file of dir whose name ends in suffix (sorted); a file that
 * cannot be read becomes a diagnostic, not a failure. InferenceX master
 * configs are all parsed first: their schema generation is read from them
 * together. Returns the file count, or -1 when dir cannot be listed. */
static int load_dir_files(struct recipe_set *set, const char *dir, const char *suffix, bool native,
                          struct st_err *err) {
  char **names = NULL;
  size_t n = 0;
  if (list_dir(dir, suffix, &names, &n, err) < 0)
    return -1;
  struct ynode **roots = xcalloc(n ? n : 1, sizeof *roots);
  char **paths = xcalloc(n ? n : 1, sizeof *paths);
  for (size_t i = 0; i < n; i++) {
    paths[i] = path_join_alloc(dir, names[i]);
    size_t len;
    struct st_err ferr;
    char *data = file_read_regular(paths[i], FILE_INPUT_MAX_BYTES, &len, &ferr);
    if (!data) {
      set->counts.files++;
      set->counts.files_failed++;
      recipe_set_diag(set, paths[i], 0, 0, NULL, NULL, "%s", ferr.msg);
    } else {
      roots[i] = parse_doc(set, paths[i], data, len);
    }
    free(data);
  }
  if (!native)
    ix_schema_detect((const struct ynode *const *)roots, n, &set->schema);
  for (size_t i = 0; i < n; i++) {
    if (roots[i])
      load_root(set, paths[i], roots[i], native);
    ytree_free(roots[i]);
    free(paths[i]);
  }
  free(roots);
  free(paths);
  str_vec_free(names, n);
  return (int)n;
}

/* load_dir_files where finding no file is an error: "DIR: <none>". */
static int load_dir_some(struct recipe_set *set, const char *dir, const char *suffix,
                         bool servetop, const char *none, struct st_err *err) {
  int n = load_dir_files(set, dir, suffix, servetop, err);
  if (n < 0)
    return -1;
  if (n == 0)
    return err_setf(err, "%s: %s", dir, none);
  return 0;
}

int recipe_set_add_configs_dir(struct recipe_set *set, const char *dir, struct st_err *err) {
  return load_dir_some(set, dir, ".yaml", true, "no recipe files (*.yaml) in this directory", err);
}

int ix_load_master_files(struct recipe_set *set, const char *dir, struct st_err *err) {
  return load_dir_some(set, dir, "-master.yaml", false, "no *-master.yaml files", err);
}
