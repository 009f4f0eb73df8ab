/* The session controller: what one launch asks for — one run, an attached
 * server, or the two arms of an A/B one after the other or at the same time
 * — started, sequenced, watched and stopped in one place, for the dashboard
 * and the headless `servetop run` / `servetop attach` alike (run.h). */
#include "run/run.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct run_session {
  struct run_session_config cfg;             /* a copy; what it points at is borrowed */
  struct run *volatile run[RUN_SESSION_MAX_ARMS]; /* NULL until started; freed at the end */
  enum run_arm_state state[RUN_SESSION_MAX_ARMS];
  char start_error[RUN_SESSION_MAX_ARMS][512];
  struct snap_run *last[RUN_SESSION_MAX_ARMS]; /* the newest picture of each arm (heap) */
  bool have_last[RUN_SESSION_MAX_ARMS];
  uint64_t run_seq[RUN_SESSION_MAX_ARMS];      /* of the run's slot, as last read */
  volatile sig_atomic_t stop_requested;
  /* repeats: the one running (or last run), the outcomes of those that ended, their labels */
  int repeat;
  int repeats_done[RUN_SESSION_MAX_ARMS];
  struct run_outcome *rep_outcome[RUN_SESSION_MAX_ARMS]; /* RUN_SESSION_MAX_REPEATS each */
  const char *base_label[RUN_SESSION_MAX_ARMS];
  char label[RUN_SESSION_MAX_ARMS][128];
};

/* ---------------------------------------------------------------- the ETA of arms */

bool run_arms_remaining_s(const struct snap_run *const *arms, const int *n_points,
                          const bool *skip, size_t n, bool parallel, double *out_s) {
  double total = 0, typical = 0, ready = 0;
  bool have_typical = false;
  for (size_t a = 0; a < n && !have_typical; a++)
    if (arms[a]) {
      have_typical = snap_mean_point_s(arms[a], &typical);
      if (arms[a]->server.ready_after_s > 0)
        ready = arms[a]->server.ready_after_s;
    }
  /* the first arm's first point: no point finished yet, that one projected */
  for (size_t a = 0; a < n && !have_typical; a++) {
    const struct snap_progress *p = arms[a] ? &arms[a]->progress : NULL;
    if (p && p->phase == SNAP_PHASE_MEASURING && !p->warmup && p->eta_valid &&
        p->elapsed_s + p->eta_s > 0) {
      typical = p->elapsed_s + p->eta_s;
      have_typical = true;
    }
  }
  for (size_t a = 0; a < n; a++) {
    if (skip && skip[a])
      continue;
    double left;
    if (!arms[a] || !snap_run_remaining_s(arms[a], &left)) {
      /* not started (or launching, nothing of its own yet): its points at the
       * other arm's typical length, its launch */
      if (!have_typical)
        return false;
      left = ready + (n_points[a] > 0 ? n_points[a] : 1) * typical;
    }
    if (parallel)
      total = left > total ? left : total;
    else
      total += left;
  }
  *out_s = total;
  return true;
}

/* ---------------------------------------------------------------- arms */

static int arm_points(const struct run_config *cfg) {
  return cfg->sweep && cfg->recipe ? (int)cfg->recipe->n_points : 1;
}

static void start_arm(struct run_session *s, size_t i) {
  if (s->cfg.repeats > 1) { /* each repeat its own folder: "<label>-r<k>" */
    snprintf(s->label[i], sizeof s->label[i], "%s%sr%d", s->base_label[i] ? s->base_label[i] : "",
             s->base_label[i] && s->base_label[i][0] ? "-" : "", s->repeat + 1);
    s->cfg.arm[i].label = s->label[i];
  }
  const struct run_config *cfg = &s->cfg.arm[i];
  if (!cfg->engine && !cfg->attach_url && s->cfg.engine_why[i]) {
    snprintf(s->start_error[i], sizeof s->start_error[i], "%s", s->cfg.engine_why[i]);
    s->state[i] = RUN_ARM_NOT_STARTED;
    return;
  }
  struct st_err err = {{0}};
  struct run *run = run_start(cfg, &err);
  if (!run) {
    snprintf(s->start_error[i], sizeof s->start_error[i], "%s", err.msg[0] ? err.msg : "cannot start");
    s->state[i] = RUN_ARM_NOT_STARTED;
    return;
  }
  s->run[i] = run;
  s->state[i] = RUN_ARM_RUNNING;
  if (s->stop_requested) /* asked between the check and now: it goes at once */
    run_stop(run);
}

