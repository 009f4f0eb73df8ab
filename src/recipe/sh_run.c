/* Static shell reader, part 2: interpret commands for a known environment.
 * Literal assignments, arrays, ${...} forms, $((...)), $(echo/printf), [[ ]]
 * tests and if/case/loop branches are followed; a branch whose test cannot be
 * decided is entered "uncertain": what it assigns becomes unresolved, what it
 * launches is marked conditional. Nothing is executed. */
#include "recipe/recipe_internal.h"

#include <ctype.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum tri { T_FALSE, T_TRUE, T_UNKNOWN };

/* Commands one interpretation may run (functions and substitutions included):
 * real launch scripts need a few hundred. */
enum { SH_MAX_STEPS = 5000 };

/* ---------------------------------------------------------------- env */
/* A name -> position table over env->vars (open addressing). Variables are
 * only appended, and a subshell's end cuts the array back to what it was:
 * a slot is trusted only when the variable at its position has its name
 * (names are unique in the array), so cut-off slots are merely skipped
 * until the next rebuild. */
struct sh_env_index {
  uint32_t *pos;   /* 1 + position; 0: empty */
  uint32_t *hash;
  size_t n_slots;  /* a power of two */
  size_t n_used;   /* slots taken, stale ones included */
};

enum { INDEX_FROM_VARS = 16 }; /* fewer are searched in order */

static uint32_t name_hash(const char *name, size_t len) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < len; i++)
    h = (h ^ (unsigned char)name[i]) * 16777619u;
  return h;
}

static void index_put(struct sh_env_index *ix, uint32_t h, size_t at) {
  size_t mask = ix->n_slots - 1;
  size_t k = h & mask;
  while (ix->pos[k])
    k = (k + 1) & mask;
  ix->pos[k] = (uint32_t)at + 1;
  ix->hash[k] = h;
  ix->n_used++;
}

/* (Re)builds the table for the variables there are now. */
static void index_build(struct sh_env *env) {
  struct sh_env_index *ix = env->index;
  if (!ix)
    ix = env->index = xcalloc(1, sizeof *ix);
  size_t want = 256;
  while (want < env->n_vars * 4)
    want *= 2;
  if (want != ix->n_slots) {
    free(ix->pos);
    free(ix->hash);
    ix->pos = xcalloc(want, sizeof *ix->pos);
    ix->hash = xcalloc(want, sizeof *ix->hash);
    ix->n_slots = want;
  } else {
    memset(ix->pos, 0, want * sizeof *ix->pos);
  }
  ix->n_used = 0;
  for (size_t i = 0; i < env->n_vars; i++)
    index_put(ix, name_hash(env->vars[i].name, env->vars[i].name_len), i);
}

/* The variable called name[0, len), without recording the lookup. */
static struct sh_var *var_at(const struct sh_env *env, const char *name, size_t len) {
  const struct sh_env_index *ix = env->index;
  if (!ix) {
    for (size_t i = env->n_vars; i-- > 0;)
      if (env->vars[i].name_len == len && env->vars[i].name[0] == name[0] &&
          memcmp(env->vars[i].name, name, len) == 0)
        return &env->vars[i];
    return NULL;
  }
  uint32_t h = name_hash(name, len);
  size_t mask = ix->n_slots - 1;
  for (size_t k = h & mask; ix->pos[k]; k = (k + 1) & mask) {
    size_t at = ix->pos[k] - 1;
    if (ix->hash[k] == h && at < env->n_vars && env->vars[at].name_len == len &&
        memcmp(env->vars[at].name, name, len) == 0)
      return &env->vars[at];
  }
  return NULL;
}

static struct sh_var *var_find(const struct sh_env *env, const char *name, size_t len) {
  struct sh_var *v = var_at(env, name, len);
  if (v && env->reads && v->origin && !env->reads->seen[v->origin - 1])
    sh_reads_note(env->reads, v); /* its first lookup: as it began */
  if (!v && env->reads)
    sh_reads_miss(env->reads, name, len);
  return v;
}

/* Room for n variables in the doubling every variable array follows (64,
 * 128...): a copy made with it grows like the original. */
static size_t vars_cap(size_t n) {
  size_t cap = 64; /* a workflow's environment has about as many */
  while (cap < n)
    cap *= 2;
  return cap;
}

static struct sh_var *var_get_or_add(struct sh_env *env, const char *name) {
  struct sh_var *v = var_find(env, name, strlen(name));
  if (v)
    return v;
  size_t n = env->n_vars;
  if (n == 0 || (n >= 64 && (n & (n - 1)) == 0))
    env->vars = xreallocarray(env->vars, vars_cap(n + 1), sizeof *env->vars);
  v = &env->vars[env->n_vars++];
  memset(v, 0, sizeof *v);
  v->name = xstrdup(name);
  v->name_len = strlen(name);
  if (env->index && (env->index->n_used + 1) * 2 <= env->index->n_slots)
    index_put(env->index, name_hash(v->name, v->name_len), n);
  else if (env->index || env->n_vars >= INDEX_FROM_VARS)
    index_build(env);
  return v;
}

static void var_clear(struct sh_var *v) {
  str_vec_free(v->values, v->n_values);
  v->values = NULL;
  v->n_values = 0;
}

static void vars_free(struct sh_var *vars, size_t n) {
  for (size_t i = 0; i < n; i++) {
    free(vars[i].name);
    var_clear(&vars[i]);
  }
  free(vars);
}

/* A deep copy of the variables (a subshell's starting point). */
static struct sh_var *vars_copy(const struct sh_var *vars, size_t n) {
  struct sh_var *out = xcalloc(vars_cap(n), sizeof *out);
  for (size_t i = 0; i < n; i++) {
    out[i] = vars[i];
    out[i].name = xstrdup(vars[i].name);
    out[i].values = NULL;
    out[i].n_values = 0;
    for (size_t k = 0; k < vars[i].n_values; k++)
      recipe_strv_push(&out[i].values, &out[i].n_values, vars[i].values[k]);
  }
  return out;
}

void sh_env_set(struct sh_env *env, const char *name, const char *value) {
  struct sh_var *v = var_get_or_add(env, name);
  if (v->n_values == 1 && !v->is_array) { /* a scalar again: keep its vector */
    if (strcmp(v->values[0], value) == 0)
      return;
    free(v->values[0]);
    v->values[0] = xstrdup(value);
    return;
  }
  var_clear(v);
  v->is_array = false;
  recipe_strv_push(&v->values, &v->n_values, value);
}

void sh_env_unset(struct sh_env *env, const char *name) {
  struct sh_var *v = var_find(env, name, strlen(name));
  if (v) {
    var_clear(v);
    v->is_array = false;
  }
}

const struct sh_var *sh_env_var(const struct sh_env *env, const char *name) {
  return var_at(env, name, strlen(name));
}

const char *sh_env_get(const struct sh_env *env, const char *name) {
  struct sh_var *v = var_find(env, name, strlen(name));
  return v && v->n_values > 0 ? v->values[0] : NULL;
}

void sh_env_fini(struct sh_env *env) {
  vars_free(env->vars, env->n_vars);
  env->vars = NULL;
  env->n_vars = 0;
  if (env->index) {
    free(env->index->pos);
    free(env->index->hash);
    free(env->index);
    env->index = NULL;
  }
}

bool sh_is_unresolved(const char *s) {
  return s && strstr(s, SH_UNRESOLVED_PREFIX) != NULL;
}

/* ---------------------------------------------------------------- interpreter state */
enum frame_kind { F_IF, F_CASE, F_LOOP, F_GROUP, F_FUNC, F_SUBSHELL };

struct frame {
  enum frame_kind kind;
  enum tri state;       /* this branch: TRUE run, FALSE skip, UNKNOWN uncertain */
  bool any_true, any_unknown;
  bool awaiting;        /* if/elif: condition read, waiting for `then`; loop: for `do` */
  enum tri cond;
  bool case_expect_pattern;
  char *case_subject;   /* NULL: unknown */
  /* ( ... ): the variables before it, restored at its ')' */
  struct sh_var *saved_vars;
  size_t n_saved_vars;
};

struct interp {
  const struct sh_script *s;
  struct sh_env *env;
  struct sh_result *res;
  struct sh_result *rec;  /* where bench-script runs and probes are recorded: the
                             top-level result, also from inside $(...) */
  int cur_line;           /* line of the command being run */
  struct frame *frames;
  size_t n_frames, cap_frames;
  enum tri last_status;
  struct sbuf *capture;   /* $(...) output; NULL at top level */
  bool capture_unknown;
  bool stopped;           /* exit reached */
  int depth;              /* function / substitution recursion */
  long *steps_left;       /* shared work budget: hostile scripts stay bounded */
  /* functions: name -> [first, end) command range */
  char **fn_names;
  size_t *fn_first, *fn_end;
  size_t n_fns;
};

static void run_range(struct interp *in, size_t first, size_t end);

static enum tri mode(const struct interp *in) {
  enum tri m = T_TRUE;
  for (size_t i = 0; i < in->n_frames; i++) {
    if (in->frames[i].state == T_FALSE)
      return T_FALSE;
    if (in->frames[i].state == T_UNKNOWN)
      m = T_UNKNOWN;
  }
  return m;
}

static struct frame *push(struct interp *in, enum frame_kind kind, enum tri state) {
  if (in->n_frames == in->cap_frames) {
    in->cap_frames = in->cap_frames ? in->cap_frames * 2 : 8;
    in->frames = xreallocarray(in->frames, in->cap_frames, sizeof *in->frames);
  }
  struct frame *f = &in->frames[in->n_frames++];
  memset(f, 0, sizeof *f);
  f->kind = kind;
  f->state = state;
  return f;
}

/* Drops frames [first, n): a subshell among them gives back the variables
 * it started from (the outermost one's, as bash would). */
