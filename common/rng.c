#include "rng.h"

#include <math.h>

static const double two_pi = 6.283185307179586;

void rng_seed(Rng *rng, uint64_t seed)
{
    rng->state = seed;
}

/* splitmix64: passes BigCrush and needs no warm-up, so every seed is a good seed. */
uint64_t rng_next_u64(Rng *rng)
{
    uint64_t z = (rng->state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

uint32_t rng_below(Rng *rng, uint32_t n)
{
    return (uint32_t)(((rng_next_u64(rng) >> 32) * (uint64_t)n) >> 32);
}

double rng_uniform(Rng *rng)
{
    return (double)(rng_next_u64(rng) >> 11) * 0x1.0p-53;
}

double rng_normal(Rng *rng)
{
    double u1 = 1.0 - rng_uniform(rng); /* in (0, 1]: log stays finite */
    double u2 = rng_uniform(rng);
    return sqrt(-2.0 * log(u1)) * cos(two_pi * u2);
}
