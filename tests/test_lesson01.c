/* Lesson 01 end to end: the ring exercise under the grader, and the benchmark's checks. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "shell.h"

static int run(const char *command) { return shell_status(command); }

TestSuite(lesson01, .timeout = 300);

Test(lesson01, ring_solution_passes_grading_at_2_3_4_ranks)
{
    cr_assert_eq(run("scripts/grade.sh 01 build/solutions/01_collectives > /dev/null 2>&1"), 0);
}

Test(lesson01, ring_solution_is_exact_at_1_rank)
{
    cr_assert_eq(run("timeout 60 mpiexec -n 1 build/solutions/01_collectives --verify-ring > /dev/null 2>&1"), 0);
}

Test(lesson01, ring_skeleton_fails_grading)
{
    cr_assert_eq(run("scripts/grade.sh 01 build/lessons/01_collectives > /dev/null 2>&1"), 1);
}

Test(lesson01, benchmark_checks_every_operation)
{
    cr_assert_eq(run("timeout 120 mpiexec -n 3 build/solutions/01_collectives -b 1K -e 100K -f 10 -w 1 -n 2 -c 1 "
                     "| grep -q '^# OK: 0 wrong elements'"), 0);
}

Test(lesson01, benchmark_counts_the_skeletons_wrong_elements)
{
    cr_assert_eq(run("timeout 120 mpiexec -n 2 build/lessons/01_collectives -o ring -b 1K -e 1K -w 0 -n 1 "
                     "> /dev/null 2>&1"), 1);
}

Test(lesson01, benchmark_writes_a_csv_row_per_operation_and_size)
{
    char dir[] = "/tmp/dtc_lesson01_XXXXXX", command[512];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(command, sizeof command,
             "timeout 120 mpiexec -n 2 build/solutions/01_collectives -b 1K -e 4K -f 2 -w 0 -n 1 --csv %s/c.csv "
             "> /dev/null && test $(wc -l < %s/c.csv) -eq 16 && grep -q '^mpi,2,ring,4000,' %s/c.csv", dir, dir, dir);
    int status = run(command);
    snprintf(command, sizeof command, "rm -rf %s", dir);
    run(command);
    cr_assert_eq(status, 0, "expected a header and 3 sizes x 5 operations");
}

Test(lesson01, bad_flags_get_a_one_line_error)
{
    cr_assert_eq(run("test \"$(build/solutions/01_collectives -x 1 2>&1)\" = "
                     "'01_collectives: unknown flag -x (see --help)'"), 0);
    cr_assert_eq(run("build/solutions/01_collectives -b 10M -e 1M > /dev/null 2>&1"), 2);
    cr_assert_eq(run("build/solutions/01_collectives -o everything > /dev/null 2>&1"), 2);
    cr_assert_eq(run("build/solutions/01_collectives --help | grep -q busbw"), 0);
}
