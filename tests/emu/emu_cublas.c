/* The emulated cuBLAS: the GEMMs the CUDA build calls, checked (leading dimensions,
 * every operand in device memory) and queued on the handle's stream, then run by
 * OpenBLAS. In TF32 mode the inputs are rounded to TF32's 10 mantissa bits first, as
 * tensor cores do; cublasGemmEx's bf16 or fp16 inputs are widened, exactly, and summed in
 * fp32. */
#include "emu.h"

#include "float16.h"

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

/* One operand of a strided batch, column-major as cuBLAS sees it: floats, or bf16 or fp16
 * for cublasGemmEx. */
typedef struct {
    const void *data;
    int rows, cols, ld;
    long long stride;
    cudaDataType type;
} Operand;

static size_t element_bytes(const Operand *m) { return m->type == CUDA_R_32F ? sizeof(float) : sizeof(bits16); }

/* Elements from the first to one past the last the batch reads. */
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
    size_t elements = extent(m, count);
    if (elements > 0 && !emu_is_device(m->data, elements * element_bytes(m)))
        emu_fail("cuBLAS: %s (%p, %zu %s) is not device memory", name, m->data, elements,
                 m->type == CUDA_R_32F ? "floats" : m->type == CUDA_R_16F ? "fp16" : "bf16");
}

static float round_to_tf32(float x)
{
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    bits = (bits + 0x1000u) & ~0x1fffu;
    memcpy(&x, &bits, sizeof x);
    return x;
}

/* The operand as the floats a tensor core multiplies (to be freed by the caller): bf16 or
 * fp16 widened, exactly; in TF32 mode, floats rounded to TF32; NULL when sgemm can read the
 * data as it is. */
static float *tensor_core_copy(const Operand *m, int count, int tf32)
{
    if (m->type == CUDA_R_32F && !tf32)
        return NULL;
    size_t elements = extent(m, count);
    float *copy = malloc(elements * sizeof(float) + 1);
    Format16 format = m->type == CUDA_R_16F ? FORMAT_FP16 : FORMAT_BF16;
    for (size_t i = 0; i < elements; i++)
        copy[i] = m->type == CUDA_R_32F ? round_to_tf32(((const float *)m->data)[i])
                                        : float16_to_float(format, ((const bits16 *)m->data)[i]);
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
    float *a_copy = g->k > 0 ? tensor_core_copy(&g->a, g->count, g->tf32) : NULL;
    float *b_copy = g->k > 0 ? tensor_core_copy(&g->b, g->count, g->tf32) : NULL;
    const float *a = a_copy != NULL ? a_copy : g->a.data, *b = b_copy != NULL ? b_copy : g->b.data;
    for (int i = 0; i < g->count; i++)
        cblas_sgemm(CblasColMajor, cblas_op(g->op_a), cblas_op(g->op_b), g->m, g->n, g->k, g->alpha,
                    a + i * g->a.stride, g->a.ld, b + i * g->b.stride, g->b.ld, g->beta,
                    (float *)g->c.data + i * g->c.stride, g->c.ld);
    free(a_copy);
    free(b_copy);
    emu_device_window(0);
    free(g);
}

/* A and B are read only when there is something to sum (k > 0); C always. */
static void check_operands(const Gemm *g)
{
    if (g->k > 0) {
        check_operand("A", &g->a, g->count);
        check_operand("B", &g->b, g->count);
    }
    check_operand("C", &g->c, g->count);
}

static cublasStatus_t enqueue_gemm(cublasHandle_t handle, cublasOperation_t op_a, cublasOperation_t op_b, int m,
                                   int n, int k, float alpha, Operand a, Operand b, float beta, Operand c, int count)
{
    Gemm *g = malloc(sizeof *g);
    *g = (Gemm){op_a, op_b, m, n, k, count, handle->tf32, alpha, beta, a, b, c};
    check_operands(g);
    emu_enqueue(handle->stream, run_gemm, g);
    return CUBLAS_STATUS_SUCCESS;
}

/* op(X) is rows x cols; X itself, column-major, is that or its transpose. */
static Operand operand(const void *data, cublasOperation_t op, int rows, int cols, int ld, long long stride,
                       cudaDataType type)
{
    return (Operand){data, op == CUBLAS_OP_N ? rows : cols, op == CUBLAS_OP_N ? cols : rows, ld, stride, type};
}

cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t handle, cublasOperation_t op_a, cublasOperation_t op_b,
                                         int m, int n, int k, const float *alpha, const float *A, int lda,
                                         long long stride_a, const float *B, int ldb, long long stride_b,
                                         const float *beta, float *C, int ldc, long long stride_c, int count)
{
    return enqueue_gemm(handle, op_a, op_b, m, n, k, *alpha, operand(A, op_a, m, k, lda, stride_a, CUDA_R_32F),
                        operand(B, op_b, k, n, ldb, stride_b, CUDA_R_32F), *beta,
                        operand(C, CUBLAS_OP_N, m, n, ldc, stride_c, CUDA_R_32F), count);
}