static void drop_frames(struct interp *in, size_t first) {
  if (first >= in->n_frames)
    return; /* already gone (a ')' inside a function closed a frame of its caller) */
  for (size_t k = in->n_frames; k-- > first;) {
    struct frame *f = &in->frames[k];
    free(f->case_subject);
    if (f->saved_vars) {
      vars_free(in->env->vars, in->env->n_vars);
      in->env->vars = f->saved_vars;
      in->env->n_vars = f->n_saved_vars;
    }
  }
  in->n_frames = first;
}

/* Frees frames without restoring anything (end of an interpretation). */
static void frames_free(struct frame *frames, size_t n) {
  for (size_t k = 0; k < n; k++) {
    free(frames[k].case_subject);
    vars_free(frames[k].saved_vars, frames[k].n_saved_vars);
  }
  free(frames);
}

static void pop(struct interp *in, enum frame_kind kind) {
  /* pop up to and including the innermost frame of this kind (tolerant of
   * unbalanced input) */
  for (size_t i = in->n_frames; i-- > 0;) {
    if (in->frames[i].kind == kind) {
      drop_frames(in, i);
      return;
    }
  }
}

static bool in_frame(const struct interp *in, enum frame_kind kind) {
  for (size_t i = 0; i < in->n_frames; i++)
    if (in->frames[i].kind == kind)
      return true;
  return false;
}

static struct frame *top(struct interp *in) {
  return in->n_frames ? &in->frames[in->n_frames - 1] : NULL;
}

/* Mode of everything below the top frame. */
static enum tri parent_mode(struct interp *in) {
  if (!in->n_frames)
    return T_TRUE;
  in->n_frames--;
  enum tri m = mode(in);
  in->n_frames++;
  return m;
}

/* ---------------------------------------------------------------- expansion */
struct fields {
  char **v;
  size_t n;
  struct sbuf cur;
  bool have_cur;       /* the current field exists (even if empty, e.g. "") */
  bool empty_array;    /* an empty "${A[@]}" was expanded: it makes no word */
};

static void f_put(struct fields *f, const char *s, size_t n) {
  sbuf_append(&f->cur, s, n);
  f->have_cur = true;
}

static void f_break(struct fields *f) {
  if (!f->have_cur)
    return;
  recipe_strv_push_owned(&f->v, &f->n, f->cur.data ? sbuf_take(&f->cur) : xstrdup(""));
  f->have_cur = false;
}

/* Appends a value; unquoted values are split on blanks. */
static void f_value(struct fields *f, const char *val, bool quoted) {
  if (quoted) {
    f_put(f, val, strlen(val));
    return;
  }
  const char *p = val;
  bool leading_blank = true;
  while (*p) {
    if (isspace((unsigned char)*p)) {
      if (!leading_blank || f->have_cur)
        f_break(f);
      while (isspace((unsigned char)*p))
        p++;
      leading_blank = false;
      continue;
    }
    /* keep "<unresolved: $X>" markers whole */
    if (strncmp(p, SH_UNRESOLVED_PREFIX, strlen(SH_UNRESOLVED_PREFIX)) == 0) {
      const char *e = strchr(p, '>');
      size_t n = e ? (size_t)(e - p + 1) : strlen(p);
      f_put(f, p, n);
      p += n;
      continue;
    }
    size_t run = 1; /* up to the next blank or marker */
    while (p[run] && !isspace((unsigned char)p[run]) && p[run] != '<')
      run++;
    f_put(f, p, run);
    p += run;
    leading_blank = false;
  }
}

/* a, b[0, nb) and c joined: markers and KEY=VALUE without printf's cost. */
static char *join3(const char *a, const char *b, size_t nb, const char *c) {
  size_t na = strlen(a), nc = strlen(c);
  char *out = xmalloc(na + nb + nc + 1);
  memcpy(out, a, na);
  memcpy(out + na, b, nb);
  memcpy(out + na + nb, c, nc + 1);
  return out;
}

static char *unresolved_alloc(const char *what, size_t len) {
  return join3(SH_UNRESOLVED_PREFIX, what, len, ">");
}

static char *expand_string(struct interp *in, const char *raw); /* no splitting */

/* An unset variable: empty where the environment is fully known (launchers
 * run with the workflow's env), otherwise unresolved. */
static char *unset_value_alloc(const struct interp *in, const char *name, size_t nlen) {
  if (in->env->unset_is_empty)
    return xstrdup("");
  return join3(SH_UNRESOLVED_PREFIX "$", name, nlen, ">");
}

/* ---- arithmetic: recursive descent over a small C-like grammar */
struct arith {
  struct interp *in;
  const char *p;
  bool bad;
};

static long a_ternary(struct arith *a);

static void a_ws(struct arith *a) {
  while (isspace((unsigned char)*a->p))
    a->p++;
}

static long a_primary(struct arith *a) {
  a_ws(a);
  if (*a->p == '(') {
    a->p++;
    long v = a_ternary(a);
    a_ws(a);
    if (*a->p == ')')
      a->p++;
    else
      a->bad = true;
    return v;
  }
  if (*a->p == '-' || *a->p == '+' || *a->p == '!') {
    char op = *a->p++;
    long v = a_primary(a);
    return op == '-' ? -v : op == '!' ? !v : v;
  }
  if (isdigit((unsigned char)*a->p)) {
    char *end;
    long v = strtol(a->p, &end, 10);
    a->p = end;
    return v;
  }
  if (*a->p == '$' || isalpha((unsigned char)*a->p) || *a->p == '_') {
    const char *start = a->p;
    if (*a->p == '$')
      a->p++;
    bool braced = *a->p == '{';
    if (braced) {
      const char *e = strchr(a->p, '}');
      if (!e) {
        a->bad = true;
        return 0;
      }
      a->p = e + 1;
    } else {
      while (isalnum((unsigned char)*a->p) || *a->p == '_')
        a->p++;
    }
    char *ref;
    if (*start == '$')
      ref = xstrndup(start, (size_t)(a->p - start));
    else
      ref = xasprintf("$%.*s", (int)(a->p - start), start);
    char *val = expand_string(a->in, ref);
    free(ref);
    long v = 0;
    if (*val == '\0')
      v = 0; /* bash: an empty variable is 0 */
    else if (parse_long(val, &v) < 0)
      a->bad = true;
    free(val);
    return v;
  }
  a->bad = true;
  return 0;
}

static long a_mul(struct arith *a) {
  long v = a_primary(a);
  for (;;) {
    a_ws(a);
    char op = *a->p;
    if (op != '*' && op != '/' && op != '%')
      return v;
    a->p++;
    long r = a_primary(a);
    if (op == '*')
      v = (long)((unsigned long)v * (unsigned long)r);
    else if (r == 0 || (v == LONG_MIN && r == -1))
      a->bad = true;
    else
      v = op == '/' ? v / r : v % r;
  }
}

static long a_add(struct arith *a) {
  long v = a_mul(a);
  for (;;) {
    a_ws(a);
    char op = *a->p;
    if (op != '+' && op != '-')
      return v;
    a->p++;
    long r = a_mul(a);
    v = (long)(op == '+' ? (unsigned long)v + (unsigned long)r : (unsigned long)v - (unsigned long)r);
  }
}

static long a_cmp(struct arith *a) {
  long v = a_add(a);
  for (;;) {
    a_ws(a);
    if (strncmp(a->p, "<=", 2) == 0) { a->p += 2; v = v <= a_add(a); }
    else if (strncmp(a->p, ">=", 2) == 0) { a->p += 2; v = v >= a_add(a); }
    else if (strncmp(a->p, "==", 2) == 0) { a->p += 2; v = v == a_add(a); }
    else if (strncmp(a->p, "!=", 2) == 0) { a->p += 2; v = v != a_add(a); }
    else if (*a->p == '<' && a->p[1] != '<') { a->p++; v = v < a_add(a); }
    else if (*a->p == '>' && a->p[1] != '>') { a->p++; v = v > a_add(a); }
    else return v;
  }
}

static long a_logic(struct arith *a) {
  long v = a_cmp(a);
  for (;;) {
    a_ws(a);
    if (strncmp(a->p, "&&", 2) == 0) { a->p += 2; long r = a_cmp(a); v = v && r; }
    else if (strncmp(a->p, "||", 2) == 0) { a->p += 2; long r = a_cmp(a); v = v || r; }
    else return v;
  }
}

static long a_ternary(struct arith *a) {
  long c = a_logic(a);
  a_ws(a);
  if (*a->p != '?')
    return c;
  a->p++;
  long x = a_ternary(a);
  a_ws(a);
  if (*a->p != ':') {
    a->bad = true;
    return 0;
  }
  a->p++;
  long y = a_ternary(a);
  return c ? x : y;
}

/* "$((expr))" body -> decimal string or unresolved marker (heap). */
static char *arith_alloc(struct interp *in, const char *expr, size_t len) {
  char *e = xstrndup(expr, len);
  struct arith a = {.in = in, .p = e};
  long v = a_ternary(&a);
  a_ws(&a);
  char *out;
  if (a.bad || *a.p)
    out = xasprintf(SH_UNRESOLVED_PREFIX "$((%s))>", e);
  else
    out = xasprintf("%ld", v);
  free(e);
  return out;
}

/* Shell pattern for ${x%%pat}: expand, then match with fnmatch. */
static char *trim_pattern(const char *val, const char *pat, bool suffix, bool longest) {
  size_t n = strlen(val);
  if (!suffix) {
    for (size_t k = 0; k <= n; k++) {
      size_t cut = longest ? n - k : k;
      char *pre = xstrndup(val, cut);
      bool m = fnmatch(pat, pre, 0) == 0;
      free(pre);
      if (m)
        return xstrdup(val + cut);
    }
  } else {
    for (size_t k = 0; k <= n; k++) {
      size_t start = longest ? k : n - k;
      if (fnmatch(pat, val + start, 0) == 0)
        return xstrndup(val, start);
    }
  }
  return xstrdup(val);
}

