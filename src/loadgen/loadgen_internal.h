/* loadgen internals shared between its files: the seeded random generator. */
#ifndef SERVETOP_LOADGEN_LOADGEN_INTERNAL_H
#define SERVETOP_LOADGEN_LOADGEN_INTERNAL_H

#include <stdint.h>

/* xoshiro256** seeded through splitmix64: fast, good, reproducible across
 * platforms (numpy's MT19937 draws are not reproduced, only its distributions). */
struct lg_rng {
  uint64_t s[4];
};
void lg_rng_seed(struct lg_rng *rng, uint64_t seed);
uint64_t lg_rng_next(struct lg_rng *rng);
/* Uniform integer on [lo, hi] inclusive (numpy randint(lo, hi + 1)), unbiased. */
int64_t lg_rng_int(struct lg_rng *rng, int64_t lo, int64_t hi);
/* Uniform double on [0, 1). */
double lg_rng_unit(struct lg_rng *rng);
double lg_rng_normal(struct lg_rng *rng);
/* Gamma(shape, scale), Marsaglia-Tsang (numpy's gamma in distribution). */
double lg_rng_gamma(struct lg_rng *rng, double shape, double scale);

#endif
