/* Static shell reader, part 3: interpretations remembered by what they read.
 *
 * The reader interprets the same launcher or script many times: once per
 * sweep point, per spec-decoding variant of an entry, per rule that needs
 * the server command. An interpretation depends on nothing but the script,
 * the variables it looks up (the interpreter records each first lookup of a
 * variable it began with, and each name it did not find), the order of the
 * exported ones (collected in environment order), and the files it tests
 * under root_dir (the checkout, which does not change while servetop reads
 * it). A later interpretation of the same script from an environment that
 * agrees on all of that is the earlier result.
 *
 * Remembered results are grouped by script and the names they looked up
 * (a "shape"); within a shape a digest of the values finds the candidate,
 * and the values themselves are compared before it is used. */
#include "recipe/recipe_internal.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Enough for every interpretation of a large checkout; past it new results
 * are not kept (a long-lived set in the dashboard stays bounded). */
enum { MEMO_MAX_ENTRIES = 1 << 14 };

struct memo_entry {
  uint64_t digest;     /* of vals */
  struct sh_var *vals; /* the looked-up variables as the interpretation began */
  size_t n_exported;   /* of them, exported: the environment exported no others */
  struct sh_result res;
};

/* The remembered interpretations of one script from one kind of
 * environment that looked up the same names. */
struct memo_shape {
  const struct sh_script *s;
  char *root_dir;
  bool unset_is_empty;
  enum sh_stop stop;
  char **names; /* looked up, in the order of the environment they began with */
  size_t n_names;
  char **missed; /* looked up and not there */
  size_t n_missed;
  struct memo_entry **entries;
  size_t n_entries;
};

struct sh_memo {
  pthread_mutex_t lock;
  struct memo_shape **shapes;
  size_t n_shapes;
  size_t n_entries;
};

/* ---------------------------------------------------------------- recording */
static void var_copy_into(struct sh_var *out, const struct sh_var *v) {
  *out = *v;
  out->name = xstrdup(v->name);
  out->values = NULL;
  out->n_values = 0;
  for (size_t k = 0; k < v->n_values; k++)
    recipe_strv_push(&out->values, &out->n_values, v->values[k]);
}

static void var_free(struct sh_var *v) {
  free(v->name);
  str_vec_free(v->values, v->n_values);
}

void sh_reads_note(struct sh_reads *r, const struct sh_var *v) {
  r->seen[v->origin - 1] = true;
  r->vars = xreallocarray(r->vars, r->n_vars + 1, sizeof *r->vars);
  var_copy_into(&r->vars[r->n_vars++], v);
}

void sh_reads_miss(struct sh_reads *r, const char *name, size_t len) {
  for (size_t i = 0; i < r->n_missed; i++)
    if (strncmp(r->missed[i], name, len) == 0 && r->missed[i][len] == '\0')
      return;
  recipe_strv_push_owned(&r->missed, &r->n_missed, xstrndup(name, len));
}

static int by_origin(const void *a, const void *b) {
  const struct sh_var *x = a, *y = b;
  return x->origin < y->origin ? -1 : x->origin > y->origin;
}

/* ---------------------------------------------------------------- matching */
static uint64_t digest_bytes(uint64_t h, const void *p, size_t n) {
  const unsigned char *c = p;
  for (size_t i = 0; i < n; i++)
    h = (h ^ c[i]) * 0x100000001b3ull; /* FNV-1a */
  return h;
}

static uint64_t digest_var(uint64_t h, const struct sh_var *v) {
  unsigned char flags[2] = {v->is_array, v->exported};
  h = digest_bytes(h, flags, sizeof flags);
  h = digest_bytes(h, &v->line, sizeof v->line);
  h = digest_bytes(h, &v->n_values, sizeof v->n_values);
  for (size_t k = 0; k < v->n_values; k++)
    h = digest_bytes(h, v->values[k], strlen(v->values[k]) + 1);
  return h;
}

