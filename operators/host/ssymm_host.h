/*
 * aclblasSsymm host validation in the ops-blas arch35 order (blas/symm/arch35/ssymm_host.cpp, as summarised in
 * shared/reference/ops-blas-conventions.md §7.2). The operator is ROW-major: A is dimA x dimA with row stride lda
 * (dimA = m for LEFT, n for RIGHT), B and C are m x n with row strides ldb and ldc.
 *
 * First failing check wins:
 *   1 m < 0 or n < 0                                   -> INVALID_VALUE
 *   2 m == 0 or n == 0                                 -> SUCCESS (quick return, before the handle is looked at)
 *   3 handle == nullptr                                -> HANDLE_IS_NULLPTR
 *   4 side not LEFT/RIGHT                              -> INVALID_ENUM
 *   5 uplo not UPPER/LOWER                             -> INVALID_ENUM
 *   6 lda < dimA, ldb < n, ldc < n                     -> INVALID_VALUE
 *   7 alpha, beta, A, B or C == nullptr                -> INVALID_VALUE
 *   8 m, n, lda, ldb or ldc > UINT32_MAX               -> INVALID_VALUE
 *   9 rows x ld of A, B or C overflows int64 bytes      -> INVALID_VALUE
 * SsymmQuickReturn says whether a status of SUCCESS from this function already ends the call (check 2).
 */
#ifndef SSYMM_HOST_H
#define SSYMM_HOST_H

#include "blas_host_common.h"

#include <initializer_list>
#include <utility>

namespace blas_host {

constexpr int64_t kUint32Max = 0xFFFFFFFFLL;

inline bool SsymmQuickReturn(int64_t m, int64_t n) { return m == 0 || n == 0; }

inline aclblasStatus_t ValidateSsymmParams(const void* handle, int32_t side, int32_t uplo, int64_t m, int64_t n,
                                           const float* alpha, const void* A, int64_t lda, const void* B,
                                           int64_t ldb, const float* beta, const void* C, int64_t ldc)
{
    if (m < 0 || n < 0) {
        return ACLBLAS_STATUS_INVALID_VALUE;
    }
    if (SsymmQuickReturn(m, n)) {
        return ACLBLAS_STATUS_SUCCESS;
    }
    if (handle == nullptr) {
        return ACLBLAS_STATUS_HANDLE_IS_NULLPTR;
    }
    if (side != kSideLeft && side != kSideRight) {
        return ACLBLAS_STATUS_INVALID_ENUM;
    }
    if (uplo != kUpper && uplo != kLower) {
        return ACLBLAS_STATUS_INVALID_ENUM;
    }
    const int64_t dimA = side == kSideLeft ? m : n;
    if (lda < dimA || ldb < n || ldc < n) {
        return ACLBLAS_STATUS_INVALID_VALUE;
    }
    if (alpha == nullptr || beta == nullptr || A == nullptr || B == nullptr || C == nullptr) {
        return ACLBLAS_STATUS_INVALID_VALUE;
    }
    if (m > kUint32Max || n > kUint32Max || lda > kUint32Max || ldb > kUint32Max || ldc > kUint32Max) {
        return ACLBLAS_STATUS_INVALID_VALUE;
    }
    /* 9: a matrix whose byte size overflows int64 (ops-blas arch22 ssymm_test.csv TC_L1_25 "buffer_overflow":
     * m = ldb = 2^32 - 1) cannot be addressed */
    int64_t elements = 0;
    int64_t bytes = 0;
    for (const auto& [rows, ld] : {std::pair<int64_t, int64_t>{dimA, lda}, {m, ldb}, {m, ldc}}) {
        if (__builtin_mul_overflow(rows, ld, &elements) ||
            __builtin_mul_overflow(elements, static_cast<int64_t>(sizeof(float)), &bytes)) {
            return ACLBLAS_STATUS_INVALID_VALUE;
        }
    }
    return ACLBLAS_STATUS_SUCCESS;
}

/* Row-major offset of the logical A(row, col) of a symmetric A of which only the `uplo` triangle is stored
 * (UPPER: col >= row). Never addresses the other triangle. */
inline int64_t SsymmAOffset(int32_t uplo, int64_t row, int64_t col, int64_t lda)
{
    const bool stored = (uplo == kUpper) ? (col >= row) : (col <= row);
    return stored ? row * lda + col : col * lda + row;
}

}  // namespace blas_host

#endif  // SSYMM_HOST_H
