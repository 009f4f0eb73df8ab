/* The engine table, lookups, flag rows and knobs, the generic command-line
 * builder, launch recognition and the program paths given on the command
 * line. */
#include "engine/engine_internal.h"

#include <ctype.h>
#include <math.h>

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The descriptors, one per eng_<name>.c. */
extern const struct eng_ops eng_sim_ops;
extern const struct eng_ops eng_sglang_ops;
extern const struct eng_ops eng_vllm_ops;
extern const struct eng_ops eng_llamacpp_ops;

/* One row per engine, by name; the order is the one --help and messages list. */
static const struct eng_ops *const engines[] = {
    &eng_sim_ops,      /* sim: servetop's simulated SGLang server */
    &eng_sglang_ops,   /* sglang */
    &eng_vllm_ops,     /* vllm */
    &eng_llamacpp_ops, /* llamacpp: llama.cpp's llama-server */
};
#define N_ENGINES ST_ARRAY_LEN(engines)

size_t eng_count(void) { return N_ENGINES; }

const struct eng_ops *eng_at(size_t i) { return i < N_ENGINES ? engines[i] : NULL; }

const struct eng_ops *eng_find(const char *name) {
  if (!name)
    return NULL;
  for (size_t i = 0; i < N_ENGINES; i++)
    if (strcmp(engines[i]->name, name) == 0)
      return engines[i];
  return NULL;
}

const struct eng_ops *eng_sim(void) { return &eng_sim_ops; }

/* Not in the table: no recipe names it, nothing launches it. */
static const struct eng_ops eng_unknown_ops = {
    .name = "openai",
    .title = "an OpenAI-compatible server (engine unknown)",
};

const struct eng_ops *eng_unknown(void) { return &eng_unknown_ops; }

static char names_all[128], names_recipe[128], launch_forms[512];
static pthread_once_t names_once = PTHREAD_ONCE_INIT;

static void join_names(char *out, size_t out_bytes, bool recipe_only) {
  size_t n = 0, k = 0;
  for (size_t i = 0; i < N_ENGINES; i++)
    n += !recipe_only || engines[i]->recipe_engine;
  out[0] = '\0';
  for (size_t i = 0; i < N_ENGINES; i++) {
    if (recipe_only && !engines[i]->recipe_engine)
      continue;
    size_t used = strlen(out);
    snprintf(out + used, out_bytes - used, "%s%s", k == 0 ? "" : k + 1 == n ? " or " : ", ",
             engines[i]->name);
    k++;
  }
}

static void build_names(void) {
  join_names(names_all, sizeof names_all, false);
  join_names(names_recipe, sizeof names_recipe, true);
  for (size_t i = 0; i < N_ENGINES; i++) {
    size_t used = strlen(launch_forms);
    if (engines[i]->launch_forms)
      snprintf(launch_forms + used, sizeof launch_forms - used, "%s%s", used ? ", " : "",
               engines[i]->launch_forms);
  }
}

const char *eng_names(bool recipe_engines_only) {
  pthread_once(&names_once, build_names);
  return recipe_engines_only ? names_recipe : names_all;
}

const char *eng_launch_forms(void) {
  pthread_once(&names_once, build_names);
  return launch_forms;
}

const char *eng_program_of(const char *engine_name) {
  const struct eng_ops *e = eng_find(engine_name);
  return e && e->recipe_engine ? e->program : eng_sglang_ops.program;
}

const struct eng_ops *eng_for_framework(const char *framework) {
  for (size_t i = 0; framework && i < N_ENGINES; i++)
    for (const char *const *f = engines[i]->frameworks; f && *f; f++)
      if (strcmp(*f, framework) == 0)
        return engines[i];
  return NULL;
}

/* ---------------------------------------------------------------- flag rows */
/* The spellings InferenceX scripts use for the same flag on SGLang and vLLM
 * (and every engine servetop does not know). */
static const struct eng_flag shared_flags[] = {
    {{"--tp", "--tp-size", "--tensor-parallel-size"}, ENG_KNOB_NONE, ENG_VALUE_COUNT},
    {{"--ep", "--ep-size", "--expert-parallel-size"}, ENG_KNOB_NONE, ENG_VALUE_COUNT},
    {{"--dp", "--dp-size", "--data-parallel-size"}, ENG_KNOB_NONE, ENG_VALUE_COUNT},
    {{"--speculative-algorithm", "--speculative-algo"}, ENG_KNOB_NONE, ENG_VALUE_ANY},
    {{"--model-path", "--model"}, ENG_KNOB_MODEL, ENG_VALUE_ANY},
    {{NULL}, ENG_KNOB_NONE, ENG_VALUE_ANY},
};

