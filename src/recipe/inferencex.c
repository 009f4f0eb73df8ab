/* InferenceX checkouts: runners.yaml, runner launchers and launch scripts.
 * A route is found by reading the launcher itself: it is interpreted
 * statically with the workflow's environment for the recipe, its `[[ -f ]]`
 * tests are answered from the checkout, and the benchmarks/...sh path it
 * hands to bash is the route. Nothing is executed. */
#include "recipe/recipe_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void add_label(struct recipe_set *set, const char *label, const struct ynode *list,
                      const char *file) {
  size_t i = set->n_labels++;
  set->labels = xreallocarray(set->labels, set->n_labels, sizeof *set->labels);
  set->label_runners = xreallocarray(set->label_runners, set->n_labels, sizeof(char **));
  set->n_label_runners = xreallocarray(set->n_label_runners, set->n_labels, sizeof(size_t));
  set->labels[i] = (char *)set_str(set, label);
  set->label_runners[i] = NULL;
  set->n_label_runners[i] = 0;
  if (list->kind != YN_SEQ) {
    set_diag(set, file, list->line, list->col, label, "%s: expected a list of runner names",
             label);
    return;
  }
  for (size_t k = 0; k < list->n_kids; k++) {
    const struct ynode *r = list->kids[k];
    if (r->kind != YN_SCALAR) {
      set_diag(set, file, r->line, r->col, label, "%s: runner names must be strings", label);
      continue;
    }
    set->label_runners[i] = xreallocarray(set->label_runners[i], set->n_label_runners[i] + 1,
                                          sizeof(char *));
    set->label_runners[i][set->n_label_runners[i]++] = (char *)set_str(set, r->scalar);
  }
}

/* runners.yaml: `labels:` + `hardware:`, or the legacy flat label -> list. */
static void load_runners(struct recipe_set *set, const char *path) {
  size_t len;
  struct st_err err;
  char *data = file_read_all(path, &len, &err);
  if (!data) {
    set_diag(set, path, 0, 0, NULL, "%s", err.msg);
    return;
  }
  struct ynode *root = ytree_parse(data, len, path, &err);
  free(data);
  if (!root) {
    set_diag(set, path, 0, 0, NULL, "%s", err.msg);
    return;
  }
  set->have_runners = true;
  set->runners_file = (char *)set_str(set, path);
  const struct ynode *labels = ymap_get(root, "labels");
  const struct ynode *hw = ymap_get(root, "hardware");
  const struct ynode *flat = labels ? labels : root;
  if (flat->kind == YN_MAP) {
    for (size_t i = 0; i + 1 < flat->n_kids; i += 2) {
      const struct ynode *k = flat->kids[i];
      if (k->kind != YN_SCALAR || (!labels && (strcmp(k->scalar, "hardware") == 0)))
        continue;
      add_label(set, k->scalar, flat->kids[i + 1], path);
    }
  }
  if (hw && hw->kind == YN_MAP) {
    for (size_t i = 0; i + 1 < hw->n_kids; i += 2) {
      const struct ynode *spec = hw->kids[i + 1];
      static const char *const int_keys[] = {"available-cpu-dram-mib", "gpus-per-node"};
      for (size_t k = 0; k < ST_ARRAY_LEN(int_keys); k++) {
        const struct ynode *v = ymap_get(spec, int_keys[k]);
        long x;
        if (v && yscalar_long(v, &x) < 0) /* YAML 1.1: 3_091_589 is an int */
          set_diag(set, path, v->line, v->col, int_keys[k],
                   "hardware.%s.%s: expected an integer, got '%s'",
                   hw->kids[i]->kind == YN_SCALAR ? hw->kids[i]->scalar : "?", int_keys[k],
                   v->kind == YN_SCALAR ? v->scalar : "non-scalar");
      }
    }
  }
  ytree_free(root);
}

static int label_index(const struct recipe_set *set, const char *label) {
  for (size_t i = 0; i < set->n_labels; i++)
    if (strcmp(set->labels[i], label) == 0)
      return (int)i;
  return -1;
}

