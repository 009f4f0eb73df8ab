/* The recipe set: ownership, lookups, twins, bundled-directory search. */
#include "recipe/recipe_internal.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct recipe_set *recipe_set_new(void) {
  struct recipe_set *set = xcalloc(1, sizeof(struct recipe_set));
  set->memo = sh_memo_new();
  return set;
}

/* One recipe's own memory (its strings are the set's). */
static void recipe_priv_free(struct recipe_priv *p) {
  free((void *)p->pub.points);
  free((void *)p->pub.routes);
  free(p->route_scripts);
  free(p->pub.bench.extra_argv);
  str_vec_free(p->tmpl_env, p->n_tmpl_env);
  str_vec_free(p->tmpl_argv, p->n_tmpl_argv);
  free(p->tmpl_argv_lines);
  free((void *)p->point_inputs);
  free(p->route_x);
  free(p);
}

void recipe_set_free(struct recipe_set *set) {
  if (!set)
    return;
  free(set->diags);
  for (size_t i = 0; i < set->n_recipes; i++)
    recipe_priv_free(set->recipes[i]);
  free(set->recipes);
  str_vec_free(set->strings, set->n_strings);
  for (size_t i = 0; i < set->n_blocks; i++)
    free(set->blocks[i]);
  free(set->blocks);
  free(set->multinode);
  for (size_t i = 0; i < set->n_scripts; i++) {
    if (set->scripts[i]) {
      sh_script_fini(set->scripts[i]);
      free(set->scripts[i]);
    }
  }
  free(set->scripts);
  str_vec_free(set->script_paths, set->n_scripts);
  for (size_t i = 0; i < set->n_labels; i++) {
    free(set->labels[i].runners);
    free(set->labels[i].runner_lines);
  }
  free(set->labels);
  str_vec_free(set->bench_files, set->n_bench_files);
  if (set->workflow) {
    str_vec_free(set->workflow->names, set->workflow->n);
    str_vec_free(set->workflow->values, set->workflow->n);
    free(set->workflow->file);
    free(set->workflow);
  }
  sh_memo_free(set->memo);
  free(set);
}

/* s (heap) into the set's string pool, which owns it from now on. */
static const char *str_take(struct recipe_set *set, char *s) {
  if (set->n_strings == set->cap_strings) {
    set->cap_strings = set->cap_strings ? set->cap_strings * 2 : 256;
    set->strings = xreallocarray(set->strings, set->cap_strings, sizeof *set->strings);
  }
  set->strings[set->n_strings] = s;
  return set->strings[set->n_strings++];
}

const char *recipe_set_str(struct recipe_set *set, const char *s) {
  return s ? str_take(set, xstrdup(s)) : NULL;
}

/* The formatted text, owned by the set. */
static const char *str_vformat(struct recipe_set *set, const char *fmt, va_list ap) {
  return str_take(set, xvasprintf(fmt, ap));
}

void *recipe_set_block(struct recipe_set *set, size_t size) {
  set->blocks = xreallocarray(set->blocks, set->n_blocks + 1, sizeof *set->blocks);
  set->blocks[set->n_blocks] = xcalloc(1, size ? size : 1);
  return set->blocks[set->n_blocks++];
}

const char *recipe_set_strf(struct recipe_set *set, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  const char *owned = str_vformat(set, fmt, ap);
  va_end(ap);
  return owned;
}

void recipe_set_diag(struct recipe_set *set, const char *file, int line, int col, const char *entry,
              const char *field, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  const char *msg = str_vformat(set, fmt, ap);
  va_end(ap);
  set->diags = xreallocarray(set->diags, set->n_diags + 1, sizeof *set->diags);
  struct recipe_diag *d = &set->diags[set->n_diags++];
  d->file = recipe_set_str(set, file);
  d->line = line;
  d->col = col;
  d->field = recipe_set_str(set, field);
  d->entry = recipe_set_str(set, entry);
  d->message = msg;
}

void recipe_set_diag_located(struct recipe_set *set, const char *file, const char *located_msg) {
  int line = 0, col = 0;
  const char *p = located_msg + strlen(file);
  if (*p == ':')
    sscanf(p, ":%d:%d:", &line, &col);
  const char *msg = strstr(p, ": ");
  recipe_set_diag(set, file, line, col, NULL, NULL, "%s", msg ? msg + 2 : located_msg);
}

struct recipe_priv *recipe_set_add_recipe(struct recipe_set *set) {
  set->recipes = xreallocarray(set->recipes, set->n_recipes + 1, sizeof *set->recipes);
  struct recipe_priv *p = xcalloc(1, sizeof *p);
  p->memo = set->memo;
  set->recipes[set->n_recipes++] = p;
  return p;
}

