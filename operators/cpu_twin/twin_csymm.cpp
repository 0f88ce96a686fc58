/*
 * aclblasCsymm on the CPU twin: validates, classifies and plans with csymm_host.h, then runs the plan. Each emulated
 * core walks its output tiles of C; per tile it accumulates the product over K chunks in float32 real/imaginary
 * planes and applies the alpha/beta epilogue (seed §3.4.3). The accumulator tile is held transposed (row = column of
 * C), so the SIMD direction runs down C's columns: LEFT computes C^T = B^T A, RIGHT computes C^T = A^T B^T, with A
 * read through the symmetric addressing of csymm_host.h (only the uplo triangle, no conjugation).
 */
#include <algorithm>
#include <new>

#include "csymm_host.h"
#include "twin_handle.h"
#include "twin_kernels.h"
#include "twin_parallel.h"

namespace {

using blas_host::CeilAlign;
using blas_host::CsymmEpilogue;
using blas_host::CsymmPath;
using blas_host::CsymmTiling;
using twin::kComplexNR;
using twin::kMR;

/* The logical A(row, col) of the symmetric A, as the kernel would fetch it. */
struct SymmetricA {
    const aclblasComplex* a;
    int32_t uplo;
    int64_t lda;

    aclblasComplex operator()(int64_t row, int64_t col) const
    {
        const int64_t offset = blas_host::CsymmAOffset(uplo, row, col, lda);
        aclblasComplex v = a[offset];
#if TWIN_MUTANT == TWIN_MUTANT_CONJUGATED_A
        if (offset != row + col * lda) {
            v.imag = -v.imag;
        }
#endif
        return v;
    }
};

SymmetricA SymmetricAOf(const CsymmTiling& p, const aclblasComplex* A)
{
    SymmetricA s{A, p.uplo, p.lda};
#if TWIN_MUTANT == TWIN_MUTANT_WRONG_TRIANGLE
    s.uplo = p.uplo == blas_host::kUpper ? blas_host::kLower : blas_host::kUpper;
#endif
#if TWIN_MUTANT == TWIN_MUTANT_LDA_IGNORED
    s.lda = p.k;
#endif
    return s;
}

/* Packs a complex operand as real and imaginary planes (left: [p][kc][kMR]; right: [q][kc][NR] per plane). */
template <typename Get>
void PackLeftPlanes(int64_t rows, int64_t kc, Get get, float* re, float* im)
{
    twin::PackLeft(rows, kc, [&](int64_t r, int64_t k) { return get(r, k).real; }, re);
    twin::PackLeft(rows, kc, [&](int64_t r, int64_t k) { return get(r, k).imag; }, im);
}

template <typename Get>
void PackRightPlanes(int64_t cols, int64_t kc, Get get, float* re, float* im)
{
    twin::PackRight<kComplexNR>(cols, kc, [&](int64_t k, int64_t c) { return get(k, c).real; }, re);
    twin::PackRight<kComplexNR>(cols, kc, [&](int64_t k, int64_t c) { return get(k, c).imag; }, im);
}

struct CsymmScratch {
    twin::TileScratch s;
    int64_t planeLeft, planeRight, planeAcc, ldAcc;
};

/*
 * Tile (row0, col0, rows x cols of C) into the accumulator planes accR/accI[j][i] (j: column of C in the tile,
 * i: row). Left operand (j, k): LEFT B(k, j), RIGHT A(k, j). Right operand (k, i): LEFT A(i, k), RIGHT B(i, k).
 */
void ComputeTile(const CsymmTiling& p, const SymmetricA& symA, const aclblasComplex* B, int64_t row0, int64_t col0,
                 int64_t rows, int64_t cols, CsymmScratch& cs)
{
    const int64_t accRows = CeilAlign(cols, kMR);
    float* left = cs.s.left.data();
    float* right = cs.s.right.data();
    float* accR = cs.s.acc.data();
    float* accI = accR + cs.planeAcc;
    std::fill(accR, accR + 2 * cs.planeAcc, 0.0f);
    const int64_t ldb = p.ldb;
    for (int64_t k0 = 0; k0 < p.k; k0 += p.blockK) {
        const int64_t kc = std::min(p.blockK, p.k - k0);
        if (p.side == blas_host::kSideLeft) {
            PackLeftPlanes(cols, kc, [&](int64_t j, int64_t k) { return B[(k0 + k) + (col0 + j) * ldb]; }, left,
                           left + cs.planeLeft);
            PackRightPlanes(rows, kc, [&](int64_t k, int64_t i) { return symA(row0 + i, k0 + k); }, right,
                            right + cs.planeRight);
        } else {
            PackLeftPlanes(cols, kc, [&](int64_t j, int64_t k) { return symA(k0 + k, col0 + j); }, left,
                           left + cs.planeLeft);
            PackRightPlanes(rows, kc, [&](int64_t k, int64_t i) { return B[(row0 + i) + (k0 + k) * ldb]; }, right,
                            right + cs.planeRight);
        }
        for (int64_t q = 0; q * kComplexNR < rows; ++q) {
            for (int64_t r = 0; r < accRows; r += kMR) {
                const int64_t offset = r * cs.ldAcc + q * kComplexNR;
                twin::MicroKernelComplex(kc, left + r * kc, left + cs.planeLeft + r * kc, right + q * kc * kComplexNR,
                                         right + cs.planeRight + q * kc * kComplexNR, accR + offset, accI + offset,
                                         cs.ldAcc);
            }
        }
#if TWIN_MUTANT == TWIN_MUTANT_FP16_ACCUM
        for (int64_t e = 0; e < 2 * cs.planeAcc; ++e) {
            accR[e] = twin::RoundTo11Bits(accR[e]);
        }
#endif
    }
}

inline bool WritesRow(const CsymmTiling& p, int64_t i)
{
#if TWIN_MUTANT == TWIN_MUTANT_TAIL_ROW_DROPPED
    return !(i == p.m - 1 && p.m % p.blockM != 0);
#else
    (void)p;
    (void)i;
    return true;
#endif
}

/* After column j of the tile is written: the mutants that write outside the m x n region. */
inline void AfterColumn(const CsymmTiling& p, aclblasComplex* C, int64_t row0, int64_t rows, int64_t j)
{
#if TWIN_MUTANT == TWIN_MUTANT_WRITES_LD_PADDING
    if (row0 + rows == p.m && p.ldc > p.m) {
        C[p.m + j * p.ldc] = aclblasComplex{0.0f, 0.0f};
    }
#elif TWIN_MUTANT == TWIN_MUTANT_WRITES_PAST_END
    if (row0 + rows == p.m && j == p.n - 1) {
        C[p.m + j * p.ldc] = aclblasComplex{0.0f, 0.0f};
    }
#else
    (void)p;
    (void)C;
    (void)row0;
    (void)rows;
    (void)j;
#endif
}

/* Epilogue of one tile: GENERAL alpha*acc + beta*C, BETA_ZERO alpha*acc (C never read), BETA_ONE alpha*acc + C. */
void WriteTile(const CsymmTiling& p, const CsymmScratch& cs, int64_t row0, int64_t col0, int64_t rows, int64_t cols,
               aclblasComplex* C)
{
    float ar = p.alphaReal, ai = p.alphaImag, br = p.betaReal, bi = p.betaImag;
#if TWIN_MUTANT == TWIN_MUTANT_ALPHA_BETA_SWAPPED
    std::swap(ar, br);
    std::swap(ai, bi);
#endif
    CsymmEpilogue epilogue = p.epilogue;
#if TWIN_MUTANT == TWIN_MUTANT_BETA0_READS_C
    if (epilogue == CsymmEpilogue::BETA_ZERO) {
        epilogue = CsymmEpilogue::GENERAL;
    }
#endif
    const float* accR = cs.s.acc.data();
    const float* accI = accR + cs.planeAcc;
    for (int64_t j = 0; j < cols; ++j) {
        aclblasComplex* c = C + row0 + (col0 + j) * p.ldc;
        const float* tr = accR + j * cs.ldAcc;
        const float* ti = accI + j * cs.ldAcc;
        for (int64_t i = 0; i < rows; ++i) {
            if (!WritesRow(p, row0 + i)) {
                continue;
            }
            float outR = ar * tr[i] - ai * ti[i];
            float outI = ar * ti[i] + ai * tr[i];
            if (epilogue == CsymmEpilogue::GENERAL) {
                outR += br * c[i].real - bi * c[i].imag;
                outI += br * c[i].imag + bi * c[i].real;
            } else if (epilogue == CsymmEpilogue::BETA_ONE) {
                outR += c[i].real;
                outI += c[i].imag;
            }
            c[i] = aclblasComplex{outR, outI};
        }
        AfterColumn(p, C, row0, rows, col0 + j);
    }
}

/* alpha == 0: C = beta * C on the tile; beta == 0 zeroes without reading C. */
void ScaleTile(const CsymmTiling& p, int64_t row0, int64_t col0, int64_t rows, int64_t cols, aclblasComplex* C)
{
    const bool zero = p.epilogue == CsymmEpilogue::BETA_ZERO;
    for (int64_t j = 0; j < cols; ++j) {
        aclblasComplex* c = C + row0 + (col0 + j) * p.ldc;
        for (int64_t i = 0; i < rows; ++i) {
            if (!WritesRow(p, row0 + i)) {
                continue;
            }
            if (zero) {
                c[i] = aclblasComplex{0.0f, 0.0f};
            } else {
                const aclblasComplex old = c[i];
                c[i] = aclblasComplex{p.betaReal * old.real - p.betaImag * old.imag,
                                      p.betaReal * old.imag + p.betaImag * old.real};
            }
        }
        AfterColumn(p, C, row0, rows, col0 + j);
    }
}

void Execute(const CsymmTiling& p, const aclblasComplex* A, const aclblasComplex* B, aclblasComplex* C)
{
    const SymmetricA symA = SymmetricAOf(p, A);
    const double flops = 8.0 * static_cast<double>(p.m) * static_cast<double>(p.n) * static_cast<double>(p.k);
    twin::RunOnCores(p.usedCores, flops, [&](int32_t core) {
        CsymmScratch cs{};
        if (p.path == CsymmPath::GEMM) {
            const int64_t accRows = CeilAlign(p.blockN, kMR);
            cs.ldAcc = CeilAlign(p.blockM, kComplexNR);
            cs.planeLeft = accRows * p.blockK;
            cs.planeRight = cs.ldAcc * p.blockK;
            cs.planeAcc = accRows * cs.ldAcc;
            cs.s.left.resize(2 * cs.planeLeft);
            cs.s.right.resize(2 * cs.planeRight);
            cs.s.acc.resize(2 * cs.planeAcc);
        }
        for (int64_t step = 0;; ++step) {
            const int64_t tile = blas_host::TileOfCore(p.tileCount, p.usedCores, core, step);
            if (tile < 0) {
                break;
            }
            int64_t row0 = 0, col0 = 0, rows = 0, cols = 0;
            blas_host::CsymmTileRegion(p, tile, &row0, &col0, &rows, &cols);
            if (p.path == CsymmPath::SCALE_ONLY) {
                ScaleTile(p, row0, col0, rows, cols, C);
            } else {
                ComputeTile(p, symA, B, row0, col0, rows, cols, cs);
                WriteTile(p, cs, row0, col0, rows, cols, C);
            }
        }
    });
}

}  // namespace

