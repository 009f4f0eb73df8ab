/* Starting helper threads that leave signals to the thread that starts them. */
#include "util/util.h"

#include <pthread.h>
#include <signal.h>

bool thread_start_unsignalled(pthread_t *thread, void *(*fn)(void *), void *arg) {
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  bool started = pthread_create(thread, NULL, fn, arg) == 0;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return started;
}
