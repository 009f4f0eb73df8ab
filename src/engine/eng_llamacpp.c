/* llama.cpp's llama-server: finding the binary (--llama-server PATH, PATH, the
 * cache scripts/setup-llamacpp.sh fills), its flags (-c KV tokens, -np slots,
 * -md + --spec-type for speculative decoding), /health readiness, its log
 * lines, llamacpp: metrics (acceptance from the spec_decode counters), /props
 * and /slots. Facts: reference/llama-cpp.md. */
#include "engine/engine_internal.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <pthread.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PROGRAM "llama-server"
#define SETUP_HINT                                                                             \
  "build it with scripts/setup-llamacpp.sh (from a servetop checkout; about 15 minutes on 2 " \
  "cores, it also writes the tiny models), or name one with --llama-server PATH"

extern const struct eng_ops eng_llamacpp_ops;

/* ---------------------------------------------------------------- flags */
static const struct eng_flag llamacpp_flags[] = {
    {{"--ctx-size", "-c"}, ENG_KNOB_KV_CACHE, ENG_VALUE_NATURAL}, /* KV tokens, all slots; 0: the
                                                                    model's context */
    {{"--parallel", "-np"}, ENG_KNOB_BATCH_CAP, ENG_VALUE_COUNT_OR_AUTO}, /* slots */
    {{"--model", "-m"}, ENG_KNOB_MODEL, ENG_VALUE_ANY},
    {{"--spec-draft-model", "-md", "--model-draft"}, ENG_KNOB_NONE, ENG_VALUE_ANY},
    {{"--spec-type"}, ENG_KNOB_NONE, ENG_VALUE_ANY},
    {{"--spec-draft-n-max"}, ENG_KNOB_NONE, ENG_VALUE_COUNT},
    {{"--spec-draft-n-min"}, ENG_KNOB_NONE, ENG_VALUE_INT},
    {{"--threads", "-t"}, ENG_KNOB_NONE, ENG_VALUE_COUNT_OR_AUTO},
    {{"--spec-draft-threads", "-td", "--threads-draft"}, ENG_KNOB_NONE, ENG_VALUE_COUNT_OR_AUTO},
    {{"--gpu-layers", "-ngl", "--n-gpu-layers"}, ENG_KNOB_NONE, ENG_VALUE_ANY},
    {{"--spec-draft-ngl", "-ngld", "--gpu-layers-draft", "--n-gpu-layers-draft"}, ENG_KNOB_NONE,
     ENG_VALUE_ANY},
    {{"--batch-size", "-b"}, ENG_KNOB_NONE, ENG_VALUE_COUNT},
    {{"--ubatch-size", "-ub"}, ENG_KNOB_NONE, ENG_VALUE_COUNT},
    {{"--n-predict", "-n", "--predict"}, ENG_KNOB_NONE, ENG_VALUE_INT},
    {{"--seed", "-s"}, ENG_KNOB_NONE, ENG_VALUE_INT},
    {{"--alias", "-a"}, ENG_KNOB_NONE, ENG_VALUE_ANY},
    {{"--flash-attn", "-fa"}, ENG_KNOB_NONE, ENG_VALUE_ANY},
    {{"--cache-type-k", "-ctk"}, ENG_KNOB_NONE, ENG_VALUE_ANY},
    {{"--cache-type-v", "-ctv"}, ENG_KNOB_NONE, ENG_VALUE_ANY},
    {{"--device", "-dev"}, ENG_KNOB_NONE, ENG_VALUE_ANY},
    {{"--kv-unified", "-kvu"}, ENG_KNOB_NONE, ENG_VALUE_NONE},
    {{"--no-kv-unified", "-no-kvu"}, ENG_KNOB_NONE, ENG_VALUE_NONE},
    {{"--cont-batching", "-cb"}, ENG_KNOB_NONE, ENG_VALUE_NONE},
    {{"--no-cont-batching", "-nocb"}, ENG_KNOB_NONE, ENG_VALUE_NONE},
    {{"--metrics"}, ENG_KNOB_NONE, ENG_VALUE_NONE},
    {{"--slots"}, ENG_KNOB_NONE, ENG_VALUE_NONE},
    {{"--no-slots"}, ENG_KNOB_NONE, ENG_VALUE_NONE},
    {{"--warmup"}, ENG_KNOB_NONE, ENG_VALUE_NONE},
    {{"--no-warmup"}, ENG_KNOB_NONE, ENG_VALUE_NONE},
    {{"--jinja"}, ENG_KNOB_NONE, ENG_VALUE_NONE},
    {{"--no-jinja"}, ENG_KNOB_NONE, ENG_VALUE_NONE},
    {{"--no-webui"}, ENG_KNOB_NONE, ENG_VALUE_NONE},
    {{"--verbose", "-v", "--log-verbose"}, ENG_KNOB_NONE, ENG_VALUE_NONE},
    {{NULL}, ENG_KNOB_NONE, ENG_VALUE_ANY},
};

