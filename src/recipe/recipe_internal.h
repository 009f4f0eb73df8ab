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
/* alias_placeholders: an alias becomes the quoted scalar "*anchor" (files
 * read only in part, such as workflows, whose aliases never matter here). */
struct ynode *ytree_parse_ex(const char *data, size_t len, const char *file,
                             bool alias_placeholders, struct st_err *err);
void ytree_free(struct ynode *node);
const struct ynode *ytree_map_get(const struct ynode *map, const char *key);
size_t ytree_map_len(const struct ynode *map);
/* YAML 1.1 integers: digits with optional '_' separators and sign. */
int ytree_scalar_long(const struct ynode *node, long *out);

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

struct sh_sub;

struct sh_script {
  char *file;
  struct sh_cmd *cmds;
  size_t n_cmds;
  struct sh_sub *subs;    /* array bodies and $(...) bodies, parsed once */
  size_t n_subs;
  size_t *sub_slots;      /* open-addressing index of subs by text: 1 + position, 0 empty */
  size_t n_sub_slots;     /* a power of two, at least twice n_subs */
};

/* A body of the script's text read as a script of its own. */
struct sh_sub {
  char *text;
  size_t len;
  uint64_t hash;          /* of text (the index's key) */
  struct sh_script parsed;
};

/* The deepest nesting of $( ), ${ }, arrays, (( )) and quotes inside them that
 * the reader takes: past it a script is refused with a finding (its
 * file:line:col), so that reading any script costs time and memory linear in
 * its size (each body is parsed once per level it is nested in). */
enum { SH_MAX_NESTING = 64 };

/* Tokenizes; -1 with err "file:line:col: ..." on an unterminated quote,
 * continuation or array, or nesting deeper than SH_MAX_NESTING. */
int sh_parse(const char *data, size_t len, const char *file, struct sh_script *out,
             struct st_err *err);
/* sh_parse of a body nested depth levels deep in a script (-1 past
 * SH_MAX_NESTING; no error text: the body is read again where it is used). */
int sh_parse_body(const char *data, size_t len, const char *file, struct sh_script *out,
                  int depth);
void sh_script_fini(struct sh_script *s);
/* Parses the array bodies and the outermost $(...) bodies of s's words into
 * s->subs (sh_parse does it; the interpreter reads them from there); the
 * bodies nested in those are in their own subs. depth: s's nesting. */
void sh_index_bodies(struct sh_script *s, int depth);

struct sh_var {
  char *name;
  size_t name_len;
  char **values;          /* scalar: 1 value; array: n values */
  size_t n_values;
  bool is_array;
  bool exported;
  int line;               /* line of the last assignment (0: from the caller) */
  size_t origin;          /* while reads are recorded: 1 + its index in the environment
                             the interpretation began with; 0: set during it */
};

/* What one interpretation looked up of the environment it began with: the
 * key of a remembered interpretation (sh_memo). */
struct sh_reads {
  struct sh_var *vars;    /* the variables looked up, as they were when it began */
  size_t n_vars;
  bool *seen;             /* per variable it began with (by origin): in vars already */
  size_t n_seen;
  char **missed;          /* names looked up that it did not begin with */
  size_t n_missed;
};

struct sh_env_index;

struct sh_env {
  struct sh_var *vars;
  size_t n_vars;
  struct sh_env_index *index; /* names -> positions in vars, built on demand */
  struct sh_reads *reads; /* non-NULL: lookups are recorded there (sh_memo) */
  const char *root_dir;   /* for [[ -f path ]] tests; NULL: file tests are unknown */
  bool unset_is_empty;    /* unset variables expand to "" (launchers: the workflow's
                             env is known); otherwise they are unresolved */
  enum sh_stop {
    SH_STOP_NEVER,
    SH_STOP_AFTER_BENCH,  /* once the server launch and run_benchmark_serving are
                             recorded outside undecided branches */
    SH_STOP_AFTER_SERVER, /* once the server launch is */
  } stop;                 /* what follows cannot change what was recorded */
};

void sh_env_set(struct sh_env *env, const char *name, const char *value);
void sh_env_unset(struct sh_env *env, const char *name);
const char *sh_env_get(const struct sh_env *env, const char *name);
/* The variable itself (in env->vars), not recorded as a lookup; NULL: none. */
const struct sh_var *sh_env_var(const struct sh_env *env, const char *name);
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
  char *bench_script;          /* launchers: last benchmarks/...sh path run */
  int bench_script_line;       /* the command that runs it */
  int bench_script_built_line; /* where its value was built: the assignment of the
                                  variable the command expands, or the command */
  char **probes;               /* benchmarks/... paths tested with [[ -f ]] etc. */
  int *probe_lines;
  size_t n_probes;
  bool bench_env_listed;       /* the run command passes only the variables below
                                  (docker run -e/--env), not the whole environment */
  char **bench_env;            /* names it passes, when listed */
  size_t n_bench_env;
};

