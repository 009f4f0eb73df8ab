/* A binary min-heap of deadlines; timers are embedded in their owners. */
#include "sim/sim_internal.h"

#include <stdlib.h>

void sim_timer_init(struct sim_timer *t, sim_timer_fn fire) {
  t->at_ns = 0;
  t->heap_index = SIM_TIMER_IDLE;
  t->fire = fire;
}

static void heap_swap(struct sim_timer_heap *h, size_t a, size_t b) {
  struct sim_timer *t = h->items[a];
  h->items[a] = h->items[b];
  h->items[b] = t;
  h->items[a]->heap_index = a;
  h->items[b]->heap_index = b;
}

static void sift_up(struct sim_timer_heap *h, size_t i) {
  while (i > 0) {
    size_t parent = (i - 1) / 2;
    if (h->items[parent]->at_ns <= h->items[i]->at_ns)
      break;
    heap_swap(h, i, parent);
    i = parent;
  }
}

static void sift_down(struct sim_timer_heap *h, size_t i) {
  for (;;) {
    size_t l = 2 * i + 1, r = l + 1, m = i;
    if (l < h->n && h->items[l]->at_ns < h->items[m]->at_ns)
      m = l;
    if (r < h->n && h->items[r]->at_ns < h->items[m]->at_ns)
      m = r;
    if (m == i)
      return;
    heap_swap(h, i, m);
    i = m;
  }
}

void sim_timer_cancel(struct sim_timer_heap *h, struct sim_timer *t) {
  size_t i = t->heap_index;
  if (i == SIM_TIMER_IDLE)
    return;
  t->heap_index = SIM_TIMER_IDLE;
  h->n--;
  if (i == h->n)
    return;
  h->items[i] = h->items[h->n];
  h->items[i]->heap_index = i;
  sift_up(h, i);
  sift_down(h, h->items[i]->heap_index);
}

void sim_timer_arm(struct sim_timer_heap *h, struct sim_timer *t, int64_t at_ns) {
  sim_timer_cancel(h, t);
  if (h->n == h->cap) {
    h->cap = h->cap ? h->cap * 2 : 64;
    h->items = xreallocarray(h->items, h->cap, sizeof *h->items);
  }
  t->at_ns = at_ns;
  t->heap_index = h->n;
  h->items[h->n++] = t;
  sift_up(h, t->heap_index);
}

struct sim_timer *sim_timer_peek(const struct sim_timer_heap *h) {
  return h->n ? h->items[0] : NULL;
}

void sim_timer_heap_free(struct sim_timer_heap *h) {
  for (size_t i = 0; i < h->n; i++)
    h->items[i]->heap_index = SIM_TIMER_IDLE;
  free(h->items);
  h->items = NULL;
  h->n = h->cap = 0;
}