static bool same_var(const struct sh_var *a, const struct sh_var *b) {
  if (a->is_array != b->is_array || a->exported != b->exported || a->line != b->line ||
      a->n_values != b->n_values)
    return false;
  for (size_t k = 0; k < a->n_values; k++)
    if (strcmp(a->values[k], b->values[k]) != 0)
      return false;
  return true;
}

static ptrdiff_t env_index(const struct sh_env *env, const char *name) {
  const struct sh_var *v = sh_env_var(env, name);
  return v ? v - env->vars : -1;
}

static bool same_root(const char *a, const char *b) {
  return a == b || (a && b && strcmp(a, b) == 0);
}

static bool shape_is_for(const struct memo_shape *sh, const struct sh_script *s,
                         const struct sh_env *env) {
  return sh->s == s && sh->unset_is_empty == env->unset_is_empty && sh->stop == env->stop &&
         same_root(sh->root_dir, env->root_dir);
}

/* The remembered result for s from env, or NULL. Called locked. */
static const struct sh_result *memo_find(const struct sh_memo *m, const struct sh_script *s,
                                         const struct sh_env *env) {
  size_t n_exported = 0;
  for (size_t i = 0; i < env->n_vars; i++)
    n_exported += env->vars[i].exported;
  const struct sh_var **found = NULL;
  size_t cap = 0;
  const struct sh_result *hit = NULL;
  for (size_t q = 0; q < m->n_shapes && !hit; q++) {
    const struct memo_shape *sh = m->shapes[q];
    if (!shape_is_for(sh, s, env))
      continue;
    bool fits = true;
    for (size_t k = 0; k < sh->n_missed && fits; k++)
      fits = env_index(env, sh->missed[k]) < 0;
    if (!fits)
      continue;
    if (sh->n_names > cap) {
      cap = sh->n_names;
      found = xreallocarray(found, cap, sizeof *found);
    }
    uint64_t h = 0xcbf29ce484222325ull;
    ptrdiff_t prev = -1;
    for (size_t k = 0; k < sh->n_names && fits; k++) {
      ptrdiff_t at = env_index(env, sh->names[k]);
      fits = at > prev; /* there, and in the same order (exports are collected in it) */
      if (fits) {
        found[k] = &env->vars[at];
        h = digest_var(h, found[k]);
        prev = at;
      }
    }
    for (size_t e = 0; e < sh->n_entries && fits && !hit; e++) {
      const struct memo_entry *en = sh->entries[e];
      if (en->digest != h || en->n_exported != n_exported)
        continue;
      bool same = true;
      for (size_t k = 0; k < sh->n_names && same; k++)
        same = same_var(&en->vals[k], found[k]);
      if (same)
        hit = &en->res;
    }
  }
  free(found);
  return hit;
}

/* ---------------------------------------------------------------- keeping */
static bool same_names(char *const *a, size_t na, const struct sh_var *vars, size_t nv) {
  if (na != nv)
    return false;
  for (size_t i = 0; i < na; i++)
    if (strcmp(a[i], vars[i].name) != 0)
      return false;
  return true;
}

static bool same_set(char *const *a, size_t na, char *const *b, size_t nb) {
  if (na != nb)
    return false;
  for (size_t i = 0; i < na; i++) {
    bool in = false;
    for (size_t k = 0; k < nb && !in; k++)
      in = strcmp(a[i], b[k]) == 0;
    if (!in)
      return false;
  }
  return true;
}

/* The shape for s, env and what was read (made when new). Called locked. */
static struct memo_shape *shape_for(struct sh_memo *m, const struct sh_script *s,
                                    const struct sh_env *env, const struct sh_reads *r) {
  for (size_t q = 0; q < m->n_shapes; q++) {
    struct memo_shape *sh = m->shapes[q];
    if (shape_is_for(sh, s, env) && same_names(sh->names, sh->n_names, r->vars, r->n_vars) &&
        same_set(sh->missed, sh->n_missed, r->missed, r->n_missed))
      return sh;
  }
  struct memo_shape *sh = xcalloc(1, sizeof *sh);
  sh->s = s;
  sh->root_dir = env->root_dir ? xstrdup(env->root_dir) : NULL;
  sh->unset_is_empty = env->unset_is_empty;
  sh->stop = env->stop;
  for (size_t i = 0; i < r->n_vars; i++)
    recipe_strv_push(&sh->names, &sh->n_names, r->vars[i].name);
  for (size_t i = 0; i < r->n_missed; i++)
    recipe_strv_push(&sh->missed, &sh->n_missed, r->missed[i]);
  m->shapes = xreallocarray(m->shapes, m->n_shapes + 1, sizeof *m->shapes);
  m->shapes[m->n_shapes++] = sh;
  return sh;
}

