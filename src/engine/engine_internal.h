/* engine internals shared by the descriptors (eng_<name>.c), the table and
 * the scraper. */
#ifndef SERVETOP_ENGINE_ENGINE_INTERNAL_H
#define SERVETOP_ENGINE_ENGINE_INTERNAL_H

#include "engine/engine.h"

#define ENG_NO_GPU_REASON "no GPU device (/dev/nvidia0, /dev/kfd)"
/* SGLang's ready line (servetop sim prints it too). */
#define ENG_SGLANG_READY_LINE "The server is fired up and ready to roll!"

/* ---------------------------------------------------------------- log line reading */
/* Reads a number at the start of s: leading spaces, thousands commas
 * ("1,234,567"); a trailing unit ("%", " tokens/s") is ignored. True when at
 * least one digit was read. */
bool eng_leading_number(const char *s, size_t len, double *out);
bool eng_leading_int(const char *s, size_t len, int64_t *out);

/* One "key: value" (or "key=value") pair of a line body. */
struct eng_pair {
  const char *key;
  size_t key_len;
  const char *value;
  size_t value_len;
};
#define ENG_MAX_PAIRS 48

/* Splits body on ", " into pairs at sep (": " or "="). A piece without the
 * separator continues the previous value ("Per-position acceptance rate:
 * 0.9, 0.8, 0.7"). Returns the number of pairs. */
size_t eng_split_pairs(const char *body, const char *sep, struct eng_pair *pairs, size_t max);
/* Key of pr, spaces trimmed, equals key. */
bool eng_key_is(const struct eng_pair *pr, const char *key);
/* "[2026-06-23 01:10:14 DP0 TP0 EP0] body" -> tag "DP0 TP0 EP0", body;
 * "(EngineCore_DP0 pid=123) INFO ..." -> tag "EngineCore_DP0". Returns body. */
const char *eng_strip_prefix(const char *line, char *tag, size_t tag_bytes);

/* Which record field a key fills, and how its value reads. */
enum eng_field_type { ENG_FIELD_INT, ENG_FIELD_NUM, ENG_FIELD_PERCENT };
struct eng_log_field {
  const char *key;
  enum eng_field_type type;
  size_t offset;    /* into struct eng_log_record */
  unsigned has_bit; /* ENG_LOG_HAS_*, 0 = none */
};
#define ENG_FIELD(key, type, member, bit) \
  {key, type, offsetof(struct eng_log_record, member), bit}
void eng_apply_fields(const struct eng_pair *pairs, size_t n_pairs,
                      const struct eng_log_field *fields, size_t n_fields,
                      struct eng_log_record *r);
/* Empties r for a new line (iter = -1). */
void eng_log_record_clear(struct eng_log_record *r);

/* ---------------------------------------------------------------- version rules' checks */
bool eng_sglang_spec_v2_missing(char *const *argv, size_t argc, char *const *env, size_t n_env,
                                struct eng_vrule_hit *hit);
bool eng_sglang_spec_v2_retired(char *const *argv, size_t argc, char *const *env, size_t n_env,
                                struct eng_vrule_hit *hit);
bool eng_vllm_disable_log_requests(char *const *argv, size_t argc, char *const *env, size_t n_env,
                                   struct eng_vrule_hit *hit);

/* ---------------------------------------------------------------- probes */
/* Runs argv quietly; true when it exits 0 within timeout_ms. */
bool eng_command_succeeds(char *const argv[], int64_t timeout_ms);
/* What argv prints on stdout and stderr (at most max_bytes; heap), or NULL
 * when it cannot run or takes longer than timeout_ms (then killed). */
char *eng_command_output_alloc(char *const argv[], int64_t timeout_ms, size_t max_bytes);
/* Flag names in a program's --help text: every "-x"/"--name" that starts a
 * word (NULL-terminated heap vector of heap strings, without dashes). */
char **eng_help_flags_parse(const char *help);
/* The sim's own flags (--sim-speed, ...), taken where the sim runs or stands in. */
extern const struct eng_flag eng_sim_own_flags[];
bool eng_gpu_device_present(void);
/* A GPU engine's probe: a GPU device is present and argv (its version or
 * import check) succeeds within 30 s; else false with why = the missing GPU
 * or missing (what is wrong without the engine). */
bool eng_probe_gpu_command(const char *const *argv, const char *missing, char *why,
                           size_t why_bytes);
/* recognise for a Python server: `-m module` or `<dir>/program serve`. */
size_t eng_recognise_module_or_serve(char *const *w, size_t i, const char *module,
                                     const char *program);
/* The first executable called name in $PATH into out; false when none. */
bool eng_find_on_path(const char *name, char *out, size_t out_bytes);

/* ---------------------------------------------------------------- HTTP and JSON */
/* GET base_url + path; the body (heap, NUL-terminated) when the status is 200,
 * else NULL with *status (0 on a transport failure) and err set. */
char *eng_http_get_alloc(const char *base_url, const char *path, double timeout_s, long *status,
                         struct st_err *err);
/* Sum / mean over the series called name; NaN when none. */
double eng_prom_sum(const struct prom_set *set, const char *name);
double eng_prom_mean(const struct prom_set *set, const char *name);
/* Counters labelled position="0".."N-1" into per_pos (NaN where absent). */
void eng_prom_per_position(const struct prom_set *set, const char *name, double *per_pos, int n);

/* ---------------------------------------------------------------- acceptance */
/* Run-scoped acceptance from the spec-decoding counters at the first and
 * last point (D.2): length = 1 + accepted / drafts, rate = accepted /
 * draft tokens, position k = accepted_k / drafts. method names it. */
void sig_summarize_counters(struct sig_summary *sum, const char *method);

/* ---------------------------------------------------------------- SGLang's readers
 * servetop sim speaks SGLang: its descriptor uses these. */
enum eng_log_kind eng_sglang_parse_log_line(const char *line, struct eng_log_record *out);
void eng_sglang_read_metrics(const struct prom_set *set, struct sig_point *out);
void eng_sglang_summarize(struct sig_summary *sum);
int eng_sglang_query_info(const char *base_url, double timeout_s, struct eng_server_info *out,
                          struct st_err *err);
extern const struct eng_flag eng_sglang_flags[];
/* SGLang's flags for a chain draft (what other engines' args_for_sim write):
 * --speculative-algorithm algorithm, --speculative-num-steps steps,
 * --speculative-eagle-topk 1, --speculative-num-draft-tokens steps + 1. */
void eng_sglang_chain_spec_args(struct launch_cmd *out, const char *algorithm, long steps);

#endif
