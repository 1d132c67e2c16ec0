/* Sums and averages of 16-bit floats (bf16 or fp16) as a GPU's 16-bit reduction makes them:
 * each addition done in float and rounded to the format at once, each average its 16-bit
 * sum times 1/ranks rounded again. MPI has neither format: the MPI backend (comm_mpi.c)
 * makes its reduction operations from these, and so does the emulated GPU's NCCL
 * (tests/emu/emu_nccl.c), so that both round exactly alike. */
#ifndef DTC_SUM16_H
#define DTC_SUM16_H

#include <mpi.h>
#include <stddef.h>

#include "float16.h"

/* sum[i] = sum[i] + addend[i], rounded to the format. */
void sum16_add(Format16 format, const bits16 *addend, bits16 *sum, size_t count);

/* values[i] = values[i] * factor, rounded to the format again (exact when factor is a power
 * of two and the product is finite). */
void sum16_scale(Format16 format, bits16 *values, size_t count, float factor);

/* The additions as MPI reduction operations (MPI_User_function), one per format: for
 * MPI_Op_create, on elements sent as MPI_UINT16_T. */
void sum16_mpi_bf16(void *in, void *inout, int *count, MPI_Datatype *type);
void sum16_mpi_fp16(void *in, void *inout, int *count, MPI_Datatype *type);

#endif
