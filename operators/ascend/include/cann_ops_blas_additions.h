/*
 * The two prototypes to add to ops-blas `include/cann_ops_blas.h` (inside its extern "C" block), with the ops-blas
 * types. Signatures as printed in the seeds (seeds/csymm_design.md.txt §3.3.1, seeds/sgemm_strided_batched_design.txt
 * 接口签名); the stand-alone Ascend library and the CPU twin export the same symbols (operators/include/aclblas_abi.h).
 */

/**
 * @brief C = alpha * A * B + beta * C (side LEFT) or alpha * B * A + beta * C (side RIGHT), A complex symmetric
 *        (A = A^T, not Hermitian), only its `uplo` triangle referenced; column-major, alpha/beta in host memory.
 */
aclblasStatus_t aclblasCsymm(aclblasHandle_t handle, aclblasSideMode_t side, aclblasFillMode_t uplo, int m, int n,
                             const aclblasComplex* alpha, const aclblasComplex* A, int lda, const aclblasComplex* B,
                             int ldb, const aclblasComplex* beta, aclblasComplex* C, int ldc);

/**
 * @brief C_i = alpha * op(A_i) * op(B_i) + beta * C_i for i < batchCount, X_i = X + i * strideX (elements; stride 0
 *        broadcasts A or B); column-major, alpha/beta in host memory.
 */
aclblasStatus_t aclblasSgemmStridedBatched(aclblasHandle_t handle, aclblasOperation_t transA,
                                           aclblasOperation_t transB, int m, int n, int k, const float* alpha,
                                           const float* A, int lda, int64_t strideA, const float* B, int ldb,
                                           int64_t strideB, const float* beta, float* C, int ldc, int64_t strideC,
                                           int batchCount);
