/* launcher: supervisor process, server process group, log reader thread,
 * readiness and stop. See launcher.h for the process model. */
#include "launcher/launcher.h"

#include "http/http.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TAIL_RING_LINES 256
#define TAIL_LINE_MAX_BYTES 4096 /* longer lines are cut in the ring, kept whole in the file */
#define DEFAULT_GRACE_MS 10000
#define ORPHAN_SWEEP_MS 5000

extern char **environ;

/* Records the supervisor sends on the status pipe (one write each: atomic). */
enum sup_record_kind { SUP_SERVER_PID = 'P', SUP_SERVER_EXIT = 'X', SUP_FORK_FAILED = 'F' };
struct sup_record {
  char kind;
  int value; /* pid, wait status or errno */
};

struct launcher {
  pthread_mutex_t lock;
  pthread_cond_t changed;       /* state, readiness or exit changed */
  pthread_mutex_t stop_lock;    /* serialises launcher_stop */
  pthread_t reader;
  bool reader_joined;

  int life_w;                   /* servetop's end of the life channel; -1 once closed */
  int out_r;                    /* server stdout+stderr */
  int status_r;                 /* supervisor records */
  int log_fd;
  pid_t supervisor_pid;

  char *host;
  int port;
  char *ready_line;             /* NULL: /health only */
  int64_t grace_ms;
  launch_line_fn on_line;
  void *on_line_ctx;
  const atomic_int *cancel;

  /* guarded by lock */
  struct launch_status status;
  atomic_bool ready_flag;       /* mirrors status.state >= READY for the curl callback */
  atomic_bool done_flag;        /* exited or stop requested */
  char *ring[TAIL_RING_LINES];
  size_t ring_head;             /* next slot to write */
  size_t ring_count;
};

/* ---------------------------------------------------------------- supervisor (child side) */
static volatile sig_atomic_t sup_term_requested;

static void sup_on_term(int sig) {
  (void)sig;
  sup_term_requested = 1;
}

static int64_t now_ms(void) {
  return clock_mono_ns() / 1000000;
}

static void sup_send(int fd, char kind, int value) {
  struct sup_record rec = {kind, value};
  ssize_t n;
  do
    n = write(fd, &rec, sizeof(rec));
  while (n < 0 && errno == EINTR);
}

/* Closes every descriptor from 3 up except those in keep[] (ascending). */
static void close_all_except(const int *keep, size_t n_keep) {
  unsigned lo = 3;
  for (size_t i = 0; i < n_keep; i++) {
    if (keep[i] < 0 || (unsigned)keep[i] < lo)
      continue;
    if ((unsigned)keep[i] > lo)
      close_range(lo, (unsigned)keep[i] - 1, 0);
    lo = (unsigned)keep[i] + 1;
  }
  close_range(lo, ~0u, 0);
}

static void sort_fds(int *fds, size_t n) {
  for (size_t i = 1; i < n; i++)
    for (size_t j = i; j > 0 && fds[j - 1] > fds[j]; j--) {
      int t = fds[j];
      fds[j] = fds[j - 1];
      fds[j - 1] = t;
    }
}

