/* The CUDA Kernels table against the CPU one, op by op: the same random inputs go through
 * cpu_kernels on host buffers and cuda_kernels on device buffers, and every output is
 * compared element by element, |gpu - cpu| <= atol + rtol * |cpu|, the failure naming the
 * worst element. Without a GPU every test is skipped, saying why.
 *
 * What the inputs are built to catch:
 * - outputs a kernel overwrites start as NaN on the GPU, so an element it forgets fails;
 * - outputs it accumulates into (+=) start from nonzero random values on both devices, so
 *   overwriting instead of adding fails;
 * - every device buffer has a guard tail after its last element, so a write past the end
 *   fails (gpu_test_util.h);
 * - shapes are odd (T = 7, head size 12, OC = 40, V = 67, ...), and one has GPT-2 124M's
 *   widths (C = 768, 12 heads of 64, T = 1024, V = 50257), which the gpt2 preset runs:
 *   rows wider than a thread block, the longest attention; elementwise ops also run on
 *   2^24 + 37 elements, past one lap of a grid-stride loop capped at 65536 blocks.
 *
 * Tolerances. u is fp32's unit roundoff (2^-24); each tolerance below is derived from the
 * operations both devices perform, in comments beside it, using the three sum bounds of
 * gpu_test_util.h (sum_atol for sums of terms of any sign, positive_sum_rtol for positive
 * terms, convex_sum_atol for softmax-weighted averages). Ops that are one correctly rounded
 * operation per element (encoder forward, residual) must match bit for bit. None of them
 * was widened to make a test pass; each is far below the size of an indexing or formula
 * mistake (an O(1) change in some element). */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_test_util.h"

#define U UNIT_ROUNDOFF

static const Tolerance EXACT = {0.0, 0.0};

TestSuite(gpu_kernels, .fini = release_test_buffers);
TestSuite(gpu_tf32, .fini = release_test_buffers);
TestSuite(gpu_memory, .fini = release_test_buffers);

/* ---------------------------------------------------------------- shapes */

typedef struct {
    const char *name;
    int B, T, C, NH, OC, V;
} Shape;

static const Shape SHAPES[] = {
    {"small", 2, 7, 48, 4, 40, 67},         /* head size 12, nothing a multiple of 32 */
    {"medium", 3, 33, 96, 6, 100, 129},     /* head size 16, T one past a warp */
    {"large", 2, 64, 128, 4, 384, 300},     /* head size 32, OC = 3C */
    {"gpt2", 1, 1024, 768, 12, 3072, 50257} /* GPT-2 124M's widths, OC = 4C */
};
enum { NUM_SHAPES = sizeof SHAPES / sizeof SHAPES[0] };

/* elementwise ops: an odd small size and one past 2^24 */
static const size_t ELEMENTWISE_SIZES[] = {4099, ((size_t)1 << 24) + 37};
enum { NUM_ELEMENTWISE_SIZES = sizeof ELEMENTWISE_SIZES / sizeof ELEMENTWISE_SIZES[0] };

static size_t rows_of(const Shape *s) { return (size_t)s->B * s->T; }

/* "small: layernorm_forward out", for messages. C11 keeps a returned struct alive to the
 * end of the full expression, so label(...).text.text may be passed straight to a call. */
typedef struct {
    char text[160];
} Label;

static Label label(const char *prefix, const char *what)
{
    Label name;
    snprintf(name.text, sizeof name.text, "%.100s: %.50s", prefix, what);
    return name;
}

typedef void (*ShapeCheck)(const Shape *s, Rng *rng);

/* Runs check on every shape, each with its own seed, freeing its buffers after it (the
 * gpt2 shape's are large). */
static void for_each_shape(ShapeCheck check, uint64_t seed)
{
    for (int i = 0; i < NUM_SHAPES; i++) {
        Rng rng;
        rng_seed(&rng, seed + (uint64_t)i);
        check(&SHAPES[i], &rng);
        release_test_buffers();
    }
}

static double max_abs_difference(const float *a, const float *b, size_t n)
{
    double largest = 0.0;
    for (size_t i = 0; i < n; i++)
        largest = fmax(largest, fabs((double)a[i] - b[i]));
    return largest;
}

/* ---------------------------------------------------------------- encoder */

/* Token ids that repeat (a third of the positions take 0, 1 or 2, so several positions add
 * into one wte row, where a racy scatter loses updates) and end with V - 1 (wte's last
 * row). */
static int *random_tokens(Rng *rng, size_t n, int V)
{
    int *tokens = host_ints(rng, n, V);
    for (size_t i = 0; i < n; i++)
        if (rng_uniform(rng) < 1.0 / 3.0)
            tokens[i] = (int)(rng_next_u64(rng) % 3);
    tokens[n - 1] = V - 1;
    return tokens;
}

static int most_repeats(const int *tokens, size_t n, int V)
{
    int *count = calloc((size_t)V, sizeof(int));
    cr_assert_not_null(count);
    int most = 0;
    for (size_t i = 0; i < n; i++)
        most = ++count[tokens[i]] > most ? count[tokens[i]] : most;
    free(count);
    return most;
}

static void check_encoder_forward(const Shape *s, Rng *rng)
{
    size_t N = rows_of(s), C = (size_t)s->C, VC = (size_t)s->V * C, TC = (size_t)s->T * C;
    int *tokens = random_tokens(rng, N, s->V);
    float *wte = host_uniform(rng, VC, -1.0f, 1.0f), *wpe = host_uniform(rng, TC, -1.0f, 1.0f);
    float *expected = host_filled(N * C, 0.0f);
    cpu_kernels.encoder_forward(expected, tokens, wte, wpe, s->B, s->T, s->C);

    float *out = device_garbage(N * C);
    cuda_kernels.encoder_forward(out, device_upload_ints(tokens, N), device_upload(wte, VC), device_upload(wpe, TC),
                                 s->B, s->T, s->C);
    /* one addition per element, correctly rounded on both devices: the same bits */
    expect_device_close(label(s->name, "encoder_forward out").text, out, expected, N * C, EXACT);
}

static void check_encoder_backward(const Shape *s, Rng *rng)
{
    size_t N = rows_of(s), C = (size_t)s->C, VC = (size_t)s->V * C, TC = (size_t)s->T * C;
    int *tokens = random_tokens(rng, N, s->V);
    float *dout = host_uniform(rng, N * C, -1.0f, 1.0f);
    float *dwte_start = host_uniform(rng, VC, -1.0f, 1.0f), *dwpe_start = host_uniform(rng, TC, -1.0f, 1.0f);
    float *dwte_cpu = host_copy(dwte_start, VC), *dwpe_cpu = host_copy(dwpe_start, TC);
    cpu_kernels.encoder_backward(dwte_cpu, dwpe_cpu, dout, tokens, s->B, s->T, s->C);

    float *dwte = device_upload(dwte_start, VC), *dwpe = device_upload(dwpe_start, TC);
    float *dout_dev = device_upload(dout, N * C);
    int *tokens_dev = device_upload_ints(tokens, N);
    cuda_kernels.encoder_backward(dwte, dwpe, dout_dev, tokens_dev, s->B, s->T, s->C);
    float *dwte_gpu = device_download(dwte, VC, label(s->name, "encoder_backward dwte").text);
    float *dwpe_gpu = device_download(dwpe, TC, label(s->name, "encoder_backward dwpe").text);

    /* A dwte row sums its start value and one dout row per occurrence of its token, a dwpe
     * row its start value and B dout rows; every term is within 1. */
    Tolerance wte_tol = {sum_atol(1 + (size_t)most_repeats(tokens, N, s->V), 1.0), 0.0};
    Tolerance wpe_tol = {sum_atol(1 + (size_t)s->B, 1.0), 0.0};
    expect_close(label(s->name, "encoder_backward dwte").text, dwte_gpu, dwte_cpu, VC, wte_tol);
    expect_close(label(s->name, "encoder_backward dwpe").text, dwpe_gpu, dwpe_cpu, TC, wpe_tol);

    /* the same inputs again: the same bits */
    device_refill(dwte, dwte_start, VC);
    device_refill(dwpe, dwpe_start, TC);
    cuda_kernels.encoder_backward(dwte, dwpe, dout_dev, tokens_dev, s->B, s->T, s->C);
    expect_identical(label(s->name, "encoder_backward dwte, run twice").text, device_download(dwte, VC, "dwte"),
                     dwte_gpu, VC);
    expect_identical(label(s->name, "encoder_backward dwpe, run twice").text, device_download(dwpe, TC, "dwpe"),
                     dwpe_gpu, TC);
}

Test(gpu_kernels, encoder_forward)
{
    require_gpu();
    for_each_shape(check_encoder_forward, 100);
}

Test(gpu_kernels, encoder_backward_accumulates_repeated_tokens_deterministically)
{
    require_gpu();
    for_each_shape(check_encoder_backward, 200);
}

/* ---------------------------------------------------------------- layernorm */

