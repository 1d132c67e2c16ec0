/* The communicator at world sizes 1..4, each collective against a serial computation
 * (tests/comm_check.c, launched with mpiexec as a real job would be). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

static int run_ranks(int ranks)
{
    char command[256];
    snprintf(command, sizeof command,
             "timeout 120 mpiexec -n %d build/tests/comm_check > /dev/null 2>&1", ranks);
    int status = system(command);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TestSuite(comm, .timeout = 150);

Test(comm, singleton_without_mpiexec)
{
    int status = system("timeout 60 build/tests/comm_check > /dev/null 2>&1");
    cr_assert_eq(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0);
}

Test(comm, collectives_at_1_rank) { cr_assert_eq(run_ranks(1), 0); }
Test(comm, collectives_at_2_ranks) { cr_assert_eq(run_ranks(2), 0); }
Test(comm, collectives_at_3_ranks) { cr_assert_eq(run_ranks(3), 0); }
Test(comm, collectives_at_4_ranks) { cr_assert_eq(run_ranks(4), 0); }
