#include "device.h"

#include <stdio.h>
#include <string.h>

#include "blas_kernels.h"

#ifdef DTC_CUDA
#include "comm_nccl.h"
#include "cuda_device.h"
#include "gpu_peaks.h"
#endif

#ifdef DTC_CUDA

/* Every rank of the run on a GPU that no other rank uses (set when the GPUs open). */
static int own_gpu_each;

/* auto: NCCL when each rank has a GPU of its own, one rank alone too: there NCCL's
 * collectives are copies on the GPU, where MPI would carry every buffer through host memory
 * (lesson 10 at 1 rank on an H200: 219 of its 255 ms a step). */
static int wants_nccl(const char *comm_backend)
{
    if (strcmp(comm_backend, "auto") != 0)
        return strcmp(comm_backend, "nccl") == 0;
    return own_gpu_each;
}

static int open_gpu(int tf32, Comm *comm, char *err, size_t err_len)
{
    char why[256];
    if (!cuda_gpu_available(why, sizeof why)) {
        snprintf(err, err_len, "--device cuda: no GPU on rank %d (%s)", comm_rank(comm), why);
        return -1;
    }
    return cuda_device_setup(comm_local_rank(comm), tf32, err, err_len);
}

static const Kernels *open_cuda(const char *comm_backend, int tf32, Comm *comm, char *err, size_t err_len)
{
    /* every rank takes the same branch: NCCL's start is collective */
    if (!comm_all_ok(comm, open_gpu(tf32, comm, err, err_len) != 0, "the device set-up", err, err_len))
        return NULL;
    char why[192];
    own_gpu_each = every_rank_has_own_gpu(comm, why, sizeof why);
    if (wants_nccl(comm_backend) && strcmp(comm_backend_name(comm), "nccl") != 0 &&
        comm_use_nccl(comm, err, err_len) != 0)
        return NULL;
    return &cuda_kernels;
}

const char *device_label(const Kernels *kernels)
{
    return kernels == &cuda_kernels ? cuda_device_label() : kernels->device_name;
}

int device_memory_info(const Kernels *kernels, size_t *used_bytes, size_t *total_bytes)
{
    size_t free_bytes = 0;
    if (kernels != &cuda_kernels || cuda_mem_info(&free_bytes, total_bytes) != 0)
        return -1;
    *used_bytes = *total_bytes - free_bytes;
    return 0;
}

size_t device_alloc_failures(const Kernels *kernels)
{
    return kernels == &cuda_kernels ? cuda_alloc_failures() : 0;
}

int device_on_gpu(const Kernels *kernels)
{
    return kernels == &cuda_kernels;
}

int device_gpu_per_rank(const Kernels *kernels)
{
    return device_on_gpu(kernels) && own_gpu_each;
}

double device_peak_flops(const Kernels *kernels, ProductFormat format)
{
    GpuPeakFormat column = format == PRODUCTS_FP32 ? GPU_PEAK_FP32 : format == PRODUCTS_TF32 ? GPU_PEAK_TF32 : GPU_PEAK_16BIT;
    return kernels == &cuda_kernels ? gpu_peak_flops(cuda_device_index(), column) : 0.0;
}

#else

static const Kernels *open_cuda(const char *comm_backend, int tf32, Comm *comm, char *err, size_t err_len)
{
    (void)comm_backend;
    (void)tf32;
    snprintf(err, err_len, "--device cuda: this program was built without CUDA "
                           "(build with make CUDA=1 and run the one under build/cuda/)");
    comm_all_ok(comm, 1, "the device set-up", err, err_len);
    return NULL;
}

const char *device_label(const Kernels *kernels)
{
    return kernels->device_name;
}

int device_memory_info(const Kernels *kernels, size_t *used_bytes, size_t *total_bytes)
{
    (void)kernels;
    *used_bytes = *total_bytes = 0;
    return -1;
}

size_t device_alloc_failures(const Kernels *kernels)
{
    (void)kernels;
    return 0;
}

int device_on_gpu(const Kernels *kernels)
{
    (void)kernels;
    return 0;
}

int device_gpu_per_rank(const Kernels *kernels)
{
    (void)kernels;
    return 0;
}

double device_peak_flops(const Kernels *kernels, ProductFormat format)
{
    (void)kernels;
    (void)format;
    return 0.0;
}

#endif

const char *product_format_name(ProductFormat format)
{
    static const char *const names[] = {"fp32", "TF32 tensor-core", "bf16 tensor-core", "fp16 tensor-core"};
    return names[format];
}

const Kernels *device_open(const char *device, const char *comm_backend, int tf32, int threads, Comm *comm,
                           char *err, size_t err_len)
{
    if (strcmp(device, "cuda") == 0)
        return open_cuda(comm_backend, tf32, comm, err, err_len);
    if (threads > 0)
        blas_set_threads(threads);
    return &cpu_kernels;
}
