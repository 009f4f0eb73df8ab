/* Operating-system helpers for the backends: run a tool with a deadline, walk
 * the /proc process tree, and the small shared snapshot helpers. */
#include "telemetry/telemetry_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---------------------------------------------------------------- subprocess */

static void child_exec(const char *const *argv, int out_fd) {
  /* Own process group, so a timeout kills whatever the tool started too. */
  setpgid(0, 0);
  int null_fd = open("/dev/null", O_RDWR);
  if (null_fd >= 0) {
    dup2(null_fd, STDIN_FILENO);
    dup2(null_fd, STDERR_FILENO);
  }
  dup2(out_fd, STDOUT_FILENO);
  execvp(argv[0], (char *const *)argv);
  _exit(127); /* exec failed: the parent reports "not found" */
}

static void first_line(const struct sbuf *out, char *line, size_t line_len) {
  line[0] = '\0';
  if (!out->data)
    return;
  size_t n = strcspn(out->data, "\r\n");
  if (n >= line_len)
    n = line_len - 1;
  memcpy(line, out->data, n);
  line[n] = '\0';
}

int tm_run_capture(const char *const *argv, int timeout_ms, struct sbuf *out, struct st_err *err) {
  sbuf_reset(out);
  sbuf_reserve(out, 4096);
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) < 0)
    return err_setf(err, "%s: pipe: %s", argv[0], strerror(errno));
  pid_t pid = fork();
  if (pid < 0) {
    int e = errno;
    close(fds[0]);
    close(fds[1]);
    return err_setf(err, "%s: fork: %s", argv[0], strerror(e));
  }
  if (pid == 0)
    child_exec(argv, fds[1]);
  setpgid(pid, pid); /* also here: no race with the child's own call */
  close(fds[1]);

  int64_t deadline_ns = clock_mono_ns() + (int64_t)timeout_ms * 1000000;
  bool timed_out = false;
  char buf[4096];
  for (;;) {
    int64_t left_ms = (deadline_ns - clock_mono_ns()) / 1000000;
    if (left_ms <= 0) {
      timed_out = true;
      break;
    }
    struct pollfd pfd = {.fd = fds[0], .events = POLLIN};
    int r = poll(&pfd, 1, (int)left_ms);
    if (r < 0 && errno == EINTR)
      continue;
    if (r == 0) {
      timed_out = true;
      break;
    }
    ssize_t n = read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break; /* EOF: the child closed stdout (normally by exiting) */
    sbuf_append(out, buf, (size_t)n);
  }
  close(fds[0]);
  /* NUL-terminate even when the tool printed nothing (a fresh reserve is not). */
  sbuf_append(out, "", 0);
  if (timed_out)
    kill(-pid, SIGKILL);
  int status = 0;
  /* After EOF a well-behaved tool exits at once; one that closed stdout but
   * keeps running is bounded by the same deadline. */
  for (;;) {
    pid_t w = waitpid(pid, &status, timed_out ? 0 : WNOHANG);
    if (w == pid)
      break;
    if (w < 0 && errno == EINTR)
      continue;
    if (w < 0)
      return err_setf(err, "%s: waitpid: %s", argv[0], strerror(errno));
    if (clock_mono_ns() >= deadline_ns) {
      kill(-pid, SIGKILL);
      timed_out = true;
    } else {
      clock_sleep_us(2000);
    }
  }
  if (timed_out)
    return err_setf(err, "%s: no answer within %d ms (killed)", argv[0], timeout_ms);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127 && out->len == 0)
    return err_setf(err, "%s: not found in PATH (or not executable)", argv[0]);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    char line[160];
    first_line(out, line, sizeof line);
    if (WIFSIGNALED(status))
      return err_setf(err, "%s: killed by signal %d", argv[0], WTERMSIG(status));
    return err_setf(err, "%s: exit status %d%s%s", argv[0], WEXITSTATUS(status),
                    line[0] ? ": " : "", line);
  }
  return 0;
}

/* ---------------------------------------------------------------- process tree */

struct pid_pair {
  pid_t pid;
  pid_t ppid;
};

/* ppid from /proc/<pid>/stat; the comm field may hold spaces and ')' so the
 * fields are read after the last ')'. */
static int read_ppid(const char *proc_root, const char *pid_name, pid_t *ppid) {
  char path[256];
  snprintf(path, sizeof path, "%s/%s/stat", proc_root, pid_name);
  FILE *f = fopen(path, "r");
  if (!f)
    return -1;
  char line[1024];
  bool ok = fgets(line, sizeof line, f) != NULL;
  fclose(f);
  if (!ok)
    return -1;
  char *close_paren = strrchr(line, ')');
  char state;
  int parent;
  if (!close_paren || sscanf(close_paren + 1, " %c %d", &state, &parent) != 2)
    return -1;
  *ppid = (pid_t)parent;
  return 0;
}

static int cmp_pid(const void *a, const void *b) {
  pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
  return (x > y) - (x < y);
}

