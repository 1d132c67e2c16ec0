/* Where the model runs: the Kernels table that --device names, made ready (on a GPU: the
 * GPU chosen by local rank, TF32 or not, and the NCCL communicator when --comm asks). */
#ifndef DTC_DEVICE_H
#define DTC_DEVICE_H

#include <stddef.h>

#include "comm.h"
#include "device_choice.h"
#include "kernels.h"

/* Collective over comm's ranks: every rank gets the table, or every rank gets NULL with a
 * one-line reason. Calling it again (a batch sweep) reuses what the first call set up. On the
 * CPU the matrix products then run on `threads` threads (OpenBLAS's; 0 leaves them as they are). */
const Kernels *device_open(const char *device, const char *comm_backend, int tf32, int threads, Comm *comm,
                           char *err, size_t err_len);

/* What the device reports about itself for a run's header: "cpu" or the GPU's label. */
const char *device_label(const Kernels *kernels);

/* The device's own account of its memory (cudaMemGetInfo on a GPU): 0 with used and total
 * in bytes, or -1 where there is none (the CPU, whose account is the tracking allocator). */
int device_memory_info(const Kernels *kernels, size_t *used_bytes, size_t *total_bytes);

/* How many allocations the device itself refused (a GPU out of memory), as opposed to
 * --mem-limit refusals (mem_limit_refusals). Always 0 on the CPU. */
size_t device_alloc_failures(const Kernels *kernels);

/* 1 when kernels is the GPU's table. */
int device_on_gpu(const Kernels *kernels);

/* 1 when the run is on GPUs and each rank has one of its own (the same answer on every
 * rank); 0 on the CPU and where ranks share a GPU. */
int device_gpu_per_rank(const Kernels *kernels);

/* The number format the matrix products run in: the yardstick of MFU is its peak. */
typedef enum { PRODUCTS_FP32, PRODUCTS_TF32, PRODUCTS_BF16, PRODUCTS_FP16 } ProductFormat;

/* "fp32", "TF32 tensor-core", "bf16 tensor-core" or "fp16 tensor-core". */
const char *product_format_name(ProductFormat format);

/* The device's peak dense FLOP/s in that format, from its data sheet; 0 when unknown (every
 * CPU; GPUs not in the table). */
double device_peak_flops(const Kernels *kernels, ProductFormat format);

#endif
