/* Lesson 01 end to end: the ring exercise under the grader, and the benchmark's checks. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "files.h"
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
    static char output[1 << 16];
    int status = shell_output("timeout 120 mpiexec -n 3 build/solutions/01_collectives -b 1K -e 100K -f 10 -w 1 -n 2 "
                              "-c 1", output, sizeof output);
    cr_assert_eq(status, 0, "%s", output);
    cr_expect_not_null(strstr(output, "\n# Out of bounds values : 0 OK"), "%s", output);
}

Test(lesson01, benchmark_counts_the_skeletons_wrong_elements)
{
    cr_assert_eq(run("timeout 120 mpiexec -n 2 build/lessons/01_collectives --collective ring -b 1K -e 1K -w 0 -n 1 "
                     "> /dev/null 2>&1"), 1);
}

Test(lesson01, benchmark_writes_a_csv_row_per_operation_and_size)
{
    char dir[64], command[512], path[128], rows[16][256];
    cr_assert_not_null(shell_temp_dir(dir, sizeof dir, "lesson01"));
    snprintf(path, sizeof path, "%s/c.csv", dir);
    snprintf(command, sizeof command,
             "timeout 120 mpiexec -n 2 build/solutions/01_collectives -b 1K -e 4K -f 2 -w 0 -n 1 --csv %s > /dev/null",
             path);
    int status = run(command), lines = files_lines(path, rows, 16), found = 0;
    for (int i = 0; i < lines && i < 16; i++)
        found |= strncmp(rows[i], "mpi,2,ring,4096,1024,float,sum,-1,1,", 36) == 0;
    shell_remove_dir(dir);
    cr_assert_eq(status, 0);
    cr_expect_eq(lines, 16, "expected a header and 3 sizes x 5 operations");
    cr_expect(found, "no row for the ring at 4096 bytes");
}

/* --progress: for each collective that starts, a row per compute length (2) and test count
 * (11), each with the collective's time alone, the compute, the tests, the wait after and the
 * time inside the tests: none without tests, some with them. */
Test(lesson01, progress_writes_a_row_per_compute_and_test_count)
{
    char dir[64], command[512], path[128], rows[64][256];
    cr_assert_not_null(shell_temp_dir(dir, sizeof dir, "lesson01"));
    snprintf(path, sizeof path, "%s/p.csv", dir);
    snprintf(command, sizeof command,
             "timeout 120 mpiexec -n 2 build/solutions/01_collectives --progress -b 64K -e 64K -w 0 -n 1 --csv %s "
             "> /dev/null",
             path);
    int status = run(command), lines = files_lines(path, rows, 64), reduce = 0, gather = 0, most = 0, timed = 0;
    for (int i = 1; i < lines && i < 64; i++) {
        reduce += strncmp(rows[i], "mpi,2,all_reduce,65536,", 23) == 0;
        gather += strncmp(rows[i], "mpi,2,all_gather,65536,", 23) == 0;
        most += strstr(rows[i], ",32,") != NULL;
        int tests = -1;
        double in_tests = -1.0;
        sscanf(rows[i], "%*[^,],%*[^,],%*[^,],%*[^,],%*[^,],%*[^,],%d,%*[^,],%lf", &tests, &in_tests);
        timed += tests == 0 ? in_tests == 0.0 : in_tests > 0.0;
    }
    shell_remove_dir(dir);
    cr_assert_eq(status, 0);
    cr_expect_str_eq(rows[0], "backend,ranks,collective,size,alone_us,compute_us,tests,wait_us,tests_us");
    cr_expect_eq(timed, 44, "expected no time in tests without tests, and some with them");
    cr_expect_eq(lines, 45, "expected a header and 2 collectives x 2 computes x 11 test counts");
    cr_expect_eq(reduce, 22);
    cr_expect_eq(gather, 22);
    cr_expect_eq(most, 4, "expected 32 tests once per collective and compute");
}

/* nccl-tests' conventions: K, M, G are powers of 2^10; its columns, a row per size, and its
 * closing "Avg bus bandwidth" line; the long names and --name=value read as its letters do. */
Test(lesson01, sizes_columns_and_closing_lines_are_nccl_tests_own)
{
    char output[1 << 14];
    int status = shell_output("timeout 120 mpiexec -n 2 build/solutions/01_collectives --collective=all_reduce "
                              "--minbytes=1K -e 4K -f 4 -w 0 -n 1", output, sizeof output);
    cr_assert_eq(status, 0, "%s", output);
    const char *expected[] = {"size        count   type  redop  root       time    algbw    busbw  #wrong",
                              "    all_reduce         1024          256  float    sum    -1          -",
                              "    all_reduce         4096         1024  float    sum    -1          -",
                              "# Out of bounds values : 0 OK", "# Avg bus bandwidth    : "};
    for (size_t i = 0; i < sizeof expected / sizeof *expected; i++)
        cr_expect_not_null(strstr(output, expected[i]), "no '%s' in:\n%s", expected[i], output);
    cr_expect_null(strstr(output, " 1000 "), "1K read as 10^3:\n%s", output);
}

