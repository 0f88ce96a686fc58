/*
 * aclblasCsymm for arch35 (Ascend 950PR): host launch code.
 *
 * Validation, quick returns, path choice (QUICK_RETURN / SCALE_ONLY / GEMM), the epilogue mode, the tile plan and the
 * workspace operands with their size come from blas_host (operators/host/csymm_host.h, the functions the CPU twin runs
 * and the project tests). This file adds what needs the device: the workspace from the handle, the plan narrowed into
 * kernel arguments, and launches on the handle's stream. It never synchronises.
 */
#include <cstdint>

#include "ascend_host_env.h"
#include "csymm_host.h"
#include "csymm_kernel.h"

namespace {

using blas_host::CsymmEpilogue;
using blas_host::CsymmOperandSizes;
using blas_host::CsymmPath;
using blas_host::CsymmTiling;

/* Floats between columns of C seen as the engine's real rows (re/im interleaved). */
uint32_t RealLd(int64_t ld) { return static_cast<uint32_t>(2 * ld); }

/* Real K per L1 chunk: the panels of one product (<= 128 engine rows, <= 256 columns) take 1.5 KiB per K in an L1
 * half of 256 KiB; split HF32 holds three products' panels. */
constexpr uint32_t kRealChunkK = 128;
constexpr uint32_t kSplitChunkK = 48;
/* Split HF32 from this real K on: the cost model (harness/cost_model.py) prices an fp32 Mmad K step at 8 HF32 ones
 * (Cube指令理论性能汇总.md table 2), so three HF32 products take 3/8 of the fp32 cube time; below two L0 K steps
 * (64) the call is launch-bound either way and prepare's extra lo operands are not worth writing. */
constexpr int64_t kSplitMinRealK = 64;

bool SplitHf32(const CsymmTiling& plan) { return 2 * plan.k >= kSplitMinRealK; }

/* The split's lo operands after the workspace of CsymmWorkspaceBytes: lo(L) (n rows, 2 x padded k floats apart),
 * then lo(R) in R's layout. */
struct LoArea {
    uint32_t ldLoLeft;
    uint64_t loLeftFloats;
    uint64_t floats;
};

LoArea LoAreaOf(const CsymmTiling& plan, const CsymmOperandSizes& s, bool split)
{
    if (!split) {
        return LoArea{0, 0, 0};
    }
    const int64_t ld = 2 * blas_host::CeilAlign(plan.k, blas_host::kCsymmPlanePad);
    const uint64_t left = static_cast<uint64_t>(blas_host::CeilAlign(plan.n * ld, blas_host::kCsymmPlaneAlign));
    return LoArea{static_cast<uint32_t>(ld), left, left + s.rightFloats};
}

CsymmEpilogueTilingData EpilogueArgs(const CsymmTiling& plan, const CsymmOperandSizes& s, int32_t vectorCores,
                                     uint32_t* usedCores)
{
    CsymmEpilogueTilingData t{};
    t.m = static_cast<uint32_t>(plan.m);
    t.n = static_cast<uint32_t>(plan.n);
    t.ldc = static_cast<uint32_t>(plan.ldc);
    t.ldP = static_cast<uint32_t>(s.ldP);
    *usedCores = static_cast<uint32_t>(blas_host::UsedCores(plan.n, vectorCores));
    t.colsPerCore = static_cast<uint32_t>(blas_host::CeilDiv(plan.n, *usedCores));
    t.epilogue = static_cast<uint32_t>(plan.epilogue);
    t.betaReal = plan.betaReal;
    t.betaImag = plan.betaImag;
    return t;
}

CsymmPrepareTilingData PrepareArgs(const CsymmTiling& plan, const CsymmOperandSizes& s, const LoArea& lo,
                                   int32_t vectorCores, uint32_t* usedCores)
{
    CsymmPrepareTilingData t{};
    t.m = static_cast<uint32_t>(plan.m);
    t.n = static_cast<uint32_t>(plan.n);
    t.k = static_cast<uint32_t>(plan.k);
    t.side = static_cast<uint32_t>(plan.side);
    t.uplo = static_cast<uint32_t>(plan.uplo);
    t.lda = static_cast<uint32_t>(plan.lda);
    t.ldb = static_cast<uint32_t>(plan.ldb);
    t.ldLeft = static_cast<uint32_t>(s.ldLeft);
    t.ldRight = static_cast<uint32_t>(s.ldRight);
    t.split = lo.floats != 0 ? 1u : 0u;
    t.ldLoLeft = lo.ldLoLeft;
    t.loRightOffset = lo.loLeftFloats;
    t.alphaReal = plan.alphaReal;
    t.alphaImag = plan.alphaImag;
    const int64_t items = plan.k * plan.k + plan.m * plan.n;  // complex elements: every vector lane gets work
    *usedCores = static_cast<uint32_t>(blas_host::UsedCores(items, vectorCores));
    t.itemsPerCore = static_cast<uint32_t>(blas_host::CeilDiv(items, *usedCores));
    return t;
}

/* Real K chunk through L1: a 128-row L panel and a 256-column R panel of 128 floats of K are 64 + 128 KiB, within
 * half of L1 (arch35_cube_gemm.h ping-pongs the halves). */
CsymmGemmTilingData GemmArgs(const CsymmTiling& plan, const CsymmOperandSizes& s, const LoArea& lo, bool writesC)
{
    CsymmGemmTilingData t{};
    t.m = static_cast<uint32_t>(plan.m);
    t.n = static_cast<uint32_t>(plan.n);
    t.k = static_cast<uint32_t>(plan.k);
    t.blockM = static_cast<uint32_t>(plan.blockM);
    t.blockN = static_cast<uint32_t>(plan.blockN);
    t.chunkK = lo.floats != 0 ? kSplitChunkK : kRealChunkK;
    t.tilesM = static_cast<uint32_t>(plan.tilesM);
    t.tileCount = static_cast<uint32_t>(plan.tileCount);
    t.ldLeft = plan.side == blas_host::kSideLeft ? RealLd(plan.ldb) : static_cast<uint32_t>(s.ldLeft);
    t.ldRight = static_cast<uint32_t>(s.ldRight);
    t.ldOut = writesC ? RealLd(plan.ldc) : static_cast<uint32_t>(s.ldP);
    t.split = lo.floats != 0 ? 1u : 0u;
    t.ldLoLeft = lo.ldLoLeft;
    t.loRightOffset = lo.loLeftFloats;
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
    const CsymmOperandSizes sizes = blas_host::CsymmOperandSizesOf(plan.m, plan.n, plan.side, plan.epilogue);
    aclrtStream stream = ascend_host::HandleStream(handle);
    uint32_t epilogueCores = 1;
    const CsymmEpilogueTilingData epilogue = EpilogueArgs(plan, sizes, vectorCores, &epilogueCores);
    if (plan.path == CsymmPath::SCALE_ONLY) {
        csymm_scale_kernel_do(epilogueCores, stream, C, epilogue);
        return ACLBLAS_STATUS_SUCCESS;
    }
    const LoArea lo = LoAreaOf(plan, sizes, SplitHf32(plan));
    const uint64_t operandBytes = blas_host::CsymmWorkspaceBytes(plan.m, plan.n, plan.side, plan.path, plan.epilogue);
    void* workspace = nullptr;
    const aclblasStatus_t wsStatus =
        ascend_host::HandleWorkspace(handle, operandBytes + lo.floats * sizeof(float), &workspace);
    if (wsStatus != ACLBLAS_STATUS_SUCCESS) {
        return wsStatus;
    }
    float* const base = static_cast<float*>(workspace);
    const void* left = plan.side == blas_host::kSideLeft ? static_cast<const void*>(B) : base;
    float* const right = base + sizes.leftFloats;
    float* const p = right + sizes.rightFloats;
    float* const loBase = lo.floats != 0 ? base + operandBytes / sizeof(float) : nullptr;
    const bool writesC = plan.epilogue == CsymmEpilogue::BETA_ZERO;  // Fixpipe writes C, no epilogue launch
    /* one mixed launch: its 2 x blocks vector cores share prepare and the epilogue */
    const auto blocks = static_cast<uint32_t>(plan.usedCores);
    const auto vectorBlocks = static_cast<int32_t>(2 * blocks);
    uint32_t used = 1;
    CsymmFusedTilingData fused{};
    fused.prepare = PrepareArgs(plan, sizes, lo, vectorBlocks, &used);
    fused.gemm = GemmArgs(plan, sizes, lo, writesC);
    fused.epilogue = EpilogueArgs(plan, sizes, vectorBlocks, &used);
    fused.withEpilogue = writesC ? 0u : 1u;
    void* nanFlag = ascend_host::HandleScratch(handle);
    if (aclrtMemsetAsync(nanFlag, ascend_host::kHandleScratchBytes, 0, sizeof(uint32_t), stream) != ACL_SUCCESS) {
        return ACLBLAS_STATUS_EXECUTION_FAILED;
    }
    csymm_fused_kernel_do(blocks, stream, A, B, left, base, right, loBase, writesC ? static_cast<void*>(C) : p, C,
                          nanFlag, fused);
    return ACLBLAS_STATUS_SUCCESS;
}
