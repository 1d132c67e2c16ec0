#include "gpu_test_util.h"

#include <criterion/criterion.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- GPU selection */

const char *gpu_build_dir(void)
{
    const char *dir = getenv("DTC_GPU_BUILD");
    return dir != NULL && dir[0] != '\0' ? dir : "build/cuda";
}

static void require_gpu_mode(int tf32)
{
    char why[256] = "";
    if (!cuda_gpu_available(why, sizeof why))
        cr_skip_test("no GPU: %s", why);
    /* Tests may share a process (--no-fork): a second setup with the other tf32 value must
     * then switch the cuBLAS math mode, which cuda_device.cu does. */
    char err[256] = "";
    int rc = cuda_device_setup(0, tf32, err, sizeof err);
    cr_assert_eq(rc, 0, "cuda_device_setup(0, %d) failed: %s", tf32, err);
    cr_assert_eq(cuda_tf32_enabled(), tf32, "cuda_tf32_enabled() after setup with tf32 = %d", tf32);
    cr_assert_geq(cuda_device_index(), 0, "cuda_device_index() is -1 after a successful setup");
}

void require_gpu(void) { require_gpu_mode(0); }
void require_gpu_tf32(void) { require_gpu_mode(1); }

void dtc_emu_skip(const char *message) { cr_skip_test("%s", message); }

int gpu_is_emulated(void) { return getenv("DTC_EMU_GPUS") != NULL; }

void skip_what_the_emulation_cannot_run(const char *output)
{
    const char *said = strstr(output, "the emulated GPU cannot run kernel");
    if (said != NULL)
        cr_skip_test("%.*s", (int)strcspn(said, "\n"), said);
}

/* ---------------------------------------------------------------- buffer registry */

enum { MAX_TRACKED = 1024 };

static void *host_buffers[MAX_TRACKED];
static int host_count;
static void *device_buffers[MAX_TRACKED];
static int device_count;

static void *track_host(void *ptr)
{
    cr_assert_not_null(ptr, "host allocation failed");
    cr_assert_lt(host_count, MAX_TRACKED, "too many host buffers in one test");
    host_buffers[host_count++] = ptr;
    return ptr;
}

static void *track_device(void *ptr, size_t bytes)
{
    cr_assert_not_null(ptr, "cuda_kernels.alloc(%zu bytes) returned NULL", bytes);
    cr_assert_lt(device_count, MAX_TRACKED, "too many device buffers in one test");
    device_buffers[device_count++] = ptr;
    return ptr;
}

void release_test_buffers(void)
{
    for (int i = 0; i < host_count; i++)
        free(host_buffers[i]);
    for (int i = 0; i < device_count; i++)
        cuda_kernels.free(device_buffers[i]);
    host_count = device_count = 0;
}

/* ---------------------------------------------------------------- host arrays */

static float *host_floats(size_t n)
{
    /* one extra so that n = 0 is still a valid, distinct pointer */
    return track_host(malloc((n + 1) * sizeof(float)));
}

float *host_uniform(Rng *rng, size_t n, float lo, float hi)
{
    float *x = host_floats(n);
    for (size_t i = 0; i < n; i++)
        x[i] = lo + (hi - lo) * (float)rng_uniform(rng);
    return x;
}

float *host_filled(size_t n, float value)
{
    float *x = host_floats(n);
    for (size_t i = 0; i < n; i++)
        x[i] = value;
    return x;
}

float *host_copy(const float *src, size_t n)
{
    float *x = host_floats(n);
    memcpy(x, src, n * sizeof(float));
    return x;
}

int *host_ints(Rng *rng, size_t n, int below)
{
    int *x = track_host(malloc((n + 1) * sizeof(int)));
    for (size_t i = 0; i < n; i++)
        x[i] = (int)(rng_next_u64(rng) % (uint64_t)below);
    return x;
}

double max_abs(const float *x, size_t n)
{
    double largest = 0.0;
    for (size_t i = 0; i < n; i++)
        largest = fmax(largest, fabs((double)x[i]));
    return largest;
}

float nan_float(void) { return nanf(""); }

/* ---------------------------------------------------------------- device arrays */

/* A NaN with a payload no arithmetic produces: a write past the end changes its bits. */
static float guard_value(void)
{
    union { uint32_t bits; float value; } guard = {.bits = 0x7fa5a5a5u};
    return guard.value;
}

