/* The process's GPU, as the host-side C code sees it: which device it is, the stream the
 * model computes on, the cuBLAS settings, device memory through the tracking allocator,
 * and the Kernels table that runs the model there. Compiled only in the CUDA build
 * (make CUDA=1); plain C may include it (only cuda_runtime_api.h types appear). */
#ifndef DTC_CUDA_DEVICE_H
#define DTC_CUDA_DEVICE_H

#include <stddef.h>

#include <cuda_runtime_api.h>

#include "kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

extern const Kernels cuda_kernels;

/* The rows one pass of the softmax cross-entropy forward takes at most (its per-row losses
 * are read back a pass at a time): 65536, fewer on the emulated GPU. */
int cuda_loss_rows_per_pass(void);

/* The clock a trace of the GPU's work is timed on: CUDA events (trace_clock.c). */
extern const struct TraceDeviceClock cuda_trace_clock;

/* 1 when at least one GPU can be used; otherwise 0 and why holds the runtime's answer
 * (e.g. "cudaGetDeviceCount: no CUDA-capable device is detected"). Never aborts. */
int cuda_gpu_available(char *why, size_t why_len);

/* Selects GPU local_rank % (number of GPUs), creates the compute stream and the cuBLAS
 * handle, and sets cuBLAS to plain fp32 (tf32 = 0) or TF32 tensor cores (tf32 = 1).
 * Calling it again with the same GPU does nothing but set the math mode tf32 asks for;
 * asking for another GPU is an error. 0, or -1 with a reason. */
int cuda_device_setup(int local_rank, int tf32, char *err, size_t err_len);

int cuda_device_index(void);             /* -1 before cuda_device_setup */
cudaStream_t cuda_compute_stream(void);  /* every kernel and cuBLAS call runs on it */
int cuda_tf32_enabled(void);

/* Waits until everything queued on the compute stream is done (timers need it). */
void cuda_synchronize(void);

/* 1 when ptr points into GPU memory (device or managed), 0 for host memory. */
int cuda_is_device_pointer(const void *ptr);

/* How many cudaMalloc calls failed for lack of memory: tells a real out-of-memory apart
 * from a --mem-limit refusal (mem_limit_refusals). */
size_t cuda_alloc_failures(void);

/* What cudaMemGetInfo says now, in bytes. 0, or -1 when it fails. */
int cuda_mem_info(size_t *free_bytes, size_t *total_bytes);

/* The selected GPU's PCI bus id ("0000:18:00.0"), which names one physical GPU however
 * the process numbers it (a launcher that sets CUDA_VISIBLE_DEVICES per rank shows every
 * rank its GPU as number 0). 0, or -1 before cuda_device_setup or when CUDA cannot say. */
int cuda_device_bus_id(char *bus_id, size_t bus_id_len);

/* "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 79.1 GB)" for the selected GPU. */
const char *cuda_device_label(void);

#ifdef __cplusplus
}
#endif

#endif
