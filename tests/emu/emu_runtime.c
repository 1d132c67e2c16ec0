/* The emulated CUDA runtime: device memory, copies, streams, events and the device itself
 * (see emu.h for what the emulation checks). Built against the real CUDA headers, so every
 * function has the signature the CUDA build was compiled against. */
#include "emu.h"

#include <execinfo.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

enum { PAGE = 4096, MAX_REGIONS = 1 << 16, MAX_PINNED = 1024, MAX_STREAMS = 4096, MAX_GPUS = 64 };

/* ---------------------------------------------------------------- settings and failures */

double emu_setting(const char *name, double fallback)
{
    const char *text = getenv(name);
    return text != NULL && text[0] != '\0' ? atof(text) : fallback;
}

static void print_backtrace(void)
{
    void *frames[32];
    backtrace_symbols_fd(frames, backtrace(frames, 32), 2);
}

void emu_fail(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    fprintf(stderr, "emu: ");
    vfprintf(stderr, format, args);
    fprintf(stderr, "\n");
    va_end(args);
    print_backtrace();
    abort();
}

static cudaError_t last_error;

static cudaError_t fail_with(cudaError_t status)
{
    last_error = status;
    return status;
}

/* ---------------------------------------------------------------- device memory
 * An allocation is its own mapping: its bytes end 256-byte aligned right before a guard
 * page, and the mapping is PROT_NONE outside the device window. __device__ variables are
 * regions too (with no mapping of their own, so never protected). */
typedef struct {
    char *map;      /* the mapping, NULL for a __device__ variable */
    size_t map_len; /* including the guard page */
    char *ptr;      /* what cudaMalloc returned */
    size_t bytes;
} Region;

static Region regions[MAX_REGIONS];
static int region_count;
static int window_depth;
static size_t device_bytes_used;

static size_t capacity_bytes(void)
{
    return (size_t)(emu_setting("DTC_EMU_GPU_GB", 16.0) * 1024 * 1024 * 1024);
}

static Region *region_of(const void *ptr)
{
    const char *p = ptr;
    for (int i = 0; i < region_count; i++)
        if (p >= regions[i].ptr && p < regions[i].ptr + (regions[i].bytes > 0 ? regions[i].bytes : 1))
            return &regions[i];
    return NULL;
}

int emu_is_device(const void *ptr, size_t bytes)
{
    Region *region = region_of(ptr);
    return region != NULL && (const char *)ptr + bytes <= region->ptr + region->bytes;
}

static void add_region(Region region)
{
    if (region_count == MAX_REGIONS)
        emu_fail("more than %d live device allocations", MAX_REGIONS);
    regions[region_count++] = region;
}

static void protect(const Region *region, int prot)
{
    if (region->map != NULL && mprotect(region->map, region->map_len - PAGE, prot) != 0)
        emu_fail("mprotect of a device allocation failed");
}

void emu_device_window(int open)
{
    if (open ? window_depth++ > 0 : --window_depth > 0)
        return;
    for (int i = 0; i < region_count; i++)
        protect(&regions[i], open ? PROT_READ | PROT_WRITE : PROT_NONE);
}

static const char *fault_kind(const Region *region, const char *address)
{
    if (address >= region->ptr + region->bytes)
        return "device work ran past the end of an allocation";
    if (address < region->ptr)
        return "device work ran before the start of an allocation";
    return window_depth > 0 ? "fault inside device memory" : "host code touched device memory";
}

static void on_fault(int signal_number, siginfo_t *info, void *context)
{
    (void)signal_number;
    (void)context;
    const char *address = info->si_addr;
    const Region *hit = NULL;
    for (int i = 0; i < region_count; i++)
        if (regions[i].map != NULL && address >= regions[i].map && address < regions[i].map + regions[i].map_len)
            hit = &regions[i];
    char message[256];
    int length = hit != NULL
                     ? snprintf(message, sizeof message, "emu: %s at %p (allocation %p of %zu bytes)\n",
                                fault_kind(hit, address), info->si_addr, (void *)hit->ptr, hit->bytes)
                     : snprintf(message, sizeof message, "emu: segmentation fault at %p, not in device memory\n",
                                info->si_addr);
    if (write(2, message, (size_t)length) < 0)
        _exit(99);
    print_backtrace();
    _exit(99);
}

