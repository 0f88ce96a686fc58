/*
 * Kernel arguments of aclblasSgemmStridedBatched on arch35 (Ascend 950PR, dav-3510), passed by value to each launch.
 *
 * The host fills them from blas_host::PlanSgemmStridedBatched (operators/host/sgemm_strided_batched_host.h), the plan
 * the CPU twin executes and tests; these structs only narrow it to fixed-width fields a kernel can take by value.
 * Engine terms (column-major swap): the row-major engine computes C^T = op(B)^T * op(A)^T, mEff = n, nEff = m.
 */
#ifndef SGEMM_STRIDED_BATCHED_TILING_DATA_H
#define SGEMM_STRIDED_BATCHED_TILING_DATA_H

#include <cstdint>

/* Vector epilogue: elements per UB tile (16 KB of fp32 per buffer, double-buffered queues). */
constexpr uint32_t SGEMM_SB_VEC_TILE = 4096;

/* Cube GEMM of one batch: a divM x divN grid of tileM x tileN engine tiles, walked serpentine and round-robin. */
struct SgemmStridedBatchedGemmTilingData {
    uint32_t mEff;
    uint32_t nEff;
    uint32_t kEff;
    uint32_t tileM;
    uint32_t tileN;
    uint32_t tileK;      // K chunk held in L1
    uint32_t divM;
    uint32_t divN;
    uint32_t tileCount;
    uint32_t ldLeft;     // ldb: the left engine operand is op(B)^T
    uint32_t ldRight;    // lda: the right engine operand is op(A)^T
    uint32_t ldOut;      // ldc on the fast path, tempRowStride on the general path
    uint32_t batchCount;  // batches in this launch's task grid: task = batch * tileCount + tile
    int64_t strideLeft;   // floats between batches of each operand (strideB, strideA, strideC; 0 broadcasts)
    int64_t strideRight;
    int64_t strideOut;
    uint32_t nanEpoch;    // this call's NaN flag epoch (common/arch35_nan_guard.h): NaN seen when the flag holds it
};

/* Vector epilogue over the n columns of C_i (engine rows), colsPerCore columns per vector core:
 * combine: C = alpha * temp + beta * C (C read only when readC); scale: C = beta * C (beta == 0: C = 0, unread),
 * of batchCount C_i strideC floats apart in one launch (disjoint C_i; the host passes 1 otherwise). */
struct SgemmStridedBatchedEpilogueTilingData {
    uint32_t m;
    uint32_t n;
    uint32_t ldc;
    uint32_t tempRowStride;
    uint32_t colsPerCore;
    uint32_t readC;
    float alpha;
    float beta;
    uint32_t nanEpoch;  // combine: this call's NaN flag epoch (common/arch35_nan_guard.h); unused by scale
    uint32_t batchCount;  // scale: the C_i of this launch
    int64_t strideC;
};

/* The general path fused into one mixed launch (KERNEL_TYPE_MIX_AIC_1_2): each AI core's cube writes a task's
 * engine tile into one of its `slots` workspace slots (slotFloats apart, rows slotLd apart) and its two vector cores
 * then combine the tile into C_batch = alpha * tile + beta * C_batch (C_i advance by strideC; disjoint). */
struct SgemmStridedBatchedFusedTilingData {
    SgemmStridedBatchedGemmTilingData gemm;
    SgemmStridedBatchedEpilogueTilingData epilogue;
    uint32_t slots;
    uint32_t slotLd;
    uint32_t slotFloats;
    int64_t strideC;
};

/* NaN guard over all batches, one launch (common/arch35_nan_guard.h): op(A_i) is m x k, op(B_i) is k x n,
 * X_i = X + i * strideX. The scan reads every stored column of every A_i and B_i; after a SyncAll, when the flag
 * holds the epoch, the fallback computes C_i = alpha * op(A_i) * op(B_i) (+ beta * C_i when readC) in plain fp32 for
 * every batch. Both split their columns over the vector cores. */
constexpr uint32_t SGEMM_SB_SIMT_THREADS = 1024;

struct SgemmStridedBatchedNanTilingData {
    uint32_t m;
    uint32_t n;
    uint32_t k;
    uint32_t transA;
    uint32_t transB;
    uint32_t lda;
    uint32_t ldb;
    uint32_t ldc;
    int64_t strideA;
    int64_t strideB;
    int64_t strideC;
    uint32_t batchCount;
    uint32_t readC;
    float alpha;
    float beta;
    uint32_t nanEpoch;  // this call's NaN flag epoch: the scan stores it on NaN, the fallback runs when it is there
};

#endif  // SGEMM_STRIDED_BATCHED_TILING_DATA_H
