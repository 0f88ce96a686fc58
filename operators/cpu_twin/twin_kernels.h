/*
 * The twin's compute core: tile-local packed panels and register-blocked micro-kernels, the CPU stand-in for the
 * Cube unit's L1/L0 panels and L0C accumulator.
 *
 * A tile is `rows x cols` of an accumulator held row-major (the "L0C" buffer): row r is broadcast, columns are the
 * SIMD direction. Per K chunk the left operand is packed into row panels of kMR rows ([kc][kMR] each) and the right
 * operand into column panels of NR columns ([kc][NR] each), zero-padded at the tile edge, so the micro-kernel never
 * reads outside the operands and never branches. GCC vector extensions keep the accumulators in registers.
 */
#ifndef TWIN_KERNELS_H
#define TWIN_KERNELS_H

#include <cstdint>
#include <cstring>
#include <vector>

#include "blas_host_common.h"
#include "twin_mutants.h"

namespace twin {

#if defined(__AVX512F__)
#define TWIN_VEC_FLOATS 16
#else
#define TWIN_VEC_FLOATS 8
#endif

constexpr int kVec = TWIN_VEC_FLOATS;
typedef float VecF __attribute__((vector_size(TWIN_VEC_FLOATS * sizeof(float))));

constexpr int kMR = 6;                 // accumulator rows per micro-kernel
constexpr int kRealNR = 2 * kVec;      // columns per real micro-kernel
constexpr int kComplexNR = kVec;       // columns per complex micro-kernel (two planes)

inline VecF LoadV(const float* p)
{
    VecF v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

inline void StoreV(float* p, VecF v) { std::memcpy(p, &v, sizeof v); }

/* acc[kMR][kRealNR] (row stride ldAcc) += lp[kc][kMR] * rp[kc][kRealNR]. The chunk's product is summed in fresh
 * registers and added to the accumulator once, like a K-chunk partial added into L0C: with K = 2048 this keeps the
 * float32 rounding error of long sums within the 0.01 cap that one running sum over all of K can exceed. */
inline void MicroKernelReal(int64_t kc, const float* __restrict lp, const float* __restrict rp, float* __restrict acc,
                            int64_t ldAcc)
{
    VecF c[kMR][2] = {};
    for (int64_t k = 0; k < kc; ++k) {
        const VecF b0 = LoadV(rp);
        const VecF b1 = LoadV(rp + kVec);
        for (int r = 0; r < kMR; ++r) {
            const VecF a = lp[r] - VecF{};
            c[r][0] += a * b0;
            c[r][1] += a * b1;
        }
        lp += kMR;
        rp += kRealNR;
    }
    for (int r = 0; r < kMR; ++r) {
        StoreV(acc + r * ldAcc, LoadV(acc + r * ldAcc) + c[r][0]);
        StoreV(acc + r * ldAcc + kVec, LoadV(acc + r * ldAcc + kVec) + c[r][1]);
    }
}

/* Complex as real/imaginary planes: (accR, accI) += (lr + i li) * (rr + i ri), no conjugation; the real part
 * accumulates ar*br - ai*bi term by term (never two large plane sums subtracted at the end), per K chunk as above. */
inline void MicroKernelComplex(int64_t kc, const float* __restrict lr, const float* __restrict li,
                               const float* __restrict rr, const float* __restrict ri, float* __restrict accR,
                               float* __restrict accI, int64_t ldAcc)
{
    VecF cr[kMR] = {};
    VecF ci[kMR] = {};
    for (int64_t k = 0; k < kc; ++k) {
        const VecF br = LoadV(rr);
        const VecF bi = LoadV(ri);
        for (int r = 0; r < kMR; ++r) {
            const VecF ar = lr[r] - VecF{};
            const VecF ai = li[r] - VecF{};
            cr[r] += ar * br;
            cr[r] -= ai * bi;
            ci[r] += ar * bi;
            ci[r] += ai * br;
        }
        lr += kMR;
        li += kMR;
        rr += kComplexNR;
        ri += kComplexNR;
    }
    for (int r = 0; r < kMR; ++r) {
        StoreV(accR + r * ldAcc, LoadV(accR + r * ldAcc) + cr[r]);
        StoreV(accI + r * ldAcc, LoadV(accI + r * ldAcc) + ci[r]);
    }
}

/* Packs rows [0, rows) x depth [0, kc) of the left operand, get(r, k) -> float, into row panels [p][kc][kMR].
 * k outer, r inner: the destination is written sequentially, and either index order of the source stays within a
 * few cache lines. Full panels take a branch-free loop; only the edge panel pads with zeros. */
template <typename Get>
void PackLeft(int64_t rows, int64_t kc, Get get, float* out)
{
    const int64_t full = rows / kMR;
    for (int64_t p = 0; p < full; ++p) {
        const int64_t r0 = p * kMR;
        float* dst = out + p * kc * kMR;
        for (int64_t k = 0; k < kc; ++k) {
            for (int r = 0; r < kMR; ++r) {
                dst[k * kMR + r] = get(r0 + r, k);
            }
        }
    }
    const int64_t valid = rows - full * kMR;
    if (valid > 0) {
        float* dst = out + full * kc * kMR;
        for (int64_t k = 0; k < kc; ++k) {
            for (int r = 0; r < kMR; ++r) {
                dst[k * kMR + r] = r < valid ? get(full * kMR + r, k) : 0.0f;
            }
        }
    }
}

/* Packs depth [0, kc) x columns [0, cols) of the right operand, get(k, c) -> float, into column panels [q][kc][NR].
 * Full panels take a branch-free loop whose inner index follows the source's contiguous one (sourceAlongK: the
 * source is contiguous in k), so transposed operands are not read with a page-sized stride per element. */
template <int NR, typename Get>
void PackRight(int64_t cols, int64_t kc, Get get, float* out, bool sourceAlongK = false)
{
    const int64_t full = cols / NR;
    for (int64_t q = 0; q < full; ++q) {
        const int64_t c0 = q * NR;
        float* dst = out + q * kc * NR;
        if (sourceAlongK) {
            for (int c = 0; c < NR; ++c) {
                for (int64_t k = 0; k < kc; ++k) {
                    dst[k * NR + c] = get(k, c0 + c);
                }
            }
            continue;
        }
        for (int64_t k = 0; k < kc; ++k) {
            for (int c = 0; c < NR; ++c) {
                dst[k * NR + c] = get(k, c0 + c);
            }
        }
    }
    const int64_t valid = cols - full * NR;
    if (valid > 0) {
        float* dst = out + full * kc * NR;
        for (int64_t k = 0; k < kc; ++k) {
            for (int c = 0; c < NR; ++c) {
                dst[k * NR + c] = c < valid ? get(k, full * NR + c) : 0.0f;
            }
        }
    }
}

/* TWIN_MUTANT_FP16_ACCUM: round to 11 significant bits (fp16's precision), nearest, ties away. */
inline float RoundTo11Bits(float x)
{
    uint32_t u;
    std::memcpy(&u, &x, sizeof u);
    u = (u + 0x1000u) & ~0x1FFFu;
    std::memcpy(&x, &u, sizeof x);
    return x;
}

/* Per-core scratch: the packed panels and the accumulator tile(s) of one tile, reused across tiles and chunks. */
struct TileScratch {
    std::vector<float> left;   // real: [panels][kc][kMR]; complex: two planes
    std::vector<float> right;  // real: [panels][kc][NR]; complex: two planes
    std::vector<float> acc;    // real: [rowsPad][ldAcc]; complex: two planes
};

}  // namespace twin

#endif  // TWIN_KERNELS_H