__attribute__((constructor)) static void catch_faults(void)
{
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = on_fault;
    action.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &action, NULL);
    sigaction(SIGBUS, &action, NULL);
}

static cudaError_t device_alloc(void **ptr, size_t bytes)
{
    if (bytes > capacity_bytes() - device_bytes_used)
        return fail_with(cudaErrorMemoryAllocation);
    size_t rounded = (bytes + 255) / 256 * 256;
    size_t map_len = (rounded + PAGE - 1) / PAGE * PAGE + PAGE;
    char *map = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (map == MAP_FAILED)
        return fail_with(cudaErrorMemoryAllocation);
    Region region = {map, map_len, map + map_len - PAGE - rounded, bytes};
    memset(region.ptr, 0xff, rounded); /* cudaMalloc does not zero: NaNs show what nobody wrote */
    mprotect(map + map_len - PAGE, PAGE, PROT_NONE);
    if (window_depth == 0)
        protect(&region, PROT_NONE);
    add_region(region);
    device_bytes_used += bytes;
    *ptr = region.ptr;
    return cudaSuccess;
}

static void device_free(void *ptr)
{
    for (int i = 0; i < region_count; i++)
        if (regions[i].ptr == ptr && regions[i].map != NULL) {
            munmap(regions[i].map, regions[i].map_len);
            device_bytes_used -= regions[i].bytes;
            regions[i] = regions[--region_count];
            return;
        }
    emu_fail("cudaFree(%p): not a pointer cudaMalloc returned", ptr);
}

static void run_free(void *ptr) { device_free(ptr); }

cudaError_t cudaMalloc(void **ptr, size_t bytes) { return device_alloc(ptr, bytes); }

cudaError_t cudaFree(void *ptr)
{
    emu_flush_all(); /* cudaFree waits for the device */
    if (ptr != NULL)
        device_free(ptr);
    return cudaSuccess;
}

cudaError_t cudaMallocAsync(void **ptr, size_t bytes, cudaStream_t stream)
{
    (void)stream;
    return device_alloc(ptr, bytes);
}

cudaError_t cudaFreeAsync(void *ptr, cudaStream_t stream)
{
    emu_enqueue(stream, run_free, ptr);
    return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes)
{
    *total_bytes = capacity_bytes();
    *free_bytes = *total_bytes - device_bytes_used;
    return cudaSuccess;
}

cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *attributes, const void *ptr)
{
    memset(attributes, 0, sizeof *attributes);
    int on_device = region_of(ptr) != NULL;
    attributes->type = on_device ? cudaMemoryTypeDevice : cudaMemoryTypeUnregistered;
    attributes->device = on_device ? 0 : -2;
    attributes->devicePointer = on_device ? (void *)ptr : NULL;
    return cudaSuccess;
}

/* The kernels' side (include/cuda_runtime.h). */
void emu_register_symbol(const void *symbol, size_t bytes)
{
    add_region((Region){NULL, 0, (char *)symbol, bytes});
}

cudaError_t emu_symbol_address(void **address, const void *symbol)
{
    Region *region = region_of(symbol);
    if (region == NULL || region->ptr != symbol || region->map != NULL)
        emu_fail("cudaGetSymbolAddress(%p): not a __device__ variable", symbol);
    *address = (void *)symbol;
    return cudaSuccess;
}

/* Set by the GPU tests (gpu_test_util.c) to skip the test that reached a kernel the
 * emulation cannot run; absent in a program, which then ends with status 77 (skipped) and
 * says why. */
