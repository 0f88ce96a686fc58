/*
 * aclblasCsymm kernels for arch35 (Ascend 950PR, dav-3510), after seeds/csymm_design.md.txt §3.4:
 *   1. prepare  (AIV, SIMT): A panels by uplo, reflected by index swap only (A = A^T, no conjugation, diagonal
 *               imaginary part kept), and B, into real/imaginary fp32 planes in the workspace;
 *   2. gemm     (AIC, tensor_api): P = A*B (LEFT) or B*A (RIGHT) as four real GEMM accumulations,
 *               Pr = Lr*Rr + Li*(-Ri) and Pi = Lr*Ri + Li*Rr, each K-chunked through L1/L0 ping-pong into L0C and
 *               written by Fixpipe; column-major swap, so the row-major engine computes P^T;
 *   3. epilogue (AIV, SIMT): the fused complex alpha/beta epilogue, C = alpha*P + beta*C, C read only when beta != 0;
 *   4. scale    (AIV, SIMT): C = beta*C for alpha == 0.
 * The host (csymm_host.cpp) launches them on the handle's stream.
 */
#include <cstdint>

#include "kernel_operator.h"
#include "simt_api/asc_simt.h"
#include "tensor_api/tensor.h"
#include "csymm_kernel.h"

namespace te = AscendC::Te;

