#include "blas_kernels.h"

#include <cblas.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* Set only for a program restarted by check_kernels: OpenBLAS's own pick before it. */
#define OWN_PICK_VARIABLE "DTC_OPENBLAS_OWN_PICK"

static BlasKernelsSource kernels_source = BLAS_KERNELS_LIBRARY;
static char own_pick[32];  /* BLAS_KERNELS_FEATURES: what OpenBLAS picked by itself */
static char requested[32]; /* BLAS_KERNELS_FEATURES: what the restart asked for */
static int restart_errno;  /* the restart failed: why (the run goes on with OpenBLAS's pick) */

CpuFeatures cpu_features(void)
{
    /* Runs before main(), where gcc's feature table may not be filled in yet. Its answers
     * already include the operating system's consent (XGETBV) for AVX and AVX-512. */
    __builtin_cpu_init();
    return (CpuFeatures){
        .avx = __builtin_cpu_supports("avx"),
        .fma = __builtin_cpu_supports("fma"),
        .avx2 = __builtin_cpu_supports("avx2"),
        .avx512f = __builtin_cpu_supports("avx512f"),
        .avx512dq = __builtin_cpu_supports("avx512dq"),
        .avx512bw = __builtin_cpu_supports("avx512bw"),
        .avx512vl = __builtin_cpu_supports("avx512vl"),
        .avx512bf16 = __builtin_cpu_supports("avx512bf16"),
    };
}

/* OpenBLAS's single-precision kernels for SkylakeX and Cooperlake are the same; Cooperlake
 * adds bfloat16 ones, and is what OpenBLAS itself names a CPU with AVX512-BF16 that it
 * knows. Haswell's kernels need AVX2 and FMA; AVX-512 without BW, DQ and VL (Knights
 * Landing) gets them too. */
const char *openblas_core_for(CpuFeatures f)
{
    if (f.avx512f && f.avx512dq && f.avx512bw && f.avx512vl)
        return f.avx512bf16 ? "Cooperlake" : "SkylakeX";
    if (f.avx2 && f.fma)
        return "Haswell";
    if (f.avx)
        return "Sandybridge";
    return NULL;
}

/* OpenBLAS 0.3.21's x86-64 core types (and SapphireRapids, from later versions), widest
 * first: the vector width of each, as a rank (4 AVX-512 .. 1 SSE) and a name. */
static const struct {
    const char *core;
    int width;
} core_widths[] = {
    {"SapphireRapids", 4}, {"Cooperlake", 4}, {"SkylakeX", 4}, {"Haswell", 3}, {"Zen", 3},
    {"Excavator", 2}, {"Steamroller", 2}, {"Piledriver", 2}, {"Bulldozer", 2}, {"Sandybridge", 2},
    {"Nehalem", 1}, {"Dunnington", 1}, {"Penryn", 1}, {"Core2", 1}, {"Atom", 1}, {"Nano", 1},
    {"Bobcat", 1}, {"Barcelona", 1}, {"Opteron_SSE3", 1}, {"Opteron", 1}, {"Athlon", 1},
    {"Prescott", 1}, {"Banias", 1}, {"Northwood", 1}, {"Coppermine", 1}, {"Katmai", 1},
};
static const char *const width_names[] = {NULL, "SSE", "AVX", "AVX2", "AVX-512"};

static int core_width(const char *core)
{
    for (size_t i = 0; core != NULL && i < sizeof core_widths / sizeof core_widths[0]; i++)
        if (strcasecmp(core, core_widths[i].core) == 0)
            return core_widths[i].width;
    return 0;
}

const char *openblas_core_vectors(const char *core) { return width_names[core_width(core)]; }

const char *openblas_core_to_request(CpuFeatures features, const char *picked_core)
{
    /* A name the table does not know comes from an OpenBLAS newer than it, which knows
     * newer CPUs than this table does. */
    const char *best = openblas_core_for(features);
    int picked_width = core_width(picked_core);
    if (best == NULL || picked_width == 0 || picked_width >= core_width(best))
        return NULL;
    return best;
}

