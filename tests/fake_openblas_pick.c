/* Stands in for OpenBLAS's report of the kernels it loaded, as on a CPU too new for it: it
 * says "Prescott" (its SSE3 fallback) unless OPENBLAS_CORETYPE named kernels when the
 * program started, as OpenBLAS itself would. Preloaded (LD_PRELOAD) by the tests of the
 * restart in common/blas_kernels.c, which no CPU here would otherwise take. */
#include <stdio.h>
#include <stdlib.h>

static char loaded_core[64];

__attribute__((constructor)) static void read_coretype_at_load(void)
{
    const char *told = getenv("OPENBLAS_CORETYPE");
    snprintf(loaded_core, sizeof loaded_core, "%s", told != NULL ? told : "Prescott");
}

char *openblas_get_corename(void) { return loaded_core; }
