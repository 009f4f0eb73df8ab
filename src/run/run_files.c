/* run: the run folder — manifest, resolved recipe, per-point results. */
#include "run/run_internal.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

const char *run_point_end_name(enum point_end end) {
  switch (end) {
  case POINT_DONE: return "done";
  case POINT_STOPPED: return "stopped";
  case POINT_SERVER_DIED: return "server_died";
  case POINT_RESTART: return "restarted";
  case POINT_FAILED: return "failed";
  case POINT_REQUESTS_FAILED: return "requests_failed";
  case POINT_CONC_CHANGED: return "conc_changed";
  }
  return "?";
}

/* Folder-safe copy of a recipe name: [A-Za-z0-9._-], others become '_'. */
static void sanitize_name(const char *in, char *out, size_t out_bytes) {
  size_t n = 0;
  for (; *in && n + 1 < out_bytes; in++)
    out[n++] = (isalnum((unsigned char)*in) || strchr("._-", *in)) ? *in : '_';
  out[n] = '\0';
}

int run_files_mkdir_stamped(const char *results_dir, const char *name, const char *suffix,
                            char *dir_out, size_t dir_bytes, struct st_err *err) {
  char *base = results_dir ? xstrdup(results_dir) : run_default_results_dir_alloc();
  if (path_mkdir_p(base, 0755, err) != 0) {
    free(base);
    return -1;
  }
  time_t now = time(NULL);
  struct tm tm_utc;
  gmtime_r(&now, &tm_utc);
  char stamp[32], safe[160];
  strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm_utc);
  sanitize_name(name, safe, sizeof(safe));
  int rc = -1;
  for (int attempt = 1; attempt < 100; attempt++) {
    char leaf[320];
    snprintf(leaf, sizeof(leaf), "%s-%s%s%s", stamp, safe, suffix ? "-" : "", suffix ? suffix : "");
    if (attempt > 1) {
      size_t len = strlen(leaf);
      snprintf(leaf + len, sizeof(leaf) - len, "-%d", attempt);
    }
    char *dir = path_join_alloc(base, leaf);
    /* One mkdir: it fails on any existing entry, a (dangling) symlink
     * planted at the name included, so the folder is always our own. */
    if (mkdir(dir, 0755) == 0) {
      snprintf(dir_out, dir_bytes, "%s", dir);
      rc = 0;
    } else if (errno != EEXIST) {
      err_setf(err, "cannot create directory %s: %s", dir, strerror(errno));
    }
    free(dir);
    if (rc == 0 || (err && err->msg[0]))
      break;
  }
  if (rc != 0 && err && !err->msg[0])
    err_setf(err, "cannot make a folder under %s", base);
  free(base);
  return rc;
}

int run_files_make_dir(struct run *run, struct st_err *err) {
  char name[160];
  sanitize_name(run->cfg.recipe->name, name, sizeof(name));
  /* A label the recipe name already ends with is not said twice ("-mtp-mtp"). */
  const char *label = run->cfg.label;
  size_t name_len = strlen(name), label_len = label ? strlen(label) : 0;
  if (label && (!label[0] || (name_len > label_len && name[name_len - label_len - 1] == '-' &&
                              strcmp(name + name_len - label_len, label) == 0)))
    label = NULL;
  char dir[sizeof run->dir];
  if (run_files_mkdir_stamped(run->cfg.results_dir, name, label, dir, sizeof dir, err) != 0)
    return -1;
  pthread_mutex_lock(&run->lock);
  snprintf(run->dir, sizeof(run->dir), "%s", dir);
  pthread_mutex_unlock(&run->lock);
  return 0;
}

/* Writes one JSON file of the run folder; a measured result that cannot be
 * written there is rescued elsewhere (file_write_or_rescue), never dropped. */
static int write_json(struct run *run, const char *leaf, cJSON *doc, struct st_err *err) {
  char *text = cJSON_Print(doc);
  char *path = path_join_alloc(run->dir, leaf);
  size_t len = strlen(text);
  text = xrealloc(text, len + 2);
  text[len] = '\n';
  text[len + 1] = '\0';
  int rc = file_write_or_rescue(path, text, len + 1, 0644, err);
  if (rc != 0) /* the run's outcome says so at its end (run.c) */
    run->n_file_failures++;
  free(path);
  free(text);
  return rc;
}

