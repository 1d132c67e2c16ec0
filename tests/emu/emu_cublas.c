/* The emulated cuBLAS: the two GEMMs the CUDA build calls, checked (leading dimensions,
 * every operand in device memory) and queued on the handle's stream, then run by
 * OpenBLAS. In TF32 mode the inputs are rounded to TF32's 10 mantissa bits first, as
 * tensor cores do. */
#include "emu.h"

#include <cblas.h>
#include <cublas_v2.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct cublasContext {
    cudaStream_t stream;
    int tf32;
};

cublasStatus_t cublasCreate_v2(cublasHandle_t *handle)
{
    *handle = calloc(1, sizeof **handle);
    return *handle != NULL ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_ALLOC_FAILED;
}

cublasStatus_t cublasDestroy_v2(cublasHandle_t handle)
{
    free(handle);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream)
{
    handle->stream = stream;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetAtomicsMode(cublasHandle_t handle, cublasAtomicsMode_t mode)
{
    (void)handle;
    (void)mode;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode)
{
    handle->tf32 = (mode & 0xf) == CUBLAS_TF32_TENSOR_OP_MATH; /* the low bits; flags above */
    return CUBLAS_STATUS_SUCCESS;
}

const char *cublasGetStatusString(cublasStatus_t status)
{
    return status == CUBLAS_STATUS_SUCCESS ? "CUBLAS_STATUS_SUCCESS" : "CUBLAS_STATUS_EMULATED_FAILURE";
}

/* One operand of a strided batch, column-major as cuBLAS sees it. */
typedef struct {
    const float *data;
    int rows, cols, ld;
    long long stride;
} Operand;

static size_t extent(const Operand *m, int count)
{
    if (m->rows == 0 || m->cols == 0)
        return 0;
    return (size_t)((long long)(count - 1) * m->stride + (long long)(m->cols - 1) * m->ld + m->rows);
}

static void check_operand(const char *name, const Operand *m, int count)
{
    if (m->ld < (m->rows > 1 ? m->rows : 1))
        emu_fail("cuBLAS: leading dimension of %s is %d, below its %d rows", name, m->ld, m->rows);
    size_t floats = extent(m, count);
    if (floats > 0 && !emu_is_device(m->data, floats * sizeof(float)))
        emu_fail("cuBLAS: %s (%p, %zu floats) is not device memory", name, (void *)m->data, floats);
}

static float round_to_tf32(float x)
{
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    bits = (bits + 0x1000u) & ~0x1fffu;
    memcpy(&x, &bits, sizeof x);
    return x;
}

/* The operand's data, or a TF32-rounded copy of it (to be freed by the caller). */
static float *tf32_copy(const Operand *m, int count)
{
    size_t floats = extent(m, count);
    float *copy = malloc(floats * sizeof(float) + 1);
    for (size_t i = 0; i < floats; i++)
        copy[i] = round_to_tf32(m->data[i]);
    return copy;
}

typedef struct {
    cublasOperation_t op_a, op_b;
    int m, n, k, count, tf32;
    float alpha, beta;
    Operand a, b, c;
} Gemm;

static enum CBLAS_TRANSPOSE cblas_op(cublasOperation_t op) { return op == CUBLAS_OP_N ? CblasNoTrans : CblasTrans; }

static void run_gemm(void *ctx)
{
    Gemm *g = ctx;
    emu_device_window(1);
    float *a_tf32 = g->tf32 && g->k > 0 ? tf32_copy(&g->a, g->count) : NULL;
    float *b_tf32 = g->tf32 && g->k > 0 ? tf32_copy(&g->b, g->count) : NULL;
    const float *a = a_tf32 != NULL ? a_tf32 : g->a.data, *b = b_tf32 != NULL ? b_tf32 : g->b.data;
    for (int i = 0; i < g->count; i++)
        cblas_sgemm(CblasColMajor, cblas_op(g->op_a), cblas_op(g->op_b), g->m, g->n, g->k, g->alpha,
                    a + i * g->a.stride, g->a.ld, b + i * g->b.stride, g->b.ld, g->beta,
                    (float *)g->c.data + i * g->c.stride, g->c.ld);
    free(a_tf32);
    free(b_tf32);
    emu_device_window(0);
    free(g);
}

cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t handle, cublasOperation_t op_a, cublasOperation_t op_b,
                                         int m, int n, int k, const float *alpha, const float *A, int lda,
                                         long long stride_a, const float *B, int ldb, long long stride_b,
                                         const float *beta, float *C, int ldc, long long stride_c, int count)
{
    Gemm *g = malloc(sizeof *g);
    *g = (Gemm){op_a, op_b, m, n, k, count, handle->tf32, *alpha, *beta,
                {A, op_a == CUBLAS_OP_N ? m : k, op_a == CUBLAS_OP_N ? k : m, lda, stride_a},
                {B, op_b == CUBLAS_OP_N ? k : n, op_b == CUBLAS_OP_N ? n : k, ldb, stride_b},
                {C, m, n, ldc, stride_c}};
    if (k > 0) {
        check_operand("A", &g->a, count);
        check_operand("B", &g->b, count);
    }
    check_operand("C", &g->c, count);
    emu_enqueue(handle->stream, run_gemm, g);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t op_a, cublasOperation_t op_b, int m, int n,
                              int k, const float *alpha, const float *A, int lda, const float *B, int ldb,
                              const float *beta, float *C, int ldc)
{
    return cublasSgemmStridedBatched(handle, op_a, op_b, m, n, k, alpha, A, lda, 0, B, ldb, 0, beta, C, ldc, 0, 1);
}
