/* A small, fully specified random generator, so that initialisation and sampling give the
 * same numbers on every machine and every libc. */
#ifndef DTC_RNG_H
#define DTC_RNG_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint64_t state;
} Rng;

void rng_seed(Rng *rng, uint64_t seed);
uint64_t rng_next_u64(Rng *rng);
/* Uniform in [0, n), by multiply-shift: integers only, so the same on every machine. */
uint32_t rng_below(Rng *rng, uint32_t n);
/* Uniform in [0, 1). */
double rng_uniform(Rng *rng);
/* Standard normal (Box-Muller on two uniforms). */
double rng_normal(Rng *rng);
/* x[i] = (float)(scale * rng_normal(rng)) for i in [0, n), in order, and rng moves past them:
 * the same bits as that loop, computed by several threads when n is large. */
void rng_fill_normal(Rng *rng, float *x, size_t n, float scale);

#endif
