/*
 * aclblasSgemmStridedBatched for arch35 (Ascend 950PR): host launch code.
 *
 * Validation, quick returns, path choice, tiling and workspace size all come from blas_host (operators/host/
 * sgemm_strided_batched_host.h, the functions the CPU twin runs and the project tests). This file only adds what
 * needs the device: workspace from the handle, the plan narrowed into kernel arguments, and launches on the
 * handle's stream: the NaN guard (scan and fallback in one launch), then with disjoint C_i one gemm launch for every
 * batch on the fast path (FoldBatches) and one fused mixed launch on the general path (FuseEpilogue: one batch's
 * temp holds the cube cores' tile slots), so two launches per call (one for the scale-only path); otherwise one
 * batch after another with the same plan and the same workspace. It never synchronises.
 */
#include <algorithm>
#include <cstdint>

#include "ascend_host_env.h"
#include "sgemm_strided_batched_host.h"
#include "sgemm_strided_batched_kernel.h"

namespace {

using blas_host::SgemmPath;
using blas_host::SgemmStridedBatchedTiling;

/* The engine of `batches` batches in one launch: A, B and the output advance by their strides per batch. */
SgemmStridedBatchedGemmTilingData GemmArgs(const SgemmStridedBatchedTiling& plan, uint32_t ldOut, int64_t batches,
                                           int64_t strideOut, uint32_t nanEpoch)
{
    SgemmStridedBatchedGemmTilingData t{};
    t.mEff = static_cast<uint32_t>(plan.mEff);
    t.nEff = static_cast<uint32_t>(plan.nEff);
    t.kEff = static_cast<uint32_t>(plan.kEff);
    t.tileM = static_cast<uint32_t>(plan.tileM);
    t.tileN = static_cast<uint32_t>(plan.tileN);
    t.tileK = static_cast<uint32_t>(plan.tileK);
    t.divM = static_cast<uint32_t>(plan.divM);
    t.divN = static_cast<uint32_t>(plan.divN);
    t.tileCount = static_cast<uint32_t>(plan.tileCount);
    t.ldLeft = static_cast<uint32_t>(plan.ldb);
    t.ldRight = static_cast<uint32_t>(plan.lda);
    t.ldOut = ldOut;
    t.batchCount = static_cast<uint32_t>(batches);
    t.strideLeft = plan.strideB;
    t.strideRight = plan.strideA;
    t.strideOut = strideOut;
    t.nanEpoch = nanEpoch;
    return t;
}

/* No two C_i overlap (each spans (n - 1) * ldc + m floats): their batches may then run concurrently; overlapping
 * outputs would lose the in-order last-wins result. */
bool DisjointOutputs(const SgemmStridedBatchedTiling& plan)
{
    const int64_t span = (plan.n - 1) * plan.ldc + plan.m;
    return plan.batchCount == 1 || plan.strideC >= span || -plan.strideC >= span;
}

/* The fast path folds every batch into one task grid; the general path fuses its epilogue into one mixed launch. */
bool FoldBatches(const SgemmStridedBatchedTiling& plan) { return plan.path == SgemmPath::FAST && DisjointOutputs(plan); }
bool FuseEpilogue(const SgemmStridedBatchedTiling& plan)
{
    return plan.path == SgemmPath::GENERAL && DisjointOutputs(plan);
}

/* The fused launch's slots in the general path's workspace (one batch's temp): a slot is one engine tile, rows
 * 8-float aligned for Fixpipe. Two slots per AI core (the cube fills one while the vector cores drain the other)
 * when they fit without giving up cores, else one. */
SgemmStridedBatchedFusedTilingData FusedArgs(const SgemmStridedBatchedTiling& plan,
                                             const SgemmStridedBatchedGemmTilingData& gemm,
                                             const SgemmStridedBatchedEpilogueTilingData& epilogue, int32_t cubeCores,
                                             uint32_t* blocks)
{
    SgemmStridedBatchedFusedTilingData f{};
    f.gemm = gemm;
    f.epilogue = epilogue;
    f.slotLd = static_cast<uint32_t>(blas_host::CeilAlign(plan.tileN < plan.nEff ? plan.tileN : plan.nEff, 8));
    f.slotFloats = static_cast<uint32_t>((plan.tileM < plan.mEff ? plan.tileM : plan.mEff) * f.slotLd);
    const int64_t slotsTotal = static_cast<int64_t>(plan.workspaceBytes / sizeof(float)) / f.slotFloats;
    const int64_t tasks = plan.tileCount * plan.batchCount;
    const int64_t one = std::min<int64_t>({tasks, cubeCores, slotsTotal});
    const int64_t two = std::min<int64_t>({tasks, cubeCores, slotsTotal / 2});
    f.slots = two == one && tasks > one ? 2u : 1u;
    *blocks = static_cast<uint32_t>(one);
    f.strideC = plan.strideC;
    return f;
}

/* Columns of C per vector core: every core gets whole columns (contiguous in C and in temp). */
SgemmStridedBatchedEpilogueTilingData EpilogueArgs(const SgemmStridedBatchedTiling& plan, int32_t vectorCores,
                                                   uint32_t nanEpoch, uint32_t* usedCores)
{
    SgemmStridedBatchedEpilogueTilingData t{};
    t.m = static_cast<uint32_t>(plan.m);
    t.n = static_cast<uint32_t>(plan.n);
    t.ldc = static_cast<uint32_t>(plan.ldc);
    t.tempRowStride = static_cast<uint32_t>(plan.tempRowStride);
    *usedCores = static_cast<uint32_t>(blas_host::UsedCores(plan.n, vectorCores));
    t.colsPerCore = static_cast<uint32_t>(blas_host::CeilDiv(plan.n, *usedCores));
    t.readC = blas_host::IsZero(plan.beta) ? 0u : 1u;
    t.alpha = plan.alpha;
    t.beta = plan.beta;
    t.nanEpoch = nanEpoch;
    t.batchCount = 1;
    return t;
}

/* The NaN guard's view of the call: the caller's (not the engine's) operands and strides. */
SgemmStridedBatchedNanTilingData NanArgs(const SgemmStridedBatchedTiling& plan, uint32_t nanEpoch)
{
    SgemmStridedBatchedNanTilingData t{};
    t.m = static_cast<uint32_t>(plan.m);
    t.n = static_cast<uint32_t>(plan.n);
    t.k = static_cast<uint32_t>(plan.k);
    t.transA = blas_host::IsTrans(plan.transA) ? 1u : 0u;
    t.transB = blas_host::IsTrans(plan.transB) ? 1u : 0u;
    t.lda = static_cast<uint32_t>(plan.lda);
    t.ldb = static_cast<uint32_t>(plan.ldb);
    t.ldc = static_cast<uint32_t>(plan.ldc);
    t.strideA = plan.strideA;
    t.strideB = plan.strideB;
    t.strideC = plan.strideC;
    t.batchCount = static_cast<uint32_t>(plan.batchCount);
    t.readC = blas_host::IsZero(plan.beta) ? 0u : 1u;
    t.alpha = plan.alpha;
    t.beta = plan.beta;
    t.nanEpoch = nanEpoch;
    return t;
}

}  // namespace

