/*
 * aclblasCsymm kernels for arch35 (Ascend 950PR, dav-3510), after seeds/csymm_design.md.txt §3.4. The complex
 * product is ONE real GEMM on a real-embedded operand (csymm_tiling_data.h): with a -> E(a) = [[ar, ai], [-ai, ar]],
 * [pr, pi] = [lr, li] * E(r), so the real and imaginary products of each element pair are neighbours along the real
 * K and share every K fractal of a single L0C accumulation (no difference of two finished plane sums).
 *   1. prepare  (AIV, SIMT, one thread per complex element): A from its uplo triangle, reflected by index swap only
 *               (A = A^T, no conjugation, diagonal imaginary part kept), scaled by alpha, into the embedded R (LEFT)
 *               or the plain L (RIGHT); on RIGHT, B into the embedded R; flags NaN in A or B
 *               (common/arch35_nan_guard.h);
 *               With tiling.split it also writes lo(L) and lo(R) for split HF32 (common/arch35_split_hf32.h)
 *               and flags values whose HF32 part is not finite instead of NaN only;
 *   2. gemm     (AIC, tensor_api): L * R by the shared cube pipeline (common/arch35_cube_gemm.h), the two L0C
 *               buffers alternating between tiles; Fixpipe writes C itself when beta == 0, else P; column-major
 *               swap; no cube work when the NaN flag is set; split: HF32 mode, hi*hi + hi*lo + lo*hi per K step;
 *   2b. gemm_nan (AIV, SIMT): the same product in plain fp32 when the NaN flag is set (NaN never enters Mmad);
 *   3. epilogue (AIV, SIMT): C = P + beta*C, C read only when beta != 0; not launched when beta == 0;
 *   4. scale    (AIV, SIMT): C = beta*C for alpha == 0.
 * Steps 1 to 3 run as ONE mixed launch, csymm_fused (KERNEL_TYPE_MIX_AIC_1_2): prepare on the vector cores,
 * SyncAll<false> (asc-devkit SyncAll.md: every AIV, then every AIC, then AIV waits for AIC), the cube GEMM or its
 * vector fallback, and when beta != 0 a second SyncAll before the epilogue. The host (csymm_host.cpp) launches it
 * (or scale) on the handle's stream.
 */
#include <cstdint>

#include "kernel_operator.h"
#include "simt_api/asc_simt.h"
#include "tensor_api/tensor.h"
#include "arch35_cube_gemm.h"
#include "arch35_nan_guard.h"
#include "arch35_split_hf32.h"
#include "csymm_kernel.h"

