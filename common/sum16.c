#include "sum16.h"

void sum16_add(Format16 format, const bits16 *addend, bits16 *sum, size_t count)
{
    for (size_t i = 0; i < count; i++)
        sum[i] = float16_add(format, sum[i], addend[i]);
}

void sum16_scale(Format16 format, bits16 *values, size_t count, float factor)
{
    for (size_t i = 0; i < count; i++)
        values[i] = float_to_float16(format, float16_to_float(format, values[i]) * factor);
}

void sum16_mpi_bf16(void *in, void *inout, int *count, MPI_Datatype *type)
{
    (void)type;
    sum16_add(FORMAT_BF16, in, inout, (size_t)*count);
}

void sum16_mpi_fp16(void *in, void *inout, int *count, MPI_Datatype *type)
{
    (void)type;
    sum16_add(FORMAT_FP16, in, inout, (size_t)*count);
}
