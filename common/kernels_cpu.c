/* The CPU device: plain C11 loops written so the compiler can vectorise them, and CBLAS
 * (OpenBLAS) for every matrix product. No -ffast-math: results are IEEE-exact for a given
 * BLAS, so runs repeat bit for bit. */
#include "kernels.h"

#include <cblas.h>
#include <math.h>
#include <string.h>

#include "fastmath.h"

static void cpu_zero(void *ptr, size_t bytes) { memset(ptr, 0, bytes); }
static void cpu_copy(void *dst, const void *src, size_t bytes) { memcpy(dst, src, bytes); }

static void encoder_forward(float *out, const int *tokens, const float *wte, const float *wpe,
                            int B, int T, int C)
{
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++) {
            float *row = out + ((size_t)b * T + t) * C;
            const float *tok = wte + (size_t)tokens[b * T + t] * C;
            const float *pos = wpe + (size_t)t * C;
            for (int c = 0; c < C; c++)
                row[c] = tok[c] + pos[c];
        }
}

static void encoder_backward(float *dwte, float *dwpe, const float *dout, const int *tokens,
                             int B, int T, int C)
{
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++) {
            const float *drow = dout + ((size_t)b * T + t) * C;
            float *dtok = dwte + (size_t)tokens[b * T + t] * C;
            float *dpos = dwpe + (size_t)t * C;
            for (int c = 0; c < C; c++) {
                dtok[c] += drow[c];
                dpos[c] += drow[c];
            }
        }
}

static void layernorm_forward(float *out, float *mean, float *rstd, const float *inp,
                              const float *weight, const float *bias, int N, int C)
{
    const float eps = 1e-5f;
    for (int n = 0; n < N; n++) {
        const float *x = inp + (size_t)n * C;
        float mu = sum_floats(x, C) / C;
        float var = sum_squared_deviations(x, mu, C) / C;
        float s = 1.0f / sqrtf(var + eps);
        float *y = out + (size_t)n * C;
        for (int c = 0; c < C; c++)
            y[c] = (x[c] - mu) * s * weight[c] + bias[c];
        mean[n] = mu;
        rstd[n] = s;
    }
}

/* sum(dxhat * xhat) over a row, dxhat = dy * weight and xhat = (x - mu) * s, in LANES
 * partial sums (fastmath.h). Layernorm backward takes sum(dxhat) in a pass of its own
 * (dot_floats): one loop feeding two sets of partial sums is one gcc vectorises badly
 * (2.5x slower at C = 128). */
static float sum_dxhat_xhat(const float *restrict dy, const float *restrict weight, const float *restrict x,
                            float mu, float s, int C)
{
    float acc[LANES] = {0};
    int c = 0;
    for (; c + LANES <= C; c += LANES)
        for (int j = 0; j < LANES; j++)
            acc[j] += dy[c + j] * weight[c + j] * ((x[c + j] - mu) * s);
    for (int j = 0; c + j < C; j++)
        acc[j] += dy[c + j] * weight[c + j] * ((x[c + j] - mu) * s);
    return reduce_lanes(acc);
}

/* restrict (kernels.h: a layer's buffers never overlap) lets the compiler vectorise the
 * second loop, which otherwise needs more overlap checks than it makes. */
static void layernorm_backward(float *restrict dinp, float *restrict dweight, float *restrict dbias,
                               const float *restrict dout, const float *restrict inp,
                               const float *restrict weight, const float *mean, const float *rstd, int N, int C)
{
    for (int n = 0; n < N; n++) {
        const float *dy = dout + (size_t)n * C;
        const float *x = inp + (size_t)n * C;
        float *dx = dinp + (size_t)n * C;
        float mu = mean[n], s = rstd[n];
        /* d(xhat) = dy * weight; dx = s * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)) */
        float mean_dxhat = dot_floats(dy, weight, C) / C;
        float mean_dxhat_xhat = sum_dxhat_xhat(dy, weight, x, mu, s, C) / C;
        for (int c = 0; c < C; c++) {
            float xhat = (x[c] - mu) * s;
            float dxhat = dy[c] * weight[c];
            dbias[c] += dy[c];
            dweight[c] += xhat * dy[c];
            dx[c] += s * (dxhat - mean_dxhat - xhat * mean_dxhat_xhat);
        }
    }
}

