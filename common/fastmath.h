/* Small numeric building blocks for the CPU kernels, written so that gcc vectorises them
 * without -ffast-math: reductions keep LANES partial sums in a fixed order (so a result
 * does not depend on the vector width of the machine), and exp is a polynomial of our own
 * (libm's expf and tanhf are scalar calls and dominated the GELU and softmax layers). */
#ifndef DTC_FASTMATH_H
#define DTC_FASTMATH_H

#include <stdint.h>
#include <stddef.h>

#include "scalar_math.h"

/* Sixteen partial sums: one AVX-512 register, or two AVX2 ones. Element i goes into lane
 * i % LANES, in order: each reduction below runs over whole groups of LANES, then over the
 * last few with lane j taking element i + j (the same lanes, written so that gcc keeps them
 * in registers). With sixteen, a row of 128 adds up in chains of 8 rather than 16: on a row
 * that short the adder's latency along the chain, not the adding, is most of the cost. */
enum { LANES = 16 };

/* The partial sums added in halves: lane j and lane j + LANES/2, then the same again over
 * the first half, down to one. (Unrolled: as a loop gcc leaves it in memory, and a short
 * row pays for it.) */
static inline float reduce_lanes(const float acc[LANES])
{
    float part[LANES]; /* a copy: added up in acc itself, the lanes go through memory */
    for (int j = 0; j < LANES; j++)
        part[j] = acc[j];
#pragma GCC unroll 8
    for (int half = LANES / 2; half > 0; half /= 2)
#pragma GCC unroll 16
        for (int j = 0; j < half; j++)
            part[j] += part[j + half];
    return part[0];
}

/* The sum of x[i]^2 in double, in the lanes of sum_floats. */
static inline double sum_squares_double(const float *x, size_t n)
{
    double acc[LANES] = {0};
    size_t i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int j = 0; j < LANES; j++)
            acc[j] += (double)x[i + j] * x[i + j];
    for (size_t j = 0; i + j < n; j++)
        acc[j] += (double)x[i + j] * x[i + j];
    for (int half = LANES / 2; half > 0; half /= 2) /* as reduce_lanes */
        for (int j = 0; j < half; j++)
            acc[j] += acc[j + half];
    return acc[0];
}

static inline float sum_floats(const float *x, int n)
{
    float acc[LANES] = {0};
    int i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int j = 0; j < LANES; j++)
            acc[j] += x[i + j];
    for (int j = 0; i + j < n; j++)
        acc[j] += x[i + j];
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
#pragma GCC unroll 1 /* unrolled, the lanes become 16 scalar maxima gcc cannot vectorise */
        for (int j = 0; j < LANES; j++)
            acc[j] = x[i + j] > acc[j] ? x[i + j] : acc[j];
    for (int j = 0; i + j < n; j++)
        acc[j] = x[i + j] > acc[j] ? x[i + j] : acc[j];
#pragma GCC unroll 8
    for (int half = LANES / 2; half > 0; half /= 2) /* as reduce_lanes */
#pragma GCC unroll 16
        for (int j = 0; j < half; j++)
            acc[j] = acc[j + half] > acc[j] ? acc[j + half] : acc[j];
    return acc[0];
}

static inline float dot_floats(const float *x, const float *y, int n)
{
    float acc[LANES] = {0};
    int i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int j = 0; j < LANES; j++)
            acc[j] += x[i + j] * y[i + j];
    for (int j = 0; i + j < n; j++)
        acc[j] += x[i + j] * y[i + j];
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
    for (int j = 0; i + j < n; j++) {
        float d = x[i + j] - mean;
        acc[j] += d * d;
    }
    return reduce_lanes(acc);
}

/* out[i] = e^(in[i] - shift) (in and out may alias), and their sum in the lanes of
 * sum_floats, in one pass over the row. */
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
    for (int j = 0; i + j < n; j++) {
        float e = exp_poly(in[i + j] - shift);
        out[i + j] = e;
        acc[j] += e;
    }
    return reduce_lanes(acc);
}

/* GELU with the tanh approximation, as in GPT-2 (scalar_math.h): out[i] = gelu(x[i]), and
 * x[i] replaced by the slope there, all that backward needs of x. The value and the slope
 * share e^(-2u), computed once (gcc sees the same call twice); unfused, backward would read x
 * and compute the slope, e^(-2u) again with it. */
static inline void gelu_tanh_and_slope(float *restrict out, float *restrict x, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        float xi = x[i];
        out[i] = gelu_tanh_value(xi);
        x[i] = gelu_tanh_slope(xi);
    }
}

#endif
