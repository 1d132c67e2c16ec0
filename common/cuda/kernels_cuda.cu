/* The CUDA device: the Kernels table of kernels.h on one GPU. Matrix products go through
 * cuBLAS; everything else is a kernel of our own, written to follow kernels_cpu.c formula
 * by formula (the same exp polynomial, the same order of operations) so the two devices
 * agree to fp32 rounding.
 *
 * Determinism: every run gives the same bits. No kernel adds floats with atomics; every
 * reduction has a fixed shape that depends only on the problem size (a warp's butterfly,
 * a block's tree, or one thread walking rows in order), and cuBLAS runs on one stream
 * with atomics disabled. */
#include "cuda_check.h" /* first: see there */
#include "cuda_device.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <math.h>

#include "scalar_math.h" /* exp_poly and GELU: the CPU's own formulas */

enum { WARP = 32, BLOCK = 256, ROWS_PER_BLOCK = BLOCK / WARP };
static const unsigned FULL_MASK = 0xffffffffu;

/* Blocks for a grid-stride loop over n elements: enough to fill any GPU, and a fixed
 * function of n, so a loop's work split never depends on the device. */
static unsigned grid_for(size_t n)
{
    const size_t max_blocks = 65536;
    size_t blocks = (n + BLOCK - 1) / BLOCK;
    return (unsigned)(blocks < max_blocks ? (blocks > 0 ? blocks : 1) : max_blocks);
}

