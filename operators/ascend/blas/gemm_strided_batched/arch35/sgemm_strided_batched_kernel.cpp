/*
 * aclblasSgemmStridedBatched kernels for arch35 (Ascend 950PR, dav-3510), after
 * seeds/sgemm_strided_batched_design.txt:
 *   1. gemm    (AIC only, tensor_api): the shared cube pipeline (common/arch35_cube_gemm.h) over serpentine tiles,
 *              K-chunk accumulation in L0C; column-major swap, so the row-major engine computes C^T.
 *   2. combine (AIV only, SIMD basic API): C = alpha * temp + beta * C after a general-path GEMM.
 *   3. scale   (AIV only, SIMD basic API): C = beta * C when k == 0 or alpha == 0.
 * The host (sgemm_strided_batched_host.cpp) launches them per batch on the handle's stream.
 */
#include <cstdint>
#include <type_traits>

#include "kernel_operator.h"
#include "tensor_api/tensor.h"
#include "arch35_cube_gemm.h"
#include "sgemm_strided_batched_kernel.h"

namespace te = AscendC::Te;

namespace {

using arch35::Min;

/* GM view of an engine operand of `rows` x `cols`, leading dimension ld. NDExt reads it row-major, DNExt
 * column-major: the layout that makes op(X)^T out of column-major X. */
template <typename Ptn>
__aicore__ inline auto SbOperandLayout(uint32_t rows, uint32_t cols, uint32_t ld)
{
    if constexpr (std::is_same_v<Ptn, te::DNExtLayoutPtn>) {
        return arch35::ColumnMajorLayout(cols, ld);
    } else {
        return arch35::RowMajorLayout(rows, ld);
    }
}

/* The engine on one core: tiles core, core + blockNum, ... of the serpentine divM x divN walk (the plan's
 * SerpentineTile + TileOfCore), each accumulated over every K chunk. */
template <typename LeftPtn, typename RightPtn>
__aicore__ inline void SbGemm(GM_ADDR gmA, GM_ADDR gmB, GM_ADDR gmOut, const SgemmStridedBatchedGemmTilingData& t)
{
    decltype(arch35::GmTensor(gmB, SbOperandLayout<LeftPtn>(0, 0, 0))) left[1] = {
        arch35::GmTensor(gmB, SbOperandLayout<LeftPtn>(t.mEff, t.kEff, t.ldLeft))};
    decltype(arch35::GmTensor(gmA, SbOperandLayout<RightPtn>(0, 0, 0))) right[1] = {
        arch35::GmTensor(gmA, SbOperandLayout<RightPtn>(t.kEff, t.nEff, t.ldRight))};
    auto out = arch35::GmTensor(gmOut, arch35::RowMajorLayout(t.mEff, t.ldOut));
    arch35::CubeBegin();
    arch35::PingPong pp;
    for (uint32_t tile = AscendC::GetBlockIdx(); tile < t.tileCount; tile += AscendC::GetBlockNum()) {
        const uint32_t r = tile / t.divN;
        const uint32_t c = (r % 2 == 0) ? tile % t.divN : t.divN - 1 - tile % t.divN;
        const uint32_t row0 = r * t.tileM;
        const uint32_t col0 = c * t.tileN;
        const uint32_t rows = Min(t.tileM, t.mEff - row0);
        const uint32_t cols = Min(t.tileN, t.nEff - col0);
        arch35::AcquireL0C();
        arch35::Accumulate(left, right, t.kEff, t.tileK, row0, col0, rows, cols, true, true, pp);
        arch35::Fixpipe(out, row0, col0, rows, cols);
    }
    arch35::CubeEnd();
}

/* Vector epilogue over columns of C: per column, UB tiles of SGEMM_SB_VEC_TILE rows through double-buffered queues. */
class SbEpilogue {
public:
    __aicore__ inline void Init(GM_ADDR temp, GM_ADDR c, const SgemmStridedBatchedEpilogueTilingData& t,
                                AscendC::TPipe* pipe)
    {
        t_ = t;
        tempGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(temp), static_cast<uint64_t>(t.tempRowStride) * t.n);
        cGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(c), static_cast<uint64_t>(t.ldc) * t.n);
        pipe->InitBuffer(tempQue_, 2, SGEMM_SB_VEC_TILE * sizeof(float));
        pipe->InitBuffer(cQue_, 2, SGEMM_SB_VEC_TILE * sizeof(float));
        pipe->InitBuffer(outQue_, 2, SGEMM_SB_VEC_TILE * sizeof(float));
    }

    /* combine: C = alpha * temp (+ beta * C when readC). */
    __aicore__ inline void Combine()
    {
        ForEachTile([this](uint64_t tempOff, uint64_t cOff, uint32_t cnt) {
            AscendC::LocalTensor<float> temp = Load(tempQue_, tempGm_, tempOff, cnt);
            AscendC::LocalTensor<float> out = outQue_.AllocTensor<float>();
            AscendC::Muls(out, temp, t_.alpha, static_cast<int32_t>(cnt));
            tempQue_.FreeTensor(temp);
            if (t_.readC != 0) {
                AscendC::LocalTensor<float> cOld = Load(cQue_, cGm_, cOff, cnt);
                AscendC::Axpy(out, cOld, t_.beta, static_cast<int32_t>(cnt));
                cQue_.FreeTensor(cOld);
            }
            Store(out, cOff, cnt);
        });
    }

    /* scale: C = beta * C; beta == 0 writes zeros without reading C (NaN/Inf already in C must not survive). */
    __aicore__ inline void Scale()
    {
        ForEachTile([this](uint64_t, uint64_t cOff, uint32_t cnt) {
            AscendC::LocalTensor<float> out = outQue_.AllocTensor<float>();
            if (t_.readC != 0) {
                AscendC::LocalTensor<float> cOld = Load(cQue_, cGm_, cOff, cnt);
                AscendC::Muls(out, cOld, t_.beta, static_cast<int32_t>(cnt));
                cQue_.FreeTensor(cOld);
            } else {
                AscendC::Duplicate(out, 0.0f, static_cast<int32_t>(cnt));
            }
            Store(out, cOff, cnt);
        });
    }

