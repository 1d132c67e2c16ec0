/* The emulated GPU's internals, shared by its C files (emu_runtime.c: memory, streams,
 * events, the device; emu_cublas.c; emu_nccl.c) and, through include/cuda_runtime.h, by
 * the kernels compiled for it.
 *
 * The emulation stands in for the CUDA runtime, cuBLAS and NCCL so that the CUDA build's
 * own code (common/cuda/, the lessons, tests/gpu/) runs on a machine without a GPU. It
 * checks the host side's logic, not a GPU:
 *  - device memory can be touched only while emulated device work runs (a kernel, a copy,
 *    a GEMM, a collective); host code that reads or writes it directly faults, and so does
 *    device work that runs past the end of an allocation (each ends at a guard page);
 *  - a kernel's pointer arguments, a GEMM's operands and a collective's buffers must be
 *    device memory, and a copy's direction must match its pointers;
 *  - work queued on a stream runs as late as CUDA allows: only when something waits for
 *    it (a synchronisation, an event, another stream, cudaFree) or the host enters MPI, so
 *    a missing wait shows up as wrong numbers. */
#ifndef DTC_TESTS_EMU_H
#define DTC_TESTS_EMU_H

#include <cuda_runtime_api.h>
#include <stddef.h>

/* Prints "emu: <message>" and a backtrace, then aborts: the program did something a GPU
 * would not allow (or that the emulation does not cover). */
void emu_fail(const char *format, ...) __attribute__((format(printf, 1, 2), noreturn));

/* 1 when [ptr, ptr + bytes) lies inside one device allocation (or __device__ variable). */
int emu_is_device(const void *ptr, size_t bytes);
/* 1 when ptr points into memory from cudaMallocHost. */
int emu_is_pinned(const void *ptr);

/* Device memory is accessible between emu_device_window(1) and emu_device_window(0);
 * the calls nest. */
void emu_device_window(int open);

/* Queues run(ctx) on stream (NULL: the legacy default stream); run frees ctx. */
void emu_enqueue(cudaStream_t stream, void (*run)(void *), void *ctx);
/* Runs everything queued on every stream. */
void emu_flush_all(void);

/* An environment setting as a number, or fallback when unset. */
double emu_setting(const char *name, double fallback);

#endif