/* ${...} body (between the braces). Appends to fields. */
static void expand_braced(struct interp *in, const char *body, size_t len, bool quoted,
                          struct fields *f) {
  /* $NAME and ${NAME}: the value as it is, no copies */
  size_t plain = 0;
  while (plain < len && (isalnum((unsigned char)body[plain]) || body[plain] == '_'))
    plain++;
  if (plain == len && len > 0 && !isdigit((unsigned char)body[0])) {
    struct sh_var *pv = var_find(in->env, body, len);
    if (pv && pv->n_values > 0) {
      f_value(f, pv->values[0], quoted);
      return;
    }
  }
  char *b = xstrndup(body, len);
  size_t nlen = 0;
  bool count = b[0] == '#' && len > 1;
  const char *name = b + (count ? 1 : 0);
  while (isalnum((unsigned char)name[nlen]) || name[nlen] == '_')
    nlen++;
  const char *rest = name + nlen;
  struct sh_var *v = nlen ? var_find(in->env, name, nlen) : NULL;
  bool set = v && v->n_values > 0;
  /* a copy: expanding the word below may reassign this very variable */
  char *val_copy = set ? xstrdup(v->values[0]) : NULL;
  const char *val = val_copy;
  char *owned = NULL;

  if (nlen == 0) {
    owned = join3(SH_UNRESOLVED_PREFIX "${", b, strlen(b), "}>");
  } else if (strncmp(rest, "[@]", 3) == 0 || strncmp(rest, "[*]", 3) == 0) {
    if (v && v->is_array) {
      f->empty_array = f->empty_array || v->n_values == 0;
      for (size_t i = 0; i < v->n_values; i++) {
        if (i > 0 && (quoted ? rest[1] == '@' : true))
          f_break(f);
        else if (i > 0)
          f_put(f, " ", 1);
        f_value(f, v->values[i], quoted);
      }
      free(b);
      free(val_copy);
      return;
    }
    if (v || in->env->unset_is_empty) {
      if (set)
        f_value(f, val, quoted);
      else
        f->empty_array = true;
      free(b);
      free(val_copy);
      return;
    }
    owned = join3(SH_UNRESOLVED_PREFIX "$", name, nlen, ">");
  } else if (count) {
    owned = set ? xasprintf("%zu", sh_is_unresolved(val) ? 0 : strlen(val)) : xstrdup("0");
    if (set && sh_is_unresolved(val)) {
      free(owned);
      owned = join3(SH_UNRESOLVED_PREFIX "${#", name, nlen, "}>");
    }
  } else if (*rest == '[') {
    const char *e = strchr(rest, ']');
    char *idx_s = e ? xstrndup(rest + 1, (size_t)(e - rest - 1)) : xstrdup("x");
    int idx;
    if (v && parse_int(idx_s, &idx) == 0 && idx >= 0 && (size_t)idx < v->n_values)
      owned = xstrdup(v->values[idx]);
    else
      owned = join3(SH_UNRESOLVED_PREFIX "${", b, strlen(b), "}>");
    free(idx_s);
  } else if (*rest == '\0') {
    owned = set ? xstrdup(val) : unset_value_alloc(in, name, nlen);
  } else if (rest[0] == ':' && rest[1] != '\0' && strchr("-=+?", rest[1])) {
    bool empty = !set || val[0] == '\0';
    char op = rest[1];
    char *word = expand_string(in, rest + 2);
    if (op == '+')
      owned = empty ? xstrdup("") : word;
    else if (empty && (op == '-' || op == '='))
      owned = word;
    else if (empty)
      owned = join3(SH_UNRESOLVED_PREFIX "$", name, nlen, ">");
    else
      owned = xstrdup(val);
    if (op == '=' && empty) {
      char *vname = xstrndup(name, nlen);
      sh_env_set(in->env, vname, owned);
      free(vname);
    }
    if (owned != word)
      free(word);
  } else if (rest[0] != '\0' && strchr("-=+?", rest[0])) {
    char op = rest[0];
    char *word = expand_string(in, rest + 1);
    if (op == '+')
      owned = set ? word : xstrdup("");
    else if (!set && (op == '-' || op == '='))
      owned = word;
    else if (!set)
      owned = join3(SH_UNRESOLVED_PREFIX "$", name, nlen, ">");
    else
      owned = xstrdup(val);
    if (owned != word)
      free(word);
  } else if (rest[0] == '%' || rest[0] == '#') {
    bool suffix = rest[0] == '%';
    bool longest = rest[1] == rest[0];
    char *pat = expand_string(in, rest + (longest ? 2 : 1));
    if (!set)
      owned = unset_value_alloc(in, name, nlen);
    else if (sh_is_unresolved(val) || sh_is_unresolved(pat))
      owned = join3(SH_UNRESOLVED_PREFIX "${", b, strlen(b), "}>");
    else
      owned = trim_pattern(val, pat, suffix, longest);
    free(pat);
  } else if (strcmp(rest, ",,") == 0 || strcmp(rest, "^^") == 0) {
    owned = set ? xstrdup(val) : join3(SH_UNRESOLVED_PREFIX "$", name, nlen, ">");
    if (set && owned && !sh_is_unresolved(owned))
      for (char *p = owned; p && *p; p++)
        *p = (char)(rest[0] == ',' ? tolower((unsigned char)*p) : toupper((unsigned char)*p));
  } else {
    owned = join3(SH_UNRESOLVED_PREFIX "${", b, strlen(b), "}>");
  }
  f_value(f, owned, quoted);
  free(owned);
  free(val_copy);
  free(b);
}

static char *command_subst_alloc(struct interp *in, const char *body, size_t len);

/* Length of a balanced group starting at s[0] == open. */
static size_t group_len(const char *s, char open, char close) {
  int level = 0;
  char q = 0;
  for (size_t i = 0; s[i]; i++) {
    char c = s[i];
    if (q) {
      if (c == '\\' && q == '"' && s[i + 1])
        i++;
      else if (c == q)
        q = 0;
      continue;
    }
    if (c == '\\' && s[i + 1]) {
      i++;
      continue;
    }
    if ((c == '\'' && open == '(') || c == '"') {
      q = c;
      continue;
    }
    if (c == open)
      level++;
    else if (c == close && --level == 0)
      return i + 1;
  }
  return strlen(s);
}

/* Expands a $-form at s (s[0] == '$'); returns chars consumed. */
static size_t expand_dollar(struct interp *in, const char *s, bool quoted, struct fields *f) {
  if (s[1] == '{') {
    size_t n = group_len(s + 1, '{', '}');
    expand_braced(in, s + 2, n >= 2 ? n - 2 : 0, quoted, f);
    return 1 + n;
  }
  if (s[1] == '(' && s[2] == '(') {
    size_t n = group_len(s + 1, '(', ')');
    char *v = arith_alloc(in, s + 3, n >= 4 ? n - 4 : 0);
    f_value(f, v, quoted);
    free(v);
    return 1 + n;
  }
  if (s[1] == '(') {
    size_t n = group_len(s + 1, '(', ')');
    char *v = command_subst_alloc(in, s + 2, n >= 2 ? n - 2 : 0);
    f_value(f, v, quoted);
    free(v);
    return 1 + n;
  }
  if (isalpha((unsigned char)s[1]) || s[1] == '_') {
    size_t n = 1;
    while (isalnum((unsigned char)s[n]) || s[n] == '_')
      n++;
    expand_braced(in, s + 1, n - 1, quoted, f);
    return n;
  }
  if (s[1] != '\0' && (isdigit((unsigned char)s[1]) || strchr("@*#?$!-", s[1]) != NULL)) {
    char *v = join3(SH_UNRESOLVED_PREFIX "$", s + 1, 1, ">");
    f_value(f, v, quoted);
    free(v);
    return 2;
  }
  f_put(f, "$", 1);
  return 1;
}

static void expand_into(struct interp *in, const char *raw, struct fields *f) {
  const char *p = raw;
  while (*p) {
    if (*p == '\'') {
      const char *e = strchr(p + 1, '\'');
      size_t n = e ? (size_t)(e - p - 1) : strlen(p + 1);
      f_put(f, p + 1, n);
      p += n + 1 + (e ? 1 : 0);
      continue;
    }
    if (*p == '"') {
      bool had_field = f->have_cur;
      size_t len_before = f->cur.len;
      f->empty_array = false;
      f->have_cur = true;
      p++;
      while (*p && *p != '"') {
        if (*p == '\\' && p[1] && strchr("\"\\$`\n", p[1])) {
          f_put(f, p + 1, 1);
          p += 2;
        } else if (*p == '$') {
          p += expand_dollar(in, p, true, f);
        } else if (*p == '`') {
          const char *e = strchr(p + 1, '`');
          size_t n = e ? (size_t)(e - p - 1) : strlen(p + 1);
          char *v = command_subst_alloc(in, p + 1, n);
          f_put(f, v, strlen(v));
          free(v);
          p += n + 1 + (e ? 1 : 0);
        } else {
          size_t run = strcspn(p, "\"\\$`"); /* a literal stretch at once */
          f_put(f, p, run ? run : 1);
          p += run ? run : 1;
        }
      }
      if (*p == '"')
        p++;
      /* "${EMPTY[@]}" alone is no word at all, unlike "" */
      if (f->empty_array && !had_field && f->cur.len == len_before)
        f->have_cur = false;
      f->empty_array = false;
      continue;
    }
    if (*p == '\\' && p[1]) {
      f_put(f, p + 1, 1);
      p += 2;
      continue;
    }
    if (*p == '$') {
      p += expand_dollar(in, p, false, f);
      continue;
    }
    if (*p == '`') {
      const char *e = strchr(p + 1, '`');
      size_t n = e ? (size_t)(e - p - 1) : strlen(p + 1);
      char *v = command_subst_alloc(in, p + 1, n);
      f_value(f, v, false);
      free(v);
      p += n + 1 + (e ? 1 : 0);
      continue;
    }
    size_t run = strcspn(p, "'\"\\$`"); /* a literal stretch at once */
    f_put(f, p, run ? run : 1);
    p += run ? run : 1;
  }
}

