/*
 * aclblasSgemmBatched host validation in the ops-blas order (blas/gemm_batched/arch35, as summarised in
 * shared/reference/ops-blas-conventions.md §7.2). Column-major; Aarray/Barray/Carray are device arrays of
 * batchCount device pointers, so the host checks the arrays, never their entries.
 *
 * First failing check wins:
 *   1 handle == nullptr                                        -> HANDLE_IS_NULLPTR
 *   2 alpha == nullptr, then beta == nullptr                   -> INVALID_VALUE
 *   3 m < 0, n < 0, k < 0, batchCount < 0                      -> INVALID_VALUE
 *   4 transa, then transb, not in {N, T, C}                    -> INVALID_VALUE
 *   5 lda < max(1, transa != N ? k : m), ldb < max(1, transb != N ? n : k), ldc < max(1, m) -> INVALID_VALUE
 *   6 batchCount > 0 and Aarray, Barray or Carray == nullptr   -> INVALID_VALUE
 * Then: m == 0, n == 0 or batchCount == 0 return SUCCESS; k == 0 or alpha == 0 scale each C_i by beta (beta == 1:
 * nothing to do; beta == 0: zeros, C_i not read) without touching A_i or B_i, whose entries may be NULL then.
 */
#ifndef SGEMM_BATCHED_HOST_H
#define SGEMM_BATCHED_HOST_H

#include "blas_host_common.h"

namespace blas_host {

inline aclblasStatus_t ValidateSgemmBatchedParams(const void* handle, int32_t transa, int32_t transb, int64_t m,
                                                  int64_t n, int64_t k, const float* alpha, const void* Aarray,
                                                  int64_t lda, const void* Barray, int64_t ldb, const float* beta,
                                                  const void* Carray, int64_t ldc, int64_t batchCount)
{
    if (handle == nullptr) {
        return ACLBLAS_STATUS_HANDLE_IS_NULLPTR;
    }
    if (alpha == nullptr || beta == nullptr) {
        return ACLBLAS_STATUS_INVALID_VALUE;
    }
    if (m < 0 || n < 0 || k < 0 || batchCount < 0) {
        return ACLBLAS_STATUS_INVALID_VALUE;
    }
    if (!IsValidOperation(transa) || !IsValidOperation(transb)) {
        return ACLBLAS_STATUS_INVALID_VALUE;
    }
    if (lda < Max1(IsTrans(transa) ? k : m) || ldb < Max1(IsTrans(transb) ? n : k) || ldc < Max1(m)) {
        return ACLBLAS_STATUS_INVALID_VALUE;
    }
    if (batchCount > 0 && (Aarray == nullptr || Barray == nullptr || Carray == nullptr)) {
        return ACLBLAS_STATUS_INVALID_VALUE;
    }
    return ACLBLAS_STATUS_SUCCESS;
}

}  // namespace blas_host

#endif  // SGEMM_BATCHED_HOST_H