namespace {

constexpr uint16_t CS_FIX_FLAG = 0;
constexpr uint8_t CS_FINAL_ACCUMULATION = 3;
constexpr uint8_t CS_PARTIAL_ACCUMULATION = 2;
constexpr uint32_t CS_L1_HALF = CSYMM_L1_BYTES / 2;
constexpr uint32_t CS_L0_HALF = CSYMM_L0_BYTES / 2;
constexpr uint32_t CS_UPPER = 121;
constexpr uint32_t CS_EPILOGUE_BETA_ZERO = 1;
constexpr uint32_t CS_EPILOGUE_BETA_ONE = 2;

__aicore__ inline uint32_t CsMin(uint32_t a, uint32_t b) { return a < b ? a : b; }
__aicore__ inline uint32_t CsCeilDiv(uint32_t a, uint32_t b) { return (a + b - 1) / b; }
__aicore__ inline uint32_t CsRoundUp(uint32_t a, uint32_t b) { return CsCeilDiv(a, b) * b; }

// ---- 1. prepare -------------------------------------------------------------------------------------------------

/* Work item w < k: row w of the dense A planes; w >= k: column w - k of B. Element offsets in complex units. */
__simt_vf__ __aicore__ LAUNCH_BOUND(CSYMM_SIMT_THREADS) inline void CsymmPrepareItems(
    __gm__ float* a, __gm__ float* b, __gm__ float* ar, __gm__ float* ai, __gm__ float* an, __gm__ float* br,
    __gm__ float* bi, CsymmPrepareTilingData t, uint32_t item0, uint32_t item1)
{
    for (uint32_t w = item0 + threadIdx.x; w < item1; w += blockDim.x) {
        if (w < t.k) {
            const uint64_t row = w;
            for (uint32_t col = 0; col < t.k; ++col) {
                const bool stored = (t.uplo == CS_UPPER) ? (row <= col) : (row >= col);
                const uint64_t src = stored ? row + static_cast<uint64_t>(col) * t.lda
                                            : col + row * static_cast<uint64_t>(t.lda);
                const uint64_t dst = row * t.kPad + col;
                ar[dst] = a[2 * src];
                ai[dst] = a[2 * src + 1];
                an[dst] = -a[2 * src + 1];
            }
        } else {
            const uint64_t col = w - t.k;
            for (uint32_t row = 0; row < t.m; ++row) {
                const uint64_t src = row + col * t.ldb;
                const uint64_t dst = col * t.mPad + row;
                br[dst] = b[2 * src];
                bi[dst] = b[2 * src + 1];
            }
        }
    }
}

// ---- 2. gemm ----------------------------------------------------------------------------------------------------

/* Engine operand of `rows` x `cols`, row-major with row stride ld (the planes are all stored that way). */
__aicore__ inline auto CsPlaneLayout(uint32_t rows, uint32_t ld)
{
    return te::MakeFrameLayout<te::NDExtLayoutPtn, AscendC::Std::Int<CSYMM_FP32_C0>>(rows, ld);
}

template <typename TensorL1A, typename TensorL1B>
__aicore__ inline void CsMmadChunk(const TensorL1A& l1A, const TensorL1B& l1B, uint32_t rows, uint32_t cols,
                                   uint32_t curK, bool firstChunk, bool lastChunk, uint64_t& l0Count)
{
    const uint32_t steps = CsCeilDiv(curK, CSYMM_BASE_K);
    for (uint32_t s = 0; s < steps; ++s) {
        const uint32_t kOff = s * CSYMM_BASE_K;
        const uint32_t curBaseK = CsMin(CSYMM_BASE_K, curK - kOff);
        const uint16_t buf = static_cast<uint16_t>(l0Count & 1);
        const uint32_t l0Off = buf * CS_L0_HALF;
        auto l0A = te::MakeTensor(te::MakeMemPtr<te::Location::L0A, float>(l0Off),
                                  te::MakeFrameLayout<te::NZLayoutPtn, AscendC::Std::Int<CSYMM_FP32_C0>>(rows, curBaseK));
        auto l0B = te::MakeTensor(te::MakeMemPtr<te::Location::L0B, float>(l0Off),
                                  te::MakeFrameLayout<te::ZNLayoutPtn, AscendC::Std::Int<CSYMM_FP32_C0>>(curBaseK, cols));
        AscendC::WaitFlag<AscendC::HardEvent::M_MTE1>(buf);
        te::Copy(te::MakeCopy(te::CopyL12L0A{}), l0A, l1A.Slice(te::MakeCoord(0, kOff), te::MakeShape(rows, curBaseK)));
        te::Copy(te::MakeCopy(te::CopyL12L0B{}), l0B, l1B.Slice(te::MakeCoord(kOff, 0), te::MakeShape(curBaseK, cols)));
        AscendC::SetFlag<AscendC::HardEvent::MTE1_M>(buf);
        AscendC::WaitFlag<AscendC::HardEvent::MTE1_M>(buf);
        const bool first = firstChunk && s == 0;
        const bool last = lastChunk && s + 1 == steps;
        te::MmadParams params{static_cast<uint16_t>(rows), static_cast<uint16_t>(cols), static_cast<uint16_t>(curBaseK),
                              last ? CS_FINAL_ACCUMULATION : CS_PARTIAL_ACCUMULATION, first};
        auto l0C = te::MakeTensor(te::MakeMemPtr<te::Location::L0C, float>(0),
                                  te::MakeFrameLayout<te::NZLayoutPtn, AscendC::Std::Int<CSYMM_L0C_C0>>(rows, cols));
        te::Mmad(te::MmadAtom<te::MmadTraits<te::MmadOperation>>{}.with(params), l0C, l0A, l0B);
        AscendC::SetFlag<AscendC::HardEvent::M_MTE1>(buf);
        ++l0Count;
    }
}

/* Accumulate left*right over all of K into L0C; `firstTerm`/`lastTerm` say whether this product starts or ends
 * the accumulation (a complex component is the sum of two products). */
template <typename GmLeft, typename GmRight>
__aicore__ inline void CsAccumulate(const GmLeft& left, const GmRight& right, const CsymmGemmTilingData& t,
                                    uint32_t row0, uint32_t col0, uint32_t rows, uint32_t cols, bool firstTerm,
                                    bool lastTerm, uint64_t& l1Count, uint64_t& l0Count)
{
    for (uint32_t kOff = 0; kOff < t.k; kOff += t.blockK) {
        const uint32_t curK = CsMin(t.blockK, t.k - kOff);
        const uint16_t buf = static_cast<uint16_t>(l1Count & 1);
        const uint32_t l1A = buf * CS_L1_HALF;
        const uint32_t l1B = l1A + CsRoundUp(rows, CSYMM_FRACTAL) * CsRoundUp(curK, CSYMM_FP32_C0) * sizeof(float);
        auto tensorL1A = te::MakeTensor(te::MakeMemPtr<te::Location::L1, float>(l1A),
                                        te::MakeFrameLayout<te::NZLayoutPtn, AscendC::Std::Int<CSYMM_FP32_C0>>(rows, curK));
        auto tensorL1B = te::MakeTensor(te::MakeMemPtr<te::Location::L1, float>(l1B),
                                        te::MakeFrameLayout<te::ZNLayoutPtn, AscendC::Std::Int<CSYMM_FP32_C0>>(curK, cols));
        AscendC::WaitFlag<AscendC::HardEvent::MTE1_MTE2>(buf);
        te::Copy(te::MakeCopy(te::CopyGM2L1{}), tensorL1A, left.Slice(te::MakeCoord(row0, kOff), te::MakeShape(rows, curK)));
        te::Copy(te::MakeCopy(te::CopyGM2L1{}), tensorL1B, right.Slice(te::MakeCoord(kOff, col0), te::MakeShape(curK, cols)));
        AscendC::SetFlag<AscendC::HardEvent::MTE2_MTE1>(buf);
        AscendC::WaitFlag<AscendC::HardEvent::MTE2_MTE1>(buf);
        CsMmadChunk(tensorL1A, tensorL1B, rows, cols, curK, firstTerm && kOff == 0, lastTerm && kOff + curK >= t.k,
                    l0Count);
        AscendC::SetFlag<AscendC::HardEvent::MTE1_MTE2>(buf);
        ++l1Count;
    }
}

template <typename GmOut>
__aicore__ inline void CsFixpipe(const GmOut& out, uint32_t row0, uint32_t col0, uint32_t rows, uint32_t cols)
{
    AscendC::SetFlag<AscendC::HardEvent::M_FIX>(CS_FIX_FLAG);
    AscendC::WaitFlag<AscendC::HardEvent::M_FIX>(CS_FIX_FLAG);
    auto l0C = te::MakeTensor(te::MakeMemPtr<te::Location::L0C, float>(0),
                              te::MakeFrameLayout<te::NZLayoutPtn, AscendC::Std::Int<CSYMM_L0C_C0>>(rows, cols));
    te::MakeCopy(te::CopyL0C2GM{}).Call(out.Slice(te::MakeCoord(row0, col0), te::MakeShape(rows, cols)), l0C,
                                        te::FixpipeParams{CS_FINAL_ACCUMULATION});
    AscendC::SetFlag<AscendC::HardEvent::FIX_M>(CS_FIX_FLAG);
}

/* Plane pointers as engine operands: real = (lr, rr) + (lx, ry), imag = (lr, ri) + (li, rr). */
__aicore__ inline void CsymmGemm(GM_ADDR lr, GM_ADDR li, GM_ADDR lx, GM_ADDR rr, GM_ADDR ri, GM_ADDR ry,
                                 GM_ADDR pr, GM_ADDR pi, const CsymmGemmTilingData& t)
{
    auto gm = [](GM_ADDR p, uint32_t rows, uint32_t ld) {
        return te::MakeTensor(te::MakeMemPtr<te::Location::GM>(reinterpret_cast<__gm__ float*>(p)),
                              CsPlaneLayout(rows, ld));
    };
    auto leftR = gm(lr, t.n, t.ldLeft);
    auto leftI = gm(li, t.n, t.ldLeft);
    auto leftX = gm(lx, t.n, t.ldLeft);
    auto rightR = gm(rr, t.k, t.ldRight);
    auto rightI = gm(ri, t.k, t.ldRight);
    auto rightY = gm(ry, t.k, t.ldRight);
    auto outR = gm(pr, t.n, t.ldOut);
    auto outI = gm(pi, t.n, t.ldOut);
    AscendC::SetHF32Mode(AscendC::HF32Mode::DISABLE);
    AscendC::SetMMRowMajor();
    AscendC::SetFlag<AscendC::HardEvent::MTE1_MTE2>(0);
    AscendC::SetFlag<AscendC::HardEvent::MTE1_MTE2>(1);
    AscendC::SetFlag<AscendC::HardEvent::M_MTE1>(0);
    AscendC::SetFlag<AscendC::HardEvent::M_MTE1>(1);
    AscendC::SetFlag<AscendC::HardEvent::FIX_M>(CS_FIX_FLAG);
    uint64_t l1Count = 0;
    uint64_t l0Count = 0;
    for (uint32_t tile = AscendC::GetBlockIdx(); tile < t.tileCount; tile += AscendC::GetBlockNum()) {
        /* PlanCsymm's tile of C -> engine region: engine rows are columns of C, engine columns rows of C. */
        const uint32_t cRow0 = (tile % t.tilesM) * t.blockM;
        const uint32_t cCol0 = (tile / t.tilesM) * t.blockN;
        const uint32_t rows = CsMin(t.blockN, t.n - cCol0);
        const uint32_t cols = CsMin(t.blockM, t.m - cRow0);
        AscendC::WaitFlag<AscendC::HardEvent::FIX_M>(CS_FIX_FLAG);
        CsAccumulate(leftR, rightR, t, cCol0, cRow0, rows, cols, true, false, l1Count, l0Count);
        CsAccumulate(leftX, rightY, t, cCol0, cRow0, rows, cols, false, true, l1Count, l0Count);
        CsFixpipe(outR, cCol0, cRow0, rows, cols);
        AscendC::WaitFlag<AscendC::HardEvent::FIX_M>(CS_FIX_FLAG);
        CsAccumulate(leftR, rightI, t, cCol0, cRow0, rows, cols, true, false, l1Count, l0Count);
        CsAccumulate(leftI, rightR, t, cCol0, cRow0, rows, cols, false, true, l1Count, l0Count);
        CsFixpipe(outI, cCol0, cRow0, rows, cols);
    }
    AscendC::WaitFlag<AscendC::HardEvent::MTE1_MTE2>(0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE1_MTE2>(1);
    AscendC::WaitFlag<AscendC::HardEvent::M_MTE1>(0);
    AscendC::WaitFlag<AscendC::HardEvent::M_MTE1>(1);
    AscendC::WaitFlag<AscendC::HardEvent::FIX_M>(CS_FIX_FLAG);
    AscendC::SetMMColumnMajor();
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
    const uint32_t col1 = CsMin(col0 + t.colsPerCore, t.n);
    if (col0 >= col1) {
        return;
    }
    asc_vf_call<CsymmEpilogueColumns>(dim3{CSYMM_SIMT_THREADS, 1, 1}, reinterpret_cast<__gm__ float*>(pr),
                                      reinterpret_cast<__gm__ float*>(pi), reinterpret_cast<__gm__ float*>(c), t, col0,
                                      col1, scaleOnly);
}

}  // namespace

extern "C" __global__ __aicore__ void csymm_prepare(GM_ADDR a, GM_ADDR b, GM_ADDR ar, GM_ADDR ai, GM_ADDR an,
                                                   GM_ADDR br, GM_ADDR bi, CsymmPrepareTilingData tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    const uint32_t item0 = AscendC::GetBlockIdx() * tiling.itemsPerCore;
    const uint32_t item1 = CsMin(item0 + tiling.itemsPerCore, tiling.k + tiling.n);
    if (item0 >= item1) {
        return;
    }
    asc_vf_call<CsymmPrepareItems>(dim3{CSYMM_SIMT_THREADS, 1, 1}, reinterpret_cast<__gm__ float*>(a),
                                   reinterpret_cast<__gm__ float*>(b), reinterpret_cast<__gm__ float*>(ar),
                                   reinterpret_cast<__gm__ float*>(ai), reinterpret_cast<__gm__ float*>(an),
                                   reinterpret_cast<__gm__ float*>(br), reinterpret_cast<__gm__ float*>(bi), tiling,
                                   item0, item1);
}

extern "C" __global__ __aicore__ __cube__ void csymm_gemm(GM_ADDR lr, GM_ADDR li, GM_ADDR lx, GM_ADDR rr, GM_ADDR ri,
                                                         GM_ADDR ry, GM_ADDR pr, GM_ADDR pi, CsymmGemmTilingData tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIC_ONLY);
    CsymmGemm(lr, li, lx, rr, ri, ry, pr, pi, tiling);
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
                             const CsymmPrepareTilingData& tiling)
{
    csymm_prepare<<<numBlocks, nullptr, stream>>>(Gm(a), Gm(b), Gm(planes.ar), Gm(planes.ai), Gm(planes.an),
                                                   Gm(planes.br), Gm(planes.bi), tiling);
}

void csymm_gemm_kernel_do(uint32_t numBlocks, void* stream, bool sideLeft, const CsymmPlanes& p,
                          const CsymmGemmTilingData& tiling)
{
    /* LEFT: P^T = B^T * A, the right operand is A: real = Br*Ar + Bi*An. RIGHT: P^T = A * B^T: real = Ar*Br + An*Bi. */
    if (sideLeft) {
        csymm_gemm<<<numBlocks, nullptr, stream>>>(Gm(p.br), Gm(p.bi), Gm(p.bi), Gm(p.ar), Gm(p.ai), Gm(p.an),
                                                    Gm(p.pr), Gm(p.pi), tiling);
    } else {
        csymm_gemm<<<numBlocks, nullptr, stream>>>(Gm(p.ar), Gm(p.ai), Gm(p.an), Gm(p.br), Gm(p.bi), Gm(p.bi),
                                                    Gm(p.pr), Gm(p.pi), tiling);
    }
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