/* Interprets s with env (modified: assignments land there). */
void sh_run(const struct sh_script *s, struct sh_env *env, struct sh_result *out);

/* Interpretations remembered by what they read (sh_memo.c). An
 * interpretation reads nothing but the script, the variables it looks up
 * and the files it tests under root_dir; one that begins where an earlier one
 * began on every variable that one looked up (value, array-ness, export,
 * line), lacks every name it missed, exports nothing else, and has the same
 * root_dir, unset_is_empty and stop, is that earlier one. Thread-safe. */
struct sh_memo;
struct sh_memo *sh_memo_new(void);
void sh_memo_free(struct sh_memo *m);
/* sh_run(s, env) through memo m (NULL: no memo; the result is then kept
 * in *own). The result is m's (valid until sh_memo_free) or *own's:
 * sh_result_fini(own) either way. env is spent: sh_env_fini it, read it no
 * more (a remembered result leaves it as it was, a new one changes it). */
const struct sh_result *sh_run_memo(struct sh_memo *m, const struct sh_script *s,
                                    struct sh_env *env, struct sh_result *own);
/* Recording hooks of the interpreter's variable lookups (env->reads). */
void sh_reads_note(struct sh_reads *r, const struct sh_var *v);
void sh_reads_miss(struct sh_reads *r, const char *name, size_t len);
void sh_result_fini(struct sh_result *r);
/* Expands one raw word into fields (appended to *fields). */
void sh_expand_word(struct sh_env *env, const char *raw, char ***fields, size_t *n_fields);
/* Does the text contain an unresolved marker? */
bool sh_is_unresolved(const char *s);
#define SH_UNRESOLVED_PREFIX "<unresolved: "

/* ---------------------------------------------------------------- vectors */
void recipe_strv_push(char ***v, size_t *n, const char *s);      /* pushes a copy */
void recipe_strv_push_owned(char ***v, size_t *n, char *s);      /* takes s */

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
  /* per point: the values the workflow reads as `inputs.<key>` (the entry's,
   * scenario item's and search-space row's scalars), "key", "value", ...,
   * NULL; owned by the set, shared by the points of one row */
  const char *const **point_inputs;
  const struct ix_workflow *workflow; /* InferenceX: the checkout's workflow */
  const struct wf_value *wf_cache;    /* per workflow env entry, from load */
  struct route_extra *route_x;    /* per route, what lint needs beyond recipe_route */
  /* agentic MTP: the checkout's fixed-seq-len MTP script of the same model,
   * precision and GPU (the proven MTP setting), parsed; NULL: none */
  const struct sh_script *fixed_mtp_script;
  const char *fixed_mtp_file;
  struct sh_memo *memo;           /* the set's remembered interpretations */
};

struct route_extra {
  const char *launcher_file;      /* the launcher's full path (for findings) */
  const char *alt;                /* what the launcher runs when the entry's spec-decoding
                                     is the other one (mtp <-> none); NULL: nothing */
  bool alt_exists;
  bool env_listed;                /* the run command passes only env[] (docker -e) */
  const char **env;
  size_t n_env;
};

/* What the checkout's own schema generation allows (InferenceX history): each
 * newer form the master configs use retires the form it replaced. */
struct ix_schema {
  bool multinode_required;    /* entries declare multinode: (#251) */
  bool seq_len_configs_ok;    /* no entry uses scenarios: yet (#1201) */
  bool agentic_legacy_ok;     /* agentic duration: / row offloading: (before #1970) */
  bool agentic_cluster_label; /* agentic entries need cluster: labels (#1970) */
};

/* A workflow env value evaluated at load: per_point ones are evaluated at
 * each point (they read conc, tp, the row...); value NULL: unset. */
struct wf_value {
  bool per_point;
  const char *value;
};

/* The workflow's env: block (.github/workflows/benchmark-tmpl.yml). Without
 * the file, SCENARIO_SUBDIR is inferred from the folders of the checkout. */
struct ix_workflow {
  char **names;
  char **values;                  /* as written: "${{ inputs.x == 'y' && 'a' || 'b' }}" */
  size_t n;
  char *file;                     /* NULL: no workflow file */
  const char *fixed_subdir;       /* inferred: "fixed_seq_len/" or "" */
  const char *undefined[32];      /* servetop defaults the file does not set */
  size_t n_undefined;
};

/* A runners.yaml label and the runners it names (strings owned by the set). */
struct ix_label {
  const char *name;
  int line;
  const char **runners;
  int *runner_lines;
  size_t n_runners;
};