/* The arms not started yet will not be. */
static void call_off_waiting(struct run_session *s) {
  for (size_t i = 0; i < s->cfg.n_arms; i++)
    if (s->state[i] == RUN_ARM_WAITING)
      s->state[i] = RUN_ARM_NOT_STARTED;
}

static bool any_in(const struct run_session *s, enum run_arm_state state) {
  for (size_t i = 0; i < s->cfg.n_arms; i++)
    if (s->state[i] == state)
      return true;
  return false;
}

/* Every arm has ended its repeat and more are asked for (and nothing was stopped, failed or
 * could not start): every arm waits again, for the next repeat (its run joined and freed; its
 * last picture kept until the next one comes). */
static bool next_repeat(struct run_session *s) {
  if (s->repeat + 1 >= s->cfg.repeats || s->stop_requested)
    return false;
  for (size_t i = 0; i < s->cfg.n_arms; i++) {
    if (s->state[i] != RUN_ARM_ENDED)
      return false;
    struct run_outcome o;
    run_get_outcome(s->run[i], &o);
    if (o.status != RUN_STATUS_OK)
      return false;
  }
  for (size_t i = 0; i < s->cfg.n_arms; i++) {
    run_free(s->run[i]);
    s->run[i] = NULL;
    s->state[i] = RUN_ARM_WAITING;
    s->run_seq[i] = 0;
  }
  s->repeat++;
  return true;
}

/* Sequential arms: the next one starts when none runs, unless the session
 * was stopped or an arm could not start. */
static bool start_next(struct run_session *s) {
  if (!any_in(s, RUN_ARM_RUNNING) && !any_in(s, RUN_ARM_WAITING) && next_repeat(s) &&
      s->cfg.parallel) {
    for (size_t i = 0; i < s->cfg.n_arms; i++)
      start_arm(s, i);
    return true;
  }
  if (any_in(s, RUN_ARM_RUNNING) || !any_in(s, RUN_ARM_WAITING))
    return false;
  if (s->stop_requested || any_in(s, RUN_ARM_NOT_STARTED)) {
    call_off_waiting(s);
    return true;
  }
  for (size_t i = 0; i < s->cfg.n_arms; i++)
    if (s->state[i] == RUN_ARM_WAITING) {
      start_arm(s, i);
      if (s->state[i] == RUN_ARM_NOT_STARTED)
        call_off_waiting(s);
      return true;
    }
  return false;
}

/* ---------------------------------------------------------------- the API */

void run_session_same_workload(struct run_session_config *cfg) {
  if (cfg->n_arms < 2)
    return;
  bool any = false, all = true;
  for (size_t i = 0; i < cfg->n_arms; i++) {
    if (cfg->arm[i].chat_template >= 0)
      return; /* asked for by the caller: kept */
    bool on = cfg->arm[i].recipe && cfg->arm[i].recipe->bench.use_chat_template;
    any = any || on;
    all = all && on;
  }
  if (any && !all)
    for (size_t i = 0; i < cfg->n_arms; i++)
      cfg->arm[i].chat_template = 1;
}