static const char *arg_value(char *const *argv, size_t argc, const char *key) {
  return eng_arg_value(&eng_llamacpp_ops, argv, argc, key);
}

/* ---------------------------------------------------------------- recipes */
static size_t llamacpp_recognise(char *const *w, size_t n, size_t i) {
  (void)n;
  const char *base = strrchr(w[i], '/') ? strrchr(w[i], '/') + 1 : w[i];
  return strcmp(base, PROGRAM) == 0 ? i + 1 : 0;
}

/* --spec-type names the speculative method(s): "none" is off. */
static bool spec_type_on(const char *type) {
  return type && *type && strcmp(type, "none") != 0;
}

static bool llamacpp_enables_spec(char *const *argv, size_t argc) {
  return spec_type_on(arg_value(argv, argc, "spec-type"));
}

static const char *llamacpp_spec_problem(char *const *argv, size_t argc) {
  if (arg_value(argv, argc, "md") && !llamacpp_enables_spec(argv, argc))
    return "a draft model (-md) without --spec-type is loaded but never used: that is not "
           "speculative decoding (add --spec-type draft-simple)";
  return NULL;
}

/* llama.cpp flags as servetop sim (SGLang flags) reads them: slots are the
 * batch limit, a used draft model is SGLang's STANDALONE draft with
 * --spec-draft-n-max steps; the sim has no tiny model, so it models the
 * smallest it has. */
static void llamacpp_args_for_sim(char *const *argv, size_t argc, struct launch_cmd *out) {
  const char *np = arg_value(argv, argc, "np");
  if (np && *np && strcmp(np, "-1") != 0) {
    launch_cmd_add_arg(out, "--max-running-requests");
    launch_cmd_add_arg(out, np);
  }
  if (llamacpp_enables_spec(argv, argc) && arg_value(argv, argc, "md")) {
    const char *n_max = arg_value(argv, argc, "spec-draft-n-max");
    long steps = 3; /* llama-server's default */
    if (n_max)
      parse_long(n_max, &steps);
    eng_sglang_chain_spec_args(out, "STANDALONE", steps);
  }
  launch_cmd_add_arg(out, "--sim-model");
  launch_cmd_add_arg(out, "llama-3.1-8b");
  launch_cmd_add_arg(out, "--enable-metrics");
}

