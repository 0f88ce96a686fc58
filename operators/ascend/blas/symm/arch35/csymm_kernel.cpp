/*
 * aclblasCsymm kernels for arch35 (Ascend 950PR, dav-3510), after seeds/csymm_design.md.txt §3.4:
 *   1. prepare  (AIV, SIMT, one thread per plane element): A panels by uplo, reflected by index swap only (A = A^T, no conjugation, diagonal
 *               imaginary part kept), and B, into real/imaginary fp32 planes in the workspace; flags NaN
 *               (common/arch35_nan_guard.h);
 *   2. gemm     (AIC, tensor_api): P = A*B (LEFT) or B*A (RIGHT) as four real GEMM accumulations,
 *               Pr = Lr*Rr + Li*(-Ri) and Pi = Lr*Ri + Li*Rr, each K-chunked into L0C by the shared cube pipeline
 *               (common/arch35_cube_gemm.h), both products of a part interleaved every K step, written by Fixpipe;
 *               column-major swap, so the engine computes P^T; no cube work when the NaN flag is set;
 *   2b. gemm_nan (AIV, SIMT): the same P planes in plain fp32 when the NaN flag is set (NaN never enters Mmad);
 *   3. epilogue (AIV, SIMT): the fused complex alpha/beta epilogue, C = alpha*P + beta*C, C read only when beta != 0;
 *   4. scale    (AIV, SIMT): C = beta*C for alpha == 0.
 * The host (csymm_host.cpp) launches them on the handle's stream.
 */
#include <cstdint>

#include "kernel_operator.h"
#include "simt_api/asc_simt.h"
#include "tensor_api/tensor.h"
#include "arch35_cube_gemm.h"
#include "arch35_nan_guard.h"
#include "csymm_kernel.h"

