/* run: the past runs under a results directory, read from their manifests. */
#include "run/run.h"

#include "util/util.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

char *run_default_results_dir_alloc(void) {
  char *data = path_data_dir_alloc();
  char *dir = path_join_alloc(data, "runs");
  free(data);
  return dir;
}

static char *json_str_dup(const cJSON *obj, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  return xstrdup(cJSON_IsString(v) ? v->valuestring : "");
}

/* Reads the few manifest fields the list shows; false when dir is not a run
 * folder (no manifest, or not JSON). The results themselves are read later,
 * by run_compare_side_load(), only for the run that is loaded. */
static bool read_manifest(const char *dir, const char *folder, struct run_summary *out) {
  char *path = path_join_alloc(dir, "manifest.json");
  char *text = path_exists(path) ? file_read_all(path, NULL, NULL) : NULL;
  free(path);
  if (!text)
    return false;
  cJSON *m = cJSON_Parse(text);
  free(text);
  if (!cJSON_IsObject(m)) {
    cJSON_Delete(m);
    return false;
  }
  out->dir = xstrdup(dir);
  out->folder = xstrdup(folder);
  out->recipe = json_str_dup(m, "recipe");
  out->label = json_str_dup(m, "label");
  out->spec_label = json_str_dup(m, "spec_decoding_label");
  out->status = json_str_dup(m, "status");
  const cJSON *started = cJSON_GetObjectItemCaseSensitive(m, "started_unix_s");
  out->started_unix_s = cJSON_IsNumber(started) ? started->valuedouble : 0;
  const cJSON *results = cJSON_GetObjectItemCaseSensitive(m, "results");
  out->n_points = cJSON_IsArray(results) ? cJSON_GetArraySize(results) : 0;
  /* configurations measured: the manifest's count; a manifest from before segments has
   * one configuration per result */
  const cJSON *configs = cJSON_GetObjectItemCaseSensitive(m, "configurations_measured");
  out->n_configs = cJSON_IsNumber(configs) ? configs->valueint : out->n_points;
  out->summary = json_str_dup(m, "summary");
  const cJSON *sim = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(m, "server"),
                                                     "simulated");
  out->simulated = cJSON_IsBool(sim) ? cJSON_IsTrue(sim) : -1;
  cJSON_Delete(m);
  return true;
}

static int newest_first(const void *pa, const void *pb) {
  const struct run_summary *a = pa, *b = pb;
  if (a->started_unix_s != b->started_unix_s)
    return a->started_unix_s < b->started_unix_s ? 1 : -1;
  return strcmp(b->folder, a->folder); /* folder names start with the UTC time */
}

int run_list_past(const char *dir, struct run_summary_list *out, struct st_err *err) {
  memset(out, 0, sizeof *out);
  DIR *d = opendir(dir);
  if (!d) {
    if (errno == ENOENT)
      return 0;
    return err_setf(err, "%s: %s", dir, strerror(errno));
  }
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.')
      continue;
    char *sub = path_join_alloc(dir, e->d_name);
    struct stat sb;
    struct run_summary r = {0};
    if (stat(sub, &sb) == 0 && S_ISDIR(sb.st_mode) && read_manifest(sub, e->d_name, &r)) {
      out->runs = xreallocarray(out->runs, out->n + 1, sizeof *out->runs);
      out->runs[out->n++] = r;
    }
    free(sub);
  }
  closedir(d);
  if (out->n > 1)
    qsort(out->runs, out->n, sizeof *out->runs, newest_first);
  return 0;
}

void run_summary_list_free(struct run_summary_list *list) {
  for (size_t i = 0; i < list->n; i++) {
    struct run_summary *r = &list->runs[i];
    free(r->dir);
    free(r->folder);
    free(r->recipe);
    free(r->label);
    free(r->spec_label);
    free(r->status);
    free(r->summary);
  }
  free(list->runs);
  memset(list, 0, sizeof *list);
}

char *run_resolve_path_alloc(const char *arg, const char *results_dir, struct st_err *err) {
  if (path_exists(arg))
    return xstrdup(arg);
  char *dflt = results_dir ? NULL : run_default_results_dir_alloc();
  const char *base = results_dir ? results_dir : dflt;
  char *found = NULL;
  if (arg[0] && !strchr(arg, '/')) {
    char *under = path_join_alloc(base, arg);
    if (path_exists(under))
      found = under;
    else
      free(under);
  }
  if (!found)
    err_setf(err, "%.200s: no such file, and no run folder of that name in %.200s%s", arg, base,
             results_dir ? "" : " (--results DIR: another results directory)");
  free(dflt);
  return found;
}
