/* The communicator at world sizes 1..4, each collective against a serial computation
 * (tests/comm_check.c, launched with mpiexec as a real job would be). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "shell.h"

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

/* srun without a PMI plugin (or another MPI's mpirun) starts N tasks that MPI sees one by
 * one: each would train alone and write the same files. The first says how to launch; every
 * one ends with status 2 before any work. */
Test(comm, tasks_that_mpi_starts_one_by_one_are_refused)
{
    char command[512];
    const char *expected = "02_naive_ddp: the launcher started 2 tasks (SLURM_STEP_NUM_TASKS=2), but MPI started "
                           "each alone: each would run by itself and write the same files; launch with this MPI's "
                           "mpiexec -n 2, or under Slurm with srun --mpi=pmi2 (srun --mpi=list shows what yours "
                           "offers), or salloc then mpiexec\n";
    for (int task = 0; task < 2; task++) {
        snprintf(command, sizeof command, "tests/scenarios/lone_task.sh %d", task);
        char output[2048];
        cr_expect_eq(shell_output(command, output, sizeof output), 2, "task %d: %s", task, output);
        cr_expect_str_eq(output, task == 0 ? expected : "", "task %d", task);
    }
}