static void reset_signals(void) {
  for (int sig = 1; sig < NSIG; sig++)
    if (sig != SIGKILL && sig != SIGSTOP)
      signal(sig, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
}

/* SIGKILLs every process whose parent is this one (orphans re-parented to us
 * as subreaper, besides the server). Returns how many it found. */
static int kill_own_children(void) {
  pid_t self = getpid();
  DIR *dir = opendir("/proc");
  if (!dir)
    return 0;
  int found = 0;
  struct dirent *de;
  while ((de = readdir(dir)) != NULL) {
    if (de->d_name[0] < '1' || de->d_name[0] > '9')
      continue;
    char path[300], stat_text[512];
    snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      continue;
    ssize_t n = read(fd, stat_text, sizeof(stat_text) - 1);
    close(fd);
    if (n <= 0)
      continue;
    stat_text[n] = '\0';
    const char *rparen = strrchr(stat_text, ')'); /* comm may hold spaces and ')' */
    char state;
    int ppid;
    if (!rparen || sscanf(rparen + 1, " %c %d", &state, &ppid) != 2 || ppid != self)
      continue;
    kill((pid_t)atoi(de->d_name), SIGKILL);
    found++;
  }
  closedir(dir);
  return found;
}

struct sup_args {
  char *const *argv;
  char *const *envp;
  int life_r, status_w, out_w, devnull_fd;
  int64_t grace_ms;
};

ST_NORETURN static void supervisor_main(const struct sup_args *a) {
  pid_t self = getpid();
  setsid(); /* no terminal signals: servetop decides when the server stops */
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  reset_signals();
  signal(SIGPIPE, SIG_IGN);
  signal(SIGINT, SIG_IGN);
  signal(SIGHUP, SIG_IGN);
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = sup_on_term;
  sigaction(SIGTERM, &sa, NULL);
  int keep[] = {a->life_r, a->status_w, a->out_w, a->devnull_fd};
  sort_fds(keep, ST_ARRAY_LEN(keep));
  close_all_except(keep, ST_ARRAY_LEN(keep));

  pid_t server = fork();
  if (server < 0) {
    sup_send(a->status_w, SUP_FORK_FAILED, errno);
    _exit(1);
  }
  if (server == 0) {
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != self) /* the supervisor died before PDEATHSIG was armed */
      _exit(127);
    dup2(a->devnull_fd, STDIN_FILENO);
    dup2(a->out_w, STDOUT_FILENO);
    dup2(a->out_w, STDERR_FILENO);
    close_range(3, ~0u, 0);
    reset_signals();
    execvpe(a->argv[0], a->argv, a->envp);
    dprintf(STDERR_FILENO, "servetop launcher: cannot run %s: %s\n", a->argv[0], strerror(errno));
    _exit(127);
  }
  setpgid(server, server); /* also here, so killpg works before the child ran */
  close(a->out_w);
  close(a->devnull_fd);
  sup_send(a->status_w, SUP_SERVER_PID, server);

  int wait_status = 0;
  bool terminating = false;
  int64_t kill_at_ms = 0;
  struct pollfd pfd = {.fd = a->life_r, .events = POLLIN};
  for (;;) {
    pid_t r = waitpid(server, &wait_status, WNOHANG);
    if (r == server)
      break;
    if (terminating && kill_at_ms && now_ms() >= kill_at_ms) {
      killpg(server, SIGKILL);
      kill_at_ms = 0;
    }
    int n = poll(&pfd, 1, 20);
    bool stop_now = sup_term_requested != 0;
    if (n > 0 && (pfd.revents & (POLLIN | POLLHUP | POLLERR))) {
      char buf[16];
      ssize_t got = read(pfd.fd, buf, sizeof(buf));
      if (got <= 0) { /* servetop is gone (exit, crash, SIGKILL) */
        pfd.fd = -1;
        stop_now = true;
      } else {
        stop_now = true; /* any byte is the stop command */
      }
    }
    if (stop_now && !terminating) {
      terminating = true;
      killpg(server, SIGTERM);
      kill_at_ms = now_ms() + a->grace_ms;
    }
  }
  sup_send(a->status_w, SUP_SERVER_EXIT, wait_status);

  /* Whatever the server left behind: its group, then orphans re-parented to us. */
  int64_t give_up_ms = now_ms() + ORPHAN_SWEEP_MS;
  for (;;) {
    bool group_alive = killpg(server, SIGKILL) == 0;
    int n_children = kill_own_children();
    int st;
    while (waitpid(-1, &st, WNOHANG) > 0)
      ;
    if (!group_alive && n_children == 0)
      break;
    if (now_ms() > give_up_ms)
      break;
    struct timespec ts = {0, 10 * 1000000};
    nanosleep(&ts, NULL);
  }
  _exit(0);
}

/* ---------------------------------------------------------------- servetop side */
/* True when cmd's added environment sets the variable entry ("NAME=...") names. */
static bool cmd_overrides(const struct launch_cmd *cmd, const char *entry) {
  size_t name_len = strcspn(entry, "=");
  for (size_t i = 0; i < cmd->n_env; i++)
    if (strncmp(cmd->env[i], entry, name_len) == 0 && cmd->env[i][name_len] == '=')
      return true;
  return strncmp(entry, LAUNCH_ID_ENV "=", strlen(LAUNCH_ID_ENV) + 1) == 0;
}

