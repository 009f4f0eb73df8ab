/* engine: what the availability probes share: running a program quietly,
 * looking one up in $PATH, a GPU device node. */
#include "engine/engine_internal.h"

#include <ctype.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

bool eng_command_succeeds(char *const argv[], int64_t timeout_ms) {
  pid_t pid = fork();
  if (pid < 0)
    return false;
  if (pid == 0) {
    int devnull = open("/dev/null", O_RDWR);
    if (devnull >= 0) {
      dup2(devnull, STDIN_FILENO);
      dup2(devnull, STDOUT_FILENO);
      dup2(devnull, STDERR_FILENO);
    }
    execvp(argv[0], argv);
    _exit(127);
  }
  int status = 0;
  for (int64_t waited_ms = 0;; waited_ms += 20) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid)
      return WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (r < 0 || waited_ms >= timeout_ms)
      break;
    clock_sleep_us(20000);
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return false;
}

char *eng_command_output_alloc(char *const argv[], int64_t timeout_ms, size_t max_bytes) {
  int fds[2];
  if (pipe(fds) != 0)
    return NULL;
  fcntl(fds[0], F_SETFD, FD_CLOEXEC);
  fcntl(fds[1], F_SETFD, FD_CLOEXEC);
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return NULL;
  }
  if (pid == 0) {
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0)
      dup2(devnull, STDIN_FILENO);
    dup2(fds[1], STDOUT_FILENO);
    dup2(fds[1], STDERR_FILENO);
    execvp(argv[0], argv);
    _exit(127);
  }
  close(fds[1]);
  fcntl(fds[0], F_SETFL, O_NONBLOCK);
  struct sbuf sb = {0};
  bool done = false, ok = true;
  int status = 0;
  for (int64_t waited_ms = 0; !done;) {
    char buf[4096];
    ssize_t n = read(fds[0], buf, sizeof buf);
    if (n > 0) {
      if (sb.len + (size_t)n <= max_bytes)
        sbuf_append(&sb, buf, (size_t)n);
      continue;
    }
    if (n == 0) { /* every writer closed: wait for the exit */
      pid_t r = waitpid(pid, &status, WNOHANG);
      if (r == pid) {
        done = true;
        break;
      }
    }
    if (waited_ms >= timeout_ms) {
      ok = false;
      break;
    }
    clock_sleep_us(10000);
    waited_ms += 10;
  }
  close(fds[0]);
  if (!done) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
  }
  if (!ok || !WIFEXITED(status) || WEXITSTATUS(status) == 127) {
    sbuf_free(&sb);
    return NULL;
  }
  return sb.data ? sbuf_take(&sb) : xstrdup("");
}

char **eng_help_flags_parse(const char *help) {
  char **v = NULL;
  size_t n = 0;
  for (const char *p = help; *p; p++) {
    if (*p != '-' || (p > help && !(p[-1] == ' ' || p[-1] == '\t' || p[-1] == '\n' || p[-1] == ',')))
      continue;
    const char *name = p + (p[1] == '-' ? 2 : 1);
    size_t len = 0;
    while (name[len] && (isalnum((unsigned char)name[len]) || name[len] == '-' || name[len] == '_'))
      len++;
    if (len == 0 || !isalpha((unsigned char)name[0]) || name[len - 1] == '-') {
      p = name + len - (len > 0);
      continue;
    }
    bool seen = false;
    for (size_t i = 0; i < n && !seen; i++)
      seen = strlen(v[i]) == len && memcmp(v[i], name, len) == 0;
    if (!seen) {
      v = xreallocarray(v, n + 2, sizeof *v);
      v[n++] = xstrndup(name, len);
      v[n] = NULL;
    }
    p = name + len - 1;
  }
  if (!v)
    v = xcalloc(1, sizeof *v);
  return v;
}

bool eng_gpu_device_present(void) {
  return access("/dev/nvidia0", F_OK) == 0 || access("/dev/kfd", F_OK) == 0;
}

bool eng_probe_gpu_command(const char *const *argv, const char *missing, char *why,
                           size_t why_bytes) {
  if (!eng_gpu_device_present()) {
    snprintf(why, why_bytes, ENG_NO_GPU_REASON);
    return false;
  }
  if (eng_command_succeeds((char *const *)argv, 30000))
    return true;
  snprintf(why, why_bytes, "%s", missing);
  return false;
}

size_t eng_recognise_module_or_serve(char *const *w, size_t i, const char *module,
                                     const char *program) {
  if (strcmp(w[i], "-m") == 0 && strcmp(w[i + 1], module) == 0)
    return i + 2;
  const char *base = strrchr(w[i], '/') ? strrchr(w[i], '/') + 1 : w[i];
  if (strcmp(base, program) == 0 && strcmp(w[i + 1], "serve") == 0)
    return i + 2;
  return 0;
}

static bool is_executable_file(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

bool eng_find_on_path(const char *name, char *out, size_t out_bytes) {
  const char *path = getenv("PATH");
  if (!path || !*path)
    return false;
  for (const char *p = path;;) {
    size_t len = strcspn(p, ":");
    char candidate[PATH_MAX];
    int n = snprintf(candidate, sizeof candidate, "%.*s/%s", (int)(len ? len : 1),
                     len ? p : ".", name);
    if (n > 0 && (size_t)n < sizeof candidate && is_executable_file(candidate)) {
      snprintf(out, out_bytes, "%s", candidate);
      return true;
    }
    if (!p[len])
      return false;
    p += len + 1;
  }
}