/* ---------------------------------------------------------------- the binary */
static bool executable(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* --llama-server PATH, then llama-server on PATH, then the cache's
 * bin/llama-server (the setup script's symlink to its last build). */
static bool locate(char *path, size_t path_bytes, char *why, size_t why_bytes) {
  const char *given = eng_program_path(&eng_llamacpp_ops);
  if (given) {
    snprintf(path, path_bytes, "%s", given);
    return true;
  }
  if (eng_find_on_path(PROGRAM, path, path_bytes))
    return true;
  char *cache = path_cache_dir_alloc();
  char *cached = path_join_alloc(cache, "bin/" PROGRAM);
  bool found = executable(cached);
  if (found)
    snprintf(path, path_bytes, "%s", cached);
  else
    snprintf(why, why_bytes, "llama.cpp's " PROGRAM " not found (not on PATH, not %s): " SETUP_HINT,
             cached);
  free(cached);
  free(cache);
  return found;
}

/* The flags of the llama-server in use, from its --help: kept in memory for
 * the process and on disk as ${XDG_CACHE_HOME:-~/.cache}/servetop/help/
 * llama-server-<key hash>.flags, whose first line is the key (the binary's
 * real path, modification time in ns and size: a rebuilt binary is read
 * again) and then one flag a line. --help runs only where no copy is kept and
 * the calling thread may run programs (never the dashboard's UI thread). */
struct help_key {
  char text[PATH_MAX + 64]; /* "PATH mtime_ns size" */
  char file[PATH_MAX];      /* where it is kept; "" = nowhere */
};

static bool help_key_of(const char *path, struct help_key *k) {
  char real[PATH_MAX];
  struct stat st;
  if (!realpath(path, real) || stat(real, &st) != 0)
    return false;
  snprintf(k->text, sizeof k->text, "%s %lld %lld", real,
           (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec,
           (long long)st.st_size);
  uint64_t h = 1469598103934665603ULL; /* FNV-1a */
  for (const char *c = k->text; *c; c++)
    h = (h ^ (unsigned char)*c) * 1099511628211ULL;
  char *cache = path_cache_dir_alloc();
  int n = snprintf(k->file, sizeof k->file, "%s/help/" PROGRAM "-%016llx.flags", cache,
                   (unsigned long long)h);
  if (n < 0 || (size_t)n >= sizeof k->file)
    k->file[0] = '\0';
  free(cache);
  return true;
}

static void free_flags(char **flags) {
  for (char **f = flags; f && *f; f++)
    free(*f);
  free(flags);
}

/* The kept list for k, or NULL (absent, another binary's, unreadable). */
static char **help_read_kept(const struct help_key *k) {
  if (!k->file[0])
    return NULL;
  char *text = file_read_regular(k->file, (size_t)1 << 20, NULL, NULL);
  if (!text)
    return NULL;
  size_t key_len = strlen(k->text);
  char **v = NULL;
  if (strncmp(text, k->text, key_len) == 0 && text[key_len] == '\n') {
    size_t n = 0;
    v = xcalloc(1, sizeof *v);
    for (char *line = text + key_len + 1; *line;) {
      size_t len = strcspn(line, "\n");
      if (len > 0) {
        v = xreallocarray(v, n + 2, sizeof *v);
        v[n++] = xstrndup(line, len);
        v[n] = NULL;
      }
      line += len + (line[len] == '\n');
    }
    if (n < 2) { /* not a list a --help gave */
      free_flags(v);
      v = NULL;
    }
  }
  free(text);
  return v;
}

/* Keeps flags for k (best effort: a cache that cannot be written only costs
 * another --help run later). */
static void help_keep(const struct help_key *k, char **flags) {
  if (!k->file[0])
    return;
  struct sbuf sb = {0};
  sbuf_printf(&sb, "%s\n", k->text);
  for (char **f = flags; *f; f++)
    sbuf_printf(&sb, "%s\n", *f);
  char *dir = xstrdup(k->file);
  *strrchr(dir, '/') = '\0';
  if (path_mkdir_p(dir, 0755, NULL) == 0)
    file_write_atomic(k->file, sb.data, sb.len, 0644, NULL);
  free(dir);
  sbuf_free(&sb);
}

static const char *const *llamacpp_help_flags(void) {
  static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  static char cached_key[sizeof ((struct help_key *)0)->text];
  static char **cached; /* kept for the process (a few KB), the last one read */
  char path[PATH_MAX], why[512];
  struct help_key k;
  if (!locate(path, sizeof path, why, sizeof why) || !help_key_of(path, &k))
    return NULL;
  pthread_mutex_lock(&lock);
  if (!cached || strcmp(cached_key, k.text) != 0) {
    char **flags = help_read_kept(&k);
    if (!flags && eng_help_flags_may_run()) {
      const char *argv[] = {path, "--help", NULL};
      char *help = eng_command_output_alloc((char *const *)argv, 10000, (size_t)1 << 20);
      flags = help ? eng_help_flags_parse(help) : NULL;
      free(help);
      if (flags && !(flags[0] && flags[1])) { /* not a --help */
        free_flags(flags);
        flags = NULL;
      }
      if (flags)
        help_keep(&k, flags);
    }
    if (flags) { /* an earlier list stays allocated: a caller may still read it */
      cached = flags;
      snprintf(cached_key, sizeof cached_key, "%s", k.text);
    }
  }
  const char *const *out =
      cached && strcmp(cached_key, k.text) == 0 ? (const char *const *)cached : NULL;
  pthread_mutex_unlock(&lock);
  return out;
}

static bool llamacpp_probe(char *why, size_t why_bytes) {
  char path[PATH_MAX];
  if (!locate(path, sizeof path, why, why_bytes))
    return false;
  const char *argv[] = {path, "--version", NULL};
  if (eng_command_succeeds((char *const *)argv, 10000)) {
    llamacpp_help_flags(); /* read (and kept) here, off the UI thread, for the knob checks */
    return true;
  }
  snprintf(why, why_bytes, "%s --version fails (built on another CPU?): " SETUP_HINT, path);
  return false;
}

static int llamacpp_program_words(struct launch_cmd *cmd, const struct eng_target *t,
                                  struct st_err *err) {
  char path[PATH_MAX], why[512] = "";
  if (!locate(path, sizeof path, why, sizeof why))
    return err_setf(err, "%s", why);
  /* a model file that is not there is said before anything starts */
  static const char *const model_flags[] = {"m", "md"};
  for (size_t i = 0; i < ST_ARRAY_LEN(model_flags); i++) {
    const char *model = arg_value(t->server_args, t->n_server_args, model_flags[i]);
    if (model && *model && !path_exists(model)) {
      /* the setup script's pairs are <size>-target.gguf / <size>-draft.gguf */
      const char *base = strrchr(model, '/') ? strrchr(model, '/') + 1 : model;
      size_t size_len = strcspn(base, "-");
      bool setup_pair = base[size_len] == '-' && (strcmp(base + size_len, "-target.gguf") == 0 ||
                                                  strcmp(base + size_len, "-draft.gguf") == 0);
      if (setup_pair)
        return err_setf(err, "llama.cpp model %s not found (-%s): scripts/setup-llamacpp.sh "
                             "--models %.*s writes it (and its %s)",
                        model, model_flags[i], (int)size_len, base,
                        strcmp(base + size_len, "-target.gguf") == 0 ? "draft" : "target");
      return err_setf(err, "llama.cpp model %s not found (-%s): give the path of a GGUF model",
                      model, model_flags[i]);
    }
  }
  launch_cmd_add_arg(cmd, path);
  return 0;
}

/* ---------------------------------------------------------------- log lines
 * "srv    load_model: initializing, n_slots = 4, n_ctx_slot = 1024, kv_unified = 'false'"
 * "slot print_timing: id  3 | task 2 | draft acceptance = 0.72222 (   26 accepted /    36
 *  generated), mean len =  6.20" (one per request that drafted) */
static bool number_after(const char *s, const char *key, double *out) {
  const char *p = strstr(s, key);
  return p && eng_leading_number(p + strlen(key), strlen(p + strlen(key)), out);
}

static bool int_after(const char *s, const char *key, int64_t *out) {
  const char *p = strstr(s, key);
  return p && eng_leading_int(p + strlen(key), strlen(p + strlen(key)), out);
}

static enum eng_log_kind llamacpp_parse_log_line(const char *line, struct eng_log_record *r) {
  eng_log_record_clear(r);
  const char *hit;
  double slots, per_slot, v;
  if ((hit = strstr(line, "initializing, n_slots = ")) != NULL &&
      number_after(hit, "n_slots = ", &slots) && number_after(hit, "n_ctx_slot = ", &per_slot) &&
      slots > 0 && slots < 1e6 && per_slot > 0 && per_slot < 1e12) {
    r->kind = ENG_LOG_KV_CAPACITY;
    bool unified = strstr(hit, "kv_unified = 'true'") != NULL; /* one cache all slots share */
    r->max_total_num_tokens = unified ? (int64_t)per_slot : (int64_t)slots * (int64_t)per_slot;
    r->max_running_requests = (int64_t)slots;
    r->context_len = (int64_t)per_slot;
    r->has |= ENG_LOG_HAS_MAX_TOTAL_TOKENS | ENG_LOG_HAS_MAX_RUNNING | ENG_LOG_HAS_CONTEXT_LEN;
  } else if ((hit = strstr(line, "draft acceptance = ")) != NULL &&
             number_after(hit, "draft acceptance = ", &v)) {
    r->kind = ENG_LOG_SPEC;
    r->accept_rate_frac = v;
    r->has |= ENG_LOG_HAS_ACCEPT_RATE;
    int64_t accepted, drafted;
    if (int_after(hit, "(", &accepted) && int_after(hit, "accepted /", &drafted) &&
        accepted >= 0 && drafted >= accepted) { /* counts, not garbage */
      r->accepted_tokens = accepted;
      r->drafted_tokens = drafted;
      r->has |= ENG_LOG_HAS_SPEC_TOKENS;
    }
    if (number_after(hit, "mean len = ", &v)) {
      r->accept_length = v;
      r->has |= ENG_LOG_HAS_ACCEPT_LENGTH;
    }
  }
  return r->kind;
}

/* ---------------------------------------------------------------- /metrics */
#define M(name) "llamacpp:" name

static bool llamacpp_owns_metrics(const struct prom_set *set) {
  return prom_find(set, M("requests_processing"), NULL) != NULL;
}

static void llamacpp_read_metrics(const struct prom_set *set, struct sig_point *out) {
  out->num_running = eng_prom_sum(set, M("requests_processing"));
  out->num_queued = eng_prom_sum(set, M("requests_deferred"));
  out->gen_tokens_total = eng_prom_sum(set, M("tokens_predicted_total"));
  out->drafts_total = eng_prom_sum(set, M("spec_decode_num_drafts_total"));
  out->draft_tokens_total = eng_prom_sum(set, M("spec_decode_num_draft_tokens_total"));
  out->accepted_tokens_total = eng_prom_sum(set, M("spec_decode_num_accepted_tokens_total"));
  eng_prom_per_position(set, M("spec_decode_num_accepted_tokens_per_pos_total"),
                        out->accepted_per_pos_total, SIG_MAX_POSITIONS);
  /* The per-position series appear with the first draft: before it, they are 0. */
  if (!isnan(out->drafts_total) && isnan(out->accepted_per_pos_total[0]))
    for (int p = 0; p < SIG_MAX_POSITIONS; p++)
      out->accepted_per_pos_total[p] = 0;
}

static void llamacpp_summarize(struct sig_summary *sum) {
  sig_summarize_counters(sum, "llamacpp_counter_deltas");
}

static cJSON *get_json(const char *base_url, const char *path, double timeout_s,
                       struct st_err *err) {
  long status;
  char *body = eng_http_get_alloc(base_url, path, timeout_s, &status, err);
  cJSON *json = body ? cJSON_Parse(body) : NULL;
  free(body);
  if (body && !json)
    err_setf(err, "GET %s: not JSON", path);
  return json;
}

/* KV use from /slots: the tokens every slot holds (its prompt and what it
 * generated; an idle slot keeps its cached prompt) over their contexts. */
static void llamacpp_read_live(const char *base_url, double timeout_s, struct sig_point *pt) {
  cJSON *slots = get_json(base_url, "/slots", timeout_s, NULL);
  double used = 0, capacity = 0;
  const cJSON *list = cJSON_IsArray(slots) ? slots : NULL, *slot;
  cJSON_ArrayForEach(slot, list) {
    const cJSON *n_ctx = cJSON_GetObjectItemCaseSensitive(slot, "n_ctx");
    const cJSON *n_tokens = cJSON_GetObjectItemCaseSensitive(slot, "n_prompt_tokens");
    if (cJSON_IsNumber(n_ctx))
      capacity += n_ctx->valuedouble;
    if (cJSON_IsNumber(n_tokens))
      used += n_tokens->valuedouble;
  }
  if (capacity > 0)
    pt->kv_usage_frac = used / capacity;
  cJSON_Delete(slots);
}

/* /props total_slots, /slots (n_ctx of a slot, speculative: a draft or n-gram
 * method in use). The whole KV cache is not served (/v1/models meta.n_ctx is
 * a slot's): it comes from the "initializing" log line, which says whether
 * the slots share one cache. */
static int llamacpp_query_info(const char *base_url, double timeout_s,
                               struct eng_server_info *out, struct st_err *err) {
  cJSON *props = get_json(base_url, "/props", timeout_s, err);
  if (!cJSON_IsObject(props)) {
    cJSON_Delete(props);
    return -1;
  }
  out->valid = true;
  const cJSON *slots_n = cJSON_GetObjectItemCaseSensitive(props, "total_slots");
  if (cJSON_IsNumber(slots_n) && slots_n->valuedouble >= 1 && slots_n->valuedouble < 1e6)
    out->batch_cap = (int)slots_n->valuedouble;
  cJSON_Delete(props);

  cJSON *slots = get_json(base_url, "/slots", timeout_s, NULL);
  const cJSON *list = cJSON_IsArray(slots) ? slots : NULL, *slot;
  cJSON_ArrayForEach(slot, list) {
    const cJSON *n_ctx = cJSON_GetObjectItemCaseSensitive(slot, "n_ctx");
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(slot, "speculative");
    if (cJSON_IsNumber(n_ctx) && out->kv_per_slot_tokens < 0 && n_ctx->valuedouble >= 0 &&
        n_ctx->valuedouble < 1e12)
      out->kv_per_slot_tokens = (int64_t)n_ctx->valuedouble;
    if (cJSON_IsBool(spec)) {
      out->spec_valid = true;
      out->spec_on = out->spec_on || cJSON_IsTrue(spec);
    }
  }
  cJSON_Delete(slots);
  if (out->spec_on)
    snprintf(out->spec_algorithm, sizeof out->spec_algorithm, "speculative");
  return 0;
}

static const char *const always_args[] = {"--metrics", NULL};

const struct eng_ops eng_llamacpp_ops = {
    .name = "llamacpp",
    .title = "llama.cpp",
    .recipe_engine = true,
    .program = PROGRAM,
    .launch_forms = PROGRAM,
    .recognise = llamacpp_recognise,
    .flags = llamacpp_flags,
    .enables_spec = llamacpp_enables_spec,
    .spec_problem = llamacpp_spec_problem,
    .args_for_sim = llamacpp_args_for_sim,
    .program_words = llamacpp_program_words,
    .model_flag = "-m",
    .always_args = always_args,
    .probe = llamacpp_probe,
    .locate = locate,
    .help_flags = llamacpp_help_flags,
    .ready_timeout_ms = 1800000, /* /health: 503 while loading, then 200 */
    .parse_log_line = llamacpp_parse_log_line,
    .owns_metrics = llamacpp_owns_metrics,
    .read_metrics = llamacpp_read_metrics,
    .read_live = llamacpp_read_live,
    .accept_from_counters = true,
    .summarize = llamacpp_summarize,
    .query_info = llamacpp_query_info,
};
