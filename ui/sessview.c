/* The dashboard's end of the session controller (sessview.h). */
#include "sessview.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ui_util.h"

static struct runview *arm_view(struct sessview *v, const struct sessview_views *views,
                                size_t arm) {
  return v->ab ? &views->ab->arm[arm] : views->rv;
}

/* An arm the command line asked for is over: its outcome goes back (once; a later repeat's
 * takes the place of the one before, as the headless run's does). */
static void report(struct sessview *v, size_t arm) {
  const struct run_session_arm *a = &v->st.arm[arm];
  if (!v->direct || !v->outcomes || !v->n_outcomes || !a->started)
    return;
  if (v->reported[arm] && arm < *v->n_outcomes) {
    v->outcomes[arm] = a->outcome;
    return;
  }
  if (v->reported[arm] || *v->n_outcomes >= v->max_outcomes)
    return;
  v->reported[arm] = true;
  v->outcomes[(*v->n_outcomes)++] = a->outcome;
}

/* --repeats: a round both arms finished goes into the A/B view, for its ratios. */
static void load_repeats(struct sessview *v, struct abview *ab) {
  int done = RUN_SESSION_MAX_REPEATS;
  for (size_t i = 0; i < v->st.n_arms; i++)
    done = v->st.arm[i].repeats_done < done ? v->st.arm[i].repeats_done : done;
  if (v->repeats <= 1 || v->st.n_arms < 2 || done <= v->repeats_loaded)
    return;
  char(*dirs)[RUN_SESSION_MAX_REPEATS][1024] = xcalloc(RUN_SESSION_MAX_ARMS, sizeof *dirs);
  int n = run_session_repeat_dirs(v->session, dirs);
  struct st_err err = {{0}};
  if (n > v->repeats_loaded && abview_load_repeats(ab, dirs, n, &err) != 0) {
    snprintf(ab->status, sizeof ab->status, "repeats: %.230s", err.msg);
    ab->status_role = THEME_ERROR;
  }
  v->repeats_loaded = done; /* a failed or stopped round is not tried again */
  free(dirs);
}

/* The A/B view follows its session: each arm's folder, the outcome of an arm
 * that ended, and the footer's line (which arm runs, why one cannot). */
static void follow_ab(struct sessview *v, struct abview *ab) {
  char repeat[48] = ""; /* "repeat 2/3, " */
  ab->n_repeats = v->repeats;
  ab->repeat = v->st.n_arms ? v->st.arm[0].repeat : 0;
  if (v->repeats > 1)
    snprintf(repeat, sizeof repeat, "repeat %d/%d, ", ab->repeat + 1, v->repeats);
  for (size_t i = 0; i < v->st.n_arms && i < 2; i++) {
    const struct run_session_arm *a = &v->st.arm[i];
    /* the folder of the run the arm runs (or ran last): each repeat has its own */
    if (a->started && a->outcome.dir[0])
      snprintf(v->ab_dir[i], sizeof v->ab_dir[i], "%s", a->outcome.dir);
    if (a->state == v->shown[i])
      continue;
    v->shown[i] = a->state;
    if (a->state == RUN_ARM_RUNNING) {
      snprintf(ab->status, sizeof ab->status, "running the %s arm, %s%.200s",
               i == AB_MTP ? "MTP" : "off", repeat, v->engine_text[i] ? v->engine_text[i] : "");
      ab->status_role = THEME_INACTIVE;
    } else if (a->state == RUN_ARM_NOT_STARTED && a->start_error[0]) {
      snprintf(ab->status, sizeof ab->status, "cannot run %s: %.200s", a->recipe->name,
               a->start_error);
      ab->status_role = THEME_ERROR;
    } else if (a->state == RUN_ARM_ENDED) {
      report(v, i);
      if (i == AB_MTP && v->repeats > 1)
        snprintf(ab->status, sizeof ab->status, "both arms measured, %.*s", (int)strlen(repeat) - 2,
                 repeat);
      else if (i == AB_MTP)
        snprintf(ab->status, sizeof ab->status, "both arms measured");
    }
  }
  ab->running = v->st.n_running > 0;
  load_repeats(v, ab);
}

