/*
 * aclblasSgemmStridedBatched kernels for arch35 (Ascend 950PR, dav-3510), after
 * seeds/sgemm_strided_batched_design.txt:
 *   1. gemm    (AIC only, tensor_api): GM -> L1 -> L0A/L0B -> Mmad -> L0C -> Fixpipe -> GM, L1 and L0 ping-pong,
 *              K-chunk accumulation in L0C; column-major swap, so the row-major engine computes C^T.
 *   2. combine (AIV only, SIMD basic API): C = alpha * temp + beta * C after a general-path GEMM.
 *   3. scale   (AIV only, SIMD basic API): C = beta * C when k == 0 or alpha == 0.
 * The host (sgemm_strided_batched_host.cpp) launches them per batch on the handle's stream.
 */
#include <cstdint>
#include <type_traits>

#include "kernel_operator.h"
#include "tensor_api/tensor.h"
#include "sgemm_strided_batched_kernel.h"

namespace te = AscendC::Te;

namespace {

constexpr uint16_t SB_FIX_FLAG = 0;
constexpr uint8_t SB_FINAL_ACCUMULATION = 3;
constexpr uint8_t SB_PARTIAL_ACCUMULATION = 2;
constexpr uint32_t SB_L1_HALF = SGEMM_SB_L1_BYTES / 2;
constexpr uint32_t SB_L0_HALF = SGEMM_SB_L0_BYTES / 2;

__aicore__ inline uint32_t SbMin(uint32_t a, uint32_t b) { return a < b ? a : b; }
__aicore__ inline uint32_t SbCeilDiv(uint32_t a, uint32_t b) { return (a + b - 1) / b; }
__aicore__ inline uint32_t SbRoundUp(uint32_t a, uint32_t b) { return SbCeilDiv(a, b) * b; }

/* GM view of an engine operand of `rows` x `cols`, leading dimension ld. NDExt reads it row-major (element (r, c) at
 * r * ld + c), DNExt column-major (at r + c * ld): the layout that makes op(X)^T out of column-major X. */
template <typename Ptn>
__aicore__ inline auto SbOperandLayout(uint32_t rows, uint32_t cols, uint32_t ld)
{
    if constexpr (std::is_same_v<Ptn, te::DNExtLayoutPtn>) {
        return te::MakeFrameLayout<te::DNExtLayoutPtn, AscendC::Std::Int<SGEMM_SB_FP32_C0>>(ld, cols);
    } else {
        return te::MakeFrameLayout<te::NDExtLayoutPtn, AscendC::Std::Int<SGEMM_SB_FP32_C0>>(rows, ld);
    }
}

/* One K chunk already in L1: walk it in SGEMM_SB_BASE_K steps through the L0A/L0B halves and accumulate in L0C. */
template <typename TensorL1A, typename TensorL1B>
__aicore__ inline void SbMmadChunk(const TensorL1A& l1A, const TensorL1B& l1B, uint32_t rows, uint32_t cols,
                                   uint32_t curK, bool firstChunk, bool lastChunk, uint64_t& l0Count)
{
    const uint32_t steps = SbCeilDiv(curK, SGEMM_SB_BASE_K);
    for (uint32_t s = 0; s < steps; ++s) {
        const uint32_t kOff = s * SGEMM_SB_BASE_K;
        const uint32_t curBaseK = SbMin(SGEMM_SB_BASE_K, curK - kOff);
        const uint16_t buf = static_cast<uint16_t>(l0Count & 1);
        const uint32_t l0Off = buf * SB_L0_HALF;
        auto l0A = te::MakeTensor(te::MakeMemPtr<te::Location::L0A, float>(l0Off),
                                  te::MakeFrameLayout<te::NZLayoutPtn, AscendC::Std::Int<SGEMM_SB_FP32_C0>>(rows, curBaseK));
        auto l0B = te::MakeTensor(te::MakeMemPtr<te::Location::L0B, float>(l0Off),
                                  te::MakeFrameLayout<te::ZNLayoutPtn, AscendC::Std::Int<SGEMM_SB_FP32_C0>>(curBaseK, cols));
        AscendC::WaitFlag<AscendC::HardEvent::M_MTE1>(buf);
        te::Copy(te::MakeCopy(te::CopyL12L0A{}), l0A, l1A.Slice(te::MakeCoord(0, kOff), te::MakeShape(rows, curBaseK)));
        te::Copy(te::MakeCopy(te::CopyL12L0B{}), l0B, l1B.Slice(te::MakeCoord(kOff, 0), te::MakeShape(curBaseK, cols)));
        AscendC::SetFlag<AscendC::HardEvent::MTE1_M>(buf);
        AscendC::WaitFlag<AscendC::HardEvent::MTE1_M>(buf);
        const bool first = firstChunk && s == 0;
        const bool last = lastChunk && s + 1 == steps;
        te::MmadParams params{static_cast<uint16_t>(rows), static_cast<uint16_t>(cols), static_cast<uint16_t>(curBaseK),
                              last ? SB_FINAL_ACCUMULATION : SB_PARTIAL_ACCUMULATION, first};
        auto l0C = te::MakeTensor(te::MakeMemPtr<te::Location::L0C, float>(0),
                                  te::MakeFrameLayout<te::NZLayoutPtn, AscendC::Std::Int<SGEMM_SB_L0C_C0>>(rows, cols));
        te::Mmad(te::MmadAtom<te::MmadTraits<te::MmadOperation>>{}.with(params), l0C, l0A, l0B);
        AscendC::SetFlag<AscendC::HardEvent::M_MTE1>(buf);
        ++l0Count;
    }
}

/* One engine tile: K chunks through the two L1 halves, then Fixpipe L0C -> GM (NZ -> ND on the way). */
template <typename GmLeft, typename GmRight, typename GmOut>
__aicore__ inline void SbTile(const GmLeft& left, const GmRight& right, const GmOut& out,
                              const SgemmStridedBatchedGemmTilingData& t, uint32_t row0, uint32_t col0,
                              uint32_t rows, uint32_t cols, uint64_t& l1Count, uint64_t& l0Count)
{
    AscendC::WaitFlag<AscendC::HardEvent::FIX_M>(SB_FIX_FLAG);
    for (uint32_t kOff = 0; kOff < t.kEff; kOff += t.tileK) {
        const uint32_t curK = SbMin(t.tileK, t.kEff - kOff);
        const uint16_t buf = static_cast<uint16_t>(l1Count & 1);
        const uint32_t l1A = buf * SB_L1_HALF;
        const uint32_t l1B = l1A + SbRoundUp(rows, SGEMM_SB_FRACTAL) * SbRoundUp(curK, SGEMM_SB_FP32_C0) * sizeof(float);
        auto tensorL1A = te::MakeTensor(te::MakeMemPtr<te::Location::L1, float>(l1A),
                                        te::MakeFrameLayout<te::NZLayoutPtn, AscendC::Std::Int<SGEMM_SB_FP32_C0>>(rows, curK));
        auto tensorL1B = te::MakeTensor(te::MakeMemPtr<te::Location::L1, float>(l1B),
                                        te::MakeFrameLayout<te::ZNLayoutPtn, AscendC::Std::Int<SGEMM_SB_FP32_C0>>(curK, cols));
        AscendC::WaitFlag<AscendC::HardEvent::MTE1_MTE2>(buf);
        te::Copy(te::MakeCopy(te::CopyGM2L1{}), tensorL1A, left.Slice(te::MakeCoord(row0, kOff), te::MakeShape(rows, curK)));
        te::Copy(te::MakeCopy(te::CopyGM2L1{}), tensorL1B, right.Slice(te::MakeCoord(kOff, col0), te::MakeShape(curK, cols)));
        AscendC::SetFlag<AscendC::HardEvent::MTE2_MTE1>(buf);
        AscendC::WaitFlag<AscendC::HardEvent::MTE2_MTE1>(buf);
        SbMmadChunk(tensorL1A, tensorL1B, rows, cols, curK, kOff == 0, kOff + curK >= t.kEff, l0Count);
        AscendC::SetFlag<AscendC::HardEvent::MTE1_MTE2>(buf);
        ++l1Count;
    }
    AscendC::SetFlag<AscendC::HardEvent::M_FIX>(SB_FIX_FLAG);
    AscendC::WaitFlag<AscendC::HardEvent::M_FIX>(SB_FIX_FLAG);
    auto l0C = te::MakeTensor(te::MakeMemPtr<te::Location::L0C, float>(0),
                              te::MakeFrameLayout<te::NZLayoutPtn, AscendC::Std::Int<SGEMM_SB_L0C_C0>>(rows, cols));
    te::MakeCopy(te::CopyL0C2GM{}).Call(out.Slice(te::MakeCoord(row0, col0), te::MakeShape(rows, cols)), l0C,
                                        te::FixpipeParams{SB_FINAL_ACCUMULATION});
    AscendC::SetFlag<AscendC::HardEvent::FIX_M>(SB_FIX_FLAG);
}

/* The engine on one core: tiles core, core + blockNum, ... of the serpentine divM x divN walk (the plan's
 * SerpentineTile + TileOfCore), each accumulated over every K chunk. */
template <typename LeftPtn, typename RightPtn>
__aicore__ inline void SbGemm(GM_ADDR gmA, GM_ADDR gmB, GM_ADDR gmOut, const SgemmStridedBatchedGemmTilingData& t)
{
    auto left = te::MakeTensor(te::MakeMemPtr<te::Location::GM>(reinterpret_cast<__gm__ float*>(gmB)),
                               SbOperandLayout<LeftPtn>(t.mEff, t.kEff, t.ldLeft));
    auto right = te::MakeTensor(te::MakeMemPtr<te::Location::GM>(reinterpret_cast<__gm__ float*>(gmA)),
                                SbOperandLayout<RightPtn>(t.kEff, t.nEff, t.ldRight));
    auto out = te::MakeTensor(te::MakeMemPtr<te::Location::GM>(reinterpret_cast<__gm__ float*>(gmOut)),
                              SbOperandLayout<te::NDExtLayoutPtn>(t.mEff, t.nEff, t.ldOut));
    AscendC::SetHF32Mode(AscendC::HF32Mode::DISABLE);
    AscendC::SetMMRowMajor();
    AscendC::SetFlag<AscendC::HardEvent::MTE1_MTE2>(0);
    AscendC::SetFlag<AscendC::HardEvent::MTE1_MTE2>(1);
    AscendC::SetFlag<AscendC::HardEvent::M_MTE1>(0);
    AscendC::SetFlag<AscendC::HardEvent::M_MTE1>(1);
    AscendC::SetFlag<AscendC::HardEvent::FIX_M>(SB_FIX_FLAG);
    uint64_t l1Count = 0;
    uint64_t l0Count = 0;
    for (uint32_t tile = AscendC::GetBlockIdx(); tile < t.tileCount; tile += AscendC::GetBlockNum()) {
        const uint32_t r = tile / t.divN;
        const uint32_t c = (r % 2 == 0) ? tile % t.divN : t.divN - 1 - tile % t.divN;
        const uint32_t row0 = r * t.tileM;
        const uint32_t col0 = c * t.tileN;
        SbTile(left, right, out, t, row0, col0, SbMin(t.tileM, t.mEff - row0), SbMin(t.tileN, t.nEff - col0),
               l1Count, l0Count);
    }
    AscendC::WaitFlag<AscendC::HardEvent::MTE1_MTE2>(0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE1_MTE2>(1);
    AscendC::WaitFlag<AscendC::HardEvent::M_MTE1>(0);
    AscendC::WaitFlag<AscendC::HardEvent::M_MTE1>(1);
    AscendC::WaitFlag<AscendC::HardEvent::FIX_M>(SB_FIX_FLAG);
    AscendC::SetMMColumnMajor();
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
        const uint32_t col1 = SbMin(col0 + t_.colsPerCore, t_.n);
        for (uint32_t col = col0; col < col1; ++col) {
            for (uint32_t row = 0; row < t_.m; row += SGEMM_SB_VEC_TILE) {
                body(static_cast<uint64_t>(col) * t_.tempRowStride + row, static_cast<uint64_t>(col) * t_.ldc + row,
                     SbMin(SGEMM_SB_VEC_TILE, t_.m - row));
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