/* servetop's environment, cmd's additions on top, and the launch marker. */
static char **env_merge_alloc(const struct launch_cmd *cmd, const char *launch_id) {
  size_t n_base = 0;
  while (environ && environ[n_base])
    n_base++;
  char **envp = xcalloc(n_base + cmd->n_env + 2, sizeof(char *));
  size_t n = 0;
  for (size_t i = 0; i < n_base; i++)
    if (!cmd_overrides(cmd, environ[i]))
      envp[n++] = xstrdup(environ[i]);
  for (size_t i = 0; i < cmd->n_env; i++)
    envp[n++] = xstrdup(cmd->env[i]);
  envp[n++] = xasprintf("%s=%s", LAUNCH_ID_ENV, launch_id);
  envp[n] = NULL;
  return envp;
}


static void mark_ready_locked(struct launcher *l, enum launch_ready_by by) {
  if (l->status.state != LAUNCH_STARTING)
    return;
  l->status.state = LAUNCH_READY;
  l->status.ready_by = by;
  l->status.ready_after_ms = (clock_mono_ns() - l->status.started_mono_ns) / 1000000;
  atomic_store(&l->ready_flag, true);
  pthread_cond_broadcast(&l->changed);
}

static void handle_line(struct launcher *l, char *line, size_t len) {
  while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == '\n'))
    line[--len] = '\0';
  int64_t t_ns = clock_mono_ns();
  char *copy = xstrndup(line, len < TAIL_LINE_MAX_BYTES ? len : TAIL_LINE_MAX_BYTES);
  pthread_mutex_lock(&l->lock);
  free(l->ring[l->ring_head]);
  l->ring[l->ring_head] = copy;
  l->ring_head = (l->ring_head + 1) % TAIL_RING_LINES;
  if (l->ring_count < TAIL_RING_LINES)
    l->ring_count++;
  l->status.n_log_lines++;
  if (l->ready_line && strstr(line, l->ready_line))
    mark_ready_locked(l, LAUNCH_READY_LOG_LINE);
  pthread_mutex_unlock(&l->lock);
  if (l->on_line)
    l->on_line(l->on_line_ctx, line, t_ns);
}

/* Splits buffered output into lines ('\n' or '\r', as progress bars use). */
static void drain_lines(struct launcher *l, struct sbuf *pending, bool flush_partial) {
  size_t start = 0;
  for (size_t i = 0; i < pending->len; i++) {
    if (pending->data[i] == '\n' || pending->data[i] == '\r') {
      pending->data[i] = '\0';
      if (i > start)
        handle_line(l, pending->data + start, i - start);
      start = i + 1;
    }
  }
  sbuf_consume(pending, start);
  if (flush_partial && pending->len > 0) {
    handle_line(l, pending->data, pending->len);
    sbuf_reset(pending);
  }
}

static void handle_record(struct launcher *l, const struct sup_record *rec) {
  pthread_mutex_lock(&l->lock);
  switch (rec->kind) {
  case SUP_SERVER_PID:
    l->status.pid = rec->value;
    break;
  case SUP_SERVER_EXIT:
    l->status.exited = true;
    l->status.state = LAUNCH_EXITED;
    if (WIFEXITED(rec->value)) {
      l->status.exit_code = WEXITSTATUS(rec->value);
      l->status.exit_signal = 0;
    } else if (WIFSIGNALED(rec->value)) {
      l->status.exit_code = -1;
      l->status.exit_signal = WTERMSIG(rec->value);
    }
    atomic_store(&l->done_flag, true);
    break;
  case SUP_FORK_FAILED:
    l->status.exited = true;
    l->status.state = LAUNCH_EXITED;
    l->status.exit_code = 127;
    atomic_store(&l->done_flag, true);
    break;
  default:
    break;
  }
  pthread_cond_broadcast(&l->changed);
  pthread_mutex_unlock(&l->lock);
}

