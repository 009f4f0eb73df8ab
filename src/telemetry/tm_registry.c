/* The backend table, backend choice, and the sampler thread that publishes
 * value snapshots. */
#include "telemetry/telemetry_internal.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Auto order: the most direct source first. */
static const struct tm_backend_ops *const backends[] = {
    &tm_nvml_ops, &tm_nvidia_smi_ops, &tm_amd_smi_ops, &tm_dcgm_ops, &tm_sim_ops,
};
#define N_BACKENDS ST_ARRAY_LEN(backends)

struct tm_sampler {
  struct tm_config cfg;          /* owns its strings (the *_owned fields) */
  char **urls_owned;
  char *backend_owned, *nvml_owned, *nvsmi_owned, *amdsmi_owned;

  const struct tm_backend_ops *ops; /* NULL: no backend ("none") */
  void *state;
  struct tm_backend_status report[N_BACKENDS];
  size_t n_report;

  pthread_mutex_t mu;            /* guards everything below */
  pthread_cond_t wake;
  bool stop;
  bool thread_started;
  pthread_t thread;
  pid_t server_pid;
  bool resample;                 /* the server changed: sample now, not at the next tick */
  bool attempted;                /* at least one sample attempt finished */
  struct tm_snapshot published;
  int64_t interval_ns;

  struct tm_snapshot work;       /* the sampling thread's scratch (not shared) */
};

size_t tm_backend_count(void) { return N_BACKENDS; }

const char *tm_backend_name(size_t i) { return i < N_BACKENDS ? backends[i]->name : NULL; }

static char *dup_or_null(const char *s) { return s ? xstrdup(s) : NULL; }

static struct tm_sampler *sampler_new(const struct tm_config *cfg) {
  struct tm_sampler *tm = xcalloc(1, sizeof *tm);
  tm->cfg = *cfg;
  tm->backend_owned = dup_or_null(cfg->backend);
  tm->nvml_owned = dup_or_null(cfg->nvml_library);
  tm->nvsmi_owned = dup_or_null(cfg->nvidia_smi_path);
  tm->amdsmi_owned = dup_or_null(cfg->amd_smi_path);
  tm->cfg.backend = tm->backend_owned;
  tm->cfg.nvml_library = tm->nvml_owned;
  tm->cfg.nvidia_smi_path = tm->nvsmi_owned;
  tm->cfg.amd_smi_path = tm->amdsmi_owned;
  if (cfg->n_urls) {
    tm->urls_owned = xcalloc(cfg->n_urls, sizeof *tm->urls_owned);
    for (size_t i = 0; i < cfg->n_urls; i++)
      tm->urls_owned[i] = xstrdup(cfg->urls[i]);
    tm->cfg.urls = (const char *const *)tm->urls_owned;
  }
  if (tm->cfg.interval_s <= 0)
    tm->cfg.interval_s = 1.0;
  if (tm->cfg.timeout_ms <= 0)
    tm->cfg.timeout_ms = TM_DEFAULT_TIMEOUT_MS;
  tm->interval_ns = (int64_t)(tm->cfg.interval_s * 1e9);
  tm->server_pid = cfg->server_pid;
  pthread_mutex_init(&tm->mu, NULL);
  /* The sampler waits against CLOCK_MONOTONIC, like its schedule. */
  clock_cond_init_mono(&tm->wake);
  tm_copy_str(tm->published.backend, sizeof tm->published.backend, "none");
  return tm;
}

static void sampler_set_backend(struct tm_sampler *tm, const struct tm_backend_ops *ops, void *state) {
  tm->ops = ops;
  tm->state = state;
  tm_copy_str(tm->published.backend, sizeof tm->published.backend, ops->name);
}

/* dcgm and sim read a URL; without one auto does not even try them. */
static bool needs_url(const struct tm_backend_ops *ops) {
  return ops == &tm_dcgm_ops || ops == &tm_sim_ops;
}

static void probe(struct tm_sampler *tm, size_t i, bool want_keep) {
  struct tm_backend_status *st = &tm->report[i];
  st->name = backends[i]->name;
  if (needs_url(backends[i]) && tm->cfg.n_urls == 0) {
    st->state = TM_BACKEND_UNAVAILABLE;
    tm_copy_str(st->reason, sizeof st->reason, "no --telemetry-url given");
    return;
  }
  struct st_err err = {{0}};
  void *state = NULL;
  if (backends[i]->open(&tm->cfg, &state, &err) < 0) {
    st->state = TM_BACKEND_UNAVAILABLE;
    tm_copy_str(st->reason, sizeof st->reason, err.msg[0] ? err.msg : "unavailable");
    return;
  }
  if (want_keep) {
    st->state = TM_BACKEND_USED;
    sampler_set_backend(tm, backends[i], state);
  } else {
    st->state = TM_BACKEND_AVAILABLE;
    backends[i]->close(state);
  }
}

