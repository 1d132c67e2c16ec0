/* Which matrix-product kernels a CPU run uses, and why.
 *
 * OpenBLAS carries kernels for many generations of x86-64 and picks one when the program
 * loads it, from the CPU's model number. A CPU newer than the library has a model number it
 * does not know, and gets its oldest vector kernels (SSE3, "Prescott"): about three times
 * slower than the AVX-512 kernels the same core can run. What a CPU's vector units can do is
 * written in its feature flags, which no new model number changes. So every program here
 * checks OpenBLAS's pick against the feature flags before main() runs, and when the pick
 * uses narrower vectors than the CPU has, starts itself again with the kernels named in
 * OPENBLAS_CORETYPE, which OpenBLAS reads when it loads (blas_kernels.c says how). An
 * OPENBLAS_CORETYPE the user set is always respected. */
#ifndef DTC_BLAS_KERNELS_H
#define DTC_BLAS_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* The CPU features that decide which kernels can run: each true only when the operating
 * system also saves the registers they use. */
typedef struct {
    bool avx, fma, avx2;
    bool avx512f, avx512dq, avx512bw, avx512vl; /* the AVX-512 subsets OpenBLAS's kernels use */
    bool avx512bf16;
} CpuFeatures;

CpuFeatures cpu_features(void);

/* The OpenBLAS kernel set (its core type name) for a CPU with these features, or NULL when
 * the CPU has no AVX: OpenBLAS's own choice is then as good as any. */
const char *openblas_core_for(CpuFeatures features);

/* The widest vector instructions an OpenBLAS core type's kernels use: "AVX-512", "AVX2",
 * "AVX" or "SSE"; NULL for a name this table does not know. */
const char *openblas_core_vectors(const char *core);

/* The kernels to ask OpenBLAS for, given what it picked by itself: NULL to keep its pick,
 * which happens unless the features allow wider vectors than the pick uses. A finer pick
 * of the same width (Zen for Haswell, Cooperlake for SkylakeX) is kept, and so is a name
 * the table does not know (an OpenBLAS newer than the table). */
const char *openblas_core_to_request(CpuFeatures features, const char *picked_core);

/* Where the kernels in use came from. */
typedef enum {
    BLAS_KERNELS_LIBRARY,     /* OpenBLAS's own pick, which the CPU's features agree with */
    BLAS_KERNELS_FEATURES,    /* chosen from the CPU's features over OpenBLAS's own pick */
    BLAS_KERNELS_ENVIRONMENT, /* the user's OPENBLAS_CORETYPE */
} BlasKernelsSource;

BlasKernelsSource blas_kernels_source(void);

/* The kernels in use, for run headers: e.g. "OpenBLAS SkylakeX kernels (AVX-512), chosen
 * from the CPU's features; OpenBLAS's own pick, Prescott, uses SSE". */
void blas_kernels_describe(char *out, size_t size);

/* The run header's line: "matrix products: " and the description above. */
void blas_kernels_print(FILE *out);

/* The core type OpenBLAS loaded, e.g. "SkylakeX". */
const char *blas_core_name(void);

/* Sets OpenBLAS's thread count (one busy thread per core is fastest). */
void blas_set_threads(int threads);

#endif
