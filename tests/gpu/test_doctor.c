/* tools/doctor end to end: its flags, and its verdict on this machine, which the test works
 * out for itself by asking the CUDA runtime how many GPUs there are. The binary is the one
 * in gpu_build_dir(). */
#include <criterion/criterion.h>
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../shell.h"
#include "gpu_test_util.h"

TestSuite(doctor, .timeout = 300);

static const char *doctor_path(void)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/tools/doctor", gpu_build_dir());
    return path;
}

/* Runs the doctor with `arguments` (stderr joined to stdout); returns its exit status. */
static int run_doctor(const char *launcher, const char *arguments, char *out, size_t out_len)
{
    char command[1024];
    snprintf(command, sizeof command, "timeout 240 %s '%s' %s", launcher, doctor_path(), arguments);
    return shell_output(command, out, out_len);
}

/* The number of GPUs this process can use; 0 when cudaGetDeviceCount fails (no GPU or driver). */
static int usable_gpus(void)
{
    int count = 0;
    return cudaGetDeviceCount(&count) == cudaSuccess ? count : 0;
}

static int line_count(const char *text)
{
    int lines = 0;
    for (const char *c = text; *c != '\0'; c++)
        lines += *c == '\n';
    return lines;
}

static void expect_one_line_error(const char *arguments, const char *must_name)
{
    char out[4096];
    int status = run_doctor("", arguments, out, sizeof out);
    cr_expect_eq(status, 2, "doctor %s: exit %d, expected 2; output:\n%s", arguments, status, out);
    cr_expect_eq(line_count(out), 1, "doctor %s: expected one line, got:\n%s", arguments, out);
    cr_expect(strncmp(out, "doctor: ", 8) == 0, "doctor %s: error should start 'doctor: ', got:\n%s", arguments, out);
    cr_expect_not_null(strstr(out, must_name), "doctor %s: error should name %s, got:\n%s", arguments, must_name, out);
}

Test(doctor, help_prints_usage_and_exits_0)
{
    char out[8192];
    int status = run_doctor("", "--help", out, sizeof out);
    cr_assert_eq(status, 0, "exit %d; output:\n%s", status, out);
    cr_expect_not_null(strstr(out, "usage: doctor"), "%s", out);
    cr_expect_not_null(strstr(out, "--timeout"), "%s", out);
    cr_expect_not_null(strstr(out, "--bytes"), "%s", out);
}

Test(doctor, bad_flags_exit_2_with_one_line_naming_the_flag)
{
    expect_one_line_error("--timeout x", "--timeout");
    expect_one_line_error("--timeout 0", "--timeout");
    expect_one_line_error("--timeout -5", "--timeout");
    expect_one_line_error("--timeout", "--timeout");
    expect_one_line_error("--bytes 6", "--bytes");
    expect_one_line_error("--bytes lots", "--bytes");
    expect_one_line_error("--frobnicate", "--frobnicate");
    expect_one_line_error("--bytes=6", "--bytes 6: not a multiple of 4");
}

Test(doctor, plain_run_checks_an_all_reduce_or_says_there_is_no_gpu)
{
    static char out[1 << 16];
    int status = run_doctor("", "--timeout 60", out, sizeof out);
    cr_expect_not_null(strstr(out, "NCCL "), "versions missing:\n%s", out);
    cr_expect_not_null(strstr(out, "NCCL_P2P_DISABLE"), "environment missing:\n%s", out);
    if (usable_gpus() == 0) {
        cr_expect_eq(status, 3, "no GPU here, so nothing to test: exit %d, expected 3; output:\n%s", status, out);
        cr_expect_not_null(strstr(out, "no GPU"), "%s", out);
    } else {
        cr_expect_eq(status, 0, "exit %d, expected 0; output:\n%s", status, out);
        cr_expect_not_null(strstr(out, "doctor: NCCL all-reduce ok"), "%s", out);
    }
}

/* Two ranks: both GPUs used when there are two; with one GPU NCCL would refuse the pair, so
 * the doctor must say so instead of trying; with none, nothing is tested. */
Test(doctor, two_ranks_agree_on_one_verdict)
{
    static char out[1 << 16];
    int status = run_doctor("mpiexec -n 2", "--timeout 60 --bytes 4096", out, sizeof out);
    int gpus = usable_gpus();
    if (gpus == 0) {
        cr_expect_eq(status, 3, "exit %d; output:\n%s", status, out);
        cr_expect_not_null(strstr(out, "doctor: no GPU"), "%s", out);
    } else if (gpus == 1) {
        cr_expect_eq(status, 3, "exit %d; output:\n%s", status, out);
        cr_expect_not_null(strstr(out, "would share one GPU"), "%s", out);
    } else {
        cr_expect_eq(status, 0, "exit %d; output:\n%s", status, out);
        cr_expect_not_null(strstr(out, "doctor: NCCL all-reduce ok (2 ranks"), "%s", out);
    }
}

/* The check fails where NCCL would, by faults the emulated NCCL makes on request
 * (tests/emu/emu_nccl.c); a real GPU cannot be asked for them, so there the tests skip. */
static void require_emulated_nccl(void)
{
    if (!gpu_is_emulated())
        cr_skip_test("the fault is made by the emulated NCCL (make test-emu)");
}

/* The doctor under `launcher` with `arguments` ends with `status`, its output holding each
 * of `lines` (NULL-terminated). */
static void expect_doctor(const char *launcher, const char *arguments, int status, const char *const *lines)
{
    static char out[1 << 16];
    int got = run_doctor(launcher, arguments, out, sizeof out);
    cr_expect_eq(got, status, "exit %d, expected %d; output:\n%s", got, status, out);
    for (; *lines != NULL; lines++)
        cr_expect_not_null(strstr(out, *lines), "no '%s' in:\n%s", *lines, out);
}

/* A communicator that never forms (a peer NCCL cannot reach) ends at the deadline: each
 * rank says where it stopped, rank 0 gives the verdict and what to try, and the status is 1. */
Test(doctor, a_communicator_that_never_forms_ends_at_the_deadline_saying_where)
{
    require_emulated_nccl();
    static const char *const lines[] = {"rank 0: timed out while creating the communicator (ranks finding each other",
                                        "doctor: NCCL all-reduce failed: timed out (after 2 s)\n",
                                        "NCCL_P2P_DISABLE=1", NULL};
    expect_doctor("env DTC_EMU_NCCL_HANG_RANK=0", "--timeout 2", 1, lines);
}

/* Wrong sums on one rank: that rank says which element of the first call was wrong and
 * what it held, and the verdict counts the ranks (both: the bad element flows into the
 * timed calls' sums on every rank). */
Test(doctor, wrong_sums_on_one_rank_fail_the_check_naming_the_element)
{
    require_emulated_nccl();
    static const char *const lines[] = {"rank 1: the first call: 1 of 1024 values wrong; element 0 is 4, expected 3\n",
                                        "doctor: NCCL all-reduce failed: wrong values on 2 of 2 ranks\n", NULL};
    expect_doctor("env DTC_EMU_NCCL_WRONG_RANK=1 mpiexec -n 2", "--timeout 60 --bytes 4096", 1, lines);
}