/* The program restarted by check_kernels: remember why, and take both variables out of the
 * environment again, so that programs this one starts (tests start lessons) see the user's
 * environment and decide for themselves. */
static void note_restart(const char *picked)
{
    snprintf(own_pick, sizeof own_pick, "%s", picked);
    snprintf(requested, sizeof requested, "%s", getenv("OPENBLAS_CORETYPE") ? getenv("OPENBLAS_CORETYPE") : "");
    kernels_source = BLAS_KERNELS_FEATURES;
    unsetenv(OWN_PICK_VARIABLE);
    unsetenv("OPENBLAS_CORETYPE");
}

/* OpenBLAS reads OPENBLAS_CORETYPE once, in its own constructor, which the dynamic loader
 * runs before the program's. So this constructor, which sees the pick already made, can
 * only change it by starting the program again (same process, same arguments, same open
 * files: mpiexec and the tests see nothing) with the variable set. It runs before main(),
 * so before MPI starts, and restarts at most once. glibc passes constructors main's
 * arguments. */
__attribute__((constructor)) static void check_kernels(int argc, char **argv, char **envp)
{
    (void)argc, (void)envp;
    const char *picked = openblas_get_corename();
    if (getenv(OWN_PICK_VARIABLE) != NULL) {
        note_restart(getenv(OWN_PICK_VARIABLE));
        return;
    }
    if (getenv("OPENBLAS_CORETYPE") != NULL) {
        kernels_source = BLAS_KERNELS_ENVIRONMENT;
        return;
    }
    const char *wanted = openblas_core_to_request(cpu_features(), picked);
    if (wanted == NULL)
        return;
    if (setenv(OWN_PICK_VARIABLE, picked, 1) == 0 && setenv("OPENBLAS_CORETYPE", wanted, 1) == 0)
        execv("/proc/self/exe", argv);
    restart_errno = errno;
    unsetenv(OWN_PICK_VARIABLE);
    unsetenv("OPENBLAS_CORETYPE");
}

BlasKernelsSource blas_kernels_source(void) { return kernels_source; }

const char *blas_core_name(void) { return openblas_get_corename(); }

void blas_kernels_describe(char *out, size_t size)
{
    const char *core = blas_core_name(), *vectors = openblas_core_vectors(core);
    int n = snprintf(out, size, "OpenBLAS %s kernels (%s)", core, vectors != NULL ? vectors : "width unknown");
    if (n < 0 || (size_t)n >= size)
        return;
    out += n, size -= (size_t)n;
    if (kernels_source == BLAS_KERNELS_ENVIRONMENT)
        snprintf(out, size, ", set by OPENBLAS_CORETYPE");
    else if (kernels_source == BLAS_KERNELS_FEATURES && strcasecmp(core, requested) != 0)
        snprintf(out, size, ", not the %s kernels chosen from the CPU's features", requested);
    else if (kernels_source == BLAS_KERNELS_FEATURES)
        snprintf(out, size, ", chosen from the CPU's features: OpenBLAS's own pick was %s (%s)", own_pick,
                 openblas_core_vectors(own_pick) ? openblas_core_vectors(own_pick) : "width unknown");
    else if (restart_errno != 0)
        snprintf(out, size, ", OpenBLAS's own pick: restarting with %s failed (%s)",
                 openblas_core_to_request(cpu_features(), core), strerror(restart_errno));
    else
        snprintf(out, size, ", OpenBLAS's own pick, as wide as the CPU's features allow");
}

void blas_kernels_print(FILE *out)
{
    char description[160];
    blas_kernels_describe(description, sizeof description);
    fprintf(out, "matrix products: %s\n", description);
}

void blas_set_threads(int threads) { openblas_set_num_threads(threads); }