/* Generic knob names, the same on every engine. */
static const struct {
  enum eng_knob knob;
  const char *names[2];
} generic_knobs[] = {
    {ENG_KNOB_KV_CACHE, {"kv-cache", "mem-fraction"}},
    {ENG_KNOB_BATCH_CAP, {"max-batch", "batch-cap"}},
};

const char *eng_generic_knobs_help(void) {
  return "kv-cache (alias mem-fraction: the KV cache size in the engine's unit, SGLang "
         "--mem-fraction-static, vLLM --gpu-memory-utilization), max-batch (alias batch-cap: "
         "requests decoded at once, SGLang --max-running-requests, vLLM --max-num-seqs)";
}

static const char *undashed(const char *spelling) {
  while (*spelling == '-')
    spelling++;
  return spelling;
}

static bool row_has(const struct eng_flag *f, const char *name, size_t len) {
  for (size_t k = 0; k < ST_ARRAY_LEN(f->names) && f->names[k]; k++) {
    const char *s = undashed(f->names[k]);
    if (strncmp(s, name, len) == 0 && s[len] == '\0')
      return true;
  }
  return false;
}

static const struct eng_flag *rows_find(const struct eng_flag *rows, const char *name, size_t len) {
  for (const struct eng_flag *f = rows; f && f->names[0]; f++)
    if (row_has(f, name, len))
      return f;
  return NULL;
}

static const struct eng_flag *rows_find_knob(const struct eng_flag *rows, enum eng_knob knob) {
  for (const struct eng_flag *f = rows; f && f->names[0]; f++)
    if (f->knob == knob)
      return f;
  return NULL;
}

static const struct eng_flag *shared_rows(const struct eng_ops *e) {
  return !e || e->shared_flags ? shared_flags : NULL;
}

static enum eng_knob generic_knob(const char *name, size_t len) {
  for (size_t i = 0; i < ST_ARRAY_LEN(generic_knobs); i++)
    for (size_t k = 0; k < ST_ARRAY_LEN(generic_knobs[i].names); k++)
      if (strlen(generic_knobs[i].names[k]) == len &&
          memcmp(generic_knobs[i].names[k], name, len) == 0)
        return generic_knobs[i].knob;
  return ENG_KNOB_NONE;
}

static const struct eng_flag *row_for_knob(const struct eng_ops *e, enum eng_knob knob) {
  const struct eng_flag *f = e ? rows_find_knob(e->flags, knob) : NULL;
  return f ? f : rows_find_knob(shared_rows(e), knob);
}

const struct eng_flag *eng_knob_row(const struct eng_ops *e, enum eng_knob knob) {
  return knob == ENG_KNOB_NONE ? NULL : row_for_knob(e, knob);
}

bool eng_knob_per_dp_rank(const struct eng_ops *e, enum eng_knob knob) {
  return knob == ENG_KNOB_GRAPH_BATCH || (knob == ENG_KNOB_BATCH_CAP && e && e->batch_cap_per_dp_rank);
}

const char *eng_gpu_memory_flag(const struct eng_ops *e) {
  const struct eng_flag *f = eng_knob_row(e, ENG_KNOB_KV_CACHE);
  return f && f->value == ENG_VALUE_FRACTION ? undashed(f->names[0]) : NULL;
}

/* The sim's own flags where the sim runs a recipe of e (itself, or standing in). */
static const struct eng_flag *sim_rows(const struct eng_ops *e) {
  return e && (e->simulated || e->sim_stands_in) ? eng_sim_own_flags : NULL;
}

const struct eng_flag *eng_flag_lookup(const struct eng_ops *e, const char *name, size_t len) {
  const struct eng_flag *f = e ? rows_find(e->flags, name, len) : NULL;
  if (!f)
    f = rows_find(shared_rows(e), name, len);
  if (!f)
    f = rows_find(sim_rows(e), name, len);
  if (!f) {
    enum eng_knob knob = generic_knob(name, len);
    if (knob != ENG_KNOB_NONE)
      f = row_for_knob(e, knob);
  }
  return f;
}

const char *eng_flag_spelling(const struct eng_flag *f, const char *name, size_t len) {
  for (size_t k = 0; k < ST_ARRAY_LEN(f->names) && f->names[k]; k++) {
    const char *s = undashed(f->names[k]);
    if (strlen(s) == len && memcmp(s, name, len) == 0)
      return f->names[k];
  }
  return f->names[0];
}

