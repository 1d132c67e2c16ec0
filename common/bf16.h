/* bfloat16: the top 16 bits of a float (sign, the same 8 exponent bits, 7 of the 23
 * mantissa bits). It covers float's whole range at 2^-8 relative precision, which is why
 * mixed-precision training keeps parameters and gradients in it for compute and
 * communication while the optimizer keeps an fp32 master copy. Neither C11 nor CBLAS has
 * the type, so it travels as its bits; both devices convert with these same functions. */
#ifndef DTC_BF16_H
#define DTC_BF16_H

#include <stdint.h>

#include "scalar_math.h"

typedef uint16_t bf16;

SCALAR_FN uint32_t float_bits(float value)
{
    union { float value; uint32_t bits; } view;
    view.value = value;
    return view.bits;
}

/* The float a bf16 stands for, exactly. */
SCALAR_FN float bf16_to_float(bf16 value)
{
    union { uint32_t bits; float value; } view;
    view.bits = (uint32_t)value << 16;
    return view.value;
}

/* The nearest bf16, ties to even, as hardware converts. A NaN stays a NaN (its top mantissa
 * bit is set, so dropping the low bits cannot turn it into infinity); a float past the
 * largest bf16 rounds to infinity, as IEEE rounding does. */
SCALAR_FN bf16 float_to_bf16(float value)
{
    uint32_t bits = float_bits(value);
    if ((bits & 0x7fffffffu) > 0x7f800000u)
        return (bf16)((bits >> 16) | 0x0040u);
    uint32_t lowest_kept = (bits >> 16) & 1u;
    return (bf16)((bits + 0x7fffu + lowest_kept) >> 16);
}

#endif