static void *reader_main(void *arg) {
  pthread_setname_np(pthread_self(), "st-server-log"); /* shows in top -H and /proc */
  struct launcher *l = arg;
  struct sbuf pending = {0};
  struct sbuf rec_buf = {0};
  struct pollfd pfds[2] = {{.fd = l->out_r, .events = POLLIN}, {.fd = l->status_r, .events = POLLIN}};
  char buf[16384];
  while (pfds[0].fd >= 0 || pfds[1].fd >= 0) {
    int n = poll(pfds, 2, -1);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      break;
    }
    if (pfds[0].fd >= 0 && pfds[0].revents) {
      ssize_t got = read(pfds[0].fd, buf, sizeof(buf));
      if (got > 0) {
        ssize_t wrote = l->log_fd >= 0 ? write(l->log_fd, buf, (size_t)got) : got;
        if (wrote != got) { /* said once, then counted (a full disk fails every write) */
          int e = wrote < 0 ? errno : 0;
          pthread_mutex_lock(&l->lock);
          bool first = l->status.log_write_failures++ == 0;
          if (first)
            l->status.log_write_errno = e;
          pthread_mutex_unlock(&l->lock);
          if (first)
            log_msg(LOG_WARN, "launcher: %s writing the server log (further failed writes are "
                    "counted, not repeated)", e ? strerror(e) : "short write");
        }
        sbuf_append(&pending, buf, (size_t)got);
        drain_lines(l, &pending, false);
      } else if (got == 0 || errno != EINTR) {
        drain_lines(l, &pending, true);
        pfds[0].fd = -1;
      }
    }
    if (pfds[1].fd >= 0 && pfds[1].revents) {
      ssize_t got = read(pfds[1].fd, buf, sizeof(buf));
      if (got > 0) {
        sbuf_append(&rec_buf, buf, (size_t)got);
        while (rec_buf.len >= sizeof(struct sup_record)) {
          struct sup_record rec;
          memcpy(&rec, rec_buf.data, sizeof(rec));
          sbuf_consume(&rec_buf, sizeof(rec));
          handle_record(l, &rec);
        }
      } else if (got == 0 || errno != EINTR) {
        pfds[1].fd = -1;
      }
    }
  }
  /* The supervisor closed its pipes: it has reaped everything and is exiting. */
  int st;
  while (waitpid(l->supervisor_pid, &st, 0) < 0 && errno == EINTR)
    ;
  pthread_mutex_lock(&l->lock);
  if (!l->status.exited) { /* supervisor died without a report */
    l->status.exited = true;
    l->status.state = LAUNCH_EXITED;
    l->status.exit_code = -1;
  }
  atomic_store(&l->done_flag, true);
  pthread_cond_broadcast(&l->changed);
  pthread_mutex_unlock(&l->lock);
  sbuf_free(&pending);
  sbuf_free(&rec_buf);
  return NULL;
}

static atomic_uint launch_counter;

/* Frees the memory of a launcher whose processes and fds are already gone. */
static void launcher_destroy(struct launcher *l) {
  for (size_t i = 0; i < TAIL_RING_LINES; i++)
    free(l->ring[i]);
  free(l->host);
  free(l->ready_line);
  pthread_mutex_destroy(&l->lock);
  pthread_cond_destroy(&l->changed);
  pthread_mutex_destroy(&l->stop_lock);
  free(l);
}

struct launcher *launcher_start(const struct launch_opts *opts, struct st_err *err) {
  if (!opts->cmd || opts->cmd->argc == 0) {
    err_setf(err, "launcher: empty command");
    return NULL;
  }
  http_global_init(); /* before the fork; a no-op when main did it */
  int log_fd = -1, devnull_fd = -1;
  int life[2] = {-1, -1}, status[2] = {-1, -1}, out[2] = {-1, -1};
  char **envp = NULL;
  struct launcher *l = NULL;