namespace {

using arch35::Min;

constexpr uint32_t CS_UPPER = 121;
constexpr uint32_t CS_EPILOGUE_BETA_ZERO = 1;
constexpr uint32_t CS_EPILOGUE_BETA_ONE = 2;

// ---- 1. prepare -------------------------------------------------------------------------------------------------

/* One SIMT thread per plane element, consecutive threads on consecutive destinations (coalesced stores), elements
 * e0..e1-1 of this core: e < k*k is A (row e / k, column e % k of the dense planes), the rest B (column-major,
 * element f = e - k*k at row f % m, column f / m). */
__simt_vf__ __aicore__ LAUNCH_BOUND(CSYMM_SIMT_THREADS) inline void CsymmPrepareItems(
    __gm__ float* a, __gm__ float* b, __gm__ float* ar, __gm__ float* ai, __gm__ float* an, __gm__ float* br,
    __gm__ float* bi, __gm__ uint32_t* nanFlag, CsymmPrepareTilingData t, uint64_t e0, uint64_t e1)
{
    const uint64_t aItems = static_cast<uint64_t>(t.k) * t.k;
    bool nan = false;
    for (uint64_t e = e0 + threadIdx.x; e < e1; e += blockDim.x) {
        if (e < aItems) {
            const uint64_t row = e / t.k;
            const uint64_t col = e % t.k;
            const bool stored = (t.uplo == CS_UPPER) ? (row <= col) : (row >= col);
            const uint64_t src = stored ? row + col * t.lda : col + row * t.lda;
            const uint64_t dst = row * t.kPad + col;
            const float re = a[2 * src];
            const float im = a[2 * src + 1];
            ar[dst] = re;
            ai[dst] = im;
            an[dst] = -im;
            nan = nan || re != re || im != im;
        } else {
            const uint64_t f = e - aItems;
            const uint64_t row = f % t.m;
            const uint64_t col = f / t.m;
            const uint64_t src = row + col * t.ldb;
            const uint64_t dst = col * t.mPad + row;
            const float re = b[2 * src];
            const float im = b[2 * src + 1];
            br[dst] = re;
            bi[dst] = im;
            nan = nan || re != re || im != im;
        }
    }
    if (nan) {
        arch35::MarkNan(nanFlag);
    }
}

// ---- 2. gemm ----------------------------------------------------------------------------------------------------

/* Plane pointers as engine operands: real = (lr, rr) + (lx, ry), imag = (lr, ri) + (li, rr). */
__aicore__ inline void CsymmGemm(GM_ADDR lr, GM_ADDR li, GM_ADDR lx, GM_ADDR rr, GM_ADDR ri, GM_ADDR ry,
                                 GM_ADDR pr, GM_ADDR pi, GM_ADDR nanFlag, const CsymmGemmTilingData& t)
{
    if (arch35::NanSeen(nanFlag)) {
        return;  // csymm_gemm_nan computes P on the vector cores
    }
    /* The planes are all stored row-major with their ld as row stride. */
    auto plane = [](GM_ADDR p, uint32_t rows, uint32_t ld) {
        return arch35::GmTensor(p, arch35::RowMajorLayout(rows, ld));
    };
    auto leftR = plane(lr, t.n, t.ldLeft);
    auto leftI = plane(li, t.n, t.ldLeft);
    auto leftX = plane(lx, t.n, t.ldLeft);
    auto rightR = plane(rr, t.k, t.ldRight);
    auto rightI = plane(ri, t.k, t.ldRight);
    auto rightY = plane(ry, t.k, t.ldRight);
    auto outR = plane(pr, t.n, t.ldOut);
    auto outI = plane(pi, t.n, t.ldOut);
    arch35::CubeBegin();
    arch35::PingPong pp;
    for (uint32_t tile = AscendC::GetBlockIdx(); tile < t.tileCount; tile += AscendC::GetBlockNum()) {
        /* PlanCsymm's tile of C -> engine region: engine rows are columns of C, engine columns rows of C. */
        const uint32_t cRow0 = (tile % t.tilesM) * t.blockM;
        const uint32_t cCol0 = (tile / t.tilesM) * t.blockN;
        const uint32_t rows = Min(t.blockN, t.n - cCol0);
        const uint32_t cols = Min(t.blockM, t.m - cRow0);
        /* Both products of a part share every K step in L0C: Pr = Lr*Rr + Lx*Ry, Pi = Lr*Ri + Li*Rr. */
        const decltype(leftR) realLeft[2] = {leftR, leftX};
        const decltype(rightR) realRight[2] = {rightR, rightY};
        const decltype(leftR) imagLeft[2] = {leftR, leftI};
        const decltype(rightR) imagRight[2] = {rightI, rightR};
        arch35::AcquireL0C(pp);
        arch35::Accumulate(realLeft, realRight, t.k, t.blockK, cCol0, cRow0, rows, cols, true, true, pp);
        arch35::Fixpipe(outR, cCol0, cRow0, rows, cols, pp);
        arch35::AcquireL0C(pp);
        arch35::Accumulate(imagLeft, imagRight, t.k, t.blockK, cCol0, cRow0, rows, cols, true, true, pp);
        arch35::Fixpipe(outI, cCol0, cRow0, rows, cols, pp);
    }
    arch35::CubeEnd();
}

__aicore__ inline __gm__ float* Floats(GM_ADDR p) { return reinterpret_cast<__gm__ float*>(p); }

/* The engine product of CsymmGemm in plain fp32, engine rows row0, row0 + step, ... (columns of C), one SIMT thread
 * per engine column (row of C). */
__simt_vf__ __aicore__ LAUNCH_BOUND(CSYMM_SIMT_THREADS) inline void CsymmGemmNanRows(
    __gm__ float* lr, __gm__ float* li, __gm__ float* lx, __gm__ float* rr, __gm__ float* ri, __gm__ float* ry,
    __gm__ float* pr, __gm__ float* pi, CsymmGemmTilingData t, uint32_t row0, uint32_t step)
{
    for (uint32_t row = row0; row < t.n; row += step) {
        for (uint32_t col = threadIdx.x; col < t.m; col += blockDim.x) {
            float re = 0.0f;
            float im = 0.0f;
            for (uint32_t p = 0; p < t.k; ++p) {
                const uint64_t l = static_cast<uint64_t>(row) * t.ldLeft + p;
                const uint64_t r = static_cast<uint64_t>(p) * t.ldRight + col;
                re += lr[l] * rr[r] + lx[l] * ry[r];
                im += lr[l] * ri[r] + li[l] * rr[r];
            }
            const uint64_t o = static_cast<uint64_t>(row) * t.ldOut + col;
            pr[o] = re;
            pi[o] = im;
        }
    }
}

// ---- 3./4. epilogue and scale ------------------------------------------------------------------------------------

/* One pass over columns col0..col1-1 of C; with p == nullptr it is the scale-only pass (alpha == 0). */
__simt_vf__ __aicore__ LAUNCH_BOUND(CSYMM_SIMT_THREADS) inline void CsymmEpilogueColumns(
    __gm__ float* pr, __gm__ float* pi, __gm__ float* c, CsymmEpilogueTilingData t, uint32_t col0, uint32_t col1,
    bool scaleOnly)
{
    for (uint32_t col = col0; col < col1; ++col) {
        for (uint32_t row = threadIdx.x; row < t.m; row += blockDim.x) {
            const uint64_t ci = 2 * (row + static_cast<uint64_t>(col) * t.ldc);
            float re = 0.0f;
            float im = 0.0f;
            if (!scaleOnly) {
                const uint64_t pIdx = row + static_cast<uint64_t>(col) * t.mPad;
                re = t.alphaReal * pr[pIdx] - t.alphaImag * pi[pIdx];
                im = t.alphaReal * pi[pIdx] + t.alphaImag * pr[pIdx];
            }
            if (t.epilogue == CS_EPILOGUE_BETA_ONE) {
                re += c[ci];
                im += c[ci + 1];
            } else if (t.epilogue != CS_EPILOGUE_BETA_ZERO) {
                const float oldRe = c[ci];
                const float oldIm = c[ci + 1];
                re += t.betaReal * oldRe - t.betaImag * oldIm;
                im += t.betaReal * oldIm + t.betaImag * oldRe;
            }
            c[ci] = re;
            c[ci + 1] = im;
        }
    }
}

__aicore__ inline void CsymmEpilogueCore(GM_ADDR pr, GM_ADDR pi, GM_ADDR c, const CsymmEpilogueTilingData& t,
                                         bool scaleOnly)
{
    const uint32_t col0 = AscendC::GetBlockIdx() * t.colsPerCore;
    const uint32_t col1 = Min(col0 + t.colsPerCore, t.n);
    if (col0 >= col1) {
        return;
    }
    asc_vf_call<CsymmEpilogueColumns>(dim3{CSYMM_SIMT_THREADS, 1, 1}, reinterpret_cast<__gm__ float*>(pr),
                                      reinterpret_cast<__gm__ float*>(pi), reinterpret_cast<__gm__ float*>(c), t, col0,
                                      col1, scaleOnly);
}

}  // namespace