const struct sh_script *recipe_set_script(struct recipe_set *set, const char *path, const char *display) {
  for (size_t i = 0; i < set->n_scripts; i++)
    if (strcmp(set->script_paths[i], path) == 0)
      return set->scripts[i];
  struct st_err err;
  size_t len;
  struct sh_script *s = NULL;
  char *data = file_read_regular(path, FILE_INPUT_MAX_BYTES, &len, &err);
  if (!data) {
    recipe_set_diag(set, display, 0, 0, NULL, NULL, "%s", err.msg);
  } else {
    s = xcalloc(1, sizeof *s);
    if (sh_parse(data, len, display, s, &err) < 0) {
      recipe_set_diag_located(set, display, err.msg); /* keeps err's line and column */
      free(s);
      s = NULL;
    }
    free(data);
  }
  set->script_paths = xreallocarray(set->script_paths, set->n_scripts + 1, sizeof(char *));
  set->scripts = xreallocarray(set->scripts, set->n_scripts + 1, sizeof *set->scripts);
  set->script_paths[set->n_scripts] = xstrdup(path);
  set->scripts[set->n_scripts++] = s;
  return s;
}

size_t recipe_set_count(const struct recipe_set *set) {
  return set->n_recipes;
}

const struct recipe *recipe_set_at(const struct recipe_set *set, size_t i) {
  return i < set->n_recipes ? &set->recipes[i]->pub : NULL;
}

const struct recipe *recipe_set_find(const struct recipe_set *set, const char *name) {
  for (size_t i = 0; i < set->n_recipes; i++)
    if (strcmp(set->recipes[i]->pub.name, name) == 0)
      return &set->recipes[i]->pub;
  return NULL;
}

static bool str_eq(const char *a, const char *b) {
  return a && b ? strcmp(a, b) == 0 : a == b;
}

const struct recipe *recipe_set_twin(const struct recipe_set *set, const struct recipe *r) {
  /* the opposite side: off <-> speculative decoding (MTP or a draft model) */
  bool want_spec = r->spec == RECIPE_SPEC_NONE;
  const struct recipe *fallback = NULL;
  for (size_t i = 0; i < set->n_recipes; i++) {
    const struct recipe *o = &set->recipes[i]->pub;
    if (o == r || (o->spec != RECIPE_SPEC_NONE) != want_spec || !str_eq(o->model, r->model) ||
        !str_eq(o->precision, r->precision) || !str_eq(o->gpu, r->gpu) ||
        !str_eq(o->engine, r->engine) || o->scenario != r->scenario || o->isl != r->isl ||
        o->osl != r->osl)
      continue;
    if (o->origin == r->origin)
      return o;
    if (!fallback)
      fallback = o;
  }
  return fallback;
}

size_t recipe_set_diag_count(const struct recipe_set *set) {
  return set->n_diags;
}

const struct recipe_diag *recipe_set_diag_at(const struct recipe_set *set, size_t i) {
  return i < set->n_diags ? &set->diags[i] : NULL;
}

void recipe_set_counts(const struct recipe_set *set, struct recipe_counts *out) {
  *out = set->counts;
}

size_t recipe_set_multinode_count(const struct recipe_set *set) {
  return set->n_multinode;
}

const char *recipe_set_multinode_at(const struct recipe_set *set, size_t i) {
  return i < set->n_multinode ? set->multinode[i] : NULL;
}

/* By enum recipe_spec: the value as recipes spell it, and an A/B arm's short name (its run
 * folder's suffix and its tag). */
static const struct {
  const char *name, *arm;
} spec_words[] = {
    [RECIPE_SPEC_NONE] = {"none", "off"},
    [RECIPE_SPEC_MTP] = {"mtp", "mtp"},
    [RECIPE_SPEC_DRAFT_MODEL] = {"draft_model", "draft"},
};

const char *recipe_spec_name(enum recipe_spec spec) {
  return spec_words[(size_t)spec < ST_ARRAY_LEN(spec_words) ? spec : RECIPE_SPEC_NONE].name;
}

const char *recipe_spec_arm_name(enum recipe_spec spec) {
  return spec_words[(size_t)spec < ST_ARRAY_LEN(spec_words) ? spec : RECIPE_SPEC_NONE].arm;
}

bool recipe_spec_parse(const char *name, enum recipe_spec *out) {
  for (size_t i = 0; i < ST_ARRAY_LEN(spec_words); i++)
    if (strcmp(name, spec_words[i].name) == 0) {
      *out = (enum recipe_spec)i;
      return true;
    }
  return false;
}