extern "C" aclblasStatus_t aclblasSgemmStridedBatched(aclblasHandle_t handle, aclblasOperation_t transA,
                                                      aclblasOperation_t transB, int m, int n, int k,
                                                      const float* alpha, const float* A, int lda, int64_t strideA,
                                                      const float* B, int ldb, int64_t strideB, const float* beta,
                                                      float* C, int ldc, int64_t strideC, int batchCount)
{
    const aclblasStatus_t status = blas_host::ValidateSgemmStridedBatchedParams(
        handle, transA, transB, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, batchCount);
    if (status != ACLBLAS_STATUS_SUCCESS) {
        return status;
    }
    const int32_t cubeCores = ascend_host::CubeCoreCount(handle);
    const int32_t vectorCores = ascend_host::VectorCoreCount(handle);
    if (cubeCores < 1 || vectorCores < 1) {
        return ACLBLAS_STATUS_INTERNAL_ERROR;
    }
    const SgemmStridedBatchedTiling plan = blas_host::PlanSgemmStridedBatched(
        transA, transB, m, n, k, *alpha, lda, strideA, ldb, strideB, *beta, ldc, strideC, batchCount, cubeCores);
    if (plan.path == SgemmPath::QUICK_RETURN) {
        return ACLBLAS_STATUS_SUCCESS;
    }
    void* workspace = nullptr;
    const aclblasStatus_t wsStatus = ascend_host::HandleWorkspace(handle, plan.workspaceBytes, &workspace);
    if (wsStatus != ACLBLAS_STATUS_SUCCESS) {
        return wsStatus;
    }
    aclrtStream stream = ascend_host::HandleStream(handle);
    /* The NaN flag needs no memset: the scan stores this call's epoch on NaN, the readers compare with it
     * (common/arch35_nan_guard.h). */
    void* nanFlag = ascend_host::HandleScratch(handle);
    const uint32_t epoch = ascend_host::NextNanEpoch(handle);
    const SgemmStridedBatchedNanTilingData nan = NanArgs(plan, epoch);
    uint32_t vecCores = 1;
    const SgemmStridedBatchedEpilogueTilingData epilogue = EpilogueArgs(plan, vectorCores, epoch, &vecCores);
    const bool fast = plan.path == SgemmPath::FAST;
    const SgemmStridedBatchedGemmTilingData gemm =
        GemmArgs(plan, static_cast<uint32_t>(fast ? plan.ldc : plan.tempRowStride), 1, 0, epoch);
    auto* temp = static_cast<float*>(workspace);
    if (plan.path == SgemmPath::SCALE_ONLY) {
        SgemmStridedBatchedEpilogueTilingData scale = epilogue;
        const bool oneLaunch = DisjointOutputs(plan);  // overlapping C_i are scaled in order, once per batch
        scale.batchCount = oneLaunch ? static_cast<uint32_t>(plan.batchCount) : 1u;
        scale.strideC = plan.strideC;
        for (int64_t i = 0; i < (oneLaunch ? 1 : plan.batchCount); ++i) {
            sgemm_strided_batched_scale_kernel_do(vecCores, stream, C + i * plan.strideC, scale);
        }
        return ACLBLAS_STATUS_SUCCESS;
    }
    /* Launch 1: the scan and, on NaN, the plain fp32 result (the later launches then do nothing). */
    sgemm_strided_batched_nan_guard_kernel_do(vecCores, stream, A, B, C, nanFlag, nan);
    if (FuseEpilogue(plan)) {  // launch 2: one mixed launch for every batch
        uint32_t blocks = 1;
        const SgemmStridedBatchedFusedTilingData fused =
            FusedArgs(plan, GemmArgs(plan, 0, plan.batchCount, 0, epoch), epilogue, cubeCores, &blocks);
        sgemm_strided_batched_fused_kernel_do(blocks, stream, blas_host::IsTrans(plan.transA),
                                              blas_host::IsTrans(plan.transB), A, B, C, workspace, nanFlag, fused);
        return ACLBLAS_STATUS_SUCCESS;
    }
    if (FoldBatches(plan)) {  // launch 2: one gemm launch for every batch
        const int64_t tasks = plan.tileCount * plan.batchCount;
        sgemm_strided_batched_gemm_kernel_do(static_cast<uint32_t>(tasks < cubeCores ? tasks : cubeCores), stream,
                                             blas_host::IsTrans(plan.transA), blas_host::IsTrans(plan.transB), A, B,
                                             C, nanFlag, GemmArgs(plan, gemm.ldOut, plan.batchCount, plan.strideC, epoch));
        return ACLBLAS_STATUS_SUCCESS;
    }
    for (int64_t i = 0; i < plan.batchCount; ++i) {  // overlapping C_i: in order, last wins
        float* ci = C + i * plan.strideC;
        const float* ai = A + i * plan.strideA;
        const float* bi = B + i * plan.strideB;
        sgemm_strided_batched_gemm_kernel_do(static_cast<uint32_t>(plan.usedCores), stream,
                                             blas_host::IsTrans(plan.transA), blas_host::IsTrans(plan.transB), ai,
                                             bi, fast ? ci : temp, nanFlag, gemm);
        if (!fast) {
            sgemm_strided_batched_combine_kernel_do(vecCores, stream, temp, ci, nanFlag, epilogue);
        }
    }
    return ACLBLAS_STATUS_SUCCESS;
}