static void matmul_forward(float *out, const float *inp, const float *weight, const float *bias,
                           int N, int C, int OC)
{
    float beta = 0.0f;
    if (bias != NULL) {
        for (int n = 0; n < N; n++)
            memcpy(out + (size_t)n * OC, bias, (size_t)OC * sizeof(float));
        beta = 1.0f;
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, N, OC, C,
                1.0f, inp, C, weight, C, beta, out, OC);
}

/* dbias (OC) += the column sums of dout (N x OC); nothing when dbias is NULL */
static void bias_backward(float *dbias, const float *dout, int N, int OC)
{
    if (dbias == NULL)
        return;
    for (int n = 0; n < N; n++) {
        const float *drow = dout + (size_t)n * OC;
        for (int o = 0; o < OC; o++)
            dbias[o] += drow[o];
    }
}

static void matmul_backward(float *dinp, float *dweight, float *dbias, const float *dout,
                            const float *inp, const float *weight, int N, int C, int OC)
{
    /* dinp (N x C) = dout (N x OC) . weight (OC x C) */
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, C, OC,
                1.0f, dout, OC, weight, C, 0.0f, dinp, C);
    /* dweight (OC x C) += dout^T (OC x N) . inp (N x C) */
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, OC, C, N,
                1.0f, dout, OC, inp, C, 1.0f, dweight, C);
    bias_backward(dbias, dout, N, OC);
}

/* src rounded to the 16-bit format and widened back: the values a 16-bit operand holds, as
 * the floats sgemm reads. A product of two of them has at most 22 significant bits (fp16's
 * 11 twice; bf16's 8 twice), so sgemm's fp32 multiply is exact, as a tensor core's is;
 * Debian's OpenBLAS has no 16-bit GEMM (sbgemm, shgemm). */
static const float *values16(Format16 format, float *dst, const float *src, size_t n)
{
    /* a loop per format: with the test of the format inside one loop, gcc vectorises none
     * (bf16's vectorises alone; fp16's cases for subnormals keep it element by element) */
    if (format == FORMAT_BF16)
        for (size_t i = 0; i < n; i++)
            dst[i] = bf16_to_float(float_to_bf16(src[i]));
    else
        for (size_t i = 0; i < n; i++)
            dst[i] = fp16_to_float(float_to_fp16(src[i]));
    return dst;
}

static void matmul_forward_16(Format16 format, float *out, const float *inp, const float *weight, const float *bias,
                              int N, int C, int OC, void *operands)
{
    float *inp16 = operands, *weight16 = inp16 + (size_t)N * C;
    matmul_forward(out, values16(format, inp16, inp, (size_t)N * C),
                   values16(format, weight16, weight, (size_t)OC * C), bias, N, C, OC);
}

static void matmul_backward_16(Format16 format, float *dinp, float *dweight, float *dbias, const float *dout,
                               const float *inp, const float *weight, int N, int C, int OC, void *operands)
{
    float *inp16 = operands, *weight16 = inp16 + (size_t)N * C, *dout16 = weight16 + (size_t)OC * C;
    matmul_backward(dinp, dweight, NULL, values16(format, dout16, dout, (size_t)N * OC),
                    values16(format, inp16, inp, (size_t)N * C), values16(format, weight16, weight, (size_t)OC * C),
                    N, C, OC);
    bias_backward(dbias, dout, N, OC);
}

/* Attention is causal: row t of the scores uses keys 0..t only. So every product runs over
 * blocks of ATT_BLOCK rows (queries) or columns (keys), each against only the part of the
 * other side that the mask keeps, and the upper triangle, but for the diagonal blocks, is
 * never computed: a little over half the work at T = 128. A sum that stops at a block's
 * edge leaves out only terms that are exact zeros (masked probabilities), so every value is
 * the one the whole-square product computes. */
#define ATT_BLOCK 32

static int min_int(int a, int b) { return a < b ? a : b; }

/* The end of query t's block: its row's columns up to here are what the products compute
 * and read, the mask's zeros from t + 1 to here included. */