void dtc_emu_skip(const char *message) __attribute__((weak));

void emu_cannot_run_kernel(const char *kernel, const char *why)
{
    char message[256];
    snprintf(message, sizeof message, "the emulated GPU cannot run kernel %s: %s; it is tested on real GPUs only",
             kernel, why);
    if (dtc_emu_skip != NULL)
        dtc_emu_skip(message);
    fprintf(stderr, "%s\n", message);
    exit(77);
}

void emu_check_kernel_pointer(const char *kernel, int argument, const void *ptr)
{
    if (ptr != NULL && region_of(ptr) == NULL)
        emu_fail("kernel %s: argument %d (%p) is not device memory", kernel, argument, ptr);
}

/* ---------------------------------------------------------------- pinned host memory */

static struct {
    char *ptr;
    size_t bytes;
} pinned[MAX_PINNED];
static int pinned_count;

int emu_is_pinned(const void *ptr)
{
    for (int i = 0; i < pinned_count; i++)
        if ((const char *)ptr >= pinned[i].ptr && (const char *)ptr < pinned[i].ptr + pinned[i].bytes)
            return 1;
    return 0;
}

cudaError_t cudaMallocHost(void **ptr, size_t bytes)
{
    if (pinned_count == MAX_PINNED)
        return fail_with(cudaErrorMemoryAllocation);
    *ptr = malloc(bytes > 0 ? bytes : 1);
    if (*ptr == NULL)
        return fail_with(cudaErrorMemoryAllocation);
    pinned[pinned_count].ptr = *ptr;
    pinned[pinned_count++].bytes = bytes;
    return cudaSuccess;
}

cudaError_t cudaFreeHost(void *ptr)
{
    emu_flush_all(); /* as cudaFree */
    for (int i = 0; i < pinned_count; i++)
        if (pinned[i].ptr == ptr) {
            pinned[i] = pinned[--pinned_count];
            free(ptr);
            return cudaSuccess;
        }
    emu_fail("cudaFreeHost(%p): not a pointer cudaMallocHost returned", ptr);
}

/* ---------------------------------------------------------------- copies */

typedef struct {
    void *dst;
    const void *src; /* NULL: a memset of value */
    size_t bytes;
    int value;
    void *snapshot; /* owned copy of a pageable source */
} Copy;

static void run_copy(void *ctx)
{
    Copy *copy = ctx;
    emu_device_window(1);
    if (copy->src != NULL)
        memmove(copy->dst, copy->src, copy->bytes);
    else
        memset(copy->dst, copy->value, copy->bytes);
    emu_device_window(0);
    free(copy->snapshot);
    free(copy);
}

static int is_pageable(const void *ptr)
{
    return region_of(ptr) == NULL && !emu_is_pinned(ptr);
}

static void check_side(const char *side, const void *ptr, size_t bytes, int want_device, enum cudaMemcpyKind kind)
{
    int on_device = region_of(ptr) != NULL;
    if (on_device && !emu_is_device(ptr, bytes))
        emu_fail("copy of %zu bytes: the %s runs past the end of its device allocation", bytes, side);
    if (kind != cudaMemcpyDefault && on_device != want_device)
        emu_fail("copy of kind %d: the %s (%p) is %s memory", (int)kind, side, ptr, on_device ? "device" : "host");
}

/* As CUDA: a copy from pageable host memory takes its data during the call, a copy to
 * pageable host memory returns once done, and a copy between device and pinned memory
 * runs when its stream does. */
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind, cudaStream_t stream)
{
    check_side("destination", dst, bytes, kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice, kind);
    check_side("source", src, bytes, kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice, kind);
    Copy *copy = calloc(1, sizeof *copy);
    *copy = (Copy){dst, src, bytes, 0, NULL};
    if (is_pageable(dst)) {
        cudaStreamSynchronize(stream);
        run_copy(copy);
        return cudaSuccess;
    }
    if (is_pageable(src)) {
        copy->snapshot = malloc(bytes > 0 ? bytes : 1);
        memcpy(copy->snapshot, src, bytes);
        copy->src = copy->snapshot;
    }
    emu_enqueue(stream, run_copy, copy);
    return cudaSuccess;
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind)
{
    cudaMemcpyAsync(dst, src, bytes, kind, NULL);
    return cudaStreamSynchronize(NULL);
}