private:
    template <typename Body>
    __aicore__ inline void ForEachTile(Body body)
    {
        const uint32_t col0 = AscendC::GetBlockIdx() * t_.colsPerCore;
        const uint32_t col1 = Min(col0 + t_.colsPerCore, t_.n);
        for (uint32_t col = col0; col < col1; ++col) {
            for (uint32_t row = 0; row < t_.m; row += SGEMM_SB_VEC_TILE) {
                body(static_cast<uint64_t>(col) * t_.tempRowStride + row, static_cast<uint64_t>(col) * t_.ldc + row,
                     Min(SGEMM_SB_VEC_TILE, t_.m - row));
            }
        }
    }

    template <typename Que>
    __aicore__ inline AscendC::LocalTensor<float> Load(Que& que, AscendC::GlobalTensor<float>& gm, uint64_t off,
                                                       uint32_t cnt)
    {
        AscendC::LocalTensor<float> local = que.template AllocTensor<float>();
        AscendC::DataCopyExtParams copy{1, static_cast<uint32_t>(cnt * sizeof(float)), 0, 0, 0};
        AscendC::DataCopyPadExtParams<float> pad{false, 0, 0, 0.0f};
        AscendC::DataCopyPad(local, gm[off], copy, pad);
        que.EnQue(local);
        return que.template DeQue<float>();
    }

    __aicore__ inline void Store(AscendC::LocalTensor<float>& out, uint64_t off, uint32_t cnt)
    {
        outQue_.EnQue(out);
        AscendC::LocalTensor<float> ready = outQue_.DeQue<float>();
        AscendC::DataCopyExtParams copy{1, static_cast<uint32_t>(cnt * sizeof(float)), 0, 0, 0};
        AscendC::DataCopyPad(cGm_[off], ready, copy);
        outQue_.FreeTensor(ready);
    }

    SgemmStridedBatchedEpilogueTilingData t_{};
    AscendC::GlobalTensor<float> tempGm_;
    AscendC::GlobalTensor<float> cGm_;
    AscendC::TQue<AscendC::TPosition::VECIN, 2> tempQue_;
    AscendC::TQue<AscendC::TPosition::VECIN, 2> cQue_;
    AscendC::TQue<AscendC::TPosition::VECOUT, 2> outQue_;
};

}  // namespace

