/* The trace's clock on the GPU (events.h's TraceDeviceClock). A mark is a CUDA event recorded
 * on a stream; its time is how long after a reference event the GPU reached it, added to
 * the host time of the reference. The reference is recorded and waited for, so its host time
 * is when the GPU passed it, to within the wait's return (microseconds).
 * It is taken again each time the markers are forgotten (once a step): cudaEventElapsedTime
 * is a float of milliseconds, which keeps microseconds only for intervals of seconds. */
#include <cuda_runtime_api.h>

#include "cuda_device.h"
#include "grow.h"
#include "timer.h"
#include "events.h"

static cudaEvent_t *markers;      /* created once, recorded again after each forget */
static size_t used, created, capacity; /* given out since the last forget; made; room for */
static cudaEvent_t reference;
static double reference_seconds;

/* One more marker to give out, or 0 when there is no memory for it or CUDA cannot make it. */
static int make_marker(void)
{
    cudaEvent_t *grown = grow_for_one(markers, &capacity, created, sizeof *grown, 256);
    if (grown == NULL)
        return 0;
    markers = grown;
    if (cudaEventCreate(&markers[created]) != cudaSuccess)
        return 0;
    created++;
    return 1;
}

static int clock_mark(void *stream)
{
    if (used == created && !make_marker())
        return -1; /* the mark keeps the host's time */
    cudaStream_t on = stream != NULL ? (cudaStream_t)stream : cuda_compute_stream();
    if (cudaEventRecord(markers[used], on) != cudaSuccess)
        return -1;
    return (int)used++;
}

static double clock_seconds(int marker)
{
    float ms = 0.0f;
    if (cudaEventSynchronize(markers[marker]) != cudaSuccess ||
        cudaEventElapsedTime(&ms, reference, markers[marker]) != cudaSuccess)
        return reference_seconds; /* unreadable: the reference's time, not a made-up one */
    return reference_seconds + ms / 1e3;
}

static void clock_forget(void)
{
    used = 0;
    if (reference == NULL && cudaEventCreate(&reference) != cudaSuccess)
        return;
    /* the host waits until the GPU passes the reference: the time read then is when it did */
    if (cudaEventRecord(reference, cuda_compute_stream()) == cudaSuccess && cudaEventSynchronize(reference) == cudaSuccess)
        reference_seconds = now_seconds();
}

const TraceDeviceClock cuda_trace_clock = {clock_mark, clock_seconds, clock_forget};