bool eng_arg_is_flag(const struct eng_ops *e, const char *arg) {
  if (arg[0] != '-')
    return false;
  if (arg[1] == '-')
    return true;
  if (arg[1] == '\0')
    return false;
  size_t len = strcspn(arg + 1, "=");
  const struct eng_flag *f = eng_flag_lookup(e, arg + 1, len);
  if (!f)
    return false;
  const char *spelling = eng_flag_spelling(f, arg + 1, len);
  return spelling[0] == '-' && spelling[1] != '-' && strlen(spelling) == len + 1;
}

static const char *knob_title(enum eng_knob knob) {
  return knob == ENG_KNOB_KV_CACHE ? "KV cache" : knob == ENG_KNOB_BATCH_CAP ? "batch cap" : "model";
}

/* A decimal number as Python's float() reads one: sign, digits, '.', exponent
 * (no hexadecimal, nan or inf, which C's strtod takes). */
static int parse_decimal(const char *s, double *out) {
  const char *p = s;
  if (*p == '+' || *p == '-')
    p++;
  bool digits = false;
  while (isdigit((unsigned char)*p))
    p++, digits = true;
  if (*p == '.')
    for (p++; isdigit((unsigned char)*p); p++)
      digits = true;
  if (!digits)
    return -1;
  if (*p == 'e' || *p == 'E') {
    p++;
    if (*p == '+' || *p == '-')
      p++;
    if (!isdigit((unsigned char)*p))
      return -1;
    while (isdigit((unsigned char)*p))
      p++;
  }
  if (*p || parse_double(s, out) != 0 || !isfinite(*out))
    return -1;
  return 0;
}

static int check_dotted(const struct eng_ops *e, const char *key, const char *value,
                        struct st_err *err);

int eng_check_knob(const struct eng_ops *e, const char *key, const char *value,
                   struct st_err *err) {
  key = undashed(key);
  size_t len = strlen(key);
  if (len == 0)
    return err_setf(err, "'%s': the knob needs a name (KEY=VALUE)", key);
  if (strchr(key, '.'))
    return check_dotted(e, key, value, err); /* HEAD.PATH[+]: a member of a JSON flag */
  for (size_t i = 0; i < len; i++) {
    char c = key[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
          c == '_'))
      return err_setf(err, "'%s' is not a flag name (letters, digits, '-', '_')", key);
  }
  const char *who = e ? e->title : "the engine";
  if (strcmp(key, "host") == 0 || strcmp(key, "port") == 0)
    return err_setf(err, "%s: servetop chooses the server's address (127.0.0.1 and a free port; "
                    "`servetop run --port N` sets the port), so --set %s would be ignored", key,
                    key);
  const struct eng_flag *f = eng_flag_lookup(e, key, len);
  enum eng_knob knob = generic_knob(key, len);
  if (!f && knob != ENG_KNOB_NONE)
    return err_setf(err, "%s: %s has no %s flag", key, who, knob_title(knob));
  /* another engine's KV-cache or batch-cap flag (SGLang's --mem-fraction-static
   * on vLLM): the engine would refuse it at launch; its own flag is named */
  for (size_t i = 0; !f && e && i < N_ENGINES; i++) {
    const struct eng_flag *other = rows_find(engines[i]->flags, key, len);
    if (engines[i] == e || engines[i]->simulated || !other || other->knob == ENG_KNOB_NONE ||
        other->knob == ENG_KNOB_MODEL) /* (the sim speaks SGLang's flags: SGLang names them) */
      continue;
    const struct eng_flag *own = row_for_knob(e, other->knob);
    const char *generic = other->knob == ENG_KNOB_KV_CACHE ? "kv-cache" : "max-batch";
    if (own)
      return err_setf(err, "%s is %s's %s flag, not %s's: %s takes %s (or %s=...)", key,
                      engines[i]->title, knob_title(other->knob), who, who, own->names[0], generic);
    return err_setf(err, "%s is %s's %s flag; %s has none", key, engines[i]->title,
                    knob_title(other->knob), who);
  }
  if (!f || !value)
    return 0;
  const char *flag = eng_flag_spelling(f, key, len);
  if (rows_find(sim_rows(e), key, len) == f)
    who = "servetop sim";
  long l;
  double d;
  switch (f->value) {
  case ENG_VALUE_ANY:
    return 0;
  case ENG_VALUE_NONE:
    return *value ? err_setf(err, "%s (%s of %s) takes no value, got '%s'", key, flag, who, value)
                  : 0;
  case ENG_VALUE_COUNT:
    if (parse_long(value, &l) != 0 || l < 1)
      return err_setf(err, "%s=%s: %s of %s takes a whole number >= 1", key, value, flag, who);
    return 0;
  case ENG_VALUE_COUNT_OR_AUTO:
    if (parse_long(value, &l) != 0 || (l < 1 && l != -1))
      return err_setf(err, "%s=%s: %s of %s takes a whole number >= 1 (or -1: auto)", key, value,
                      flag, who);
    return 0;
  case ENG_VALUE_NATURAL:
    if (parse_long(value, &l) != 0 || l < 0)
      return err_setf(err, "%s=%s: %s of %s takes a whole number >= 0", key, value, flag, who);
    return 0;
  case ENG_VALUE_INT:
    if (parse_long(value, &l) != 0)
      return err_setf(err, "%s=%s: %s of %s takes a whole number", key, value, flag, who);
    return 0;
  case ENG_VALUE_FRACTION:
    if (parse_decimal(value, &d) != 0 || !(d > 0 && d <= 1))
      return err_setf(err, "%s=%s: %s of %s takes a decimal fraction in (0, 1]", key, value, flag,
                      who);
    return 0;
  case ENG_VALUE_POSITIVE:
    if (parse_decimal(value, &d) != 0 || !(d > 0))
      return err_setf(err, "%s=%s: %s of %s takes a decimal number > 0", key, value, flag, who);
    return 0;
  case ENG_VALUE_NONNEG:
    if (parse_decimal(value, &d) != 0 || !(d >= 0))
      return err_setf(err, "%s=%s: %s of %s takes a decimal number >= 0", key, value, flag, who);
    return 0;
  case ENG_VALUE_PROBABILITY:
    if (parse_decimal(value, &d) != 0 || !(d >= 0 && d <= 1))
      return err_setf(err, "%s=%s: %s of %s takes a decimal number in [0, 1]", key, value, flag,
                      who);
    return 0;
  case ENG_VALUE_JSON: /* the engine parses it */
    return *value ? 0 : err_setf(err, "%s: %s of %s takes a JSON value (%s='{...}')", key, flag,
                                 who, key);
  }
  return 0;
}

