/* The process's GPU: device selection, the compute stream, the cuBLAS handle, and device
 * memory accounted through alloc.h. The layer kernels are in kernels_cuda.cu. */
#include "cuda_check.h" /* first: see there */
#include "cuda_device.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- the selected device */

static int device_index = -1;
static int tf32_enabled;
static int has_memory_pools; /* cuda_borrow needs them (cudaMallocAsync) */
static cudaStream_t compute_stream;
static cublasHandle_t cublas_handle;
static char device_label[640] = "no GPU selected"; /* room for prop.name (256) and the rest */

static void write_reason(char *out, size_t out_len, const char *what, cudaError_t status)
{
    if (out != NULL && out_len > 0)
        snprintf(out, out_len, "%s: %s", what, cudaGetErrorString(status));
}

extern "C" int cuda_gpu_available(char *why, size_t why_len)
{
    int count = 0;
    cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess) {
        cudaGetLastError(); /* no driver or no device is an answer here, not an error */
        write_reason(why, why_len, "cudaGetDeviceCount", status);
        return 0;
    }
    if (count == 0) {
        write_reason(why, why_len, "cudaGetDeviceCount", cudaErrorNoDevice);
        return 0;
    }
    if (why != NULL && why_len > 0)
        why[0] = '\0';
    return 1;
}

static int set_math_mode(int tf32, char *err, size_t err_len)
{
    cublasMath_t mode = tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH;
    cublasStatus_t status = cublasSetMathMode(cublas_handle, mode);
    if (status != CUBLAS_STATUS_SUCCESS) {
        snprintf(err, err_len, "cublasSetMathMode: %s", cublasGetStatusString(status));
        return -1;
    }
    tf32_enabled = tf32 != 0;
    return 0;
}

/* cuBLAS on the compute stream, and never with atomics: a GEMM then gives the same bits
 * on every run (the default, but the course depends on it, so it is said here). */
static int create_cublas(int tf32, char *err, size_t err_len)
{
    cublasStatus_t status = cublasCreate(&cublas_handle);
    if (status == CUBLAS_STATUS_SUCCESS)
        status = cublasSetStream(cublas_handle, compute_stream);
    if (status == CUBLAS_STATUS_SUCCESS)
        status = cublasSetAtomicsMode(cublas_handle, CUBLAS_ATOMICS_NOT_ALLOWED);
    if (status != CUBLAS_STATUS_SUCCESS) {
        snprintf(err, err_len, "cuBLAS setup: %s", cublasGetStatusString(status));
        return -1;
    }
    return set_math_mode(tf32, err, err_len);
}

/* cuda_borrow's pool would otherwise hand its memory back to the driver at every
 * synchronisation and map it again on the next borrow. A GPU without memory pools is
 * no error: cuda_borrow then always says no, and its callers take their slower path. */
static int keep_pool_memory(int device, char *err, size_t err_len)
{
    int supported = 0;
    cudaError_t status = cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, device);
    if (status == cudaSuccess && supported) {
        cudaMemPool_t pool;
        uint64_t keep_all = UINT64_MAX;
        status = cudaDeviceGetDefaultMemPool(&pool, device);
        if (status == cudaSuccess)
            status = cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep_all);
    }
    if (status != cudaSuccess) {
        cudaGetLastError();
        write_reason(err, err_len, "memory pool setup", status);
        return -1;
    }
    has_memory_pools = supported != 0;
    return 0;
}

static int describe_device(int device, char *err, size_t err_len)
{
    cudaDeviceProp prop;
    cudaError_t status = cudaGetDeviceProperties(&prop, device);
    if (status != cudaSuccess) {
        write_reason(err, err_len, "cudaGetDeviceProperties", status);
        return -1;
    }
    snprintf(device_label, sizeof device_label, "%s (sm_%d%d, %d SMs, %.1f GB)", prop.name, prop.major,
             prop.minor, prop.multiProcessorCount, (double)prop.totalGlobalMem / (1024.0 * 1024.0 * 1024.0));
    return 0;
}

