/* recipe module internals: the YAML tree, the static shell reader and the set. */
#ifndef SERVETOP_RECIPE_RECIPE_INTERNAL_H
#define SERVETOP_RECIPE_RECIPE_INTERNAL_H

#include "recipe/recipe.h"

#include "engine/engine.h"
#include "util/util.h"

/* ---------------------------------------------------------------- YAML tree
 * A plain tree built from libyaml events, with the start mark of every node.
 * Anchors and aliases are refused (no InferenceX file uses them, and an alias
 * can make a cycle). */
enum ynode_kind { YN_SCALAR, YN_SEQ, YN_MAP };

struct ynode {
  enum ynode_kind kind;
  int line, col;          /* 1-based */
  char *scalar;           /* YN_SCALAR */
  bool quoted;            /* scalar was quoted: never a number or bool */
  struct ynode **kids;    /* YN_SEQ: items; YN_MAP: key, value, key, value... */
  size_t n_kids;
};

/* NULL with err "file:line:col: problem (context)" on a syntax error. */
struct ynode *ytree_parse(const char *data, size_t len, const char *file, struct st_err *err);
void ytree_free(struct ynode *node);
const struct ynode *ymap_get(const struct ynode *map, const char *key);
size_t ymap_len(const struct ynode *map);
/* YAML 1.1 integers: digits with optional '_' separators and sign. */
int yscalar_long(const struct ynode *node, long *out);

/* ---------------------------------------------------------------- shell reader
 * Reads a bash script statically: tokens with their lines, then an
 * interpretation for a given environment that tracks literal variables,
 * arrays, if/case branches (decided when their test is known), and records
 * the server launch and the run_benchmark_serving call. Nothing is executed. */
struct sh_word {
  char *raw;              /* as written, quotes included */
  int line;
};

struct sh_cmd {
  struct sh_word *words;
  size_t n_words;
  int line, col;
  int connector;          /* how it follows the previous: 0 ';'/newline, '&' &&, '|' || , 'p' pipe */
  bool background;
};

struct sh_script {
  char *file;
  struct sh_cmd *cmds;
  size_t n_cmds;
};

/* Tokenizes; -1 with err "file:line:col: ..." on an unterminated quote,
 * continuation or array. */
int sh_parse(const char *data, size_t len, const char *file, struct sh_script *out,
             struct st_err *err);
void sh_script_fini(struct sh_script *s);

struct sh_var {
  char *name;
  char **values;          /* scalar: 1 value; array: n values */
  size_t n_values;
  bool is_array;
  bool exported;
};

struct sh_env {
  struct sh_var *vars;
  size_t n_vars;
  const char *root_dir;   /* for [[ -f path ]] tests; NULL: file tests are unknown */
  bool unset_is_empty;    /* unset variables expand to "" (launchers: the workflow's
                             env is known); otherwise they are unresolved */
};

void sh_env_set(struct sh_env *env, const char *name, const char *value);
const char *sh_env_get(const struct sh_env *env, const char *name);
void sh_env_fini(struct sh_env *env);

/* A recorded command after expansion. */
struct sh_launch {
  char **env;             /* prefix assignments and exports, KEY=VALUE */
  size_t n_env;
  char **words;           /* the expanded command (program included) */
  size_t n_words;
  int line;
  bool conditional;
};

struct sh_result {
  struct sh_launch server;     /* first server launch (n_words 0: none) */
  const char *server_engine;   /* its engine (engine module's name); NULL: one servetop does
                                  not drive, or none */
  size_t program_words;        /* words of server.words that are the program */
  struct sh_launch bench;      /* first run_benchmark_serving call */
  char *bench_script;          /* launchers: last benchmarks/...sh path named */
  int bench_script_line;
};

/* Interprets s with env (modified: assignments land there). */
void sh_run(const struct sh_script *s, struct sh_env *env, struct sh_result *out);
void sh_result_fini(struct sh_result *r);
/* Expands one raw word into fields (appended to *fields). */
void sh_expand_word(struct sh_env *env, const char *raw, char ***fields, size_t *n_fields);
/* Does the text contain an unresolved marker? */
bool sh_is_unresolved(const char *s);
#define SH_UNRESOLVED_PREFIX "<unresolved: "

/* ---------------------------------------------------------------- vectors */
void strv_push(char ***v, size_t *n, const char *s);      /* pushes a copy */
void strv_push_owned(char ***v, size_t *n, char *s);      /* takes s */
void strv_free(char **v, size_t n);

/* ---------------------------------------------------------------- set internals */
/* The server block of a servetop recipe, or the parsed launch script. */
struct recipe_priv {
  struct recipe pub;
  /* servetop: env and argv templates with $VARS, expanded per point */
  char **tmpl_env;
  size_t n_tmpl_env;
  char **tmpl_argv;
  size_t n_tmpl_argv;
  int *tmpl_argv_lines;           /* YAML line of each argv item, for findings */
  char *tmpl_engine;
  int server_line;
  const char *seq_tag;            /* "8k1k", "1k1k", "2048_512", "agentic" */
  const struct sh_script *script; /* InferenceX: owned by the set's cache */
  const struct sh_script **route_scripts; /* per route, NULL when missing */
  const char *checkout;           /* InferenceX root dir */
};

struct recipe_set {
  struct recipe_priv **recipes;
  size_t n_recipes;
  struct recipe_diag *diags;
  size_t n_diags;
  char **strings;                 /* every string the set owns */
  size_t n_strings, cap_strings;
  struct recipe_counts counts;
  char **multinode;
  size_t n_multinode;
  /* parsed scripts by path */
  struct sh_script **scripts;
  char **script_paths;
  size_t n_scripts;
  /* the checkout's runners.yaml labels (InferenceX) */
  bool have_runners;
  char **labels;                  /* label names */
  char ***label_runners;
  size_t *n_label_runners;
  size_t n_labels;
  char *runners_file;
};

const char *set_str(struct recipe_set *set, const char *s);  /* copy owned by the set */
const char *set_strf(struct recipe_set *set, const char *fmt, ...) ST_PRINTF(2, 3);
void set_diag(struct recipe_set *set, const char *file, int line, int col, const char *field,
              const char *fmt, ...) ST_PRINTF(6, 7);
struct recipe_priv *set_add_recipe(struct recipe_set *set);
/* The parsed script at path (cached); NULL with a diagnostic when unreadable. */
const struct sh_script *set_script(struct recipe_set *set, const char *path, const char *display);

/* Shared by both loaders: parse one master-config style entry (search-space,
 * scenarios) into recipes; native = servetop format (server:/benchmark:). */
void entry_load(struct recipe_set *set, const char *file, const struct ynode *key,
                const struct ynode *val, bool native);
/* The GPU from a runner label: "cluster:h200-dgxc" -> "h200". */
const char *gpu_from_runner(struct recipe_set *set, const char *runner);
/* Workflow env for a point (MODEL, TP, EP_SIZE, CONC, ...). */
void point_env(const struct recipe *r, const struct recipe_point *pt, struct sh_env *env);

/* Master configs (*-master.yaml) of one directory (recipe_load.c). */
int ix_load_master_files(struct recipe_set *set, const char *dir, struct st_err *err);
/* InferenceX routes for all recipes of a checkout (inferencex.c). */
void ix_resolve_routes(struct recipe_set *set, const char *root);

#endif