/* Edit distance of a and b, capped: anything above cap reads cap + 1. */
static size_t edit_distance(const char *a, const char *b, size_t cap) {
  size_t la = strlen(a), lb = strlen(b);
  if (la > 64 || lb > 64 || (la > lb ? la - lb : lb - la) > cap)
    return cap + 1;
  size_t row[65];
  for (size_t j = 0; j <= lb; j++)
    row[j] = j;
  for (size_t i = 1; i <= la; i++) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= lb; j++) {
      size_t up = row[j];
      size_t best = diag + (a[i - 1] != b[j - 1]);
      if (row[j] + 1 < best)
        best = row[j] + 1;
      if (row[j - 1] + 1 < best)
        best = row[j - 1] + 1;
      row[j] = best;
      diag = up;
    }
  }
  return row[lb] > cap ? cap + 1 : row[lb];
}

struct nearest {
  const char *key;
  const char *best;
  size_t dist;
};

static void consider(struct nearest *n, const char *name) {
  name = undashed(name);
  size_t d = edit_distance(n->key, name, 3);
  if (d < n->dist) {
    n->dist = d;
    n->best = name;
  }
}

static void consider_rows(struct nearest *n, const struct eng_flag *rows) {
  for (const struct eng_flag *f = rows; f && f->names[0]; f++)
    for (size_t k = 0; k < ST_ARRAY_LEN(f->names) && f->names[k]; k++)
      consider(n, f->names[k]);
}

static _Thread_local bool help_never_runs_here;

void eng_help_flags_never_run_here(void) {
  help_never_runs_here = true;
}

bool eng_help_flags_may_run(void) {
  return !help_never_runs_here;
}

/* Is key one of the names in list? With a flexible parser (vLLM's), also as
 * it reads '_' for '-' and --no-NAME. */
static bool list_has(const char *const *list, bool flexible, const char *key) {
  char name[128];
  snprintf(name, sizeof name, "%s", key);
  if (flexible) {
    for (char *c = name; *c; c++)
      if (*c == '_')
        *c = '-';
  }
  const char *bare = flexible && strncmp(name, "no-", 3) == 0 ? name + 3 : NULL;
  for (const char *const *f = list; f && *f; f++)
    if (strcmp(*f, name) == 0 || (bare && strcmp(*f, bare) == 0))
      return true;
  return false;
}