/* Only the forms the CUDA build calls: bf16 or fp16 A and B (the same), fp32 C and sums. */
static void check_16bit_form(const char *name, cudaDataType type_a, cudaDataType type_b, cudaDataType type_c,
                             cublasComputeType_t compute)
{
    if ((type_a != CUDA_R_16BF && type_a != CUDA_R_16F) || type_b != type_a || type_c != CUDA_R_32F ||
        compute != CUBLAS_COMPUTE_32F)
        emu_fail("cuBLAS: %s is emulated for bf16 or fp16 A and B, fp32 C and CUBLAS_COMPUTE_32F only", name);
}

/* A batch given by tables of addresses, themselves in device memory: the tables are read
 * when the stream reaches the product, as on a GPU, so a kernel queued before it that fills
 * them is seen, and each matrix is checked then. */
typedef struct {
    Gemm one; /* the product of matrix i, but for its addresses */
    const void *const *a_table, *const *b_table;
    void *const *c_table;
} GemmTables;

static void run_gemm_tables(void *ctx)
{
    GemmTables *t = ctx;
    emu_device_window(1);
    for (int i = 0; i < t->one.count; i++) {
        Gemm *g = malloc(sizeof *g);
        *g = t->one;
        g->count = 1;
        g->a.data = t->a_table[i];
        g->b.data = t->b_table[i];
        g->c.data = t->c_table[i];
        check_operands(g);
        run_gemm(g);
    }
    emu_device_window(0);
    free(t);
}

static cublasStatus_t enqueue_gemm_tables(cublasHandle_t handle, const char *name, Gemm one,
                                          const void *const A[], const void *const B[], void *const C[])
{
    size_t table_bytes = (size_t)(one.count > 0 ? one.count : 0) * sizeof(void *);
    if (table_bytes > 0 && (!emu_is_device(A, table_bytes) || !emu_is_device(B, table_bytes) ||
                            !emu_is_device(C, table_bytes)))
        emu_fail("cuBLAS: a table of %s (%d addresses) is not device memory", name, one.count);
    GemmTables *t = malloc(sizeof *t);
    *t = (GemmTables){one, A, B, C};
    emu_enqueue(handle->stream, run_gemm_tables, t);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSgemmBatched(cublasHandle_t handle, cublasOperation_t op_a, cublasOperation_t op_b, int m, int n,
                                  int k, const float *alpha, const float *const A[], int lda, const float *const B[],
                                  int ldb, const float *beta, float *const C[], int ldc, int count)
{
    Operand a = operand(NULL, op_a, m, k, lda, 0, CUDA_R_32F), b = operand(NULL, op_b, k, n, ldb, 0, CUDA_R_32F);
    Operand c = operand(NULL, CUBLAS_OP_N, m, n, ldc, 0, CUDA_R_32F);
    Gemm one = {op_a, op_b, m, n, k, count, handle->tf32, *alpha, *beta, a, b, c};
    return enqueue_gemm_tables(handle, "cublasSgemmBatched", one, (const void *const *)A, (const void *const *)B,
                               (void *const *)C);
}

/* As cublasGemmEx below, over tables of addresses as cublasSgemmBatched. */
cublasStatus_t cublasGemmBatchedEx(cublasHandle_t handle, cublasOperation_t op_a, cublasOperation_t op_b, int m,
                                   int n, int k, const void *alpha, const void *const A[], cudaDataType type_a,
                                   int lda, const void *const B[], cudaDataType type_b, int ldb, const void *beta,
                                   void *const C[], cudaDataType type_c, int ldc, int count,
                                   cublasComputeType_t compute, cublasGemmAlgo_t algo)
{
    (void)algo;
    check_16bit_form("cublasGemmBatchedEx", type_a, type_b, type_c, compute);
    Operand a = operand(NULL, op_a, m, k, lda, 0, type_a), b = operand(NULL, op_b, k, n, ldb, 0, type_b);
    Operand c = operand(NULL, CUBLAS_OP_N, m, n, ldc, 0, CUDA_R_32F);
    Gemm one = {op_a, op_b, m, n, k, count, handle->tf32, *(const float *)alpha, *(const float *)beta, a, b, c};
    return enqueue_gemm_tables(handle, "cublasGemmBatchedEx", one, A, B, C);
}

cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t op_a, cublasOperation_t op_b, int m, int n,
                            int k, const void *alpha, const void *A, cudaDataType type_a, int lda, const void *B,
                            cudaDataType type_b, int ldb, const void *beta, void *C, cudaDataType type_c, int ldc,
                            cublasComputeType_t compute, cublasGemmAlgo_t algo)
{
    (void)algo;
    check_16bit_form("cublasGemmEx", type_a, type_b, type_c, compute);
    return enqueue_gemm(handle, op_a, op_b, m, n, k, *(const float *)alpha, operand(A, op_a, m, k, lda, 0, type_a),
                        operand(B, op_b, k, n, ldb, 0, type_b), *(const float *)beta,
                        operand(C, CUBLAS_OP_N, m, n, ldc, 0, CUDA_R_32F), 1);
}

cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t op_a, cublasOperation_t op_b, int m, int n,
                              int k, const float *alpha, const float *A, int lda, const float *B, int ldb,
                              const float *beta, float *C, int ldc)
{
    return cublasSgemmStridedBatched(handle, op_a, op_b, m, n, k, alpha, A, lda, 0, B, ldb, 0, beta, C, ldc, 0, 1);
}