struct tm_sampler *tm_open(const struct tm_config *cfg, struct st_err *err) {
  const char *name = cfg->backend;
  bool automatic = !name || !name[0] || strcmp(name, "auto") == 0;
  size_t named = N_BACKENDS;
  if (!automatic) {
    for (size_t i = 0; i < N_BACKENDS; i++)
      if (strcmp(backends[i]->name, name) == 0)
        named = i;
    if (named == N_BACKENDS) {
      struct sbuf names = {0};
      for (size_t i = 0; i < N_BACKENDS; i++)
        sbuf_printf(&names, "%s%s", i ? ", " : "", backends[i]->name);
      err_setf(err, "unknown telemetry backend '%s' (known: auto, %s)", name, names.data);
      sbuf_free(&names);
      return NULL;
    }
  }
  struct tm_sampler *tm = sampler_new(cfg);
  tm->n_report = N_BACKENDS;
  for (size_t i = 0; i < N_BACKENDS; i++) {
    tm->report[i].name = backends[i]->name;
    tm->report[i].state = TM_BACKEND_NOT_PROBED;
    tm_copy_str(tm->report[i].reason, sizeof tm->report[i].reason,
                automatic ? "not tried: an earlier backend works" : "not tried: another backend was named");
  }
  if (!automatic) {
    probe(tm, named, true);
    if (!tm->ops) {
      err_setf(err, "telemetry backend %s: %s", name, tm->report[named].reason);
      tm_close(tm);
      return NULL;
    }
  }
  for (size_t i = 0; i < N_BACKENDS; i++) {
    if (i == named)
      continue;
    if (automatic && !tm->ops)
      probe(tm, i, true);
    else if (cfg->probe_all)
      probe(tm, i, false);
  }
  return tm;
}

struct tm_sampler *tm_open_with_backend(const struct tm_backend_ops *ops,
                                        const struct tm_config *cfg, struct st_err *err) {
  void *state = NULL;
  if (ops->open(cfg, &state, err) < 0)
    return NULL;
  struct tm_sampler *tm = sampler_new(cfg);
  sampler_set_backend(tm, ops, state);
  tm->n_report = 1;
  tm->report[0].name = ops->name;
  tm->report[0].state = TM_BACKEND_USED;
  return tm;
}

const char *tm_chosen_backend(const struct tm_sampler *tm) {
  return tm->ops ? tm->ops->name : "none";
}

size_t tm_backend_report(const struct tm_sampler *tm, struct tm_backend_status *out, size_t max) {
  size_t n = tm->n_report < max ? tm->n_report : max;
  memcpy(out, tm->report, n * sizeof *out);
  return n;
}

/* One sample into tm->work, then publish. Called by one thread at a time. */
static int sample_and_publish(struct tm_sampler *tm, struct st_err *err) {
  struct tm_snapshot *w = &tm->work;
  memset(w, 0, sizeof *w);
  tm_copy_str(w->backend, sizeof w->backend, tm_chosen_backend(tm));
  pthread_mutex_lock(&tm->mu);
  pid_t server_pid = tm->server_pid;
  pthread_mutex_unlock(&tm->mu);
  w->server_pid = server_pid;

  int rc;
  if (!tm->ops)
    rc = err_setf(err, "no telemetry backend is available");
  else
    rc = tm->ops->sample(tm->state, w, err);
  if (rc == 0 && server_pid > 0) {
    pid_t *tree = NULL;
    size_t n_tree = tm_proc_tree("/proc", server_pid, &tree);
    if (n_tree == 0) {
      /* The server is gone (or lives in another PID namespace); attribute
       * nothing rather than everything to "rest". */
      size_t used = strlen(w->note);
      snprintf(w->note + used, sizeof w->note - used, "%sserver pid %ld not found in /proc",
               used ? "; " : "", (long)server_pid);
    } else {
      tm_attribute_server_memory(w, tree, n_tree);
    }
    free(tree);
  }
  w->taken_mono_ns = clock_mono_ns();
  w->taken_real_s = clock_real_s();

  pthread_mutex_lock(&tm->mu);
  tm->attempted = true;
  if (rc == 0) {
    w->seq = tm->published.seq + 1;
    tm->published = *w;
  } else {
    /* Keep the last good values, say they are stale and why. */
    tm->published.stale = true;
    tm_copy_str(tm->published.error, sizeof tm->published.error, err && err->msg[0] ? err->msg : "sample failed");
  }
  pthread_mutex_unlock(&tm->mu);
  return rc;
}