static cJSON *string_array(char *const *items, size_t n) {
  cJSON *arr = cJSON_CreateArray();
  for (size_t i = 0; i < n; i++)
    cJSON_AddItemToArray(arr, cJSON_CreateString(items[i]));
  return arr;
}


/* The server arguments with the sweep's concurrency as the expression the
 * recipe writes ("$CONC"), not one point's number: the command resolved once
 * more with a concurrency no flag would have by chance, that number put back
 * as $CONC. Arguments that follow the concurrency some other way ($((CONC*2)))
 * keep this point's value and are listed in *derived. NULL when the two
 * resolutions do not line up (the template is then unknown). */
#define CONC_PROBE 987654321
static cJSON *argv_template_json(struct run *run, const struct recipe_point *point,
                                 cJSON **derived) {
  *derived = NULL;
  if (!point)
    return NULL;
  struct recipe_point probe = *point;
  probe.conc = CONC_PROBE;
  struct recipe_cmd t;
  if (recipe_server_cmd(run->cfg.recipe, &probe, &t, NULL) != 0)
    return NULL;
  for (size_t i = 0; i < run->cfg.n_overrides; i++)
    recipe_cmd_apply_override(&t, run->cfg.overrides[i], NULL);
  cJSON *out = NULL;
  if (t.argc == run->rcmd.argc) {
    out = cJSON_CreateArray();
    char needle[16];
    snprintf(needle, sizeof needle, "%d", CONC_PROBE);
    for (size_t i = 0; i < t.argc; i++) {
      const char *at = strstr(t.argv[i], needle);
      if (at) {
        char *arg = xasprintf("%.*s$CONC%s", (int)(at - t.argv[i]), t.argv[i], at + strlen(needle));
        cJSON_AddItemToArray(out, cJSON_CreateString(arg));
        free(arg);
        continue;
      }
      cJSON_AddItemToArray(out, cJSON_CreateString(run->rcmd.argv[i]));
      if (strcmp(t.argv[i], run->rcmd.argv[i]) != 0) {
        if (!*derived)
          *derived = cJSON_CreateArray();
        cJSON_AddItemToArray(*derived, cJSON_CreateString(i > 0 ? run->rcmd.argv[i - 1] : ""));
      }
    }
  }
  recipe_cmd_fini(&t);
  return out;
}

