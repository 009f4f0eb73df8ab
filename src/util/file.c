/* Whole-file reads, atomic writes, directories and well-known paths. */
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Reads fd to its end into a NUL-terminated buffer and closes it; more than
 * max_bytes (a file that grew while read) is refused. */
static char *read_fd_all(int fd, const char *path, size_t max_bytes, size_t reserve_bytes,
                         size_t *len_out, struct st_err *err) {
  struct sbuf sb = {0};
  sbuf_reserve(&sb, reserve_bytes);
  for (;;) {
    if (sb.len > max_bytes) {
      err_setf(err, "%s: more than the %zu MiB servetop reads from such a file: skipped", path,
               max_bytes >> 20);
      close(fd);
      sbuf_free(&sb);
      return NULL;
    }
    sbuf_reserve(&sb, 65536);
    ssize_t n = read(fd, sb.data + sb.len, sb.cap - sb.len - 1);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      err_setf(err, "%s: %s", path, strerror(errno));
      close(fd);
      sbuf_free(&sb);
      return NULL;
    }
    if (n == 0)
      break;
    sb.len += (size_t)n;
  }
  close(fd);
  sb.data[sb.len] = '\0';
  if (len_out)
    *len_out = sb.len;
  return sbuf_take(&sb);
}

char *file_read_all(const char *path, size_t *len_out, struct st_err *err) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    err_setf(err, "%s: %s", path, strerror(errno));
    return NULL;
  }
  return read_fd_all(fd, path, SIZE_MAX, 4096, len_out, err);
}

static const char *file_kind(mode_t m) {
  return S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device"
       : S_ISSOCK(m) ? "a socket" : S_ISDIR(m) ? "a directory" : "not a plain file";
}

char *file_read_regular(const char *path, size_t max_bytes, size_t *len_out, struct st_err *err) {
  struct stat st;
  if (stat(path, &st) != 0) {
    err_setf(err, "%s: %s", path, strerror(errno));
    return NULL;
  }
  if (!S_ISREG(st.st_mode)) {
    err_setf(err, "%s: %s, not a regular file: skipped", path, file_kind(st.st_mode));
    return NULL;
  }
  /* O_NONBLOCK: should the name become a FIFO between stat and open, the
   * open does not wait for a writer (fstat below refuses it) */
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    if (fd < 0)
      err_setf(err, "%s: %s", path, strerror(errno));
    else
      err_setf(err, "%s: %s, not a regular file: skipped", path, file_kind(st.st_mode));
    if (fd >= 0)
      close(fd);
    return NULL;
  }
  if ((unsigned long long)st.st_size > max_bytes) {
    err_setf(err, "%s: %lld bytes, more than the %zu MiB servetop reads from such a file: skipped",
             path, (long long)st.st_size, max_bytes >> 20);
    close(fd);
    return NULL;
  }
  return read_fd_all(fd, path, max_bytes, (size_t)st.st_size + 1, len_out, err);
}

static int write_all(int fd, const char *data, size_t len) {
  while (len > 0) {
    ssize_t n = write(fd, data, len);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return -1;
    data += n;
    len -= (size_t)n;
  }
  return 0;
}

int file_write_atomic(const char *path, const void *data, size_t len, mode_t mode,
                      struct st_err *err) {
  char *tmp = xasprintf("%s.tmp.%ld", path, (long)getpid());
  /* O_EXCL|O_NOFOLLOW: a file or symlink planted at the temp name is refused,
   * never followed or truncated. */
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0 && errno == EEXIST) {
    /* A stale temp file of ours from a crashed run: remove (unlink does not
     * follow symlinks) and retry once. */
    unlink(tmp);
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  }
  if (fd < 0) {
    err_setf(err, "cannot create %s: %s", tmp, strerror(errno));
    free(tmp);
    return -1;
  }
  fchmod(fd, mode); /* umask may have narrowed it */
  if (write_all(fd, data, len) < 0 || fsync(fd) < 0) {
    err_setf(err, "cannot write %s: %s", path, strerror(errno));
    close(fd);
    unlink(tmp);
    free(tmp);
    return -1;
  }
  if (close(fd) < 0) {
    err_setf(err, "cannot write %s: %s", path, strerror(errno));
    unlink(tmp);
    free(tmp);
    return -1;
  }
  if (rename(tmp, path) < 0) {
    err_setf(err, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
    unlink(tmp);
    free(tmp);
    return -1;
  }
  free(tmp);
  return 0;
}

int file_write_or_rescue(const char *path, const void *data, size_t len, mode_t mode,
                         struct st_err *err) {
  struct st_err first;
  if (file_write_atomic(path, data, len, mode, &first) == 0)
    return 0;
  const char *tmp = getenv("TMPDIR");
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  char *rescue = xasprintf("%s/servetop-rescue-%ld-%s", tmp && *tmp ? tmp : "/tmp",
                           (long)getpid(), base);
  struct st_err second;
  if (file_write_atomic(rescue, data, len, mode, &second) == 0) {
    err_setf(err, "%s; the data was saved to %s instead", first.msg, rescue);
  } else {
    fprintf(stderr, "----- servetop: %s could not be written; its content follows -----\n", path);
    fwrite(data, 1, len, stderr);
    fprintf(stderr, "\n----- end of %s -----\n", path);
    err_setf(err, "%s; %s; the data was printed to stderr", first.msg, second.msg);
  }
  free(rescue);
  return -1;
}

int path_mkdir_p(const char *path, mode_t mode, struct st_err *err) {
  char *p = xstrdup(path);
  for (char *s = p + 1; *s; s++) {
    if (*s != '/')
      continue;
    *s = '\0';
    if (mkdir(p, mode) < 0 && errno != EEXIST) {
      err_setf(err, "cannot create directory %s: %s", p, strerror(errno));
      free(p);
      return -1;
    }
    *s = '/';
  }
  if (mkdir(p, mode) < 0 && errno != EEXIST) {
    err_setf(err, "cannot create directory %s: %s", p, strerror(errno));
    free(p);
    return -1;
  }
  struct stat st;
  if (stat(p, &st) < 0 || !S_ISDIR(st.st_mode)) {
    err_setf(err, "%s exists and is not a directory", p);
    free(p);
    return -1;
  }
  free(p);
  return 0;
}

char *path_join_alloc(const char *a, const char *b) {
  size_t la = strlen(a);
  while (la > 1 && a[la - 1] == '/')
    la--;
  while (*b == '/')
    b++;
  return xasprintf("%.*s/%s", (int)la, a, b);
}

char *path_data_dir_alloc(void) {
  const char *xdg = getenv("XDG_DATA_HOME");
  if (xdg && xdg[0] == '/')
    return path_join_alloc(xdg, "servetop");
  const char *home = getenv("HOME");
  if (!home || !home[0])
    home = "/tmp";
  return xasprintf("%s/.local/share/servetop", home);
}

char *path_cache_dir_alloc(void) {
  const char *xdg = getenv("XDG_CACHE_HOME");
  if (xdg && xdg[0]) /* as the setup script in scripts/: ${XDG_CACHE_HOME:-$HOME/.cache} */
    return path_join_alloc(xdg, "servetop");
  const char *home = getenv("HOME");
  if (!home || !home[0])
    home = "/tmp";
  return xasprintf("%s/.cache/servetop", home);
}

bool path_exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

char *path_self_dir_alloc(void) {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0)
    return NULL;
  buf[n] = '\0';
  char *slash = strrchr(buf, '/');
  if (slash)
    *slash = '\0';
  return xstrdup(buf);
}
