/* The formatting the signal handlers' reports use (common/signal_safe.h) writes what
 * snprintf writes, for every conversion it knows, including printf's rounding of %.1f on
 * ties and near-ties; and it cuts, never overruns, a short buffer. */
#include <criterion/criterion.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "rng.h"
#include "signal_safe.h"

TestSuite(signal_safe);

static void expect_tenths_like_printf(double value)
{
    char mine[64], theirs[64];
    safe_format(mine, sizeof mine, "%.1f", value);
    snprintf(theirs, sizeof theirs, "%.1f", value);
    cr_expect_str_eq(mine, theirs, "%.17g: %s, printf writes %s", value, mine, theirs);
}

Test(signal_safe, tenths_round_as_printf_does_on_ties_and_near_ties)
{
    /* exact ties (0.25, 2.25: to even) and values whose decimal looks like a tie but whose
     * binary value is not one (0.35, 0.05, 1.15) */
    const double values[] = {0, -0.0, 0.04, 0.05, 0.15, 0.25, 0.35, 0.45, 0.75, 1.15, 2.25, 2.5, 9.95, 99.95,
                             -0.05, -0.25, -1.15, 1e-300, 123456789.05, 999999999999999.9};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++)
        expect_tenths_like_printf(values[i]);
    for (int tenths = 0; tenths < 100000; tenths++)
        expect_tenths_like_printf(tenths / 100.0 + 0.005); /* every near-tie up to 1000 */
}

Test(signal_safe, tenths_like_printf_on_random_seconds)
{
    Rng rng;
    rng_seed(&rng, 7);
    for (int i = 0; i < 100000; i++)
        expect_tenths_like_printf(rng_uniform(&rng) * pow(10.0, (double)(i % 12) - 3));
}

Test(signal_safe, integers_strings_and_percent_like_printf)
{
    char mine[256], theirs[256];
    const char *format = "rank %d (pid %d): %s, its collective %ld, %c%%, %ld %d";
    safe_format(mine, sizeof mine, format, -7, INT_MAX, "in all_reduce", 42L, 'Z', LONG_MIN, INT_MIN);
    snprintf(theirs, sizeof theirs, format, -7, INT_MAX, "in all_reduce", 42L, 'Z', LONG_MIN, INT_MIN);
    cr_expect_str_eq(mine, theirs);
}

Test(signal_safe, a_short_buffer_is_cut_and_ended)
{
    char buffer[8];
    memset(buffer, 'x', sizeof buffer);
    size_t length = safe_format(buffer, 6, "%s %d", "waited", 30);
    cr_expect_eq(length, 5);
    cr_expect_str_eq(buffer, "waite");
    cr_expect_eq(buffer[6], 'x', "nothing past out_len is written");
}

Test(signal_safe, an_unknown_conversion_is_a_question_mark)
{
    char buffer[32];
    safe_format(buffer, sizeof buffer, "%d %x|", 3, 17u);
    cr_expect_str_eq(buffer, "3 ?|");
}

Test(signal_safe, safe_write_writes_all_of_it)
{
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    safe_write(fds[1], "rank 0: waited 30 s\n");
    close(fds[1]);
    char got[64] = {0};
    cr_expect_eq(read(fds[0], got, sizeof got - 1), 20);
    cr_expect_str_eq(got, "rank 0: waited 30 s\n");
    close(fds[0]);
}