/* Blocks for one warp per row. */
static unsigned grid_for_rows(size_t rows)
{
    return (unsigned)((rows + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK);
}

__device__ __forceinline__ size_t grid_start(void)
{
    return (size_t)blockIdx.x * blockDim.x + threadIdx.x;
}

__device__ __forceinline__ size_t grid_stride(void)
{
    return (size_t)gridDim.x * blockDim.x;
}

/* The device address of module memory (a __device__ array). */
static void *symbol_address(const void *symbol)
{
    void *address = NULL;
    CUDA_CHECK(cudaGetSymbolAddress(&address, symbol));
    return address;
}

/* ---------------------------------------------------------------- device arithmetic */

/* Butterfly reductions: every lane ends with the same value (a + b == b + a exactly). */
__device__ __forceinline__ float warp_sum(float v)
{
    for (int offset = WARP / 2; offset > 0; offset /= 2)
        v += __shfl_xor_sync(FULL_MASK, v, offset);
    return v;
}

__device__ __forceinline__ float warp_max(float v)
{
    for (int offset = WARP / 2; offset > 0; offset /= 2)
        v = fmaxf(v, __shfl_xor_sync(FULL_MASK, v, offset));
    return v;
}

/* Block-wide reductions (blockDim.x a multiple of 32, at most 1024): warps reduce, then
 * warp 0 reduces the warps' results; every thread gets the answer. partials holds 32. */
__device__ float block_sum(float v, float *partials)
{
    int lane = threadIdx.x % WARP, warp = threadIdx.x / WARP, warps = blockDim.x / WARP;
    v = warp_sum(v);
    __syncthreads(); /* partials may still be read from a previous reduction */
    if (lane == 0)
        partials[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = warp_sum(lane < warps ? partials[lane] : 0.0f);
        if (lane == 0)
            partials[0] = v;
    }
    __syncthreads();
    return partials[0];
}

__device__ float block_max(float v, float *partials)
{
    int lane = threadIdx.x % WARP, warp = threadIdx.x / WARP, warps = blockDim.x / WARP;
    v = warp_max(v);
    __syncthreads();
    if (lane == 0)
        partials[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = warp_max(lane < warps ? partials[lane] : -INFINITY);
        if (lane == 0)
            partials[0] = v;
    }
    __syncthreads();
    return partials[0];
}

/* ---------------------------------------------------------------- cuBLAS, row-major */

/* Row-major C (M x N) = alpha op(A) op(B) + beta C, written like the CPU's cblas_sgemm
 * calls. cuBLAS is column-major, and a row-major matrix read column-major is its
 * transpose, so C^T = op(B)^T op(A)^T: the same flags with the operands swapped. */
static void gemm(cublasOperation_t op_a, cublasOperation_t op_b, int M, int N, int K, float alpha,
                 const float *A, int lda, const float *B, int ldb, float beta, float *C, int ldc)
{
    CUBLAS_CHECK(cublasSgemm(cuda_cublas_handle(), op_b, op_a, N, M, K, &alpha, B, ldb, A, lda, &beta, C, ldc));
}

static cudaDataType type_16(Format16 format) { return format == FORMAT_FP16 ? CUDA_R_16F : CUDA_R_16BF; }

/* gemm() on 16-bit A and B (bf16 or fp16), as tensor cores multiply them: each product
 * exact, the sums and C in fp32. */
static void gemm_16(Format16 format, cublasOperation_t op_a, cublasOperation_t op_b, int M, int N, int K,
                    float alpha, const bits16 *A, int lda, const bits16 *B, int ldb, float beta, float *C, int ldc)
{
    cudaDataType type = type_16(format);
    CUBLAS_CHECK(cublasGemmEx(cuda_cublas_handle(), op_b, op_a, N, M, K, &alpha, B, type, ldb, A, type, lda, &beta,
                              C, CUDA_R_32F, ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

static const cublasOperation_t NO_TRANS = CUBLAS_OP_N, TRANS = CUBLAS_OP_T;

/* ---------------------------------------------------------------- encoder */

/* One block per position. */
__global__ void encoder_forward_kernel(float *out, const int *tokens, const float *wte, const float *wpe,
                                       int T, int C)
{
    size_t n = blockIdx.x;
    const float *tok = wte + (size_t)tokens[n] * C;
    const float *pos = wpe + (n % T) * C;
    float *row = out + n * C;
    for (int c = threadIdx.x; c < C; c += blockDim.x)
        row[c] = tok[c] + pos[c];
}

/* One thread per (t, c), adding the B positions in order, as the CPU does. */
__global__ void encoder_backward_wpe_kernel(float *dwpe, const float *dout, int B, int T, int C)
{
    for (size_t i = grid_start(); i < (size_t)T * C; i += grid_stride()) {
        size_t t = i / C, c = i % C;
        float acc = dwpe[i];
        for (int b = 0; b < B; b++)
            acc += dout[((size_t)b * T + t) * C + c];
        dwpe[i] = acc;
    }
}

/* Adds to acc, in position order, dout[m][c] for every m in m0..m0+31 whose bit is set in
 * hits. Four loads are issued before the four additions, so the serial sum does not wait
 * on memory once per position. hits is the same in every lane. */
__device__ __forceinline__ float add_hit_rows(float acc, unsigned hits, const float *dout, int m0, int C,
                                              int c, bool active)
{
    while (hits != 0) {
        int position[4];
        bool valid[4];
        float value[4];
#pragma unroll
        for (int u = 0; u < 4; u++) {
            valid[u] = hits != 0;
            position[u] = m0 + (valid[u] ? __ffs((int)hits) - 1 : 0);
            hits &= hits - 1;
        }
#pragma unroll
        for (int u = 0; u < 4; u++)
            value[u] = valid[u] && active ? dout[(size_t)position[u] * C + c] : 0.0f;
#pragma unroll
        for (int u = 0; u < 4; u++)
            if (valid[u])
                acc += value[u];
    }
    return acc;
}

/* dwte rows are scattered by token, and a token may repeat. Without atomics: one block per
 * position n, and only the block at a token's first position works. It walks the later
 * positions in order (a warp ballot finds the matches 32 at a time) and adds their
 * gradients to the row in that order: the CPU's order, so the row comes out the same. */
__global__ void encoder_backward_wte_kernel(float *dwte, const float *dout, const int *tokens, int N, int C)
{
    int n = blockIdx.x;
    int token = tokens[n];
    /* backwards from n, a block-width at a time: a token that repeats usually did so lately */
    for (int end = n; end > 0; end -= (int)blockDim.x) {
        int m = end - 1 - (int)threadIdx.x;
        if (__syncthreads_or(m >= 0 && tokens[m] == token))
            return;
    }
    int lane = threadIdx.x % WARP, warp = threadIdx.x / WARP, warps = blockDim.x / WARP;
    float *drow = dwte + (size_t)token * C;
    for (int c0 = warp * WARP; c0 < C; c0 += warps * WARP) {
        int c = c0 + lane;
        bool active = c < C;
        float acc = active ? drow[c] : 0.0f;
        for (int m0 = n; m0 < N; m0 += WARP) {
            int m = m0 + lane;
            unsigned hits = __ballot_sync(FULL_MASK, m < N && tokens[m] == token);
            acc = add_hit_rows(acc, hits, dout, m0, C, c, active);
        }
        if (active)
            drow[c] = acc;
    }
}

static void encoder_forward(float *out, const int *tokens, const float *wte, const float *wpe, int B, int T, int C)
{
    if (B * T == 0)
        return;
    encoder_forward_kernel<<<B * T, BLOCK, 0, cuda_stream_checked()>>>(out, tokens, wte, wpe, T, C);
    LAUNCH_CHECK(encoder_forward_kernel);
}

static void encoder_backward(float *dwte, float *dwpe, const float *dout, const int *tokens, int B, int T, int C)
{
    if (B * T == 0 || C == 0)
        return;
    cudaStream_t stream = cuda_stream_checked();
    encoder_backward_wpe_kernel<<<grid_for((size_t)T * C), BLOCK, 0, stream>>>(dwpe, dout, B, T, C);
    LAUNCH_CHECK(encoder_backward_wpe_kernel);
    /* a warp per 32 channels, so each warp scans the positions once (for C <= 1024) */
    int threads = (C + WARP - 1) / WARP * WARP;
    threads = threads < 1024 ? threads : 1024;
    encoder_backward_wte_kernel<<<B * T, threads, 0, stream>>>(dwte, dout, tokens, B * T, C);
    LAUNCH_CHECK(encoder_backward_wte_kernel);
}

/* ---------------------------------------------------------------- layernorm */

/* One warp per row; mean first, then the variance from squared deviations, as the CPU. */
__global__ void layernorm_forward_kernel(float *out, float *mean, float *rstd, const float *inp,
                                         const float *weight, const float *bias, int N, int C)
{
    int row = blockIdx.x * ROWS_PER_BLOCK + threadIdx.x / WARP, lane = threadIdx.x % WARP;
    if (row >= N)
        return;
    const float *x = inp + (size_t)row * C;
    float sum = 0.0f;
    for (int c = lane; c < C; c += WARP)
        sum += x[c];
    float mu = warp_sum(sum) / C;
    float squares = 0.0f;
    for (int c = lane; c < C; c += WARP) {
        float d = x[c] - mu;
        squares += d * d;
    }
    float var = warp_sum(squares) / C;
    float s = 1.0f / sqrtf(var + 1e-5f);
    float *y = out + (size_t)row * C;
    for (int c = lane; c < C; c += WARP)
        y[c] = (x[c] - mu) * s * weight[c] + bias[c];
    if (lane == 0) {
        mean[row] = mu;
        rstd[row] = s;
    }
}

/* One warp per row: dinp += s * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)). */
__global__ void layernorm_backward_input_kernel(float *dinp, const float *dout, const float *inp,
                                                const float *weight, const float *mean, const float *rstd,
                                                int N, int C)
{
    int row = blockIdx.x * ROWS_PER_BLOCK + threadIdx.x / WARP, lane = threadIdx.x % WARP;
    if (row >= N)
        return;
    const float *dy = dout + (size_t)row * C, *x = inp + (size_t)row * C;
    float *dx = dinp + (size_t)row * C;
    float mu = mean[row], s = rstd[row];
    float sum_dxhat = 0.0f, sum_dxhat_xhat = 0.0f;
    for (int c = lane; c < C; c += WARP) {
        float xhat = (x[c] - mu) * s;
        float dxhat = dy[c] * weight[c];
        sum_dxhat += dxhat;
        sum_dxhat_xhat += dxhat * xhat;
    }
    float mean_dxhat = warp_sum(sum_dxhat) / C, mean_dxhat_xhat = warp_sum(sum_dxhat_xhat) / C;
    for (int c = lane; c < C; c += WARP) {
        float xhat = (x[c] - mu) * s;
        float dxhat = dy[c] * weight[c];
        dx[c] += s * (dxhat - mean_dxhat - xhat * mean_dxhat_xhat);
    }
}

/* Column sums over N rows. Block (x, y) sums 32 columns over chunk y of the rows:
 * threadIdx.y strides the chunk's rows (reading 32 consecutive floats of a row per warp),
 * then row 0 adds the 32 lanes in order. With one chunk that sum is the answer; with several,
 * each is a partial sum, and add_partials_kernel adds them in chunk order. Chunks let a
 * sum over a few hundred columns use the whole GPU (768 columns are 24 blocks of 32); their
 * number depends only on N and C, so the order of the sums never depends on the GPU. */
enum { COLUMNS_PER_BLOCK = 32, ROW_LANES = 32, MAX_ROW_CHUNKS = 32, MIN_CHUNK_ROWS = 256, MAX_PARTIALS = 131072 };

/* The partial sums of up to two column sums at once. Module memory, like the loss's
 * row_losses_buffer: it can never be refused by --mem-limit in the middle of a step. */
__device__ float column_partials[2 * MAX_PARTIALS];

static int row_chunks(int N, int C)
{
    int chunks = N / MIN_CHUNK_ROWS;
    chunks = chunks < MAX_ROW_CHUNKS ? chunks : MAX_ROW_CHUNKS;
    chunks = chunks < MAX_PARTIALS / C ? chunks : MAX_PARTIALS / C;
    return chunks > 1 ? chunks : 1;
}

static dim3 column_sum_grid(int columns, int chunks)
{
    return dim3((unsigned)((columns + COLUMNS_PER_BLOCK - 1) / COLUMNS_PER_BLOCK), (unsigned)chunks);
}

/* Rows [*first, *end) of this block's chunk. */
__device__ __forceinline__ void chunk_rows(int N, int *first, int *end)
{
    *first = (int)((long long)N * blockIdx.y / gridDim.y);
    *end = (int)((long long)N * (blockIdx.y + 1) / gridDim.y);
}

/* dst[c] += the sum, or this chunk's partial sum when there are several. */
__device__ __forceinline__ void add_or_keep(float *dst, float *partials, int C, int c, float sum)
{
    if (gridDim.y == 1)
        dst[c] += sum;
    else
        partials[(size_t)blockIdx.y * C + c] = sum;
}

/* dst[c] += the partial sums of column c, chunk 0 first. */
__global__ void add_partials_kernel(float *dst, const float *partials, int chunks, int C)
{
    size_t c = grid_start();
    if (c >= (size_t)C)
        return;
    float sum = 0.0f;
    for (int y = 0; y < chunks; y++)
        sum += partials[(size_t)y * C + c];
    dst[c] += sum;
}

static void add_partials(float *dst, const float *partials, int chunks, int C)
{
    if (chunks == 1)
        return;
    add_partials_kernel<<<grid_for((size_t)C), BLOCK, 0, cuda_stream_checked()>>>(dst, partials, chunks, C);
    LAUNCH_CHECK(add_partials_kernel);
}

/* dweight += sum of xhat * dout, dbias += sum of dout. */
__global__ void layernorm_backward_params_kernel(float *dweight, float *dbias, float *partials_w, float *partials_b,
                                                 const float *dout, const float *inp, const float *mean,
                                                 const float *rstd, int N, int C)
{
    __shared__ float part_w[ROW_LANES][COLUMNS_PER_BLOCK + 1], part_b[ROW_LANES][COLUMNS_PER_BLOCK + 1];
    int c = blockIdx.x * COLUMNS_PER_BLOCK + threadIdx.x, first, end;
    chunk_rows(N, &first, &end);
    float acc_w = 0.0f, acc_b = 0.0f;
    if (c < C)
        for (int n = first + threadIdx.y; n < end; n += ROW_LANES) {
            size_t i = (size_t)n * C + c;
            float dy = dout[i];
            float xhat = (inp[i] - mean[n]) * rstd[n];
            acc_b += dy;
            acc_w += xhat * dy;
        }
    part_w[threadIdx.y][threadIdx.x] = acc_w;
    part_b[threadIdx.y][threadIdx.x] = acc_b;
    __syncthreads();
    if (threadIdx.y != 0 || c >= C)
        return;
    float sum_w = 0.0f, sum_b = 0.0f;
    for (int lane = 0; lane < ROW_LANES; lane++) {
        sum_w += part_w[lane][threadIdx.x];
        sum_b += part_b[lane][threadIdx.x];
    }
    add_or_keep(dweight, partials_w, C, c, sum_w);
    add_or_keep(dbias, partials_b, C, c, sum_b);
}

static void layernorm_forward(float *out, float *mean, float *rstd, const float *inp, const float *weight,
                              const float *bias, int N, int C)
{
    if (N == 0)
        return;
    layernorm_forward_kernel<<<grid_for_rows(N), BLOCK, 0, cuda_stream_checked()>>>(out, mean, rstd, inp, weight,
                                                                                     bias, N, C);
    LAUNCH_CHECK(layernorm_forward_kernel);
}

static void layernorm_backward(float *dinp, float *dweight, float *dbias, const float *dout, const float *inp,
                               const float *weight, const float *mean, const float *rstd, int N, int C)
{
    if (N == 0 || C == 0)
        return;
    cudaStream_t stream = cuda_stream_checked();
    layernorm_backward_input_kernel<<<grid_for_rows(N), BLOCK, 0, stream>>>(dinp, dout, inp, weight, mean, rstd,
                                                                             N, C);
    LAUNCH_CHECK(layernorm_backward_input_kernel);
    int chunks = row_chunks(N, C);
    float *partials_w = (float *)symbol_address(column_partials), *partials_b = partials_w + MAX_PARTIALS;
    layernorm_backward_params_kernel<<<column_sum_grid(C, chunks), dim3(COLUMNS_PER_BLOCK, ROW_LANES), 0, stream>>>(
        dweight, dbias, partials_w, partials_b, dout, inp, mean, rstd, N, C);
    LAUNCH_CHECK(layernorm_backward_params_kernel);
    add_partials(dweight, partials_w, chunks, C);
    add_partials(dbias, partials_b, chunks, C);
}

/* ---------------------------------------------------------------- matmul */

/* One block per row. */
__global__ void add_bias_kernel(float *out, const float *bias, int OC)
{
    float *row = out + (size_t)blockIdx.x * OC;
    for (int o = threadIdx.x; o < OC; o += blockDim.x)
        row[o] += bias[o];
}

/* dbias += column sums of dout (N x OC); same scheme as the layernorm parameters. */
__global__ void bias_backward_kernel(float *dbias, float *partials, const float *dout, int N, int OC)
{
    __shared__ float part[ROW_LANES][COLUMNS_PER_BLOCK + 1];
    int o = blockIdx.x * COLUMNS_PER_BLOCK + threadIdx.x, first, end;
    chunk_rows(N, &first, &end);
    float acc = 0.0f;
    if (o < OC)
        for (int n = first + threadIdx.y; n < end; n += ROW_LANES)
            acc += dout[(size_t)n * OC + o];
    part[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.y != 0 || o >= OC)
        return;
    float sum = 0.0f;
    for (int lane = 0; lane < ROW_LANES; lane++)
        sum += part[lane][threadIdx.x];
    add_or_keep(dbias, partials, OC, o, sum);
}

static void add_bias(float *out, const float *bias, int N, int OC)
{
    if (bias == NULL)
        return;
    add_bias_kernel<<<N, BLOCK, 0, cuda_stream_checked()>>>(out, bias, OC);
    LAUNCH_CHECK(add_bias_kernel);
}

static void bias_backward(float *dbias, const float *dout, int N, int OC)
{
    if (dbias == NULL)
        return;
    int chunks = row_chunks(N, OC);
    float *partials = (float *)symbol_address(column_partials);
    bias_backward_kernel<<<column_sum_grid(OC, chunks), dim3(COLUMNS_PER_BLOCK, ROW_LANES), 0,
                           cuda_stream_checked()>>>(dbias, partials, dout, N, OC);
    LAUNCH_CHECK(bias_backward_kernel);
    add_partials(dbias, partials, chunks, OC);
}

static void matmul_forward(float *out, const float *inp, const float *weight, const float *bias, int N, int C,
                           int OC)
{
    if (N == 0 || OC == 0)
        return;
    /* out (N x OC) = inp (N x C) . weight^T */
    gemm(NO_TRANS, TRANS, N, OC, C, 1.0f, inp, C, weight, C, 0.0f, out, OC);
    add_bias(out, bias, N, OC);
}

static void matmul_backward(float *dinp, float *dweight, float *dbias, const float *dout, const float *inp,
                            const float *weight, int N, int C, int OC)
{
    if (N == 0 || C == 0 || OC == 0)
        return;
    /* dinp (N x C) = dout (N x OC) . weight (OC x C) */
    gemm(NO_TRANS, NO_TRANS, N, C, OC, 1.0f, dout, OC, weight, C, 0.0f, dinp, C);
    /* dweight (OC x C) += dout^T (OC x N) . inp (N x C) */
    gemm(TRANS, NO_TRANS, OC, C, N, 1.0f, dout, OC, inp, C, 1.0f, dweight, C);
    bias_backward(dbias, dout, N, OC);
}

/* ---------------------------------------------------------------- attention */

/* One warp per row of B*NH*T score rows (row t of its head): softmax over 0..t, exact
 * zeros after, as causal_softmax_row on the CPU. With `rounded` (16-bit attention), each
 * probability is also written rounded there, as p . v reads it: one pass over the scores
 * fewer than rounding them afterwards. */
__global__ void causal_softmax_kernel(float *att, bits16 *rounded, Format16 format, size_t rows, int T)
{
    size_t r = (size_t)blockIdx.x * ROWS_PER_BLOCK + threadIdx.x / WARP;
    int lane = threadIdx.x % WARP;
    if (r >= rows)
        return;
    int t = (int)(r % T);
    float *row = att + r * T;
    float max = -INFINITY;
    for (int j = lane; j <= t; j += WARP)
        max = fmaxf(max, row[j]);
    max = warp_max(max);
    float sum = 0.0f;
    for (int j = lane; j <= t; j += WARP) {
        float e = exp_poly(row[j] - max);
        row[j] = e;
        sum += e;
    }
    float inv_sum = 1.0f / warp_sum(sum);
    for (int j = lane; j < T; j += WARP) {
        float p = j <= t ? row[j] * inv_sum : 0.0f;
        row[j] = p;
        if (rounded != NULL)
            rounded[r * T + j] = float_to_float16(format, p);
    }
}

/* One warp per row: ds = p * (dp - sum(p * dp)) * scale over 0..t, zeros after, in place of
 * dp; or, with `rounded` (16-bit attention), only rounded there, where the products that
 * read d(scores) take it: the fp32 d(scores) would be written and read once more for
 * nothing. */
__global__ void causal_softmax_backward_kernel(float *dp_to_ds, bits16 *rounded, Format16 format, const float *p,
                                               float scale, size_t rows, int T)
{
    size_t r = (size_t)blockIdx.x * ROWS_PER_BLOCK + threadIdx.x / WARP;
    int lane = threadIdx.x % WARP;
    if (r >= rows)
        return;
    int t = (int)(r % T);
    float *d = dp_to_ds + r * T;
    const float *prow = p + r * T;
    float dot = 0.0f;
    for (int j = lane; j <= t; j += WARP)
        dot += prow[j] * d[j];
    dot = warp_sum(dot);
    for (int j = lane; j < T; j += WARP) {
        float ds = j <= t ? prow[j] * (d[j] - dot) * scale : 0.0f;
        if (rounded != NULL)
            rounded[r * T + j] = float_to_float16(format, ds);
        else
            d[j] = ds;
    }
}

/* Matrix i of a batch over the heads of several sequences is head i % NH of sequence
 * i / NH. Head h of position t is columns h*hs.. of row t of q (k, v), so cuBLAS reads the
 * heads in place, with leading dimension 3C, without a permuted copy. Sequences and heads lie
 * at different strides, which no one stride reaches, so each product gets a table of its
 * matrices' addresses. Batched over every head of every sequence, the products only hs wide
 * (p . v and the three like it in backward) are enough tiles to fill the GPU; over the
 * heads of one sequence, they were not. The elements are fp32, or 16-bit where attention
 * takes 16-bit operands (attention_forward_16). */
typedef struct {
    const void *first; /* matrix 0 of the batch */
    size_t sequence_stride, head_stride; /* in elements */
    cudaDataType type;
} HeadMatrices;

enum { MAX_HEAD_MATRICES = 4096 };

/* The three tables (A, B, C) of the batch in flight: the stream runs one product at a time,
 * so a table is refilled only after the product before it has read it. */
typedef const void *MatrixAddress;
__device__ MatrixAddress head_matrices_table[3 * MAX_HEAD_MATRICES];

static inline __host__ __device__ size_t element_bytes(cudaDataType type)
{
    return type == CUDA_R_32F ? sizeof(float) : sizeof(bits16);
}

__device__ __forceinline__ const void *head_matrix(HeadMatrices m, size_t i, int NH)
{
    size_t element = i / NH * m.sequence_stride + i % NH * m.head_stride;
    return (const char *)m.first + element * element_bytes(m.type);
}

__global__ void head_matrices_kernel(HeadMatrices a, HeadMatrices b, HeadMatrices c, int count, int NH)
{
    size_t i = grid_start();
    if (i >= (size_t)count)
        return;
    head_matrices_table[i] = head_matrix(a, i, NH);
    head_matrices_table[MAX_HEAD_MATRICES + i] = head_matrix(b, i, NH);
    head_matrices_table[2 * MAX_HEAD_MATRICES + i] = head_matrix(c, i, NH);
}

static HeadMatrices skip_matrices(HeadMatrices m, int skipped, int NH)
{
    size_t element = (size_t)(skipped / NH) * m.sequence_stride + (size_t)(skipped % NH) * m.head_stride;
    m.first = (const char *)m.first + element * element_bytes(m.type);
    return m;
}

/* One batched product over the tables: fp32 A and B in cublasSgemmBatched, 16-bit ones as
 * gemm_16 multiplies them (each product exact, the sums and C in fp32). */
static void gemm_tables(cublasOperation_t op_a, cublasOperation_t op_b, int M, int N, int K, float alpha,
                        cudaDataType type, const MatrixAddress *table, int lda, int ldb, float beta, int ldc,
                        int matrices)
{
    const MatrixAddress *a = table, *b = table + MAX_HEAD_MATRICES, *c = table + 2 * MAX_HEAD_MATRICES;
    if (type == CUDA_R_32F)
        CUBLAS_CHECK(cublasSgemmBatched(cuda_cublas_handle(), op_b, op_a, N, M, K, &alpha, (const float *const *)b,
                                        ldb, (const float *const *)a, lda, &beta, (float *const *)c, ldc, matrices));
    else
        CUBLAS_CHECK(cublasGemmBatchedEx(cuda_cublas_handle(), op_b, op_a, N, M, K, &alpha, b, type, ldb, a, type,
                                         lda, &beta, (void *const *)c, CUDA_R_32F, ldc, matrices, CUBLAS_COMPUTE_32F,
                                         CUBLAS_GEMM_DEFAULT));
}

/* gemm() for count matrices of each operand, in calls of at most MAX_HEAD_MATRICES whole
 * sequences' heads (one head at a time if a sequence has more). Either the batch starts at
 * a sequence's first head or count is 1, so matrix i's head is i % NH. A and B are of one
 * type; C is fp32. */
static void gemm_heads(cublasOperation_t op_a, cublasOperation_t op_b, int M, int N, int K, float alpha,
                       HeadMatrices A, int lda, HeadMatrices B, int ldb, float beta, HeadMatrices C, int ldc,
                       int count, int NH)
{
    MatrixAddress *table = (MatrixAddress *)symbol_address(head_matrices_table);
    int per_call = NH <= MAX_HEAD_MATRICES ? MAX_HEAD_MATRICES / NH * NH : 1;
    cudaStream_t stream = cuda_stream_checked();
    for (int done = 0; done < count; done += per_call) {
        int matrices = count - done < per_call ? count - done : per_call;
        head_matrices_kernel<<<grid_for((size_t)matrices), BLOCK, 0, stream>>>(
            skip_matrices(A, done, NH), skip_matrices(B, done, NH), skip_matrices(C, done, NH), matrices, NH);
        LAUNCH_CHECK(head_matrices_kernel);
        gemm_tables(op_a, op_b, M, N, K, alpha, A.type, table, lda, ldb, beta, ldc, matrices);
    }
}

static HeadMatrices heads_at(const void *first, size_t sequence_stride, size_t head_stride, cudaDataType type)
{
    HeadMatrices m = {first, sequence_stride, head_stride, type};
    return m;
}

static void round_to_16(Format16 format, bits16 *dst, const float *src, size_t n);

/* Where attention's products take their operands: the fp32 values themselves (format
 * NULL), or those values rounded to the 16-bit format into `rounded`. */
typedef struct {
    const Format16 *format;
    bits16 *rounded;
} OperandPlace;

static cudaDataType operand_type(const Format16 *format)
{
    return format == NULL ? CUDA_R_32F : type_16(*format);
}

/* n values as the products read them: src itself, or rounded into place.rounded. */
static const void *operand_values(OperandPlace place, const float *src, size_t n)
{
    if (place.format == NULL)
        return src;
    round_to_16(*place.format, place.rounded, src, n);
    return place.rounded;
}

/* Where the softmaxes, which round as they write, leave the values the products read: in
 * `fp32` itself, or in place.rounded. */
static const void *written_values(OperandPlace place, const float *fp32)
{
    return place.format == NULL ? (const void *)fp32 : (const void *)place.rounded;
}

/* The format such a kernel rounds to: any one when it does not round (place.rounded NULL). */
static Format16 rounding_format(OperandPlace place)
{
    return place.format == NULL ? FORMAT_BF16 : *place.format;
}

/* The place of the 16-bit operands that start `offset` operands into `operands`
 * (kernels.h: q, k and v from 0; dy from 3NC; the heads' T x T from 4NC), or fp32's. */
static OperandPlace operand_place(const Format16 *format, void *operands, size_t offset)
{
    OperandPlace place = {format, format == NULL ? NULL : (bits16 *)operands + offset};
    return place;
}

static void attention_forward_on(float *out, float *att, const float *qkv, int B, int T, int C, int NH,
                                 const Format16 *format, void *operands)
{
    if (B == 0 || T == 0)
        return;
    int hs = C / NH, C3 = 3 * C, heads = B * NH;
    float scale = 1.0f / sqrtf((float)hs);
    size_t TT = (size_t)T * T, seq3 = (size_t)T * C3;
    cudaDataType type = operand_type(format);
    const char *qkv_operand = (const char *)operand_values(operand_place(format, operands, 0), qkv, (size_t)B * seq3);
    size_t bytes = element_bytes(type);
    HeadMatrices q = heads_at(qkv_operand, seq3, hs, type), k = heads_at(qkv_operand + C * bytes, seq3, hs, type),
                 v = heads_at(qkv_operand + 2 * C * bytes, seq3, hs, type);
    HeadMatrices scores = heads_at(att, NH * TT, TT, CUDA_R_32F), y = heads_at(out, (size_t)T * C, hs, CUDA_R_32F);
    /* scores = scale * q . k^T */
    gemm_heads(NO_TRANS, TRANS, T, T, hs, scale, q, C3, k, C3, 0.0f, scores, T, heads, NH);
    size_t rows = (size_t)heads * T;
    OperandPlace p_place = operand_place(format, operands, (size_t)4 * B * T * C);
    causal_softmax_kernel<<<grid_for_rows(rows), BLOCK, 0, cuda_stream_checked()>>>(att, p_place.rounded,
                                                                                     rounding_format(p_place), rows, T);
    LAUNCH_CHECK(causal_softmax_kernel);
    /* out = p . v */
    HeadMatrices p = heads_at(written_values(p_place, att), NH * TT, TT, type);
    gemm_heads(NO_TRANS, NO_TRANS, T, hs, T, 1.0f, p, T, v, C3, 0.0f, y, C, heads, NH);
}

static void attention_forward(float *out, float *att, float *scratch, const float *qkv, int B, int T, int C, int NH)
{
    (void)scratch; /* the batched products read the heads in place */
    attention_forward_on(out, att, qkv, B, T, C, NH, NULL, NULL);
}

static void attention_forward_16(Format16 format, float *out, float *att, float *scratch, const float *qkv, int B,
                                 int T, int C, int NH, void *operands)
{
    (void)scratch;
    attention_forward_on(out, att, qkv, B, T, C, NH, &format, operands);
}

/* What backward's products read: q, k, v and dy as operands (rounded once for all heads),
 * and where a call's probabilities and d(scores) go when they are rounded. */
typedef struct {
    const char *qkv, *dy; /* operands: fp32 or 16-bit */
    cudaDataType type;
    OperandPlace heads;
} BackwardOperands;

/* count heads from head `first` (in sequence-major order: sequence first / NH, head
 * first % NH); dscores holds count x T x T floats */
static void attention_backward_heads(float *dqkv, float *dscores, const float *att, const BackwardOperands *ops,
                                     int first, int count, int T, int C, int NH)
{
    int hs = C / NH, C3 = 3 * C;
    float scale = 1.0f / sqrtf((float)hs);
    size_t TT = (size_t)T * T, seq3 = (size_t)T * C3, bytes = element_bytes(ops->type);
    size_t row0 = (size_t)(first / NH) * seq3 + (size_t)(first % NH) * hs;
    const char *q0 = ops->qkv + row0 * bytes;
    HeadMatrices q = heads_at(q0, seq3, hs, ops->type), k = heads_at(q0 + C * bytes, seq3, hs, ops->type),
                 v = heads_at(q0 + 2 * C * bytes, seq3, hs, ops->type);
    HeadMatrices dq = heads_at(dqkv + row0, seq3, hs, CUDA_R_32F), dk = heads_at(dqkv + row0 + C, seq3, hs, CUDA_R_32F),
                 dv = heads_at(dqkv + row0 + 2 * C, seq3, hs, CUDA_R_32F);
    const float *p_first = att + (size_t)first * TT;
    HeadMatrices ds = heads_at(dscores, NH * TT, TT, CUDA_R_32F);
    size_t dy0 = (size_t)(first / NH) * T * C + (size_t)(first % NH) * hs;
    HeadMatrices dy = heads_at(ops->dy + dy0 * bytes, (size_t)T * C, hs, ops->type);
    /* dp = dy . v^T ; dv = p^T . dy */
    gemm_heads(NO_TRANS, TRANS, T, T, hs, 1.0f, dy, C, v, C3, 0.0f, ds, T, count, NH);
    HeadMatrices p = heads_at(operand_values(ops->heads, p_first, count * TT), NH * TT, TT, ops->type);
    gemm_heads(TRANS, NO_TRANS, T, hs, T, 1.0f, p, T, dy, C, 0.0f, dv, C3, count, NH);
    size_t rows = (size_t)count * T;
    /* (the probabilities' rounded copy has been read: d(scores) rounded takes its place) */
    causal_softmax_backward_kernel<<<grid_for_rows(rows), BLOCK, 0, cuda_stream_checked()>>>(
        dscores, ops->heads.rounded, rounding_format(ops->heads), p_first, scale, rows, T);
    LAUNCH_CHECK(causal_softmax_backward_kernel);
    /* dq = ds . k ; dk = ds^T . q */
    HeadMatrices ds_operand = heads_at(written_values(ops->heads, dscores), NH * TT, TT, ops->type);
    gemm_heads(NO_TRANS, NO_TRANS, T, hs, T, 1.0f, ds_operand, T, k, C3, 0.0f, dq, C3, count, NH);
    gemm_heads(TRANS, NO_TRANS, T, hs, T, 1.0f, ds_operand, T, q, C3, 0.0f, dk, C3, count, NH);
}

/* d(scores) for every head of every sequence at once lets the backward GEMMs batch over all
 * of them: B x NH x T x T floats, borrowed for the call. When they cannot be had (--mem-limit,
 * or the GPU is full), one sequence's heads at a time, then one head at a time through the
 * caller's T x T scratch: slower, and the same arithmetic. */
static void attention_backward_on(float *dqkv, float *scratch, const float *dout, const float *qkv, const float *att,
                                  int B, int T, int C, int NH, const Format16 *format, void *operands)
{
    if (B == 0 || T == 0)
        return;
    size_t head_bytes = (size_t)T * T * sizeof(float), N = (size_t)B * T;
    BackwardOperands ops = {(const char *)operand_values(operand_place(format, operands, 0), qkv, N * 3 * C),
                            (const char *)operand_values(operand_place(format, operands, 3 * N * C), dout, N * C),
                            operand_type(format), operand_place(format, operands, 4 * N * C)};
    int heads = B * NH, per_call = heads;
    float *dscores = (float *)cuda_borrow((size_t)heads * head_bytes, MEM_SCRATCH);
    if (dscores == NULL) {
        per_call = NH;
        dscores = (float *)cuda_borrow((size_t)NH * head_bytes, MEM_SCRATCH);
    }
    size_t borrowed = dscores != NULL ? (size_t)per_call * head_bytes : 0;
    if (dscores == NULL) {
        per_call = 1;
        dscores = scratch;
    }
    for (int first = 0; first < heads; first += per_call)
        attention_backward_heads(dqkv, dscores, att, &ops, first, per_call, T, C, NH);
    if (borrowed > 0)
        cuda_give_back(dscores, borrowed, MEM_SCRATCH);
}

static void attention_backward(float *dqkv, float *scratch, const float *dout, const float *qkv, const float *att,
                               int B, int T, int C, int NH)
{
    attention_backward_on(dqkv, scratch, dout, qkv, att, B, T, C, NH, NULL, NULL);
}

static void attention_backward_16(Format16 format, float *dqkv, float *scratch, const float *dout, const float *qkv,
                                  const float *att, int B, int T, int C, int NH, void *operands)
{
    attention_backward_on(dqkv, scratch, dout, qkv, att, B, T, C, NH, &format, operands);
}

/* ---------------------------------------------------------------- GELU, residual */

/* Both bound by memory: the input stays as it is (kernels.h), and backward computes the
 * slope from it again, arithmetic the GPU has to spare, where slopes written out by forward
 * would add a pass over memory (reasoned, not yet timed). */
__global__ void gelu_forward_kernel(float *out, const float *inp, size_t n)
{
    for (size_t i = grid_start(); i < n; i += grid_stride())
        out[i] = gelu_tanh_value(inp[i]);
}

__global__ void gelu_backward_kernel(float *dinout, const float *inp, size_t n)
{
    for (size_t i = grid_start(); i < n; i += grid_stride())
        dinout[i] *= gelu_tanh_slope(inp[i]);
}

__global__ void residual_forward_kernel(float *out, const float *a, const float *b, size_t n)
{
    for (size_t i = grid_start(); i < n; i += grid_stride())
        out[i] = a[i] + b[i];
}

__global__ void round_to_16_kernel(Format16 format, bits16 *dst, const float *src, size_t n)
{
    for (size_t i = grid_start(); i < n; i += grid_stride())
        dst[i] = float_to_float16(format, src[i]);
}

__global__ void widen_16_kernel(Format16 format, float *dst, const bits16 *src, size_t n)
{
    for (size_t i = grid_start(); i < n; i += grid_stride())
        dst[i] = float16_to_float(format, src[i]);
}

static void round_to_16(Format16 format, bits16 *dst, const float *src, size_t n)
{
    if (n == 0)
        return;
    round_to_16_kernel<<<grid_for(n), BLOCK, 0, cuda_stream_checked()>>>(format, dst, src, n);
    LAUNCH_CHECK(round_to_16_kernel);
}

static void widen_16(Format16 format, float *dst, const bits16 *src, size_t n)
{
    if (n == 0)
        return;
    widen_16_kernel<<<grid_for(n), BLOCK, 0, cuda_stream_checked()>>>(format, dst, src, n);
    LAUNCH_CHECK(widen_16_kernel);
}

/* ---------------------------------------------------------------- matmul on 16-bit operands */

static void matmul_forward_16(Format16 format, float *out, const float *inp, const float *weight, const float *bias,
                              int N, int C, int OC, void *operands)
{
    if (N == 0 || OC == 0)
        return;
    bits16 *inp16 = (bits16 *)operands, *weight16 = inp16 + (size_t)N * C;
    round_to_16(format, inp16, inp, (size_t)N * C);
    round_to_16(format, weight16, weight, (size_t)OC * C);
    gemm_16(format, NO_TRANS, TRANS, N, OC, C, 1.0f, inp16, C, weight16, C, 0.0f, out, OC);
    add_bias(out, bias, N, OC);
}

static void matmul_backward_16(Format16 format, float *dinp, float *dweight, float *dbias, const float *dout,
                               const float *inp, const float *weight, int N, int C, int OC, void *operands)
{
    if (N == 0 || C == 0 || OC == 0)
        return;
    bits16 *inp16 = (bits16 *)operands, *weight16 = inp16 + (size_t)N * C, *dout16 = weight16 + (size_t)OC * C;
    round_to_16(format, inp16, inp, (size_t)N * C);
    round_to_16(format, weight16, weight, (size_t)OC * C);
    round_to_16(format, dout16, dout, (size_t)N * OC);
    gemm_16(format, NO_TRANS, NO_TRANS, N, C, OC, 1.0f, dout16, OC, weight16, C, 0.0f, dinp, C);
    gemm_16(format, TRANS, NO_TRANS, OC, C, N, 1.0f, dout16, OC, inp16, C, 1.0f, dweight, C);
    bias_backward(dbias, dout, N, OC);
}

static void gelu_forward(float *out, float *inp, size_t n)
{
    if (n == 0)
        return;
    gelu_forward_kernel<<<grid_for(n), BLOCK, 0, cuda_stream_checked()>>>(out, inp, n);
    LAUNCH_CHECK(gelu_forward_kernel);
}

static void gelu_backward(float *dinout, const float *inp, size_t n)
{
    if (n == 0)
        return;
    gelu_backward_kernel<<<grid_for(n), BLOCK, 0, cuda_stream_checked()>>>(dinout, inp, n);
    LAUNCH_CHECK(gelu_backward_kernel);
}

static void residual_forward(float *out, const float *a, const float *b, size_t n)
{
    if (n == 0)
        return;
    residual_forward_kernel<<<grid_for(n), BLOCK, 0, cuda_stream_checked()>>>(out, a, b, n);
    LAUNCH_CHECK(residual_forward_kernel);
}

/* ---------------------------------------------------------------- softmax cross-entropy */

/* The emulated GPU's build (tests/emu/nvcc_emu.sh) makes a pass shorter, so that its test of
 * several passes runs in seconds: it emulates 512 threads a row one at a time. */
#ifndef DTC_LOSS_ROWS_PER_PASS
#define DTC_LOSS_ROWS_PER_PASS 65536
#endif
enum { SOFTMAX_THREADS = 512, LOSS_ROWS_PER_PASS = DTC_LOSS_ROWS_PER_PASS };

extern "C" int cuda_loss_rows_per_pass(void) { return LOSS_ROWS_PER_PASS; }

/* The per-row losses of one pass, read back by the host. Module memory rather than an
 * allocation: it can never be refused by --mem-limit in the middle of a step. */
__device__ float row_losses_buffer[LOSS_ROWS_PER_PASS];

/* One block per row (row0 + blockIdx.x). The thread that owns the target column keeps its
 * exponential, so the loss needs no second look at the row: log(sum) - log(e_target),
 * taken before normalising, as the CPU. The last pass computes each exponential again
 * rather than reading it back: the same values, and one write and one read of the row
 * fewer (a row of GPT-2's logits is 201 KB, and thousands are in flight: they leave the
 * cache between passes). */
__global__ void softmax_crossentropy_forward_kernel(float *logits, float *row_losses, const int *targets, int row0,
                                                    int V)
{
    __shared__ float partials[WARP];
    size_t n = (size_t)row0 + blockIdx.x;
    float *row = logits + n * V;
    int target = row_losses != NULL ? targets[n] : -1;
    float max = -INFINITY;
    for (int j = threadIdx.x; j < V; j += blockDim.x)
        max = fmaxf(max, row[j]);
    max = block_max(max, partials);
    float sum = 0.0f, target_exp = 0.0f;
    for (int j = threadIdx.x; j < V; j += blockDim.x) {
        float e = exp_poly(row[j] - max);
        sum += e;
        if (j == target)
            target_exp = e;
    }
    sum = block_sum(sum, partials);
    if (target >= 0 && (int)threadIdx.x == target % (int)blockDim.x)
        row_losses[blockIdx.x] = logf(sum) - logf(target_exp);
    float inv_sum = 1.0f / sum;
    for (int j = threadIdx.x; j < V; j += blockDim.x)
        row[j] = exp_poly(row[j] - max) * inv_sum;
}

/* One block per row: subtract 1 at the target, then scale. */
__global__ void softmax_crossentropy_backward_kernel(float *probs, const int *targets, int V, float scale)
{
    float *row = probs + (size_t)blockIdx.x * V;
    int target = targets[blockIdx.x];
    for (int j = threadIdx.x; j < V; j += blockDim.x) {
        float p = row[j];
        if (j == target)
            p -= 1.0f;
        row[j] = p * scale;
    }
}

/* The loss is summed on the host, in a double and in row order, as the CPU does, from the
 * per-row losses of up to LOSS_ROWS_PER_PASS rows at a time. */
static float softmax_crossentropy_forward(float *logits_to_probs, const int *targets, int N, int V)
{
    cudaStream_t stream = cuda_stream_checked();
    if (targets == NULL) {
        if (N > 0) {
            softmax_crossentropy_forward_kernel<<<N, SOFTMAX_THREADS, 0, stream>>>(logits_to_probs, NULL, NULL, 0, V);
            LAUNCH_CHECK(softmax_crossentropy_forward_kernel);
        }
        return 0.0f;
    }
    static float host_losses[LOSS_ROWS_PER_PASS];
    float *device_losses = (float *)symbol_address(row_losses_buffer);
    double loss_sum = 0.0;
    for (int row0 = 0; row0 < N; row0 += LOSS_ROWS_PER_PASS) {
        int rows = N - row0 < LOSS_ROWS_PER_PASS ? N - row0 : LOSS_ROWS_PER_PASS;
        softmax_crossentropy_forward_kernel<<<rows, SOFTMAX_THREADS, 0, stream>>>(logits_to_probs, device_losses,
                                                                                  targets, row0, V);
        LAUNCH_CHECK(softmax_crossentropy_forward_kernel);
        CUDA_CHECK(cudaMemcpyAsync(host_losses, device_losses, (size_t)rows * sizeof(float), cudaMemcpyDeviceToHost,
                                   stream));
        CUDA_CHECK(cudaStreamSynchronize(stream));
        for (int i = 0; i < rows; i++)
            loss_sum += host_losses[i];
    }
    return (float)(loss_sum / N);
}

static void softmax_crossentropy_backward(float *probs_to_dlogits, const int *targets, int N, int V, float scale)
{
    if (N == 0)
        return;
    softmax_crossentropy_backward_kernel<<<N, BLOCK, 0, cuda_stream_checked()>>>(probs_to_dlogits, targets, V, scale);
    LAUNCH_CHECK(softmax_crossentropy_backward_kernel);
}

/* ---------------------------------------------------------------- optimizer */

__global__ void adamw_kernel(float *params, const float *grads, float *m, float *v, size_t n, AdamWHyper hyper,
                             float grad_scale, float m_correction, float v_correction)
{
    for (size_t i = grid_start(); i < n; i += grid_stride()) {
        float g = grads[i] * grad_scale;
        float m_i = hyper.beta1 * m[i] + (1.0f - hyper.beta1) * g;
        float v_i = hyper.beta2 * v[i] + (1.0f - hyper.beta2) * g * g;
        m[i] = m_i;
        v[i] = v_i;
        float m_hat = m_i * m_correction;
        float v_hat = v_i * v_correction;
        /* decoupled weight decay: applied to the weight, not mixed into the gradient */
        params[i] -= hyper.lr * (m_hat / (sqrtf(v_hat) + hyper.eps) + hyper.weight_decay * params[i]);
    }
}

static void adamw_update(float *params, const float *grads, float *m, float *v, size_t n, AdamWHyper hyper,
                         float grad_scale, int step)
{
    if (n == 0)
        return;
    /* on the host, with the same powf as the CPU device */
    float m_correction = 1.0f / (1.0f - powf(hyper.beta1, (float)step));
    float v_correction = 1.0f / (1.0f - powf(hyper.beta2, (float)step));
    adamw_kernel<<<grid_for(n), BLOCK, 0, cuda_stream_checked()>>>(params, grads, m, v, n, hyper, grad_scale,
                                                                    m_correction, v_correction);
    LAUNCH_CHECK(adamw_kernel);
}

/* Sum of squares in double: a fixed grid of at most SQUARES_BLOCKS blocks, each a strided
 * sum per thread and a tree in shared memory, then one block adds the block results by the
 * same tree. The shape depends only on n. */
enum { SQUARES_BLOCKS = 1024, SQUARES_THREADS = 256 };

__device__ double squares_partials[SQUARES_BLOCKS];
__device__ double squares_total;

/* Tree over blockDim.x (a power of two) values in shared; the result lands in shared[0]. */
__device__ void tree_sum(double *shared)
{
    for (int half = blockDim.x / 2; half > 0; half /= 2) {
        __syncthreads();
        if ((int)threadIdx.x < half)
            shared[threadIdx.x] += shared[threadIdx.x + half];
    }
    __syncthreads();
}

__global__ void sum_of_squares_blocks_kernel(const float *x, size_t n, double *partials)
{
    __shared__ double shared[SQUARES_THREADS];
    double acc = 0.0;
    for (size_t i = grid_start(); i < n; i += grid_stride())
        acc += (double)x[i] * x[i];
    shared[threadIdx.x] = acc;
    tree_sum(shared);
    if (threadIdx.x == 0)
        partials[blockIdx.x] = shared[0];
}

__global__ void sum_of_squares_total_kernel(const double *partials, int count, double *total)
{
    __shared__ double shared[SQUARES_THREADS];
    double acc = 0.0;
    for (int i = threadIdx.x; i < count; i += blockDim.x)
        acc += partials[i];
    shared[threadIdx.x] = acc;
    tree_sum(shared);
    if (threadIdx.x == 0)
        *total = shared[0];
}

static double sum_of_squares(const float *x, size_t n)
{
    if (n == 0)
        return 0.0;
    cudaStream_t stream = cuda_stream_checked();
    double *partials = (double *)symbol_address(squares_partials);
    double *total = (double *)symbol_address(&squares_total);
    size_t wanted = (n + SQUARES_THREADS - 1) / SQUARES_THREADS;
    int blocks = wanted < (size_t)SQUARES_BLOCKS ? (int)wanted : (int)SQUARES_BLOCKS;
    sum_of_squares_blocks_kernel<<<blocks, SQUARES_THREADS, 0, stream>>>(x, n, partials);
    LAUNCH_CHECK(sum_of_squares_blocks_kernel);
    sum_of_squares_total_kernel<<<1, SQUARES_THREADS, 0, stream>>>(partials, blocks, total);
    LAUNCH_CHECK(sum_of_squares_total_kernel);
    double result = 0.0;
    CUDA_CHECK(cudaMemcpyAsync(&result, total, sizeof result, cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    return result;
}

/* ---------------------------------------------------------------- the table */

/* Designated initialisers: a GNU extension in C++17 that g++ accepts silently; the fields
 * must stay in kernels.h's order (the compiler says so if they do not). */
const Kernels cuda_kernels = {
    .device_name = "cuda",
    .operand16_bytes = sizeof(bits16),
    .alloc = cuda_alloc_tracked,
    .free = cuda_free_tracked,
    .zero = cuda_zero,
    .to_device = cuda_to_device,
    .to_host = cuda_to_host,
    .copy = cuda_copy,
    KERNELS_BY_NAME
    .synchronize = cuda_synchronize,
    .trace_clock = &cuda_trace_clock,
};