/* ---------------------------------------------------------------- dotted JSON keys
 * vLLM's parser (FlexibleArgumentParser.parse_args) takes --HEAD.a.b VALUE as
 * {"a": {"b": VALUE}} for HEAD, and --HEAD.a+ V1,V2 as {"a": ["V1", "V2"]};
 * it gathers every dotted argument of one HEAD into one JSON and passes it as
 * --HEAD JSON after all the other arguments. eng_ops.dotted_json_flags says
 * an engine's parser does this; its ENG_VALUE_JSON rows are the HEADs. */
static bool flag_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_';
}

/* head (len bytes) as engine e's parser reads a flag name: '_' is '-' where
 * it is flexible. */
static void flag_name_as_read(const struct eng_ops *e, const char *head, size_t len, char *out,
                              size_t out_bytes) {
  snprintf(out, out_bytes, "%.*s", (int)len, head);
  for (char *c = out; e && e->flexible_flags && *c; c++)
    if (*c == '_')
      *c = '-';
}

/* "compilation-config, speculative-config, ..." (e's JSON flags) into out. */
static void json_flag_names(const struct eng_ops *e, char *out, size_t out_bytes) {
  out[0] = '\0';
  for (const struct eng_flag *f = e->flags; f && f->names[0]; f++)
    if (f->value == ENG_VALUE_JSON) {
      size_t used = strlen(out);
      snprintf(out + used, out_bytes - used, "%s%s", used ? ", " : "", undashed(f->names[0]));
    }
}

/* key (without dashes) holds a '.': is it HEAD.PATH or HEAD.PATH+, HEAD one
 * of engine e's JSON flags, each member letters, digits, '_' and '-'? value
 * NULL: not looked at; else it must not be empty (the engine parses it). */
static int check_dotted(const struct eng_ops *e, const char *key, const char *value,
                        struct st_err *err) {
  const char *who = e ? e->title : "the engine";
  if (!e || !e->dotted_json_flags)
    return err_setf(err, "'%s': %s has no dotted (JSON) flags: --set takes a flag name "
                    "(letters, digits, '-', '_')", key, who);
  size_t len = strlen(key), end = len > 0 && key[len - 1] == '+' ? len - 1 : len, seg = 0;
  for (size_t i = 0; i <= end; i++) {
    if (i < end && flag_char(key[i])) {
      seg++;
      continue;
    }
    if ((i < end && key[i] != '.') || seg == 0)
      return err_setf(err, "'%s' is neither a flag name nor a dotted JSON key (FLAG.member"
                      "[.member...] or FLAG.member+ for a list element: letters, digits, '-', "
                      "'_' between the dots)", key);
    seg = 0;
  }
  size_t head_len = strcspn(key, ".");
  char head[128], json_flags[512];
  flag_name_as_read(e, key, head_len, head, sizeof head);
  const struct eng_flag *row = rows_find(e->flags, head, strlen(head));
  json_flag_names(e, json_flags, sizeof json_flags);
  if (row && row->value == ENG_VALUE_JSON) {
    if (value && !*value)
      return err_setf(err, "%s: a member of %s of %s takes a value (%s=VALUE; %s parses it)", key,
                      row->names[0], who, key, who);
    return 0;
  }
  if (row || eng_flag_lookup(e, head, strlen(head)) || list_has(e->all_flags, e->flexible_flags, head))
    return err_setf(err, "%s: --%s of %s takes a plain value, not JSON members: --set %s=VALUE "
                    "(its JSON flags, whose members a dotted key sets: %s)", key, head, who, head,
                    json_flags);
  struct nearest n = {.key = head, .dist = 4};
  for (const struct eng_flag *f = e->flags; f && f->names[0]; f++)
    if (f->value == ENG_VALUE_JSON)
      consider(&n, f->names[0]);
  if (n.best && n.dist <= 3)
    return err_setf(err, "%s: %s is not a JSON flag of %s; did you mean %s%s?", key, head, who,
                    n.best, key + head_len);
  return err_setf(err, "%s: %s is not a JSON flag of %s (a dotted key sets a member of one: %s)",
                  key, head, who, json_flags);
}

/* A dotted key where the recipe's command gives HEAD whole (--HEAD '{json}'):
 * the engine's parser passes the dotted members as one more --HEAD JSON after
 * every other argument, and argparse keeps the last value of a flag, so the
 * recipe's JSON would be dropped, not merged (vLLM: the dataclass and dict
 * flags are plain store arguments, vllm/engine/arg_utils.py get_kwargs). */
