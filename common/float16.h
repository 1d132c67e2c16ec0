/* The two 16-bit float formats mixed precision computes and communicates in, behind one
 * interface: bf16 (bf16.h: float's range, 8 significant bits) and fp16 (fp16.h: 11
 * significant bits, a range that needs loss scaling). Buffers hold either as bits; the
 * format travels beside them, as cuBLAS's and NCCL's data types do. */
#ifndef DTC_FLOAT16_H
#define DTC_FLOAT16_H

#include <stdint.h>

#include "fp16.h"

typedef enum { FORMAT_BF16, FORMAT_FP16 } Format16;

/* A bf16 or an fp16, as its bits. */
typedef uint16_t bits16;

/* The float a 16-bit value stands for, exactly. */
SCALAR_FN float float16_to_float(Format16 format, bits16 value)
{
    return format == FORMAT_FP16 ? fp16_to_float(value) : bf16_to_float(value);
}

/* The nearest value of the format, ties to even. */
SCALAR_FN bits16 float_to_float16(Format16 format, float value)
{
    return format == FORMAT_FP16 ? float_to_fp16(value) : float_to_bf16(value);
}

/* A sum as a 16-bit reduction makes it: added as floats, rounded to the format. */
SCALAR_FN bits16 float16_add(Format16 format, bits16 a, bits16 b)
{
    return float_to_float16(format, float16_to_float(format, a) + float16_to_float(format, b));
}

static inline const char *format16_name(Format16 format)
{
    return format == FORMAT_FP16 ? "fp16" : "bf16";
}

#endif