cudaError_t cudaMemsetAsync(void *dst, int value, size_t bytes, cudaStream_t stream)
{
    if (!emu_is_device(dst, bytes))
        emu_fail("cudaMemsetAsync of %zu bytes at %p: not device memory", bytes, dst);
    Copy *copy = calloc(1, sizeof *copy);
    *copy = (Copy){dst, NULL, bytes, value, NULL};
    emu_enqueue(stream, run_copy, copy);
    return cudaSuccess;
}

/* ---------------------------------------------------------------- streams and events
 * A stream is a queue; `done` counts the operations that ran. An event is a position in
 * one stream's queue.
 *
 * When queued work runs, DTC_EMU_SCHEDULE says:
 *  - "late" (the default): only when something waits for it, so work a stream forgot to
 *    wait for has not happened yet when the stream goes on;
 *  - "others-first": every stream but the first one created (cuda_device.cu's compute
 *    stream) runs its work as soon as it is queued, and the compute stream last, so a
 *    collective that forgot to wait for compute runs before the compute it needed.
 * Each schedule exposes one direction of a missing wait; make test-emu runs both. */
typedef struct {
    void (*run)(void *);
    void *ctx;
} Operation;

struct CUstream_st {
    Operation *queue;
    size_t queued, capacity, done;
    int running;
    int destroyed; /* kept: events and waits may still name it */
};

struct CUevent_st {
    cudaStream_t stream; /* NULL until recorded */
    size_t position;
    int queried;
    int timed;      /* made without cudaEventDisableTiming: stamped when its stream reaches it */
    double seconds; /* that time, on the monotonic clock */
};

static struct CUstream_st legacy_stream;
static cudaStream_t streams[MAX_STREAMS];
static int stream_count;

static cudaStream_t stream_or_legacy(cudaStream_t stream) { return stream != NULL ? stream : &legacy_stream; }

/* Runs stream's queue up to position. A stream that must wait for itself to get further
 * than it has is a cycle, which on a GPU hangs. */
static void run_until(cudaStream_t stream, size_t position)
{
    if (stream->running) {
        if (position > stream->done)
            emu_fail("streams wait for each other in a cycle (a GPU would hang)");
        return;
    }
    stream->running = 1;
    while (stream->done < position) {
        Operation operation = stream->queue[stream->done];
        operation.run(operation.ctx);
        stream->done++;
    }
    stream->running = 0;
}

static void run_all_of(cudaStream_t stream) { run_until(stream, stream->queued); }

static int others_first(void)
{
    static int schedule = -1;
    if (schedule < 0) {
        const char *name = getenv("DTC_EMU_SCHEDULE");
        if (name != NULL && strcmp(name, "others-first") != 0 && strcmp(name, "late") != 0)
            emu_fail("DTC_EMU_SCHEDULE=%s: late or others-first", name);
        schedule = name != NULL && strcmp(name, "others-first") == 0;
    }
    return schedule;
}

void emu_flush_all(void)
{
    run_all_of(&legacy_stream);
    for (int i = 0; i < stream_count; i++)
        run_all_of(streams[others_first() ? stream_count - 1 - i : i]);
}

