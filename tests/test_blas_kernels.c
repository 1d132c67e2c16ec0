/* The choice of matrix-product kernels (common/blas_kernels.c): features -> kernels from
 * the feature sets of real CPU families, whatever CPU runs the tests; then the programs
 * themselves, with a stand-in for OpenBLAS that falls back to SSE3 as it does on a CPU
 * newer than itself (build/tests/fake_openblas_pick.so). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "shell.h"

#include "blas_kernels.h"

#define FAKE_PICK "LD_PRELOAD=build/tests/fake_openblas_pick.so "
#define PROFILE "build/solutions/00_single_device profile --config tiny --warmup-iters 0 --iters 1 --sweep-max-batch 1"

/* Feature sets as the CPUs report them (only the flags the choice reads). */
static const CpuFeatures sse_only = {0};
static const CpuFeatures sandy_bridge = {.avx = true};
static const CpuFeatures avx2_without_fma = {.avx = true, .avx2 = true};
static const CpuFeatures zen3 = {.avx = true, .fma = true, .avx2 = true};
static const CpuFeatures knights_landing = {.avx = true, .fma = true, .avx2 = true, .avx512f = true};
static const CpuFeatures skylake_sp = {.avx = true,      .fma = true,      .avx2 = true,     .avx512f = true,
                                       .avx512dq = true, .avx512bw = true, .avx512vl = true};
static const CpuFeatures emerald_rapids = {.avx = true,      .fma = true,      .avx2 = true,
                                           .avx512f = true, .avx512dq = true, .avx512bw = true,
                                           .avx512vl = true, .avx512bf16 = true};

static void assert_core(const char *got, const char *want)
{
    if (want == NULL)
        cr_assert_null(got, "got %s, expected OpenBLAS's own choice", got);
    else
        cr_assert(got != NULL && strcmp(got, want) == 0, "got %s, expected %s", got ? got : "(none)", want);
}

Test(blas_kernels, widest_kernels_the_features_allow)
{
    assert_core(openblas_core_for(emerald_rapids), "Cooperlake");
    assert_core(openblas_core_for(skylake_sp), "SkylakeX");
    assert_core(openblas_core_for(knights_landing), "Haswell");
    assert_core(openblas_core_for(zen3), "Haswell");
    assert_core(openblas_core_for(avx2_without_fma), "Sandybridge");
    assert_core(openblas_core_for(sandy_bridge), "Sandybridge");
    assert_core(openblas_core_for(sse_only), NULL);
}

Test(blas_kernels, vector_width_of_each_core_type)
{
    cr_assert_str_eq(openblas_core_vectors("Cooperlake"), "AVX-512");
    cr_assert_str_eq(openblas_core_vectors("SKYLAKEX"), "AVX-512");
    cr_assert_str_eq(openblas_core_vectors("Zen"), "AVX2");
    cr_assert_str_eq(openblas_core_vectors("Haswell"), "AVX2");
    cr_assert_str_eq(openblas_core_vectors("Sandybridge"), "AVX");
    cr_assert_str_eq(openblas_core_vectors("Prescott"), "SSE");
    cr_assert_null(openblas_core_vectors("Zen7"));
    cr_assert_null(openblas_core_vectors(NULL));
}

Test(blas_kernels, only_a_narrower_pick_is_replaced)
{
    assert_core(openblas_core_to_request(emerald_rapids, "Prescott"), "Cooperlake");
    assert_core(openblas_core_to_request(skylake_sp, "Haswell"), "SkylakeX");
    assert_core(openblas_core_to_request(zen3, "Sandybridge"), "Haswell");
    assert_core(openblas_core_to_request(sandy_bridge, "Nehalem"), "Sandybridge");
    /* as wide as the features allow: OpenBLAS's finer pick stays */
    assert_core(openblas_core_to_request(emerald_rapids, "Cooperlake"), NULL);
    assert_core(openblas_core_to_request(emerald_rapids, "SkylakeX"), NULL);
    assert_core(openblas_core_to_request(zen3, "Zen"), NULL);
    assert_core(openblas_core_to_request(knights_landing, "Haswell"), NULL);
    /* nothing better to ask for, or a name newer than the table */
    assert_core(openblas_core_to_request(sse_only, "Prescott"), NULL);
    assert_core(openblas_core_to_request(emerald_rapids, "GraniteRapids"), NULL);
}

