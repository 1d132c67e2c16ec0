/* Shared helpers of the GPU tests: skip when there is no GPU, random host data, device
 * buffers with a guard tail that catches writes past their end, and comparisons that
 * name the worst element.
 *
 * Every buffer a helper returns (host or device) is remembered and freed by
 * release_test_buffers(), which a test suite names as its .fini, so a test never frees
 * by hand. Device float buffers come from cuda_kernels.alloc and hold n floats followed by
 * GUARD_FLOATS sentinel values; device_download() checks the sentinels are untouched. */
#ifndef DTC_TESTS_GPU_TEST_UTIL_H
#define DTC_TESTS_GPU_TEST_UTIL_H

#include <float.h>
#include <stddef.h>

#include "cuda_device.h"
#include "kernels.h"
#include "rng.h"

/* u, the unit roundoff of fp32 (2^-24): the largest relative error of one correctly
 * rounded operation. Every tolerance of the GPU tests is a count of u times a magnitude. */
#define UNIT_ROUNDOFF ((double)FLT_EPSILON / 2.0)

enum { GUARD_FLOATS = 64 };

/* The CUDA build whose programs the tests run: $DTC_GPU_BUILD, or build/cuda (relative to
 * the repository root, where the tests run). */
const char *gpu_build_dir(void);

/* Skips the test (cr_skip_test "no GPU: ...") when no GPU can be used; otherwise selects
 * GPU 0 with cuBLAS in plain fp32 and asserts that worked. */
void require_gpu(void);
/* The same with cuBLAS in TF32 mode. */
void require_gpu_tf32(void);

/* On the emulated GPU (make test-emu), a kernel it cannot run (tests/emu/rewrite_launches.py)
 * skips the test that reached it, saying why: in the test's own process through this
 * function, which the emulation calls; in a program the test ran, from its output
 * (skip_what_the_emulation_cannot_run). */
void dtc_emu_skip(const char *message);
/* Whether the tests run on the emulated GPU (make test-emu sets DTC_EMU_GPUS). */
int gpu_is_emulated(void);
void skip_what_the_emulation_cannot_run(const char *output);

/* ---------------------------------------------------------------- host arrays */

float *host_uniform(Rng *rng, size_t n, float lo, float hi);
float *host_filled(size_t n, float value);
float *host_copy(const float *src, size_t n);
int *host_ints(Rng *rng, size_t n, int below);  /* uniform in [0, below) */
double max_abs(const float *x, size_t n);
/* a quiet NaN: what "garbage" buffers hold, so an element a kernel forgets to write fails
 * every comparison */
float nan_float(void);

/* ---------------------------------------------------------------- device arrays */

float *device_upload(const float *host, size_t n);
int *device_upload_ints(const int *host, size_t n);
/* n NaNs: the starting content of an output the kernel must overwrite */
float *device_garbage(size_t n);
/* A host copy of the n floats; asserts the guard tail after them is intact. */
float *device_download(const float *dev, size_t n, const char *what);
/* Overwrites the n floats of a device buffer from host (for re-running an op). */
void device_refill(float *dev, const float *host, size_t n);

void release_test_buffers(void);

/* ---------------------------------------------------------------- comparisons */

/* Element i passes when |actual - expected| <= atol + rtol * |expected|; NaN never passes. */
typedef struct {
    double atol, rtol;
} Tolerance;

/* Two fp32 sums of up to `terms` terms, each of size at most `magnitude`, computed in
 * different orders (cuBLAS or a GPU tree reduction against OpenBLAS or a CPU loop), with a
 * few roundings inside each term (products, FMA contraction): their difference stays
 * under 8 * terms * u * magnitude. Half of it covers the roundings inside the terms, a few
 * u each even when all of them line up. The other half covers the additions: for terms of
 * random sign their error is a random walk with a standard deviation of about
 * 0.4 * terms * u * rms(term) in sequential order (the worst order a real kernel uses;
 * blocked and tree orders do better), so the difference of two such sums stays within
 * about 7 standard deviations of it: a fixed seed does not land outside by chance. It
 * is still 5x (K = 3072) to 25x (K = 128) below the error of TF32 products (2^-11 per
 * input) and orders of magnitude below an indexing or formula mistake. */
double sum_atol(size_t terms, double magnitude);

/* Two fp32 sums of `terms` positive terms in different orders, as a relative difference.
 * Without cancellation each sum is within (terms - 1) u of the exact one in any order, so
 * 2 * terms * u bounds the difference. For many terms that worst case (every rounding the
 * same way) is far off: the roundings are a random walk of relative standard deviation
 * about sqrt(terms) u / 3 in sequential order, 0.5 sqrt(terms) u for a difference of two,
 * and 4 sqrt(terms) u is 8 of those. The bound is the smaller of the two, the second with
 * 16u more for sums too short for a random walk to be a model. */
double positive_sum_rtol(size_t terms);

/* Two fp32 sums of w_i x_i with w_i >= 0 summing to 1 (a softmax-weighted average) and
 * |x_i| <= magnitude: every partial sum stays within magnitude, so each addition rounds
 * by at most u * magnitude. The additions: the smaller of the worst case 2 * terms and
 * 8 * sqrt(terms) (10 standard deviations of the random walk) times u * magnitude; the
 * products add at most u * magnitude per sum. */
double convex_sum_atol(size_t terms, double magnitude);

void expect_close(const char *what, const float *actual, const float *expected, size_t n, Tolerance tol);
/* device_download + expect_close */
void expect_device_close(const char *what, const float *dev, const float *expected, size_t n, Tolerance tol);
/* Bit for bit; names the first differing element. */
void expect_identical(const char *what, const float *a, const float *b, size_t n);

#endif
