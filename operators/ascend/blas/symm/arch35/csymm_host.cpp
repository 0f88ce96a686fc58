/*
 * aclblasCsymm for arch35 (Ascend 950PR): host launch code.
 *
 * Validation, quick returns, path choice (QUICK_RETURN / SCALE_ONLY / GEMM), the epilogue mode, the tile plan and the
 * workspace planes with their size come from blas_host (operators/host/csymm_host.h, the functions the CPU twin runs
 * and the project tests). This file adds what needs the device: the workspace from the handle, the plan narrowed into
 * kernel arguments, and launches on the handle's stream. It never synchronises.
 */
#include <cstdint>

#include "ascend_host_env.h"
#include "csymm_host.h"
#include "csymm_kernel.h"

namespace {

using blas_host::CsymmPath;
using blas_host::CsymmPlaneSizes;
using blas_host::CsymmTiling;

CsymmPlanes PlanesIn(void* workspace, const CsymmPlaneSizes& s)
{
    auto* base = static_cast<float*>(workspace);
    CsymmPlanes p{};
    p.ar = base;
    p.ai = p.ar + s.aPlane;
    p.an = p.ai + s.aPlane;
    p.br = p.an + s.aPlane;
    p.bi = p.br + s.cPlane;
    p.pr = p.bi + s.cPlane;
    p.pi = p.pr + s.cPlane;
    return p;
}

CsymmEpilogueTilingData EpilogueArgs(const CsymmTiling& plan, const CsymmPlaneSizes& s, int32_t vectorCores,
                                     uint32_t* usedCores)
{
    CsymmEpilogueTilingData t{};
    t.m = static_cast<uint32_t>(plan.m);
    t.n = static_cast<uint32_t>(plan.n);
    t.ldc = static_cast<uint32_t>(plan.ldc);
    t.mPad = static_cast<uint32_t>(s.mPad);
    *usedCores = static_cast<uint32_t>(blas_host::UsedCores(plan.n, vectorCores));
    t.colsPerCore = static_cast<uint32_t>(blas_host::CeilDiv(plan.n, *usedCores));
    t.epilogue = static_cast<uint32_t>(plan.epilogue);
    t.alphaReal = plan.alphaReal;
    t.alphaImag = plan.alphaImag;
    t.betaReal = plan.betaReal;
    t.betaImag = plan.betaImag;
    return t;
}

CsymmPrepareTilingData PrepareArgs(const CsymmTiling& plan, const CsymmPlaneSizes& s, int32_t vectorCores,
                                   uint32_t* usedCores)
{
    CsymmPrepareTilingData t{};
    t.m = static_cast<uint32_t>(plan.m);
    t.n = static_cast<uint32_t>(plan.n);
    t.k = static_cast<uint32_t>(plan.k);
    t.uplo = static_cast<uint32_t>(plan.uplo);
    t.lda = static_cast<uint32_t>(plan.lda);
    t.ldb = static_cast<uint32_t>(plan.ldb);
    t.kPad = static_cast<uint32_t>(s.kPad);
    t.mPad = static_cast<uint32_t>(s.mPad);
    const int64_t items = plan.k * plan.k + plan.m * plan.n;  // plane elements: every vector lane gets work
    *usedCores = static_cast<uint32_t>(blas_host::UsedCores(items, vectorCores));
    t.itemsPerCore = static_cast<uint32_t>(blas_host::CeilDiv(items, *usedCores));
    return t;
}

CsymmGemmTilingData GemmArgs(const CsymmTiling& plan, const CsymmPlaneSizes& s)
{
    CsymmGemmTilingData t{};
    t.m = static_cast<uint32_t>(plan.m);
    t.n = static_cast<uint32_t>(plan.n);
    t.k = static_cast<uint32_t>(plan.k);
    t.blockM = static_cast<uint32_t>(plan.blockM);
    t.blockN = static_cast<uint32_t>(plan.blockN);
    t.blockK = static_cast<uint32_t>(plan.blockK);
    t.tilesM = static_cast<uint32_t>(plan.tilesM);
    t.tileCount = static_cast<uint32_t>(plan.tileCount);
    const bool left = plan.side == blas_host::kSideLeft;
    t.ldLeft = static_cast<uint32_t>(left ? s.mPad : s.kPad);
    t.ldRight = static_cast<uint32_t>(left ? s.kPad : s.mPad);
    t.ldOut = static_cast<uint32_t>(s.mPad);
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
    const CsymmPlaneSizes sizes = blas_host::CsymmPlaneSizesOf(plan.m, plan.n, plan.k);
    aclrtStream stream = ascend_host::HandleStream(handle);
    uint32_t epilogueCores = 1;
    const CsymmEpilogueTilingData epilogue = EpilogueArgs(plan, sizes, vectorCores, &epilogueCores);
    if (plan.path == CsymmPath::SCALE_ONLY) {
        csymm_scale_kernel_do(epilogueCores, stream, C, epilogue);
        return ACLBLAS_STATUS_SUCCESS;
    }
    void* workspace = nullptr;
    const aclblasStatus_t wsStatus = ascend_host::HandleWorkspace(
        handle, blas_host::CsymmWorkspaceBytes(plan.m, plan.n, plan.side, plan.path), &workspace);
    if (wsStatus != ACLBLAS_STATUS_SUCCESS) {
        return wsStatus;
    }
    const CsymmPlanes planes = PlanesIn(workspace, sizes);
    uint32_t prepareCores = 1;
    const CsymmPrepareTilingData prepare = PrepareArgs(plan, sizes, vectorCores, &prepareCores);
    void* nanFlag = ascend_host::HandleScratch(handle);
    if (aclrtMemsetAsync(nanFlag, ascend_host::kHandleScratchBytes, 0, sizeof(uint32_t), stream) != ACL_SUCCESS) {
        return ACLBLAS_STATUS_EXECUTION_FAILED;
    }
    csymm_prepare_kernel_do(prepareCores, stream, A, B, planes, nanFlag, prepare);
    csymm_gemm_kernel_do(static_cast<uint32_t>(plan.usedCores), static_cast<uint32_t>(vectorCores), stream,
                         plan.side == blas_host::kSideLeft, planes, nanFlag, GemmArgs(plan, sizes));
    csymm_epilogue_kernel_do(epilogueCores, stream, planes, C, epilogue);
    return ACLBLAS_STATUS_SUCCESS;
}