extern "C" __global__ __aicore__ void csymm_prepare(GM_ADDR a, GM_ADDR b, GM_ADDR ar, GM_ADDR ai, GM_ADDR an,
                                                   GM_ADDR br, GM_ADDR bi, GM_ADDR nanFlag,
                                                   CsymmPrepareTilingData tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    const uint64_t items = static_cast<uint64_t>(tiling.k) * tiling.k + static_cast<uint64_t>(tiling.m) * tiling.n;
    const uint64_t item0 = AscendC::GetBlockIdx() * static_cast<uint64_t>(tiling.itemsPerCore);
    const uint64_t item1 = item0 + tiling.itemsPerCore < items ? item0 + tiling.itemsPerCore : items;
    if (item0 >= item1) {
        return;
    }
    asc_vf_call<CsymmPrepareItems>(dim3{CSYMM_SIMT_THREADS, 1, 1}, reinterpret_cast<__gm__ float*>(a),
                                   reinterpret_cast<__gm__ float*>(b), reinterpret_cast<__gm__ float*>(ar),
                                   reinterpret_cast<__gm__ float*>(ai), reinterpret_cast<__gm__ float*>(an),
                                   reinterpret_cast<__gm__ float*>(br), reinterpret_cast<__gm__ float*>(bi),
                                   reinterpret_cast<__gm__ uint32_t*>(nanFlag), tiling, item0, item1);
}