/* n floats from host, then the guard tail */
static float *device_floats_from(const float *host, size_t n)
{
    size_t bytes = (n + GUARD_FLOATS) * sizeof(float);
    float *staging = malloc(bytes);
    cr_assert_not_null(staging);
    memcpy(staging, host, n * sizeof(float));
    for (size_t i = n; i < n + GUARD_FLOATS; i++)
        staging[i] = guard_value();
    float *dev = track_device(cuda_kernels.alloc(bytes, MEM_OTHER), bytes);
    cuda_kernels.to_device(dev, staging, bytes);
    free(staging);
    return dev;
}

float *device_upload(const float *host, size_t n) { return device_floats_from(host, n); }

float *device_garbage(size_t n) { return device_floats_from(host_filled(n, nan_float()), n); }

int *device_upload_ints(const int *host, size_t n)
{
    size_t bytes = (n + 1) * sizeof(int);
    int *dev = track_device(cuda_kernels.alloc(bytes, MEM_OTHER), bytes);
    cuda_kernels.to_device(dev, host, n * sizeof(int));
    return dev;
}

void device_refill(float *dev, const float *host, size_t n)
{
    cuda_kernels.to_device(dev, host, n * sizeof(float));
}

float *device_download(const float *dev, size_t n, const char *what)
{
    float *with_guard = host_floats(n + GUARD_FLOATS);
    cuda_kernels.to_host(with_guard, dev, (n + GUARD_FLOATS) * sizeof(float));
    float guard = guard_value();
    for (size_t i = n; i < n + GUARD_FLOATS; i++)
        cr_assert(memcmp(&with_guard[i], &guard, sizeof guard) == 0,
                  "%s: the kernel wrote past the end of its %zu elements (element %zu now %.9g)",
                  what, n, i, with_guard[i]);
    return with_guard;
}

/* ---------------------------------------------------------------- comparisons */

double sum_atol(size_t terms, double magnitude)
{
    return 8.0 * (double)terms * UNIT_ROUNDOFF * magnitude;
}

double positive_sum_rtol(size_t terms)
{
    return UNIT_ROUNDOFF * fmin(2.0 * (double)terms, 16.0 + 4.0 * sqrt((double)terms));
}

double convex_sum_atol(size_t terms, double magnitude)
{
    return UNIT_ROUNDOFF * magnitude * (fmin(2.0 * (double)terms, 8.0 * sqrt((double)terms)) + 2.0);
}

/* How far element i is over its allowance: <= 1 passes; NaN and Inf never pass. */
static double excess(double actual, double expected, Tolerance tol)
{
    double diff = fabs(actual - expected);
    double allowed = tol.atol + tol.rtol * fabs(expected);
    if (!isfinite(diff))
        return INFINITY;
    if (allowed == 0.0)
        return diff == 0.0 ? 0.0 : INFINITY;
    return diff / allowed;
}

void expect_close(const char *what, const float *actual, const float *expected, size_t n, Tolerance tol)
{
    size_t worst = 0;
    double worst_excess = -1.0, largest_diff = 0.0;
    for (size_t i = 0; i < n; i++) {
        double e = excess(actual[i], expected[i], tol);
        largest_diff = fmax(largest_diff, fabs((double)actual[i] - expected[i]));
        if (e > worst_excess) {
            worst_excess = e;
            worst = i;
        }
    }
    cr_log_info("%-40s n=%8zu largest |cpu| %.3g, largest |gpu - cpu| %.3g, worst at %.3g of its tolerance "
                "(atol %.3g, rtol %.3g)",
                what, n, max_abs(expected, n), largest_diff, worst_excess, tol.atol, tol.rtol);
    if (n == 0)
        return;
    double diff = fabs((double)actual[worst] - expected[worst]);
    cr_assert(worst_excess <= 1.0,
              "%s: element %zu of %zu: gpu %.9g, cpu %.9g, |diff| %.3g > atol %.3g + rtol %.3g * |cpu| = %.3g",
              what, worst, n, actual[worst], expected[worst], diff, tol.atol, tol.rtol,
              tol.atol + tol.rtol * fabs((double)expected[worst]));
}

void expect_device_close(const char *what, const float *dev, const float *expected, size_t n, Tolerance tol)
{
    expect_close(what, device_download(dev, n, what), expected, n, tol);
}

void expect_identical(const char *what, const float *a, const float *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (memcmp(&a[i], &b[i], sizeof(float)) != 0)
            cr_assert_fail("%s: not bit-identical at element %zu of %zu: %.9g then %.9g",
                           what, i, n, a[i], b[i]);
}