struct recipe_set {
  struct recipe_priv **recipes;
  size_t n_recipes;
  struct recipe_diag *diags;
  size_t n_diags;
  char **strings;                 /* every string the set owns */
  size_t n_strings, cap_strings;
  void **blocks;                  /* other memory the set owns (set_block) */
  size_t n_blocks;
  struct recipe_counts counts;
  char **multinode;
  size_t n_multinode;
  /* parsed scripts by path */
  struct sh_script **scripts;
  char **script_paths;
  size_t n_scripts;
  /* the checkout's runners.yaml labels (InferenceX) */
  bool have_runners;
  bool runners_flat;              /* legacy runners.yaml: label -> names, no labels: */
  struct ix_label *labels;        /* in file order */
  size_t n_labels;
  char *runners_file;
  struct ix_schema schema;        /* InferenceX: the checkout's schema generation */
  struct ix_workflow *workflow;   /* InferenceX: NULL when absent */
  char **bench_files;             /* InferenceX: every benchmarks/ script (relative, sorted) */
  size_t n_bench_files;
  struct sh_memo *memo;           /* interpretations of its scripts and launchers */
};

const char *recipe_set_str(struct recipe_set *set, const char *s);  /* copy owned by the set */
void *recipe_set_block(struct recipe_set *set, size_t size);        /* zeroed, owned by the set */
const char *recipe_set_strf(struct recipe_set *set, const char *fmt, ...) ST_PRINTF(2, 3);
/* entry: the entry the problem concerns (NULL: the file); field: key path. */
void recipe_set_diag(struct recipe_set *set, const char *file, int line, int col, const char *entry,
              const char *field, const char *fmt, ...) ST_PRINTF(7, 8);
/* A diagnostic from a parser's error text "file:line:col: what" (file as
 * given): the location goes into line and col, the message is the "what". */
void recipe_set_diag_located(struct recipe_set *set, const char *file, const char *located_msg);
struct recipe_priv *recipe_set_add_recipe(struct recipe_set *set);
/* The parsed script at path (cached); NULL with a diagnostic when unreadable. */
const struct sh_script *recipe_set_script(struct recipe_set *set, const char *path, const char *display);

/* Shared by both loaders: parse one master-config style entry (search-space,
 * scenarios) into recipes; native = servetop format (server:/benchmark:). */
void recipe_entry_load(struct recipe_set *set, const char *file, const struct ynode *key,
                const struct ynode *val, bool native);
/* The schema generation of a set of InferenceX master-config trees. */
void ix_schema_detect(const struct ynode *const *roots, size_t n, struct ix_schema *out);
/* The GPU from a runner label: "cluster:h200-dgxc" -> "h200". */
const char *recipe_gpu_from_runner(struct recipe_set *set, const char *runner);
/* Workflow env for a point (MODEL, TP, EP_SIZE, CONC, ...): servetop's
 * defaults, then the checkout's workflow env: block where it has one. */
void recipe_point_env(const struct recipe *r, const struct recipe_point *pt, struct sh_env *env);
/* recipe_server_cmd for one of the recipe's scripts (InferenceX: any of its
 * routes; servetop recipes ignore script). with_bench false: the reading
 * stops at the server launch and bench_argv stays empty, so sweep points
 * that differ only in what the benchmark call reads share one remembered
 * interpretation (the doctor's rules read the server command alone). */
int recipe_server_cmd_script(const struct recipe *r, const struct sh_script *script,
                             const char *script_file, const struct recipe_point *point,
                             bool with_bench, struct recipe_cmd *out, struct st_err *err);
/* recipe_server_cmd without the benchmark call (with_bench false). */
int recipe_server_launch(const struct recipe *r, const struct recipe_point *point,
                         struct recipe_cmd *out, struct st_err *err);

/* The workflow's env: values for a point, over env (inferencex.c). */
void ix_workflow_env(const struct recipe_priv *p, const struct recipe_point *pt,
                     struct sh_env *env);

/* Master configs (*-master.yaml) of one directory (recipe_load.c). */
int ix_load_master_files(struct recipe_set *set, const char *dir, struct st_err *err);
/* The runners.yaml label of an entry's runner: its index, or -1. *runner is
 * SIZE_MAX, or with the legacy flat file the one runner the entry names. */
int ix_label_index(const struct recipe_set *set, const char *label, size_t *runner);
/* Is dir one of path's folders? */
bool recipe_path_has_dir(const char *path, const char *dir);
/* Is path a directory (following links)? */
bool recipe_path_is_directory(const char *path);
/* A script of the checkout that serves r by its name, for that scenario and
 * spec-decoding: <model-prefix>_<precision>_<gpu>[_<framework>][_mtp]...sh in
 * the scenario's folder (NULL: none). deprecated: a retired script (under
 * deprecated/) may answer when no current one does. */
const char *ix_fitting_script(const struct recipe_set *set, const struct recipe *r,
                              enum recipe_scenario scenario, enum recipe_spec spec,
                              bool deprecated);
/* InferenceX routes for all recipes of a checkout (inferencex.c). */
void ix_resolve_routes(struct recipe_set *set, const char *root);

#endif
