/*
 * CPU implementation of the tensor_api subset the arch35 cube pipeline (blas/common/arch35_cube_gemm.h) calls:
 * layouts (NDExt, DNExt, NZ, ZN), tensors in GM / L1 / L0A / L0B / L0C, Copy GM->L1->L0A/L0B, Mmad, and the
 * Fixpipe copy L0C->GM. Local data is stored in the real fractal order, so footprints, capacities and offsets are
 * the hardware's.
 *
 * Mmad accumulates as the cube does for fp32 (asc-devkit tensor_api Mmad doc; kDirectionAlign: K aligned to 8 for
 * float): per 16x16 output fractal and per K fractal of 8, the 8 products are summed (modelled as exact, in
 * double) and added to the fp32 L0C value with one rounding. Whether the device's adder tree rounds inside a K
 * fractal is not documented; the model is exact there, and the order across K fractals, which is what decides the
 * plane-cancellation error, is the kernel's. HF32 mode rounds the operands to 11 significant bits first.
 */
#ifndef ASCEND_CPU_TENSOR_API_H
#define ASCEND_CPU_TENSOR_API_H

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

#include "kernel_operator.h"

namespace AscendC {
namespace Te {

enum class Location { GM, L1, L0A, L0B, L0C, UB };

struct NDExtLayoutPtn {};
struct DNExtLayoutPtn {};
struct NZLayoutPtn {};
struct ZNLayoutPtn {};

enum class Kind { ND, DN, NZ, ZN };

/* Element (r, c) -> element offset. ND: r * ld + c; DN: r + c * ld; NZ (C0 columns per fractal row, rows padded
 * to 16): ((c / C0) * rowsPad + r) * C0 + c % C0; ZN (K x N, C0 K-values per fractal row, N padded to 16):
 * ((r / C0) * colsPad + c) * C0 + r % C0. */
struct Layout {
    Kind kind;
    uint32_t rows;
    uint32_t cols;
    uint32_t ld;
    uint32_t c0;

    uint64_t Offset(uint64_t r, uint64_t c) const
    {
        switch (kind) {
        case Kind::ND: return r * ld + c;
        case Kind::DN: return r + c * ld;
        case Kind::NZ: return ((c / c0) * RoundUp(rows, 16) + r) * c0 + c % c0;
        case Kind::ZN: return ((r / c0) * RoundUp(cols, 16) + c) * c0 + r % c0;
        }
        return 0;
    }
    /* Bytes a local tensor of this layout occupies (whole fractals). */
    uint64_t Footprint() const
    {
        return kind == Kind::NZ ? RoundUp(rows, 16) * RoundUp(cols, c0) * 4 : RoundUp(rows, c0) * RoundUp(cols, 16) * 4;
    }
    static uint64_t RoundUp(uint64_t a, uint64_t b) { return (a + b - 1) / b * b; }
};

template <typename Ptn>
constexpr Kind KindOf()
{
    if constexpr (std::is_same_v<Ptn, NDExtLayoutPtn>) {
        return Kind::ND;
    } else if constexpr (std::is_same_v<Ptn, DNExtLayoutPtn>) {
        return Kind::DN;
    } else if constexpr (std::is_same_v<Ptn, NZLayoutPtn>) {
        return Kind::NZ;
    } else {
        return Kind::ZN;
    }
}

/* The argument pairs the kernels pass: NDExt (rows, ld), DNExt (ld, cols), NZ (rows, cols), ZN (rows, cols). */
template <typename Ptn, typename C0>
inline Layout MakeFrameLayout(uint32_t a, uint32_t b)
{
    constexpr Kind k = KindOf<Ptn>();
    if constexpr (k == Kind::ND) {
        return Layout{k, a, 0, b, C0::value};
    } else if constexpr (k == Kind::DN) {
        return Layout{k, 0, b, a, C0::value};
    } else {
        return Layout{k, a, b, 0, C0::value};
    }
}

template <Location L, typename T = float>
struct MemPtr {
    T* gm = nullptr;        // GM
    uint32_t offset = 0;    // local buffers: byte offset
};

template <Location L>
inline MemPtr<L, float> MakeMemPtr(__gm__ float* p)
{
    return MemPtr<L, float>{p, 0};
}

template <Location L, typename T>
inline MemPtr<L, T> MakeMemPtr(uint32_t byteOffset)
{
    return MemPtr<L, T>{nullptr, byteOffset};
}

struct Coord {
    uint32_t r;
    uint32_t c;
};
inline Coord MakeCoord(uint32_t r, uint32_t c) { return {r, c}; }
inline Coord MakeShape(uint32_t r, uint32_t c) { return {r, c}; }

template <Location L>
struct Tensor {
    MemPtr<L, float> ptr;
    Layout layout;
    Coord origin{0, 0};
    Coord shape{0, 0};

