/*
 * aclblasSgemmStridedBatched host logic shared by the CPU twin and the Ascend C launch code
 * (seeds/sgemm_strided_batched_design.txt): validation, path classification, workspace sizing and the tiling plan.
 *
 * Call sequence of an implementation:
 *   status = ValidateSgemmStridedBatchedParams(...);   // != SUCCESS -> return it, touch nothing
 *   plan   = PlanSgemmStridedBatched(..., coreCount);
 *   QUICK_RETURN -> return SUCCESS
 *   need plan.workspaceBytes of the handle's workspace (too little -> ALLOC_FAILED, say how many bytes)
 *   for each batch i (host loop, same plan, same workspace):
 *     SCALE_ONLY -> C_i = beta * C_i (beta == 0: zero, C_i never read)
 *     FAST       -> engine tiles write C_i directly
 *     GENERAL    -> engine tiles write temp (row stride tempRowStride) in the workspace, then
 *                   C_i = alpha * temp + beta * C_i (beta == 0: C_i never read)
 * Plain C++ functions, no device dependency, no globals.
 */
#ifndef SGEMM_STRIDED_BATCHED_HOST_H
#define SGEMM_STRIDED_BATCHED_HOST_H

#include "blas_host_common.h"

namespace blas_host {

/*
 * Validation. The seed's 参数约束 lists handle, trans, dimensions, alpha/beta, leading dimensions in that order; this
 * is that order, each group checked left to right, first failing check wins:
 *   1 handle == nullptr                                    -> HANDLE_IS_NULLPTR
 *   2 transA, then transB, not in {N, T, C}                -> INVALID_VALUE (not INVALID_ENUM: the seed's choice)
 *   3 m, n, k, batchCount < 0                              -> INVALID_VALUE
 *   4 alpha, beta == nullptr                               -> INVALID_VALUE
 *   5 lda < max(1, transA == N ? m : k), ldb < max(1, transB == N ? k : n), ldc < max(1, m) -> INVALID_VALUE
 *   6 m > 0 && n > 0 && batchCount > 0 && k > 0 && (A or B == nullptr) -> INVALID_VALUE
 *   7 m > 0 && n > 0 && batchCount > 0 && C == nullptr      -> INVALID_VALUE
 * Strides are not validated: 0 broadcasts A or B across batches (cuBLAS semantics, a deliberate divergence from
 * ops-blas SgemvStridedBatched, which rejects stride 0); batches run in order, so overlapping C_i resolve last-wins.
 */
inline aclblasStatus_t ValidateSgemmStridedBatchedParams(const void* handle, int32_t transA, int32_t transB,
                                                         int64_t m, int64_t n, int64_t k, const float* alpha,
                                                         const void* A, int64_t lda, const void* B, int64_t ldb,
                                                         const float* beta, const void* C, int64_t ldc,
                                                         int64_t batchCount)
{
    if (handle == nullptr) {
        return ACLBLAS_STATUS_HANDLE_IS_NULLPTR;
    }
    if (!IsValidOperation(transA) || !IsValidOperation(transB)) {
        return ACLBLAS_STATUS_INVALID_VALUE;
    }
    if (m < 0 || n < 0 || k < 0 || batchCount < 0) {
        return ACLBLAS_STATUS_INVALID_VALUE;
    }
    if (alpha == nullptr || beta == nullptr) {
        return ACLBLAS_STATUS_INVALID_VALUE;
    }
    if (lda < Max1(IsTrans(transA) ? k : m) || ldb < Max1(IsTrans(transB) ? n : k) || ldc < Max1(m)) {
        return ACLBLAS_STATUS_INVALID_VALUE;
    }
    const bool work = m > 0 && n > 0 && batchCount > 0;
    if (work && k > 0 && (A == nullptr || B == nullptr)) {
        return ACLBLAS_STATUS_INVALID_VALUE;
    }
    if (work && C == nullptr) {
        return ACLBLAS_STATUS_INVALID_VALUE;
    }
    return ACLBLAS_STATUS_SUCCESS;
}

enum class SgemmPath : int32_t {
    QUICK_RETURN = 0,  // m == 0 || n == 0 || batchCount == 0, or (k == 0 || alpha == 0) && beta == 1
    SCALE_ONLY = 1,    // k == 0 || alpha == 0: C_i = beta * C_i
    FAST = 2,          // alpha == 1 && beta == 0 && ldc % 8 == 0: the engine writes C_i directly, no workspace
    GENERAL = 3,       // engine -> workspace temp -> combine alpha * temp + beta * C_i
};

/* Fixpipe writes rows of the engine output with a stride aligned to 8 fp32 (32 bytes). */
constexpr int64_t kFixpipeNAlign = 8;

inline SgemmPath ClassifySgemmStridedBatched(int64_t m, int64_t n, int64_t k, float alpha, float beta, int64_t ldc,
                                             int64_t batchCount)
{
    const bool noProduct = k == 0 || IsZero(alpha);
    if (m == 0 || n == 0 || batchCount == 0 || (noProduct && IsOne(beta))) {
        return SgemmPath::QUICK_RETURN;
    }
    if (noProduct) {
        return SgemmPath::SCALE_ONLY;
    }
    if (IsOne(alpha) && IsZero(beta) && ldc % kFixpipeNAlign == 0) {
        return SgemmPath::FAST;
    }
    return SgemmPath::GENERAL;
}

/* Workspace bytes of one call: the general path's temp, n columns of CeilAlign(m, 8) floats, reused by every batch,
 * so independent of batchCount. Other paths need none. */
inline uint64_t SgemmStridedBatchedWorkspaceBytes(int64_t m, int64_t n, SgemmPath path)
{
    if (path != SgemmPath::GENERAL) {
        return 0;
    }
    return static_cast<uint64_t>(n) * static_cast<uint64_t>(CeilAlign(m, kFixpipeNAlign)) * sizeof(float);
}

/* Engine tiles (seed, Tiling 策略): 128 x 128 output tiles, K chunks of 256. */
constexpr int64_t kSgemmTileM = 128;
constexpr int64_t kSgemmTileN = 128;
constexpr int64_t kSgemmTileK = 256;

/*
 * The plan is in engine terms. Column-major swap: the row-major engine computes C^T = op(B)^T * op(A)^T, an
 * mEff x nEff row-major matrix whose memory is C (m x n column-major): mEff = n, nEff = m, kEff = k. Engine
 * element (r, c) is C(c, r) at c + r * ldc; engine row r is column r of C. The left engine operand is op(B)^T
 * (mEff x kEff), the right one op(A)^T (kEff x nEff).
 */
struct SgemmStridedBatchedTiling {
    int64_t m, n, k, batchCount;
    int32_t transA, transB;
    int64_t lda, ldb, ldc;
    int64_t strideA, strideB, strideC;
    float alpha, beta;
    SgemmPath path;
    int64_t mEff, nEff, kEff;
    int64_t tileM, tileN, tileK;
    int64_t divM, divN, tileCount;  // divM x divN engine tile grid
    int64_t kChunks;
    int64_t tailM, tailN, tailK;  // engine rows/cols/depth of the last tile or chunk
    int32_t usedCores;
    int64_t tempRowStride;    // elements between engine rows of the temp: CeilAlign(nEff, 8) = CeilAlign(m, 8)
    uint64_t workspaceBytes;  // SgemmStridedBatchedWorkspaceBytes(m, n, path)
};

/*
 * Tiles are walked serpentine over the divM x divN grid (SerpentineTile: odd engine rows right to left, so a core's
 * consecutive tiles reuse the L1 panel) and handed to cores round-robin (TileOfCore). One plan serves every batch.
 */
inline SgemmStridedBatchedTiling PlanSgemmStridedBatched(int32_t transA, int32_t transB, int64_t m, int64_t n,
                                                         int64_t k, float alpha, int64_t lda, int64_t strideA,
                                                         int64_t ldb, int64_t strideB, float beta, int64_t ldc,
                                                         int64_t strideC, int64_t batchCount, int32_t coreCount)
{
    SgemmStridedBatchedTiling t{};
    t.m = m;
    t.n = n;
    t.k = k;
    t.batchCount = batchCount;
    t.transA = transA;
    t.transB = transB;
    t.lda = lda;
    t.ldb = ldb;
    t.ldc = ldc;
    t.strideA = strideA;
    t.strideB = strideB;
    t.strideC = strideC;
    t.alpha = alpha;
    t.beta = beta;
    t.path = ClassifySgemmStridedBatched(m, n, k, alpha, beta, ldc, batchCount);
    t.mEff = n;
    t.nEff = m;
    t.kEff = k;
    t.tileM = kSgemmTileM;
    t.tileN = kSgemmTileN;
    t.tileK = kSgemmTileK;
    t.divM = CeilDiv(t.mEff, t.tileM);
    t.divN = CeilDiv(t.nEff, t.tileN);
    t.tileCount = t.divM * t.divN;
    t.kChunks = CeilDiv(t.kEff, t.tileK);
    t.tailM = TailOf(t.mEff, t.tileM);
    t.tailN = TailOf(t.nEff, t.tileN);
    t.tailK = TailOf(t.kEff, t.tileK);
    t.usedCores = UsedCores(t.tileCount, coreCount);
    t.tempRowStride = CeilAlign(t.nEff, kFixpipeNAlign);
    t.workspaceBytes = SgemmStridedBatchedWorkspaceBytes(m, n, t.path);
    return t;
}

/* Engine region of tile `tile` (0 <= tile < tileCount) in serpentine order: first engine row/column and extent. */
inline void SgemmTileRegion(const SgemmStridedBatchedTiling& t, int64_t tile, int64_t* row0, int64_t* col0,
                            int64_t* rows, int64_t* cols)
{
    int64_t r = 0;
    int64_t c = 0;
    SerpentineTile(tile, t.divN, &r, &c);
    *row0 = r * t.tileM;
    *col0 = c * t.tileN;
    *rows = (r == t.divM - 1) ? t.tailM : t.tileM;
    *cols = (c == t.divN - 1) ? t.tailN : t.tileN;
}

}  // namespace blas_host

#endif  // SGEMM_STRIDED_BATCHED_HOST_H