/* Undoes a setup that failed half way, so that a later call starts clean. */
static void release_device(void)
{
    if (cublas_handle != NULL)
        cublasDestroy(cublas_handle);
    if (compute_stream != NULL)
        cudaStreamDestroy(compute_stream);
    cublas_handle = NULL;
    compute_stream = NULL;
    cudaGetLastError();
}

extern "C" int cuda_device_setup(int local_rank, int tf32, char *err, size_t err_len)
{
    int count = 0;
    cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess || count == 0) {
        cudaGetLastError();
        write_reason(err, err_len, "cudaGetDeviceCount", status != cudaSuccess ? status : cudaErrorNoDevice);
        return -1;
    }
    if (local_rank < 0) {
        snprintf(err, err_len, "cuda_device_setup: local rank %d is negative", local_rank);
        return -1;
    }
    int device = local_rank % count;
    if (device_index >= 0) {
        if (device != device_index) {
            snprintf(err, err_len, "cuda_device_setup: already using GPU %d, cannot switch to GPU %d",
                     device_index, device);
            return -1;
        }
        return (tf32 != 0) == tf32_enabled ? 0 : set_math_mode(tf32, err, err_len);
    }
    status = cudaSetDevice(device);
    if (status == cudaSuccess)
        status = cudaStreamCreateWithFlags(&compute_stream, cudaStreamNonBlocking);
    if (status != cudaSuccess) {
        cudaGetLastError();
        write_reason(err, err_len, "cudaSetDevice / cudaStreamCreateWithFlags", status);
        return -1;
    }
    if (create_cublas(tf32, err, err_len) != 0 || keep_pool_memory(device, err, err_len) != 0 ||
        describe_device(device, err, err_len) != 0) {
        release_device();
        return -1;
    }
    device_index = device;
    return 0;
}

extern "C" int cuda_device_index(void)
{
    return device_index;
}

extern "C" cudaStream_t cuda_compute_stream(void)
{
    return compute_stream;
}

extern "C" int cuda_tf32_enabled(void)
{
    return tf32_enabled;
}

extern "C" void cuda_synchronize(void)
{
    if (device_index >= 0)
        CUDA_CHECK(cudaStreamSynchronize(compute_stream));
}

extern "C" int cuda_is_device_pointer(const void *ptr)
{
    if (ptr == NULL)
        return 0;
    cudaPointerAttributes attributes;
    cudaError_t status = cudaPointerGetAttributes(&attributes, ptr);
    if (status != cudaSuccess) {
        cudaGetLastError(); /* e.g. no driver: then nothing is GPU memory */
        return 0;
    }
    return attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged;
}

extern "C" int cuda_mem_info(size_t *free_bytes, size_t *total_bytes)
{
    cudaError_t status = cudaMemGetInfo(free_bytes, total_bytes);
    if (status != cudaSuccess) {
        cudaGetLastError();
        return -1;
    }
    return 0;
}

extern "C" int cuda_device_bus_id(char *bus_id, size_t bus_id_len)
{
    if (device_index < 0 || cudaDeviceGetPCIBusId(bus_id, (int)bus_id_len, device_index) != cudaSuccess) {
        cudaGetLastError();
        return -1;
    }
    return 0;
}

extern "C" const char *cuda_device_label(void)
{
    return device_label;
}

cudaStream_t cuda_stream_checked(void)
{
    if (device_index < 0) { /* a bug in the course, not bad input: stop where it happened */
        fprintf(stderr, "cuda: a GPU operation ran before cuda_device_setup\n");
        abort();
    }
    return compute_stream;
}

cublasHandle_t cuda_cublas_handle(void)
{
    cuda_stream_checked();
    return cublas_handle;
}

/* ---------------------------------------------------------------- device memory */

