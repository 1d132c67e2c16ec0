/* cuBLAS as kernels_cuda.cu sees it on the emulated GPU: the types and the four GEMMs,
 * implemented by emu_cublas.c (built against the real header; same layouts). */
#ifndef DTC_EMU_CUBLAS_V2_H
#define DTC_EMU_CUBLAS_V2_H

#include "cuda_runtime.h"

typedef struct cublasContext *cublasHandle_t;
typedef int cublasStatus_t;
enum { CUBLAS_STATUS_SUCCESS = 0 };
typedef enum { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1 } cublasOperation_t;
typedef enum { CUDA_R_32F = 0, CUDA_R_16F = 2, CUDA_R_16BF = 14 } cudaDataType;
typedef enum { CUBLAS_COMPUTE_32F = 68 } cublasComputeType_t;
typedef enum { CUBLAS_GEMM_DEFAULT = -1 } cublasGemmAlgo_t;

extern "C" {
const char *cublasGetStatusString(cublasStatus_t status);
cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t op_a, cublasOperation_t op_b, int m, int n,
                              int k, const float *alpha, const float *A, int lda, const float *B, int ldb,
                              const float *beta, float *C, int ldc);
cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t handle, cublasOperation_t op_a, cublasOperation_t op_b, int m,
                                         int n, int k, const float *alpha, const float *A, int lda,
                                         long long stride_a, const float *B, int ldb, long long stride_b,
                                         const float *beta, float *C, int ldc, long long stride_c, int count);
cublasStatus_t cublasSgemmBatched(cublasHandle_t handle, cublasOperation_t op_a, cublasOperation_t op_b, int m, int n,
                                  int k, const float *alpha, const float *const A[], int lda, const float *const B[],
                                  int ldb, const float *beta, float *const C[], int ldc, int count);
cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t op_a, cublasOperation_t op_b, int m, int n,
                            int k, const void *alpha, const void *A, cudaDataType type_a, int lda, const void *B,
                            cudaDataType type_b, int ldb, const void *beta, void *C, cudaDataType type_c, int ldc,
                            cublasComputeType_t compute, cublasGemmAlgo_t algo);
cublasStatus_t cublasGemmBatchedEx(cublasHandle_t handle, cublasOperation_t op_a, cublasOperation_t op_b, int m,
                                   int n, int k, const void *alpha, const void *const A[], cudaDataType type_a,
                                   int lda, const void *const B[], cudaDataType type_b, int ldb, const void *beta,
                                   void *const C[], cudaDataType type_c, int ldc, int count,
                                   cublasComputeType_t compute, cublasGemmAlgo_t algo);
}
#define cublasSgemm cublasSgemm_v2

#endif