int run_files_write_recipe(struct run *run, const struct launch_cmd *cmd,
                           const struct recipe_point *point, struct st_err *err) {
  const struct recipe *r = run->cfg.recipe;
  cJSON *doc = cJSON_CreateObject();
  cJSON_AddNumberToObject(doc, "schema_version", 1);
  cJSON_AddStringToObject(doc, "name", r->name);
  json_add_text_or_null(doc, "entry", r->entry);
  json_add_text_or_null(doc, "file", r->file);
  cJSON_AddNumberToObject(doc, "line", r->line);
  json_add_text_or_null(doc, "model", r->model);
  json_add_text_or_null(doc, "model_prefix", r->model_prefix);
  json_add_text_or_null(doc, "precision", r->precision);
  json_add_text_or_null(doc, "runner", r->runner);
  json_add_text_or_null(doc, "framework", r->framework);
  json_add_text_or_null(doc, "engine", r->engine);
  json_add_text_or_null(doc, "image", r->image);
  json_add_text_or_null(doc, "script_path", r->script_path);
  cJSON_AddStringToObject(doc, "spec_decoding", recipe_spec_name(r->spec));
  cJSON_AddNumberToObject(doc, "isl", r->isl); /* the scenario's (export writes these) */
  cJSON_AddNumberToObject(doc, "osl", r->osl);
  cJSON_AddNumberToObject(doc, "measured_isl", run->cfg.isl > 0 ? run->cfg.isl : r->isl);
  cJSON_AddNumberToObject(doc, "measured_osl", run->cfg.osl > 0 ? run->cfg.osl : r->osl);
  cJSON_AddNumberToObject(doc, "random_range_ratio", r->bench.random_range_ratio);
  cJSON_AddBoolToObject(doc, "use_chat_template", r->bench.use_chat_template);
  cJSON *points = cJSON_AddArrayToObject(doc, "points");
  for (size_t i = 0; i < r->n_points; i++) {
    cJSON *p = cJSON_CreateObject();
    cJSON_AddNumberToObject(p, "tp", r->points[i].tp);
    cJSON_AddNumberToObject(p, "ep", r->points[i].ep);
    cJSON_AddBoolToObject(p, "dp_attn", r->points[i].dp_attn);
    cJSON_AddNumberToObject(p, "conc", r->points[i].conc);
    cJSON_AddItemToArray(points, p);
  }
  cJSON_AddItemToObject(doc, "overrides", string_array(run->cfg.overrides, run->cfg.n_overrides));
  cJSON *server = cJSON_AddObjectToObject(doc, "server");
  json_add_text_or_null(server, "recipe_engine", run->rcmd.engine);
  json_add_text_or_null(server, "program", run->rcmd.program);
  cJSON_AddItemToObject(server, "argv", string_array(run->rcmd.argv, run->rcmd.argc));
  cJSON *derived;
  cJSON *tmpl = argv_template_json(run, point, &derived);
  if (tmpl)
    cJSON_AddItemToObject(server, "argv_template", tmpl);
  if (derived)
    cJSON_AddItemToObject(server, "conc_derived_flags", derived);
  cJSON_AddItemToObject(server, "env", string_array(run->rcmd.env, run->rcmd.n_env));
  cJSON_AddStringToObject(server, "launched_engine", run->cfg.engine->name);
  if (run->cfg.attach_url) /* nothing was launched: the server was there */
    cJSON_AddStringToObject(server, "attached_url", run->cfg.attach_url);
  char *line = launch_cmd_format_alloc(cmd);
  cJSON_AddStringToObject(server, "launch_command", line);
  free(line);
  cJSON_AddItemToObject(server, "launch_argv", string_array(cmd->argv, cmd->argc));
  cJSON_AddItemToObject(server, "launch_env", string_array(cmd->env, cmd->n_env));
  int rc = write_json(run, "recipe.json", doc, err);
  cJSON_Delete(doc);
  return rc;
}