#define SGEMM_SB_GEMM_ENTRY(NAME, LEFT, RIGHT)                                                                     \
    extern "C" __global__ __aicore__ __cube__ void NAME(GM_ADDR a, GM_ADDR b, GM_ADDR out,                         \
                                                        SgemmStridedBatchedGemmTilingData tiling)                 \
    {                                                                                                              \
        KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIC_ONLY);                                                            \
        SbGemm<LEFT, RIGHT>(a, b, out, tiling);                                                                    \
    }

/* Left engine operand op(B)^T: NDExt when transB == N, DNExt otherwise; right op(A)^T: NDExt when transA == N. */
SGEMM_SB_GEMM_ENTRY(sgemm_strided_batched_gemm_nn, te::NDExtLayoutPtn, te::NDExtLayoutPtn)
SGEMM_SB_GEMM_ENTRY(sgemm_strided_batched_gemm_nt, te::DNExtLayoutPtn, te::NDExtLayoutPtn)
SGEMM_SB_GEMM_ENTRY(sgemm_strided_batched_gemm_tn, te::NDExtLayoutPtn, te::DNExtLayoutPtn)
SGEMM_SB_GEMM_ENTRY(sgemm_strided_batched_gemm_tt, te::DNExtLayoutPtn, te::DNExtLayoutPtn)
#undef SGEMM_SB_GEMM_ENTRY

extern "C" __global__ __aicore__ void sgemm_strided_batched_combine(GM_ADDR temp, GM_ADDR c,
                                                                   SgemmStridedBatchedEpilogueTilingData tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    AscendC::TPipe pipe;
    SbEpilogue op;
    op.Init(temp, c, tiling, &pipe);
    op.Combine();
}

extern "C" __global__ __aicore__ void sgemm_strided_batched_scale(GM_ADDR c, SgemmStridedBatchedEpilogueTilingData tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    AscendC::TPipe pipe;
    SbEpilogue op;
    op.Init(c, c, tiling, &pipe);
    op.Scale();
}

void sgemm_strided_batched_gemm_kernel_do(uint32_t numBlocks, void* stream, bool transA, bool transB,
                                          const float* a, const float* b, float* out,
                                          const SgemmStridedBatchedGemmTilingData& tiling)
{
    auto* ga = reinterpret_cast<uint8_t*>(const_cast<float*>(a));
    auto* gb = reinterpret_cast<uint8_t*>(const_cast<float*>(b));
    auto* go = reinterpret_cast<uint8_t*>(out);
    if (!transA && !transB) {
        sgemm_strided_batched_gemm_nn<<<numBlocks, nullptr, stream>>>(ga, gb, go, tiling);
    } else if (!transA) {
        sgemm_strided_batched_gemm_nt<<<numBlocks, nullptr, stream>>>(ga, gb, go, tiling);
    } else if (!transB) {
        sgemm_strided_batched_gemm_tn<<<numBlocks, nullptr, stream>>>(ga, gb, go, tiling);
    } else {
        sgemm_strided_batched_gemm_tt<<<numBlocks, nullptr, stream>>>(ga, gb, go, tiling);
    }
}

void sgemm_strided_batched_combine_kernel_do(uint32_t numBlocks, void* stream, const float* temp, float* c,
                                             const SgemmStridedBatchedEpilogueTilingData& tiling)
{
    sgemm_strided_batched_combine<<<numBlocks, nullptr, stream>>>(
        reinterpret_cast<uint8_t*>(const_cast<float*>(temp)), reinterpret_cast<uint8_t*>(c), tiling);
}

void sgemm_strided_batched_scale_kernel_do(uint32_t numBlocks, void* stream, float* c,
                                           const SgemmStridedBatchedEpilogueTilingData& tiling)
{
    sgemm_strided_batched_scale<<<numBlocks, nullptr, stream>>>(reinterpret_cast<uint8_t*>(c), tiling);
}
