/* numpy's legacy RandomState, draw for draw: MT19937 seeded as np.random.seed
 * (an int) or RandomState(list) (init_by_array), randint's masked rejection
 * sampling on 32-bit outputs, random_sample's 53-bit doubles, the polar
 * gauss with its cached second value, and legacy_standard_gamma. With these
 * servetop draws the same input/output lengths, offsets, padding ids and
 * arrival gaps as benchmark_serving.py for the same --seed (checked against
 * numpy in tests/unit/check_loadgen.c). */
#include "loadgen/loadgen_internal.h"

#include <math.h>
#include <string.h>

enum { MT_N = LG_NP_STATE_WORDS, MT_M = 397 };
#define MT_MATRIX_A 0x9908b0dfu
#define MT_UPPER 0x80000000u
#define MT_LOWER 0x7fffffffu

void lg_np_seed(struct lg_np *np, uint32_t seed) {
  for (int pos = 0; pos < MT_N; pos++) {
    np->key[pos] = seed;
    seed = 1812433253u * (seed ^ (seed >> 30)) + (uint32_t)pos + 1u;
  }
  np->pos = MT_N;
  np->has_gauss = false;
  np->gauss = 0.0;
}

void lg_np_seed_array(struct lg_np *np, const uint32_t *init_key, size_t key_length) {
  uint32_t *mt = np->key;
  lg_np_seed(np, 19650218u);
  size_t i = 1, j = 0;
  for (size_t k = MT_N > key_length ? MT_N : key_length; k; k--) {
    mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1664525u)) + init_key[j] + (uint32_t)j;
    i++;
    j++;
    if (i >= MT_N) {
      mt[0] = mt[MT_N - 1];
      i = 1;
    }
    if (j >= key_length)
      j = 0;
  }
  for (size_t k = MT_N - 1; k; k--) {
    mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1566083941u)) - (uint32_t)i;
    i++;
    if (i >= MT_N) {
      mt[0] = mt[MT_N - 1];
      i = 1;
    }
  }
  mt[0] = 0x80000000u;
  np->has_gauss = false;
  np->gauss = 0.0;
}

static void mt_generate(struct lg_np *np) {
  uint32_t *k = np->key, y;
  int i;
  for (i = 0; i < MT_N - MT_M; i++) {
    y = (k[i] & MT_UPPER) | (k[i + 1] & MT_LOWER);
    k[i] = k[i + MT_M] ^ (y >> 1) ^ (-(y & 1u) & MT_MATRIX_A);
  }
  for (; i < MT_N - 1; i++) {
    y = (k[i] & MT_UPPER) | (k[i + 1] & MT_LOWER);
    k[i] = k[i + (MT_M - MT_N)] ^ (y >> 1) ^ (-(y & 1u) & MT_MATRIX_A);
  }
  y = (k[MT_N - 1] & MT_UPPER) | (k[0] & MT_LOWER);
  k[MT_N - 1] = k[MT_M - 1] ^ (y >> 1) ^ (-(y & 1u) & MT_MATRIX_A);
  np->pos = 0;
}

uint32_t lg_np_next32(struct lg_np *np) {
  if (np->pos == MT_N)
    mt_generate(np);
  uint32_t y = np->key[np->pos++];
  y ^= y >> 11;
  y ^= (y << 7) & 0x9d2c5680u;
  y ^= (y << 15) & 0xefc60000u;
  y ^= y >> 18;
  return y;
}

int64_t lg_np_randint(struct lg_np *np, int64_t low, int64_t high) {
  /* random_bounded_uint64_fill with use_masked: rng = high - 1 - low; 0 draws
   * nothing; up to 2^32 - 1 draws 32-bit values masked to the smallest
   * covering power of two, rejecting those above rng. */
  uint64_t rng = (uint64_t)(high - 1 - low);
  if (high - 1 <= low)
    return low;
  if (rng > 0xFFFFFFFFull) { /* not needed by the dataset: 64-bit masked draws */
    uint64_t mask = rng;
    for (int s = 1; s < 64; s <<= 1)
      mask |= mask >> s;
    uint64_t v;
    do
      v = (((uint64_t)lg_np_next32(np) << 32) | lg_np_next32(np)) & mask;
    while (v > rng);
    return low + (int64_t)v;
  }
  if (rng == 0xFFFFFFFFull)
    return low + (int64_t)lg_np_next32(np);
  uint32_t mask = (uint32_t)rng;
  for (int s = 1; s < 32; s <<= 1)
    mask |= mask >> s;
  uint32_t v;
  while ((v = lg_np_next32(np) & mask) > (uint32_t)rng)
    ;
  return low + (int64_t)v;
}

double lg_np_double(struct lg_np *np) {
  int32_t a = (int32_t)(lg_np_next32(np) >> 5), b = (int32_t)(lg_np_next32(np) >> 6);
  return ((double)a * 67108864.0 + (double)b) / 9007199254740992.0;
}

static double np_gauss(struct lg_np *np) {
  if (np->has_gauss) {
    np->has_gauss = false;
    double g = np->gauss;
    np->gauss = 0.0;
    return g;
  }
  double x1, x2, r2;
  do {
    x1 = 2.0 * lg_np_double(np) - 1.0;
    x2 = 2.0 * lg_np_double(np) - 1.0;
    r2 = x1 * x1 + x2 * x2;
  } while (r2 >= 1.0 || r2 == 0.0);
  double f = sqrt(-2.0 * log(r2) / r2);
  np->gauss = f * x1;
  np->has_gauss = true;
  return f * x2;
}

static double np_standard_gamma(struct lg_np *np, double shape) {
  if (shape == 1.0)
    return -log(1.0 - lg_np_double(np)); /* legacy_standard_exponential */
  if (shape == 0.0)
    return 0.0;
  if (shape < 1.0) {
    for (;;) {
      double u = lg_np_double(np);
      double v = -log(1.0 - lg_np_double(np));
      if (u <= 1.0 - shape) {
        double x = pow(u, 1.0 / shape);
        if (x <= v)
          return x;
      } else {
        double y = -log((1.0 - u) / shape);
        double x = pow(1.0 - shape + shape * y, 1.0 / shape);
        if (x <= v + y)
          return x;
      }
    }
  }
  double b = shape - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * b);
  for (;;) {
    double x, v;
    do {
      x = np_gauss(np);
      v = 1.0 + c * x;
    } while (v <= 0.0);
    v = v * v * v;
    double u = lg_np_double(np);
    if (u < 1.0 - 0.0331 * (x * x) * (x * x))
      return b * v;
    if (log(u) < 0.5 * x * x + b * (1.0 - v + log(v)))
      return b * v;
  }
}

double lg_np_gamma(struct lg_np *np, double shape, double scale) {
  return scale * np_standard_gamma(np, shape);
}