const struct sh_result *sh_run_memo(struct sh_memo *m, const struct sh_script *s,
                                    struct sh_env *env, struct sh_result *own) {
  memset(own, 0, sizeof *own);
  if (!m) {
    sh_run(s, env, own);
    return own;
  }
  pthread_mutex_lock(&m->lock);
  const struct sh_result *hit = memo_find(m, s, env);
  pthread_mutex_unlock(&m->lock);
  if (hit)
    return hit;

  /* interpret, recording what it looks up of env as it begins */
  struct sh_reads reads = {.n_seen = env->n_vars};
  reads.seen = xcalloc(env->n_vars ? env->n_vars : 1, sizeof *reads.seen);
  for (size_t i = 0; i < env->n_vars; i++)
    env->vars[i].origin = i + 1;
  for (size_t i = 0; i < env->n_vars; i++)
    if (env->vars[i].exported) /* collected into every launch it records */
      sh_reads_note(&reads, &env->vars[i]);
  struct memo_entry *en = xcalloc(1, sizeof *en);
  env->reads = &reads;
  sh_run(s, env, &en->res);
  env->reads = NULL;
  if (reads.n_vars > 1)
    qsort(reads.vars, reads.n_vars, sizeof *reads.vars, by_origin);
  en->digest = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < reads.n_vars; i++) {
    en->digest = digest_var(en->digest, &reads.vars[i]);
    en->n_exported += reads.vars[i].exported;
  }

  const struct sh_result *out = &en->res;
  pthread_mutex_lock(&m->lock);
  if (m->n_entries < MEMO_MAX_ENTRIES) {
    struct memo_shape *sh = shape_for(m, s, env, &reads);
    en->vals = reads.vars; /* the shape's names, in its order */
    reads.vars = NULL;
    sh->entries = xreallocarray(sh->entries, sh->n_entries + 1, sizeof *sh->entries);
    sh->entries[sh->n_entries++] = en;
    m->n_entries++;
  } else {
    *own = en->res;
    free(en);
    out = own;
  }
  pthread_mutex_unlock(&m->lock);
  for (size_t i = 0; reads.vars && i < reads.n_vars; i++)
    var_free(&reads.vars[i]);
  free(reads.vars);
  free(reads.seen);
  str_vec_free(reads.missed, reads.n_missed);
  return out;
}

/* ---------------------------------------------------------------- lifetime */
struct sh_memo *sh_memo_new(void) {
  struct sh_memo *m = xcalloc(1, sizeof *m);
  pthread_mutex_init(&m->lock, NULL);
  return m;
}

void sh_memo_free(struct sh_memo *m) {
  if (!m)
    return;
  for (size_t q = 0; q < m->n_shapes; q++) {
    struct memo_shape *sh = m->shapes[q];
    for (size_t e = 0; e < sh->n_entries; e++) {
      struct memo_entry *en = sh->entries[e];
      for (size_t k = 0; k < sh->n_names; k++)
        var_free(&en->vals[k]);
      free(en->vals);
      sh_result_fini(&en->res);
      free(en);
    }
    free(sh->entries);
    free(sh->root_dir);
    str_vec_free(sh->names, sh->n_names);
    str_vec_free(sh->missed, sh->n_missed);
    free(sh);
  }
  free(m->shapes);
  pthread_mutex_destroy(&m->lock);
  free(m);
}
