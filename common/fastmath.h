/* Small numeric building blocks for the CPU kernels, written so that gcc vectorises them
 * without -ffast-math: reductions keep eight partial sums in a fixed order (so a result
 * does not depend on the vector width of the machine), and exp is a polynomial of our own
 * (libm's expf and tanhf are scalar calls and dominated the GELU and softmax layers). */
#ifndef DTC_FASTMATH_H
#define DTC_FASTMATH_H

#include <stdint.h>
#include <stddef.h>

enum { LANES = 8 };

static inline float reduce_lanes(const float acc[LANES])
{
    return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

static inline float sum_floats(const float *x, int n)
{
    float acc[LANES] = {0};
    int i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int j = 0; j < LANES; j++)
            acc[j] += x[i + j];
    for (; i < n; i++)
        acc[i % LANES] += x[i];
    return reduce_lanes(acc);
}

static inline float dot_floats(const float *x, const float *y, int n)
{
    float acc[LANES] = {0};
    int i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int j = 0; j < LANES; j++)
            acc[j] += x[i + j] * y[i + j];
    for (; i < n; i++)
        acc[i % LANES] += x[i] * y[i];
    return reduce_lanes(acc);
}

static inline float sum_squared_deviations(const float *x, float mean, int n)
{
    float acc[LANES] = {0};
    int i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int j = 0; j < LANES; j++) {
            float d = x[i + j] - mean;
            acc[j] += d * d;
        }
    for (; i < n; i++) {
        float d = x[i] - mean;
        acc[i % LANES] += d * d;
    }
    return reduce_lanes(acc);
}

/* e^x for x in float range, within about 2 ulp: x = k ln2 + r with |r| <= ln2/2, e^r by a
 * degree-7 Taylor polynomial (truncation < 1e-8 relative), 2^k put into the exponent bits.
 * Inputs below -87 are clamped (the result is then ~1e-38 instead of a denormal). */
static inline float exp_poly(float x)
{
    const float log2e = 1.44269504f, ln2_hi = 0.693145752f, ln2_lo = 1.42860677e-6f;
    x = x < -87.0f ? -87.0f : x;
    x = x > 88.0f ? 88.0f : x;
    float k = __builtin_floorf(x * log2e + 0.5f);
    float r = (x - k * ln2_hi) - k * ln2_lo;
    float p = 1.0f / 5040.0f;
    p = p * r + 1.0f / 720.0f;
    p = p * r + 1.0f / 120.0f;
    p = p * r + 1.0f / 24.0f;
    p = p * r + 1.0f / 6.0f;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    union { int32_t bits; float value; } two_k = {.bits = ((int32_t)k + 127) << 23};
    return p * two_k.value;
}

/* out[i] = e^(in[i] - shift); in and out may alias. */
static inline void exp_shifted(float *out, const float *in, float shift, int n)
{
    for (int i = 0; i < n; i++)
        out[i] = exp_poly(in[i] - shift);
}

/* tanh(u) = 1 - 2 / (e^(2u) + 1): exact limits of +-1 and no overflow thanks to the clamp. */
static inline float tanh_poly(float u)
{
    return 1.0f - 2.0f / (exp_poly(2.0f * u) + 1.0f);
}

/* GELU with the tanh approximation, as in GPT-2. */
static inline void gelu_tanh(float *out, const float *inp, size_t n)
{
    const float sqrt_2_over_pi = 0.7978845608f;
    for (size_t i = 0; i < n; i++) {
        float x = inp[i];
        float u = sqrt_2_over_pi * (x + 0.044715f * x * x * x);
        out[i] = 0.5f * x * (1.0f + tanh_poly(u));
    }
}

static inline void gelu_tanh_backward(float *dinout, const float *inp, size_t n)
{
    const float sqrt_2_over_pi = 0.7978845608f;
    for (size_t i = 0; i < n; i++) {
        float x = inp[i];
        float u = sqrt_2_over_pi * (x + 0.044715f * x * x * x);
        float th = tanh_poly(u);
        float du_dx = sqrt_2_over_pi * (1.0f + 3.0f * 0.044715f * x * x);
        float local = 0.5f * (1.0f + th) + 0.5f * x * (1.0f - th * th) * du_dx;
        dinout[i] *= local;
    }
}

#endif
