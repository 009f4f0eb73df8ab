/* bench_sim: how fast is `servetop sim`? Starts the sim pinned to one CPU
 * (sched_setaffinity, like taskset), drives it with N concurrent keep-alive
 * streams from a raw-socket epoll client pinned to another CPU, and reports
 * streamed token events per second, bytes per second and the sim's own CPU
 * use (from /proc/PID/stat). One token per SSE event unless the sim coalesces.
 *
 *   bench_sim [--streams N] [--max-tokens N] [--duration-s S] [--tpot-ms MS]
 *             [--sim-cpu C] [--client-cpu C] [--servetop PATH]
 */
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

struct stream {
  int fd;
  size_t sent;   /* request bytes written */
  char tail[16]; /* last bytes of the previous read, for split markers */
  size_t tail_len;
  long events; /* token events in the response in progress */
};

#define REQUEST_FMT                                                                                \
  "POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"         \
  "Content-Length: %zu\r\n\r\n%s"

static void pin_to_cpu(int cpu) {
  if (cpu < 0)
    return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) < 0)
    fprintf(stderr, "bench_sim: cannot pin to CPU %d: %s\n", cpu, strerror(errno));
}

/* utime + stime of pid in seconds */
static double proc_cpu_s(pid_t pid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  char *text = file_read_all(path, NULL, NULL);
  if (!text)
    return 0;
  const char *p = strrchr(text, ')');
  unsigned long utime = 0, stime = 0;
  if (p)
    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime, &stime);
  free(text);
  return (double)(utime + stime) / (double)sysconf(_SC_CLK_TCK);
}

static int connect_to(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return -1;
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  struct sockaddr_in a = {.sin_family = AF_INET,
                          .sin_port = htons((uint16_t)port),
                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0 && errno != EINPROGRESS) {
    close(fd);
    return -1;
  }
  return fd;
}

/* Counts marker occurrences across read boundaries: the previous read's last
 * bytes are prepended, and only matches that end in the new bytes count. */
static bool ends_in_new_bytes(const char *joined, const char *match, size_t mlen, size_t tail_len) {
  return (size_t)(match - joined) + mlen > tail_len;
}

static long count_marker(struct stream *s, const char *buf, size_t len, const char *marker,
                         bool *done) {
  static const char done_marker[] = "data: [DONE]";
  size_t mlen = strlen(marker), dlen = sizeof done_marker - 1;
  char joined[sizeof s->tail + 65536];
  memcpy(joined, s->tail, s->tail_len);
  memcpy(joined + s->tail_len, buf, len);
  size_t n = s->tail_len + len;
  long count = 0;
  const char *p = joined, *end = joined + n;
  while ((p = memmem(p, (size_t)(end - p), marker, mlen))) {
    if (ends_in_new_bytes(joined, p, mlen, s->tail_len))
      count++;
    p += mlen;
  }
  p = joined;
  while ((p = memmem(p, (size_t)(end - p), done_marker, dlen))) {
    if (ends_in_new_bytes(joined, p, dlen, s->tail_len))
      *done = true;
    p += dlen;
  }
  size_t keep = n < sizeof s->tail ? n : sizeof s->tail;
  memcpy(s->tail, end - keep, keep);
  s->tail_len = keep;
  return count;
}

