#include "rng.h"

#include <math.h>
#include <pthread.h>
#include <unistd.h>

static const double two_pi = 6.283185307179586;
static const uint64_t increment = 0x9E3779B97F4A7C15ull; /* splitmix64's step */

void rng_seed(Rng *rng, uint64_t seed)
{
    rng->state = seed;
}

/* splitmix64: passes BigCrush and needs no warm-up, so every seed is a good seed. */
uint64_t rng_next_u64(Rng *rng)
{
    uint64_t z = (rng->state += increment);
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

/* One thread's share of rng_fill_normal: its own generator, started where its share starts. */
typedef struct {
    Rng rng;
    float *x;
    size_t n;
    float scale;
} NormalFill;

static void *fill_share(void *arg)
{
    NormalFill *share = arg;
    for (size_t i = 0; i < share->n; i++)
        share->x[i] = (float)(share->scale * rng_normal(&share->rng));
    return NULL;
}

/* splitmix64's state after k numbers is its state plus k increments, and each normal takes two
 * numbers, so share t starts at the state plus 2 x (its first index) increments: each element
 * is computed from the same state as in one loop, whichever thread computes it. A thread takes
 * at least 4 Mi normals (about a tenth of a second of one core's time): below that, starting
 * it costs more than it saves. */
enum { MAX_FILL_THREADS = 16, NORMALS_PER_THREAD = 1 << 22 };

void rng_fill_normal(Rng *rng, float *x, size_t n, float scale)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    size_t most = cores < 1 ? 1 : cores < MAX_FILL_THREADS ? (size_t)cores : MAX_FILL_THREADS;
    size_t threads = n / NORMALS_PER_THREAD;
    if (threads > most)
        threads = most;
    if (threads < 1)
        threads = 1;
    NormalFill shares[MAX_FILL_THREADS];
    pthread_t ids[MAX_FILL_THREADS];
    int started[MAX_FILL_THREADS] = {0};
    for (size_t t = 0; t < threads; t++) {
        size_t begin = n * t / threads, end = n * (t + 1) / threads;
        shares[t] = (NormalFill){{rng->state + 2 * (uint64_t)begin * increment}, x + begin, end - begin, scale};
        started[t] = t > 0 && pthread_create(&ids[t], NULL, fill_share, &shares[t]) == 0;
    }
    for (size_t t = 0; t < threads; t++) /* this thread's share, and any a thread could not take */
        if (!started[t])
            fill_share(&shares[t]);
    for (size_t t = 0; t < threads; t++)
        if (started[t])
            pthread_join(ids[t], NULL);
    rng->state += 2 * (uint64_t)n * increment;
}