typedef struct {
    float *inp, *weight, *bias;      /* inputs */
    float *out, *mean, *rstd;        /* the CPU's results */
    double xhat_max;                 /* largest |(x - mean) * rstd| */
} LayerNormCase;

/* Inputs off centre (mean about 0.3) so the mean matters, and the CPU forward. */
static LayerNormCase layernorm_case(const Shape *s, Rng *rng)
{
    size_t N = rows_of(s), C = (size_t)s->C;
    LayerNormCase lc;
    lc.inp = host_uniform(rng, N * C, -1.7f, 2.3f);
    lc.weight = host_uniform(rng, C, -1.5f, 1.5f);
    lc.bias = host_uniform(rng, C, -1.0f, 1.0f);
    lc.out = host_filled(N * C, 0.0f);
    lc.mean = host_filled(N, 0.0f);
    lc.rstd = host_filled(N, 0.0f);
    cpu_kernels.layernorm_forward(lc.out, lc.mean, lc.rstd, lc.inp, lc.weight, lc.bias, (int)N, (int)C);
    lc.xhat_max = 0.0;
    for (size_t n = 0; n < N; n++)
        for (size_t c = 0; c < C; c++)
            lc.xhat_max = fmax(lc.xhat_max, fabs(((double)lc.inp[n * C + c] - lc.mean[n]) * lc.rstd[n]));
    return lc;
}

static void check_layernorm_forward(const Shape *s, Rng *rng)
{
    size_t N = rows_of(s), C = (size_t)s->C;
    LayerNormCase lc = layernorm_case(s, rng);
    float *out = device_garbage(N * C), *mean = device_garbage(N), *rstd = device_garbage(N);
    cuda_kernels.layernorm_forward(out, mean, rstd, device_upload(lc.inp, N * C), device_upload(lc.weight, C),
                                   device_upload(lc.bias, C), (int)N, (int)C);

    double x_max = max_abs(lc.inp, N * C), w_max = max_abs(lc.weight, C), b_max = max_abs(lc.bias, C);
    double rstd_max = max_abs(lc.rstd, N);
    /* mean: a sum of C inputs, then a division (one rounding) */
    Tolerance mean_tol = {sum_atol(C, x_max) / (double)C, 2.0 * U};
    /* rstd: the variance sums C positive terms (x - mean)^2 (each rounded twice; the mean's
     * own error enters only at second order, d var / d mean being 0 there); then / C,
     * + eps, sqrt and 1 / (or rsqrt, 2 ulp): a few u each side, and the square root
     * halves the variance's relative error */
    Tolerance rstd_tol = {0.0, 0.5 * (positive_sum_rtol(C) + 6.0 * U) + 10.0 * U};
    /* out = (x - mean) * rstd * weight + bias: the mean's error times rstd * |weight|, the
     * rstd's relative error times |xhat * weight|, and four roundings per side at the
     * size of |xhat * weight| (the final add also at |bias|) */
    double mean_err = mean_tol.atol + mean_tol.rtol * max_abs(lc.mean, N);
    double xw_max = lc.xhat_max * w_max;
    Tolerance out_tol = {rstd_max * w_max * mean_err + xw_max * (rstd_tol.rtol + 8.0 * U) + 2.0 * U * b_max, 0.0};

    expect_device_close(label(s->name, "layernorm_forward mean").text, mean, lc.mean, N, mean_tol);
    expect_device_close(label(s->name, "layernorm_forward rstd").text, rstd, lc.rstd, N, rstd_tol);
    expect_device_close(label(s->name, "layernorm_forward out").text, out, lc.out, N * C, out_tol);
}

static void check_layernorm_backward(const Shape *s, Rng *rng)
{
    size_t N = rows_of(s), C = (size_t)s->C;
    LayerNormCase lc = layernorm_case(s, rng);
    float *dout = host_uniform(rng, N * C, -1.0f, 1.0f);
    float *dinp_start = host_uniform(rng, N * C, -1.0f, 1.0f);
    float *dweight_start = host_uniform(rng, C, -1.0f, 1.0f), *dbias_start = host_uniform(rng, C, -1.0f, 1.0f);
    float *dinp_cpu = host_copy(dinp_start, N * C);
    float *dweight_cpu = host_copy(dweight_start, C), *dbias_cpu = host_copy(dbias_start, C);
    cpu_kernels.layernorm_backward(dinp_cpu, dweight_cpu, dbias_cpu, dout, lc.inp, lc.weight, lc.mean, lc.rstd,
                                   (int)N, (int)C);

    /* the same mean and rstd on both devices: only the backward is compared */
    float *dinp = device_upload(dinp_start, N * C);
    float *dweight = device_upload(dweight_start, C), *dbias = device_upload(dbias_start, C);
    float *dout_dev = device_upload(dout, N * C), *inp = device_upload(lc.inp, N * C);
    float *weight = device_upload(lc.weight, C), *mean = device_upload(lc.mean, N), *rstd = device_upload(lc.rstd, N);
    cuda_kernels.layernorm_backward(dinp, dweight, dbias, dout_dev, inp, weight, mean, rstd, (int)N, (int)C);
    float *dinp_gpu = device_download(dinp, N * C, "dinp");
    float *dweight_gpu = device_download(dweight, C, "dweight"), *dbias_gpu = device_download(dbias, C, "dbias");

    double dy_max = max_abs(dout, N * C), start_max = 1.0, rstd_max = max_abs(lc.rstd, N);
    double dxhat_max = dy_max * max_abs(lc.weight, C), xhat_max = lc.xhat_max;
    /* dbias: its start value plus N values of dout; dweight: plus N products xhat * dout
     * (xhat recomputed from x, mean and rstd: two more roundings per term) */
    Tolerance dbias_tol = {sum_atol(N + 1, fmax(dy_max, start_max)), 0.0};
    Tolerance dweight_tol = {sum_atol(N + 1, fmax(xhat_max * dy_max, start_max)), 0.0};
    /* dinp += rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)): the two means are
     * sums of C terms over C; the bracket rounds a few times at the size of its operands
     * (|dxhat| + |mean(dxhat)| + |xhat * mean(dxhat xhat)| <= dxhat_max (2 + xhat_max^2)),
     * then the product with rstd and the add to the start value round once each */
    double mean1_err = sum_atol(C, dxhat_max) / (double)C;
    double mean2_err = sum_atol(C, dxhat_max * xhat_max) / (double)C;
    double bracket_max = dxhat_max * (2.0 + xhat_max * xhat_max);
    Tolerance dinp_tol = {rstd_max * (mean1_err + xhat_max * mean2_err + 8.0 * U * bracket_max) +
                              4.0 * U * (start_max + rstd_max * bracket_max),
                          0.0};
    expect_close(label(s->name, "layernorm_backward dinp").text, dinp_gpu, dinp_cpu, N * C, dinp_tol);
    expect_close(label(s->name, "layernorm_backward dweight").text, dweight_gpu, dweight_cpu, C, dweight_tol);
    expect_close(label(s->name, "layernorm_backward dbias").text, dbias_gpu, dbias_cpu, C, dbias_tol);

    /* the same inputs again: the same bits */
    device_refill(dinp, dinp_start, N * C);
    device_refill(dweight, dweight_start, C);
    device_refill(dbias, dbias_start, C);
    cuda_kernels.layernorm_backward(dinp, dweight, dbias, dout_dev, inp, weight, mean, rstd, (int)N, (int)C);
    expect_identical(label(s->name, "layernorm_backward dinp, run twice").text, device_download(dinp, N * C, "dinp"),
                     dinp_gpu, N * C);
    expect_identical(label(s->name, "layernorm_backward dweight, run twice").text,
                     device_download(dweight, C, "dweight"), dweight_gpu, C);
    expect_identical(label(s->name, "layernorm_backward dbias, run twice").text, device_download(dbias, C, "dbias"),
                     dbias_gpu, C);
}

Test(gpu_kernels, layernorm_forward)
{
    require_gpu();
    for_each_shape(check_layernorm_forward, 300);
}

Test(gpu_kernels, layernorm_backward_accumulates_deterministically)
{
    require_gpu();
    for_each_shape(check_layernorm_backward, 400);
}

/* ---------------------------------------------------------------- matmul */

/* What a matmul check multiplies: fp32 operands, or operands rounded to a 16-bit format. */
typedef enum { OPERANDS_FP32, OPERANDS_BF16, OPERANDS_FP16 } Operands;

static Format16 format_of(Operands operands) { return operands == OPERANDS_FP16 ? FORMAT_FP16 : FORMAT_BF16; }

/* The kernel a check runs, by its operands, for the failure messages. */
static const char *const FORWARD_NAMES[] = {"matmul_forward", "matmul_forward_16 (bf16)", "matmul_forward_16 (fp16)"};
static const char *const BACKWARD_NAMES[] = {"matmul_backward", "matmul_backward_16 (bf16)",
                                             "matmul_backward_16 (fp16)"};

/* Scratch for the operands the 16-bit matmuls round (kernels.h), on k's device: a float
 * each, room enough on either. */