namespace {

using arch35::Min;

constexpr uint32_t CS_LEFT = 141;
constexpr uint32_t CS_UPPER = 121;
constexpr uint32_t CS_EPILOGUE_BETA_ZERO = 1;
constexpr uint32_t CS_EPILOGUE_BETA_ONE = 2;

// ---- 1. prepare -------------------------------------------------------------------------------------------------

/* Embedded element (re, im) at R rows kRe / kIm, columns col, col + 1: E = [[re, im], [-im, re]]. */
__aicore__ inline void StoreEmbedded(__gm__ float* r, uint64_t rowRe, uint64_t rowIm, uint64_t col, float re, float im)
{
    r[rowRe + col] = re;
    r[rowRe + col + 1] = im;
    r[rowIm + col] = -im;
    r[rowIm + col + 1] = re;
}

/* One SIMT thread per complex element, consecutive threads on consecutive elements, elements e0..e1-1 of this core:
 * e < k*k is A(e / k, e % k) of the symmetric A, the rest B (column-major, f = e - k*k at row f % m, column f / m). */
__simt_vf__ __aicore__ LAUNCH_BOUND(CSYMM_SIMT_THREADS) inline void CsymmPrepareItems(
    __gm__ float* a, __gm__ float* b, __gm__ float* left, __gm__ float* right, __gm__ float* lo,
    __gm__ uint32_t* nanFlag, CsymmPrepareTilingData t, uint64_t e0, uint64_t e1)
{
    /* Position of element p's part d (0 real, 1 imaginary) along the engine's real K. */
    auto kPos = [](uint64_t p, uint64_t d) { return 2 * p + d; };
    /* What keeps an element off the cube: NaN (fp32), or a part whose HF32 split is not finite (split). */
    auto offCube = [&t](float re, float im) {
        return re != re || im != im || (t.split != 0 && !(arch35::Hf32Splittable(re) && arch35::Hf32Splittable(im)));
    };
    const uint64_t aItems = static_cast<uint64_t>(t.k) * t.k;
    const bool sideLeft = t.side == CS_LEFT;
    __gm__ float* loRight = lo + t.loRightOffset;
    bool nan = false;
    for (uint64_t e = e0 + threadIdx.x; e < e1; e += blockDim.x) {
        if (e < aItems) {
            const uint64_t row = e / t.k;
            const uint64_t col = e % t.k;
            const bool stored = (t.uplo == CS_UPPER) ? (row <= col) : (row >= col);
            const uint64_t src = stored ? row + col * t.lda : col + row * t.lda;
            const float re0 = a[2 * src];
            const float im0 = a[2 * src + 1];
            const float re = t.alphaReal * re0 - t.alphaImag * im0;
            const float im = t.alphaReal * im0 + t.alphaImag * re0;
            nan = nan || offCube(re, im);  // NaN in A, or made by alpha (0 * Inf)
            if (sideLeft) {  // R[kPos(row, d), 2 col + c] = E(alpha A(row, col))
                StoreEmbedded(right, kPos(row, 0) * t.ldRight, kPos(row, 1) * t.ldRight, 2 * col, re, im);
                if (t.split != 0) {  // lo(-x) = -lo(x): the embedding of the lo parts is lo(R)
                    StoreEmbedded(loRight, kPos(row, 0) * t.ldRight, kPos(row, 1) * t.ldRight, 2 * col,
                                  arch35::Hf32Lo(re), arch35::Hf32Lo(im));
                }
            } else {  // L[row, kPos(col, d)] = alpha A(row, col)
                left[row * t.ldLeft + kPos(col, 0)] = re;
                left[row * t.ldLeft + kPos(col, 1)] = im;
                if (t.split != 0) {
                    lo[row * t.ldLoLeft + kPos(col, 0)] = arch35::Hf32Lo(re);
                    lo[row * t.ldLoLeft + kPos(col, 1)] = arch35::Hf32Lo(im);
                }
            }
        } else {
            const uint64_t f = e - aItems;
            const uint64_t row = f % t.m;
            const uint64_t col = f / t.m;
            const uint64_t src = row + col * t.ldb;
            const float re = b[2 * src];
            const float im = b[2 * src + 1];
            nan = nan || offCube(re, im);
            if (!sideLeft) {  // R[kPos(col, d), 2 row + c] = E(B(row, col))
                StoreEmbedded(right, kPos(col, 0) * t.ldRight, kPos(col, 1) * t.ldRight, 2 * row, re, im);
                if (t.split != 0) {
                    StoreEmbedded(loRight, kPos(col, 0) * t.ldRight, kPos(col, 1) * t.ldRight, 2 * row,
                                  arch35::Hf32Lo(re), arch35::Hf32Lo(im));
                }
            } else if (t.split != 0) {  // lo(L)[col, kPos(row, d)]: L is B itself, row col of L = column col of B
                lo[col * t.ldLoLeft + kPos(row, 0)] = arch35::Hf32Lo(re);
                lo[col * t.ldLoLeft + kPos(row, 1)] = arch35::Hf32Lo(im);
            }
        }
    }
    if (nan) {
        arch35::MarkNan(nanFlag);
    }
}

// ---- 2. gemm ----------------------------------------------------------------------------------------------------

/* Every tile of this core: L0C = sum over the N products lefts[i] * rights[i], interleaved per K step. */
template <typename GmLeft, typename GmRight, typename GmOut, uint32_t N>
__aicore__ inline void CsymmTiles(const GmLeft (&lefts)[N], const GmRight (&rights)[N], const GmOut& o,
                                  const CsymmGemmTilingData& t)
{
    const uint32_t realK = 2 * t.k;
    arch35::PingPong pp;
    for (uint32_t tile = AscendC::GetBlockIdx(); tile < t.tileCount; tile += AscendC::GetBlockNum()) {
        /* PlanCsymm's tile of C -> engine region: engine rows are columns of C, engine columns re/im of its rows. */
        const uint32_t cRow0 = (tile % t.tilesM) * t.blockM;
        const uint32_t cCol0 = (tile / t.tilesM) * t.blockN;
        const uint32_t rows = Min(t.blockN, t.n - cCol0);
        const uint32_t cols = 2 * Min(t.blockM, t.m - cRow0);
        arch35::AcquireL0C(pp);
        arch35::Accumulate(lefts, rights, realK, t.chunkK, cCol0, 2 * cRow0, rows, cols, true, true, pp);
        arch35::Fixpipe(o, cCol0, 2 * cRow0, rows, cols, pp);
    }
}

__aicore__ inline void CsymmGemm(GM_ADDR left, GM_ADDR right, GM_ADDR lo, GM_ADDR out, GM_ADDR nanFlag,
                                 const CsymmGemmTilingData& t)
{
    if (arch35::NanSeen(nanFlag)) {
        return;  // csymm_gemm_nan computes the product on the vector cores
    }
    const uint32_t realK = 2 * t.k;
    const auto l = arch35::GmTensor(left, arch35::RowMajorLayout(t.n, t.ldLeft));
    const auto r = arch35::GmTensor(right, arch35::RowMajorLayout(realK, t.ldRight));
    const auto o = arch35::GmTensor(out, arch35::RowMajorLayout(t.n, t.ldOut));
    arch35::CubeBegin();
    if (t.split != 0) {  // hi*hi + hi*lo + lo*hi: Mmad rounds L and R to their hi parts itself
        const auto loL = arch35::GmTensor(lo, arch35::RowMajorLayout(t.n, t.ldLoLeft));
        const auto loR = arch35::GmTensor(lo + t.loRightOffset * sizeof(float),
                                          arch35::RowMajorLayout(realK, t.ldRight));
        const decltype(l) lefts[3] = {l, l, loL};
        const decltype(r) rights[3] = {r, loR, r};
        AscendC::SetHF32Mode(AscendC::HF32Mode::ENABLE);
        AscendC::SetHF32TransMode(AscendC::HF32TransMode::NEAREST_EVEN);
        CsymmTiles(lefts, rights, o, t);
        AscendC::SetHF32Mode(AscendC::HF32Mode::DISABLE);
    } else {
        const decltype(l) lefts[1] = {l};
        const decltype(r) rights[1] = {r};
        CsymmTiles(lefts, rights, o, t);
    }
    arch35::CubeEnd();
}

__aicore__ inline __gm__ float* Floats(GM_ADDR p) { return reinterpret_cast<__gm__ float*>(p); }

/* The engine product of CsymmGemm in plain fp32, engine rows row0, row0 + step, ... (columns of C), one SIMT thread
 * per engine column. */
__simt_vf__ __aicore__ LAUNCH_BOUND(CSYMM_SIMT_THREADS) inline void CsymmGemmNanRows(
    __gm__ float* left, __gm__ float* right, __gm__ float* out, CsymmGemmTilingData t, uint32_t row0, uint32_t step)
{
    const uint32_t realK = 2 * t.k;
    for (uint32_t row = row0; row < t.n; row += step) {
        for (uint32_t col = threadIdx.x; col < 2 * t.m; col += blockDim.x) {
            const uint64_t l = static_cast<uint64_t>(row) * t.ldLeft;
            float acc = 0.0f;
            for (uint32_t q = 0; q < realK; ++q) {
                acc += left[l + q] * right[static_cast<uint64_t>(q) * t.ldRight + col];
            }
            out[static_cast<uint64_t>(row) * t.ldOut + col] = acc;
        }
    }
}

// ---- 3./4. epilogue and scale ------------------------------------------------------------------------------------

/* One pass over columns col0..col1-1 of C; with scaleOnly it is C = beta * C (alpha == 0), P unread. */
__simt_vf__ __aicore__ LAUNCH_BOUND(CSYMM_SIMT_THREADS) inline void CsymmEpilogueColumns(
    __gm__ float* p, __gm__ float* c, CsymmEpilogueTilingData t, uint32_t col0, uint32_t col1, bool scaleOnly)
{
    for (uint32_t col = col0; col < col1; ++col) {
        for (uint32_t row = threadIdx.x; row < t.m; row += blockDim.x) {
            const uint64_t ci = 2 * (row + static_cast<uint64_t>(col) * t.ldc);
            float re = 0.0f;
            float im = 0.0f;
            if (!scaleOnly) {
                const uint64_t pIdx = static_cast<uint64_t>(col) * t.ldP + 2 * row;
                re = p[pIdx];
                im = p[pIdx + 1];
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

__aicore__ inline void CsymmEpilogueCore(GM_ADDR p, GM_ADDR c, const CsymmEpilogueTilingData& t, bool scaleOnly)
{
    const uint32_t col0 = AscendC::GetBlockIdx() * t.colsPerCore;
    const uint32_t col1 = Min(col0 + t.colsPerCore, t.n);
    if (col0 >= col1) {
        return;
    }
    asc_vf_call<CsymmEpilogueColumns>(dim3{CSYMM_SIMT_THREADS, 1, 1}, Floats(p), Floats(c), t, col0, col1, scaleOnly);
}

/* This vector core's share of the prepare items: A's k x k elements, then B's m x n. */
__aicore__ inline void CsymmPrepareCore(GM_ADDR a, GM_ADDR b, GM_ADDR left, GM_ADDR right, GM_ADDR lo,
                                        GM_ADDR nanFlag, const CsymmPrepareTilingData& t)
{
    const uint64_t items = static_cast<uint64_t>(t.k) * t.k + static_cast<uint64_t>(t.m) * t.n;
    const uint64_t item0 = AscendC::GetBlockIdx() * static_cast<uint64_t>(t.itemsPerCore);
    const uint64_t item1 = item0 + t.itemsPerCore < items ? item0 + t.itemsPerCore : items;
    if (item0 >= item1) {
        return;
    }
    asc_vf_call<CsymmPrepareItems>(dim3{CSYMM_SIMT_THREADS, 1, 1}, Floats(a), Floats(b), Floats(left), Floats(right),
                                   Floats(lo), reinterpret_cast<__gm__ uint32_t*>(nanFlag), t, item0, item1);
}

}  // namespace

extern "C" __global__ __aicore__ void csymm_fused(GM_ADDR a, GM_ADDR b, GM_ADDR left, GM_ADDR workspaceLeft,
                                                 GM_ADDR right, GM_ADDR lo, GM_ADDR out, GM_ADDR c, GM_ADDR nanFlag,
                                                 CsymmFusedTilingData tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    if ASCEND_IS_AIV {
        CsymmPrepareCore(a, b, workspaceLeft, right, lo, nanFlag, tiling.prepare);
    }
    AscendC::SyncAll<false>();  // the engine operands and the NaN flag are in GM for every core
    if ASCEND_IS_AIC {
        CsymmGemm(left, right, lo, out, nanFlag, tiling.gemm);  // nothing when the flag is set
    } else if (arch35::NanSeen(nanFlag)) {
        asc_vf_call<CsymmGemmNanRows>(dim3{CSYMM_SIMT_THREADS, 1, 1}, Floats(left), Floats(right), Floats(out),
                                      tiling.gemm, static_cast<uint32_t>(AscendC::GetBlockIdx()),
                                      static_cast<uint32_t>(AscendC::GetBlockNum() * AscendC::GetTaskRatio()));
    }
    if (tiling.withEpilogue != 0) {
        AscendC::SyncAll<false>();  // P complete
        if ASCEND_IS_AIV {
            CsymmEpilogueCore(out, c, tiling.epilogue, false);
        }
    }
}

extern "C" __global__ __aicore__ void csymm_scale(GM_ADDR c, CsymmEpilogueTilingData tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    CsymmEpilogueCore(c, c, tiling, true);
}

namespace {
uint8_t* Gm(const void* p) { return static_cast<uint8_t*>(const_cast<void*>(p)); }
}  // namespace

void csymm_fused_kernel_do(uint32_t numBlocks, void* stream, const void* a, const void* b, const void* left,
                           void* workspaceLeft, void* right, void* lo, void* out, void* c, void* nanFlag,
                           const CsymmFusedTilingData& tiling)
{
    csymm_fused<<<numBlocks, nullptr, stream>>>(Gm(a), Gm(b), Gm(left), Gm(workspaceLeft), Gm(right), Gm(lo), Gm(out),
                                                Gm(c), Gm(nanFlag), tiling);
}

void csymm_scale_kernel_do(uint32_t numBlocks, void* stream, void* c, const CsymmEpilogueTilingData& tiling)
{
    csymm_scale<<<numBlocks, nullptr, stream>>>(Gm(c), tiling);
}
