/*
 * The fp32 cube GEMM pipeline the arch35 kernels share (AIC, tensor_api): GM -> L1 -> L0A/L0B -> Mmad -> L0C ->
 * Fixpipe -> GM, K chunks through the two L1 halves and K steps through the two L0A/L0B halves, accumulated in L0C.
 * The engine is row-major; kernels feed it column-major BLAS data through the column-major swap.
 *
 * Event protocol (one owner, so kernels cannot pair flags differently): CubeBegin() arms the ping-pong flags
 * (MTE1_MTE2 and M_MTE1, ids 0/1) and the flags of the two L0C buffers (FIX_M, ids 0/1); per output region,
 * AcquireL0C(), then one or more Accumulate() calls (each a sum of N products interleaved per K step), then
 * Fixpipe(), which hands its L0C buffer back, so the next region's Mmads run while Fixpipe drains this one;
 * CubeEnd() drains every flag.
 */
#ifndef ARCH35_CUBE_GEMM_H
#define ARCH35_CUBE_GEMM_H

#include <cstdint>

#include "kernel_operator.h"
#include "tensor_api/tensor.h"
#include "arch35_cube_sizes.h"

namespace arch35 {

namespace te = AscendC::Te;

constexpr uint8_t FINAL_ACCUMULATION = 3;
constexpr uint8_t PARTIAL_ACCUMULATION = 2;
/* (m/16)*(n/16) below this: consecutive Mmads into one L0C region need PipeBarrier<PIPE_M> (asc-devkit Mmad doc). */
constexpr uint32_t MMAD_BARRIER_THRESHOLD = 10;
constexpr uint32_t L1_HALF = CUBE_L1_BYTES / 2;
constexpr uint32_t L0_HALF = CUBE_L0_BYTES / 2;
constexpr uint32_t L0C_HALF = CUBE_L0C_BYTES / 2;

__aicore__ inline uint32_t Min(uint32_t a, uint32_t b) { return a < b ? a : b; }
__aicore__ inline uint32_t CeilDiv(uint32_t a, uint32_t b) { return (a + b - 1) / b; }
__aicore__ inline uint32_t RoundUp(uint32_t a, uint32_t b) { return CeilDiv(a, b) * b; }

/* Ping-pong positions: which L1 and L0 half the next chunk / step uses, carried across tiles. */
struct PingPong {
    uint64_t l1Count = 0;
    uint64_t l0Count = 0;
    uint64_t l0cCount = 0;
    uint16_t L0CBuffer() const { return static_cast<uint16_t>(l0cCount & 1); }
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

__aicore__ inline auto L0CTensor(uint16_t buf, uint32_t rows, uint32_t cols)
{
    return te::MakeTensor(te::MakeMemPtr<te::Location::L0C, float>(buf * L0C_HALF),
                          te::MakeFrameLayout<te::NZLayoutPtn, AscendC::Std::Int<CUBE_L0C_C0>>(rows, cols));
}

/* L1 tensor of product `term`'s left (A) or right (B) panel in the L1 half at `base`: the panels of a chunk lie
 * term by term, A then B, each whole fractals. */
__aicore__ inline uint32_t PanelBytesA(uint32_t rows, uint32_t curK)
{
    return RoundUp(rows, CUBE_FRACTAL) * RoundUp(curK, CUBE_FP32_C0) * sizeof(float);
}

__aicore__ inline uint32_t PanelBytesB(uint32_t curK, uint32_t cols)
{
    return RoundUp(curK, CUBE_FP32_C0) * RoundUp(cols, CUBE_FRACTAL) * sizeof(float);
}

__aicore__ inline auto L1PanelA(uint32_t base, uint32_t term, uint32_t rows, uint32_t cols, uint32_t curK)
{
    const uint32_t off = base + term * (PanelBytesA(rows, curK) + PanelBytesB(curK, cols));
    return te::MakeTensor(te::MakeMemPtr<te::Location::L1, float>(off),
                          te::MakeFrameLayout<te::NZLayoutPtn, AscendC::Std::Int<CUBE_FP32_C0>>(rows, curK));
}

__aicore__ inline auto L1PanelB(uint32_t base, uint32_t term, uint32_t rows, uint32_t cols, uint32_t curK)
{
    const uint32_t off = base + term * (PanelBytesA(rows, curK) + PanelBytesB(curK, cols)) + PanelBytesA(rows, curK);
    return te::MakeTensor(te::MakeMemPtr<te::Location::L1, float>(off),
                          te::MakeFrameLayout<te::ZNLayoutPtn, AscendC::Std::Int<CUBE_FP32_C0>>(curK, cols));
}

/* The panel pair (L1PanelA / L1PanelB index) product `term` reads. One pair per product, unless `splitPanels`:
 * split HF32's three products share two pairs, (L, R) and (lo L, lo R), so each panel is built once: hi*hi reads
 * L and R, hi*lo L and lo R, lo*hi lo L and R. */
__aicore__ inline uint32_t PairA(uint32_t term, bool splitPanels) { return splitPanels ? (term == 2 ? 1 : 0) : term; }
__aicore__ inline uint32_t PairB(uint32_t term, bool splitPanels) { return splitPanels ? (term == 1 ? 1 : 0) : term; }

/* The K chunk of `terms` products already in the L1 half at `l1Base`: walk it in CUBE_BASE_K steps through the
 * L0A/L0B halves and accumulate every product's step into L0C before the next step, so a sum of products (the
 * complex real part Lr*Rr - Li*Ri) is accumulated term by term, not as the difference of two finished sums. */
__aicore__ inline void MmadChunk(uint32_t l1Base, uint32_t terms, uint32_t rows, uint32_t cols, uint32_t curK,
                                 bool firstChunk, bool lastChunk, PingPong& pp, bool splitPanels = false)
{
    const uint32_t steps = CeilDiv(curK, CUBE_BASE_K);
    for (uint32_t s = 0; s < steps; ++s) {
        const uint32_t kOff = s * CUBE_BASE_K;
        const uint32_t curBaseK = Min(CUBE_BASE_K, curK - kOff);
        for (uint32_t term = 0; term < terms; ++term) {
            const uint16_t buf = static_cast<uint16_t>(pp.l0Count & 1);
            const uint32_t l0Off = buf * L0_HALF;
            auto l0A = te::MakeTensor(te::MakeMemPtr<te::Location::L0A, float>(l0Off),
                                      te::MakeFrameLayout<te::NZLayoutPtn, AscendC::Std::Int<CUBE_FP32_C0>>(rows, curBaseK));
            auto l0B = te::MakeTensor(te::MakeMemPtr<te::Location::L0B, float>(l0Off),
                                      te::MakeFrameLayout<te::ZNLayoutPtn, AscendC::Std::Int<CUBE_FP32_C0>>(curBaseK, cols));
            AscendC::WaitFlag<AscendC::HardEvent::M_MTE1>(buf);
            te::Copy(te::MakeCopy(te::CopyL12L0A{}), l0A,
                     L1PanelA(l1Base, PairA(term, splitPanels), rows, cols, curK).Slice(te::MakeCoord(0, kOff), te::MakeShape(rows, curBaseK)));
            te::Copy(te::MakeCopy(te::CopyL12L0B{}), l0B,
                     L1PanelB(l1Base, PairB(term, splitPanels), rows, cols, curK).Slice(te::MakeCoord(kOff, 0), te::MakeShape(curBaseK, cols)));
            AscendC::SetFlag<AscendC::HardEvent::MTE1_M>(buf);
            AscendC::WaitFlag<AscendC::HardEvent::MTE1_M>(buf);
            const bool first = firstChunk && s == 0 && term == 0;
            const bool last = lastChunk && s + 1 == steps && term + 1 == terms;
            if (!first && (rows / CUBE_FRACTAL) * (cols / CUBE_FRACTAL) < MMAD_BARRIER_THRESHOLD) {
                /* asc-devkit Mmad (sync section): small accumulating Mmads into the same L0C need the M-pipe barrier */
                AscendC::PipeBarrier<PIPE_M>();
            }
            te::MmadParams params{static_cast<uint16_t>(rows), static_cast<uint16_t>(cols),
                                  static_cast<uint16_t>(curBaseK), last ? FINAL_ACCUMULATION : PARTIAL_ACCUMULATION,
                                  first};
            auto l0C = L0CTensor(pp.L0CBuffer(), rows, cols);
            te::Mmad(te::MmadAtom<te::MmadTraits<te::MmadOperation>>{}.with(params), l0C, l0A, l0B);
            AscendC::SetFlag<AscendC::HardEvent::M_MTE1>(buf);
            ++pp.l0Count;
        }
    }
}

/* L0C += sum over i < N of left[i][row0.., 0..k) * right[i][0..k), col0..] for a rows x cols region, in K chunks of
 * chunkK through L1 (the panels of all N products of one chunk share an L1 half; the caller sizes chunkK so they
 * fit). firstTerm / lastTerm: whether this sum starts / ends the L0C accumulation. */
template <typename GmLeft, typename GmRight, uint32_t N>
__aicore__ inline void Accumulate(const GmLeft (&left)[N], const GmRight (&right)[N], uint32_t k, uint32_t chunkK,
                                  uint32_t row0, uint32_t col0, uint32_t rows, uint32_t cols, bool firstTerm,
                                  bool lastTerm, PingPong& pp)
{
    for (uint32_t kOff = 0; kOff < k; kOff += chunkK) {
        const uint32_t curK = Min(chunkK, k - kOff);
        const uint16_t buf = static_cast<uint16_t>(pp.l1Count & 1);
        const uint32_t l1Base = buf * L1_HALF;
        AscendC::WaitFlag<AscendC::HardEvent::MTE1_MTE2>(buf);
        for (uint32_t term = 0; term < N; ++term) {
            te::Copy(te::MakeCopy(te::CopyGM2L1{}), L1PanelA(l1Base, term, rows, cols, curK),
                     left[term].Slice(te::MakeCoord(row0, kOff), te::MakeShape(rows, curK)));
            te::Copy(te::MakeCopy(te::CopyGM2L1{}), L1PanelB(l1Base, term, rows, cols, curK),
                     right[term].Slice(te::MakeCoord(kOff, col0), te::MakeShape(curK, cols)));
        }
        AscendC::SetFlag<AscendC::HardEvent::MTE2_MTE1>(buf);
        AscendC::WaitFlag<AscendC::HardEvent::MTE2_MTE1>(buf);
        MmadChunk(l1Base, N, rows, cols, curK, firstTerm && kOff == 0, lastTerm && kOff + curK >= k, pp);
        AscendC::SetFlag<AscendC::HardEvent::MTE1_MTE2>(buf);
        ++pp.l1Count;
    }
}

/* Wait until the Fixpipe before last has read the next L0C buffer, before accumulating into it. */
__aicore__ inline void AcquireL0C(const PingPong& pp) { AscendC::WaitFlag<AscendC::HardEvent::FIX_M>(pp.L0CBuffer()); }

/* The current L0C buffer (rows x cols, NZ) -> out[row0.., col0..] (ND) once its Mmads are done; hands the buffer
 * back (FIX_M) and moves to the other one. */
template <typename GmOut>
__aicore__ inline void Fixpipe(const GmOut& out, uint32_t row0, uint32_t col0, uint32_t rows, uint32_t cols,
                               PingPong& pp)
{
    const uint16_t buf = pp.L0CBuffer();
    AscendC::SetFlag<AscendC::HardEvent::M_FIX>(buf);
    AscendC::WaitFlag<AscendC::HardEvent::M_FIX>(buf);
    auto l0C = L0CTensor(buf, rows, cols);
    te::MakeCopy(te::CopyL0C2GM{}).Call(out.Slice(te::MakeCoord(row0, col0), te::MakeShape(rows, cols)), l0C,
                                        te::FixpipeParams{FINAL_ACCUMULATION});
    AscendC::SetFlag<AscendC::HardEvent::FIX_M>(buf);
    ++pp.l0cCount;
}

/* fp32 without HF32, Inf/NaN results kept (CTRL[48] = 1: in saturation mode the cube would write +-MAX for Inf,
 * asc-devkit Mmad doc, special values), row-major engine, every ping-pong buffer and L0C free. */
__aicore__ inline void CubeBegin()
{
    AscendC::SetHF32Mode(AscendC::HF32Mode::DISABLE);
    AscendC::AscendCUtils::SetOverflow(1);
    AscendC::SetMMRowMajor();
    AscendC::SetFlag<AscendC::HardEvent::MTE1_MTE2>(0);
    AscendC::SetFlag<AscendC::HardEvent::MTE1_MTE2>(1);
    AscendC::SetFlag<AscendC::HardEvent::M_MTE1>(0);
    AscendC::SetFlag<AscendC::HardEvent::M_MTE1>(1);
    AscendC::SetFlag<AscendC::HardEvent::FIX_M>(0);
    AscendC::SetFlag<AscendC::HardEvent::FIX_M>(1);
}

/* Drain the flags CubeBegin armed and restore the column-major default. */
__aicore__ inline void CubeEnd()
{
    AscendC::WaitFlag<AscendC::HardEvent::MTE1_MTE2>(0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE1_MTE2>(1);
    AscendC::WaitFlag<AscendC::HardEvent::M_MTE1>(0);
    AscendC::WaitFlag<AscendC::HardEvent::M_MTE1>(1);
    AscendC::WaitFlag<AscendC::HardEvent::FIX_M>(0);
    AscendC::WaitFlag<AscendC::HardEvent::FIX_M>(1);
    AscendC::SetMMColumnMajor();
}

}  // namespace arch35

#endif  // ARCH35_CUBE_GEMM_H