static void fields_take(struct fields *f, char ***out, size_t *n_out) {
  f_break(f);
  if (f->n && !*out) { /* the fields are the vector */
    *out = f->v;
    *n_out = f->n;
  } else if (f->n) {
    size_t cap = 4; /* what strv_push_owned's doubling holds for that many */
    while (cap < *n_out + f->n)
      cap *= 2;
    *out = xreallocarray(*out, cap, sizeof **out);
    memcpy(*out + *n_out, f->v, f->n * sizeof **out);
    *n_out += f->n;
    free(f->v);
  } else {
    free(f->v);
  }
  sbuf_free(&f->cur);
}

/* A word that expands to itself: no quotes, escapes or expansions (the
 * reader does no pathname or tilde expansion). */
static bool is_literal(const char *raw) {
  return raw[0] && !raw[strcspn(raw, "$'\"\\`")];
}

/* One string: fields joined by a space (assignment values never split). */
static char *expand_string(struct interp *in, const char *raw) {
  if (is_literal(raw))
    return xstrdup(raw);
  struct fields f = {0};
  /* inside an assignment or ${x:-word}, unquoted expansions do not split */
  const char *p = raw;
  struct sbuf out = {0};
  expand_into(in, p, &f);
  f_break(&f);
  if (f.n == 1) { /* the field is the string */
    char *one = f.v[0];
    free(f.v);
    sbuf_free(&f.cur);
    return one;
  }
  for (size_t i = 0; i < f.n; i++) {
    if (i)
      sbuf_putc(&out, ' ');
    sbuf_puts(&out, f.v[i]);
    free(f.v[i]);
  }
  free(f.v);
  sbuf_free(&f.cur);
  return out.data ? sbuf_take(&out) : xstrdup("");
}

void sh_expand_word(struct sh_env *env, const char *raw, char ***fields, size_t *n_fields) {
  long steps_left = SH_MAX_STEPS;
  struct interp in = {.env = env, .steps_left = &steps_left};
  struct fields f = {0};
  expand_into(&in, raw, &f);
  fields_take(&f, fields, n_fields);
  frames_free(in.frames, in.n_frames);
}

static void expand_words(struct interp *in, const struct sh_word *w, size_t n, char ***out,
                         size_t *n_out) {
  for (size_t i = 0; i < n; i++) {
    if (is_literal(w[i].raw)) {
      recipe_strv_push(out, n_out, w[i].raw);
      continue;
    }
    struct fields f = {0};
    expand_into(in, w[i].raw, &f);
    fields_take(&f, out, n_out);
  }
}

/* ---------------------------------------------------------------- tests */
static bool is_number(const char *s, long *v) {
  return parse_long(s, v) == 0;
}

/* Evaluates [[ ... ]] / [ ... ] / test over expanded operands. */
static enum tri eval_test_words(struct interp *in, char **w, size_t n, bool dbl);

static enum tri tri_not(enum tri t) {
  return t == T_UNKNOWN ? T_UNKNOWN : t == T_TRUE ? T_FALSE : T_TRUE;
}

static enum tri tri_or(enum tri a, enum tri b) {
  if (a == T_TRUE || b == T_TRUE)
    return T_TRUE;
  if (a == T_UNKNOWN || b == T_UNKNOWN)
    return T_UNKNOWN;
  return T_FALSE;
}

/* De Morgan holds in this three-valued logic (Kleene's). */
static enum tri tri_and(enum tri a, enum tri b) {
  return tri_not(tri_or(tri_not(a), tri_not(b)));
}

static enum tri eval_primary(struct interp *in, char **w, size_t n) {
  if (n == 0)
    return T_FALSE;
  if (n == 1)
    return sh_is_unresolved(w[0]) ? T_UNKNOWN : w[0][0] ? T_TRUE : T_FALSE;
  if (n == 2 && w[0][0] == '-') {
    const char *op = w[0], *a = w[1];
    if (sh_is_unresolved(a))
      return T_UNKNOWN;
    if (strcmp(op, "-z") == 0)
      return a[0] == '\0' ? T_TRUE : T_FALSE;
    if (strcmp(op, "-n") == 0)
      return a[0] != '\0' ? T_TRUE : T_FALSE;
    if (op[1] != '\0' && strchr("fdesrx", op[1]) && op[2] == '\0') {
      if (in->rec && strstr(a, "benchmarks/")) {
        struct sh_result *r = in->rec;
        recipe_strv_push(&r->probes, &r->n_probes, a);
        r->probe_lines = xreallocarray(r->probe_lines, r->n_probes, sizeof *r->probe_lines);
        r->probe_lines[r->n_probes - 1] = in->cur_line;
      }
      if (!in->env->root_dir || a[0] == '/')
        return T_UNKNOWN;
      char *path = path_join_alloc(in->env->root_dir, a);
      struct stat st;
      enum tri t = T_FALSE;
      if (stat(path, &st) == 0) {
        if (op[1] == 'f')
          t = S_ISREG(st.st_mode) ? T_TRUE : T_FALSE;
        else if (op[1] == 'd')
          t = S_ISDIR(st.st_mode) ? T_TRUE : T_FALSE;
        else if (op[1] == 's')
          t = st.st_size > 0 ? T_TRUE : T_FALSE;
        else
          t = T_TRUE;
      }
      free(path);
      return t;
    }
    return T_UNKNOWN;
  }
  if (n == 3) {
    const char *a = w[0], *op = w[1], *b = w[2];
    if (sh_is_unresolved(a) || sh_is_unresolved(b))
      return T_UNKNOWN;
    if (strcmp(op, "==") == 0 || strcmp(op, "=") == 0)
      return fnmatch(b, a, 0) == 0 ? T_TRUE : T_FALSE;
    if (strcmp(op, "!=") == 0)
      return fnmatch(b, a, 0) == 0 ? T_FALSE : T_TRUE;
    long x, y;
    if (op[0] == '-' && is_number(a, &x) && is_number(b, &y)) {
      if (strcmp(op, "-eq") == 0) return x == y ? T_TRUE : T_FALSE;
      if (strcmp(op, "-ne") == 0) return x != y ? T_TRUE : T_FALSE;
      if (strcmp(op, "-lt") == 0) return x < y ? T_TRUE : T_FALSE;
      if (strcmp(op, "-le") == 0) return x <= y ? T_TRUE : T_FALSE;
      if (strcmp(op, "-gt") == 0) return x > y ? T_TRUE : T_FALSE;
      if (strcmp(op, "-ge") == 0) return x >= y ? T_TRUE : T_FALSE;
    }
    return T_UNKNOWN;
  }
  return T_UNKNOWN;
}

static enum tri eval_test_words(struct interp *in, char **w, size_t n, bool dbl) {
  const char *and_op = dbl ? "&&" : "-a", *or_op = dbl ? "||" : "-o";
  /* lowest precedence first: || then && */
  int level = 0;
  for (size_t i = n; i-- > 0;) {
    if (strcmp(w[i], ")") == 0) level++;
    else if (strcmp(w[i], "(") == 0) level--;
    else if (level == 0 && strcmp(w[i], or_op) == 0)
      return tri_or(eval_test_words(in, w, i, dbl), eval_test_words(in, w + i + 1, n - i - 1, dbl));
  }
  level = 0;
  for (size_t i = n; i-- > 0;) {
    if (strcmp(w[i], ")") == 0) level++;
    else if (strcmp(w[i], "(") == 0) level--;
    else if (level == 0 && strcmp(w[i], and_op) == 0)
      return tri_and(eval_test_words(in, w, i, dbl), eval_test_words(in, w + i + 1, n - i - 1, dbl));
  }
  if (n > 0 && strcmp(w[0], "!") == 0)
    return tri_not(eval_test_words(in, w + 1, n - 1, dbl));
  if (n >= 2 && strcmp(w[0], "(") == 0 && strcmp(w[n - 1], ")") == 0)
    return eval_test_words(in, w + 1, n - 2, dbl);
  return eval_primary(in, w, n);
}

/* ---------------------------------------------------------------- commands */
static bool is_name_char(char c, bool first) {
  return isalpha((unsigned char)c) || c == '_' || (!first && isdigit((unsigned char)c));
}

/* "NAME=..." or "NAME+=..." (raw word); *val_at points after '='. */
static bool is_assignment(const char *raw, size_t *name_len, bool *append, const char **val_at) {
  size_t i = 0;
  if (!is_name_char(raw[0], true))
    return false;
  while (is_name_char(raw[i], false))
    i++;
  *append = false;
  if (raw[i] == '+' && raw[i + 1] == '=') {
    *append = true;
    *name_len = i;
    *val_at = raw + i + 2;
    return true;
  }
  if (raw[i] != '=')
    return false;
  *name_len = i;
  *val_at = raw + i + 1;
  return true;
}

/* The assignment line of B when raw is only "$B" / $B / "${B}" / ${B}; 0
 * otherwise. */
static int alias_line(const struct interp *in, const char *raw) {
  const char *p = raw;
  bool dq = *p == '"';
  p += dq;
  if (*p++ != '$')
    return 0;
  bool br = *p == '{';
  p += br;
  size_t n = 0;
  while (is_name_char(p[n], n == 0))
    n++;
  const char *e = p + n;
  if (n == 0 || (br && *e++ != '}') || (dq && *e++ != '"') || *e)
    return 0;
  struct sh_var *v = var_find(in->env, p, n);
  return v ? v->line : 0;
}

static const struct sh_script *indexed_body(const struct sh_script *s, const char *text,
                                            size_t len);