  if (opts->log_path) {
    log_fd = open(opts->log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (log_fd < 0) {
      err_setf(err, "launcher: cannot open server log %s: %s", opts->log_path, strerror(errno));
      goto fail;
    }
    fchmod(log_fd, 0644); /* as the result files: readable whatever the umask */
  }
  devnull_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
  /* The life channel is a socket pair so a stop command sent after the
   * supervisor is gone fails with EPIPE instead of raising SIGPIPE. */
  if (devnull_fd < 0 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, life) != 0 ||
      pipe2(status, O_CLOEXEC) != 0 ||
      pipe2(out, O_CLOEXEC) != 0) {
    err_setf(err, "launcher: pipe: %s", strerror(errno));
    goto fail;
  }

  l = xcalloc(1, sizeof(*l));
  pthread_mutex_init(&l->lock, NULL);
  clock_cond_init_mono(&l->changed); /* timed waits below use CLOCK_MONOTONIC deadlines */
  pthread_mutex_init(&l->stop_lock, NULL);
  l->host = xstrdup(opts->host ? opts->host : "127.0.0.1");
  l->port = opts->port;
  l->ready_line = opts->ready_line ? xstrdup(opts->ready_line) : NULL;
  l->grace_ms = opts->stop_grace_ms > 0 ? opts->stop_grace_ms : DEFAULT_GRACE_MS;
  l->on_line = opts->on_line;
  l->on_line_ctx = opts->on_line_ctx;
  l->cancel = opts->cancel;
  l->log_fd = log_fd;
  l->status.state = LAUNCH_STARTING;
  l->status.exit_code = -1;
  l->status.ready_after_ms = -1;
  snprintf(l->status.launch_id, sizeof(l->status.launch_id), "%d-%u", (int)getpid(),
           atomic_fetch_add(&launch_counter, 1) + 1);
  envp = env_merge_alloc(opts->cmd, l->status.launch_id);

  struct sup_args args = {.argv = opts->cmd->argv, .envp = envp, .life_r = life[0],
                          .status_w = status[1], .out_w = out[1], .devnull_fd = devnull_fd,
                          .grace_ms = l->grace_ms};
  l->status.started_mono_ns = clock_mono_ns();
  pid_t sup = fork();
  if (sup < 0) {
    err_setf(err, "launcher: fork: %s", strerror(errno));
    goto fail;
  }
  if (sup == 0)
    supervisor_main(&args);

  str_vec_free(envp, STR_VEC_TO_NULL);
  close(life[0]);
  close(status[1]);
  close(out[1]);
  close(devnull_fd);
  l->supervisor_pid = sup;
  l->status.supervisor_pid = sup;
  l->life_w = life[1];
  l->status_r = status[0];
  l->out_r = out[0];
  if (pthread_create(&l->reader, NULL, reader_main, l) != 0) {
    err_setf(err, "launcher: cannot start the log reader thread");
    close(l->life_w); /* EOF on the life pipe: the supervisor stops the server */
    int st;
    while (waitpid(sup, &st, 0) < 0 && errno == EINTR)
      ;
    close(l->status_r);
    close(l->out_r);
    if (log_fd >= 0)
      close(log_fd);
    launcher_destroy(l);
    return NULL;
  }
  return l;

fail:
  str_vec_free(envp, STR_VEC_TO_NULL);
  int fds[] = {log_fd, devnull_fd, life[0], life[1], status[0], status[1], out[0], out[1]};
  for (size_t i = 0; i < ST_ARRAY_LEN(fds); i++)
    if (fds[i] >= 0)
      close(fds[i]);
  if (l)
    launcher_destroy(l);
  return NULL;
}

/* ---------------------------------------------------------------- readiness */
static bool abort_when_flagged(void *ud) {
  struct launcher *l = ud;
  return atomic_load(&l->ready_flag) || atomic_load(&l->done_flag) || (l->cancel && *l->cancel);
}

/* GET http://host:port/path through the HTTP helper (its proxy policy: none
 * unless --proxy); the status, -1 without an answer, why in err. */