static void *operands_on(const Kernels *k, size_t N, size_t C, size_t OC)
{
    size_t room = N * C + OC * C + N * OC;
    return k == &cpu_kernels ? (void *)host_filled(room, 0.0f) : (void *)device_garbage(room);
}

static void matmul_forward_on(const Kernels *k, Operands operands, float *out, const float *inp, const float *weight,
                              const float *bias, size_t N, size_t C, size_t OC)
{
    if (operands == OPERANDS_FP32) {
        k->matmul_forward(out, inp, weight, bias, (int)N, (int)C, (int)OC);
        return;
    }
    k->matmul_forward_16(format_of(operands), out, inp, weight, bias, (int)N, (int)C, (int)OC,
                         operands_on(k, N, C, OC));
}

static void matmul_backward_on(const Kernels *k, Operands operands, float *dinp, float *dweight, float *dbias,
                               const float *dout, const float *inp, const float *weight, size_t N, size_t C,
                               size_t OC)
{
    if (operands == OPERANDS_FP32) {
        k->matmul_backward(dinp, dweight, dbias, dout, inp, weight, (int)N, (int)C, (int)OC);
        return;
    }
    k->matmul_backward_16(format_of(operands), dinp, dweight, dbias, dout, inp, weight, (int)N, (int)C, (int)OC,
                          operands_on(k, N, C, OC));
}

/* With 16-bit operands, both devices round the same operands and multiply them exactly, so
 * only the order of the fp32 sums differs, as in fp32. */
static void check_matmul_forward(const Shape *s, Rng *rng, int with_bias, Operands operands)
{
    size_t N = rows_of(s), C = (size_t)s->C, OC = (size_t)s->OC;
    float *inp = host_uniform(rng, N * C, -1.0f, 1.0f), *weight = host_uniform(rng, OC * C, -1.0f, 1.0f);
    float *bias = with_bias ? host_uniform(rng, OC, -1.0f, 1.0f) : NULL;
    float *expected = host_filled(N * OC, 0.0f);
    matmul_forward_on(&cpu_kernels, operands, expected, inp, weight, bias, N, C, OC);

    float *out = device_garbage(N * OC);
    matmul_forward_on(&cuda_kernels, operands, out, device_upload(inp, N * C), device_upload(weight, OC * C),
                      with_bias ? device_upload(bias, OC) : NULL, N, C, OC);
    /* C products within 1 (plus the bias, within 1, added in either order) */
    Tolerance tol = {sum_atol(C + 1, 1.0), 0.0};
    Label kernel = label(s->name, FORWARD_NAMES[operands]);
    expect_device_close(label(kernel.text, with_bias ? "out (bias)" : "out (no bias)").text, out, expected, N * OC,
                        tol);
}

static void check_matmul_backward(const Shape *s, Rng *rng, int with_dbias, Operands operands)
{
    size_t N = rows_of(s), C = (size_t)s->C, OC = (size_t)s->OC;
    Label kernel = label(s->name, BACKWARD_NAMES[operands]);
    Label tag = with_dbias ? kernel : label(kernel.text, "(dbias NULL)");
    float *dout = host_uniform(rng, N * OC, -1.0f, 1.0f);
    float *inp = host_uniform(rng, N * C, -1.0f, 1.0f), *weight = host_uniform(rng, OC * C, -1.0f, 1.0f);
    float *dweight_start = host_uniform(rng, OC * C, -1.0f, 1.0f), *dbias_start = host_uniform(rng, OC, -1.0f, 1.0f);
    float *dinp_cpu = host_filled(N * C, 0.0f);
    float *dweight_cpu = host_copy(dweight_start, OC * C), *dbias_cpu = host_copy(dbias_start, OC);
    matmul_backward_on(&cpu_kernels, operands, dinp_cpu, dweight_cpu, with_dbias ? dbias_cpu : NULL, dout, inp, weight,
                       N, C, OC);

    float *dinp = device_garbage(N * C); /* overwritten */
    float *dweight = device_upload(dweight_start, OC * C), *dbias = device_upload(dbias_start, OC);
    float *dout_dev = device_upload(dout, N * OC), *inp_dev = device_upload(inp, N * C);
    float *weight_dev = device_upload(weight, OC * C);
    float *dbias_arg = with_dbias ? dbias : NULL;
    matmul_backward_on(&cuda_kernels, operands, dinp, dweight, dbias_arg, dout_dev, inp_dev, weight_dev, N, C, OC);
    float *dinp_gpu = device_download(dinp, N * C, "dinp");
    float *dweight_gpu = device_download(dweight, OC * C, "dweight");
    float *dbias_gpu = device_download(dbias, OC, "dbias");

    /* all inputs and start values within 1: dinp sums OC products; dweight and dbias each
     * sum a start value and N products (values) */
    Tolerance dinp_tol = {sum_atol(OC, 1.0), 0.0}, accumulated_tol = {sum_atol(N + 1, 1.0), 0.0};
    expect_close(label(tag.text, "dinp").text, dinp_gpu, dinp_cpu, N * C, dinp_tol);
    expect_close(label(tag.text, "dweight").text, dweight_gpu, dweight_cpu, OC * C, accumulated_tol);
    /* with dbias NULL the untouched buffer must still hold its start values */
    expect_close(label(tag.text, "dbias").text, dbias_gpu, with_dbias ? dbias_cpu : dbias_start, OC,
                 with_dbias ? accumulated_tol : EXACT);

    /* the same inputs again: the same bits */
    device_refill(dinp, host_filled(N * C, nan_float()), N * C);
    device_refill(dweight, dweight_start, OC * C);
    device_refill(dbias, dbias_start, OC);
    matmul_backward_on(&cuda_kernels, operands, dinp, dweight, dbias_arg, dout_dev, inp_dev, weight_dev, N, C, OC);
    expect_identical(label(tag.text, "dinp, run twice").text, device_download(dinp, N * C, "dinp"), dinp_gpu, N * C);
    expect_identical(label(tag.text, "dweight, run twice").text, device_download(dweight, OC * C, "dweight"),
                     dweight_gpu, OC * C);
    expect_identical(label(tag.text, "dbias, run twice").text, device_download(dbias, OC, "dbias"), dbias_gpu, OC);
}

/* A matmul check, with and without the bias (or dbias), on each of the operands from first
 * to last. */
typedef void (*MatmulCheck)(const Shape *s, Rng *rng, int with_bias, Operands operands);

static void check_operands(MatmulCheck check, const Shape *s, Rng *rng, Operands first, Operands last)
{
    for (Operands operands = first; operands <= last; operands++) {
        check(s, rng, 1, operands);
        check(s, rng, 0, operands);
    }
}

static void check_matmul_forward_both(const Shape *s, Rng *rng)
{
    check_operands(check_matmul_forward, s, rng, OPERANDS_FP32, OPERANDS_FP32);
}

static void check_matmul_forward_16bit(const Shape *s, Rng *rng)
{
    check_operands(check_matmul_forward, s, rng, OPERANDS_BF16, OPERANDS_FP16);
}

static void check_matmul_backward_both(const Shape *s, Rng *rng)
{
    check_operands(check_matmul_backward, s, rng, OPERANDS_FP32, OPERANDS_FP32);
}

static void check_matmul_backward_16bit(const Shape *s, Rng *rng)
{
    check_operands(check_matmul_backward, s, rng, OPERANDS_BF16, OPERANDS_FP16);
}

Test(gpu_kernels, matmul_forward_with_and_without_bias)
{
    require_gpu();
    for_each_shape(check_matmul_forward_both, 500);
}

Test(gpu_kernels, matmul_backward_with_and_without_dbias_deterministically)
{
    require_gpu();
    for_each_shape(check_matmul_backward_both, 600);
}

Test(gpu_kernels, matmul_forward_on_bf16_and_fp16_operands)
{
    require_gpu();
    for_each_shape(check_matmul_forward_16bit, 510);
}

Test(gpu_kernels, matmul_backward_on_bf16_and_fp16_operands_deterministically)
{
    require_gpu();
    for_each_shape(check_matmul_backward_16bit, 610);
}

/* ---------------------------------------------------------------- attention */

/* The kernel a check runs, by its operands, for the failure messages. */
static const char *const ATTENTION_FORWARD_NAMES[] = {"attention_forward", "attention_forward_16 (bf16)",
                                                      "attention_forward_16 (fp16)"};

/* Scratch for the operands the 16-bit attention rounds (kernels.h), on k's device. */
static void *attention_operands_on(const Kernels *k, const Shape *s)
{
    size_t room = attention_operands16(s->B, s->T, s->C, s->NH);
    return k == &cpu_kernels ? (void *)host_filled(room, 0.0f) : (void *)device_garbage(room);
}

static void attention_forward_on(const Kernels *k, Operands operands, float *out, float *att, float *scratch,
                                 const float *qkv, const Shape *s)
{
    if (operands == OPERANDS_FP32)
        k->attention_forward(out, att, scratch, qkv, s->B, s->T, s->C, s->NH);
    else
        k->attention_forward_16(format_of(operands), out, att, scratch, qkv, s->B, s->T, s->C, s->NH,
                                attention_operands_on(k, s));
}

