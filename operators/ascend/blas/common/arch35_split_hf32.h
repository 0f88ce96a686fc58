/*
 * Split HF32 on arch35: fp32 accuracy at the HF32 cube rate. On the 950PR the fp32 Mmad runs 16x16x1 MACs per cycle
 * and the HF32 one 16x16x8 (asc-devkit docs/zh/api/附录/Cube指令理论性能汇总.md, table 2), so three HF32 products cost
 * 3/8 of one fp32 product. Each operand x = hi + lo with hi = hf32(x) (what Mmad in HF32 mode reads from x under
 * SetHF32TransMode(NEAREST_EVEN); the 950PR's HF32 keeps 10 mantissa bits, HF32.md figure 2) and lo = x - hi,
 * exact in fp32 (at most 13 significant bits). The cube accumulates hi*hi + hi*lo + lo*hi in one fp32 L0C chain,
 * the three products of each K step before the next step; it reads x itself for hi (Mmad rounds it) and the lo
 * operands that prepare writes beside the fp32 ones. The dropped lo*lo and the rounding of lo to HF32 leave a
 * relative error near 2^-22 per product.
 *
 * Operands whose hi is not finite (Inf, NaN, or a value that rounds up past FLT_MAX) would put Inf - Inf = NaN
 * into lo: prepare flags them like NaN, and the vector fallback computes the call in plain fp32.
 */
#ifndef ARCH35_SPLIT_HF32_H
#define ARCH35_SPLIT_HF32_H

#include <cstdint>

#include "simt_api/asc_simt.h"

namespace arch35 {

/* hf32(x): round to nearest at 11 significant bits, ties to even (the bits Mmad keeps under NEAREST_EVEN). */
__aicore__ inline float Hf32Hi(float x)
{
    const uint32_t u = __float_as_uint(x);
    if ((u & 0x7f800000u) == 0x7f800000u) {
        return x;
    }
    return __uint_as_float((u + 0xfffu + ((u >> 13) & 1u)) & ~0x1fffu);
}

__aicore__ inline float Hf32Lo(float x) { return x - Hf32Hi(x); }

/* Whether x can enter the split: its hi (and so its lo) finite. */
__aicore__ inline bool Hf32Splittable(float x) { return (__float_as_uint(Hf32Hi(x)) & 0x7f800000u) != 0x7f800000u; }

}  // namespace arch35

#endif  // ARCH35_SPLIT_HF32_H
