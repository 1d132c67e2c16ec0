/* fp16 conversion (fp16.h and the CPU kernels) against the compiler's own: GCC converts
 * between float and _Float16 by IEEE 754's rules (round to nearest, ties to even;
 * subnormals; infinity from halfway past the largest finite value), in code that shares
 * nothing with fp16.h's bit tricks. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernels.h"

static float from_bits(uint32_t bits)
{
    float value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

static fp16 compilers_fp16(float x)
{
    _Float16 half = (_Float16)x;
    fp16 bits;
    memcpy(&bits, &half, sizeof bits);
    return bits;
}

static float compilers_float(fp16 bits)
{
    _Float16 half;
    memcpy(&half, &bits, sizeof half);
    return (float)half;
}

Test(fp16, every_fp16_widens_as_the_compiler_widens_it_and_comes_back)
{
    for (uint32_t b = 0; b <= 0xffffu; b++) {
        float mine = fp16_to_float((fp16)b), compilers = compilers_float((fp16)b);
        if (isnan(compilers)) {
            cr_assert(isnan(mine), "fp16 %04x is a NaN, widened to %a", b, (double)mine);
            continue;
        }
        cr_assert_eq(float_bits(mine), float_bits(compilers), "fp16 %04x: %a, the compiler says %a", b,
                     (double)mine, (double)compilers);
        cr_assert_eq(float_to_fp16(mine), (fp16)b, "fp16 %04x came back as %04x", b, float_to_fp16(mine));
    }
}

/* Every float whose low 16 bits are one of a spread of patterns: fp16 keeps 13 fewer
 * mantissa bits than a float, so a normal value's tie is 0x1000 below its last kept bit
 * (0x0000 or 0x2000 there: both parities), and a subnormal's lies further up, at 0x2000,
 * 0x4000, 0x8000 or in the high half; the neighbours of each, and some in between; over
 * every sign, exponent and top mantissa (overflow, subnormals, zero, infinity, the NaNs). */
Test(fp16, floats_round_as_the_compiler_rounds_them)
{
    const uint32_t low_bits[] = {0x0000, 0x0001, 0x0fff, 0x1000, 0x1001, 0x1fff, 0x2000, 0x2001, 0x3000,
                                 0x4000, 0x5000, 0x6000, 0x7fff, 0x8000, 0x8001, 0xa000, 0xabcd, 0xffff};
    for (uint32_t high = 0; high <= 0xffffu; high++)
        for (size_t k = 0; k < sizeof low_bits / sizeof low_bits[0]; k++) {
            float x = from_bits(high << 16 | low_bits[k]);
            fp16 mine = float_to_fp16(x), compilers = compilers_fp16(x);
            if (isnan(x))
                cr_assert(isnan(fp16_to_float(mine)), "NaN bits %08x became %04x, not a NaN", float_bits(x), mine);
            else
                cr_assert_eq(mine, compilers, "%a (bits %08x): got fp16 %04x, the compiler's is %04x", (double)x,
                             float_bits(x), mine, compilers);
        }
}

Test(fp16, the_named_cases)
{
    cr_assert_eq(fp16_to_float(float_to_fp16(65504.0f)), 65504.0f, "the largest finite fp16");
    cr_assert_eq(fp16_to_float(float_to_fp16(65519.0f)), 65504.0f, "less than halfway past it");
    cr_assert(isinf(fp16_to_float(float_to_fp16(65520.0f))), "halfway past 65504 (odd last bit): infinity");
    cr_assert_eq(fp16_to_float(float_to_fp16(0x1p-24f)), 0x1p-24f, "the smallest subnormal");
    cr_assert_eq(fp16_to_float(float_to_fp16(0x1p-25f)), 0.0f, "halfway to it: ties to zero, even");
    cr_assert_eq(fp16_to_float(float_to_fp16(0x1.000002p-25f)), 0x1p-24f, "just past halfway: up");
    cr_assert_eq(fp16_to_float(float_to_fp16(1.0f + 0x1p-11f)), 1.0f, "a tie below an even fp16 goes down");
    cr_assert_eq(fp16_to_float(float_to_fp16(1.0f + 0x1p-10f + 0x1p-11f)), 1.0f + 0x1p-9f,
                 "a tie above an odd fp16 goes up");
    cr_assert(signbit(fp16_to_float(float_to_fp16(-0.0f))), "-0 keeps its sign");
    cr_assert(isnan(fp16_to_float(float_to_fp16(from_bits(0x7f800001u)))), "a NaN with only its lowest bit set");
}

Test(fp16, the_cpu_kernels_round_and_widen_whole_arrays)
{
    enum { N = 1000 };
    float values[N], back[N];
    bits16 rounded[N];
    for (int i = 0; i < N; i++) /* from 2^-30 (below the subnormals) to about 2^19 (past 65504), both signs */
        values[i] = (i % 2 ? -1.0f : 1.0f) * ldexpf(1.0f + (float)i / N, -30 + i * 49 / N);
    cpu_kernels.round_to_16(FORMAT_FP16, rounded, values, N);
    cpu_kernels.widen_16(FORMAT_FP16, back, rounded, N);
    for (int i = 0; i < N; i++) {
        cr_assert_eq(rounded[i], compilers_fp16(values[i]), "element %d (%a)", i, (double)values[i]);
        cr_assert_eq(float_bits(back[i]), float_bits(compilers_float(rounded[i])), "element %d", i);
    }
}