    Tensor Slice(Coord at, Coord extent) const
    {
        Tensor t = *this;
        t.origin = {origin.r + at.r, origin.c + at.c};
        t.shape = extent;
        return t;
    }
    uint64_t Off(uint32_t r, uint32_t c) const { return layout.Offset(origin.r + r, origin.c + c); }
    float* Base() const
    {
        if constexpr (L == Location::GM) {
            return ptr.gm;
        } else {
            return reinterpret_cast<float*>(ascend_cpu::Cur().mem[static_cast<int>(BufOf())].data() + ptr.offset);
        }
    }
    float& At(uint32_t r, uint32_t c) const { return Base()[Off(r, c)]; }
    static constexpr ascend_cpu::Buf BufOf()
    {
        return L == Location::L1 ? ascend_cpu::Buf::L1 : L == Location::L0A ? ascend_cpu::Buf::L0A
             : L == Location::L0B ? ascend_cpu::Buf::L0B : L == Location::L0C ? ascend_cpu::Buf::L0C
                                                                               : ascend_cpu::Buf::UB;
    }
    /* Byte range the slice spans (offsets grow with r and c in every layout). */
    uint64_t Lo() const { return ptr.offset + Off(0, 0) * 4; }
    uint64_t Hi() const { return ptr.offset + (Off(shape.r - 1, shape.c - 1) + 1) * 4; }
};

template <Location L>
inline Tensor<L> MakeTensor(const MemPtr<L, float>& p, const Layout& layout)
{
    const uint32_t rows = layout.kind == Kind::DN ? 0 : layout.rows;
    const uint32_t cols = layout.kind == Kind::ND ? 0 : layout.cols;
    return Tensor<L>{p, layout, {0, 0}, {rows, cols}};
}

namespace detail {

template <Location L>
inline void CheckWhole(const Tensor<L>& t, const char* what)
{
    ascend_cpu::CheckLocal(Tensor<L>::BufOf(), t.ptr.offset, t.layout.Footprint(), what);
}

/* GM slice: every element inside one device allocation, and at least one element; recorded for race detection
 * as its runs (rows of an ND slice, columns of a DN one). */
inline void CheckGmSlice(const Tensor<Location::GM>& t, bool write, const char* what)
{
    if (t.shape.r == 0 || t.shape.c == 0) {
        ascend_cpu::Raise(std::string(what) + ": empty GM slice");
    }
    const float* lo = t.Base() + t.Off(0, 0);
    const float* hi = t.Base() + t.Off(t.shape.r - 1, t.shape.c - 1) + 1;
    ascend_cpu::CheckGm(lo, hi, what);
    const bool nd = t.layout.kind == Kind::ND;
    ascend_cpu::GmAccess(lo, nd ? t.shape.r : t.shape.c, (nd ? t.shape.c : t.shape.r) * sizeof(float),
                         static_cast<uint64_t>(t.layout.ld) * sizeof(float), write, what);
}

template <Location D, Location S>
inline void CopyElements(const Tensor<D>& dst, const Tensor<S>& src)
{
    for (uint32_t r = 0; r < src.shape.r; ++r) {
        for (uint32_t c = 0; c < src.shape.c; ++c) {
            dst.At(r, c) = src.At(r, c);
        }
    }
}

/* asc-devkit Mmad doc (special values): with CTRL[48] = 0 the cube saturates Inf to +-MAX and NaN to 0; with 1 it
 * keeps them. An Inf or NaN result while the kernel never chose (AscendCUtils::SetOverflow) is a Fault: its value
 * would depend on whatever the register held. */
inline void ApplyOverflowMode(float* c, uint64_t rowsPadC, uint32_t m, uint32_t n, int mode)
{
    if (mode == 1) {
        return;
    }
    for (uint32_t j = 0; j < n; ++j) {
        for (uint32_t r = 0; r < m; ++r) {
            float& v = c[((j / 16) * rowsPadC + r) * 16 + j % 16];
            if (std::isfinite(v)) {
                continue;
            }
            if (mode < 0) {
                ascend_cpu::Raise(std::string("Mmad result ") + (std::isnan(v) ? "NaN" : "Inf") + " at L0C (" +
                                  std::to_string(r) + ", " + std::to_string(j) + ") while the kernel never set "
                                  "CTRL[48] (AscendCUtils::SetOverflow): in saturation mode the cube would write " +
                                  (std::isnan(v) ? "0" : "+-MAX") + " (asc-devkit Mmad doc, special values)");
            }
            v = std::isnan(v) ? 0.0f : std::copysign(std::numeric_limits<float>::max(), v);
        }
    }
}

inline float Hf32(float x)
{
    /* round to nearest at 11 significant bits (10 stored mantissa bits: asc-devkit HF32.md, figure 2 for the
     * 950PR), ties to even or, under SetHF32TransMode(NEAREST_ZERO), toward zero (the magnitude bits round) */
    uint32_t u;
    std::memcpy(&u, &x, 4);
    if ((u & 0x7f800000u) == 0x7f800000u) {
        return x;
    }
    const uint32_t drop = 13;
    const uint32_t half = 1u << (drop - 1);
    const uint32_t tieUp = ascend_cpu::Cur().hf32TiesToZero ? 0u : (u >> drop) & 1u;
    u = (u + half - 1 + tieUp) & ~((1u << drop) - 1);
    float y;
    std::memcpy(&y, &u, 4);
    return y;
}

}  // namespace detail

namespace detail {
/* asc-devkit Mmad (special values): NaN inputs may raise an execution error, so NaN must never reach the cube. */
template <Location L>
inline void CheckNoNan(const Tensor<L>& t, uint32_t rows, uint32_t cols, const char* what)
{
    for (uint32_t r = 0; r < rows; ++r) {
        for (uint32_t c = 0; c < cols; ++c) {
            if (std::isnan(t.At(r, c))) {
                ascend_cpu::Raise(std::string(what) + " holds NaN at (" + std::to_string(r) + ", " +
                                  std::to_string(c) + ") (asc-devkit Mmad: NaN inputs may raise an execution error; "
                                  "keep NaN out of the cube)");
            }
        }
    }
}
}  // namespace detail

struct CopyGM2L1 {};
struct CopyL12L0A {};
struct CopyL12L0B {};
struct CopyL0C2GM {};

struct FixpipeParams {
    uint8_t unitFlag;
};

template <typename Op>
struct CopyAtom {
    /* Fixpipe: L0C (NZ) -> GM (ND), after every Mmad into the region has been signalled to FIX. */
    void Call(const Tensor<Location::GM>& dst, const Tensor<Location::L0C>& src, const FixpipeParams& params) const
    {
        static_assert(std::is_same_v<Op, CopyL0C2GM>, "Call(GM, L0C, FixpipeParams) is the L0C->GM copy");
        ascend_cpu::RequireType(ascend_cpu::KernelType::AIC, "Fixpipe L0C->GM");
        detail::CheckWhole(src, "Fixpipe L0C->GM");
        Tensor<Location::L0C> region = src;
        region.shape = dst.shape;
        ascend_cpu::Touch(ascend_cpu::Buf::L0C, region.Lo(), region.Hi(), ascend_cpu::Pipe::FIX, false,
                          "Fixpipe L0C->GM");
        ascend_cpu::UnitFlag(src.ptr.offset, src.ptr.offset + src.layout.Footprint(), params.unitFlag, false,
                             "Fixpipe L0C->GM");
        detail::CheckGmSlice(dst, true, "Fixpipe L0C->GM");
        detail::CopyElements(dst, region);
        ascend_cpu::Stats().gmBytes += static_cast<uint64_t>(dst.shape.r) * dst.shape.c * sizeof(float);
        ascend_cpu::CountInstr(ascend_cpu::FIXPIPES);
    }
};

template <typename Op>
inline CopyAtom<Op> MakeCopy(Op)
{
    return {};
}

/* GM -> L1 (MTE2), L1 -> L0A / L0B (MTE1). */
template <typename Op, Location D, Location S>
inline void Copy(const CopyAtom<Op>&, const Tensor<D>& dst, const Tensor<S>& src)
{
    using ascend_cpu::Buf;
    using ascend_cpu::Pipe;
    constexpr bool gm2l1 = std::is_same_v<Op, CopyGM2L1>;
    static_assert(!gm2l1 || (D == Location::L1 && S == Location::GM), "CopyGM2L1 copies GM into L1");
    static_assert(gm2l1 || S == Location::L1, "L1->L0 copies read L1");
    static_assert(!std::is_same_v<Op, CopyL12L0A> || D == Location::L0A, "CopyL12L0A writes L0A");
    static_assert(!std::is_same_v<Op, CopyL12L0B> || D == Location::L0B, "CopyL12L0B writes L0B");
    const char* what = gm2l1 ? "Copy GM->L1" : (D == Location::L0A ? "Copy L1->L0A" : "Copy L1->L0B");
    ascend_cpu::RequireType(ascend_cpu::KernelType::AIC, what);
    detail::CheckWhole(dst, what);
    Tensor<D> region = dst;
    region.shape = src.shape;
    const Pipe pipe = gm2l1 ? Pipe::MTE2 : Pipe::MTE1;
    /* L1 is shared with the AI core's AIVs (DataCopy UB->L1): their copies must be released to this pipe. */
    const bool shared = ascend_cpu::SharedUsed(Buf::L1, ascend_cpu::Cur().slot);
    if constexpr (gm2l1) {
        detail::CheckGmSlice(src, false, what);
        ascend_cpu::Stats().gmBytes += static_cast<uint64_t>(src.shape.r) * src.shape.c * sizeof(float);
        if (shared) {
            ascend_cpu::SharedAccess(Buf::L1, ascend_cpu::Cur().slot, dst.ptr.offset,
                                     dst.ptr.offset + dst.layout.Footprint(), pipe, true, what);
        }
    } else {
        detail::CheckWhole(src, what);
        ascend_cpu::Touch(Buf::L1, src.Lo(), src.Hi(), pipe, false, what);
        if (shared) {
            ascend_cpu::SharedAccess(Buf::L1, ascend_cpu::Cur().slot, src.Lo(), src.Hi(), pipe, false, what);
        }
    }
    ascend_cpu::Touch(Tensor<D>::BufOf(), dst.ptr.offset, dst.ptr.offset + dst.layout.Footprint(), pipe, true, what);
    detail::CopyElements(region, src);
    ascend_cpu::CountInstr(gm2l1 ? ascend_cpu::GM_TO_L1 : ascend_cpu::L1_TO_L0);
    ascend_cpu::CountInstr(gm2l1 ? ascend_cpu::GM_TO_L1_BYTES : ascend_cpu::L1_TO_L0_BYTES,
                           static_cast<uint64_t>(src.shape.r) * src.shape.c * sizeof(float));
}

struct MmadOperation {};
template <typename Op>
struct MmadTraits {};

struct MmadParams {
    uint16_t m;
    uint16_t n;
    uint16_t k;
    uint8_t unitFlag;
    bool cmatrixInitVal;
};

template <typename Traits>
struct MmadAtom {
    MmadParams params{};
    MmadAtom with(const MmadParams& p) const
    {
        MmadAtom a;
        a.params = p;
        return a;
    }
};

/* C (L0C, NZ) = [C +] A (L0A, NZ, m x k) * B (L0B, ZN, k x n) on the M pipe. */
template <typename Traits>
inline void Mmad(const MmadAtom<Traits>& atom, const Tensor<Location::L0C>& c, const Tensor<Location::L0A>& a,
                 const Tensor<Location::L0B>& b)
{
    using ascend_cpu::Buf;
    using ascend_cpu::Pipe;
    const MmadParams& p = atom.params;
    ascend_cpu::Core& core = ascend_cpu::Cur();
    ascend_cpu::RequireType(ascend_cpu::KernelType::AIC, "Mmad");
    detail::CheckWhole(a, "Mmad L0A operand");
    detail::CheckWhole(b, "Mmad L0B operand");
    detail::CheckWhole(c, "Mmad L0C result");
    if (p.m == 0 || p.n == 0 || p.k == 0) {
        return;  // a NOP on the device (Mmad doc)
    }
    if (p.m > a.layout.rows || p.k > a.layout.cols || p.k > b.layout.rows || p.n > b.layout.cols ||
        p.m > c.layout.rows || p.n > c.layout.cols) {
        ascend_cpu::Raise("Mmad m/n/k " + std::to_string(p.m) + "/" + std::to_string(p.n) + "/" + std::to_string(p.k) +
                          " exceed the operand tensors");
    }
    ascend_cpu::Touch(Buf::L0A, a.ptr.offset, a.ptr.offset + a.layout.Footprint(), Pipe::M, false, "Mmad");
    ascend_cpu::Touch(Buf::L0B, b.ptr.offset, b.ptr.offset + b.layout.Footprint(), Pipe::M, false, "Mmad");
    if (!p.cmatrixInitVal && core.lastMmadSeq > core.mBarrierSeq && (p.m / 16) * (p.n / 16) < 10) {
        ascend_cpu::Raise("Mmad accumulates into L0C written by the previous Mmad without PipeBarrier<PIPE_M> "
                          "between them, and (m/16)*(n/16) = " + std::to_string((p.m / 16) * (p.n / 16)) +
                          " < 10 (asc-devkit Mmad: below that threshold the write-read dependency is not resolved "
                          "by the hardware)");
    }
    detail::CheckNoNan(a, p.m, p.k, "Mmad L0A operand");
    detail::CheckNoNan(b, p.k, p.n, "Mmad L0B operand");
    ascend_cpu::Touch(Buf::L0C, c.ptr.offset, c.ptr.offset + c.layout.Footprint(), Pipe::M, true, "Mmad");
    ascend_cpu::UnitFlag(c.ptr.offset, c.ptr.offset + c.layout.Footprint(), p.unitFlag, true, "Mmad");
    core.lastMmadSeq = core.seq[static_cast<int>(Pipe::M)];
    /* Per K fractal f: A row r's 8 values are contiguous at ((f * rowsPadA) + r) * 8 (NZ, C0 = 8) and B column n's
     * at ((f * colsPadB) + n) * 8 (ZN, C0 = 8); C (NZ, C0 = 16) at ((n / 16) * rowsPadC + r) * 16 + n % 16. */
    if (a.layout.c0 != 8 || b.layout.c0 != 8 || c.layout.c0 != 16 || a.origin.r || a.origin.c || b.origin.r ||
        b.origin.c || c.origin.r || c.origin.c) {
        ascend_cpu::Raise("Mmad operands must be whole fp32 L0 tensors (NZ C0 8, ZN C0 8, L0C NZ C0 16)");
    }
    const bool hf32 = core.hf32;
    const float* aBase = a.Base();
    const float* bBase = b.Base();
    float* cBase = c.Base();
    const uint64_t rowsPadA = Layout::RoundUp(a.layout.rows, 16);
    const uint64_t colsPadB = Layout::RoundUp(b.layout.cols, 16);
    const uint64_t rowsPadC = Layout::RoundUp(c.layout.rows, 16);
    constexpr uint32_t kFrac = 8;
    /* Per output: the K fractal's products summed in k order (exact: an fp32 product fits a double), then added
     * to the fp32 accumulator with one rounding, fractal after fractal. Loops run column block -> K fractal -> row
     * with the B fractal transposed once into bt[k][column], so the 16 columns of a row vectorise; every output
     * sees the same operations in the same order as a row-by-row loop. */
    for (uint32_t n0 = 0; n0 < p.n; n0 += 16) {
        const uint32_t nn = p.n - n0 < 16 ? p.n - n0 : 16;
        if (p.cmatrixInitVal) {
            for (uint32_t r = 0; r < p.m; ++r) {
                std::memset(cBase + ((n0 / 16) * rowsPadC + r) * 16, 0, nn * sizeof(float));
            }
        }
        for (uint32_t k0 = 0, f = 0; k0 < p.k; k0 += kFrac, ++f) {
            const uint32_t kn = p.k - k0 < kFrac ? p.k - k0 : kFrac;
            const float* bv = bBase + (f * colsPadB + n0) * kFrac;
            double bt[kFrac][16] = {};
            for (uint32_t j = 0; j < 16; ++j) {  // all 16: padding columns are computed, never stored
                for (uint32_t kk = 0; kk < kn; ++kk) {
                    bt[kk][j] = hf32 ? detail::Hf32(bv[j * kFrac + kk]) : bv[j * kFrac + kk];
                }
            }
            for (uint32_t r = 0; r < p.m; ++r) {
                const float* av = aBase + (f * rowsPadA + r) * kFrac;
                double dot[16] = {};
                for (uint32_t kk = 0; kk < kn; ++kk) {
                    const double x = hf32 ? detail::Hf32(av[kk]) : av[kk];
                    for (uint32_t j = 0; j < 16; ++j) {
                        dot[j] += x * bt[kk][j];
                    }
                }
                float* cOut = cBase + ((n0 / 16) * rowsPadC + r) * 16;
                for (uint32_t j = 0; j < nn; ++j) {
                    cOut[j] = static_cast<float>(static_cast<double>(cOut[j]) + dot[j]);
                }
            }
        }
    }
    detail::ApplyOverflowMode(cBase, rowsPadC, p.m, p.n, core.ctrlOverflow);
    ascend_cpu::Stats().cubeMacs += static_cast<uint64_t>(p.m) * p.n * p.k;
    ascend_cpu::CountInstr(ascend_cpu::MMADS);
}

}  // namespace Te
}  // namespace AscendC

#endif  // ASCEND_CPU_TENSOR_API_H
