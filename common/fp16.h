/* fp16, IEEE 754 half precision: a sign, 5 exponent bits and 10 mantissa bits, so 11
 * significant bits (2^-11 relative precision, 8 times bf16's) over a narrow range: the
 * largest finite value is 65504, the smallest normal 2^-14, and below it subnormals reach
 * down to 2^-24. Gradients smaller than that vanish and sums above 65504 overflow to
 * infinity, which is why fp16 training scales the loss (docs/10_mixed_precision.md). Like
 * bf16 it travels as its bits; both devices convert with these functions. */
#ifndef DTC_FP16_H
#define DTC_FP16_H

#include <stdint.h>

#include "bf16.h"

typedef uint16_t fp16;

/* The float an fp16 stands for, exactly (every fp16, subnormals included, is a float). */
SCALAR_FN float fp16_to_float(fp16 value)
{
    uint32_t sign = (uint32_t)(value & 0x8000u) << 16, exponent = (value >> 10) & 0x1fu, mantissa = value & 0x3ffu;
    if (exponent == 0) { /* zero or subnormal: mantissa x 2^-24, exact in a float */
        float magnitude = (float)mantissa * two_to_the(-24);
        return sign ? -magnitude : magnitude;
    }
    union { uint32_t bits; float value; } view;
    view.bits = exponent == 0x1fu ? sign | 0x7f800000u | mantissa << 13 /* infinity or NaN */
                                  : sign | (exponent + 112u) << 23 | mantissa << 13;
    return view.value;
}

/* kept, plus one when the dropped bits are over half of its last place, or exactly half
 * and kept is odd: round to nearest, ties to even. */
SCALAR_FN uint32_t round_dropped(uint32_t kept, uint32_t dropped, uint32_t half)
{
    return kept + (dropped > half || (dropped == half && (kept & 1u)));
}

/* The nearest fp16, ties to even, as hardware converts: from 65520 up (halfway past 65504,
 * whose last bit is odd) infinity, below 2^-14 a subnormal, at or below 2^-25 zero; the
 * sign is kept, a NaN stays a NaN. */
SCALAR_FN fp16 float_to_fp16(float value)
{
    uint32_t bits = float_bits(value), magnitude = bits & 0x7fffffffu;
    fp16 sign = (fp16)((bits >> 16) & 0x8000u);
    if (magnitude > 0x7f800000u)
        return (fp16)(sign | 0x7e00u | ((magnitude >> 13) & 0x3ffu));
    if (magnitude >= 0x477ff000u) /* 65520 */
        return (fp16)(sign | 0x7c00u);
    if (magnitude >= 0x38800000u) { /* 2^-14: normal, the exponent rebiased from 127 to 15 */
        uint32_t rebiased = magnitude - 0x38000000u;
        return (fp16)(sign | round_dropped(rebiased >> 13, rebiased & 0x1fffu, 0x1000u));
    }
    if (magnitude <= 0x33000000u) /* 2^-25, halfway to the smallest subnormal: ties to 0 */
        return sign;
    /* subnormal: the significand in units of 2^-24 */
    uint32_t significand = (magnitude & 0x7fffffu) | 0x800000u, shift = 126u - (magnitude >> 23);
    return (fp16)(sign | round_dropped(significand >> shift, significand & ((1u << shift) - 1u), 1u << (shift - 1u)));
}

#endif