struct run_session *run_session_start(const struct run_session_config *cfg, struct st_err *err) {
  if (cfg->n_arms < 1 || cfg->n_arms > RUN_SESSION_MAX_ARMS) {
    err_setf(err, "run session: %zu arms (1 or %d)", cfg->n_arms, RUN_SESSION_MAX_ARMS);
    return NULL;
  }
  for (size_t i = 0; i < cfg->n_arms; i++)
    if (!cfg->arm[i].recipe) {
      err_setf(err, "run session: arm %zu has no recipe", i + 1);
      return NULL;
    }
  if (cfg->repeats > RUN_SESSION_MAX_REPEATS) {
    err_setf(err, "run session: %d repeats (at most %d)", cfg->repeats, RUN_SESSION_MAX_REPEATS);
    return NULL;
  }
  struct run_session *s = xcalloc(1, sizeof *s);
  s->cfg = *cfg;
  s->cfg.parallel = cfg->parallel && cfg->n_arms > 1;
  run_session_same_workload(&s->cfg);
  for (size_t i = 0; i < cfg->n_arms; i++) {
    s->last[i] = xcalloc(1, sizeof *s->last[i]);
    s->state[i] = RUN_ARM_WAITING;
    s->rep_outcome[i] = xcalloc(RUN_SESSION_MAX_REPEATS, sizeof *s->rep_outcome[i]);
    s->base_label[i] = cfg->arm[i].label;
  }
  if (s->cfg.parallel) {
    for (size_t i = 0; i < cfg->n_arms; i++) {
      start_arm(s, i);
      if (s->state[i] == RUN_ARM_NOT_STARTED) {
        call_off_waiting(s);
        break;
      }
    }
  } else {
    start_next(s);
  }
  return s;
}

bool run_session_poll(struct run_session *s) {
  bool changed = false;
  for (size_t i = 0; i < s->cfg.n_arms; i++) {
    if (s->state[i] != RUN_ARM_RUNNING)
      continue;
    if (run_snapshot(s->run[i], s->last[i], &s->run_seq[i])) {
      s->have_last[i] = true;
      changed = true;
    }
    if (run_wait(s->run[i], 0)) {
      /* its last picture (every saved point), then it is over */
      if (run_snapshot(s->run[i], s->last[i], &s->run_seq[i]))
        s->have_last[i] = true;
      s->state[i] = RUN_ARM_ENDED;
      if (s->repeats_done[i] < RUN_SESSION_MAX_REPEATS)
        run_get_outcome(s->run[i], &s->rep_outcome[i][s->repeats_done[i]++]);
      changed = true;
    }
  }
  if ((!s->cfg.parallel || s->cfg.repeats > 1) && start_next(s))
    changed = true;
  return changed;
}

bool run_session_snapshot(const struct run_session *s, size_t arm, struct snap_run *out,
                          uint64_t *last_seq) {
  if (arm >= s->cfg.n_arms || !s->have_last[arm])
    return false;
  if (last_seq && *last_seq == s->last[arm]->seq && *last_seq != 0)
    return false;
  memcpy(out, s->last[arm], sizeof *out);
  if (last_seq)
    *last_seq = out->seq;
  return true;
}

void run_session_status(const struct run_session *s, struct run_session_status *out) {
  memset(out, 0, sizeof *out);
  out->n_arms = s->cfg.n_arms;
  out->parallel = s->cfg.parallel;
  out->stop_requested = s->stop_requested != 0;
  out->current = -1;
  const struct snap_run *pictures[RUN_SESSION_MAX_ARMS] = {NULL, NULL};
  int n_points[RUN_SESSION_MAX_ARMS] = {0, 0};
  bool skip[RUN_SESSION_MAX_ARMS] = {false, false};
  bool over = true;
  for (size_t i = 0; i < s->cfg.n_arms; i++) {
    struct run_session_arm *a = &out->arm[i];
    a->state = s->state[i];
    a->recipe = s->cfg.arm[i].recipe;
    a->n_points = n_points[i] = arm_points(&s->cfg.arm[i]);
    snprintf(a->start_error, sizeof a->start_error, "%s", s->start_error[i]);
    if (s->run[i]) {
      a->started = true;
      run_get_outcome(s->run[i], &a->outcome);
    }
    a->repeat = s->repeat;
    a->repeats_done = s->repeats_done[i];
    a->have_snap = s->have_last[i];
    if (s->have_last[i]) {
      pictures[i] = s->last[i];
      a->points_done = s->last[i]->points.n_written;
    }
    skip[i] = a->state == RUN_ARM_NOT_STARTED;
    if (a->state == RUN_ARM_RUNNING) {
      out->n_running++;
      if (out->current < 0)
        out->current = (int)i;
    }
    if (a->state == RUN_ARM_ENDED)
      out->n_ended++;
    if (a->state == RUN_ARM_RUNNING || a->state == RUN_ARM_WAITING)
      over = false;
  }
  out->over = over;
  out->remaining_valid = run_arms_remaining_s(pictures, n_points, skip, s->cfg.n_arms,
                                              s->cfg.parallel, &out->remaining_s);
}