static int http_get_status(const char *host, int port, const char *path, int64_t timeout_ms,
                           struct launcher *abort_on, struct st_err *err) {
  char *url = xasprintf("http://%s:%d%s", host, port, path);
  struct http_request req = {.url = url, .timeout_ms = timeout_ms, .connect_timeout_ms = 1000,
                             .discard_body = true, .expect_status = 200};
  if (abort_on) {
    req.abort_if = abort_when_flagged;
    req.abort_ud = abort_on;
  }
  struct http_response resp = {0};
  int rc = http_do(&req, &resp, err);
  /* 200 only when it arrived whole; another status as it came; -1: none */
  int code = rc == 0 ? 200 : resp.status > 0 && resp.status != 200 ? (int)resp.status : -1;
  http_response_fini(&resp);
  free(url);
  return code;
}

char *launch_http_get_alloc(const char *host, int port, const char *path, int64_t timeout_ms,
                            struct st_err *err) {
  char *url = xasprintf("http://%s:%d%s", host, port, path);
  struct http_request req = {.url = url, .timeout_ms = timeout_ms, .connect_timeout_ms = 1000,
                             .expect_status = 200};
  struct http_response resp = {0};
  char *body = NULL;
  if (http_do(&req, &resp, err) == 0)
    body = sbuf_take(&resp.body);
  http_response_fini(&resp);
  free(url);
  return body;
}

int launch_http_get_status(const char *host, int port, const char *path, int64_t timeout_ms) {
  return http_get_status(host, port, path, timeout_ms, NULL, NULL);
}

static void describe_exit(const struct launch_status *st, char *out, size_t out_bytes) {
  if (st->exit_signal)
    snprintf(out, out_bytes, "killed by signal %d (%s)", st->exit_signal,
             strsignal(st->exit_signal));
  else
    snprintf(out, out_bytes, "exited with status %d", st->exit_code);
}

/* A /health that generates a token (SGLang) takes >= 1 s: allow it 25 s. */
#define HEALTH_TIMEOUT_MS 25000
#define HEALTH_RETRY_MS 250

int launcher_wait_ready(struct launcher *l, int64_t timeout_ms, struct st_err *err) {
  int64_t deadline_ns = clock_mono_ns() + timeout_ms * 1000000;
  struct st_err last_health = {{0}}; /* why the last /health was not 200 */
  for (;;) {
    struct launch_status st;
    launcher_get_status(l, &st);
    if (st.state == LAUNCH_READY)
      return 0;
    if (l->cancel && *l->cancel)
      return err_setf(err, "cancelled while waiting for the server to be ready");
    if (st.exited || st.stop_requested) {
      char why[128];
      describe_exit(&st, why, sizeof(why));
      char *tail = launcher_tail_alloc(l, 5);
      if (st.stop_requested)
        err_setf(err, "server stopped before it was ready");
      else
        err_setf(err, "server %s before it was ready (after %.1f s); last log lines:\n%s", why,
                 (double)(clock_mono_ns() - st.started_mono_ns) / 1e9, tail);
      free(tail);
      return -1;
    }
    int64_t left_ms = (deadline_ns - clock_mono_ns()) / 1000000;
    if (left_ms <= 0) {
      char *tail = launcher_tail_alloc(l, 5);
      err_setf(err, "server not ready after %.1f s (no 200 from /health%s%.160s, no ready log "
               "line); last log lines:\n%s", (double)timeout_ms / 1000.0,
               last_health.msg[0] ? ": " : "", last_health.msg, tail);
      free(tail);
      return -1;
    }
    int code = http_get_status(l->host, l->port, "/health",
                               left_ms < HEALTH_TIMEOUT_MS ? left_ms : HEALTH_TIMEOUT_MS, l,
                               &last_health);
    if (code == 200) {
      pthread_mutex_lock(&l->lock);
      mark_ready_locked(l, LAUNCH_READY_HEALTH);
      pthread_mutex_unlock(&l->lock);
      continue;
    }
    /* Wait a little, waking at once on a ready line or an exit. */
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    int64_t ns = until.tv_nsec + (int64_t)HEALTH_RETRY_MS * 1000000;
    until.tv_sec += ns / 1000000000;
    until.tv_nsec = ns % 1000000000;
    pthread_mutex_lock(&l->lock);
    if (l->status.state == LAUNCH_STARTING && !l->status.exited && !l->status.stop_requested)
      pthread_cond_timedwait(&l->changed, &l->lock, &until);
    pthread_mutex_unlock(&l->lock);
  }
}