void emu_enqueue(cudaStream_t stream, void (*run)(void *), void *ctx)
{
    stream = stream_or_legacy(stream);
    if (stream->destroyed)
        emu_fail("work queued on a destroyed stream");
    if (stream->queued == stream->capacity) {
        stream->capacity = stream->capacity > 0 ? 2 * stream->capacity : 256;
        stream->queue = realloc(stream->queue, stream->capacity * sizeof *stream->queue);
    }
    stream->queue[stream->queued++] = (Operation){run, ctx};
    if (others_first() && stream_count > 0 && stream != streams[0] && stream != &legacy_stream)
        run_all_of(stream);
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned flags)
{
    (void)flags;
    if (stream_count == MAX_STREAMS)
        return fail_with(cudaErrorMemoryAllocation);
    *stream = calloc(1, sizeof **stream);
    streams[stream_count++] = *stream;
    return cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t *stream) { return cudaStreamCreateWithFlags(stream, 0); }

cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
    run_all_of(stream); /* its work still completes */
    stream->destroyed = 1;
    return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
    run_all_of(stream_or_legacy(stream));
    return cudaSuccess;
}

cudaError_t cudaStreamQuery(cudaStream_t stream)
{
    stream = stream_or_legacy(stream);
    if (stream->done == stream->queued)
        return cudaSuccess;
    run_all_of(stream); /* "not ready" now, done when asked again */
    return cudaErrorNotReady;
}

typedef struct {
    cudaStream_t stream;
    size_t position;
} Wait;

static void run_wait(void *ctx)
{
    Wait *wait = ctx;
    run_until(wait->stream, wait->position);
    free(wait);
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned flags)
{
    (void)flags;
    if (event == NULL)
        emu_fail("cudaStreamWaitEvent on a NULL event");
    if (event->stream == NULL)
        return cudaSuccess; /* never recorded: nothing to wait for */
    Wait *wait = malloc(sizeof *wait);
    *wait = (Wait){event->stream, event->position};
    emu_enqueue(stream, run_wait, wait);
    return cudaSuccess;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned flags)
{
    *event = calloc(1, sizeof **event);
    (*event)->timed = !(flags & cudaEventDisableTiming);
    return cudaSuccess;
}

/* A timed event's stamp: queued where it is recorded, run when its stream gets there. */
static void stamp_event(void *event)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    ((cudaEvent_t)event)->seconds = (double)now.tv_sec + 1e-9 * (double)now.tv_nsec;
}

cudaError_t cudaEventCreate(cudaEvent_t *event) { return cudaEventCreateWithFlags(event, 0); }

cudaError_t cudaEventDestroy(cudaEvent_t event)
{
    if (event->timed && event->stream != NULL)
        run_until(event->stream, event->position); /* its stamp is queued: run it before the event goes */
    free(event);
    return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
    if (event == NULL)
        emu_fail("cudaEventRecord of a NULL event");
    event->stream = stream_or_legacy(stream);
    if (event->timed)
        emu_enqueue(event->stream, stamp_event, event);
    event->position = event->stream->queued;
    event->queried = 0;
    return cudaSuccess;
}

/* An unfinished event answers "not ready" once, then runs its stream up to itself. */
cudaError_t cudaEventQuery(cudaEvent_t event)
{
    if (event->stream == NULL || event->stream->done >= event->position)
        return cudaSuccess;
    if (event->queried++ == 0)
        return cudaErrorNotReady;
    run_until(event->stream, event->position);
    return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
    if (event->stream != NULL)
        run_until(event->stream, event->position);
    return cudaSuccess;
}

/* The host time between the two stamps: when the emulation ran up to each. It says nothing of
 * a GPU's speed, but orders events as they ran; at least a microsecond keeps rates finite. */
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    if (!start->timed || !end->timed || start->stream == NULL || end->stream == NULL)
        return cudaErrorInvalidResourceHandle;
    cudaEventSynchronize(start);
    cudaEventSynchronize(end);
    double elapsed = 1e3 * (end->seconds - start->seconds);
    *ms = (float)(elapsed >= 0.001 || elapsed <= -0.001 ? elapsed : 0.001);
    return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void)
{
    emu_flush_all();
    return cudaSuccess;
}

