#include "cpu_peak.h"

#include <immintrin.h>

#include "blas_kernels.h"
#include "timer.h"

/* A core issues up to two FMAs per cycle, each waiting about four cycles for its input: at
 * least eight chains must be in flight to keep both units busy. Sixteen (AVX-512, of 32
 * registers) and twelve (AVX2, of 16) leave room. The multiplier and addend keep every
 * value finite and normal, so no operation takes a slow path. */
#define CHAINS_512 16
#define CHAINS_256 12

__attribute__((target("avx512f"))) static float fma_chains_512(long iters)
{
    __m512 acc[CHAINS_512];
    const __m512 mul = _mm512_set1_ps(0.999999f), add = _mm512_set1_ps(1e-6f);
    for (int c = 0; c < CHAINS_512; c++)
        acc[c] = _mm512_set1_ps((float)c);
    for (long i = 0; i < iters; i++)
        for (int c = 0; c < CHAINS_512; c++)
            acc[c] = _mm512_fmadd_ps(acc[c], mul, add);
    for (int c = 1; c < CHAINS_512; c++)
        acc[0] = _mm512_add_ps(acc[0], acc[c]);
    return _mm512_reduce_add_ps(acc[0]);
}

__attribute__((target("avx2,fma"))) static float fma_chains_256(long iters)
{
    __m256 acc[CHAINS_256];
    const __m256 mul = _mm256_set1_ps(0.999999f), add = _mm256_set1_ps(1e-6f);
    for (int c = 0; c < CHAINS_256; c++)
        acc[c] = _mm256_set1_ps((float)c);
    for (long i = 0; i < iters; i++)
        for (int c = 0; c < CHAINS_256; c++)
            acc[c] = _mm256_fmadd_ps(acc[c], mul, add);
    float lanes[8];
    for (int c = 1; c < CHAINS_256; c++)
        acc[0] = _mm256_add_ps(acc[0], acc[c]);
    _mm256_storeu_ps(lanes, acc[0]);
    return lanes[0] + lanes[1] + lanes[2] + lanes[3] + lanes[4] + lanes[5] + lanes[6] + lanes[7];
}

/* The best of five timed runs of about 20 ms each, after one to wake the core's vector
 * units (some cores run wide instructions slowly for their first microseconds). */
static double best_rate(float (*chains)(long), double flops_per_iter)
{
    const long iters = 1L << 19;
    volatile float sink = chains(iters / 8);
    double best = 0;
    for (int run = 0; run < 5; run++) {
        double start = now_seconds();
        sink = chains(iters);
        double rate = flops_per_iter * (double)iters / (now_seconds() - start);
        best = rate > best ? rate : best;
    }
    (void)sink;
    return best;
}

CpuPeak cpu_fma_peak(void)
{
    CpuFeatures f = cpu_features();
    CpuPeak peak = {0, NULL};
    if (f.avx2 && f.fma)
        peak = (CpuPeak){best_rate(fma_chains_256, 2.0 * 8 * CHAINS_256), "AVX2"};
    if (f.avx512f) {
        double rate = best_rate(fma_chains_512, 2.0 * 16 * CHAINS_512);
        if (rate > peak.flops_per_s)
            peak = (CpuPeak){rate, "AVX-512"};
    }
    return peak;
}
