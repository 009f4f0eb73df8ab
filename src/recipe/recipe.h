/* recipe: load recipes (servetop's own YAML and InferenceX checkouts), expand
 * sweeps, resolve the server command for one sweep point, and lint.
 *
 * Model. A recipe is one (entry x scenario x spec-decoding) of a config file:
 * an InferenceX entry `qwen3.5-fp8-h200-sglang` whose 8k1k scenario has only
 * MTP rows is one recipe; an entry that mixes MTP and non-MTP rows, or has
 * several scenarios, yields one recipe per combination, named
 * `<entry>:<isl/osl tag>[:mtp|:none]`. Each recipe carries its search-space
 * rows expanded into sweep points (tp, ep, dp-attn, conc).
 *
 * Ownership. A struct recipe_set owns every recipe and every string in it;
 * all pointers returned by the set stay valid until recipe_set_free() and are
 * never modified after load. Values derived per sweep point (the server
 * command) are returned in caller-owned structs with their own _fini.
 *
 * Errors. Loading never stops at the first bad file: each problem becomes a
 * struct recipe_diag (file:line:column, message naming the field), the other
 * entries and files still load. Only an unusable source (no such directory)
 * fails the load itself.
 */
#ifndef SERVETOP_RECIPE_RECIPE_H
#define SERVETOP_RECIPE_RECIPE_H

#include <stdbool.h>
#include <stddef.h>

struct st_err; /* util/util.h: one-line error message */

/* ---------------------------------------------------------------- model */
enum recipe_origin {
  RECIPE_ORIGIN_SERVETOP,   /* configs/ YAML files with an explicit server: block */
  RECIPE_ORIGIN_INFERENCEX, /* an InferenceX master-config entry + launch script */
};

enum recipe_spec { RECIPE_SPEC_NONE, RECIPE_SPEC_MTP, RECIPE_SPEC_DRAFT_MODEL };

enum recipe_scenario { RECIPE_SCENARIO_FIXED_SEQ_LEN, RECIPE_SCENARIO_AGENTIC };

/* One sweep point: a search-space row at one concurrency. */
struct recipe_point {
  int tp;
  int ep;
  bool dp_attn;
  int conc;
  const char *kv_offloading; /* "none", "dram" or NULL (agentic only) */
  int line;                  /* line of the search-space row */
};

struct recipe_bench {
  double random_range_ratio;   /* InferenceX default 0.8 */
  bool use_chat_template;      /* --use-chat-template (or --dsv4, which implies it) */
  int num_prompts_factor;      /* num-prompts = conc * factor (InferenceX: 10) */
  int num_warmups;             /* -1: the client's default (2 * conc) */
  const char *backend;         /* "vllm" = OpenAI completions client */
  char **extra_argv;           /* InferenceX: run_benchmark_serving flags as written */
  size_t n_extra_argv;
  int line;                    /* where the settings come from (block or call) */
};

/* One launcher family's route for an InferenceX recipe (single-node only). */
struct recipe_route {
  const char *family;        /* "h200-cw": runner-name prefix */
  const char *runner;        /* the first runner name of the family, "h200-cw_01" */
  const char *launcher;      /* runners/launch_<family>.sh (relative), NULL: none */
  const char *script;        /* the path the launcher builds (relative to the
                                checkout); may contain "<unresolved: $X>"; NULL
                                when the launcher names no script */
  bool exists;               /* script is a regular file in the checkout */
  int launcher_line;         /* launcher line that builds the path: the assignment
                                of the variable the run command expands, or the
                                command itself */
  int run_line;              /* launcher line of the command that runs the script */
  const char *const *tried;  /* benchmarks/... paths the launcher tested ([[ -f ]])
                                before settling, in order */
  const int *tried_lines;
  size_t n_tried;
};

struct recipe {
  const char *name;          /* unique in the set */
  const char *entry;         /* the config key */
  enum recipe_origin origin;
  const char *model;
  const char *model_prefix;
  const char *precision;
  const char *runner;        /* runner label, e.g. "h200" */
  const char *gpu;           /* GPU name derived from the label: "h200", "b200" */
  const char *framework;     /* as written: "sglang", "vllm", "dynamo-sglang"... */
  const char *engine;        /* "sglang", "vllm", "trt", "atom" or the framework */
  const char *image;         /* NULL when absent */
  bool multinode;
  bool disagg;
  enum recipe_scenario scenario;
  int isl, osl;              /* 0 for agentic */
  enum recipe_spec spec;
  const struct recipe_point *points; /* expanded sweep, in file order */
  size_t n_points;
  struct recipe_bench bench;
  const char *file;          /* config file (as given to the loader) */
  int line;                  /* line of the entry key */
  int runner_line;           /* line of its runner: value */
  int scenario_line;         /* line of the scenario block */
  /* InferenceX single-node: one route per launcher family of the runner label.
   * script_path is the first route whose script exists (NULL when none). */
  const struct recipe_route *routes;
  size_t n_routes;
  const char *script_path;   /* relative to the checkout */
  const char *script_file;   /* full path of script_path, for reading */
};

