/* The elementwise math both devices share, written once: e^x as a polynomial of our own,
 * tanh from it, and GPT-2's tanh-approximated GELU with its derivative. The CPU's loops
 * (fastmath.h) and the GPU's kernels (cuda/kernels_cuda.cu) call these same functions, so
 * the two devices compute the same formula step for step (a GPU may still fuse a multiply
 * and an add, which moves a result by an ulp or so). */
#ifndef DTC_SCALAR_MATH_H
#define DTC_SCALAR_MATH_H

#include <stdint.h>

#ifdef __CUDACC__
#define SCALAR_FN static inline __host__ __device__
#else
#define SCALAR_FN static inline
#endif

/* 2^k for an integer k in the normal exponent range, from its bits. The shift is unsigned:
 * a NaN input makes k meaningless (the result is NaN either way), never undefined behaviour. */
SCALAR_FN float two_to_the(int32_t k)
{
#ifdef __CUDA_ARCH__
    return __int_as_float((int)((uint32_t)(k + 127) << 23));
#else
    union { uint32_t bits; float value; } two_k;
    two_k.bits = (uint32_t)(k + 127) << 23;
    return two_k.value;
#endif
}

/* e^x for x in float range, within about 2 ulp: x = k ln2 + r with |r| <= ln2/2, e^r by a
 * degree-7 Taylor polynomial (truncation < 1e-8 relative), 2^k put into the exponent bits.
 * Inputs below -87 are clamped (the result is then ~1e-38 instead of a denormal). */
SCALAR_FN float exp_poly(float x)
{
    const float log2e = 1.44269504f, ln2_hi = 0.693145752f, ln2_lo = 1.42860677e-6f;
    x = x < -87.0f ? -87.0f : x;
    x = x > 88.0f ? 88.0f : x;
#ifdef __CUDA_ARCH__
    float k = floorf(x * log2e + 0.5f);
#else
    float k = __builtin_floorf(x * log2e + 0.5f); /* inlined and vectorised by gcc */
#endif
    float r = (x - k * ln2_hi) - k * ln2_lo;
    float p = 1.0f / 5040.0f;
    p = p * r + 1.0f / 720.0f;
    p = p * r + 1.0f / 120.0f;
    p = p * r + 1.0f / 24.0f;
    p = p * r + 1.0f / 6.0f;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    return p * two_to_the((int32_t)k);
}

SCALAR_FN float tanh_poly(float u)
{
    return 1.0f - 2.0f / (exp_poly(2.0f * u) + 1.0f);
}

/* GELU with the tanh approximation, as in GPT-2. */
SCALAR_FN float gelu_tanh_value(float x)
{
    const float sqrt_2_over_pi = 0.7978845608f;
    float u = sqrt_2_over_pi * (x + 0.044715f * x * x * x);
    return 0.5f * x * (1.0f + tanh_poly(u));
}

/* d gelu(x) / dx */
SCALAR_FN float gelu_tanh_slope(float x)
{
    const float sqrt_2_over_pi = 0.7978845608f;
    float u = sqrt_2_over_pi * (x + 0.044715f * x * x * x);
    float th = tanh_poly(u);
    float du_dx = sqrt_2_over_pi * (1.0f + 3.0f * 0.044715f * x * x);
    return 0.5f * (1.0f + th) + 0.5f * x * (1.0f - th * th) * du_dx;
}

#endif