static int block_edge(int t, int T) { return min_int((t / ATT_BLOCK + 1) * ATT_BLOCK, T); }

/* Row t of a causal score matrix, as far as its block's edge: softmax over columns 0..t,
 * zeros from t + 1 to the edge. The columns past the edge are never written: no product
 * reaches them, and att's zeros there came with it from alloc (kernels.h). */
static void causal_softmax_row(float *row, int t, int edge)
{
    float inv_sum = 1.0f / exp_shifted_sum(row, row, max_floats(row, t + 1), t + 1);
    for (int j = 0; j <= t; j++)
        row[j] *= inv_sum;
    memset(row + t + 1, 0, (size_t)(edge - t - 1) * sizeof(float));
}

/* rows x cols of a matrix with leading dimension ld, transposed into dst (cols x rows,
 * contiguous). OpenBLAS's small-matrix kernels multiply q . k^T faster with k^T stored
 * (AVX-512 sets: 12% less attention forward at T256 hs64; AVX2 sets: a little, and the same
 * sums), so a head's keys are turned once, to be read untransposed by every block. */
static void transpose(float *restrict dst, const float *restrict src, int rows, int cols, int ld)
{
    enum { TILE = 8 }; /* tile by tile, so that neither side walks a column through the cache */
    for (int r0 = 0; r0 < rows; r0 += TILE)
        for (int c0 = 0; c0 < cols; c0 += TILE)
            for (int c = c0; c < min_int(c0 + TILE, cols); c++)
                for (int r = r0; r < min_int(r0 + TILE, rows); r++)
                    dst[(size_t)c * rows + r] = src[(size_t)r * ld + c];
}

/* Attention's products take their operands as they are (format NULL), or rounded to a 16-bit
 * format into `operands` (kernels.h): q, k and v once, and each block of probabilities as
 * it is finished. The softmax reads and writes fp32 either way. */
static void attention_forward_on(float *out, float *att, float *scratch, const float *qkv, int B, int T, int C,
                                 int NH, const Format16 *format, float *operands)
{
    int hs = C / NH;
    float scale = 1.0f / sqrtf((float)hs);
    float *kt = scratch; /* the head's keys, hs x T */
    float *p16 = NULL;   /* a block of probabilities, rounded */
    if (format != NULL) {
        qkv = values16(*format, operands, qkv, (size_t)B * T * 3 * C);
        p16 = operands + (size_t)4 * B * T * C;
    }
    for (int b = 0; b < B; b++)
        for (int h = 0; h < NH; h++) {
            const float *q = qkv + (size_t)b * T * 3 * C + h * hs;
            const float *k = q + C, *v = q + 2 * C;
            float *p = att + ((size_t)b * NH + h) * T * T;
            float *y = out + (size_t)b * T * C + h * hs;
            transpose(kt, k, T, hs, 3 * C);
            for (int r0 = 0; r0 < T; r0 += ATT_BLOCK) {
                int rows = min_int(ATT_BLOCK, T - r0), keys = r0 + rows;
                /* p[r0.., 0..keys) = scale q[r0..] . k[0..keys)^T */
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, keys, hs,
                            scale, q + (size_t)r0 * 3 * C, 3 * C, kt, T, 0.0f, p + (size_t)r0 * T, T);
                for (int t = r0; t < keys; t++)
                    causal_softmax_row(p + (size_t)t * T, t, keys);
                const float *p_block = p + (size_t)r0 * T;
                if (format != NULL)
                    p_block = values16(*format, p16, p_block, (size_t)rows * T);
                /* y[r0..] = p[r0.., 0..keys) . v[0..keys) */
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, hs, keys,
                            1.0f, p_block, T, v, 3 * C, 0.0f, y + (size_t)r0 * C, C);
            }
        }
}

static void attention_forward(float *out, float *att, float *scratch, const float *qkv, int B, int T, int C,
                              int NH)
{
    attention_forward_on(out, att, scratch, qkv, B, T, C, NH, NULL, NULL);
}

static void attention_forward_16(Format16 format, float *out, float *att, float *scratch, const float *qkv, int B,
                                 int T, int C, int NH, void *operands)
{
    attention_forward_on(out, att, scratch, qkv, B, T, C, NH, &format, operands);
}

