/* The device side of CUDA for kernels_cuda.cu compiled by g++ against the emulated GPU
 * (tests/emu/nvcc_emu.sh): the qualifiers, thread indices, barriers, warp shuffles and
 * launches that the kernels use. The runtime calls are the emulation's own (emu_runtime.c,
 * built against the real headers); the types here match them in layout. */
#ifndef DTC_EMU_CUDA_RUNTIME_H
#define DTC_EMU_CUDA_RUNTIME_H

#include <functional>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <type_traits>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
/* shared by a block's threads; blocks run one at a time, so one copy serves them all */
#define __shared__ static

struct uint3 {
    unsigned x, y, z;
};
struct dim3 {
    unsigned x, y, z;
    dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};

typedef int cudaError_t;
enum { cudaSuccess = 0 };
typedef struct CUstream_st *cudaStream_t;
enum cudaMemcpyKind {
    cudaMemcpyHostToHost = 0,
    cudaMemcpyHostToDevice = 1,
    cudaMemcpyDeviceToHost = 2,
    cudaMemcpyDeviceToDevice = 3,
    cudaMemcpyDefault = 4
};

extern "C" {
const char *cudaGetErrorString(cudaError_t status);
cudaError_t cudaGetLastError(void);
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind, cudaStream_t stream);
cudaError_t cudaMemsetAsync(void *dst, int value, size_t bytes, cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
/* emu_runtime.c */
void emu_register_symbol(const void *symbol, size_t bytes);
cudaError_t emu_symbol_address(void **address, const void *symbol);
void emu_check_kernel_pointer(const char *kernel, int argument, const void *ptr);
void emu_device_window(int open);
void emu_enqueue(cudaStream_t stream, void (*run)(void *), void *ctx);
void emu_cannot_run_kernel(const char *kernel, const char *why);
}

#define cudaGetSymbolAddress(address, symbol) emu_symbol_address((address), (const void *)(symbol))

/* Declares a __device__ variable to the emulated GPU (rewrite_launches.py adds one after
 * each), so that its address counts as device memory. */
struct EmuSymbol {
    EmuSymbol(const void *symbol, size_t bytes) { emu_register_symbol(symbol, bytes); }
};

/* ---------------------------------------------------------------- threads (emu_grid.cpp)
 * A block's threads are fibers on the launching thread: each runs until it reaches a
 * barrier (__syncthreads, or its warp's exchange in a shuffle or ballot), then the next. */
extern uint3 threadIdx, blockIdx;
extern dim3 blockDim, gridDim;

void __syncthreads();
int __syncthreads_or(int predicate);
unsigned emu_warp_exchange(unsigned bits, int lane_mask, bool ballot);
void emu_run_grid(const char *kernel, dim3 grid, dim3 block, void (*body)(void *), void *ctx);

inline float __shfl_xor_sync(unsigned mask, float value, int lane_mask)
{
    (void)mask;
    unsigned bits;
    memcpy(&bits, &value, sizeof bits);
    bits = emu_warp_exchange(bits, lane_mask, false);
    memcpy(&value, &bits, sizeof value);
    return value;
}

/* only floats are shuffled today; another type must get its own overload, not a conversion */
template <typename T> T __shfl_xor_sync(unsigned mask, T value, int lane_mask) = delete;

inline unsigned __ballot_sync(unsigned mask, int predicate)
{
    (void)mask;
    return emu_warp_exchange(predicate != 0, 0, true);
}

inline int __ffs(int x) { return __builtin_ffs(x); }

inline float __int_as_float(int bits)
{
    float value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

/* ---------------------------------------------------------------- launches */

template <typename A> void emu_check_argument(const char *kernel, int index, A argument)
{
    if constexpr (std::is_pointer_v<A>)
        emu_check_kernel_pointer(kernel, index, (const void *)argument);
}

struct EmuLaunch {
    const char *kernel;
    dim3 grid, block;
    std::function<void()> body;
};

/* A launch the emulation cannot run, as rewrite_launches.py writes it: the test that reaches
 * it is skipped, saying why (emu_runtime.c); the kernel is tested on real GPUs only. */
template <typename... A> void emu_cannot_run(const char *kernel, const char *why, A...)
{
    emu_cannot_run_kernel(kernel, why);
}

/* kernel<<<grid, block, 0, stream>>>(args...), as rewrite_launches.py writes it: the
 * arguments are checked and copied now, and the grid runs when the stream gets to it. */
template <typename... P, typename... A>
void emu_launch(const char *name, dim3 grid, dim3 block, cudaStream_t stream, void (*kernel)(P...), A... args)
{
    int index = 0;
    (emu_check_argument(name, index++, (P)args), ...);
    EmuLaunch *launch = new EmuLaunch{name, grid, block, [=]() { kernel(((P)args)...); }};
    emu_enqueue(stream, [](void *ctx) {
        EmuLaunch *queued = (EmuLaunch *)ctx;
        emu_device_window(1);
        emu_run_grid(queued->kernel, queued->grid, queued->block,
                     [](void *body) { (*(std::function<void()> *)body)(); }, &queued->body);
        emu_device_window(0);
        delete queued;
    }, launch);
}

#endif
