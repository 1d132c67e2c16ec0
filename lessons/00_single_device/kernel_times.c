#include "kernel_times.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "timer.h"

/* One row per operation and shape: the four matrix products of a block and the LM head
 * differ only in shape, and they are what a reader wants apart. */
typedef struct {
    const char *op;
    char shape[48];
    double flops_per_call; /* 0: not counted (the operation is not a matrix product) */
    double seconds;
    long calls;
} KernelRow;

#define MAX_ROWS 64
static KernelRow rows[MAX_ROWS];
static int num_rows;
static const Kernels *inner;
static Kernels timed;

static KernelRow *row_for(const char *op, const char *shape, double flops_per_call)
{
    for (int i = 0; i < num_rows; i++)
        if (rows[i].op == op && strcmp(rows[i].shape, shape) == 0)
            return &rows[i];
    if (num_rows == MAX_ROWS) /* more shapes than any model here has: pool the rest */
        return &rows[MAX_ROWS - 1];
    KernelRow *row = &rows[num_rows++];
    *row = (KernelRow){.op = op, .flops_per_call = flops_per_call};
    snprintf(row->shape, sizeof row->shape, "%s", shape);
    return row;
}

static void add_time(const char *op, const char *shape, double flops_per_call, double start)
{
    inner->synchronize();
    KernelRow *row = row_for(op, shape, flops_per_call);
    row->seconds += now_seconds() - start;
    row->calls++;
}

static const char *shape_nc(char *buf, size_t size, size_t n, int c)
{
    snprintf(buf, size, "%zu x %d", n, c);
    return buf;
}

static const char *shape_n(char *buf, size_t size, size_t n)
{
    snprintf(buf, size, "%zu", n);
    return buf;
}

/* ---------------------------------------------------------------- the timed entries */

static void encoder_forward(float *out, const int *tokens, const float *wte, const float *wpe, int B, int T, int C)
{
    char s[48];
    double start = now_seconds();
    inner->encoder_forward(out, tokens, wte, wpe, B, T, C);
    add_time("encoder forward", shape_nc(s, sizeof s, (size_t)B * T, C), 0, start);
}

static void encoder_backward(float *dwte, float *dwpe, const float *dout, const int *tokens, int B, int T, int C)
{
    char s[48];
    double start = now_seconds();
    inner->encoder_backward(dwte, dwpe, dout, tokens, B, T, C);
    add_time("encoder backward", shape_nc(s, sizeof s, (size_t)B * T, C), 0, start);
}

static void layernorm_forward(float *out, float *mean, float *rstd, const float *inp, const float *weight,
                              const float *bias, int N, int C)
{
    char s[48];
    double start = now_seconds();
    inner->layernorm_forward(out, mean, rstd, inp, weight, bias, N, C);
    add_time("layernorm forward", shape_nc(s, sizeof s, (size_t)N, C), 0, start);
}

static void layernorm_backward(float *dinp, float *dweight, float *dbias, const float *dout, const float *inp,
                               const float *weight, const float *mean, const float *rstd, int N, int C)
{
    char s[48];
    double start = now_seconds();
    inner->layernorm_backward(dinp, dweight, dbias, dout, inp, weight, mean, rstd, N, C);
    add_time("layernorm backward", shape_nc(s, sizeof s, (size_t)N, C), 0, start);
}

static void matmul_forward(float *out, const float *inp, const float *weight, const float *bias, int N, int C,
                           int OC)
{
    char s[48];
    snprintf(s, sizeof s, "%d x %d -> %d", N, C, OC);
    double start = now_seconds();
    inner->matmul_forward(out, inp, weight, bias, N, C, OC);
    add_time("matmul forward", s, 2.0 * N * C * OC, start);
}

/* Two products: dinp = dout . weight and dweight += dout^T . inp. */
static void matmul_backward(float *dinp, float *dweight, float *dbias, const float *dout, const float *inp,
                            const float *weight, int N, int C, int OC)
{
    char s[48];
    snprintf(s, sizeof s, "%d x %d -> %d", N, C, OC);
    double start = now_seconds();
    inner->matmul_backward(dinp, dweight, dbias, dout, inp, weight, N, C, OC);
    add_time("matmul backward", s, 4.0 * N * C * OC, start);
}

/* Per batch row and head, q.k^T and p.v over the T (T + 1) / 2 query-key pairs the causal
 * mask keeps: 2 x T (T + 1) / 2 x (C/NH) multiply-adds, what any attention kernel must do
 * (one that computes the whole square does twice that, and shows half the rate). */
static void attention_forward(float *out, float *att, float *scratch, const float *qkv, int B, int T, int C,
                              int NH)
{
    char s[48];
    snprintf(s, sizeof s, "B%d T%d C%d NH%d", B, T, C, NH);
    double start = now_seconds();
    inner->attention_forward(out, att, scratch, qkv, B, T, C, NH);
    add_time("attention forward", s, 2.0 * B * T * (T + 1.0) * C, start);
}

static void attention_backward(float *dqkv, float *scratch, const float *dout, const float *qkv, const float *att,
                               int B, int T, int C, int NH)
{
    char s[48];
    snprintf(s, sizeof s, "B%d T%d C%d NH%d", B, T, C, NH);
    double start = now_seconds();
    inner->attention_backward(dqkv, scratch, dout, qkv, att, B, T, C, NH);
    add_time("attention backward", s, 4.0 * B * T * (T + 1.0) * C, start);
}