static void attention_backward_on(const Kernels *k, Operands operands, float *dqkv, float *scratch, const float *dout,
                                  const float *qkv, const float *att, const Shape *s)
{
    if (operands == OPERANDS_FP32)
        k->attention_backward(dqkv, scratch, dout, qkv, att, s->B, s->T, s->C, s->NH);
    else
        k->attention_backward_16(format_of(operands), dqkv, scratch, dout, qkv, att, s->B, s->T, s->C, s->NH,
                                 attention_operands_on(k, s));
}

/* x as a 16-bit operand holds it (itself in fp32) */
static float operand_value(Operands operands, float x)
{
    if (operands == OPERANDS_FP32)
        return x;
    return float16_to_float(format_of(operands), float_to_float16(format_of(operands), x));
}

static float *operand_values(Operands operands, const float *x, size_t n)
{
    float *rounded = host_filled(n, 0.0f);
    for (size_t i = 0; i < n; i++)
        rounded[i] = operand_value(operands, x[i]);
    return rounded;
}

/* One bf16 or fp16 step at the size of x (2^-7 or 2^-10 of x at most), or 0 in fp32: how
 * far a value can round differently on the two devices when it differs by less than that. */
static double operand_step(Operands operands)
{
    return operands == OPERANDS_FP32 ? 0.0 : operands == OPERANDS_BF16 ? 0x1p-7 : 0x1p-10;
}

typedef struct {
    float *qkv, *out, *att; /* inputs and the CPU forward's results */
    double qkv_max;         /* of q, k and v as the products read them */
    Operands operands;
} AttentionCase;

/* q, k, v in [-2, 2]: scores q.k / sqrt(hs) of standard deviation about 1.3, so the
 * softmax rows are neither flat nor one-hot. */
static AttentionCase attention_case(const Shape *s, Rng *rng, Operands operands)
{
    size_t N = rows_of(s), C = (size_t)s->C, BHTT = (size_t)s->B * s->NH * s->T * s->T;
    AttentionCase ac;
    ac.operands = operands;
    ac.qkv = host_uniform(rng, N * 3 * C, -2.0f, 2.0f);
    ac.out = host_filled(N * C, 0.0f);
    ac.att = host_filled(BHTT, 0.0f);
    float *scratch = host_filled(attention_scratch_floats(s->T, s->C, s->NH), 0.0f);
    attention_forward_on(&cpu_kernels, operands, ac.out, ac.att, scratch, ac.qkv, s);
    ac.qkv_max = max_abs(operand_values(operands, ac.qkv, N * 3 * C), N * 3 * C);
    return ac;
}

static void expect_causal_zeros(const char *what, const float *att, const Shape *s)
{
    size_t T = (size_t)s->T;
    for (size_t bh = 0; bh < (size_t)s->B * s->NH; bh++)
        for (size_t t = 0; t < T; t++)
            for (size_t j = t + 1; j < T; j++) {
                float p = att[(bh * T + t) * T + j];
                cr_assert(p == 0.0f, "%s: att of head %zu, row %zu, column %zu (above the diagonal) is %.9g, not 0",
                          what, bh, t, j, p);
            }
}

/* out_t = sum_j p_tj v_j, in double, from the probabilities att and v as the products read
 * them. */
static float *attention_out_from(const float *att, const AttentionCase *ac, const Shape *s)
{
    size_t T = (size_t)s->T, C = (size_t)s->C, NH = (size_t)s->NH, hs = C / NH;
    float *out = host_filled(rows_of(s) * C, 0.0f);
    for (size_t b = 0; b < (size_t)s->B; b++)
        for (size_t h = 0; h < NH; h++)
            for (size_t t = 0; t < T; t++)
                for (size_t i = 0; i < hs; i++) {
                    double sum = 0.0;
                    for (size_t j = 0; j <= t; j++)
                        sum += (double)operand_value(ac->operands, att[((b * NH + h) * T + t) * T + j]) *
                               operand_value(ac->operands, ac->qkv[(b * T + j) * 3 * C + 2 * C + h * hs + i]);
                    out[(b * T + t) * C + h * hs + i] = (float)sum;
                }
    return out;
}

static void check_attention_forward(const Shape *s, Rng *rng, Operands operands)
{
    size_t N = rows_of(s), C = (size_t)s->C, T = (size_t)s->T, hs = C / (size_t)s->NH;
    size_t BHTT = (size_t)s->B * s->NH * T * T;
    Label tag = label(s->name, ATTENTION_FORWARD_NAMES[operands]);
    AttentionCase ac = attention_case(s, rng, operands);
    float *out = device_garbage(N * C), *att = device_garbage(BHTT);
    float *scratch = device_garbage(attention_scratch_floats(s->T, s->C, s->NH));
    attention_forward_on(&cuda_kernels, operands, out, att, scratch, device_upload(ac.qkv, N * 3 * C), s);

    double scale = 1.0 / sqrt((double)hs);
    /* scores: hs products of q and k (the same operands on both devices), times the scale
     * (on the sum or on the products) */
    double score_err = scale * sum_atol(hs + 1, ac.qkv_max * ac.qkv_max);
    /* p_j = exp(s_j - max) / sum_k exp(s_k - max): score errors e move log p_j by at most
     * 2e; then as in softmax_crossentropy_forward: the sum of up to T positive terms, and
     * 10u per side (exp of p_j and of the sum's terms, 2 ulp each; the normalisation) */
    Tolerance att_tol = {0.0, 2.0 * score_err + positive_sum_rtol(T) + 20.0 * U};
    /* out = p . v, a softmax-weighted average of up to T values of v: the p errors move
     * it by at most att_tol.rtol * |v| */
    Tolerance out_tol = {att_tol.rtol * ac.qkv_max + convex_sum_atol(T, ac.qkv_max), 0.0};

    float *att_gpu = device_download(att, BHTT, label(tag.text, "att").text);
    expect_causal_zeros(label(tag.text, "att").text, att_gpu, s);
    expect_close(label(tag.text, "att").text, att_gpu, ac.att, BHTT, att_tol);
    if (operands == OPERANDS_FP32) {
        expect_device_close(label(tag.text, "out").text, out, ac.out, N * C, out_tol);
        return;
    }
    /* On 16-bit operands a probability within att_tol of the CPU's can round to the next
     * 16-bit value, so out is held to the GPU's own probabilities, rounded: each product
     * exact, only the order of the sum differs (the CPU's is checked so in test_bf16.c). */
    Tolerance own_tol = {convex_sum_atol(T, ac.qkv_max), 0.0};
    expect_device_close(label(tag.text, "out (from its own att)").text, out, attention_out_from(att_gpu, &ac, s), N * C,
                        own_tol);
}

typedef struct {
    double dp_max;     /* largest |dp_tj| = |dy_t . v_j| over the causal part */
    double ds_max;     /* largest |ds_tj| = |scale p_tj (dp_tj - sum_k p_tk dp_tk)| */
    double colsum_max; /* largest sum over t of p_tj: how many rows' ds weigh on one dk row */
    /* On 16-bit operands: the largest sum of |ds_tj| over a row (over j), and over a column
     * (over t), of the elements that may round to different 16-bit values on the two
     * devices: those within ds_err of a point where the rounding changes. */
    double ds_row_max, ds_col_max;
} AttentionMagnitudes;

/* Whether x within err either way rounds to more than one 16-bit value (err widened by
 * half again, for the rounding of x + err itself). */
static int rounding_may_differ(Operands operands, double x, double err)
{
    return operands != OPERANDS_FP32 &&
           operand_value(operands, (float)(x - 1.5 * err)) != operand_value(operands, (float)(x + 1.5 * err));
}

/* The sizes the backward's error bounds scale with, worked out in double from the inputs
 * (dy and v as the products read them). ds_err_per_p: each device's ds_tj within
 * p_tj * ds_err_per_p of the exact one, for the ds_row_max and ds_col_max of 16-bit
 * operands (0: not yet known, and they are 0). */