/* A load problem: "file:line:col: message". line/col are 1-based, 0 unknown. */
struct recipe_diag {
  const char *file;
  int line, col;
  const char *field;         /* the key path, e.g. "qwen3.5-fp8-h200-sglang.runner"; may be NULL */
  const char *entry;         /* the entry it concerns (names keep their dots); NULL: the file */
  const char *message;
};

struct recipe_set; /* opaque */

/* ---------------------------------------------------------------- loading */
/* An empty set; add sources with the recipe_set_add_* calls below. */
struct recipe_set *recipe_set_new(void);
void recipe_set_free(struct recipe_set *set);

/* servetop recipe files: every *.yaml in dir (sorted). -1 only when dir cannot
 * be read; bad files become diagnostics. */
int recipe_set_add_configs_dir(struct recipe_set *set, const char *dir, struct st_err *err);
/* One servetop recipe file from memory; display_name is used in messages. */
void recipe_set_add_yaml_buffer(struct recipe_set *set, const char *display_name,
                                const char *data, size_t len);
/* An InferenceX checkout: configs/ (or legacy .github/configs/) *-master.yaml,
 * runners.yaml, runners/launch_*.sh and benchmarks/. -1 when dir has no master
 * config at all. */
int recipe_set_add_inferencex(struct recipe_set *set, const char *dir, struct st_err *err);
/* InferenceX master config from memory (no checkout: routes are not resolved). */
void recipe_set_add_master_buffer(struct recipe_set *set, const char *display_name,
                                  const char *data, size_t len);

/* Bundled recipes: $SERVETOP_CONFIGS, <exe dir>/../configs,
 * <exe dir>/../share/servetop/configs, ./configs — the first that exists.
 * Returns the directory (heap string) or NULL with err set. */
char *recipe_bundled_dir_alloc(struct st_err *err);
/* The set a command line names: an InferenceX checkout, a folder of servetop
 * recipe files, or (both NULL) the bundled recipes. Giving both is an error.
 * Returns a new set (load problems of single files are its diagnostics) or
 * NULL with err set when the source itself cannot be loaded. */
struct recipe_set *recipe_set_load_source(const char *configs_dir, const char *inferencex_dir,
                                          struct st_err *err);

/* ---------------------------------------------------------------- queries */
size_t recipe_set_count(const struct recipe_set *set);
const struct recipe *recipe_set_at(const struct recipe_set *set, size_t i);
const struct recipe *recipe_set_find(const struct recipe_set *set, const char *name);
/* Same model, precision, GPU, engine and scenario (isl/osl); opposite spec
 * (none <-> mtp or draft_model). */
const struct recipe *recipe_set_twin(const struct recipe_set *set, const struct recipe *r);
size_t recipe_set_diag_count(const struct recipe_set *set);
const struct recipe_diag *recipe_set_diag_at(const struct recipe_set *set, size_t i);
/* Entries seen (including multinode ones, which do not become recipes).
 * files: recipe/master-config files read; files_failed: of those, files that
 * could not be read or parsed at all; entries_failed: entries with an
 * error-level load problem (they give no recipes). */
struct recipe_counts {
  size_t entries, single_node, multinode_agg, multinode_disagg, points, fixed_seq_len,
      agentic, files, files_failed, entries_failed;
};
void recipe_set_counts(const struct recipe_set *set, struct recipe_counts *out);
/* Multinode entries are listed by name (they have no single-node server). */
size_t recipe_set_multinode_count(const struct recipe_set *set);
const char *recipe_set_multinode_at(const struct recipe_set *set, size_t i);

const char *recipe_spec_name(enum recipe_spec spec);          /* "none", "mtp", "draft_model" */
const char *recipe_spec_arm_name(enum recipe_spec spec);      /* A/B arm: "off", "mtp", "draft" */
/* A spec-decoding value ("none", "mtp", "draft_model") into *out; false when it is none of
 * them. */
bool recipe_spec_parse(const char *name, enum recipe_spec *out);
const char *recipe_scenario_name(enum recipe_scenario scen);  /* "fixed-seq-len", "agentic-coding" */
/* "8k1k", "1k1k", "<isl>_<osl>" or "agentic" (InferenceX's exp-name part). */
const char *recipe_seq_tag(const struct recipe *r);
int recipe_max_conc(const struct recipe *r);