bool run_session_repeat_outcome(const struct run_session *s, size_t arm, int k,
                                struct run_outcome *out) {
  if (arm >= s->cfg.n_arms || k < 0 || k >= s->repeats_done[arm])
    return false;
  *out = s->rep_outcome[arm][k];
  return true;
}

int run_session_repeat_dirs(const struct run_session *s,
                            char dirs[][RUN_SESSION_MAX_REPEATS][1024]) {
  int n = RUN_SESSION_MAX_REPEATS;
  for (size_t i = 0; i < s->cfg.n_arms; i++) {
    int k = 0;
    struct run_outcome ro;
    while (k < n && run_session_repeat_outcome(s, i, k, &ro) && ro.status == RUN_STATUS_OK &&
           ro.n_points_done > 0) {
      snprintf(dirs[i][k], sizeof dirs[i][k], "%s", ro.dir);
      k++;
    }
    n = k;
  }
  return n;
}

int run_session_set_concurrency(struct run_session *s, size_t arm, int conc, struct st_err *err) {
  if (arm >= s->cfg.n_arms || !s->run[arm])
    return err_setf(err, "no run to change: this arm has not started");
  return run_set_concurrency(s->run[arm], conc, err);
}

int run_session_restart_with(struct run_session *s, size_t arm, const char *knob,
                             const char *value, struct st_err *err) {
  if (arm >= s->cfg.n_arms || !s->run[arm])
    return err_setf(err, "no run to restart: this arm has not started");
  return run_restart_with(s->run[arm], knob, value, err);
}

int run_session_models_change(const struct run_session *s, size_t arm, const char *knob,
                              const char *value, struct st_err *err) {
  if (arm >= s->cfg.n_arms)
    return 0;
  char *set = xasprintf("%s=%s", knob, value);
  int rc = run_sim_models_change(s->cfg.arm[arm].recipe, s->cfg.arm[arm].engine, NULL, set, err);
  free(set);
  return rc;
}

void run_session_stop(struct run_session *s) {
  s->stop_requested = 1;
  for (size_t i = 0; i < RUN_SESSION_MAX_ARMS; i++) {
    struct run *run = s->run[i];
    if (run)
      run_stop(run); /* sets flags: async-signal-safe */
  }
}

bool run_session_wait(struct run_session *s, int64_t timeout_ms) {
  int64_t until_ns = clock_mono_ns() + timeout_ms * 1000000LL;
  for (;;) {
    run_session_poll(s);
    struct run *running = NULL;
    for (size_t i = 0; i < s->cfg.n_arms && !running; i++)
      if (s->state[i] == RUN_ARM_RUNNING)
        running = s->run[i];
    if (!running && !any_in(s, RUN_ARM_WAITING))
      return true;
    int64_t step_ms = 100;
    if (timeout_ms >= 0) {
      int64_t left_ms = (until_ns - clock_mono_ns()) / 1000000LL;
      if (left_ms <= 0)
        return false;
      step_ms = left_ms < step_ms ? left_ms : step_ms;
    }
    if (running)
      run_wait(running, step_ms);
  }
}

void run_session_free(struct run_session *s) {
  if (!s)
    return;
  run_session_stop(s);
  for (size_t i = 0; i < RUN_SESSION_MAX_ARMS; i++) {
    run_free(s->run[i]); /* joins: its server is stopped */
    free(s->last[i]);
    free(s->rep_outcome[i]);
  }
  free(s);
}

const char *run_arm_state_name(enum run_arm_state state) {
  switch (state) {
  case RUN_ARM_WAITING: return "waiting";
  case RUN_ARM_RUNNING: return "running";
  case RUN_ARM_ENDED: return "ended";
  case RUN_ARM_NOT_STARTED: return "not started";
  }
  return "?";
}