static void assign(struct interp *in, const char *raw, int line, bool exported, enum tri m) {
  size_t nlen;
  bool append;
  const char *val_at;
  if (!is_assignment(raw, &nlen, &append, &val_at))
    return;
  char *name = xstrndup(raw, nlen);
  /* expand first: expansion can add variables (${X:=y}) and move the table */
  if (val_at[0] == '(') {
    size_t blen = strlen(val_at);
    size_t inner = blen >= 2 && val_at[blen - 1] == ')' ? blen - 2 : blen - 1;
    struct sh_script own = {0};
    const struct sh_script *body = indexed_body(in->s, val_at + 1, inner);
    if (!body && sh_parse(val_at + 1, inner, in->s ? in->s->file : "", &own, NULL) == 0)
      body = &own;
    char **elems = NULL;
    size_t n_elems = 0;
    for (size_t c = 0; body && c < body->n_cmds; c++)
      expand_words(in, body->cmds[c].words, body->cmds[c].n_words, &elems, &n_elems);
    sh_script_fini(&own);
    struct sh_var *v = var_get_or_add(in->env, name);
    v->exported = v->exported || exported;
    v->line = line;
    if (!append || !v->is_array) {
      if (!append)
        var_clear(v);
      v->is_array = true;
    }
    if (m == T_UNKNOWN) {
      /* a conditional array edit: its content is not known statically */
      char *mark = xasprintf(SH_UNRESOLVED_PREFIX "%s%s(...) at line %d>", name,
                             append ? "+=" : "=", line);
      if (!append)
        var_clear(v);
      recipe_strv_push(&v->values, &v->n_values, mark);
      free(mark);
    } else {
      for (size_t i = 0; i < n_elems; i++)
        recipe_strv_push_owned(&v->values, &v->n_values, elems[i]);
      n_elems = 0; /* moved */
    }
    str_vec_free(elems, n_elems);
    free(name);
    return;
  }
  char *val = expand_string(in, val_at);
  int origin = alias_line(in, val_at); /* A="$B": A's value was built where B's was */
  struct sh_var *v = var_get_or_add(in->env, name);
  v->exported = v->exported || exported;
  v->line = origin > 0 ? origin : line;
  if (append && v->n_values > 0) {
    char *joined = join3(v->values[v->n_values - 1], val, strlen(val), "");
    free(val);
    val = joined;
  }
  if (m == T_UNKNOWN && !(v->n_values == 1 && strcmp(v->values[0], val) == 0)) {
    free(val);
    val = join3(SH_UNRESOLVED_PREFIX "$", name, strlen(name), ">");
  }
  if (v->is_array && append && v->n_values > 0) {
    free(v->values[v->n_values - 1]);
    v->values[v->n_values - 1] = val;
  } else {
    var_clear(v);
    v->is_array = false;
    recipe_strv_push_owned(&v->values, &v->n_values, val); /* room for a later X+=(...) */
  }
  free(name);
}

/* Drops redirections (and their targets) from expanded-command raw words. */
static size_t strip_redirects(const struct sh_word *w, size_t n, struct sh_word *out) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    const char *r = w[i].raw;
    if (strncmp(r, "<<HEREDOC:", 10) == 0)
      continue;
    if ((r[0] == '>' || r[0] == '<') && r[1] != '(') {
      if (!strchr(r, '&') && i + 1 < n)
        i++; /* skip the target */
      continue;
    }
    out[k++] = w[i];
  }
  return k;
}

static void launch_fini(struct sh_launch *l) {
  str_vec_free(l->env, l->n_env);
  str_vec_free(l->words, l->n_words);
  memset(l, 0, sizeof *l);
}

void sh_result_fini(struct sh_result *r) {
  launch_fini(&r->server);
  launch_fini(&r->bench);
  free(r->bench_script);
  str_vec_free(r->probes, r->n_probes);
  free(r->probe_lines);
  str_vec_free(r->bench_env, r->n_bench_env);
  memset(r, 0, sizeof *r);
}

static void collect_exports(struct interp *in, char ***env, size_t *n_env) {
  for (size_t i = 0; i < in->env->n_vars; i++) {
    struct sh_var *v = &in->env->vars[i];
    if (v->exported && v->n_values > 0) {
      char *kv = join3(v->name, "=", 1, v->values[0]);
      recipe_strv_push(env, n_env, kv);
      free(kv);
    }
  }
}

/* Programs that name a path without running it. */
static bool only_names_paths(const char *prog) {
  static const char *const progs[] = {"echo", "printf", "cat", "ls", "cp", "mv", "rm", "mkdir",
                                      "chmod", "sed", "grep", "touch", "tee", "head", "tail",
                                      "wc", "basename", "dirname", "realpath", "readlink",
                                      "diff", "git", "stat", "file"};
  const char *base = strrchr(prog, '/') ? strrchr(prog, '/') + 1 : prog;
  for (size_t i = 0; i < ST_ARRAY_LEN(progs); i++)
    if (strcmp(base, progs[i]) == 0)
      return true;
  return false;
}

/* The line where the value naming `base` was built: a raw word that writes
 * benchmarks/ itself is built on its own line; otherwise the assignment of
 * the variable it expands whose value holds the script's name. */
static int built_line(const struct interp *in, const struct sh_word *w, size_t n, const char *base,
                      int fallback) {
  for (size_t i = 0; i < n; i++) {
    const char *raw = w[i].raw;
    if (strstr(raw, "benchmarks/"))
      return w[i].line;
    for (const char *p = strchr(raw, '$'); p; p = strchr(p + 1, '$')) {
      const char *q = p + 1 + (p[1] == '{');
      size_t len = 0;
      while (is_name_char(q[len], len == 0))
        len++;
      struct sh_var *v = len ? var_find(in->env, q, len) : NULL;
      if (v && v->n_values > 0 && strstr(v->values[0], base))
        return v->line > 0 ? v->line : w[i].line;
    }
  }
  return fallback;
}

/* Which variables the command that runs a script hands it: a container
 * started with `docker run` (or podman) sees only its -e/--env list (and a
 * --env-file, which cannot be read statically: then all are assumed);
 * anything else (bash, srun --export=ALL, enroot) passes the environment. */
static void note_passed_env(struct sh_result *r, char **w, size_t n) {
  str_vec_free(r->bench_env, r->n_bench_env);
  r->bench_env = NULL;
  r->n_bench_env = 0;
  r->bench_env_listed = false;
  size_t i = 0;
  for (; i < n && i < 4; i++) {
    const char *base = strrchr(w[i], '/') ? strrchr(w[i], '/') + 1 : w[i];
    if ((strcmp(base, "docker") == 0 || strcmp(base, "podman") == 0) && i + 1 < n &&
        (strcmp(w[i + 1], "run") == 0 || strcmp(w[i + 1], "exec") == 0))
      break;
  }
  if (i >= n || i >= 4)
    return;
  for (size_t k = i + 2; k < n; k++) {
    const char *a = w[k], *name = NULL;
    if (strcmp(a, "--env-file") == 0 || str_starts_with(a, "--env-file="))
      return; /* not readable statically: everything may pass */
    if ((strcmp(a, "-e") == 0 || strcmp(a, "--env") == 0) && k + 1 < n)
      name = w[++k];
    else if (str_starts_with(a, "--env="))
      name = a + 6;
    else if (str_starts_with(a, "-e") && a[2] != '\0' && a[2] != '-')
      name = a + 2;
    if (name) {
      char *nm = xstrndup(name, strcspn(name, "="));
      recipe_strv_push_owned(&r->bench_env, &r->n_bench_env, nm);
    }
  }
  r->bench_env_listed = true;
}

/* Records a benchmarks/...sh path that the command runs (launchers). */
static void note_bench_script(struct interp *in, const struct sh_word *raw, size_t n_raw, char **w,
                              size_t n, int line) {
  if (!in->rec || n == 0 || only_names_paths(w[0]))
    return;
  for (size_t i = 0; i < n; i++) {
    const char *p = w[i];
    while (*p) {
      while (*p && isspace((unsigned char)*p))
        p++;
      const char *s = p;
      while (*p && !isspace((unsigned char)*p))
        p++;
      size_t len = (size_t)(p - s);
      if (len > 3 && memcmp(s + len - 3, ".sh", 3) == 0 && memmem(s, len, "benchmarks/", 11) &&
          !memmem(s, len, "benchmark_lib", 13)) {
        const char *b = memmem(s, len, "benchmarks/", 11);
        struct sh_result *r = in->rec;
        free(r->bench_script);
        r->bench_script = xstrndup(b, len - (size_t)(b - s));
        r->bench_script_line = line;
        const char *base = strrchr(r->bench_script, '/') + 1;
        r->bench_script_built_line = built_line(in, raw, n_raw, base, line);
        note_passed_env(r, w, n);
      }
    }
  }
}

static int find_fn(struct interp *in, const char *name) {
  for (size_t i = 0; i < in->n_fns; i++)
    if (strcmp(in->fn_names[i], name) == 0)
      return (int)i;
  return -1;
}

static void run_range(struct interp *in, size_t first, size_t end);

/* Interprets text (a `bash -c` string of the command at `line`, raw words w)
 * in a subshell; a benchmark script it runs is recorded at that line. */