/* Three ranks on fewer cores: the header says the times are the scheduler's; on three or
 * more, nothing. */
Test(lesson01, more_ranks_than_cores_is_said_in_the_header)
{
    char output[1 << 14];
    int status = shell_output("timeout 120 mpiexec -n 3 build/solutions/01_collectives --collective=all_reduce "
                              "-b 1K -e 1K -w 0 -n 1", output, sizeof output);
    cr_assert_eq(status, 0, "%s", output);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    char note[128];
    snprintf(note, sizeof note, "# note: 3 rank(s) x 1 thread(s) on this machine's %ld core(s)", cores);
    if (cores < 3)
        cr_expect_not_null(strstr(output, note), "no '%s' in:\n%s", note, output);
    else
        cr_expect_null(strstr(output, "# note:"), "a note on %ld cores:\n%s", cores, output);
}

/* The program's whole output for `flags` must be `line` (and a newline), with status 2. */
static void expect_refused(const char *flags, const char *line)
{
    char command[256], output[4096], expected[512];
    snprintf(command, sizeof command, "build/solutions/01_collectives %s", flags);
    snprintf(expected, sizeof expected, "%s\n", line);
    cr_expect_eq(shell_output(command, output, sizeof output), 2, "%s: %s", flags, output);
    cr_expect_str_eq(output, expected);
}

Test(lesson01, bad_flags_get_a_one_line_error)
{
    expect_refused("-x 1", "01_collectives: unknown flag -x (see --help)");
    cr_assert_eq(run("build/solutions/01_collectives -b 10M -e 1M > /dev/null 2>&1"), 2);
    expect_refused("-o prod", "01_collectives: -o prod: the course's collectives sum; -o sum is the only reduction");
    cr_assert_eq(run("build/solutions/01_collectives --collective everything > /dev/null 2>&1"), 2);
    expect_refused("--progress --table",
                   "01_collectives: --table, --verify-ring and --progress are three runs: give one of them");
    expect_refused("--progress --collective broadcast",
                   "01_collectives: --progress --collective broadcast: only all_reduce and all_gather are started and "
                   "tested");
    char output[1 << 14];
    cr_assert_eq(shell_output("build/solutions/01_collectives --help", output, sizeof output), 0, "%s", output);
    cr_expect_not_null(strstr(output, "busbw"), "%s", output);
}

/* A deadline the timer cannot honour, and outputs that cannot be written, are refused
 * before any measuring, with one line. */
Test(lesson01, bad_timeouts_and_unwritable_outputs_are_refused_before_measuring)
{
    expect_refused("--wait-timeout nan", "01_collectives: --wait-timeout: 'nan' is not a finite number");
    cr_assert_eq(run("build/solutions/01_collectives --wait-timeout 0.0000009 > /dev/null 2>&1"), 2);
    expect_refused("--csv /nonexistent/rows.csv",
                   "01_collectives: --csv /nonexistent/rows.csv: there is no folder /nonexistent");
    expect_refused("--csv /dev/null", "01_collectives: --csv /dev/null: exists and is not a regular file");
}

/* A rank that stops in the middle of the measurements ends the run within --wait-timeout:
 * the rank left waiting names it, and nothing is left running. */
Test(lesson01, a_stopped_rank_ends_the_benchmark_within_the_wait_timeout)
{
    char output[8192];
    int status = shell_output("tests/scenarios/stop_a_collectives_rank.sh", output, sizeof output);
    cr_expect_eq(status, 0, "%s", output);
    cr_expect_not_null(strstr(output, "waited 2 s (--wait-timeout) in all_reduce"), "%s", output);
    cr_expect_not_null(strstr(output, "): stopped (a signal, or a debugger) in all_reduce"), "%s", output);
    cr_expect_null(strstr(output, "a rank was left running"), "%s", output);
}

/* The CSV is renamed into place when the last row is in: a file already at the path stays
 * as it was until then. */
Test(lesson01, the_csv_replaces_an_earlier_one_only_when_complete)
{
    cr_assert_eq(run("tests/scenarios/collectives_csv_in_place.sh"), 0);
}