static int check_dotted_against(const struct eng_ops *e, const char *key, char *const *argv,
                                size_t argc, struct st_err *err) {
  char head[128];
  flag_name_as_read(e, key, strcspn(key, "."), head, sizeof head);
  for (size_t i = 0; i < argc; i++) {
    size_t prefix;
    if (!eng_arg_matches(e, argv[i], head, &prefix))
      continue;
    const char *whole = argv[i][prefix] == '=' ? argv[i] + prefix + 1
                        : eng_arg_takes_value(e, argv, argc, i) ? argv[i + 1]
                                                                 : "";
    return err_setf(err, "%s: the recipe gives --%s whole ('%s'); %s reads dotted keys as one more "
                    "--%s after every other argument and keeps the last, so the recipe's other "
                    "members would be dropped, not merged: write the recipe's --%s as dotted "
                    "members, or --set %s='{...}' whole", key, head, whole, e->title, head, head,
                    head);
  }
  return 0;
}

int eng_check_knob_name(const struct eng_ops *e, const char *key, char *const *argv, size_t argc,
                        struct st_err *err) {
  key = undashed(key);
  size_t len = strlen(key);
  if (strchr(key, '.'))
    return check_dotted(e, key, NULL, err) != 0 ? -1
                                                : check_dotted_against(e, key, argv, argc, err);
  if (eng_flag_lookup(e, key, len) || generic_knob(key, len) != ENG_KNOB_NONE)
    return 0;
  for (size_t i = 0; i < argc; i++) {
    const char *a = argv[i];
    if (a[0] != '-')
      continue;
    const char *name = undashed(a);
    if (strncmp(name, key, len) == 0 && (name[len] == '\0' || name[len] == '='))
      return 0;
  }
  const char *const *listed = e && e->help_flags ? e->help_flags() : NULL;
  bool from_help = listed != NULL;
  if (!listed && e)
    listed = e->all_flags;
  if (list_has(listed, e && e->flexible_flags, key))
    return 0;
  struct nearest n = {.key = key, .dist = 4};
  consider_rows(&n, e ? e->flags : NULL);
  consider_rows(&n, shared_rows(e));
  consider_rows(&n, sim_rows(e));
  for (size_t i = 0; i < ST_ARRAY_LEN(generic_knobs); i++)
    for (size_t k = 0; k < ST_ARRAY_LEN(generic_knobs[i].names); k++)
      consider(&n, generic_knobs[i].names[k]);
  for (size_t i = 0; i < argc; i++)
    if (argv[i][0] == '-' && argv[i][1]) {
      char name[128];
      snprintf(name, sizeof name, "%.*s", (int)strcspn(undashed(argv[i]), "="), undashed(argv[i]));
      consider(&n, name);
      if (n.best == name + 0) /* keep the text past this scope */
        n.best = argv[i] + (undashed(argv[i]) - argv[i]);
    }
  for (const char *const *f = listed; f && *f; f++)
    consider(&n, *f);
  const char *who = e ? e->title : "the engine";
  if (!listed && n.dist > 2)
    return 0; /* no full list of its flags: only a near miss is known to be wrong */
  char whose[200] = "";
  if (from_help)
    snprintf(whose, sizeof whose, " (its --help)");
  else if (listed && e->all_flags_source)
    snprintf(whose, sizeof whose, " (%s)", e->all_flags_source);
  if (n.best && n.dist <= 3)
    return err_setf(err, "%s is not a flag of %s%s; did you mean %.*s? (a flag servetop does "
                    "not know: --server-arg)", key, who, whose, (int)strcspn(n.best, "="),
                    n.best);
  return err_setf(err, "%s is not a flag of %s%s; servetop's generic knobs: kv-cache, "
                  "max-batch (a flag servetop does not know: --server-arg)", key, who,
                  whose[0] ? whose : " (its --help lists them)");
}

static const char *flag_name(const char *arg, size_t *len) {
  const char *name = arg + (arg[1] == '-' ? 2 : 1);
  *len = strcspn(name, "=");
  return name;
}

/* eng_arg_matches with key's row (or NULL) looked up already. */
static bool arg_is_key(const struct eng_ops *e, const char *arg, const char *key, size_t key_len,
                       const struct eng_flag *key_row, size_t *prefix_len) {
  if (!eng_arg_is_flag(e, arg))
    return false;
  size_t len;
  const char *name = flag_name(arg, &len);
  *prefix_len = (size_t)(name - arg) + len;
  /* the same row, or for flags no row has, the same name; an argument can
   * only be key's row under one of its spellings or its generic name */
  if (!key_row)
    return key_len == len && memcmp(key, name, len) == 0;
  if (!row_has(key_row, name, len) && generic_knob(name, len) == ENG_KNOB_NONE)
    return false;
  return eng_flag_lookup(e, name, len) == key_row;
}