static void run_string(struct interp *in, const char *text, enum tri m, int line,
                       const struct sh_word *w, size_t n) {
  if (in->depth >= 8 || sh_is_unresolved(text))
    return;
  struct sh_script sub;
  if (sh_parse(text, strlen(text), in->s ? in->s->file : "", &sub, NULL) < 0)
    return;
  struct sh_result dummy = {0};
  struct interp child = {.s = &sub, .env = in->env, .res = &dummy, .rec = in->rec,
                         .depth = in->depth + 1, .last_status = T_TRUE,
                         .steps_left = in->steps_left};
  if (m == T_UNKNOWN)
    push(&child, F_GROUP, T_UNKNOWN);
  struct sh_var *saved = vars_copy(in->env->vars, in->env->n_vars);
  size_t n_saved = in->env->n_vars;
  char *before = in->rec && in->rec->bench_script ? xstrdup(in->rec->bench_script) : NULL;
  run_range(&child, 0, sub.n_cmds);
  drop_frames(&child, 0);
  vars_free(in->env->vars, in->env->n_vars);
  in->env->vars = saved;
  in->env->n_vars = n_saved;
  struct sh_result *r = in->rec;
  if (r && r->bench_script && (!before || strcmp(before, r->bench_script) != 0)) {
    r->bench_script_line = line;
    r->bench_script_built_line =
        built_line(in, w, n, strrchr(r->bench_script, '/') + 1, line);
  }
  free(before);
  free(child.frames);
  str_vec_free(child.fn_names, child.n_fns);
  free(child.fn_first);
  free(child.fn_end);
  sh_result_fini(&dummy);
  sh_script_fini(&sub);
}

/* `exit` in mode m: ends the innermost ( ... ) or, outside one, the script
 * (or the $(...) being read). In an undecided branch it only may: what
 * follows in a subshell becomes uncertain, the script goes on. */
static void exit_here(struct interp *in, enum tri m) {
  for (size_t i = in->n_frames; i-- > 0;) {
    struct frame *f = &in->frames[i];
    if (f->kind != F_SUBSHELL)
      continue;
    if (m == T_TRUE)
      f->state = T_FALSE;
    else if (f->state == T_TRUE)
      f->state = T_UNKNOWN;
    return;
  }
  if (m == T_TRUE)
    in->stopped = true;
}

/* A simple command in mode m (TRUE or UNKNOWN). Returns its status. */
static enum tri simple_command(struct interp *in, const struct sh_cmd *c, const struct sh_word *w,
                               size_t n, enum tri m) {
  in->cur_line = c->line;
  /* leading assignments */
  size_t first = 0;
  size_t nlen;
  bool append;
  const char *val_at;
  while (first < n && is_assignment(w[first].raw, &nlen, &append, &val_at))
    first++;
  if (first == n) {
    for (size_t i = 0; i < n; i++)
      assign(in, w[i].raw, w[i].line, false, m);
    return T_TRUE;
  }
  const char *cmd = w[first].raw;
  if (cmd[0] && strchr("edlrtu[:f(", cmd[0])) { /* a builtin read here starts so */
    if (strcmp(cmd, "export") == 0 || strcmp(cmd, "declare") == 0 || strcmp(cmd, "local") == 0 ||
        strcmp(cmd, "readonly") == 0 || strcmp(cmd, "typeset") == 0) {
      bool exported = strcmp(cmd, "export") == 0;
      for (size_t i = first + 1; i < n; i++) {
        if (w[i].raw[0] == '-') {
          exported = exported || strchr(w[i].raw, 'x') != NULL;
          continue;
        }
        if (is_assignment(w[i].raw, &nlen, &append, &val_at)) {
          assign(in, w[i].raw, w[i].line, exported, m);
        } else if (exported) {
          struct sh_var *v = var_find(in->env, w[i].raw, strlen(w[i].raw));
          if (v)
            v->exported = true;
        }
      }
      return T_TRUE;
    }
    if (strcmp(cmd, "unset") == 0) {
      for (size_t i = first + 1; i < n; i++) {
        struct sh_var *v = var_find(in->env, w[i].raw, strlen(w[i].raw));
        if (v && m == T_TRUE)
          var_clear(v);
      }
      return T_TRUE;
    }
    if (strcmp(cmd, "[[") == 0 || strcmp(cmd, "[") == 0 || strcmp(cmd, "test") == 0) {
      bool dbl = cmd[1] == '[';
      size_t end = n;
      if (cmd[0] == '[' && end > first + 1 && strcmp(w[end - 1].raw, dbl ? "]]" : "]") == 0)
        end--;
      char **ev = NULL;
      size_t n_ev = 0;
      for (size_t i = first + 1; i < end; i++) {
        /* operators stay words; operands expand to one string */
        recipe_strv_push_owned(&ev, &n_ev, expand_string(in, w[i].raw));
      }
      enum tri t = eval_test_words(in, ev, n_ev, dbl);
      str_vec_free(ev, n_ev);
      return t;
    }
    if (strcmp(cmd, "true") == 0 || strcmp(cmd, ":") == 0)
      return T_TRUE;
    if (strcmp(cmd, "false") == 0)
      return T_FALSE;
    if (strcmp(cmd, "exit") == 0) {
      exit_here(in, m);
      return T_UNKNOWN;
    }
    if (strcmp(cmd, "((") == 0 || strncmp(cmd, "((", 2) == 0) {
      size_t len = strlen(cmd);
      char *v = arith_alloc(in, cmd + 2, len >= 4 ? len - 4 : 0);
      enum tri t = sh_is_unresolved(v) ? T_UNKNOWN : strcmp(v, "0") != 0 ? T_TRUE : T_FALSE;
      free(v);
      return t;
    }
  }
  int fn = find_fn(in, cmd);
  if (fn >= 0 && in->depth < 8) {
    in->depth++;
    size_t saved = in->n_frames;
    if (m == T_UNKNOWN)
      push(in, F_GROUP, T_UNKNOWN);
    run_range(in, in->fn_first[fn], in->fn_end[fn]);
    drop_frames(in, saved);
    in->depth--;
    return T_UNKNOWN;
  }
  /* echo and printf outside $(...) print where nothing reads: their words
   * are not expanded, unless expanding them could assign or run something */
  if (!in->capture && (strcmp(cmd, "echo") == 0 || strcmp(cmd, "printf") == 0) &&
      !(first + 1 < n && strcmp(w[first + 1].raw, "-v") == 0)) {
    bool effects = false;
    for (size_t i = first + 1; i < n && !effects; i++)
      effects = strstr(w[i].raw, "$(") || strchr(w[i].raw, '`') || strstr(w[i].raw, ":=");
    if (!effects)
      return T_UNKNOWN;
  }
  /* expand the command words */
  char **ew = NULL;
  size_t n_ew = 0;
  expand_words(in, w + first, n - first, &ew, &n_ew);
  if (in->capture) {
    if (n_ew > 0 && strcmp(ew[0], "echo") == 0) {
      size_t i = 1;
      bool newline = true;
      if (i < n_ew && strcmp(ew[i], "-n") == 0)
        newline = false, i++;
      for (size_t k = i; k < n_ew; k++) {
        if (k > i)
          sbuf_putc(in->capture, ' ');
        sbuf_puts(in->capture, ew[k]);
      }
      if (newline)
        sbuf_putc(in->capture, '\n');
      if (m == T_UNKNOWN)
        in->capture_unknown = true;
    } else if (n_ew > 1 && strcmp(ew[0], "printf") == 0 && !strchr(ew[1], '%')) {
      sbuf_puts(in->capture, ew[1]);
      if (m == T_UNKNOWN)
        in->capture_unknown = true;
    } else if (n_ew > 2 && strcmp(ew[0], "printf") == 0 && strcmp(ew[1], "%s") == 0) {
      for (size_t k = 2; k < n_ew; k++)
        sbuf_puts(in->capture, ew[k]);
      if (m == T_UNKNOWN)
        in->capture_unknown = true;
    } else {
      in->capture_unknown = true;
      str_vec_free(ew, n_ew);
      return T_UNKNOWN;
    }
    str_vec_free(ew, n_ew);
    return T_TRUE;
  }
  /* record what the reader looks for */
  const char *engine = NULL;
  size_t prog = eng_recognise_launch(ew, n_ew, &engine);
  struct sh_launch *rec = NULL;
  if (prog && (in->res->server.n_words == 0 || (in->res->server.conditional && m == T_TRUE))) {
    launch_fini(&in->res->server);
    in->res->server_engine = engine;
    in->res->program_words = prog;
    rec = &in->res->server;
  } else if (n_ew > 0 && strcmp(ew[0], "run_benchmark_serving") == 0 &&
             (in->res->bench.n_words == 0 || (in->res->bench.conditional && m == T_TRUE))) {
    launch_fini(&in->res->bench);
    rec = &in->res->bench;
  }
  if (rec) {
    collect_exports(in, &rec->env, &rec->n_env);
    for (size_t i = 0; i < first; i++) {
      char *kv = expand_string(in, w[i].raw);
      recipe_strv_push(&rec->env, &rec->n_env, kv);
      free(kv);
    }
    /* `env K=V prog`: the assignments belong to env */
    size_t skip = 0;
    if (n_ew > 0 && strcmp(ew[0], "env") == 0) {
      skip = 1;
      while (skip < n_ew && strchr(ew[skip], '=') && is_name_char(ew[skip][0], true)) {
        recipe_strv_push(&rec->env, &rec->n_env, ew[skip]);
        skip++;
      }
      if (rec == &in->res->server)
        in->res->program_words -= skip;
    }
    for (size_t i = skip; i < n_ew; i++)
      recipe_strv_push(&rec->words, &rec->n_words, ew[i]);
    rec->line = c->line;
    rec->conditional = m != T_TRUE;
    const struct sh_result *r = in->res;
    bool server = r->server.n_words > 0 && !r->server.conditional;
    bool bench = r->bench.n_words > 0 && !r->bench.conditional;
    if (!in->capture && ((in->env->stop == SH_STOP_AFTER_SERVER && server) ||
                         (in->env->stop == SH_STOP_AFTER_BENCH && server && bench)))
      in->stopped = true;
  }
  note_bench_script(in, w + first, n - first, ew, n_ew, c->line);
  /* `bash -c STRING` (also behind srun, docker, timeout): STRING is read
   * like the script around it, in a subshell */
  for (size_t i = 0; i + 2 < n_ew && i < 24; i++) {
    const char *base = strrchr(ew[i], '/') ? strrchr(ew[i], '/') + 1 : ew[i];
    if ((strcmp(base, "bash") == 0 || strcmp(base, "sh") == 0) && strcmp(ew[i + 1], "-c") == 0) {
      run_string(in, ew[i + 2], m, c->line, w + first, n - first);
      break;
    }
  }
  str_vec_free(ew, n_ew);
  return T_UNKNOWN;
}