/* dscore = p * (dp - sum(p * dp)) * scale over the causal part of each row, and 0 (where p
 * is 0) from there to the block's edge; no product reads past it. */
static void softmax_backward_rows(float *dp_to_ds, const float *p, float scale, int T)
{
    for (int t = 0; t < T; t++) {
        float *d = dp_to_ds + (size_t)t * T;
        const float *prow = p + (size_t)t * T;
        float dot = dot_floats(prow, d, t + 1);
        for (int j = 0; j <= t; j++)
            d[j] = prow[j] * (d[j] - dot) * scale;
        memset(d + t + 1, 0, (size_t)(block_edge(t, T) - t - 1) * sizeof(float));
    }
}

/* Products whose rows are keys (dv, dk) sum over the queries at or after the block's first
 * key; those whose rows are queries (dp, dq), over the keys up to the block's last query.
 * With a 16-bit format, as attention_forward_on: q, k, v and dy rounded once, then each
 * head's probabilities and its d(scores). */
static void attention_backward_on(float *dqkv, float *scratch, const float *dout, const float *qkv,
                                  const float *att, int B, int T, int C, int NH, const Format16 *format,
                                  float *operands)
{
    int hs = C / NH;
    float scale = 1.0f / sqrtf((float)hs);
    float *p16 = NULL; /* a head's probabilities, rounded */
    if (format != NULL) {
        qkv = values16(*format, operands, qkv, (size_t)B * T * 3 * C);
        dout = values16(*format, operands + (size_t)3 * B * T * C, dout, (size_t)B * T * C);
        p16 = operands + (size_t)4 * B * T * C;
    }
    for (int b = 0; b < B; b++)
        for (int h = 0; h < NH; h++) {
            size_t row0 = (size_t)b * T * 3 * C + h * hs;
            const float *q = qkv + row0, *k = q + C, *v = q + 2 * C;
            float *dq = dqkv + row0, *dk = dq + C, *dv = dq + 2 * C;
            const float *p = att + ((size_t)b * NH + h) * T * T;
            const float *p_operand = format != NULL ? values16(*format, p16, p, (size_t)T * T) : p;
            const float *dy = dout + (size_t)b * T * C + h * hs;
            for (int r0 = 0; r0 < T; r0 += ATT_BLOCK) { /* dp = dy . v^T */
                int rows = min_int(ATT_BLOCK, T - r0), keys = r0 + rows;
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, keys, hs,
                            1.0f, dy + (size_t)r0 * C, C, v, 3 * C, 0.0f, scratch + (size_t)r0 * T, T);
            }
            for (int c0 = 0; c0 < T; c0 += ATT_BLOCK) { /* dv = p^T . dy */
                int cols = min_int(ATT_BLOCK, T - c0);
                cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, cols, hs, T - c0,
                            1.0f, p_operand + (size_t)c0 * T + c0, T, dy + (size_t)c0 * C, C, 0.0f,
                            dv + (size_t)c0 * 3 * C, 3 * C);
            }
            softmax_backward_rows(scratch, p, scale, T);
            if (format != NULL)
                values16(*format, scratch, scratch, (size_t)T * T);
            for (int r0 = 0; r0 < T; r0 += ATT_BLOCK) { /* dq = ds . k */
                int rows = min_int(ATT_BLOCK, T - r0), keys = r0 + rows;
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, hs, keys,
                            1.0f, scratch + (size_t)r0 * T, T, k, 3 * C, 0.0f, dq + (size_t)r0 * 3 * C, 3 * C);
            }
            for (int c0 = 0; c0 < T; c0 += ATT_BLOCK) { /* dk = ds^T . q */
                int cols = min_int(ATT_BLOCK, T - c0);
                cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, cols, hs, T - c0,
                            1.0f, scratch + (size_t)c0 * T + c0, T, q + (size_t)c0 * 3 * C, 3 * C, 0.0f,
                            dk + (size_t)c0 * 3 * C, 3 * C);
            }
        }
}