static void gelu_forward(float *out, float *inp, size_t n)
{
    char s[48];
    double start = now_seconds();
    inner->gelu_forward(out, inp, n);
    add_time("gelu forward", shape_n(s, sizeof s, n), 0, start);
}

static void gelu_backward(float *dinout, const float *inp, size_t n)
{
    char s[48];
    double start = now_seconds();
    inner->gelu_backward(dinout, inp, n);
    add_time("gelu backward", shape_n(s, sizeof s, n), 0, start);
}

static void residual_forward(float *out, const float *a, const float *b, size_t n)
{
    char s[48];
    double start = now_seconds();
    inner->residual_forward(out, a, b, n);
    add_time("residual forward", shape_n(s, sizeof s, n), 0, start);
}

static float softmax_crossentropy_forward(float *logits_to_probs, const int *targets, int N, int V)
{
    char s[48];
    double start = now_seconds();
    float loss = inner->softmax_crossentropy_forward(logits_to_probs, targets, N, V);
    add_time("softmax + loss forward", shape_nc(s, sizeof s, (size_t)N, V), 0, start);
    return loss;
}

static void softmax_crossentropy_backward(float *probs_to_dlogits, const int *targets, int N, int V, float scale)
{
    char s[48];
    double start = now_seconds();
    inner->softmax_crossentropy_backward(probs_to_dlogits, targets, N, V, scale);
    add_time("softmax + loss backward", shape_nc(s, sizeof s, (size_t)N, V), 0, start);
}

static void adamw_update(float *params, const float *grads, float *m, float *v, size_t n, AdamWHyper hyper,
                         float grad_scale, int step)
{
    char s[48];
    double start = now_seconds();
    inner->adamw_update(params, grads, m, v, n, hyper, grad_scale, step);
    add_time("adamw update", shape_n(s, sizeof s, n), 0, start);
}

static double sum_of_squares(const float *x, size_t n)
{
    char s[48];
    double start = now_seconds();
    double sum = inner->sum_of_squares(x, n);
    add_time("sum of squares (grad norm)", shape_n(s, sizeof s, n), 0, start);
    return sum;
}

static void zero(void *ptr, size_t bytes)
{
    char s[48];
    double start = now_seconds();
    inner->zero(ptr, bytes);
    add_time("zero (bytes)", shape_n(s, sizeof s, bytes), 0, start);
}

const Kernels *kernel_times_wrap(const Kernels *kernels)
{
    inner = kernels;
    timed = *kernels; /* memory operations, device name and synchronize pass straight through */
    timed.encoder_forward = encoder_forward;
    timed.encoder_backward = encoder_backward;
    timed.layernorm_forward = layernorm_forward;
    timed.layernorm_backward = layernorm_backward;
    timed.matmul_forward = matmul_forward;
    timed.matmul_backward = matmul_backward;
    timed.attention_forward = attention_forward;
    timed.attention_backward = attention_backward;
    timed.gelu_forward = gelu_forward;
    timed.gelu_backward = gelu_backward;
    timed.residual_forward = residual_forward;
    timed.softmax_crossentropy_forward = softmax_crossentropy_forward;
    timed.softmax_crossentropy_backward = softmax_crossentropy_backward;
    timed.adamw_update = adamw_update;
    timed.sum_of_squares = sum_of_squares;
    timed.zero = zero;
    kernel_times_reset();
    return &timed;
}

void kernel_times_reset(void) { num_rows = 0; }

static int slowest_first(const void *a, const void *b)
{
    double sa = ((const KernelRow *)a)->seconds, sb = ((const KernelRow *)b)->seconds;
    return (sa < sb) - (sa > sb);
}

static void print_rate(double flops, double seconds, double peak)
{
    if (flops <= 0 || seconds <= 0) {
        printf("\n");
        return;
    }
    printf(" %9.1f", flops / seconds / 1e9);
    if (peak > 0)
        printf(" %6.0f%%", 100.0 * flops / seconds / peak);
    printf("\n");
}

void kernel_times_print(int steps, double step_seconds, double peak)
{
    qsort(rows, (size_t)num_rows, sizeof rows[0], slowest_first);
    printf("  %-28s %-22s %6s %9s %7s %9s%s\n", "operation", "shape", "calls", "ms/step", "% step", "GFLOP/s",
           peak > 0 ? "  % peak" : "");
    double kernel_s = 0, product_s = 0, product_flops = 0;
    for (int i = 0; i < num_rows; i++) {
        const KernelRow *r = &rows[i];
        double per_step = r->seconds / steps;
        printf("  %-28s %-22s %6ld %9.3f %6.1f%%", r->op, r->shape, r->calls / steps, 1e3 * per_step,
               100.0 * per_step / step_seconds);
        print_rate(r->flops_per_call * (double)r->calls, r->seconds, peak);
        kernel_s += r->seconds;
        if (r->flops_per_call > 0)
            product_s += r->seconds, product_flops += r->flops_per_call * (double)r->calls;
    }
    printf("  %-28s %-22s %6s %9.3f %6.1f%%", "matrix products + attention", "", "", 1e3 * product_s / steps,
           100.0 * product_s / steps / step_seconds);
    print_rate(product_flops, product_s, peak);
    printf("  %-28s %-22s %6s %9.3f %6.1f%%\n", "the other kernels", "", "", 1e3 * (kernel_s - product_s) / steps,
           100.0 * (kernel_s - product_s) / steps / step_seconds);
    printf("  %-28s %-22s %6s %9.3f %6.1f%%\n", "outside the kernels", "", "", 1e3 * (step_seconds - kernel_s / steps),
           100.0 * (step_seconds - kernel_s / steps) / step_seconds);
}