bool eng_arg_matches(const struct eng_ops *e, const char *arg, const char *key,
                     size_t *prefix_len) {
  size_t key_len = strlen(key);
  return arg_is_key(e, arg, key, key_len, eng_flag_lookup(e, key, key_len), prefix_len);
}

bool eng_arg_takes_value(const struct eng_ops *e, char *const *argv, size_t argc, size_t i) {
  size_t len;
  const char *name = flag_name(argv[i], &len);
  const struct eng_flag *row = eng_flag_lookup(e, name, len);
  if (row && row->value == ENG_VALUE_NONE)
    return false;
  return i + 1 < argc && !eng_arg_is_flag(e, argv[i + 1]);
}

const char *eng_arg_value(const struct eng_ops *e, char *const *argv, size_t argc,
                          const char *key) {
  const char *found = NULL;
  size_t key_len = strlen(key);
  const struct eng_flag *key_row = eng_flag_lookup(e, key, key_len);
  for (size_t i = 0; i < argc; i++) {
    size_t prefix;
    if (!arg_is_key(e, argv[i], key, key_len, key_row, &prefix))
      continue;
    if (argv[i][prefix] == '=')
      found = argv[i] + prefix + 1;
    else
      found = eng_arg_takes_value(e, argv, argc, i) ? argv[i + 1] : "";
  }
  return found; /* the last occurrence wins, as with argparse */
}

int eng_batch_cap_from_args(const struct eng_ops *e, char *const *argv, size_t argc) {
  const struct eng_flag *f = row_for_knob(e, ENG_KNOB_BATCH_CAP);
  const char *v = f ? eng_arg_value(e, argv, argc, undashed(f->names[0])) : NULL;
  long n;
  return v && parse_long(v, &n) == 0 && n > 0 && n <= INT_MAX ? (int)n : -1;
}

/* ---------------------------------------------------------------- command lines */
/* Matches "--name" and "--name=value"; *has_inline_value says which. */
static bool flag_is(const char *arg, const char *name, bool *has_inline_value) {
  size_t n = strlen(name);
  if (strncmp(arg, name, n) != 0)
    return false;
  if (arg[n] == '\0') {
    *has_inline_value = false;
    return true;
  }
  if (arg[n] == '=') {
    *has_inline_value = true;
    return true;
  }
  return false;
}

int eng_build_cmd(const struct eng_ops *e, struct launch_cmd *cmd, const struct eng_target *t,
                  struct st_err *err) {
  if (t->port <= 0 || t->port > 65535)
    return err_setf(err, "launcher: port %d out of range", t->port);
  const char *host = t->host ? t->host : "127.0.0.1";
  if (e->program_words(cmd, t, err) != 0)
    return -1;
  if (e->model_flag && t->model && *t->model &&
      !eng_arg_value(e, t->server_args, t->n_server_args, undashed(e->model_flag))) {
    launch_cmd_add_arg(cmd, e->model_flag);
    launch_cmd_add_arg(cmd, t->model);
  }
  for (size_t i = 0; i < t->n_server_args; i++) {
    const char *arg = t->server_args[i];
    bool inline_value;
    if (flag_is(arg, "--port", &inline_value) || flag_is(arg, "--host", &inline_value)) {
      if (!inline_value)
        i++; /* drop the value too; ours are appended below */
      continue;
    }
    launch_cmd_add_arg(cmd, arg);
  }
  for (const char *const *a = e->always_args; a && *a; a++) {
    bool given = false;
    for (size_t i = 0; i < t->n_server_args && !given; i++)
      given = strcmp(t->server_args[i], *a) == 0;
    if (!given)
      launch_cmd_add_arg(cmd, *a);
  }
  char port_text[16];
  snprintf(port_text, sizeof(port_text), "%d", t->port);
  launch_cmd_add_arg(cmd, "--host");
  launch_cmd_add_arg(cmd, host);
  launch_cmd_add_arg(cmd, "--port");
  launch_cmd_add_arg(cmd, port_text);

  for (size_t i = 0; i < t->n_env; i++) {
    const char *eq = strchr(t->env[i], '=');
    if (!eq || eq == t->env[i])
      return err_setf(err, "launcher: environment entry '%s' is not NAME=VALUE", t->env[i]);
    char *name = xstrndup(t->env[i], (size_t)(eq - t->env[i]));
    launch_cmd_set_env(cmd, name, eq + 1);
    free(name);
  }
  if (t->gpus && *t->gpus) {
    launch_cmd_set_env(cmd, "CUDA_VISIBLE_DEVICES", t->gpus);
    launch_cmd_set_env(cmd, "HIP_VISIBLE_DEVICES", t->gpus);
  }
  return 0;
}

