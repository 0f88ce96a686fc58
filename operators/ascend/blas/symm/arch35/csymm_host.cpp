/*
 * aclblasCsymm for arch35 (Ascend 950PR): host launch code.
 *
 * Validation, quick returns, path choice (QUICK_RETURN / SCALE_ONLY / GEMM), the epilogue mode and the tile plan come
 * from blas_host (operators/host/csymm_host.h, the functions the CPU twin runs and the project tests). This file adds
 * what needs the device: the plan narrowed into kernel arguments and launches on the handle's stream. The GEMM
 * launch keeps its operands on chip (csymm_kernel.cpp) and asks the handle for no workspace. It never
 * synchronises.
 */
#include <cstdint>

#include "ascend_host_env.h"
#include "csymm_host.h"
#include "csymm_kernel.h"

namespace {

using blas_host::CsymmPath;
using blas_host::CsymmTiling;

/* Floats between columns of C seen as the engine's real rows (re/im interleaved). */
uint32_t RealLd(int64_t ld) { return static_cast<uint32_t>(2 * ld); }

/* Real K per L1 chunk: the panels of one product (<= 128 engine rows, <= 256 columns) take 1.5 KiB per K in an L1
 * half of 256 KiB; split HF32 holds three products' panels. */
constexpr uint32_t kRealChunkK = 128;
constexpr uint32_t kSplitChunkK = 48;
/* Split HF32 from this real K on: the cost model (harness/kernels/cost_model.py) prices an fp32 Mmad K step at 8
 * HF32 ones (Cube指令理论性能汇总.md table 2), so three HF32 products take 3/8 of the fp32 cube time; below two L0
 * K steps (64) the call is launch-bound either way. */
constexpr int64_t kSplitMinRealK = 64;

bool SplitHf32(const CsymmTiling& plan) { return 2 * plan.k >= kSplitMinRealK; }

CsymmEpilogueTilingData EpilogueArgs(const CsymmTiling& plan, int32_t vectorCores, uint32_t* usedCores)
{
    CsymmEpilogueTilingData t{};
    t.m = static_cast<uint32_t>(plan.m);
    t.n = static_cast<uint32_t>(plan.n);
    t.ldc = static_cast<uint32_t>(plan.ldc);
    *usedCores = static_cast<uint32_t>(blas_host::UsedCores(plan.n, vectorCores));
    t.colsPerCore = static_cast<uint32_t>(blas_host::CeilDiv(plan.n, *usedCores));
    t.epilogue = static_cast<uint32_t>(plan.epilogue);
    t.betaReal = plan.betaReal;
    t.betaImag = plan.betaImag;
    return t;
}

CsymmPrepareTilingData PrepareArgs(const CsymmTiling& plan, bool split, int32_t vectorCores, uint32_t nanEpoch)
{
    CsymmPrepareTilingData t{};
    t.m = static_cast<uint32_t>(plan.m);
    t.n = static_cast<uint32_t>(plan.n);
    t.k = static_cast<uint32_t>(plan.k);
    t.side = static_cast<uint32_t>(plan.side);
    t.uplo = static_cast<uint32_t>(plan.uplo);
    t.lda = static_cast<uint32_t>(plan.lda);
    t.ldb = static_cast<uint32_t>(plan.ldb);
    t.split = split ? 1u : 0u;
    t.alphaReal = plan.alphaReal;
    t.alphaImag = plan.alphaImag;
    const int64_t items = plan.k * plan.k + plan.m * plan.n;  // complex elements: every vector lane gets work
    const auto used = blas_host::UsedCores(items, vectorCores);
    t.itemsPerCore = static_cast<uint32_t>(blas_host::CeilDiv(items, used));
    t.nanEpoch = nanEpoch;
    return t;
}

CsymmGemmTilingData GemmArgs(const CsymmTiling& plan, bool split)
{
    CsymmGemmTilingData t{};
    t.m = static_cast<uint32_t>(plan.m);
    t.n = static_cast<uint32_t>(plan.n);
    t.k = static_cast<uint32_t>(plan.k);
    t.blockM = static_cast<uint32_t>(plan.blockM);
    t.blockN = static_cast<uint32_t>(plan.blockN);
    t.chunkK = split ? kSplitChunkK : kRealChunkK;
    t.tilesM = static_cast<uint32_t>(plan.tilesM);
    t.tileCount = static_cast<uint32_t>(plan.tileCount);
    t.ldOut = RealLd(plan.ldc);
    t.split = split ? 1u : 0u;
    return t;
}

}  // namespace

extern "C" aclblasStatus_t aclblasCsymm(aclblasHandle_t handle, aclblasSideMode_t side, aclblasFillMode_t uplo, int m,
                                        int n, const aclblasComplex* alpha, const aclblasComplex* A, int lda,
                                        const aclblasComplex* B, int ldb, const aclblasComplex* beta,
                                        aclblasComplex* C, int ldc)
{
    const aclblasStatus_t status =
        blas_host::ValidateCsymmParams(handle, side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc);
    if (status != ACLBLAS_STATUS_SUCCESS) {
        return status;
    }
    if (blas_host::ClassifyCsymm(m, n, *alpha, *beta, C != nullptr).path == CsymmPath::QUICK_RETURN) {
        return ACLBLAS_STATUS_SUCCESS;
    }
    const int32_t cubeCores = ascend_host::CubeCoreCount();
    const int32_t vectorCores = ascend_host::VectorCoreCount();
    if (cubeCores < 1 || vectorCores < 1) {
        return ACLBLAS_STATUS_INTERNAL_ERROR;
    }
    const CsymmTiling plan = blas_host::PlanCsymm(side, uplo, m, n, lda, ldb, ldc, *alpha, *beta, cubeCores);
    aclrtStream stream = ascend_host::HandleStream(handle);
    uint32_t epilogueCores = 1;
    const CsymmEpilogueTilingData epilogue = EpilogueArgs(plan, vectorCores, &epilogueCores);
    if (plan.path == CsymmPath::SCALE_ONLY) {
        csymm_scale_kernel_do(epilogueCores, stream, C, epilogue);
        return ACLBLAS_STATUS_SUCCESS;
    }
    /* one mixed launch and no other stream task, no workspace: the panels go UB -> L1 and the result L0C -> UB on
     * chip; the NaN flag needs no memset (the scan stores this call's epoch, common/arch35_nan_guard.h) */
    const bool split = SplitHf32(plan);
    const auto blocks = static_cast<uint32_t>(plan.usedCores);
    CsymmFusedTilingData fused{};
    fused.prepare = PrepareArgs(plan, split, static_cast<int32_t>(2 * blocks), ascend_host::NextNanEpoch(handle));
    fused.gemm = GemmArgs(plan, split);
    fused.epilogue = epilogue;
    fused.withEpilogue = plan.epilogue == blas_host::CsymmEpilogue::BETA_ZERO ? 0u : 1u;
    csymm_fused_kernel_do(blocks, stream, A, B, C, ascend_host::HandleScratch(handle), fused);
    return ACLBLAS_STATUS_SUCCESS;
}
