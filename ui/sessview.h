/* ui session view: the dashboard's end of the core's session controller
 * (run_session_*, src/run/run.h). It holds the session on screen, copies its
 * arms' newest pictures into the view they feed (the run view, or the A/B
 * view's columns), keeps the A/B footer in step with the arms' states
 * ("running the MTP arm", "cannot run ...", "both arms measured") and, with
 * --repeats, with the repeat that runs (the columns follow each repeat's run;
 * each round both arms finished is loaded into the A/B view for its ratios:
 * abview_load_repeats), remembers
 * each A/B arm's folder for its log, and hands the outcome of each arm the
 * command line asked for back to it. No ncurses, no sequencing of its own:
 * what runs when is the controller's. */
#ifndef SERVETOP_UI_SESSVIEW_H
#define SERVETOP_UI_SESSVIEW_H

#include <stdbool.h>
#include <stddef.h>

#include "abview.h"
#include "run/run.h"
#include "runview.h"

struct sessview {
  struct run_session *session;          /* NULL: none on screen */
  bool ab;                              /* it feeds the A/B view, else the run view */
  bool direct;                          /* the command line's: outcomes go into outcomes */
  struct run_session_status st;         /* as of the last poll */
  uint64_t seq[RUN_SESSION_MAX_ARMS];   /* each arm's last picture taken */
  enum run_arm_state shown[RUN_SESSION_MAX_ARMS]; /* each arm's state the view followed */
  bool reported[RUN_SESSION_MAX_ARMS];  /* its outcome went back */
  char ab_dir[2][1024];                 /* each A/B arm's run folder once known (kept after the
                                           session, for the log of the arm that ran last) */
  const char *engine_text[RUN_SESSION_MAX_ARMS]; /* the probe's line per arm (borrowed) */
  /* where the command line's outcomes go (borrowed; NULL: nowhere) */
  struct run_outcome *outcomes;
  size_t *n_outcomes;
  size_t max_outcomes;
  /* where the command line's repeat folders go at the end (borrowed; NULL: nowhere) */
  char (*repeat_dirs)[RUN_SESSION_MAX_REPEATS][1024];
  int *n_repeat_dirs;
  int repeats;                          /* the A/B's repeats (the config's; <= 1: once) */
  int repeat_followed;                  /* the repeat the views follow (0-based) */
  int repeats_loaded;                   /* finished repeats the A/B view's ratios rest on */
  struct snap_run incoming;             /* a picture on its way into a view */
};

/* The views a session feeds. */
struct sessview_views {
  struct runview *rv;
  struct abview *ab;
};

/* Starts the session of sc: the A/B view's (ab: ab_dir cleared, the view's
 * n_points set, its footer following) or the run view's, which needs its one
 * arm started: false with err (nothing kept) when it could not, or when the
 * controller refused the config. engine_text: the probe's line per arm. */
bool sessview_begin(struct sessview *v, const struct run_session_config *sc, bool ab, bool direct,
                    const char *const *engine_text, const struct sessview_views *views,
                    struct st_err *err);
/* Moves the session on (never blocks) and follows it into the views; true
 * when what is drawn changed. */
bool sessview_poll(struct sessview *v, const struct sessview_views *views);
/* Copies the session's new pictures into its views; true when there were. */
bool sessview_pull(struct sessview *v, const struct sessview_views *views);
/* Whether A/B arm `arm` is being measured now. */
bool sessview_ab_arm_running(const struct sessview *v, int arm);
/* The folder of the log to show ("" when there is none yet): with ab NULL
 * the run view's run; else the A/B arm that runs (else the last one that
 * ran), its recipe's name in *title. */
void sessview_log_dir(struct sessview *v, const struct abview *ab, char *dir, size_t dir_n,
                      const char **title);

/* Stopping: asks every arm to stop and says so in the view's footer; true
 * when something was still running (then wait with sessview_wait). */
bool sessview_stop_begin(struct sessview *v, const struct sessview_views *views);
/* Polls until the session is over or timeout_ms passes (true: over). */
bool sessview_wait(struct sessview *v, int64_t timeout_ms);
/* The session is done with: outcomes not yet handed back go back, the
 * session is freed (every server stopped and joined); *last gets arm 0's
 * outcome (for the run view's "run ok: FOLDER"). was_running: what
 * sessview_stop_begin said (the A/B footer then says it stopped). */
void sessview_end(struct sessview *v, const struct sessview_views *views, bool was_running,
                  struct run_outcome *last);

#endif