bool sessview_pull(struct sessview *v, const struct sessview_views *views) {
  bool changed = false;
  if (v->session && v->st.n_arms && v->st.arm[0].repeat != v->repeat_followed) {
    /* the next repeat: each arm's pictures come from a new run, its own sequence */
    v->repeat_followed = v->st.arm[0].repeat;
    for (size_t i = 0; i < RUN_SESSION_MAX_ARMS; i++)
      v->seq[i] = 0;
  }
  for (size_t i = 0; v->session && i < v->st.n_arms; i++)
    if (run_session_snapshot(v->session, i, &v->incoming, &v->seq[i])) {
      runview_push(arm_view(v, views, i), &v->incoming);
      changed = true;
    }
  return changed;
}

bool sessview_poll(struct sessview *v, const struct sessview_views *views) {
  if (!v->session)
    return false;
  bool changed = run_session_poll(v->session);
  run_session_status(v->session, &v->st);
  if (sessview_pull(v, views))
    changed = true;
  if (v->ab)
    follow_ab(v, views->ab);
  return changed;
}

bool sessview_begin(struct sessview *v, const struct run_session_config *sc, bool ab, bool direct,
                    const char *const *engine_text, const struct sessview_views *views,
                    struct st_err *err) {
  if (ab) /* a new A/B: the folders of the last one go */
    v->ab_dir[0][0] = v->ab_dir[1][0] = '\0';
  struct run_session *s = run_session_start(sc, err);
  if (!s)
    return false;
  run_session_status(s, &v->st);
  if (!ab && v->st.arm[0].state == RUN_ARM_NOT_STARTED) {
    err_setf(err, "%s", v->st.arm[0].start_error);
    run_session_free(s);
    return false;
  }
  v->session = s;
  v->ab = ab;
  v->direct = direct;
  v->repeats = sc->repeats;
  v->repeat_followed = 0;
  v->repeats_loaded = 0;
  for (size_t i = 0; i < RUN_SESSION_MAX_ARMS; i++) {
    v->seq[i] = 0;
    v->shown[i] = RUN_ARM_WAITING;
    v->reported[i] = false;
    v->engine_text[i] = engine_text ? engine_text[i] : NULL;
  }
  if (ab) {
    for (size_t i = 0; i < 2; i++)
      views->ab->n_points[i] = v->st.arm[i].n_points;
    follow_ab(v, views->ab);
  }
  return true;
}

bool sessview_ab_arm_running(const struct sessview *v, int arm) {
  return v->session && v->ab && arm >= 0 && arm < 2 && v->st.arm[arm].state == RUN_ARM_RUNNING;
}

void sessview_log_dir(struct sessview *v, const struct abview *ab, char *dir, size_t dir_n,
                      const char **title) {
  dir[0] = '\0';
  if (v->session)
    run_session_status(v->session, &v->st);
  if (!ab) {
    if (v->session && !v->ab)
      snprintf(dir, dir_n, "%s", v->st.arm[0].outcome.dir);
    return;
  }
  bool running = v->session && v->ab && v->st.current >= 0;
  int arm = running ? v->st.current : v->ab_dir[AB_MTP][0] ? AB_MTP : AB_OFF;
  snprintf(dir, dir_n, "%s", v->ab_dir[arm]);
  *title = ab->recipe[arm] ? ab->recipe[arm]->name : "";
}

bool sessview_stop_begin(struct sessview *v, const struct sessview_views *views) {
  if (!v->session)
    return false;
  run_session_status(v->session, &v->st);
  if (v->st.over)
    return false;
  run_session_stop(v->session);
  if (v->ab) {
    snprintf(views->ab->status, sizeof views->ab->status, "stopping the server...");
    views->ab->status_role = THEME_WARNING;
  } else {
    runview_set_status(views->rv, THEME_WARNING, "stopping the server...");
  }
  return true;
}

bool sessview_wait(struct sessview *v, int64_t timeout_ms) {
  bool over = run_session_wait(v->session, timeout_ms);
  run_session_status(v->session, &v->st);
  return over;
}

void sessview_end(struct sessview *v, const struct sessview_views *views, bool was_running,
                  struct run_outcome *last) {
  memset(last, 0, sizeof *last);
  if (!v->session)
    return;
  run_session_status(v->session, &v->st);
  for (size_t i = 0; i < v->st.n_arms; i++)
    report(v, i);
  if (v->direct && v->repeat_dirs && v->n_repeat_dirs)
    *v->n_repeat_dirs = run_session_repeat_dirs(v->session, v->repeat_dirs);
  *last = v->st.arm[0].outcome;
  run_session_free(v->session); /* stops and joins whatever is left */
  v->session = NULL;
  if (v->ab) {
    views->ab->running = false;
    if (was_running)
      snprintf(views->ab->status, sizeof views->ab->status,
               "stopped: what was measured is in its run folder");
  }
}