/* ---------------------------------------------------------------- server command */
/* The server command for one sweep point, read statically (nothing runs).
 * argv starts after the program (`--model-path X --tp 8 ...`; for `vllm serve`
 * the model is argv[0]); env is KEY=VALUE (command-line prefixes and exports
 * before the launch, in order). Pieces that cannot be known statically read
 * "<unresolved: $NAME>" and set has_unresolved. The vectors belong to the
 * struct: change them only through recipe_cmd_set_knob / _apply_override. */
struct recipe_cmd {
  char *engine;              /* an engine of the engine table ("sglang", "vllm"), or the framework */
  char *program;             /* "python3 -m sglang.launch_server", "vllm serve"... */
  char **argv;
  size_t argc;
  char **env;
  size_t n_env;
  char **bench_argv;         /* run_benchmark_serving flags, expanded (InferenceX) */
  size_t n_bench_argv;
  bool has_unresolved;
  bool conditional;          /* the launch sits in a branch that was not decided */
  const char *file;          /* where the command is written */
  int line;
};
/* r must come from a recipe_set; point NULL means r->points[0], and any point
 * may be passed (e.g. r->points[i] with conc changed). -1 with err when the
 * recipe has no resolved script or the script launches no server. */
int recipe_server_cmd(const struct recipe *r, const struct recipe_point *point,
                      struct recipe_cmd *out, struct st_err *err);
void recipe_cmd_fini(struct recipe_cmd *cmd);
/* Trust (recipe_trust.c): is NAME or NAME=VALUE a variable that makes the
 * server load or run code from outside its image (LD_PRELOAD, LD_LIBRARY_PATH,
 * LD_AUDIT, PYTHONSTARTUP, PYTHONPATH, PYTHONHOME, BASH_ENV, PATH, ...)? */
bool recipe_env_is_loader(const char *name_value);
/* The names of such variables cmd's environment sets, "LD_PRELOAD, PYTHONPATH"
 * into buf (n bytes); returns how many. */
size_t recipe_loader_env(const struct recipe_cmd *cmd, char *buf, size_t n);

/* Knobs are server flags by name without dashes ("mem-fraction-static").
 * Spellings are the engine's (engine module): aliases are folded (tp =
 * tensor-parallel-size, ep = ep-size = expert-parallel-size, dp = dp-size,
 * speculative-algo = speculative-algorithm), and the generic knobs kv-cache
 * (mem-fraction) and max-batch (batch-cap) name each engine's own flag.
 * get: the value, "" for a flag without value, NULL when absent.
 * set: replaces every occurrence (keeping the spelling used) or appends
 * `--key value`; value NULL removes the flag. */
const char *recipe_cmd_knob(const struct recipe_cmd *cmd, const char *key);
void recipe_cmd_set_knob(struct recipe_cmd *cmd, const char *key, const char *value);
/* "KEY=VALUE" → recipe_cmd_set_knob; -1 with err on a missing '='. */
int recipe_cmd_apply_override(struct recipe_cmd *cmd, const char *assignment, struct st_err *err);
/* Env lookup: VALUE of the last KEY=VALUE, or NULL. */
const char *recipe_cmd_env(const struct recipe_cmd *cmd, const char *key);

/* ---------------------------------------------------------------- lint */
enum recipe_severity { RECIPE_SEV_ERROR, RECIPE_SEV_WARNING, RECIPE_SEV_NOTE };

/* A further place a finding concerns: the master-config entry behind a
 * script finding, the sibling a script is compared with, the launcher line
 * that built a path. */
struct recipe_location {
  const char *file;
  int line;
  const char *what;          /* "entry qwen3.5-fp8-h100-sglang-agentic", "MTP sibling" */
};

struct recipe_finding {
  const char *rule;          /* "MTP_CHAT_TEMPLATE": stable, greppable */
  const char *rule_id;       /* "R01": the reference's id */
  enum recipe_severity severity;
  const char *recipe;        /* recipe or entry name, "" for file-level findings */
  const char *file;          /* the line to change */
  int line;
  int col;                   /* 1-based column where known (a load error's), else 0 */
  const char *message;
  struct recipe_location *related; /* owned; the master-config line comes here */
  size_t n_related;
};

struct recipe_findings {
  struct recipe_finding *items; /* owned; strings owned by the findings */
  size_t n;
};

/* Runs every rule over the set (load diagnostics become SCHEMA findings).
 * Findings are sorted by file, line, rule. */
void recipe_lint(const struct recipe_set *set, struct recipe_findings *out);
void recipe_findings_fini(struct recipe_findings *f);
size_t recipe_findings_errors(const struct recipe_findings *f);
/* Problems first: errors, then warnings, then notes, each in the order found
 * (a stable sort). `servetop lint` and the dashboard's problems view show
 * findings in this order. */
void recipe_findings_order(struct recipe_findings *f);
const char *recipe_severity_name(enum recipe_severity sev);

#endif
