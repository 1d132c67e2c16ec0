/* Private to common/cuda: the checks every CUDA and cuBLAS call goes through, and the few
 * things the .cu files share (the cuBLAS handle, the compute stream, tracked device memory).
 * Any failure here is a bug or a broken GPU, not bad input, so it ends the process with one
 * line naming the call; the one failure a caller can act on, running out of device memory,
 * never comes through these checks (cuda_alloc_tracked and cuda_borrow return NULL). */
#ifndef DTC_CUDA_CHECK_H
#define DTC_CUDA_CHECK_H

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

/* The project's C headers carry no extern "C" of their own: included here first (every .cu
 * includes this header before any other of ours), their functions keep their C names and
 * link against the C objects. */
extern "C" {
#include "alloc.h"
#include "kernels.h"
}

static inline void cuda_check_at(cudaError_t status, const char *call, const char *file, int line)
{
    if (status == cudaSuccess)
        return;
    fprintf(stderr, "cuda: %s failed at %s:%d: %s\n", call, file, line, cudaGetErrorString(status));
    exit(1);
}

static inline void cublas_check_at(cublasStatus_t status, const char *call, const char *file, int line)
{
    if (status == CUBLAS_STATUS_SUCCESS)
        return;
    fprintf(stderr, "cuda: %s failed at %s:%d: %s\n", call, file, line, cublasGetStatusString(status));
    exit(1);
}

#define CUDA_CHECK(call) cuda_check_at((call), #call, __FILE__, __LINE__)
#define CUBLAS_CHECK(call) cublas_check_at((call), #call, __FILE__, __LINE__)
/* A bad launch configuration is only reported by the next runtime call: ask right away so
 * the message names the kernel. */
#define LAUNCH_CHECK(kernel) cuda_check_at(cudaGetLastError(), #kernel " launch", __FILE__, __LINE__)

/* The compute stream and the cuBLAS handle bound to it; both end the process when
 * cuda_device_setup has not run yet (a programming error). */
cudaStream_t cuda_stream_checked(void);
cublasHandle_t cuda_cublas_handle(void);

/* The Kernels table's alloc and free: zero-filled device memory counted by alloc.h under
 * kind; NULL when --mem-limit refuses or cudaMalloc runs out (never aborts for that). */
void *cuda_alloc_tracked(size_t bytes, MemKind kind);
void cuda_free_tracked(void *ptr);

/* Device memory for the length of one operation, from the stream-ordered pool (cheap after
 * the first time: the pool keeps its memory), counted by alloc.h under kind until given
 * back. NULL, never an abort, when --mem-limit refuses or the GPU is full. */
void *cuda_borrow(size_t bytes, MemKind kind);
void cuda_give_back(void *ptr, size_t bytes, MemKind kind);

/* The table's memory operations, all ordered on the compute stream. */
void cuda_zero(void *ptr, size_t bytes);
void cuda_copy(void *dst, const void *src, size_t bytes);
void cuda_to_device(void *dst, const void *host_src, size_t bytes);
void cuda_to_host(void *host_dst, const void *src, size_t bytes);

#endif