size_t tm_proc_tree(const char *proc_root, pid_t root, pid_t **pids_out) {
  *pids_out = NULL;
  if (root <= 0)
    return 0;
  DIR *dir = opendir(proc_root);
  if (!dir)
    return 0;
  struct pid_pair *all = NULL;
  size_t n_all = 0, cap_all = 0;
  bool root_seen = false;
  struct dirent *de;
  while ((de = readdir(dir)) != NULL) {
    long pid;
    pid_t ppid;
    if (parse_long(de->d_name, &pid) < 0 || pid <= 0 || read_ppid(proc_root, de->d_name, &ppid) < 0)
      continue;
    if (n_all == cap_all) {
      cap_all = cap_all ? cap_all * 2 : 256;
      all = xreallocarray(all, cap_all, sizeof *all);
    }
    all[n_all++] = (struct pid_pair){(pid_t)pid, ppid};
    if ((pid_t)pid == root)
      root_seen = true;
  }
  closedir(dir);
  if (!root_seen) {
    free(all);
    return 0;
  }
  /* Grow the set until no process has its parent in it; trees are shallow so
   * the few passes over a few thousand pids cost little. */
  pid_t *tree = xmalloc(sizeof *tree * (n_all + 1));
  size_t n_tree = 0;
  tree[n_tree++] = root;
  bool grew = true;
  while (grew) {
    grew = false;
    for (size_t i = 0; i < n_all; i++) {
      if (all[i].pid == 0)
        continue; /* already taken */
      for (size_t j = 0; j < n_tree; j++) {
        if (all[i].ppid == tree[j] && all[i].pid != root) {
          tree[n_tree++] = all[i].pid;
          all[i].pid = 0;
          grew = true;
          break;
        }
      }
    }
  }
  free(all);
  qsort(tree, n_tree, sizeof *tree, cmp_pid);
  *pids_out = tree;
  return n_tree;
}

void tm_attribute_server_memory(struct tm_snapshot *snap, const pid_t *tree, size_t n_tree) {
  if (n_tree == 0)
    return;
  /* Attribution needs a process list; a backend without one (amd-smi, dcgm)
   * leaves server memory unknown rather than 0. */
  if (!snap->procs_listed)
    return;
  for (int g = 0; g < snap->n_gpus; g++) {
    snap->gpus[g].server_mem_bytes = 0;
    snap->gpus[g].other_mem_bytes = 0;
    snap->gpus[g].valid |= TM_GPU_SERVER_MEM;
  }
  for (int i = 0; i < snap->n_procs; i++) {
    struct tm_proc *p = &snap->procs[i];
    p->in_server_tree = bsearch(&p->pid, tree, n_tree, sizeof *tree, cmp_pid) != NULL;
    if (p->gpu_index < 0)
      continue;
    for (int g = 0; g < snap->n_gpus; g++) {
      if (snap->gpus[g].index != p->gpu_index)
        continue;
      if (!p->mem_valid) {
        /* A process of unknown size (MIG): the split is unknown, not smaller. */
        snap->gpus[g].valid &= ~(uint32_t)TM_GPU_SERVER_MEM;
        continue;
      }
      if (p->in_server_tree)
        snap->gpus[g].server_mem_bytes += p->mem_bytes;
      else
        snap->gpus[g].other_mem_bytes += p->mem_bytes;
    }
  }
}

void tm_proc_comm(pid_t pid, char *name, size_t name_len) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%ld/comm", (long)pid);
  name[0] = '\0';
  FILE *f = fopen(path, "r");
  if (!f)
    return;
  if (fgets(name, (int)name_len, f))
    name[strcspn(name, "\n")] = '\0';
  fclose(f);
}

/* ---------------------------------------------------------------- shared helpers */

void tm_copy_str(char *dst, size_t dst_len, const char *src) {
  if (dst_len == 0)
    return;
  size_t n = src ? strlen(src) : 0;
  if (n >= dst_len)
    n = dst_len - 1;
  if (n)
    memcpy(dst, src, n);
  dst[n] = '\0';
}

int tm_gpu_by_uuid(const struct tm_snapshot *snap, const char *uuid) {
  for (int g = 0; g < snap->n_gpus; g++)
    if (snap->gpus[g].uuid[0] && strcmp(snap->gpus[g].uuid, uuid) == 0)
      return g;
  return -1;
}

struct tm_proc *tm_add_proc(struct tm_snapshot *snap) {
  if (snap->n_procs >= TM_MAX_PROCS) {
    snap->procs_truncated = true;
    return NULL;
  }
  struct tm_proc *p = &snap->procs[snap->n_procs++];
  memset(p, 0, sizeof *p);
  p->gpu_index = -1;
  return p;
}

int tm_timeout_ms(const struct tm_config *cfg) {
  return cfg->timeout_ms > 0 ? cfg->timeout_ms : TM_DEFAULT_TIMEOUT_MS;
}

int tm_open_probed(void *state, int (*sample)(void *, struct tm_snapshot *, struct st_err *),
                   void (*close)(void *), void **state_out, struct st_err *err) {
  struct tm_snapshot *probe = xcalloc(1, sizeof *probe);
  int rc = sample(state, probe, err);
  free(probe);
  if (rc < 0) {
    close(state);
    return -1;
  }
  *state_out = state;
  return 0;
}

/* ---------------------------------------------------------------- CSV cells */

size_t tm_split_csv(char *line, char **fields, size_t max_fields) {
  size_t n = 0;
  for (char *s = line; n < max_fields;) {
    char *comma = strchr(s, ',');
    if (comma)
      *comma = '\0';
    fields[n++] = str_trim(s);
    if (!comma)
      break;
    s = comma + 1;
  }
  return n;
}

int tm_csv_col_of(const struct tm_csv_col *map, size_t n, const char *name, int other) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(map[i].name, name) == 0)
      return map[i].col;
  return other;
}

bool tm_csv_unknown(const char *cell) {
  return cell[0] == '\0' || cell[0] == '[' || strcmp(cell, "N/A") == 0;
}

int tm_csv_number(const char *cell, double *out) {
  char buf[64];
  tm_copy_str(buf, sizeof buf, cell);
  buf[strcspn(buf, " ")] = '\0';
  return parse_double(buf, out) == 0 && isfinite(*out) ? 0 : -1;
}
