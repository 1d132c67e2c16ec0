#include "staging.h"

static char failure[256]; /* why the last view that failed did */

const char *staging_failure(void) { return failure; }

#ifdef DTC_CUDA

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

#include "cuda_device.h"

/* Pinned blocks are slow to allocate (a page-locking system call), and the same few sizes
 * recur every step, so closed views hand theirs back to a small pool. */
enum { POOL_SLOTS = 64 };

typedef struct {
    void *block;
    size_t capacity;
    int in_use;
} PinnedSlot;

static PinnedSlot pool[POOL_SLOTS];

/* The smallest free block that fits; otherwise a new one, in an empty slot or in place of
 * a free block too small to be of use (so the pool never refuses while one is idle). */
static PinnedSlot *take_slot(size_t bytes)
{
    PinnedSlot *fits = NULL, *empty = NULL, *too_small = NULL;
    for (int i = 0; i < POOL_SLOTS; i++) {
        PinnedSlot *slot = &pool[i];
        if (slot->in_use)
            continue;
        if (slot->block == NULL)
            empty = empty != NULL ? empty : slot;
        else if (slot->capacity < bytes)
            too_small = too_small != NULL ? too_small : slot;
        else if (fits == NULL || slot->capacity < fits->capacity)
            fits = slot;
    }
    if (fits != NULL) {
        fits->in_use = 1;
        return fits;
    }
    PinnedSlot *slot = empty != NULL ? empty : too_small;
    if (slot == NULL)
        return NULL; /* every block is in flight */
    if (slot->block != NULL)
        cudaFreeHost(slot->block);
    slot->block = NULL;
    if (cudaMallocHost(&slot->block, bytes) != cudaSuccess) {
        cudaGetLastError();
        slot->block = NULL;
        return NULL;
    }
    slot->capacity = bytes;
    slot->in_use = 1;
    return slot;
}

static void give_back(void *block)
{
    for (int i = 0; i < POOL_SLOTS; i++)
        if (pool[i].block == block)
            pool[i].in_use = 0;
}

static int copy_on_compute_stream(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind)
{
    cudaStream_t stream = cuda_compute_stream();
    cudaError_t status = cudaMemcpyAsync(dst, src, bytes, kind, stream);
    if (status == cudaSuccess)
        status = cudaStreamSynchronize(stream);
    if (status == cudaSuccess)
        return 0;
    snprintf(failure, sizeof failure, "copying %zu bytes %s the GPU to stage them failed: %s", bytes,
             kind == cudaMemcpyDeviceToHost ? "from" : "to", cudaGetErrorString(status));
    return -1;
}

/* Before a GPU is set up nothing is GPU memory, and asking CUDA would start a context on
 * GPU 0 in every rank of a --device cpu run. */
int is_gpu_buffer(const void *buffer)
{
    return buffer != NULL && cuda_device_index() >= 0 && cuda_is_device_pointer(buffer);
}

int host_view_open(HostView *view, const void *buffer, size_t bytes, int copy_in)
{
    *view = (HostView){.host = (void *)buffer, .device = NULL, .bytes = bytes};
    if (!is_gpu_buffer(buffer) || bytes == 0)
        return 0;
    PinnedSlot *slot = take_slot(bytes);
    if (slot == NULL) {
        snprintf(failure, sizeof failure, "no pinned host memory to stage a GPU buffer through");
        return -1;
    }
    view->host = slot->block;
    view->device = (void *)buffer;
    if (copy_in && copy_on_compute_stream(view->host, buffer, bytes, cudaMemcpyDeviceToHost) != 0) {
        host_view_close(view, 0);
        return -1;
    }
    return 0;
}

int host_view_close(HostView *view, int copy_out)
{
    if (view->device == NULL)
        return 0;
    int status = copy_out ? copy_on_compute_stream(view->device, view->host, view->bytes, cudaMemcpyHostToDevice)
                          : 0;
    give_back(view->host);
    view->device = NULL;
    return status;
}

#else /* a CPU build: every buffer is host memory */

int is_gpu_buffer(const void *buffer)
{
    (void)buffer;
    return 0;
}

int host_view_open(HostView *view, const void *buffer, size_t bytes, int copy_in)
{
    (void)copy_in;
    *view = (HostView){.host = (void *)buffer, .device = NULL, .bytes = bytes};
    return 0;
}

int host_view_close(HostView *view, int copy_out)
{
    (void)view;
    (void)copy_out;
    return 0;
}

#endif
