/*
 * aclblasSgemmBatched on the CPU twin: validates with sgemm_batched_host.h (the ops-blas order), then runs every
 * batch through the strided twin as a batch of one (its engine, paths and workspace rules), reading A_i, B_i, C_i
 * from the pointer arrays. k == 0 or alpha == 0 never touches A_i or B_i (their entries may be NULL): C_i = beta *
 * C_i, zeros without reading C_i when beta == 0, nothing when beta == 1.
 */
#include "sgemm_batched_host.h"
#include "twin_handle.h"

namespace {

void ScaleBatch(float* C, int64_t m, int64_t n, int64_t ldc, float beta)
{
    for (int64_t j = 0; j < n; ++j) {
        for (int64_t i = 0; i < m; ++i) {
            C[i + j * ldc] = beta == 0.0f ? 0.0f : beta * C[i + j * ldc];
        }
    }
}

}  // namespace

extern "C" aclblasStatus_t aclblasSgemmBatched(aclblasHandle_t handle, aclblasOperation_t transa,
                                               aclblasOperation_t transb, int m, int n, int k, const float* alpha,
                                               const float* const Aarray[], int lda, const float* const Barray[],
                                               int ldb, const float* beta, float* const Carray[], int ldc,
                                               int batchCount)
{
    const twin::Slowdown slowdown;
    const char* what = "aclblasSgemmBatched";
    if (handle != nullptr) {
        handle->lastMessage.clear();
    }
    aclblasStatus_t status = blas_host::ValidateSgemmBatchedParams(handle, transa, transb, m, n, k, alpha, Aarray,
                                                                   lda, Barray, ldb, beta, Carray, ldc, batchCount);
    if (status != ACLBLAS_STATUS_SUCCESS || m == 0 || n == 0 || batchCount == 0) {
        return twin::Finish(handle, status, what);
    }
    if (k == 0 || *alpha == 0.0f) {
        if (*beta != 1.0f) {
            for (int b = 0; b < batchCount; ++b) {
                ScaleBatch(Carray[b], m, n, ldc, *beta);
            }
        }
        return twin::Finish(handle, ACLBLAS_STATUS_SUCCESS, what);
    }
    for (int b = 0; b < batchCount && status == ACLBLAS_STATUS_SUCCESS; ++b) {
        status = aclblasSgemmStridedBatched(handle, transa, transb, m, n, k, alpha, Aarray[b], lda, 0, Barray[b],
                                            ldb, 0, beta, Carray[b], ldc, 0, 1);
    }
    return twin::Finish(handle, status, what);
}