/* The state of a { ... } or ( ... ) opening here: the current mode, and
 * the && / || it follows (then its commands do not apply it again). */
static enum tri group_state(struct interp *in, const struct sh_cmd *c, bool *conn_used) {
  if (mode(in) == T_FALSE)
    return T_FALSE;
  if (*conn_used || (c->connector != '&' && c->connector != '|'))
    return T_TRUE;
  *conn_used = true;
  return c->connector == '&' ? in->last_status : tri_not(in->last_status);
}

/* Whether keyword k closes a frame (fi, esac, done, }, and ) inside a
 * subshell), and which kind into *kind. */
static bool closes_frame(const struct interp *in, const char *k, enum frame_kind *kind) {
  static const struct {
    const char *word;
    enum frame_kind kind;
  } closers[] = {
      {"fi", F_IF}, {"esac", F_CASE}, {"done", F_LOOP}, {"}", F_GROUP}, {")", F_SUBSHELL},
  };
  for (size_t i = 0; i < ST_ARRAY_LEN(closers); i++) {
    if (strcmp(k, closers[i].word) != 0)
      continue;
    *kind = closers[i].kind;
    return *kind != F_SUBSHELL || in_frame(in, F_SUBSHELL);
  }
  return false;
}

/* Applies connector logic and runs one command (words w) in the current mode. */
static void command_words(struct interp *in, const struct sh_cmd *c, const struct sh_word *w,
                          size_t n) {
  bool negate = false;
  bool conn_used = false;

  while (n > 0) {
    const char *k = w[0].raw;
    struct frame *f = top(in);
    /* case arms: "pat)" or "pat1|pat2)" expected */
    if (f && f->kind == F_CASE && f->case_expect_pattern && strcmp(k, "esac") != 0) {
      size_t j = 0;
      while (j < n && w[j].raw[strlen(w[j].raw) - 1] != ')')
        j++;
      if (j == n)
        break;
      struct sbuf pat = {0};
      for (size_t q = 0; q <= j; q++)
        sbuf_puts(&pat, w[q].raw);
      char *p = pat.data;
      p[strlen(p) - 1] = '\0';
      if (*p == '(')
        p++;
      enum tri arm = T_FALSE;
      if (parent_mode(in) == T_FALSE || f->any_true) {
        arm = T_FALSE;
      } else if (!f->case_subject) {
        arm = T_UNKNOWN;
      } else {
        char *save = NULL;
        for (char *alt = strtok_r(p, "|", &save); alt; alt = strtok_r(NULL, "|", &save)) {
          char *pe = expand_string(in, alt);
          if (sh_is_unresolved(pe))
            arm = arm == T_TRUE ? T_TRUE : T_UNKNOWN;
          else if (fnmatch(pe, f->case_subject, 0) == 0)
            arm = T_TRUE;
          free(pe);
        }
        if (arm == T_FALSE && f->any_unknown)
          arm = T_FALSE;
      }
      f->state = arm;
      f->any_true |= arm == T_TRUE;
      f->any_unknown |= arm == T_UNKNOWN;
      f->case_expect_pattern = false;
      sbuf_free(&pat);
      w += j + 1;
      n -= j + 1;
      continue;
    }
    if (k[0] == '\0' || !strchr(";iedtfcwus{()}!n", k[0]))
      break; /* no keyword starts so (assignments, most commands) */
    if (strcmp(k, ";;") == 0) {
      if (f && f->kind == F_CASE)
        f->case_expect_pattern = true, f->state = T_FALSE;
      goto done;
    }
    if (strcmp(k, "if") == 0 || strcmp(k, "elif") == 0) {
      if (k[0] == 'i') {
        f = push(in, F_IF, T_FALSE);
      } else if (!f || f->kind != F_IF) {
        goto done;
      }
      f->state = T_FALSE; /* the condition runs in the parent's mode */
      f->awaiting = true;
      f->cond = T_UNKNOWN;
      w++, n--;
      in->n_frames--;
      enum tri pm = mode(in);
      in->n_frames++;
      if (pm != T_FALSE && n > 0) {
        in->n_frames--;
        f->cond = simple_command(in, c, w, n, pm);
        in->n_frames++;
        f = top(in);
      }
      goto done;
    }
    if (strcmp(k, "then") == 0) {
      if (f && f->kind == F_IF && f->awaiting) {
        enum tri pm = parent_mode(in);
        enum tri st = pm == T_FALSE || f->any_true ? T_FALSE : f->cond;
        f->state = st;
        f->any_true |= st == T_TRUE;
        f->any_unknown |= st == T_UNKNOWN;
        f->awaiting = false;
      }
      w++, n--;
      continue;
    }
    if (strcmp(k, "else") == 0) {
      if (f && f->kind == F_IF) {
        f->state = parent_mode(in) == T_FALSE || f->any_true ? T_FALSE
                   : f->any_unknown                          ? T_UNKNOWN
                                                             : T_TRUE;
      }
      w++, n--;
      continue;
    }
    enum frame_kind closed;
    if (closes_frame(in, k, &closed)) {
      pop(in, closed);
      w++, n--;
      continue;
    }
    if (strcmp(k, "case") == 0) {
      enum tri pm = mode(in);
      f = push(in, F_CASE, T_FALSE);
      f->case_expect_pattern = true;
      if (n >= 2 && pm != T_FALSE) {
        char *subj = expand_string(in, w[1].raw);
        if (sh_is_unresolved(subj))
          free(subj);
        else
          f->case_subject = subj;
      }
      goto done;
    }
    if (strcmp(k, "for") == 0 || strcmp(k, "while") == 0 || strcmp(k, "until") == 0 ||
        strcmp(k, "select") == 0) {
      f = push(in, F_LOOP, T_FALSE);
      f->awaiting = true;
      goto done; /* the loop header is not followed */
    }
    if (strcmp(k, "do") == 0) {
      if (f && f->kind == F_LOOP && f->awaiting) {
        f->state = parent_mode(in) == T_FALSE ? T_FALSE : T_UNKNOWN;
        f->awaiting = false;
      }
      w++, n--;
      continue;
    }
    if (strcmp(k, "{") == 0) {
      enum tri st = group_state(in, c, &conn_used);
      push(in, F_GROUP, st);
      w++, n--;
      continue;
    }
    if (strcmp(k, "(") == 0) {
      enum tri st = group_state(in, c, &conn_used);
      struct frame *sub = push(in, F_SUBSHELL, st);
      sub->saved_vars = vars_copy(in->env->vars, in->env->n_vars);
      sub->n_saved_vars = in->env->n_vars;
      w++, n--;
      continue;
    }
    if (strcmp(k, "!") == 0) {
      negate = !negate;
      w++, n--;
      continue;
    }
    if (strcmp(k, "time") == 0 || strcmp(k, "exec") == 0 || strcmp(k, "nohup") == 0) {
      w++, n--;
      continue;
    }
    break;
  }
  if (n == 0)
    goto done;
  /* inside an if/elif condition chain ("if a && b; then") */
  struct frame *f = top(in);
  if (f && f->kind == F_IF && f->awaiting && c->connector) {
    enum tri pm = parent_mode(in);
    if (pm != T_FALSE) {
      in->n_frames--;
      enum tri t = simple_command(in, c, w, n, pm);
      in->n_frames++;
      f = top(in);
      f->cond = c->connector == '&' ? tri_and(f->cond, t)
                : c->connector == '|' ? tri_or(f->cond, t)
                                      : t;
    }
    goto done;
  }
  if (f && f->kind == F_LOOP && f->awaiting)
    goto done;
  enum tri m = mode(in);
  if (m == T_FALSE)
    goto done;
  /* a && b, a || b: decided by the previous status when known */
  if (!conn_used && (c->connector == '&' || c->connector == '|')) {
    enum tri prev = in->last_status;
    enum tri run = c->connector == '&' ? prev : tri_not(prev);
    if (run == T_FALSE)
      return; /* skipped: the list's status stays the previous one */
    if (run == T_UNKNOWN)
      m = T_UNKNOWN;
  }
  enum tri st = simple_command(in, c, w, n, m);
  in->last_status = negate ? tri_not(st) : st;
  return;
done:
  in->last_status = T_UNKNOWN;
}

static void command(struct interp *in, size_t idx) {
  const struct sh_cmd *c = &in->s->cmds[idx];
  struct sh_word stack[64];
  struct sh_word *ws = c->n_words <= ST_ARRAY_LEN(stack)
                           ? stack
                           : xreallocarray(NULL, c->n_words, sizeof *ws);
  size_t n = strip_redirects(c->words, c->n_words, ws);
  /* "... )" closes a subshell after its last command */
  bool closes = n > 1 && strcmp(ws[n - 1].raw, ")") == 0 && in_frame(in, F_SUBSHELL);
  command_words(in, c, ws, closes ? n - 1 : n);
  if (closes)
    pop(in, F_SUBSHELL);
  if (ws != stack)
    free(ws);
}

/* "name" of "name()": bash allows '-', '.' and ':' besides identifier
 * characters; "A=()" is an empty array, not a function. */
static bool is_function_name(const char *s, size_t len) {
  for (size_t i = 0; i < len; i++)
    if (!is_name_char(s[i], i == 0) && !(i > 0 && strchr("-.:", s[i])))
      return false;
  return len > 0;
}

