/* Small numeric building blocks for the CPU kernels, written so that gcc vectorises them
 * without -ffast-math: reductions keep eight partial sums in a fixed order (so a result
 * does not depend on the vector width of the machine), and exp is a polynomial of our own
 * (libm's expf and tanhf are scalar calls and dominated the GELU and softmax layers). */
#ifndef DTC_FASTMATH_H
#define DTC_FASTMATH_H

#include <stdint.h>
#include <stddef.h>

#include "scalar_math.h"

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

/* The largest of x[0..n), n >= 1, as the loop `m = x[j] > m ? x[j] : m` from m = x[0] finds
 * it (a NaN is passed over unless it is x[0]), in lanes the compiler vectorises: each lane
 * starts at x[0] and keeps the same rule, and a maximum is the same whatever order it is
 * taken in (but for the sign of a zero, which no x - max can tell). */
static inline float max_floats(const float *x, int n)
{
    float acc[LANES];
    for (int j = 0; j < LANES; j++)
        acc[j] = x[0];
    int i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int j = 0; j < LANES; j++)
            acc[j] = x[i + j] > acc[j] ? x[i + j] : acc[j];
    for (; i < n; i++)
        acc[i % LANES] = x[i] > acc[i % LANES] ? x[i] : acc[i % LANES];
    float max = acc[0];
    for (int j = 1; j < LANES; j++)
        max = acc[j] > max ? acc[j] : max;
    return max;
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

/* out[i] = e^(in[i] - shift) (in and out may alias), and their sum as sum_floats adds them
 * (element i into lane i % LANES, in order), in one pass over the row. */
static inline float exp_shifted_sum(float *out, const float *in, float shift, int n)
{
    float acc[LANES] = {0};
    int i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int j = 0; j < LANES; j++) {
            float e = exp_poly(in[i + j] - shift);
            out[i + j] = e;
            acc[j] += e;
        }
    for (; i < n; i++) {
        float e = exp_poly(in[i] - shift);
        out[i] = e;
        acc[i % LANES] += e;
    }
    return reduce_lanes(acc);
}

/* tanh(u) = 1 - 2 / (e^(2u) + 1): exact limits of +-1 and no overflow thanks to the clamp. */
/* GELU with the tanh approximation, as in GPT-2 (scalar_math.h). */
static inline void gelu_tanh(float *out, const float *inp, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] = gelu_tanh_value(inp[i]);
}

static inline void gelu_tanh_backward(float *dinout, const float *inp, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dinout[i] *= gelu_tanh_slope(inp[i]);
}

#endif