int main(int argc, char **argv) {
  int streams = 2000, max_tokens = 256, sim_cpu = 0, client_cpu = 1;
  double duration_s = 5, tpot_ms = 0;
  const char *servetop = getenv("SERVETOP");
  const struct opt_spec specs[] = {
      {"streams", OPT_INT, &streams, "N", "concurrent streams (2000)", NULL, NULL},
      {"max-tokens", OPT_INT, &max_tokens, "N", "tokens per request (256)", NULL, NULL},
      {"duration-s", OPT_DOUBLE, &duration_s, "S", "measured time (5)", NULL, NULL},
      {"tpot-ms", OPT_DOUBLE, &tpot_ms, "MS", "--sim-fixed-tpot-ms (0 = as fast as possible)", NULL,
       NULL},
      {"sim-cpu", OPT_INT, &sim_cpu, "C", "CPU for the sim (0; -1 = no pinning)", NULL, NULL},
      {"client-cpu", OPT_INT, &client_cpu, "C", "CPU for this client (1; -1 = no pinning)", NULL,
       NULL},
      {"servetop", OPT_STRING, &servetop, "PATH", "servetop binary (default $SERVETOP)", NULL,
       NULL},
  };
  struct opt_parser parser = {
      .usage = "bench_sim [options]", .specs = specs, .n_specs = ST_ARRAY_LEN(specs)};
  struct st_err err;
  int prc = opt_parse(&parser, argc - 1, argv + 1, NULL, 0, NULL, &err);
  if (prc == OPT_HELP) {
    opt_print_help(&parser, stdout);
    return 0;
  }
  if (prc != OPT_OK || !servetop || streams < 1 || max_tokens < 1) {
    fprintf(stderr, "bench_sim: %s\n",
            prc != OPT_OK ? err.msg : "need --servetop PATH (or $SERVETOP)");
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);
  struct rlimit rl;
  getrlimit(RLIMIT_NOFILE, &rl);
  rl.rlim_cur = rl.rlim_max;
  setrlimit(RLIMIT_NOFILE, &rl);

  char port_file[] = "/tmp/bench_sim_port_XXXXXX";
  int pf = mkstemp(port_file);
  if (pf < 0)
    return 1;
  close(pf);
  unlink(port_file);
  char ttft_text[] = "0", tpot_text[32];
  snprintf(tpot_text, sizeof tpot_text, "%g", tpot_ms);
  pid_t sim = fork();
  if (sim == 0) {
    pin_to_cpu(sim_cpu);
    int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, STDERR_FILENO);
    execl(servetop, servetop, "sim", "--port", "0", "--sim-port-file", port_file,
          "--sim-fixed-ttft-ms", ttft_text, "--sim-fixed-tpot-ms", tpot_text, "--sim-warmup-ms",
          "0", (char *)NULL);
    _exit(127);
  }
  pin_to_cpu(client_cpu);
  int port = 0;
  for (int i = 0; i < 200 && port == 0; i++) {
    char *text = file_read_all(port_file, NULL, NULL);
    if (text) {
      port = atoi(text);
      free(text);
    } else {
      clock_sleep_us(10000);
    }
  }
  unlink(port_file);
  int rc = 1;
  struct stream *ss = xcalloc((size_t)streams, sizeof *ss);
  for (int i = 0; i < streams; i++)
    ss[i].fd = -1;
  int ep = epoll_create1(EPOLL_CLOEXEC);
  char body[256], request[512];
  snprintf(body, sizeof body,
           "{\"prompt\":[1,2,3,4],\"max_tokens\":%d,\"ignore_eos\":true,\"stream\":true,"
           "\"stream_options\":{\"include_usage\":true}}",
           max_tokens);
  int request_len = snprintf(request, sizeof request, REQUEST_FMT, strlen(body), body);
  if (port == 0) {
    fprintf(stderr, "bench_sim: the sim did not start\n");
    goto out;
  }
  for (int i = 0; i < streams; i++) {
    ss[i].fd = connect_to(port);
    if (ss[i].fd < 0) {
      fprintf(stderr, "bench_sim: connect %d: %s\n", i, strerror(errno));
      goto out;
    }
    struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT, .data.ptr = &ss[i]};
    epoll_ctl(ep, EPOLL_CTL_ADD, ss[i].fd, &ev);
  }
  long events = 0, responses = 0, warm_events = 0;
  uint64_t bytes = 0;
  int64_t start = clock_mono_ns(), warm_end = start + 500000000LL;
  int64_t end = warm_end + (int64_t)(duration_s * 1e9);
  double sim_cpu0 = 0;
  bool warm = false;
  int max_open = 0, open_now = 0;
  char buf[65536];
  struct epoll_event evs[512];
  while (clock_mono_ns() < end) {
    int n = epoll_wait(ep, evs, 512, 100);
    int64_t now = clock_mono_ns();
    if (!warm && now >= warm_end) {
      warm = true;
      warm_events = events;
      bytes = 0;
      sim_cpu0 = proc_cpu_s(sim);
      start = now;
    }
    for (int i = 0; i < n; i++) {
      struct stream *s = evs[i].data.ptr;
      if ((evs[i].events & EPOLLOUT) && s->sent < (size_t)request_len) {
        ssize_t w = send(s->fd, request + s->sent, (size_t)request_len - s->sent, MSG_NOSIGNAL);
        if (w > 0)
          s->sent += (size_t)w;
        if (s->sent == (size_t)request_len) {
          struct epoll_event ev = {.events = EPOLLIN, .data.ptr = s};
          epoll_ctl(ep, EPOLL_CTL_MOD, s->fd, &ev);
          open_now++;
          max_open = open_now > max_open ? open_now : max_open;
        }
      }
      if (!(evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
        continue;
      for (;;) {
        ssize_t r = recv(s->fd, buf, sizeof buf, 0);
        if (r <= 0) {
          if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
            fprintf(stderr, "bench_sim: a stream broke\n");
            goto out;
          }
          break;
        }
        bytes += (uint64_t)r;
        bool done = false;
        long got = count_marker(s, buf, (size_t)r, "\"text\":\"", &done);
        s->events += got;
        events += got;
        if (done) {
          if (s->events != max_tokens) {
            fprintf(stderr, "bench_sim: a response had %ld token events, expected %d\n", s->events,
                    max_tokens);
            goto out;
          }
          responses++;
          open_now--;
          s->events = 0;
          s->tail_len = 0;
          s->sent = 0; /* next request on the same keep-alive connection */
          struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT, .data.ptr = s};
          epoll_ctl(ep, EPOLL_CTL_MOD, s->fd, &ev);
        }
      }
    }
  }
  double wall_s = (double)(clock_mono_ns() - start) / 1e9;
  double sim_cpu_s = proc_cpu_s(sim) - sim_cpu0;
  long measured = events - warm_events;
  printf("streams:                %d (max in flight %d)\n", streams, max_open);
  printf("tokens per request:     %d, tpot %g ms\n", max_tokens, tpot_ms);
  printf("responses completed:    %ld\n", responses);
  printf("token events/s:         %.0f\n", (double)measured / wall_s);
  printf("MB/s streamed:          %.1f\n", (double)bytes / wall_s / 1e6);
  printf("sim CPU use:            %.0f%% of one core\n", 100.0 * sim_cpu_s / wall_s);
  printf("token events per sim CPU-second: %.0f\n",
         sim_cpu_s > 0 ? (double)measured / sim_cpu_s : 0);
  rc = 0;
out:
  for (int i = 0; i < streams; i++)
    if (ss[i].fd >= 0)
      close(ss[i].fd);
  free(ss);
  close(ep);
  kill(sim, SIGTERM);
  waitpid(sim, NULL, 0);
  return rc;
}