static AttentionMagnitudes attention_magnitudes(const Shape *s, const float *dout, const AttentionCase *ac,
                                                double ds_err_per_p)
{
    size_t T = (size_t)s->T, C = (size_t)s->C, NH = (size_t)s->NH, hs = C / NH;
    double scale = 1.0 / sqrt((double)hs);
    const float *dy_all = operand_values(ac->operands, dout, rows_of(s) * C);
    const float *qkv = operand_values(ac->operands, ac->qkv, rows_of(s) * 3 * C);
    double *dp = malloc(T * sizeof(double)), *colsum = malloc(T * sizeof(double));
    double *ds_colsum = malloc(T * sizeof(double));
    cr_assert(dp != NULL && colsum != NULL && ds_colsum != NULL);
    AttentionMagnitudes m = {0.0, 0.0, 0.0, 0.0, 0.0};
    for (size_t b = 0; b < (size_t)s->B; b++)
        for (size_t h = 0; h < NH; h++) {
            memset(colsum, 0, T * sizeof(double));
            memset(ds_colsum, 0, T * sizeof(double));
            for (size_t t = 0; t < T; t++) {
                const float *dy = dy_all + (b * T + t) * C + h * hs;
                const float *p = ac->att + ((b * NH + h) * T + t) * T;
                double dot = 0.0, ds_rowsum = 0.0;
                for (size_t j = 0; j <= t; j++) {
                    const float *v = qkv + (b * T + j) * 3 * C + 2 * C + h * hs;
                    double d = 0.0;
                    for (size_t i = 0; i < hs; i++)
                        d += (double)dy[i] * v[i];
                    dp[j] = d;
                    dot += p[j] * d;
                    colsum[j] += p[j];
                    m.dp_max = fmax(m.dp_max, fabs(d));
                }
                for (size_t j = 0; j <= t; j++) {
                    double ds = scale * p[j] * (dp[j] - dot);
                    m.ds_max = fmax(m.ds_max, fabs(ds));
                    if (ds_err_per_p > 0.0 && rounding_may_differ(ac->operands, ds, p[j] * ds_err_per_p)) {
                        ds_rowsum += fabs(ds);
                        ds_colsum[j] += fabs(ds);
                    }
                }
                m.ds_row_max = fmax(m.ds_row_max, ds_rowsum);
            }
            for (size_t j = 0; j < T; j++) {
                m.colsum_max = fmax(m.colsum_max, colsum[j]);
                m.ds_col_max = fmax(m.ds_col_max, ds_colsum[j]);
            }
        }
    free(dp);
    free(colsum);
    free(ds_colsum);
    return m;
}

/* Columns part*C .. part*C + C - 1 of each row of an N x 3C array: dq, dk or dv. */
static float *qkv_part(const float *qkv, size_t N, size_t C, size_t part)
{
    float *x = host_filled(N * C, 0.0f);
    for (size_t n = 0; n < N; n++)
        memcpy(x + n * C, qkv + n * 3 * C + part * C, C * sizeof(float));
    return x;
}

/* memory_limited: the tracking allocator's limit is set to what is in use just before the
 * call, so the kernel cannot get memory beyond the scratch it is handed. */
/* How much memory attention_backward may borrow beyond its scratch: any, one sequence's
 * d(scores) (NH x T x T floats), or none; each takes its own path, with the same sums. */
typedef enum { BORROW_ANY, BORROW_ONE_SEQUENCE, BORROW_NONE } Borrowing;

static const char *const BORROWING_NAMES[] = {"attention_backward", "attention_backward (one sequence at a time)",
                                              "attention_backward (no memory beyond scratch)"};

static const char *const OPERANDS_NAMES[] = {"", " on bf16 operands", " on fp16 operands"};

static void check_attention_backward(const Shape *s, Rng *rng, Borrowing borrowing, Operands operands)
{
    size_t N = rows_of(s), C = (size_t)s->C, T = (size_t)s->T, hs = C / (size_t)s->NH;
    char name[128];
    snprintf(name, sizeof name, "%s%s", BORROWING_NAMES[borrowing], OPERANDS_NAMES[operands]);
    Label tag = label(s->name, name);
    AttentionCase ac = attention_case(s, rng, operands);
    float *dout = host_uniform(rng, N * C, -1.0f, 1.0f);
    size_t scratch_floats = attention_scratch_floats(s->T, s->C, s->NH);
    float *dqkv_cpu = host_filled(N * 3 * C, 0.0f), *scratch_cpu = host_filled(scratch_floats, 0.0f);
    attention_backward_on(&cpu_kernels, operands, dqkv_cpu, scratch_cpu, dout, ac.qkv, ac.att, s);

    /* the CPU forward's probabilities on both devices: only the backward is compared */
    float *dqkv = device_garbage(N * 3 * C), *scratch = device_garbage(scratch_floats);
    float *dout_dev = device_upload(dout, N * C), *qkv = device_upload(ac.qkv, N * 3 * C);
    float *att = device_upload(ac.att, (size_t)s->B * s->NH * T * T);
    size_t one_sequence_bytes = (size_t)s->NH * T * T * sizeof(float);
    void *operands_dev = operands == OPERANDS_FP32 ? NULL : attention_operands_on(&cuda_kernels, s);
    if (borrowing != BORROW_ANY)
        mem_set_limit(mem_in_use_total() - mem_in_use(MEM_DATA) +
                      (borrowing == BORROW_ONE_SEQUENCE ? one_sequence_bytes : 0));
    if (operands == OPERANDS_FP32)
        cuda_kernels.attention_backward(dqkv, scratch, dout_dev, qkv, att, s->B, s->T, s->C, s->NH);
    else
        cuda_kernels.attention_backward_16(format_of(operands), dqkv, scratch, dout_dev, qkv, att, s->B, s->T, s->C,
                                           s->NH, operands_dev);
    cuda_kernels.synchronize();
    mem_set_limit(0);
    float *dqkv_gpu = device_download(dqkv, N * 3 * C, tag.text);
    device_download(scratch, scratch_floats, label(tag.text, "scratch").text); /* its guard tail */

    AttentionMagnitudes m = attention_magnitudes(s, dout, &ac, 0.0);
    double dy_max = max_abs(operand_values(operands, dout, N * C), N * C), qkv_max = ac.qkv_max;
    double scale = 1.0 / sqrt((double)hs);
    /* dp = dy . v^T: hs products */
    double dp_err = sum_atol(hs, dy_max * qkv_max);
    /* ds_j = scale p_j (dp_j - dot), dot = sum_k p_k dp_k a softmax-weighted average: its
     * error is dp_err plus its own sum's; the subtraction and products round a few times
     * at the size of dp. So |error of ds_j| <= p_j * ds_err_per_p: */
    double ds_err_per_p = scale * (2.0 * dp_err + convex_sum_atol(T, m.dp_max) + 8.0 * U * m.dp_max);
    m = attention_magnitudes(s, dout, &ac, ds_err_per_p);
    /* dq_t = sum_j ds_tj k_j: the ds errors of row t weigh sum_j p_tj = 1 times |k|, plus
     * the sum's own rounding over up to T terms; on 16-bit operands a ds near a point where
     * the rounding changes may also round one step apart on the two devices: at most a
     * step of each such |ds_tj| */
    double step = operand_step(operands);
    Tolerance dq_tol = {qkv_max * (ds_err_per_p + step * m.ds_row_max) + sum_atol(T, m.ds_max * qkv_max), 0.0};
    /* dk_j = sum_t ds_tj q_t: the ds errors of column j weigh sum_t p_tj <= colsum_max */
    Tolerance dk_tol = {qkv_max * (m.colsum_max * ds_err_per_p + step * m.ds_col_max) +
                            sum_atol(T, m.ds_max * qkv_max),
                        0.0};
    /* dv_j = sum_t p_tj dy_t: the same p (and its rounding) on both devices, up to T terms
     * within dy_max */
    Tolerance dv_tol = {sum_atol(T, dy_max), 0.0};

    expect_close(label(tag.text, "dq").text, qkv_part(dqkv_gpu, N, C, 0), qkv_part(dqkv_cpu, N, C, 0), N * C, dq_tol);
    expect_close(label(tag.text, "dk").text, qkv_part(dqkv_gpu, N, C, 1), qkv_part(dqkv_cpu, N, C, 1), N * C, dk_tol);
    expect_close(label(tag.text, "dv").text, qkv_part(dqkv_gpu, N, C, 2), qkv_part(dqkv_cpu, N, C, 2), N * C, dv_tol);

    if (borrowing == BORROW_ANY) { /* the same inputs again: the same bits */
        device_refill(dqkv, host_filled(N * 3 * C, nan_float()), N * 3 * C);
        attention_backward_on(&cuda_kernels, operands, dqkv, scratch, dout_dev, qkv, att, s);
        expect_identical(label(tag.text, "dqkv, run twice").text, device_download(dqkv, N * 3 * C, "dqkv"), dqkv_gpu,
                         N * 3 * C);
    }
}

static void check_attention_backward_plain(const Shape *s, Rng *rng)
{
    check_attention_backward(s, rng, BORROW_ANY, OPERANDS_FP32);
}
static void check_attention_backward_by_sequence(const Shape *s, Rng *rng)
{
    check_attention_backward(s, rng, BORROW_ONE_SEQUENCE, OPERANDS_FP32);
}
static void check_attention_backward_limited(const Shape *s, Rng *rng)
{
    check_attention_backward(s, rng, BORROW_NONE, OPERANDS_FP32);
}
/* 16-bit: with all the memory it asks for, and with none beyond its scratch */
static void check_attention_backward_16bit(const Shape *s, Rng *rng)
{
    for (Operands operands = OPERANDS_BF16; operands <= OPERANDS_FP16; operands++) {
        check_attention_backward(s, rng, BORROW_ANY, operands);
        check_attention_backward(s, rng, BORROW_NONE, operands);
    }
}

