/* The fuzzers' seeds (tests/fuzz/seeds/) are files the course still reads: a seed of an old
 * format would be refused at once, and every input grown from it too, so the fuzzer would
 * explore the refusal and never the reader. When a format changes, this fails until the seeds
 * are written anew (scripts/fuzz.sh --write-seeds). */
#include <criterion/criterion.h>
#include <string.h>

#include "shell.h"

Test(fuzz_seeds, every_seed_is_read_by_the_course_as_a_user_would_hand_it, .timeout = 120)
{
    char output[8192];
    int status = shell_output("tests/scenarios/fuzz_seeds_read.sh", output, sizeof output);
    cr_assert_eq(status, 0, "%s", output);
    static const char *const read[] = {"checkpoint 0\n", "resume 0\n", "shard 0\n", "trace 0\n", "yelp_csv 0\n"};
    for (size_t i = 0; i < sizeof read / sizeof *read; i++)
        cr_expect_not_null(strstr(output, read[i]), "expected \"%.*s\" in:\n%s (scripts/fuzz.sh --write-seeds "
                           "writes the seeds anew)", (int)strlen(read[i]) - 1, read[i], output);
}
