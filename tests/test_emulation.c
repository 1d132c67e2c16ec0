/* The emulated GPU (tests/emu) never constrains the CUDA code: a kernel it cannot run, one
 * with dynamic shared memory, still builds, and its launch skips the test that reaches it,
 * saying why, in a program (status 77) and through the GPU tests' hook. */
#include <criterion/criterion.h>
#include <string.h>

#include "shell.h"

Test(emulation, a_kernel_it_cannot_run_builds_and_its_launch_skips_saying_why)
{
    char output[8192];
    int status = shell_output("tests/emu/check_cannot_run.sh 2>&1", output, sizeof output);
    cr_expect_eq(status, 77, "%s", output);
    const char *why = "the emulated GPU cannot run kernel scale_shared: dynamic shared memory "
                      "(128 * sizeof(float) bytes a block); it is tested on real GPUs only";
    char hooked[256];
    snprintf(hooked, sizeof hooked, "skipped: %s", why);
    cr_expect_not_null(strstr(output, hooked), "the hook was not called:\n%s", output);
    cr_expect_not_null(strstr(output, why), "%s", output);
    cr_expect_null(strstr(output, "the kernel ran"), "%s", output);
}