static void check_attention_forward_fp32(const Shape *s, Rng *rng) { check_attention_forward(s, rng, OPERANDS_FP32); }
static void check_attention_forward_16bit(const Shape *s, Rng *rng)
{
    check_attention_forward(s, rng, OPERANDS_BF16);
    check_attention_forward(s, rng, OPERANDS_FP16);
}

Test(gpu_kernels, attention_forward_is_causal)
{
    require_gpu();
    for_each_shape(check_attention_forward_fp32, 700);
}

Test(gpu_kernels, attention_forward_on_bf16_and_fp16_operands)
{
    require_gpu();
    for_each_shape(check_attention_forward_16bit, 710);
}

/* Against the CPU, run twice for the same bits, and under a limit that lends it nothing. */
Test(gpu_kernels, attention_backward_on_bf16_and_fp16_operands)
{
    require_gpu();
    for_each_shape(check_attention_backward_16bit, 810);
}

/* Against the CPU, and run twice for the same bits. */
Test(gpu_kernels, attention_backward)
{
    require_gpu();
    for_each_shape(check_attention_backward_plain, 800);
}

/* With room for one sequence's d(scores) and not for every sequence's, the batches are one
 * sequence's heads. */
Test(gpu_kernels, attention_backward_one_sequence_at_a_time)
{
    require_gpu();
    size_t refusals = mem_limit_refusals();
    for_each_shape(check_attention_backward_by_sequence, 800);
    size_t refused = mem_limit_refusals() - refusals;
    cr_log_info("attention_backward with room for one sequence: %zu allocation(s) refused", refused);
    cr_expect(refused > 0, "the limit refused no allocation: every sequence's d(scores) fit, so this ran the "
                           "batch over every head again");
}

/* kernels.h promises only attention_scratch_floats of scratch: under a memory limit that
 * refuses any further allocation the result must be the same. */
Test(gpu_kernels, attention_backward_with_no_memory_beyond_its_scratch)
{
    require_gpu();
    size_t refusals = mem_limit_refusals();
    for_each_shape(check_attention_backward_limited, 800);
    cr_log_info("attention_backward under the limit: %zu allocation(s) refused", mem_limit_refusals() - refusals);
}

/* ---------------------------------------------------------------- GELU, residual */

/* Inputs in [-5, 5]: both tails, where the GELU's gate is close to 0 (x << 0) or to 1. */
static void check_gelu(size_t n, Rng *rng)
{
    char tag[64];
    snprintf(tag, sizeof tag, "n=%zu", n);
    /* each device's backward reads what its own forward left in the input (kernels.h) */
    float *inp = host_uniform(rng, n, -5.0f, 5.0f), *left_cpu = host_copy(inp, n);
    float *out_cpu = host_filled(n, 0.0f);
    cpu_kernels.gelu_forward(out_cpu, left_cpu, n);
    float *dinout_start = host_uniform(rng, n, -1.0f, 1.0f), *dinout_cpu = host_copy(dinout_start, n);
    cpu_kernels.gelu_backward(dinout_cpu, left_cpu, n);

    float *left = device_upload(inp, n), *out = device_garbage(n), *dinout = device_upload(dinout_start, n);
    cuda_kernels.gelu_forward(out, left, n);
    cuda_kernels.gelu_backward(dinout, left, n);

    /* Both devices call the same functions (scalar_math.h), whose every multiply followed by
     * an add is one explicit fused multiply-add; the one multiply left before an add, e^x's
     * by a power of two, is exact; the rest are single IEEE operations (division included:
     * nvcc's is correctly rounded unless told otherwise). So the same bits. */
    expect_device_close(label(tag, "gelu_forward out").text, out, out_cpu, n, EXACT);
    expect_device_close(label(tag, "gelu_backward dinp").text, dinout, dinout_cpu, n, EXACT);
}

static void check_residual(size_t n, Rng *rng)
{
    char tag[64];
    snprintf(tag, sizeof tag, "n=%zu", n);
    float *a = host_uniform(rng, n, -3.0f, 3.0f), *b = host_uniform(rng, n, -3.0f, 3.0f);
    float *expected = host_filled(n, 0.0f);
    cpu_kernels.residual_forward(expected, a, b, n);
    float *out = device_garbage(n);
    cuda_kernels.residual_forward(out, device_upload(a, n), device_upload(b, n), n);
    /* one correctly rounded addition per element: the same bits */
    expect_device_close(label(tag, "residual_forward out").text, out, expected, n, EXACT);
}

Test(gpu_kernels, gelu_forward_and_backward)
{
    require_gpu();
    Rng rng;
    rng_seed(&rng, 900);
    for (int i = 0; i < NUM_ELEMENTWISE_SIZES; i++) {
        check_gelu(ELEMENTWISE_SIZES[i], &rng);
        release_test_buffers();
    }
}

Test(gpu_kernels, residual_forward)
{
    require_gpu();
    Rng rng;
    rng_seed(&rng, 1000);
    for (int i = 0; i < NUM_ELEMENTWISE_SIZES; i++) {
        check_residual(ELEMENTWISE_SIZES[i], &rng);
        release_test_buffers();
    }
}

/* Every float whose low 16 bits are one of a spread of patterns (ties both ways, NaNs,
 * infinities, subnormals: tests/test_bf16.c and test_fp16.c hold the CPU to the
 * definitions), rounded to the format on the GPU and widened back there: the CPU's bits
 * exactly. */
static void check_rounding(Format16 format)
{
    const uint32_t low_bits[] = {0x0000, 0x0001, 0x0fff, 0x1000, 0x1001, 0x2000, 0x3000,
                                 0x4000, 0x7fff, 0x8000, 0x8001, 0xffff};
    enum { PATTERNS = sizeof low_bits / sizeof low_bits[0] };
    size_t n = (size_t)0x10000 * PATTERNS;
    float *values = host_filled(n, 0.0f), *expected = host_filled(n, 0.0f);
    for (size_t i = 0; i < n; i++) {
        uint32_t bits = (uint32_t)(i / PATTERNS) << 16 | low_bits[i % PATTERNS];
        memcpy(&values[i], &bits, sizeof bits);
    }
    bits16 *rounded = malloc(n * sizeof *rounded);
    cpu_kernels.round_to_16(format, rounded, values, n);
    cpu_kernels.widen_16(format, expected, rounded, n);
    free(rounded);
    float *on_gpu = device_garbage(n);
    bits16 *rounded_on_gpu = (bits16 *)device_garbage(n / 2); /* n 16-bit values in the bytes of n / 2 floats */
    cuda_kernels.round_to_16(format, rounded_on_gpu, device_upload(values, n), n);
    cuda_kernels.widen_16(format, on_gpu, rounded_on_gpu, n);
    expect_identical(format == FORMAT_FP16 ? "fp16 round then widen" : "bf16 round then widen",
                     device_download(on_gpu, n, "widened"), expected, n);
}

Test(gpu_kernels, bf16_and_fp16_rounding_and_widening_match_the_cpu_bit_for_bit)
{
    require_gpu();
    check_rounding(FORMAT_BF16);
    check_rounding(FORMAT_FP16);
}

/* ---------------------------------------------------------------- softmax cross-entropy */

enum { LOGIT_RANGE = 8 }; /* logits in [-4, 4] */

/* Targets anywhere, the first 0 and the last V - 1 (the row's ends). */
static int *random_targets(Rng *rng, size_t N, int V)
{
    int *targets = host_ints(rng, N, V);
    targets[0] = 0;
    targets[N - 1] = V - 1;
    return targets;
}