const char *recipe_scenario_name(enum recipe_scenario scen) {
  return scen == RECIPE_SCENARIO_AGENTIC ? "agentic-coding" : "fixed-seq-len";
}

const char *recipe_seq_tag(const struct recipe *r) {
  const struct recipe_priv *p = (const struct recipe_priv *)r;
  return p->seq_tag ? p->seq_tag : "?";
}

int recipe_max_conc(const struct recipe *r) {
  int m = 0;
  for (size_t i = 0; i < r->n_points; i++)
    if (r->points[i].conc > m)
      m = r->points[i].conc;
  return m;
}

char *recipe_bundled_dir_alloc(struct st_err *err) {
  const char *env = getenv("SERVETOP_CONFIGS");
  if (env && *env) {
    if (path_exists(env))
      return xstrdup(env);
    err_setf(err, "$SERVETOP_CONFIGS=%s does not exist", env);
    return NULL;
  }
  char *self = path_self_dir_alloc();
  if (self) {
    const char *rel[] = {"../configs", "../share/servetop/configs"};
    for (size_t i = 0; i < ST_ARRAY_LEN(rel); i++) {
      char *dir = path_join_alloc(self, rel[i]);
      char *real = realpath(dir, NULL); /* messages name configs/x.yaml, not bin/../ */
      if (real && path_exists(real)) {
        free(self);
        free(dir);
        return real;
      }
      free(real);
      free(dir);
    }
    free(self);
  }
  if (path_exists("configs"))
    return xstrdup("configs");
  err_setf(err, "no bundled recipes found ($SERVETOP_CONFIGS, <exe>/../configs, "
                "<exe>/../share/servetop/configs, ./configs); use --configs DIR");
  return NULL;
}

/* Does dir hold InferenceX master configs (*-master.yaml)? */
static bool holds_master_configs(const char *dir) {
  DIR *d = opendir(dir);
  bool found = false;
  for (struct dirent *e; d && !found && (e = readdir(d)) != NULL;)
    found = str_ends_with(e->d_name, "-master.yaml");
  if (d)
    closedir(d);
  return found;
}

/* What is wrong with a source folder before anything is read, in words a
 * user can act on: missing, a file, or the other kind of source. 0 when
 * nothing is. */
static int source_problem(const char *dir, bool inferencex, struct st_err *err) {
  const char *flag = inferencex ? "--inferencex" : "--configs";
  if (!path_exists(dir))
    return err_setf(err, "%s %s: no such directory", flag, dir);
  if (!recipe_path_is_directory(dir))
    return err_setf(err, "%s %s: a file, not a directory (%s takes the folder that holds %s)",
                    flag, dir, flag, inferencex ? "configs/, runners/ and benchmarks/"
                                                : "the recipe files");
  char *cfg = path_join_alloc(dir, "configs"), *gh = path_join_alloc(dir, ".github/configs");
  bool checkout = holds_master_configs(cfg) || holds_master_configs(gh);
  free(cfg);
  free(gh);
  if (inferencex && !checkout && holds_master_configs(dir))
    return err_setf(err, "--inferencex %s: this is the folder of the master configs; give the "
                         "checkout's root (the folder above it)",
                    dir);
  if (!inferencex && checkout)
    return err_setf(err, "--configs %s: an InferenceX checkout, not a folder of servetop "
                         "recipes; read it with --inferencex %s",
                    dir, dir);
  if (!inferencex && holds_master_configs(dir))
    return err_setf(err, "--configs %s: InferenceX master configs, not servetop recipes; read "
                         "the checkout they belong to with --inferencex (its root, the folder "
                         "above configs/)",
                    dir);
  return 0;
}

struct recipe_set *recipe_set_load_source(const char *configs_dir, const char *inferencex_dir,
                                          struct st_err *err) {
  if (configs_dir && inferencex_dir) {
    err_setf(err, "--configs and --inferencex are exclusive");
    return NULL;
  }
  const char *given = inferencex_dir ? inferencex_dir : configs_dir;
  if (given && source_problem(given, inferencex_dir != NULL, err) != 0)
    return NULL;
  struct recipe_set *set = recipe_set_new();
  int rc;
  if (inferencex_dir) {
    rc = recipe_set_add_inferencex(set, inferencex_dir, err);
  } else if (configs_dir) {
    rc = recipe_set_add_configs_dir(set, configs_dir, err);
  } else {
    char *dir = recipe_bundled_dir_alloc(err);
    rc = dir ? recipe_set_add_configs_dir(set, dir, err) : -1;
    free(dir);
  }
  if (rc != 0) {
    recipe_set_free(set);
    return NULL;
  }
  return set;
}