static cJSON *log_tail_json(struct run *run, size_t n_lines) {
  cJSON *arr = cJSON_CreateArray();
  if (!run->launcher)
    return arr;
  char *tail = launcher_tail_alloc(run->launcher, n_lines);
  char *save = NULL;
  for (char *line = strtok_r(tail, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
    cJSON_AddItemToArray(arr, cJSON_CreateString(line));
  free(tail);
  return arr;
}

static cJSON *server_json(struct run *run) {
  cJSON *s = cJSON_CreateObject();
  cJSON_AddStringToObject(s, "engine", run->cfg.engine->name);
  cJSON_AddBoolToObject(s, "simulated", run->cfg.engine->simulated);
  json_add_text_or_null(s, "command", run->server_cmd_line);
  cJSON_AddNumberToObject(s, "port", run->port);
  json_add_text_or_null(s, "model_id", run->server.model_id);
  pthread_mutex_lock(&run->lock);
  struct eng_log_state ls = run->log_state;
  struct run_server_info info = run->server;
  pthread_mutex_unlock(&run->lock);
  cJSON_AddBoolToObject(s, "spec_reported", info.spec_known || ls.spec_seen);
  json_add_text_or_null(s, "speculative_algorithm", info.spec_algorithm);
  cJSON_AddBoolToObject(s, "spec_in_log", ls.spec_seen);
  if (info.max_total_num_tokens > 0)
    cJSON_AddNumberToObject(s, "max_total_num_tokens", (double)info.max_total_num_tokens);
  else if (ls.max_total_num_tokens_valid)
    cJSON_AddNumberToObject(s, "max_total_num_tokens", (double)ls.max_total_num_tokens);
  else
    cJSON_AddNullToObject(s, "max_total_num_tokens");
  if (run->kv_capacity_was > 0)
    cJSON_AddNumberToObject(s, "max_total_num_tokens_was", (double)run->kv_capacity_was);
  if (info.kv_per_slot_tokens > 0)
    cJSON_AddNumberToObject(s, "kv_per_slot_tokens", (double)info.kv_per_slot_tokens);
  int cap = run_batch_cap(run, &ls);
  if (cap > 0)
    cJSON_AddNumberToObject(s, "batch_cap", cap);
  cJSON *log = cJSON_AddObjectToObject(s, "log");
  cJSON_AddNumberToObject(log, "decode_lines", (double)ls.n_decode_lines);
  cJSON_AddNumberToObject(log, "prefill_lines", (double)ls.n_prefill_lines);
  if (ls.accept_length_valid)
    cJSON_AddNumberToObject(log, "last_accept_length", ls.accept_length);
  if (ls.accept_rate_valid)
    cJSON_AddNumberToObject(log, "last_accept_rate", ls.accept_rate_frac);
  if (ls.gen_valid)
    cJSON_AddNumberToObject(log, "last_gen_throughput_tok_per_s", ls.gen_tok_per_s);
  if (run->launcher) {
    struct launch_status st;
    launcher_get_status(run->launcher, &st);
    cJSON_AddBoolToObject(s, "exited", st.exited);
    if (st.exited) {
      cJSON_AddNumberToObject(s, "exit_code", st.exit_code);
      cJSON_AddNumberToObject(s, "exit_signal", st.exit_signal);
      cJSON_AddBoolToObject(s, "stop_requested", st.stop_requested);
    }
    if (st.ready_after_ms >= 0)
      cJSON_AddNumberToObject(s, "ready_after_s", (double)st.ready_after_ms / 1000.0);
  }
  return s;
}

/* The point just saved, as the snapshot's history keeps it: the figures of
 * the measured result itself (the numbers its JSON was written from). */
static void remember_point(struct run *run, const struct run_point_extras *x, const char *leaf,
                           const struct measure_result *res) {
  const struct snap_run *s = &run->snap;
  const struct results_metrics *m = &res->metrics;
  struct snap_point_result p;
  memset(&p, 0, sizeof(p));
  p.point_index = x->point_index;
  p.segment = x->segment;
  run_files_config_label(run, x->point_index, x->conc, p.config, sizeof p.config);
  p.conc = x->conc;
  p.conc_end = s->concurrency.target > 0 ? s->concurrency.target : x->conc;
  p.measured_to_end = x->end == POINT_DONE;
  snprintf(p.end, sizeof(p.end), "%s", run_point_end_name(x->end));
  snprintf(p.result_file, sizeof(p.result_file), "%s", leaf);
  p.completed = m->completed;
  p.total = res->settings.num_prompts;
  if (res->planned_num_prompts > 0 && res->planned_num_prompts != res->settings.num_prompts)
    p.planned = res->planned_num_prompts; /* measure_spec.min_duration_s raised it */
  /* requests the run stopped (a restart, Ctrl-C) did not fail: the result
   * keeps them apart (servetop.cut_by_stop) */
  p.failed = m->failed;
  p.cut_by_stop = m->cut_by_stop;
  p.duration_s = m->duration_s;
  p.figs = m->figs;
  if (m->completed == 0) /* nothing completed: no rate, no latency of this point */
    for (int i = 0; i < FIG_N; i++)
      if (fig_desc((enum fig_id)i)->combine == FIG_COMBINE_COUNT_PER_SPAN ||
          fig_desc((enum fig_id)i)->kind == FIG_DIST)
        p.figs.f[i].valid = false;
  p.drafts_valid = m->accept_draft_tokens > 0;
  p.drafts_accepted_frac =
      p.drafts_valid ? (double)m->accept_accepted_tokens / (double)m->accept_draft_tokens : 0;
  p.kv_tokens_valid = s->load.max_total_num_tokens_valid;
  p.kv_tokens = s->load.max_total_num_tokens;
  p.batch_cap = s->load.batch_cap_valid ? s->load.batch_cap : -1;
  snap_points_add(&run->snap.points, &p);
}

/* The spec-decoding label a result carries: the recipe's; for an attached
 * server (no recipe of its own) the method it was measured with, as the
 * server reports it (llama.cpp's speculative slots: a draft model; SGLang's
 * EAGLE / NEXTN: MTP), "none" when it reports none. */
static const char *spec_label(struct run *run, char *buf, size_t buf_bytes) {
  if (!run->cfg.attach_url)
    return recipe_spec_name(run->cfg.recipe->spec);
  pthread_mutex_lock(&run->lock);
  char algo[sizeof run->server.spec_algorithm];
  snprintf(algo, sizeof algo, "%s", run->server.spec_algorithm);
  bool on = algo[0] != '\0' || run->log_state.spec_seen;
  pthread_mutex_unlock(&run->lock);
  if (!on)
    return recipe_spec_name(run->cfg.recipe->spec);
  const char *engine = run->cfg.engine ? run->cfg.engine->name : "";
  if (strcmp(engine, "llamacpp") == 0 || strcasecmp(algo, "standalone") == 0)
    return "draft_model";
  if (!algo[0] || strncasecmp(algo, "eagle", 5) == 0 || strcasecmp(algo, "nextn") == 0 ||
      strcasecmp(algo, "mtp") == 0)
    return "mtp";
  size_t n = 0;
  for (; algo[n] && n + 1 < buf_bytes; n++)
    buf[n] = (char)tolower((unsigned char)algo[n]);
  buf[n] = '\0';
  return buf;
}

int run_files_write_point(struct run *run, const struct measure_result *res,
                          const struct run_point_extras *x, struct st_err *err) {
  cJSON *doc = cJSON_Parse(res->json);
  if (!doc)
    return err_setf(err, "run: the results module produced JSON that does not parse");
  cJSON *st = cJSON_AddObjectToObject(doc, "servetop_run");
  cJSON_AddStringToObject(st, "recipe", run->cfg.recipe->name);
  json_add_text_or_null(st, "label", run->cfg.label);
  char method[64];
  cJSON_AddStringToObject(st, "spec_decoding_label", spec_label(run, method, sizeof method));
  cJSON_AddNumberToObject(st, "point_index", x->point_index);
  cJSON_AddNumberToObject(st, "segment", x->segment);
  char config[RUN_CONFIG_LABEL_BYTES];
  run_files_config_label(run, x->point_index, x->conc, config, sizeof config);
  cJSON_AddStringToObject(st, "configuration", config);
  cJSON_AddNumberToObject(st, "concurrency", x->conc);
  cJSON_AddStringToObject(st, "end", run_point_end_name(x->end));
  pthread_mutex_lock(&run->lock);
  bool mislabelled = run->outcome.mislabelled;
  pthread_mutex_unlock(&run->lock);
  cJSON_AddBoolToObject(st, "mislabelled", mislabelled);
  cJSON_AddItemToObject(st, "overrides", string_array(run->cfg.overrides, run->cfg.n_overrides));
  cJSON *marks = cJSON_AddArrayToObject(st, "concurrency_changes");
  for (int i = 0; i < x->n_marks; i++) {
    cJSON *m = cJSON_CreateObject();
    cJSON_AddNumberToObject(m, "t_s", x->mark_s[i]);
    cJSON_AddNumberToObject(m, "concurrency", x->mark_conc[i]);
    cJSON_AddItemToArray(marks, m);
  }
  cJSON_AddItemToObject(st, "server", server_json(run));
  /* Per-second GPU memory (per GPU and the server's processes), power and utilization. */
  if (x->gpu_series)
    cJSON_AddItemToObject(st, "gpu_telemetry", tm_series_to_json(x->gpu_series));
  else
    cJSON_AddNullToObject(st, "gpu_telemetry");
  if (x->end == POINT_SERVER_DIED)
    cJSON_AddItemToObject(st, "server_log_tail", log_tail_json(run, 20));

  /* result-conc<N>.json for a point's first segment, -seg<K> for the ones after it; -k
   * only where a name is taken already (two sweep points at one concurrency) */
  char stem[48], leaf[64];
  if (x->segment > 1)
    snprintf(stem, sizeof stem, "result-conc%d-seg%d", x->conc, x->segment);
  else
    snprintf(stem, sizeof stem, "result-conc%d", x->conc);
  snprintf(leaf, sizeof(leaf), "%s.json", stem);
  for (int k = 2; k < 1000; k++) {
    char *path = path_join_alloc(run->dir, leaf);
    bool taken = path_exists(path);
    free(path);
    if (!taken)
      break;
    snprintf(leaf, sizeof(leaf), "%s-%d.json", stem, k);
  }
  int rc = write_json(run, leaf, doc, err);
  if (rc == 0)
    remember_point(run, x, leaf, res);
  cJSON_Delete(doc);
  if (rc != 0)
    return -1;
  pthread_mutex_lock(&run->lock);
  run->points = xreallocarray(run->points, run->n_points_done + 1, sizeof(*run->points));
  struct run_point_record *rec = &run->points[run->n_points_done++];
  rec->point_index = x->point_index;
  rec->segment = x->segment;
  rec->conc = x->conc;
  rec->end = x->end;
  snprintf(rec->result_file, sizeof(rec->result_file), "%s", leaf);
  snprintf(rec->config, sizeof rec->config, "%s", config);
  rec->n_overrides = run->cfg.n_overrides;
  rec->overrides = xcalloc(rec->n_overrides + 1, sizeof(char *));
  for (size_t i = 0; i < rec->n_overrides; i++)
    rec->overrides[i] = xstrdup(run->cfg.overrides[i]);
  pthread_mutex_unlock(&run->lock);
  run_publish(run); /* the point's own last picture, before the next one starts */
  /* the manifest lists it now: a run that ends in any way (quit, killed) still says what
   * it saved (written once more, with the outcome, when the run ends) */
  struct st_err merr = {{0}};
  if (run_files_write_manifest(run, &merr) != 0)
    log_msg(LOG_WARN, "run: %s", merr.msg);
  return 0;
}

void run_files_config_label(const struct run *run, int point_index, int conc, char *out,
                            size_t out_bytes) {
  size_t n = 0;
#define PUT(...) (n += (size_t)snprintf(out + n, n < out_bytes ? out_bytes - n : 0, __VA_ARGS__), \
                  n = n < out_bytes ? n : out_bytes)
  PUT("conc %d", conc);
  const struct recipe *r = run->cfg.recipe;
  if (r && point_index >= 0 && (size_t)point_index < r->n_points) {
    const struct recipe_point *p = &r->points[point_index];
    bool tp_varies = false, ep_varies = false;
    for (size_t i = 1; i < r->n_points; i++) {
      tp_varies |= r->points[i].tp != r->points[0].tp;
      ep_varies |= r->points[i].ep != r->points[0].ep;
    }
    if (tp_varies)
      PUT(" tp%d", p->tp);
    if (ep_varies)
      PUT(" ep%d", p->ep);
  }
  /* the restarts' knobs: a key set again shows its last value, once */
  for (size_t i = run->n_overrides_start; i < run->cfg.n_overrides; i++) {
    char key[128], later_key[128];
    const char *value;
    if (run_override_split(run->cfg.overrides[i], key, sizeof key, &value, NULL) != 0)
      continue;
    bool again = false;
    for (size_t j = i + 1; j < run->cfg.n_overrides && !again; j++)
      again = run_override_split(run->cfg.overrides[j], later_key, sizeof later_key, &value,
                                 NULL) == 0 && strcmp(key, later_key) == 0;
    if (!again)
      PUT(" %s", run->cfg.overrides[i]);
  }
#undef PUT
  if (n >= out_bytes && out_bytes > 4)
    memcpy(out + out_bytes - 4, "...", 4);
}

int run_files_summary(struct run *run, char *out, size_t out_bytes) {
  pthread_mutex_lock(&run->lock);
  size_t n_results = run->n_points_done;
  const char **labels = xcalloc(n_results + 1, sizeof(*labels));
  int n_configs = 0;
  for (size_t i = 0; i < n_results; i++) {
    bool seen = false;
    for (int k = 0; k < n_configs && !seen; k++)
      seen = strcmp(labels[k], run->points[i].config) == 0;
    if (!seen)
      labels[n_configs++] = run->points[i].config;
  }
  struct sbuf sb = {0};
  if (n_configs == 0) {
    sbuf_puts(&sb, "nothing measured yet");
  } else {
    sbuf_printf(&sb, "%d configuration%s measured", n_configs, n_configs == 1 ? "" : "s");
    if ((size_t)n_configs != n_results)
      sbuf_printf(&sb, " (%zu results)", n_results);
    for (int k = 0; k < n_configs; k++)
      sbuf_printf(&sb, "%s%s", k ? ", " : ": ", labels[k]);
  }
  pthread_mutex_unlock(&run->lock);
  free(labels);
  snprintf(out, out_bytes, "%s", sb.data);
  if (sb.len >= out_bytes && out_bytes > 4)
    memcpy(out + out_bytes - 4, "...", 4);
  sbuf_free(&sb);
  return n_configs;
}

void run_files_free_records(struct run *run) {
  for (size_t i = 0; i < run->n_points_done; i++)
    str_vec_free(run->points[i].overrides, run->points[i].n_overrides);
  free(run->points);
  run->points = NULL;
  run->n_points_done = 0;
}

int run_files_write_manifest(struct run *run, struct st_err *err) {
  const struct recipe *r = run->cfg.recipe;
  struct run_outcome out;
  run_get_outcome(run, &out);
  cJSON *doc = cJSON_CreateObject();
  cJSON_AddNumberToObject(doc, "schema_version", 1);
  cJSON_AddStringToObject(doc, "kind", "servetop-run");
  cJSON_AddStringToObject(doc, "servetop_version", SERVETOP_VERSION);
  cJSON_AddStringToObject(doc, "recipe", r->name);
  json_add_text_or_null(doc, "recipe_file", r->file);
  cJSON_AddNumberToObject(doc, "recipe_line", r->line);
  json_add_text_or_null(doc, "label", run->cfg.label);
  char method[64];
  cJSON_AddStringToObject(doc, "spec_decoding_label", spec_label(run, method, sizeof method));
  cJSON_AddStringToObject(doc, "status", run_status_name(out.status));
  cJSON_AddStringToObject(doc, "message", out.message);
  cJSON_AddBoolToObject(doc, "mislabelled", out.mislabelled);
  cJSON_AddNumberToObject(doc, "started_unix_s", run->started_unix_s);
  cJSON_AddNumberToObject(doc, "ended_unix_s", clock_real_s());
  json_add_text_or_null(doc, "gpus", run->cfg.gpus);
  cJSON_AddItemToObject(doc, "overrides", string_array(run->cfg.overrides, run->cfg.n_overrides));
  cJSON_AddItemToObject(doc, "server", server_json(run));
  /* every result saved, each one segment: one concurrency on one server configuration */
  char summary[1024];
  int n_configs = run_files_summary(run, summary, sizeof summary);
  cJSON_AddNumberToObject(doc, "configurations_measured", n_configs);
  cJSON_AddStringToObject(doc, "summary", summary);
  cJSON *points = cJSON_AddArrayToObject(doc, "results");
  pthread_mutex_lock(&run->lock);
  for (size_t i = 0; i < run->n_points_done; i++) {
    const struct run_point_record *rec = &run->points[i];
    cJSON *p = cJSON_CreateObject();
    cJSON_AddNumberToObject(p, "point_index", rec->point_index);
    cJSON_AddNumberToObject(p, "segment", rec->segment);
    cJSON_AddNumberToObject(p, "concurrency", rec->conc);
    cJSON_AddStringToObject(p, "configuration", rec->config);
    cJSON_AddItemToObject(p, "overrides", string_array(rec->overrides, rec->n_overrides));
    cJSON_AddStringToObject(p, "file", rec->result_file);
    cJSON_AddStringToObject(p, "end", run_point_end_name(rec->end));
    cJSON_AddItemToArray(points, p);
  }
  pthread_mutex_unlock(&run->lock);
  if (out.status != RUN_STATUS_OK && out.status != RUN_STATUS_MISLABELLED)
    cJSON_AddItemToObject(doc, "server_log_tail", log_tail_json(run, 20));
  int rc = write_json(run, "manifest.json", doc, err);
  cJSON_Delete(doc);
  return rc;
}