/* Function definitions: "name() {" or "function name {" ... matching "}". */
static bool function_def(struct interp *in, size_t idx, size_t end, size_t *resume) {
  const struct sh_cmd *c = &in->s->cmds[idx];
  const struct sh_word *w = c->words;
  size_t n = c->n_words;
  char *name = NULL;
  size_t brace_at;
  if (n >= 2 && strcmp(w[0].raw, "function") == 0) {
    name = xstrdup(w[1].raw);
    size_t l = strlen(name);
    if (l > 2 && strcmp(name + l - 2, "()") == 0)
      name[l - 2] = '\0';
    brace_at = 2;
  } else if (n >= 1 && strlen(w[0].raw) > 2 && str_ends_with(w[0].raw, "()") &&
             is_function_name(w[0].raw, strlen(w[0].raw) - 2)) {
    name = xstrndup(w[0].raw, strlen(w[0].raw) - 2);
    brace_at = 1;
  } else {
    return false;
  }
  /* body: from the "{" to the matching "}" (counted over command-leading words) */
  int depth = 0;
  size_t i = idx;
  size_t body_first = idx + 1;
  bool opened = brace_at < n && strcmp(w[brace_at].raw, "{") == 0;
  if (opened)
    depth = 1;
  for (i = idx + 1; i < end; i++) {
    const struct sh_cmd *b = &in->s->cmds[i];
    if (!opened) {
      if (b->n_words && strcmp(b->words[0].raw, "{") == 0) {
        opened = true;
        depth = 1;
        body_first = i;
      }
      continue;
    }
    for (size_t k = 0; k < b->n_words; k++) {
      if (strcmp(b->words[k].raw, "{") == 0 && k == 0)
        depth++;
      else if (strcmp(b->words[k].raw, "}") == 0 && (k == 0 || k == b->n_words - 1))
        depth--;
    }
    if (depth <= 0)
      break;
  }
  in->fn_names = xreallocarray(in->fn_names, in->n_fns + 1, sizeof *in->fn_names);
  in->fn_first = xreallocarray(in->fn_first, in->n_fns + 1, sizeof *in->fn_first);
  in->fn_end = xreallocarray(in->fn_end, in->n_fns + 1, sizeof *in->fn_end);
  in->fn_names[in->n_fns] = name;
  in->fn_first[in->n_fns] = body_first;
  in->fn_end[in->n_fns] = i < end ? i : end;
  in->n_fns++;
  *resume = i < end ? i + 1 : end;
  return true;
}

static void run_range(struct interp *in, size_t first, size_t end) {
  for (size_t i = first; i < end && !in->stopped;) {
    if (--*in->steps_left < 0) {
      in->stopped = true; /* a script a launcher would never run this long */
      break;
    }
    size_t resume;
    if (in->depth == 0 && function_def(in, i, end, &resume)) {
      i = resume;
      continue;
    }
    command(in, i);
    i++;
  }
}

/* Could running s change a variable? (Then $(s) needs its own copy.) */
static bool may_assign(struct interp *in, const struct sh_script *s) {
  static const char *const builtins[] = {"export", "declare", "local", "typeset", "readonly",
                                         "unset", "read", "(", "source", ".", "eval", "mapfile",
                                         "readarray", "printf"};
  for (size_t i = 0; i < s->n_cmds; i++) {
    const struct sh_cmd *c = &s->cmds[i];
    size_t nlen;
    bool append;
    const char *val_at;
    if (c->n_words == 0)
      continue;
    const char *w0 = c->words[0].raw;
    if (is_assignment(w0, &nlen, &append, &val_at) || find_fn(in, w0) >= 0)
      return true;
    for (size_t k = 0; k < ST_ARRAY_LEN(builtins); k++)
      if (strcmp(w0, builtins[k]) == 0 && !(k == ST_ARRAY_LEN(builtins) - 1 &&
                                             !(c->n_words > 1 && strcmp(c->words[1].raw, "-v") == 0)))
        return true;
    for (size_t k = 0; k < c->n_words; k++)
      if (strstr(c->words[k].raw, ":=") || strstr(c->words[k].raw, "$("))
        return true;
  }
  return false;
}

static uint64_t text_hash(const char *text, size_t len) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (size_t i = 0; i < len; i++)
    h = (h ^ (unsigned char)text[i]) * 1099511628211ull;
  return h;
}

/* The slot of text in s's index: where it is, or the empty slot it would
 * take. Keeps reading a script with many bodies linear (a scan of every body
 * per body was quadratic: 40,000 `$(...)` lines took 8.5 s). */
static size_t *sub_slot(const struct sh_script *s, const char *text, size_t len, uint64_t h) {
  size_t mask = s->n_sub_slots - 1;
  for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
    size_t *slot = &s->sub_slots[i];
    if (*slot == 0)
      return slot;
    const struct sh_sub *sub = &s->subs[*slot - 1];
    if (sub->hash == h && sub->len == len && memcmp(sub->text, text, len) == 0)
      return slot;
  }
}

static void add_body(struct sh_script *s, const char *text, size_t len, int depth) {
  uint64_t h = text_hash(text, len);
  if (s->n_sub_slots && *sub_slot(s, text, len, h) != 0)
    return;
  struct sh_script parsed;
  if (sh_parse_body(text, len, s->file ? s->file : "", &parsed, depth + 1) < 0)
    return; /* read again (and refused) where it is used */
  s->subs = xreallocarray(s->subs, s->n_subs + 1, sizeof *s->subs);
  s->subs[s->n_subs++] = (struct sh_sub){xstrndup(text, len), len, h, parsed};
  if (s->n_subs * 2 > s->n_sub_slots) { /* grow and re-index */
    free(s->sub_slots);
    s->n_sub_slots = s->n_sub_slots ? s->n_sub_slots * 2 : 16;
    s->sub_slots = xcalloc(s->n_sub_slots, sizeof *s->sub_slots);
    for (size_t i = 0; i < s->n_subs; i++)
      *sub_slot(s, s->subs[i].text, s->subs[i].len, s->subs[i].hash) = i + 1;
  } else {
    *sub_slot(s, text, len, h) = s->n_subs;
  }
}

void sh_index_bodies(struct sh_script *s, int depth) {
  for (size_t c = 0; c < s->n_cmds; c++)
    for (size_t k = 0; k < s->cmds[c].n_words; k++) {
      const char *raw = s->cmds[c].words[k].raw;
      size_t nlen;
      bool append;
      const char *val_at;
      if (is_assignment(raw, &nlen, &append, &val_at) && val_at[0] == '(') {
        size_t blen = strlen(val_at);
        add_body(s, val_at + 1, blen >= 2 && val_at[blen - 1] == ')' ? blen - 2 : blen - 1,
                 depth);
      }
      /* the outermost $( ) of the word only: the ones inside a body are
       * indexed when that body is parsed (indexing every level here made the
       * work exponential in the nesting) */
      for (const char *p = strstr(raw, "$("); p; p = strstr(p, "$(")) {
        if (p[2] == '(') {
          p += 3; /* $(( arithmetic )) */
          continue;
        }
        size_t n = group_len(p + 1, '(', ')');
        add_body(s, p + 2, n >= 2 ? n - 2 : 0, depth);
        p += 1 + n;
      }
    }
}

/* The parsed body text[0, len) of script s (NULL: not indexed). */
static const struct sh_script *indexed_body(const struct sh_script *s, const char *text,
                                            size_t len) {
  if (!s || !s->n_sub_slots)
    return NULL;
  size_t at = *sub_slot(s, text, len, text_hash(text, len));
  return at ? &s->subs[at - 1].parsed : NULL;
}

static char *command_subst_alloc(struct interp *in, const char *body, size_t len) {
  if (in->depth >= 8)
    return unresolved_alloc(body, len);
  const struct sh_script *known = indexed_body(in->s, body, len);
  struct sh_script own = {0};
  if (!known && sh_parse(body, len, in->s ? in->s->file : "", &own, NULL) < 0)
    return join3(SH_UNRESOLVED_PREFIX "$(", body, len, ")>");
  const struct sh_script *sub = known ? known : &own;
  struct sbuf out = {0};
  struct sh_result dummy = {0};
  struct interp child = {.s = sub, .env = in->env, .res = &dummy, .rec = in->rec,
                         .capture = &out, .depth = in->depth + 1, .last_status = T_TRUE,
                         .steps_left = in->steps_left};
  /* $(...) runs in a subshell: what it assigns stays there */
  bool assigns = may_assign(in, sub);
  struct sh_var *saved = assigns ? vars_copy(in->env->vars, in->env->n_vars) : NULL;
  size_t n_saved = in->env->n_vars;
  run_range(&child, 0, sub->n_cmds);
  drop_frames(&child, 0);
  if (assigns) {
    vars_free(in->env->vars, in->env->n_vars);
    in->env->vars = saved;
    in->env->n_vars = n_saved;
  }
  char *result;
  if (child.capture_unknown) {
    result = join3(SH_UNRESOLVED_PREFIX "$(", body, len, ")>");
  } else {
    while (out.len > 0 && out.data[out.len - 1] == '\n')
      out.data[--out.len] = '\0';
    result = out.data ? sbuf_take(&out) : xstrdup("");
  }
  sbuf_free(&out);
  free(child.frames);
  str_vec_free(child.fn_names, child.n_fns);
  free(child.fn_first);
  free(child.fn_end);
  sh_result_fini(&dummy);
  sh_script_fini(&own);
  return result;
}

void sh_run(const struct sh_script *s, struct sh_env *env, struct sh_result *out) {
  memset(out, 0, sizeof *out);
  long steps_left = SH_MAX_STEPS;
  struct interp in = {.s = s, .env = env, .res = out, .rec = out, .last_status = T_TRUE,
                      .steps_left = &steps_left};
  run_range(&in, 0, s->n_cmds);
  frames_free(in.frames, in.n_frames);
  str_vec_free(in.fn_names, in.n_fns);
  free(in.fn_first);
  free(in.fn_end);
}