/* Each live allocation's size and kind are kept by alloc.h's table of live blocks (which
 * also names the block in the communication log), so free can give the bytes back. */
static size_t alloc_failures;

void *cuda_alloc_tracked(size_t bytes, MemKind kind)
{
    cudaStream_t stream = cuda_stream_checked();
    if (!mem_account(bytes, kind))
        return NULL;
    void *ptr = NULL;
    /* a 0-byte request still gets a block: a NULL would read as out of memory */
    cudaError_t status = cudaMalloc(&ptr, bytes > 0 ? bytes : 1);
    if (status == cudaErrorMemoryAllocation) {
        cudaGetLastError(); /* clear it, so the next call does not report it again */
        mem_unaccount(bytes, kind);
        alloc_failures++;
        return NULL;
    }
    cuda_check_at(status, "cudaMalloc", __FILE__, __LINE__);
    /* synchronised, because another stream (communication) may use the block first; a
     * communication buffer starts as NaN (0xFF bytes), as on the CPU (alloc.h) */
    CUDA_CHECK(cudaMemsetAsync(ptr, kind == MEM_COMM ? 0xFF : 0, bytes, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    if (mem_block_added(ptr, bytes, kind) != 0) { /* free could not give the bytes back */
        CUDA_CHECK(cudaFree(ptr));
        mem_unaccount(bytes, kind);
        return NULL;
    }
    return ptr;
}

void cuda_free_tracked(void *ptr)
{
    if (ptr == NULL)
        return;
    size_t bytes;
    MemKind kind;
    if (!mem_block_removed(ptr, &bytes, &kind)) { /* a bug in the course, as above */
        fprintf(stderr, "cuda: free of %p, which the CUDA device did not allocate\n", ptr);
        abort();
    }
    /* kernels still queued may read the block */
    CUDA_CHECK(cudaStreamSynchronize(cuda_stream_checked()));
    CUDA_CHECK(cudaFree(ptr));
    mem_unaccount(bytes, kind);
}

void *cuda_borrow(size_t bytes, MemKind kind)
{
    cudaStream_t stream = cuda_stream_checked();
    if (!has_memory_pools || !mem_account(bytes, kind))
        return NULL;
    void *ptr = NULL;
    cudaError_t status = cudaMallocAsync(&ptr, bytes > 0 ? bytes : 1, stream);
    if (status == cudaErrorMemoryAllocation) {
        cudaGetLastError();
        mem_unaccount(bytes, kind);
        alloc_failures++;
        return NULL;
    }
    cuda_check_at(status, "cudaMallocAsync", __FILE__, __LINE__);
    return ptr;
}

void cuda_give_back(void *ptr, size_t bytes, MemKind kind)
{
    CUDA_CHECK(cudaFreeAsync(ptr, cuda_stream_checked()));
    mem_unaccount(bytes, kind);
}

extern "C" size_t cuda_alloc_failures(void)
{
    return alloc_failures;
}

void cuda_zero(void *ptr, size_t bytes)
{
    if (bytes > 0)
        CUDA_CHECK(cudaMemsetAsync(ptr, 0, bytes, cuda_stream_checked()));
}

void cuda_copy(void *dst, const void *src, size_t bytes)
{
    if (bytes > 0)
        CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, cuda_stream_checked()));
}

/* Both directions wait: the caller may free or read its host buffer as soon as we return. */
void cuda_to_device(void *dst, const void *host_src, size_t bytes)
{
    if (bytes == 0)
        return;
    cudaStream_t stream = cuda_stream_checked();
    CUDA_CHECK(cudaMemcpyAsync(dst, host_src, bytes, cudaMemcpyHostToDevice, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
}

void cuda_to_host(void *host_dst, const void *src, size_t bytes)
{
    if (bytes == 0)
        return;
    cudaStream_t stream = cuda_stream_checked();
    CUDA_CHECK(cudaMemcpyAsync(host_dst, src, bytes, cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
}
