/* Host views of GPU buffers, for the MPI backend: Debian's MPICH reads and writes host
 * memory only, so a GPU buffer travels through a pinned host copy. In a CPU build (and for
 * host buffers in any build) the view is the buffer itself and nothing is copied. This is
 * what lets several ranks share one GPU: NCCL refuses that, MPI through the host does not. */
#ifndef DTC_STAGING_H
#define DTC_STAGING_H

#include <stddef.h>

typedef struct {
    void *host;   /* what MPI reads and writes */
    void *device; /* the GPU buffer behind it, or NULL when the buffer was host memory */
    size_t bytes;
} HostView;

/* Makes a host view of the bytes at buffer; copy_in fills it from the GPU (after the
 * work queued on the compute stream). 0, or -1 when no pinned memory could be had or the
 * copy failed (staging_failure says which). */
int host_view_open(HostView *view, const void *buffer, size_t bytes, int copy_in);

/* copy_out writes the view back to the GPU buffer; the pinned block goes back to the pool
 * either way. 0, or -1 when the copy failed (staging_failure says how). */
int host_view_close(HostView *view, int copy_out);

/* Why the last host_view_open or host_view_close that failed did. */
const char *staging_failure(void);

/* 1 when buffer is GPU memory (always 0 in a CPU build). */
int is_gpu_buffer(const void *buffer);

#endif