/* The kernels this machine's features call for; skips the test on a CPU without AVX. */
static const char *kernels_for_this_cpu(void)
{
    const char *core = openblas_core_for(cpu_features());
    if (core == NULL)
        cr_skip_test("this CPU has no AVX: OpenBLAS's own choice always stands");
    return core;
}

static void assert_contains(const char *output, const char *text)
{
    cr_assert_not_null(strstr(output, text), "expected '%s' in:\n%s", text, output);
}

Test(blas_kernels, program_restarts_itself_with_the_chosen_kernels)
{
    const char *core = kernels_for_this_cpu();
    char output[8192], expected[256];
    int status = shell_output(FAKE_PICK "env -u OPENBLAS_CORETYPE " PROFILE, output, sizeof output);
    cr_assert_eq(status, 0, "%s", output);
    snprintf(expected, sizeof expected,
             "matrix products: OpenBLAS %s kernels (%s), chosen from the CPU's features: "
             "OpenBLAS's own pick was Prescott (SSE)\n",
             core, openblas_core_vectors(core));
    assert_contains(output, expected);
}

/* Every rank restarts itself before MPI starts; mpiexec must not notice. */
Test(blas_kernels, restart_under_mpiexec, .timeout = 120)
{
    const char *core = kernels_for_this_cpu();
    char output[16384], expected[256];
    int status = shell_output(FAKE_PICK "env -u OPENBLAS_CORETYPE mpiexec -n 2 build/solutions/02_naive_ddp train "
                              "--config tiny --steps 2 --val-every 0 --gen-tokens 0",
                              output, sizeof output);
    cr_assert_eq(status, 0, "%s", output);
    snprintf(expected, sizeof expected, "OpenBLAS %s kernels (%s), chosen from the CPU's features", core,
             openblas_core_vectors(core));
    assert_contains(output, expected);
}

Test(blas_kernels, users_coretype_is_respected)
{
    char output[8192];
    cr_assert_eq(shell_output(FAKE_PICK "OPENBLAS_CORETYPE=Prescott " PROFILE, output, sizeof output), 0, "%s",
                 output);
    assert_contains(output, "matrix products: OpenBLAS Prescott kernels (SSE), set by OPENBLAS_CORETYPE\n");
    cr_assert_eq(shell_output("OPENBLAS_CORETYPE=Prescott " PROFILE, output, sizeof output), 0, "%s", output);
    assert_contains(output, "matrix products: OpenBLAS Prescott kernels (SSE), set by OPENBLAS_CORETYPE\n");
}

/* With the real OpenBLAS: whichever way they were chosen, the kernels use the widest
 * vectors the CPU has. */
Test(blas_kernels, real_library_runs_the_widest_kernels)
{
    const char *core = kernels_for_this_cpu();
    char output[8192], expected[128];
    cr_assert_eq(shell_output("env -u OPENBLAS_CORETYPE " PROFILE, output, sizeof output), 0, "%s", output);
    snprintf(expected, sizeof expected, " kernels (%s), ", openblas_core_vectors(core));
    assert_contains(output, expected);
}

/* A restarted program gives its own children the user's environment. This test runs
 * itself again under the stand-in, where its process is a restarted one (without
 * Criterion's BXFI_MAP, which would make that run think it is one of this run's workers). */
Test(blas_kernels, restarted_program_leaves_the_environment_as_it_was)
{
    kernels_for_this_cpu();
    if (getenv("DTC_TEST_RESTARTED_CHILD") != NULL) {
        cr_assert_eq(blas_kernels_source(), BLAS_KERNELS_FEATURES, "the program did not restart itself");
        cr_assert_null(getenv("OPENBLAS_CORETYPE"));
        cr_assert_null(getenv("DTC_OPENBLAS_OWN_PICK"));
        return;
    }
    char output[8192];
    int status = shell_output(FAKE_PICK "DTC_TEST_RESTARTED_CHILD=1 env -u OPENBLAS_CORETYPE -u BXFI_MAP build/tests/unit_tests "
                              "--filter 'blas_kernels/restarted_program_leaves_the_environment_as_it_was'",
                              output, sizeof output);
    cr_assert_eq(status, 0, "%s", output);
    assert_contains(output, "Passing: 1");
}