static void check_softmax_forward(const char *name, size_t N, int V, Rng *rng)
{
    size_t NV = N * (size_t)V;
    Label tag = label(name, "softmax_crossentropy_forward");
    float *logits = host_uniform(rng, NV, -LOGIT_RANGE / 2.0f, LOGIT_RANGE / 2.0f);
    int *targets = random_targets(rng, N, V);
    float *probs_cpu = host_copy(logits, NV), *probs_cpu_no_targets = host_copy(logits, NV);
    float loss_cpu = cpu_kernels.softmax_crossentropy_forward(probs_cpu, targets, (int)N, V);
    cpu_kernels.softmax_crossentropy_forward(probs_cpu_no_targets, NULL, (int)N, V);

    float *probs = device_upload(logits, NV);
    int *targets_dev = device_upload_ints(targets, N);
    float loss_gpu = cuda_kernels.softmax_crossentropy_forward(probs, targets_dev, (int)N, V);
    float *probs_gpu = device_download(probs, NV, tag.text);

    /* p_j = exp(x_j - max) / sum: the sums of V positive terms differ by positive_sum_rtol;
     * per side, exp is within 2 ulp (4u) for p_j and for the sum's terms (their weighted
     * average), and the normalisation (a division, or a reciprocal and a product) rounds
     * twice: 10u */
    Tolerance probs_tol = {0.0, positive_sum_rtol((size_t)V) + 20.0 * U};
    expect_close(label(tag.text, "probs").text, probs_gpu, probs_cpu, NV, probs_tol);
    /* a row's loss log(sum) - log(e_target): the sums differ as above plus 4u per side from
     * the terms' exp; e_target by 4u per side; each log rounds at the size of its value
     * (< log V + LOGIT_RANGE); the mean over N positive row losses may be summed in float */
    double loss_atol = positive_sum_rtol((size_t)V) + 16.0 * U + 4.0 * U * (log((double)V) + LOGIT_RANGE);
    double loss_rtol = positive_sum_rtol(N) + 4.0 * U;
    double loss_diff = fabs((double)loss_gpu - loss_cpu);
    cr_log_info("%-40s loss gpu %.9g cpu %.9g |diff| %.3g (tolerance %.3g)", tag.text, loss_gpu, loss_cpu, loss_diff,
                loss_atol + loss_rtol * fabs(loss_cpu));
    cr_assert(loss_diff <= loss_atol + loss_rtol * fabs(loss_cpu), "%s: loss gpu %.9g, cpu %.9g, |diff| %.3g > %.3g",
              tag.text, loss_gpu, loss_cpu, loss_diff, loss_atol + loss_rtol * fabs(loss_cpu));

    /* the same logits again: the same loss and probabilities, bit for bit */
    device_refill(probs, logits, NV);
    float loss_again = cuda_kernels.softmax_crossentropy_forward(probs, targets_dev, (int)N, V);
    cr_assert(memcmp(&loss_again, &loss_gpu, sizeof loss_gpu) == 0, "%s: loss %.9g, then %.9g on the same inputs",
              tag.text, loss_gpu, loss_again);
    expect_identical(label(tag.text, "probs, run twice").text, device_download(probs, NV, tag.text), probs_gpu, NV);

    /* no targets: probabilities only, and a loss of exactly 0 */
    device_refill(probs, logits, NV);
    float no_loss = cuda_kernels.softmax_crossentropy_forward(probs, NULL, (int)N, V);
    cr_assert(no_loss == 0.0f, "%s: targets NULL returned %.9g, not 0", tag.text, no_loss);
    expect_device_close(label(tag.text, "probs (targets NULL)").text, probs, probs_cpu_no_targets, NV, probs_tol);
}

static void check_softmax_forward_shape(const Shape *s, Rng *rng)
{
    check_softmax_forward(s->name, rows_of(s), s->V, rng);
}

static void check_softmax_backward(const Shape *s, Rng *rng)
{
    size_t N = rows_of(s), NV = N * (size_t)s->V;
    Label tag = label(s->name, "softmax_crossentropy_backward");
    /* real probabilities (from the CPU forward), rows repeating targets */
    float *probs = host_uniform(rng, NV, -4.0f, 4.0f);
    int *targets = random_targets(rng, N, s->V);
    cpu_kernels.softmax_crossentropy_forward(probs, targets, (int)N, s->V);
    float scale = 0.75f / (float)N; /* the mean's 1/N, with a factor that is not 1 */
    float *dlogits_cpu = host_copy(probs, NV);
    cpu_kernels.softmax_crossentropy_backward(dlogits_cpu, targets, (int)N, s->V, scale);

    float *dlogits = device_upload(probs, NV);
    cuda_kernels.softmax_crossentropy_backward(dlogits, device_upload_ints(targets, N), (int)N, s->V, scale);
    /* (p - [j == target]) * scale: two roundings per side at the size of |scale| (a fused
     * multiply-add or not) */
    Tolerance tol = {4.0 * U * scale, 4.0 * U};
    expect_device_close(tag.text, dlogits, dlogits_cpu, NV, tol);
}

Test(gpu_kernels, softmax_crossentropy_forward_with_and_without_targets)
{
    require_gpu();
    for_each_shape(check_softmax_forward_shape, 1100);
    /* more rows than one pass takes: two whole passes and a part of one */
    Rng rng;
    rng_seed(&rng, 1150);
    check_softmax_forward("many rows", 2 * (size_t)cuda_loss_rows_per_pass() + 3, 7, &rng);
}

Test(gpu_kernels, softmax_crossentropy_backward)
{
    require_gpu();
    for_each_shape(check_softmax_backward, 1200);
}

/* ---------------------------------------------------------------- optimizer */

enum { ADAM_STEPS = 4 };

/* Gradient magnitudes spread over 1e-4 .. 1, so that eps (1e-6 below) matters for some
 * elements, and one in 16 exactly 0 (decay only). */
static void fill_gradients(Rng *rng, float *grads, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        double magnitude = pow(10.0, -4.0 * rng_uniform(rng));
        grads[i] = rng_uniform(rng) < 1.0 / 16.0 ? 0.0f : (float)((2.0 * rng_uniform(rng) - 1.0) * magnitude);
    }
}

static void check_adamw(size_t n, Rng *rng)
{
    char tag[64];
    snprintf(tag, sizeof tag, "adamw_update n=%zu", n);
    AdamWHyper hyper = {.lr = 1e-2f, .beta1 = 0.9f, .beta2 = 0.95f, .eps = 1e-6f, .weight_decay = 0.1f};
    const float grad_scale = 0.37f; /* as after clipping */
    float *params = host_uniform(rng, n, -1.0f, 1.0f);
    float *m = host_filled(n, 0.0f), *v = host_filled(n, 0.0f); /* as the optimizer starts them */
    float *grads = host_filled(n, 0.0f), *before = host_filled(n, 0.0f);
    float *params_dev = device_upload(params, n), *m_dev = device_upload(m, n), *v_dev = device_upload(v, n);
    float *grads_dev = device_upload(grads, n);

    double largest_update = 0.0, largest_grad = 0.0;
    for (int step = 1; step <= ADAM_STEPS; step++) {
        fill_gradients(rng, grads, n);
        device_refill(grads_dev, grads, n);
        memcpy(before, params, n * sizeof(float));
        cpu_kernels.adamw_update(params, grads, m, v, n, hyper, grad_scale, step);
        cuda_kernels.adamw_update(params_dev, grads_dev, m_dev, v_dev, n, hyper, grad_scale, step);
        largest_update = fmax(largest_update, max_abs_difference(params, before, n));
        largest_grad = fmax(largest_grad, grad_scale * max_abs(grads, n));
    }

    /* m = b1 m + (1 - b1) g: a few roundings per step at the size of |m| and |g| (|m| is
     * at most the largest |g|); older errors shrink by b1 */
    Tolerance m_tol = {8.0 * ADAM_STEPS * U * largest_grad, 0.0};
    /* v: positive terms only, so a relative error: a few u per step (g * g, the products,
     * the add) */
    Tolerance v_tol = {0.0, 12.0 * ADAM_STEPS * U};
    /* params, per step: p's own rounding (2u |p| per side); the update's relative error,
     * at most 128u (sqrt, division, eps; bias corrections 1 / (1 - b^t) amplify a powf
     * error by b / (1 - b) <= 19 at most); and the m error over sqrt(vhat), at most
     * 8 t u / (1 - b1^t) / (sqrt(1 - b2) b2^(steps/2)) < 512u of lr (vhat holds at least
     * (1 - b2) b2^steps of the largest g^2 that m holds) */
    double p_max = max_abs(params, n);
    Tolerance p_tol = {ADAM_STEPS * (4.0 * U * p_max + 128.0 * U * largest_update + 512.0 * U * hyper.lr), 0.0};
    expect_device_close(label(tag, "m").text, m_dev, m, n, m_tol);
    expect_device_close(label(tag, "v").text, v_dev, v, n, v_tol);
    expect_device_close(label(tag, "params").text, params_dev, params, n, p_tol);
}

Test(gpu_kernels, adamw_update_several_steps_with_decay_and_grad_scale)
{
    require_gpu();
    Rng rng;
    rng_seed(&rng, 1300);
    for (int i = 0; i < NUM_ELEMENTWISE_SIZES; i++) {
        check_adamw(ELEMENTWISE_SIZES[i], &rng);
        release_test_buffers();
    }
}

/* ---------------------------------------------------------------- sum of squares */

static void check_sum_of_squares(size_t n, Rng *rng)
{
    float *x = host_uniform(rng, n, -2.0f, 2.0f);
    float *x_dev = device_upload(x, n);
    double cpu = cpu_kernels.sum_of_squares(x, n);
    double gpu = cuda_kernels.sum_of_squares(x_dev, n);
    /* the square of a float is exact in double; both devices sum n positive doubles, each
     * within (n - 1) 2^-53 relative of the exact sum in any order (kernels.h returns a
     * double: summing in float would be 2^29 times less exact and fail here) */
    double rtol = 2.0 * (double)n * DBL_EPSILON / 2.0;
    cr_log_info("sum_of_squares n=%zu: gpu %.17g cpu %.17g relative diff %.3g (tolerance %.3g)", n, gpu, cpu,
                fabs(gpu - cpu) / cpu, rtol);
    cr_assert(fabs(gpu - cpu) <= rtol * cpu, "sum_of_squares n=%zu: gpu %.17g, cpu %.17g, relative diff %.3g > %.3g",
              n, gpu, cpu, fabs(gpu - cpu) / cpu, rtol);
    double again = cuda_kernels.sum_of_squares(x_dev, n);
    cr_assert(memcmp(&again, &gpu, sizeof gpu) == 0, "sum_of_squares n=%zu: %.17g, then %.17g on the same input", n,
              gpu, again);
}