/* ---------------------------------------------------------------- the device
 * DTC_EMU_GPUS GPUs (1 by default), of which CUDA_VISIBLE_DEVICES shows some, renumbered
 * from 0 as CUDA does; a GPU's PCI bus id follows its physical number. */
static int visible[MAX_GPUS];
static int visible_count = -1;

static int parse_visible(const char *list, int physical)
{
    int count = 0;
    for (const char *p = list; *p != '\0' && count < MAX_GPUS;) {
        char *end;
        long id = strtol(p, &end, 10);
        if (end == p || id < 0 || id >= physical)
            break; /* as CUDA: the list ends at an entry that names no GPU */
        visible[count++] = (int)id;
        if (*end != ',')
            break;
        p = end + 1;
    }
    return count;
}

static int gpu_count(void)
{
    if (visible_count >= 0)
        return visible_count;
    int physical = (int)emu_setting("DTC_EMU_GPUS", 1);
    const char *list = getenv("CUDA_VISIBLE_DEVICES");
    if (list != NULL)
        return visible_count = parse_visible(list, physical);
    for (visible_count = 0; visible_count < physical && visible_count < MAX_GPUS; visible_count++)
        visible[visible_count] = visible_count;
    return visible_count;
}

static int valid_device(int device) { return device >= 0 && device < gpu_count(); }

cudaError_t cudaGetDeviceCount(int *count)
{
    *count = gpu_count();
    return *count > 0 ? cudaSuccess : fail_with(cudaErrorNoDevice);
}

cudaError_t cudaSetDevice(int device) { return valid_device(device) ? cudaSuccess : fail_with(cudaErrorInvalidDevice); }

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
    if (!valid_device(device))
        return fail_with(cudaErrorInvalidDevice);
    memset(prop, 0, sizeof *prop);
    /* DTC_EMU_GPU_NAME: the name a real GPU reports, to pick its data-sheet peaks */
    const char *name = getenv("DTC_EMU_GPU_NAME");
    snprintf(prop->name, sizeof prop->name, "%s", name != NULL && name[0] != '\0' ? name : "Emulated GPU");
    prop->major = 9;
    prop->minor = 0;
    prop->multiProcessorCount = 132;
    prop->totalGlobalMem = capacity_bytes();
    prop->pciBusID = 0x18 + visible[device];
    return cudaSuccess;
}

cudaError_t cudaDeviceGetPCIBusId(char *bus_id, int length, int device)
{
    if (!valid_device(device))
        return fail_with(cudaErrorInvalidDevice);
    snprintf(bus_id, (size_t)length, "0000:%02x:00.0", 0x18 + visible[device]);
    return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attribute, int device)
{
    (void)device;
    *value = attribute == cudaDevAttrMemoryPoolsSupported;
    return cudaSuccess;
}

cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *pool, int device)
{
    static int the_pool;
    (void)device;
    *pool = (cudaMemPool_t)&the_pool;
    return cudaSuccess;
}

cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, enum cudaMemPoolAttr attribute, void *value)
{
    (void)pool;
    (void)attribute;
    (void)value;
    return cudaSuccess;
}

cudaError_t cudaDeviceCanAccessPeer(int *can_access, int device, int peer)
{
    (void)device;
    (void)peer;
    *can_access = 0;
    return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int *version)
{
    *version = CUDART_VERSION;
    return cudaSuccess;
}

cudaError_t cudaDriverGetVersion(int *version)
{
    *version = CUDART_VERSION;
    return cudaSuccess;
}

cudaError_t cudaGetLastError(void)
{
    cudaError_t status = last_error;
    last_error = cudaSuccess;
    return status;
}

const char *cudaGetErrorName(cudaError_t status) { return status == cudaSuccess ? "cudaSuccess" : "cudaErrorEmulated"; }

const char *cudaGetErrorString(cudaError_t status)
{
    switch (status) {
    case cudaSuccess: return "no error";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorNotReady: return "device not ready";
    default: return "error in the emulated GPU";
    }
}
