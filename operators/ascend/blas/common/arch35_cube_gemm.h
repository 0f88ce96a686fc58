/*
 * The fp32 cube GEMM pipeline the arch35 kernels share (AIC, tensor_api): GM -> L1 -> L0A/L0B -> Mmad -> L0C ->
 * Fixpipe -> GM, K chunks through the two L1 halves and K steps through the two L0A/L0B halves, accumulated in L0C.
 * The engine is row-major; kernels feed it column-major BLAS data through the column-major swap.
 *
 * Event protocol (one owner, so kernels cannot pair flags differently): CubeBegin() arms the ping-pong flags
 * (MTE1_MTE2 and M_MTE1, ids 0/1) and the L0C flag (FIX_M); per output region, AcquireL0C(), then one or more
 * Accumulate() calls, then Fixpipe(), which hands L0C back; CubeEnd() drains every flag.
 */
#ifndef ARCH35_CUBE_GEMM_H
#define ARCH35_CUBE_GEMM_H

#include <cstdint>

#include "kernel_operator.h"
#include "tensor_api/tensor.h"
#include "arch35_cube_sizes.h"

namespace arch35 {

namespace te = AscendC::Te;

constexpr uint16_t FIX_FLAG = 0;
constexpr uint8_t FINAL_ACCUMULATION = 3;
constexpr uint8_t PARTIAL_ACCUMULATION = 2;
constexpr uint32_t L1_HALF = CUBE_L1_BYTES / 2;
constexpr uint32_t L0_HALF = CUBE_L0_BYTES / 2;

__aicore__ inline uint32_t Min(uint32_t a, uint32_t b) { return a < b ? a : b; }
__aicore__ inline uint32_t CeilDiv(uint32_t a, uint32_t b) { return (a + b - 1) / b; }
__aicore__ inline uint32_t RoundUp(uint32_t a, uint32_t b) { return CeilDiv(a, b) * b; }

/* Ping-pong positions: which L1 and L0 half the next chunk / step uses, carried across tiles. */
struct PingPong {
    uint64_t l1Count = 0;
    uint64_t l0Count = 0;
};

/* GM operand read row-major: element (r, c) at r * ld + c. */
__aicore__ inline auto RowMajorLayout(uint32_t rows, uint32_t ld)
{
    return te::MakeFrameLayout<te::NDExtLayoutPtn, AscendC::Std::Int<CUBE_FP32_C0>>(rows, ld);
}

/* GM operand read column-major: element (r, c) at r + c * ld (op(X)^T out of column-major X). */
__aicore__ inline auto ColumnMajorLayout(uint32_t cols, uint32_t ld)
{
    return te::MakeFrameLayout<te::DNExtLayoutPtn, AscendC::Std::Int<CUBE_FP32_C0>>(ld, cols);
}

template <typename Layout>
__aicore__ inline auto GmTensor(GM_ADDR p, const Layout& layout)
{
    return te::MakeTensor(te::MakeMemPtr<te::Location::GM>(reinterpret_cast<__gm__ float*>(p)), layout);
}

__aicore__ inline auto L0CTensor(uint32_t rows, uint32_t cols)
{
    return te::MakeTensor(te::MakeMemPtr<te::Location::L0C, float>(0),
                          te::MakeFrameLayout<te::NZLayoutPtn, AscendC::Std::Int<CUBE_L0C_C0>>(rows, cols));
}

/* One K chunk already in L1: walk it in CUBE_BASE_K steps through the L0A/L0B halves and accumulate in L0C. */
template <typename TensorL1A, typename TensorL1B>
__aicore__ inline void MmadChunk(const TensorL1A& l1A, const TensorL1B& l1B, uint32_t rows, uint32_t cols,
                                 uint32_t curK, bool firstChunk, bool lastChunk, PingPong& pp)
{
    const uint32_t steps = CeilDiv(curK, CUBE_BASE_K);
    for (uint32_t s = 0; s < steps; ++s) {
        const uint32_t kOff = s * CUBE_BASE_K;
        const uint32_t curBaseK = Min(CUBE_BASE_K, curK - kOff);
        const uint16_t buf = static_cast<uint16_t>(pp.l0Count & 1);
        const uint32_t l0Off = buf * L0_HALF;
        auto l0A = te::MakeTensor(te::MakeMemPtr<te::Location::L0A, float>(l0Off),
                                  te::MakeFrameLayout<te::NZLayoutPtn, AscendC::Std::Int<CUBE_FP32_C0>>(rows, curBaseK));
        auto l0B = te::MakeTensor(te::MakeMemPtr<te::Location::L0B, float>(l0Off),
                                  te::MakeFrameLayout<te::ZNLayoutPtn, AscendC::Std::Int<CUBE_FP32_C0>>(curBaseK, cols));
        AscendC::WaitFlag<AscendC::HardEvent::M_MTE1>(buf);
        te::Copy(te::MakeCopy(te::CopyL12L0A{}), l0A, l1A.Slice(te::MakeCoord(0, kOff), te::MakeShape(rows, curBaseK)));
        te::Copy(te::MakeCopy(te::CopyL12L0B{}), l0B, l1B.Slice(te::MakeCoord(kOff, 0), te::MakeShape(curBaseK, cols)));
        AscendC::SetFlag<AscendC::HardEvent::MTE1_M>(buf);
        AscendC::WaitFlag<AscendC::HardEvent::MTE1_M>(buf);
        const bool first = firstChunk && s == 0;
        const bool last = lastChunk && s + 1 == steps;
        te::MmadParams params{static_cast<uint16_t>(rows), static_cast<uint16_t>(cols), static_cast<uint16_t>(curBaseK),
                              last ? FINAL_ACCUMULATION : PARTIAL_ACCUMULATION, first};
        auto l0C = L0CTensor(rows, cols);
        te::Mmad(te::MmadAtom<te::MmadTraits<te::MmadOperation>>{}.with(params), l0C, l0A, l0B);
        AscendC::SetFlag<AscendC::HardEvent::M_MTE1>(buf);
        ++pp.l0Count;
    }
}

/* L0C += left[row0.., 0..k) * right[0..k), col0..] for a rows x cols region, in K chunks of chunkK through L1.
 * firstTerm / lastTerm: whether this product starts / ends the L0C accumulation (a sum of products spans calls). */
template <typename GmLeft, typename GmRight>
__aicore__ inline void Accumulate(const GmLeft& left, const GmRight& right, uint32_t k, uint32_t chunkK, uint32_t row0,
                                  uint32_t col0, uint32_t rows, uint32_t cols, bool firstTerm, bool lastTerm,
                                  PingPong& pp)
{
    for (uint32_t kOff = 0; kOff < k; kOff += chunkK) {
        const uint32_t curK = Min(chunkK, k - kOff);
        const uint16_t buf = static_cast<uint16_t>(pp.l1Count & 1);
        const uint32_t l1A = buf * L1_HALF;
        const uint32_t l1B = l1A + RoundUp(rows, CUBE_FRACTAL) * RoundUp(curK, CUBE_FP32_C0) * sizeof(float);
        auto tensorL1A = te::MakeTensor(te::MakeMemPtr<te::Location::L1, float>(l1A),
                                        te::MakeFrameLayout<te::NZLayoutPtn, AscendC::Std::Int<CUBE_FP32_C0>>(rows, curK));
        auto tensorL1B = te::MakeTensor(te::MakeMemPtr<te::Location::L1, float>(l1B),
                                        te::MakeFrameLayout<te::ZNLayoutPtn, AscendC::Std::Int<CUBE_FP32_C0>>(curK, cols));
        AscendC::WaitFlag<AscendC::HardEvent::MTE1_MTE2>(buf);
        te::Copy(te::MakeCopy(te::CopyGM2L1{}), tensorL1A, left.Slice(te::MakeCoord(row0, kOff), te::MakeShape(rows, curK)));
        te::Copy(te::MakeCopy(te::CopyGM2L1{}), tensorL1B, right.Slice(te::MakeCoord(kOff, col0), te::MakeShape(curK, cols)));
        AscendC::SetFlag<AscendC::HardEvent::MTE2_MTE1>(buf);
        AscendC::WaitFlag<AscendC::HardEvent::MTE2_MTE1>(buf);
        MmadChunk(tensorL1A, tensorL1B, rows, cols, curK, firstTerm && kOff == 0, lastTerm && kOff + curK >= k, pp);
        AscendC::SetFlag<AscendC::HardEvent::MTE1_MTE2>(buf);
        ++pp.l1Count;
    }
}

/* Wait until the previous Fixpipe has read L0C, before the next accumulation overwrites it. */
__aicore__ inline void AcquireL0C() { AscendC::WaitFlag<AscendC::HardEvent::FIX_M>(FIX_FLAG); }

/* L0C (rows x cols, NZ) -> out[row0.., col0..] (ND) once the Mmads are done; hands L0C back (FIX_M). */
template <typename GmOut>
__aicore__ inline void Fixpipe(const GmOut& out, uint32_t row0, uint32_t col0, uint32_t rows, uint32_t cols)
{
    AscendC::SetFlag<AscendC::HardEvent::M_FIX>(FIX_FLAG);
    AscendC::WaitFlag<AscendC::HardEvent::M_FIX>(FIX_FLAG);
    auto l0C = L0CTensor(rows, cols);
    te::MakeCopy(te::CopyL0C2GM{}).Call(out.Slice(te::MakeCoord(row0, col0), te::MakeShape(rows, cols)), l0C,
                                        te::FixpipeParams{FINAL_ACCUMULATION});
    AscendC::SetFlag<AscendC::HardEvent::FIX_M>(FIX_FLAG);
}

/* fp32 without HF32, row-major engine, every ping-pong buffer and L0C free. */
__aicore__ inline void CubeBegin()
{
    AscendC::SetHF32Mode(AscendC::HF32Mode::DISABLE);
    AscendC::SetMMRowMajor();
    AscendC::SetFlag<AscendC::HardEvent::MTE1_MTE2>(0);
    AscendC::SetFlag<AscendC::HardEvent::MTE1_MTE2>(1);
    AscendC::SetFlag<AscendC::HardEvent::M_MTE1>(0);
    AscendC::SetFlag<AscendC::HardEvent::M_MTE1>(1);
    AscendC::SetFlag<AscendC::HardEvent::FIX_M>(FIX_FLAG);
}

/* Drain the flags CubeBegin armed and restore the column-major default. */
__aicore__ inline void CubeEnd()
{
    AscendC::WaitFlag<AscendC::HardEvent::MTE1_MTE2>(0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE1_MTE2>(1);
    AscendC::WaitFlag<AscendC::HardEvent::M_MTE1>(0);
    AscendC::WaitFlag<AscendC::HardEvent::M_MTE1>(1);
    AscendC::WaitFlag<AscendC::HardEvent::FIX_M>(FIX_FLAG);
    AscendC::SetMMColumnMajor();
}

}  // namespace arch35

#endif  // ARCH35_CUBE_GEMM_H