/* ---------------------------------------------------------------- status, tail, stop */
void launcher_get_status(struct launcher *l, struct launch_status *out) {
  if (!l) { /* no process (an attached server): never exited */
    memset(out, 0, sizeof(*out));
    out->exit_code = -1;
    out->ready_after_ms = -1;
    return;
  }
  pthread_mutex_lock(&l->lock);
  *out = l->status;
  pthread_mutex_unlock(&l->lock);
}

size_t launcher_copy_tail(struct launcher *l, char *rows, size_t max_lines, size_t line_bytes) {
  if (!l || line_bytes == 0)
    return 0;
  pthread_mutex_lock(&l->lock);
  size_t n = l->ring_count < max_lines ? l->ring_count : max_lines;
  size_t first = (l->ring_head + TAIL_RING_LINES - n) % TAIL_RING_LINES;
  for (size_t i = 0; i < n; i++) {
    const char *line = l->ring[(first + i) % TAIL_RING_LINES];
    snprintf(rows + i * line_bytes, line_bytes, "%s", line ? line : "");
  }
  pthread_mutex_unlock(&l->lock);
  return n;
}

char *launcher_tail_alloc(struct launcher *l, size_t n_lines) {
  struct sbuf sb = {0};
  sbuf_reserve(&sb, 1);
  if (!l)
    return sbuf_take(&sb);
  pthread_mutex_lock(&l->lock);
  size_t n = l->ring_count < n_lines ? l->ring_count : n_lines;
  size_t first = (l->ring_head + TAIL_RING_LINES - n) % TAIL_RING_LINES;
  for (size_t i = 0; i < n; i++) {
    if (i)
      sbuf_putc(&sb, '\n');
    sbuf_puts(&sb, l->ring[(first + i) % TAIL_RING_LINES]);
  }
  pthread_mutex_unlock(&l->lock);
  return sbuf_take(&sb);
}

bool launcher_wait_exit(struct launcher *l, int64_t timeout_ms) {
  if (!l)
    return false;
  struct timespec until;
  clock_gettime(CLOCK_MONOTONIC, &until);
  int64_t ns = until.tv_nsec + timeout_ms % 1000 * 1000000;
  until.tv_sec += timeout_ms / 1000 + ns / 1000000000;
  until.tv_nsec = ns % 1000000000;
  pthread_mutex_lock(&l->lock);
  while (!l->status.exited) {
    if (pthread_cond_timedwait(&l->changed, &l->lock, &until) == ETIMEDOUT)
      break;
  }
  bool exited = l->status.exited;
  pthread_mutex_unlock(&l->lock);
  return exited;
}

int launcher_stop(struct launcher *l) {
  pthread_mutex_lock(&l->stop_lock);
  if (!l->reader_joined) {
    pthread_mutex_lock(&l->lock);
    if (!l->status.exited) {
      l->status.stop_requested = true;
      l->status.state = LAUNCH_STOPPING;
    }
    atomic_store(&l->done_flag, true);
    pthread_cond_broadcast(&l->changed);
    pthread_mutex_unlock(&l->lock);
    if (l->life_w >= 0) {
      char cmd = 'T';
      if (send(l->life_w, &cmd, 1, MSG_NOSIGNAL) != 1 && errno != EPIPE)
        log_msg(LOG_WARN, "launcher: stop command not delivered: %s", strerror(errno));
    }
    pthread_join(l->reader, NULL);
    l->reader_joined = true;
    if (l->life_w >= 0)
      close(l->life_w);
    l->life_w = -1;
    close(l->out_r);
    close(l->status_r);
    if (l->log_fd >= 0)
      close(l->log_fd);
    l->log_fd = -1;
  }
  pthread_mutex_unlock(&l->stop_lock);
  return 0;
}

void launcher_free(struct launcher *l) {
  if (!l)
    return;
  launcher_stop(l);
  launcher_destroy(l);
}
