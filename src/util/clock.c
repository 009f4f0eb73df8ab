/* Clocks: CLOCK_MONOTONIC for every measurement, CLOCK_REALTIME for labels. */
#include "util/util.h"

#include <errno.h>
#include <time.h>

int64_t clock_mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int64_t clock_mono_us(void) { return clock_mono_ns() / 1000; }

double clock_real_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void clock_sleep_us(int64_t us) {
  if (us <= 0)
    return;
  struct timespec req = {.tv_sec = us / 1000000, .tv_nsec = (us % 1000000) * 1000};
  while (nanosleep(&req, &req) == -1 && errno == EINTR) {
  }
}

void clock_cond_init_mono(pthread_cond_t *cv) {
  pthread_condattr_t attr;
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  pthread_cond_init(cv, &attr);
  pthread_condattr_destroy(&attr);
}