Test(gpu_kernels, sum_of_squares_deterministically)
{
    require_gpu();
    Rng rng;
    rng_seed(&rng, 1400);
    const size_t sizes[] = {1, 7, 4099, ((size_t)1 << 24) + 37};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        check_sum_of_squares(sizes[i], &rng);
        release_test_buffers();
    }
}

/* ---------------------------------------------------------------- TF32 */

/* cuBLAS in TF32 mode (cuda_device_setup(0, 1, ...)): results close to fp32 within TF32's
 * rounding, and measurably not fp32's (the mode took effect). */
Test(gpu_tf32, matmul_forward_rounds_like_tf32)
{
    require_gpu_tf32();
    Rng rng;
    rng_seed(&rng, 1500);
    const size_t N = 512, C = 512, OC = 512;
    float *inp = host_uniform(&rng, N * C, -1.0f, 1.0f), *weight = host_uniform(&rng, OC * C, -1.0f, 1.0f);
    float *expected = host_filled(N * OC, 0.0f);
    cpu_kernels.matmul_forward(expected, inp, weight, NULL, (int)N, (int)C, (int)OC);
    float *out = device_garbage(N * OC);
    cuda_kernels.matmul_forward(out, device_upload(inp, N * C), device_upload(weight, OC * C), NULL, (int)N, (int)C,
                                (int)OC);
    float *out_gpu = device_download(out, N * OC, "tf32 matmul_forward out");

    /* TF32 keeps 10 mantissa bits: each input rounds by up to 2^-11 (2^-10 if truncated),
     * a product by up to 2^-10 (2^-9). Errors of random sign add up like a random walk of
     * standard deviation 0.41 2^-10 sqrt(C) rms(a b) (rms(a b) = 1/3 here): the atol,
     * 2 2^-10 sqrt(C), is about 15 of them. Truncation would add a bias of about 2^-10 of
     * the result: the rtol. */
    const double tf32_unit = 1.0 / 1024.0;
    Tolerance tf32_tol = {2.0 * sqrt((double)C) * tf32_unit + sum_atol(C, 1.0), 2.0 * tf32_unit};
    expect_close("tf32 matmul_forward out", out_gpu, expected, N * OC, tf32_tol);
    double largest = max_abs_difference(out_gpu, expected, N * OC);
    cr_assert(largest > sum_atol(C, 1.0),
              "TF32 requested, yet the largest |gpu - cpu| %.3g is within fp32's rounding (%.3g): "
              "were tensor cores used?", largest, sum_atol(C, 1.0));
}

/* ---------------------------------------------------------------- memory */

static int all_bytes_zero(const unsigned char *bytes, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (bytes[i] != 0)
            return 0;
    return 1;
}

Test(gpu_memory, alloc_is_zero_filled_counted_and_released)
{
    require_gpu();
    const size_t bytes = 1000003; /* odd: not a multiple of any vector width */
    unsigned char *host = malloc(bytes);
    cr_assert_not_null(host);
    size_t in_use = mem_in_use(MEM_ACTIVATIONS);

    void *block = cuda_kernels.alloc(bytes, MEM_ACTIVATIONS);
    cr_assert_not_null(block, "alloc(%zu) returned NULL", bytes);
    cr_assert(cuda_is_device_pointer(block), "alloc did not return GPU memory");
    cr_assert_eq(mem_in_use(MEM_ACTIVATIONS), in_use + bytes, "alloc is not counted under its kind");
    cuda_kernels.to_host(host, block, bytes);
    cr_assert(all_bytes_zero(host, bytes), "a fresh block is not zero-filled");

    /* dirty it and give it back: the next block (likely the same memory) is zero again */
    memset(host, 0xab, bytes);
    cuda_kernels.to_device(block, host, bytes);
    cuda_kernels.free(block);
    cr_assert_eq(mem_in_use(MEM_ACTIVATIONS), in_use, "free does not give the bytes back");
    block = cuda_kernels.alloc(bytes, MEM_ACTIVATIONS);
    cr_assert_not_null(block);
    cuda_kernels.to_host(host, block, bytes);
    cr_assert(all_bytes_zero(host, bytes), "a block allocated after a free is not zero-filled");
    cuda_kernels.free(block);
    cuda_kernels.free(NULL); /* like free(NULL): nothing */
    cr_assert_eq(mem_in_use(MEM_ACTIVATIONS), in_use);
    free(host);
}

/* to_device, to_host, copy and zero at offsets into buffers, then synchronize. */
Test(gpu_memory, copy_and_zero_touch_only_their_range)
{
    require_gpu();
    Rng rng;
    rng_seed(&rng, 1600);
    const size_t n = 1000;
    float *values = host_uniform(&rng, n, -1.0f, 1.0f);
    float *a = device_upload(values, n), *b = device_garbage(n);
    cuda_kernels.copy(b + 3, a + 5, 100 * sizeof(float));
    cuda_kernels.zero(a + 7, 11 * sizeof(float));
    cuda_kernels.synchronize();

    float *a_expected = host_copy(values, n), *b_expected = host_filled(n, nan_float());
    memset(a_expected + 7, 0, 11 * sizeof(float));
    memcpy(b_expected + 3, values + 5, 100 * sizeof(float));
    expect_identical("zero(a + 7, 11 floats)", device_download(a, n, "a"), a_expected, n);
    expect_identical("copy(b + 3, a + 5, 100 floats)", device_download(b, n, "b"), b_expected, n);
    cr_assert(cuda_is_device_pointer(a));
    cr_assert(!cuda_is_device_pointer(values), "a host pointer is taken for GPU memory");
}

Test(gpu_memory, limit_refuses_an_alloc_before_cudamalloc)
{
    require_gpu();
    const size_t MiB = (size_t)1 << 20;
    size_t refusals = mem_limit_refusals(), failures = cuda_alloc_failures();
    size_t scratch = mem_in_use(MEM_SCRATCH);
    /* the limit covers every kind but MEM_DATA */
    mem_set_limit(mem_in_use_total() - mem_in_use(MEM_DATA) + MiB);
    void *over = cuda_kernels.alloc(2 * MiB, MEM_SCRATCH);
    size_t refusals_after = mem_limit_refusals(), scratch_after_refusal = mem_in_use(MEM_SCRATCH);
    void *under = cuda_kernels.alloc(MiB / 2, MEM_SCRATCH);
    size_t scratch_after_alloc = mem_in_use(MEM_SCRATCH);
    mem_set_limit(0);

    cr_assert_null(over, "alloc over the limit returned memory");
    cr_assert_eq(refusals_after, refusals + 1, "the refusal is not counted by mem_limit_refusals");
    cr_assert_eq(scratch_after_refusal, scratch, "refused bytes are counted as in use");
    cr_assert_eq(cuda_alloc_failures(), failures, "a limit refusal counted as a cudaMalloc failure");
    cr_assert_not_null(under, "alloc under the limit was refused");
    cr_assert_eq(scratch_after_alloc, scratch + MiB / 2);
    cuda_kernels.free(under);
    cr_assert_eq(mem_in_use(MEM_SCRATCH), scratch);
}

Test(gpu_memory, impossible_cudamalloc_returns_null_and_the_gpu_still_works)
{
    require_gpu();
    mem_set_limit(0);
    size_t refusals = mem_limit_refusals(), failures = cuda_alloc_failures(), other = mem_in_use(MEM_OTHER);
    void *huge = cuda_kernels.alloc((size_t)1 << 50, MEM_OTHER); /* 1 PiB */
    cr_assert_null(huge, "a 1 PiB alloc succeeded");
    cr_assert_eq(cuda_alloc_failures(), failures + 1, "the failed cudaMalloc is not counted");
    cr_assert_eq(mem_limit_refusals(), refusals, "no limit is set: the refusal is cudaMalloc's, not the limit's");
    cr_assert_eq(mem_in_use(MEM_OTHER), other, "bytes of the failed alloc stay counted");

    /* the failure leaves no error behind for a later call to trip over */
    Rng rng;
    rng_seed(&rng, 1700);
    const size_t n = 1000;
    float *a = host_uniform(&rng, n, -1.0f, 1.0f), *b = host_uniform(&rng, n, -1.0f, 1.0f);
    float *expected = host_filled(n, 0.0f);
    cpu_kernels.residual_forward(expected, a, b, n);
    float *out = device_garbage(n);
    cuda_kernels.residual_forward(out, device_upload(a, n), device_upload(b, n), n);
    cuda_kernels.synchronize();
    expect_device_close("residual_forward after a failed alloc", out, expected, n, EXACT);
}