extern "C" aclblasStatus_t aclblasCsymm(aclblasHandle_t handle, aclblasSideMode_t side, aclblasFillMode_t uplo,
                                        int m, int n, const aclblasComplex* alpha, const aclblasComplex* A, int lda,
                                        const aclblasComplex* B, int ldb, const aclblasComplex* beta,
                                        aclblasComplex* C, int ldc)
{
    const twin::Slowdown slowdown;
    const char* what = "aclblasCsymm";
    if (handle != nullptr) {
        handle->lastMessage.clear();
    }
    aclblasStatus_t status =
        blas_host::ValidateCsymmParams(handle, side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc);
#if TWIN_MUTANT == TWIN_MUTANT_ENUM_STATUS
    if (status == ACLBLAS_STATUS_INVALID_ENUM && side != blas_host::kSideLeft && side != blas_host::kSideRight) {
        status = ACLBLAS_STATUS_INVALID_VALUE;
    }
#endif
    if (status != ACLBLAS_STATUS_SUCCESS) {
        return twin::Finish(handle, status, what);
    }
    void* workspace = nullptr;
    twin::AcquireWorkspace(handle, 0, &workspace);
    CsymmPath path = blas_host::ClassifyCsymm(m, n, *alpha, *beta, C != nullptr).path;
#if TWIN_MUTANT == TWIN_MUTANT_ALPHA0_NO_SCALE
    if (path == CsymmPath::SCALE_ONLY) {
        path = CsymmPath::QUICK_RETURN;
    }
#endif
    if (path == CsymmPath::QUICK_RETURN) {
        return twin::Finish(handle, ACLBLAS_STATUS_SUCCESS, what);
    }
    const CsymmTiling plan =
        blas_host::PlanCsymm(side, uplo, m, n, lda, ldb, ldc, *alpha, *beta, handle->coreCount);
    try {
        Execute(plan, A, B, C);
    } catch (const std::bad_alloc&) {
        return twin::Finish(handle, ACLBLAS_STATUS_ALLOC_FAILED, what);
    }
    return twin::Finish(handle, ACLBLAS_STATUS_SUCCESS, what);
}
