/* The elementwise math both devices share, written once: e^x as a polynomial of our own,
 * and GPT-2's tanh-approximated GELU from it, with its derivative. The CPU's loops
 * (fastmath.h) and the GPU's kernels (cuda/kernels_cuda.cu) call these same functions, so
 * the two devices compute the same formula step for step. Every multiply followed by an
 * add is written as one mul_add, rounded once, so no compiler is left a multiply and an add
 * to fuse or not as it likes (nvcc fuses them by default, gcc in C11 mode does not); the
 * one left, e^x's last multiply before a caller adds 1, is by a power of two and exact,
 * which fusing cannot change. So the same bits on either device. */
#ifndef DTC_SCALAR_MATH_H
#define DTC_SCALAR_MATH_H

#include <stdint.h>

#ifdef __CUDACC__
#define SCALAR_FN static inline __host__ __device__
#else
#define SCALAR_FN static inline
#endif

/* a * b + c, rounded once (a fused multiply-add: one instruction on any CPU with FMA and on
 * every GPU, and as exact everywhere else). */
SCALAR_FN float mul_add(float a, float b, float c)
{
#ifdef __CUDA_ARCH__
    return fmaf(a, b, c);
#else
    return __builtin_fmaf(a, b, c); /* inlined and vectorised by gcc */
#endif
}

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
    float k = floorf(mul_add(x, log2e, 0.5f));
#else
    float k = __builtin_floorf(mul_add(x, log2e, 0.5f)); /* inlined and vectorised by gcc */
#endif
    float r = mul_add(-k, ln2_lo, mul_add(-k, ln2_hi, x));
    float p = 1.0f / 5040.0f;
    p = mul_add(p, r, 1.0f / 720.0f);
    p = mul_add(p, r, 1.0f / 120.0f);
    p = mul_add(p, r, 1.0f / 24.0f);
    p = mul_add(p, r, 1.0f / 6.0f);
    p = mul_add(p, r, 0.5f);
    p = mul_add(p, r, 1.0f);
    p = mul_add(p, r, 1.0f);
    return p * two_to_the((int32_t)k);
}

/* GELU with the tanh approximation, as in GPT-2: gelu(x) = x (1 + tanh(u)) / 2 with
 * u = sqrt(2/pi) (x + 0.044715 x^3). (1 + tanh(u)) / 2 is the sigmoid of 2u, computed here as
 * 1 / (1 + e^(-2u)): where tanh(u) is close to -1, 1 + tanh(u) would cancel. */
SCALAR_FN float gelu_u(float x)
{
    const float sqrt_2_over_pi = 0.7978845608f;
    return sqrt_2_over_pi * mul_add(0.044715f * x * x, x, x);
}

SCALAR_FN float gelu_tanh_value(float x)
{
    return x / (1.0f + exp_poly(-2.0f * gelu_u(x)));
}

/* d gelu(x) / dx = s + 2 x s (1 - s) du/dx, s the sigmoid of 2u; with e = e^(-2u),
 * s (1 - s) = e s^2, which keeps its accuracy where s is close to 1. */
SCALAR_FN float gelu_tanh_slope(float x)
{
    const float sqrt_2_over_pi = 0.7978845608f;
    float e = exp_poly(-2.0f * gelu_u(x));
    float s = 1.0f / (1.0f + e);
    float du_dx = sqrt_2_over_pi * mul_add(3.0f * 0.044715f * x, x, 1.0f);
    float es = e * s; /* before the second s: e alone may be near FLT_MAX */
    return mul_add(2.0f * x * es * s, du_dx, s);
}

#endif