/* ---------------------------------------------------------------- recipes */
size_t eng_recognise_launch(char *const *words, size_t n, const char **engine_name) {
  for (size_t i = 0; i + 1 < n && i < 6; i++) {
    for (size_t k = 0; k < N_ENGINES; k++) {
      size_t end = engines[k]->recognise ? engines[k]->recognise(words, n, i) : 0;
      if (end) {
        *engine_name = engines[k]->name;
        return end;
      }
    }
    /* servers servetop recognises in InferenceX scripts but does not drive */
    if (strcmp(words[i], "-m") == 0 && strncmp(words[i + 1], "atom.entrypoints", 16) == 0) {
      *engine_name = NULL;
      return i + 2;
    }
  }
  return 0;
}

/* ATOM's --method values that are speculative decoding. */
static bool is_spec_method(const char *v) {
  while (*v == '"' || *v == '\'')
    v++;
  return strncmp(v, "mtp", 3) == 0 || strncmp(v, "dspark", 6) == 0 || strncmp(v, "eagle", 5) == 0;
}

bool eng_word_enables_spec(const char *w, const char *next) {
  if (strstr(w, "--speculative-") || strstr(w, "speculative_config") ||
      strstr(w, "speculative-config") || strstr(w, "--num-speculative-tokens") ||
      strstr(w, "--draft-model"))
    return true;
  if (strcmp(w, "--method") == 0)
    return next && is_spec_method(next);
  for (const char *p = strstr(w, "--method"); p; p = strstr(p + 1, "--method")) {
    const char *v = p + 8;
    if (*v != ' ' && *v != '=' && *v != '\t')
      continue;
    while (*v == ' ' || *v == '=' || *v == '\t')
      v++;
    if (is_spec_method(v))
      return true;
  }
  return false;
}

const char *const *eng_spec_switch_flags(void) {
  static const char *const flags[] = {"speculative-algorithm", "speculative-algo",
                                      "speculative-config", NULL};
  return flags;
}

bool eng_args_enable_spec(const char *engine_name, char *const *argv, size_t argc) {
  const struct eng_ops *e = eng_find(engine_name);
  if (e && e->enables_spec && e->enables_spec(argv, argc)) /* the engine's own flags */
    return true;
  for (size_t i = 0; i < argc; i++)
    if (eng_word_enables_spec(argv[i], i + 1 < argc ? argv[i + 1] : NULL))
      return true;
  return false;
}

const char *eng_args_spec_problem(const char *engine_name, char *const *argv, size_t argc) {
  const struct eng_ops *e = eng_find(engine_name);
  return e && e->spec_problem ? e->spec_problem(argv, argc) : NULL;
}

bool eng_args_spec_advice(const char *engine_name, char *const *argv, size_t argc,
                          char *const *env, size_t n_env, char *buf, size_t buf_bytes,
                          const char **flag) {
  const struct eng_ops *e = eng_find(engine_name);
  return e && e->spec_advice && e->spec_advice(argv, argc, env, n_env, buf, buf_bytes, flag);
}

/* ---------------------------------------------------------------- program paths */
static char program_paths[N_ENGINES][PATH_MAX];

int eng_set_program_path(const char *program, const char *path, struct st_err *err) {
  for (size_t i = 0; i < N_ENGINES; i++) {
    if (!engines[i]->program || strcmp(engines[i]->program, program) != 0)
      continue;
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || access(path, X_OK) != 0)
      return err_setf(err, "--%s %s: not an executable file", program, path);
    if (strlen(path) >= sizeof program_paths[i])
      return err_setf(err, "--%s: path too long", program);
    snprintf(program_paths[i], sizeof program_paths[i], "%s", path);
    return 0;
  }
  return err_setf(err, "no engine launches a program called %s", program);
}

const char *eng_program_path(const struct eng_ops *e) {
  for (size_t i = 0; i < N_ENGINES; i++)
    if (engines[i] == e)
      return program_paths[i][0] ? program_paths[i] : NULL;
  return NULL;
}
