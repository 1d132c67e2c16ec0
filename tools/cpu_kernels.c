/* Prints the OpenBLAS kernel sets this CPU can run, one per vector width, widest first:
 * the set common/blas_kernels.c chooses from the CPU's features, then the one it would
 * choose with each wider kind of vector taken away, down to OpenBLAS's SSE3 kernels
 * (Prescott), which every x86-64 CPU runs. `make bench` forces each in turn.
 *
 *   cpu_kernels
 */
#include <stdio.h>
#include <string.h>

#include "blas_kernels.h"

static void print_new(const char *core, const char **last)
{
    if (core != NULL && (*last == NULL || strcmp(core, *last) != 0))
        printf("%s\n", core);
    if (core != NULL)
        *last = core;
}

int main(int argc, char **argv)
{
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        printf("usage: cpu_kernels\n  prints the OpenBLAS kernel sets this CPU can run, one per vector width,\n"
               "  widest first\n");
        return 0;
    }
    if (argc > 1) {
        fprintf(stderr, "cpu_kernels: unexpected argument '%s' (it takes none; --help)\n", argv[1]);
        return 2;
    }
    CpuFeatures f = cpu_features();
    const char *last = NULL;
    print_new(openblas_core_for(f), &last);
    f.avx512f = f.avx512dq = f.avx512bw = f.avx512vl = f.avx512bf16 = false;
    print_new(openblas_core_for(f), &last);
    f.avx2 = f.fma = false;
    print_new(openblas_core_for(f), &last);
    print_new("Prescott", &last);
    return 0;
}