extern "C" __global__ __aicore__ __cube__ void csymm_gemm(GM_ADDR lr, GM_ADDR li, GM_ADDR lx, GM_ADDR rr, GM_ADDR ri,
                                                         GM_ADDR ry, GM_ADDR pr, GM_ADDR pi, GM_ADDR nanFlag,
                                                         CsymmGemmTilingData tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIC_ONLY);
    CsymmGemm(lr, li, lx, rr, ri, ry, pr, pi, nanFlag, tiling);
}

extern "C" __global__ __aicore__ void csymm_gemm_nan(GM_ADDR lr, GM_ADDR li, GM_ADDR lx, GM_ADDR rr, GM_ADDR ri,
                                                    GM_ADDR ry, GM_ADDR pr, GM_ADDR pi, GM_ADDR nanFlag,
                                                    CsymmGemmTilingData tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    if (!arch35::NanSeen(nanFlag)) {
        return;
    }
    asc_vf_call<CsymmGemmNanRows>(dim3{CSYMM_SIMT_THREADS, 1, 1}, Floats(lr), Floats(li), Floats(lx), Floats(rr),
                                  Floats(ri), Floats(ry), Floats(pr), Floats(pi), tiling,
                                  static_cast<uint32_t>(AscendC::GetBlockIdx()),
                                  static_cast<uint32_t>(AscendC::GetBlockNum()));
}

extern "C" __global__ __aicore__ void csymm_epilogue(GM_ADDR pr, GM_ADDR pi, GM_ADDR c, CsymmEpilogueTilingData tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    CsymmEpilogueCore(pr, pi, c, tiling, false);
}

extern "C" __global__ __aicore__ void csymm_scale(GM_ADDR c, CsymmEpilogueTilingData tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    CsymmEpilogueCore(c, c, c, tiling, true);
}

namespace {
uint8_t* Gm(const void* p) { return static_cast<uint8_t*>(const_cast<void*>(p)); }
}  // namespace

void csymm_prepare_kernel_do(uint32_t numBlocks, void* stream, const void* a, const void* b, const CsymmPlanes& planes,
                             void* nanFlag, const CsymmPrepareTilingData& tiling)
{
    csymm_prepare<<<numBlocks, nullptr, stream>>>(Gm(a), Gm(b), Gm(planes.ar), Gm(planes.ai), Gm(planes.an),
                                                   Gm(planes.br), Gm(planes.bi), Gm(nanFlag), tiling);
}

void csymm_gemm_kernel_do(uint32_t cubeBlocks, uint32_t vectorBlocks, void* stream, bool sideLeft,
                          const CsymmPlanes& p, void* nanFlag, const CsymmGemmTilingData& tiling)
{
    /* LEFT: P^T = B^T * A, the right operand is A: real = Br*Ar + Bi*An. RIGHT: P^T = A * B^T: real = Ar*Br + An*Bi. */
    float* const left[3] = {sideLeft ? p.br : p.ar, sideLeft ? p.bi : p.ai, sideLeft ? p.bi : p.an};
    float* const right[3] = {sideLeft ? p.ar : p.br, sideLeft ? p.ai : p.bi, sideLeft ? p.an : p.bi};
    csymm_gemm<<<cubeBlocks, nullptr, stream>>>(Gm(left[0]), Gm(left[1]), Gm(left[2]), Gm(right[0]), Gm(right[1]),
                                                 Gm(right[2]), Gm(p.pr), Gm(p.pi), Gm(nanFlag), tiling);
    csymm_gemm_nan<<<vectorBlocks, nullptr, stream>>>(Gm(left[0]), Gm(left[1]), Gm(left[2]), Gm(right[0]),
                                                       Gm(right[1]), Gm(right[2]), Gm(p.pr), Gm(p.pi), Gm(nanFlag),
                                                       tiling);
}

void csymm_epilogue_kernel_do(uint32_t numBlocks, void* stream, const CsymmPlanes& planes, void* c,
                              const CsymmEpilogueTilingData& tiling)
{
    csymm_epilogue<<<numBlocks, nullptr, stream>>>(Gm(planes.pr), Gm(planes.pi), Gm(c), tiling);
}

void csymm_scale_kernel_do(uint32_t numBlocks, void* stream, void* c, const CsymmEpilogueTilingData& tiling)
{
    csymm_scale<<<numBlocks, nullptr, stream>>>(Gm(c), tiling);
}