static bool is_regular_file(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Benchmark settings as the script calls run_benchmark_serving. */
static void bench_from_script(struct recipe_set *set, struct recipe_priv *p) {
  struct recipe *r = &p->pub;
  if (!p->script || r->n_points == 0)
    return;
  struct sh_env env = {0};
  point_env(r, &r->points[0], &env);
  struct sh_result res;
  sh_run(p->script, &env, &res);
  sh_env_fini(&env);
  struct recipe_bench *b = &r->bench;
  if (res.bench.n_words > 0) {
    b->line = res.bench.line;
    b->extra_argv = xcalloc(res.bench.n_words, sizeof *b->extra_argv);
    for (size_t i = 1; i < res.bench.n_words; i++) {
      const char *w = res.bench.words[i];
      const char *next = i + 1 < res.bench.n_words ? res.bench.words[i + 1] : NULL;
      b->extra_argv[b->n_extra_argv++] = (char *)set_str(set, w);
      if (strcmp(w, "--use-chat-template") == 0 || strcmp(w, "--dsv4") == 0)
        b->use_chat_template = true;
      else if (strcmp(w, "--backend") == 0 && next)
        b->backend = set_str(set, next);
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
  sh_result_fini(&res);
}

void ix_resolve_routes(struct recipe_set *set, const char *root) {
  for (size_t i = 0; i < set->n_recipes; i++) {
    struct recipe_priv *p = set->recipes[i];
    struct recipe *r = &p->pub;
    if (r->origin != RECIPE_ORIGIN_INFERENCEX || p->checkout || r->n_points == 0)
      continue;
    p->checkout = set_str(set, root);
    int li = label_index(set, r->runner);
    if (li < 0)
      continue; /* RUNNER_LABEL_UNKNOWN (lint) */
    struct recipe_route *routes = NULL;
    size_t n_routes = 0;
    for (size_t k = 0; k < set->n_label_runners[li]; k++) {
      const char *runner = set->label_runners[li][k];
      size_t plen = strcspn(runner, "_");
      bool seen = false;
      for (size_t q = 0; q < n_routes && !seen; q++)
        seen = strlen(routes[q].family) == plen && memcmp(routes[q].family, runner, plen) == 0;
      if (seen)
        continue;
      routes = xreallocarray(routes, n_routes + 1, sizeof *routes);
      struct recipe_route *rt = &routes[n_routes++];
      memset(rt, 0, sizeof *rt);
      char *family = xstrndup(runner, plen);
      rt->family = set_str(set, family);
      char *rel = xasprintf("runners/launch_%s.sh", family);
      char *full = path_join_alloc(root, rel);
      if (is_regular_file(full)) {
        rt->launcher = set_str(set, rel);
        const struct sh_script *ls = set_script(set, full, full);
        if (ls) {
          struct sh_env env = {.root_dir = root, .unset_is_empty = true};
          point_env(r, &r->points[0], &env);
          sh_env_set(&env, "RUNNER_NAME", runner);
          sh_env_set(&env, "IS_MULTINODE", "false");
          sh_env_set(&env, "GITHUB_WORKSPACE", ".");
          struct sh_result res;
          sh_run(ls, &env, &res);
          if (res.bench_script) {
            rt->script = set_str(set, res.bench_script);
            rt->launcher_line = res.bench_script_line;
            char *sp = path_join_alloc(root, res.bench_script);
            rt->exists = !sh_is_unresolved(res.bench_script) && is_regular_file(sp);
            free(sp);
          }
          sh_result_fini(&res);
          sh_env_fini(&env);
        }
      }
      free(rel);
      free(full);
      free(family);
    }
    r->routes = routes;
    r->n_routes = n_routes;
    p->route_scripts = xcalloc(n_routes ? n_routes : 1, sizeof *p->route_scripts);
    for (size_t k = 0; k < n_routes; k++) {
      if (!routes[k].exists)
        continue;
      char *full = path_join_alloc(root, routes[k].script);
      p->route_scripts[k] = set_script(set, full, full);
      free(full);
    }
    for (size_t k = 0; k < n_routes; k++) {
      if (routes[k].exists) {
        r->script_path = routes[k].script;
        char *full = path_join_alloc(root, routes[k].script);
        r->script_file = set_str(set, full);
        free(full);
        p->script = set_script(set, r->script_file, r->script_file);
        break;
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
    set_diag(set, runners, 0, 0, NULL, "missing: runner labels cannot be checked or routed");
  free(runners);
  free(cfg);
  ix_resolve_routes(set, dir);
  return 0;
}