static void attention_backward(float *dqkv, float *scratch, const float *dout, const float *qkv,
                               const float *att, int B, int T, int C, int NH)
{
    attention_backward_on(dqkv, scratch, dout, qkv, att, B, T, C, NH, NULL, NULL);
}

static void attention_backward_16(Format16 format, float *dqkv, float *scratch, const float *dout,
                                  const float *qkv, const float *att, int B, int T, int C, int NH, void *operands)
{
    attention_backward_on(dqkv, scratch, dout, qkv, att, B, T, C, NH, &format, operands);
}

static void gelu_forward(float *out, float *inp_to_slope, size_t n)
{
    gelu_tanh_and_slope(out, inp_to_slope, n);
}

/* the slopes are what gelu_forward left in its input */
static void gelu_backward(float *dinout, const float *slope, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dinout[i] *= slope[i];
}

static void residual_forward(float *out, const float *a, const float *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] = a[i] + b[i];
}

/* A loop per format, as values16. */
static void round_to_16(Format16 format, bits16 *dst, const float *src, size_t n)
{
    if (format == FORMAT_BF16)
        for (size_t i = 0; i < n; i++)
            dst[i] = float_to_bf16(src[i]);
    else
        for (size_t i = 0; i < n; i++)
            dst[i] = float_to_fp16(src[i]);
}

static void widen_16(Format16 format, float *dst, const bits16 *src, size_t n)
{
    if (format == FORMAT_BF16)
        for (size_t i = 0; i < n; i++)
            dst[i] = bf16_to_float(src[i]);
    else
        for (size_t i = 0; i < n; i++)
            dst[i] = fp16_to_float(src[i]);
}

static float softmax_crossentropy_forward(float *logits_to_probs, const int *targets, int N, int V)
{
    double loss_sum = 0.0;
    for (int n = 0; n < N; n++) {
        float *row = logits_to_probs + (size_t)n * V;
        float sum = exp_shifted_sum(row, row, max_floats(row, V), V);
        float inv_sum = 1.0f / sum;
        if (targets != NULL)
            /* log of the target's probability, taken before normalising for accuracy */
            loss_sum += logf(sum) - logf(row[targets[n]]);
        for (int j = 0; j < V; j++)
            row[j] *= inv_sum;
    }
    return targets != NULL ? (float)(loss_sum / N) : 0.0f;
}

static void softmax_crossentropy_backward(float *probs_to_dlogits, const int *targets, int N,
                                          int V, float scale)
{
    for (int n = 0; n < N; n++) {
        float *row = probs_to_dlogits + (size_t)n * V;
        row[targets[n]] -= 1.0f;
        for (int j = 0; j < V; j++)
            row[j] *= scale;
    }
}

static void adamw_update(float *params, const float *grads, float *m, float *v, size_t n,
                         AdamWHyper hyper, float grad_scale, int step)
{
    float m_correction = 1.0f / (1.0f - powf(hyper.beta1, (float)step));
    float v_correction = 1.0f / (1.0f - powf(hyper.beta2, (float)step));
    for (size_t i = 0; i < n; i++) {
        float g = grads[i] * grad_scale;
        m[i] = hyper.beta1 * m[i] + (1.0f - hyper.beta1) * g;
        v[i] = hyper.beta2 * v[i] + (1.0f - hyper.beta2) * g * g;
        float m_hat = m[i] * m_correction;
        float v_hat = v[i] * v_correction;
        /* decoupled weight decay: applied to the weight, not mixed into the gradient */
        params[i] -= hyper.lr * (m_hat / (sqrtf(v_hat) + hyper.eps) + hyper.weight_decay * params[i]);
    }
}

static double sum_of_squares(const float *x, size_t n) { return sum_squares_double(x, n); }

static void cpu_synchronize(void) {}

const Kernels cpu_kernels = {
    .device_name = "cpu",
    .operand16_bytes = sizeof(float),
    .alloc = mem_alloc,
    .free = mem_free,
    .zero = cpu_zero,
    .to_device = cpu_copy,
    .to_host = cpu_copy,
    .copy = cpu_copy,
    KERNELS_BY_NAME
    .synchronize = cpu_synchronize,
    .trace_clock = NULL, /* one thread: the host's clock is the CPU's */
};
