/* The generator's bulk normals (rng_fill_normal), which initialisation draws with several
 * threads, are the numbers one loop of rng_normal gives, bit for bit, and leave the generator
 * where that loop would: whatever the number of threads, a model starts from the same weights. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"

static void expect_fill_is_the_loop(size_t n, size_t offset)
{
    float *filled = malloc((n + 1) * sizeof(float)), *looped = malloc((n + 1) * sizeof(float));
    cr_assert(filled != NULL && looped != NULL);
    Rng bulk, one;
    rng_seed(&bulk, 1337);
    rng_seed(&one, 1337);
    for (size_t i = 0; i < offset; i++) /* a fill that starts after earlier draws */
        rng_normal(&bulk), rng_normal(&one);
    rng_fill_normal(&bulk, filled, n, 0.02f);
    for (size_t i = 0; i < n; i++)
        looped[i] = (float)(0.02f * rng_normal(&one));
    cr_expect(memcmp(filled, looped, n * sizeof(float)) == 0, "n %zu: the bulk fill differs from the loop", n);
    cr_expect_eq(bulk.state, one.state, "n %zu: the generator ends elsewhere than the loop's", n);
    cr_expect_eq(rng_next_u64(&bulk), rng_next_u64(&one));
    free(filled);
    free(looped);
}

Test(rng, bulk_normals_are_one_loops_bits_on_any_number_of_threads)
{
    expect_fill_is_the_loop(0, 0);
    expect_fill_is_the_loop(1, 3);
    expect_fill_is_the_loop(1000, 7);
    /* large enough for several threads (a share is at least 4 Mi numbers), and not a multiple
     * of their number */
    expect_fill_is_the_loop((size_t)3 * (1 << 22) + 12345, 11);
}
