/* snapshot: the mutex-guarded slot and small producer helpers. */
#include "snapshot/snapshot.h"

#include "util/util.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct snap_slot {
  pthread_mutex_t lock;
  uint64_t seq;        /* 0 until the first publish */
  struct snap_run snap;
};

struct snap_slot *snap_slot_new(void) {
  struct snap_slot *slot = xcalloc(1, sizeof(*slot));
  pthread_mutex_init(&slot->lock, NULL);
  return slot;
}

void snap_slot_free(struct snap_slot *slot) {
  if (!slot)
    return;
  pthread_mutex_destroy(&slot->lock);
  free(slot);
}

void snap_slot_publish(struct snap_slot *slot, struct snap_run *snap) {
  int64_t now_ns = clock_mono_ns();
  pthread_mutex_lock(&slot->lock);
  slot->seq++;
  snap->seq = slot->seq;
  snap->published_mono_ns = now_ns;
  memcpy(&slot->snap, snap, sizeof(*snap));
  pthread_mutex_unlock(&slot->lock);
}

bool snap_slot_read(struct snap_slot *slot, struct snap_run *out, uint64_t *last_seq) {
  bool copied = false;
  pthread_mutex_lock(&slot->lock);
  if (slot->seq != 0 && (!last_seq || *last_seq != slot->seq)) {
    memcpy(out, &slot->snap, sizeof(*out));
    if (last_seq)
      *last_seq = slot->seq;
    copied = true;
  }
  pthread_mutex_unlock(&slot->lock);
  return copied;
}

uint64_t snap_slot_seq(struct snap_slot *slot) {
  pthread_mutex_lock(&slot->lock);
  uint64_t seq = slot->seq;
  pthread_mutex_unlock(&slot->lock);
  return seq;
}

void snap_run_init(struct snap_run *snap) {
  memset(snap, 0, sizeof(*snap));
  snap->server.exit_code = -1;
  snap->server.ready_after_s = -1.0;
  snap->progress.n_points = 1;
  fig_set_clear(&snap->figures.window);
  fig_set_clear(&snap->figures.run);
}

void snap_log_tail_push(struct snap_log_tail *tail, const char *line) {
  if (tail->n_lines == SNAP_LOG_LINES) {
    memmove(tail->lines[0], tail->lines[1], sizeof(tail->lines[0]) * (SNAP_LOG_LINES - 1));
    tail->n_lines--;
  }
  char *dst = tail->lines[tail->n_lines++];
  size_t len = strlen(line);
  if (len >= SNAP_LOG_LINE_BYTES)
    len = SNAP_LOG_LINE_BYTES - 1;
  memcpy(dst, line, len);
  dst[len] = '\0';
  tail->total_lines++;
}

void snap_concurrency_mark(struct snap_concurrency *conc, double at_s, int concurrency) {
  if (conc->n_marks == SNAP_MAX_CONC_MARKS) {
    memmove(&conc->marks[0], &conc->marks[1], sizeof(conc->marks[0]) * (SNAP_MAX_CONC_MARKS - 1));
    conc->n_marks--;
  }
  conc->marks[conc->n_marks].at_s = at_s;
  conc->marks[conc->n_marks].concurrency = concurrency;
  conc->n_marks++;
  conc->target = concurrency;
}

void snap_points_add(struct snap_points *points, const struct snap_point_result *p) {
  if (points->n == SNAP_MAX_POINTS) {
    memmove(&points->point[0], &points->point[1], sizeof(points->point[0]) * (SNAP_MAX_POINTS - 1));
    points->n--;
  }
  points->point[points->n++] = *p;
  points->n_written++;
}

bool snap_mean_point_s(const struct snap_run *snap, double *out_s) {
  double sum = 0;
  int n = 0;
  for (int i = 0; i < snap->points.n; i++) {
    const struct snap_point_result *p = &snap->points.point[i];
    if (p->measured_to_end && p->duration_s > 0) {
      sum += p->duration_s;
      n++;
    }
  }
  if (n == 0)
    return false;
  *out_s = sum / n;
  return true;
}

bool snap_run_remaining_s(const struct snap_run *snap, double *out_s) {
  const struct snap_progress *p = &snap->progress;
  switch (p->phase) {
  case SNAP_PHASE_DONE:
  case SNAP_PHASE_FAILED:
  case SNAP_PHASE_INTERRUPTED:
    *out_s = 0;
    return true;
  default: break;
  }
  double typical = 0;
  bool have_typical = snap_mean_point_s(snap, &typical);
  /* the picture is a point's saved result: that point is over, and the
   * point index may already name the next one, not started yet */
  const struct snap_points *h = &snap->points;
  int last_saved = h->n > 0 ? h->point[h->n - 1].point_index : -1;
  bool result_shown = snap->figures.run_exact || last_saved == p->point_index;
  bool measuring = p->phase == SNAP_PHASE_MEASURING && !result_shown;
  if (!have_typical && measuring && p->eta_valid) {
    typical = p->elapsed_s + p->eta_s; /* the current point, projected */
    have_typical = typical > 0;
  }
  int after = (p->n_points > 0 ? p->n_points : 1) - p->point_index - 1;
  double now;
  if (measuring && p->eta_valid)
    now = p->eta_s;
  else if (!have_typical)
    return false;
  else if (result_shown && last_saved == p->point_index)
    now = 0; /* between this point's end and the next one */
  else
    now = measuring && typical > p->elapsed_s ? typical - p->elapsed_s : measuring ? 0 : typical;
  if (after > 0 && !have_typical)
    return false;
  *out_s = now + (after > 0 ? after * typical : 0);
  return true;
}

const char *snap_server_state_name(enum snap_server_state state) {
  switch (state) {
  case SNAP_SERVER_NONE: return "none";
  case SNAP_SERVER_STARTING: return "starting";
  case SNAP_SERVER_READY: return "ready";
  case SNAP_SERVER_STOPPING: return "stopping";
  case SNAP_SERVER_EXITED: return "exited";
  }
  return "?";
}

const char *snap_run_phase_name(enum snap_run_phase phase) {
  switch (phase) {
  case SNAP_PHASE_IDLE: return "idle";
  case SNAP_PHASE_LAUNCHING: return "launching";
  case SNAP_PHASE_MEASURING: return "measuring";
  case SNAP_PHASE_BETWEEN: return "between points";
  case SNAP_PHASE_STOPPING: return "stopping";
  case SNAP_PHASE_DONE: return "done";
  case SNAP_PHASE_FAILED: return "failed";
  case SNAP_PHASE_INTERRUPTED: return "interrupted";
  }
  return "?";
}
