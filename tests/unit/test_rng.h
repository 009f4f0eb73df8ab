/* A seeded generator for the unit tests' synthetic data (splitmix64): the same numbers on
 * every machine. Header-only; each test file that includes it has its own state. */
#ifndef SERVETOP_TESTS_TEST_RNG_H
#define SERVETOP_TESTS_TEST_RNG_H

#include <math.h>
#include <stdint.h>

static uint64_t rng_state;
static inline double uniform01(void) {
  uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return ((double)(z >> 11) + 0.5) / 9007199254740992.0;
}
static inline double exponential(double mean) {
  return -mean * log(uniform01());
}

#endif