int tm_sample_now(struct tm_sampler *tm, struct tm_snapshot *out, struct st_err *err) {
  struct st_err local = {{0}};
  int rc = sample_and_publish(tm, err ? err : &local);
  tm_latest(tm, out);
  return rc;
}

static void *sampler_main(void *arg) {
  pthread_setname_np(pthread_self(), "st-telemetry"); /* shows in top -H and /proc */
  struct tm_sampler *tm = arg;
  /* Signals belong to the main thread. */
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, NULL);
  int64_t next_ns = clock_mono_ns();
  for (;;) {
    struct st_err err = {{0}};
    sample_and_publish(tm, &err);
    next_ns += tm->interval_ns;
    int64_t now = clock_mono_ns();
    if (next_ns < now)
      next_ns = now; /* a slow sample shifts the schedule instead of bursting */
    pthread_mutex_lock(&tm->mu);
    while (!tm->stop && !tm->resample && clock_mono_ns() < next_ns) {
      struct timespec until;
      clock_gettime(CLOCK_MONOTONIC, &until);
      int64_t wait_ns = next_ns - clock_mono_ns();
      if (wait_ns <= 0)
        break;
      until.tv_sec += wait_ns / 1000000000;
      until.tv_nsec += wait_ns % 1000000000;
      if (until.tv_nsec >= 1000000000) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000;
      }
      pthread_cond_timedwait(&tm->wake, &tm->mu, &until);
    }
    bool stop = tm->stop;
    if (tm->resample) {
      tm->resample = false;
      next_ns = clock_mono_ns();
    }
    pthread_mutex_unlock(&tm->mu);
    if (stop)
      return NULL;
  }
}

int tm_start(struct tm_sampler *tm, struct st_err *err) {
  if (tm->thread_started)
    return err_setf(err, "telemetry sampler already started");
  int rc = pthread_create(&tm->thread, NULL, sampler_main, tm);
  if (rc != 0)
    return err_setf(err, "telemetry sampler thread: %s", strerror(rc));
  tm->thread_started = true;
  return 0;
}

bool tm_latest(struct tm_sampler *tm, struct tm_snapshot *out) {
  pthread_mutex_lock(&tm->mu);
  bool attempted = tm->attempted;
  *out = tm->published;
  pthread_mutex_unlock(&tm->mu);
  if (out->seq > 0 && clock_mono_ns() - out->taken_mono_ns > 3 * tm->interval_ns)
    out->stale = true;
  return attempted;
}

void tm_set_server_pid(struct tm_sampler *tm, pid_t server_pid) {
  pthread_mutex_lock(&tm->mu);
  if (tm->server_pid != server_pid) {
    /* another process: what was measured of the old one is no longer its figures */
    tm->server_pid = server_pid;
    tm->published.stale = true;
    tm->resample = true;
    pthread_cond_signal(&tm->wake);
  }
  pthread_mutex_unlock(&tm->mu);
}

void tm_close(struct tm_sampler *tm) {
  if (!tm)
    return;
  if (tm->thread_started) {
    pthread_mutex_lock(&tm->mu);
    tm->stop = true;
    pthread_cond_signal(&tm->wake);
    pthread_mutex_unlock(&tm->mu);
    /* Waits for an in-flight sample; every backend call is bounded by
     * cfg.timeout_ms (subprocesses are killed, curl times out). */
    pthread_join(tm->thread, NULL);
  }
  if (tm->ops)
    tm->ops->close(tm->state);
  pthread_cond_destroy(&tm->wake);
  pthread_mutex_destroy(&tm->mu);
  str_vec_free(tm->urls_owned, tm->cfg.n_urls);
  free(tm->backend_owned);
  free(tm->nvml_owned);
  free(tm->nvsmi_owned);
  free(tm->amdsmi_owned);
  free(tm);
}
