/*
 * aclblasCsymm host logic shared by the CPU twin and the Ascend C launch code (seeds/csymm_design.md.txt §3.3-§3.5):
 * parameter validation in the documented order, classification of a valid call into a path, and the tiling plan.
 *
 * Call sequence of an implementation:
 *   status = ValidateCsymmParams(...);            // != SUCCESS -> return it, touch nothing
 *   call   = ClassifyCsymm(m, n, *alpha, *beta, C != nullptr);
 *   QUICK_RETURN -> return SUCCESS without launching anything
 *   plan   = PlanCsymm(side, uplo, m, n, lda, ldb, ldc, *alpha, *beta, coreCount);
 *   SCALE_ONLY   -> per tile: C = beta * C (BETA_ZERO epilogue: C = 0 without reading C)
 *   GEMM         -> per tile: acc = sum over K chunks of opLeft * opRight, then the epilogue
 *                   (GENERAL: alpha*acc + beta*C; BETA_ZERO: alpha*acc, C never read; BETA_ONE: alpha*acc + C)
 *                   (the Ascend build first needs CsymmWorkspaceBytes(m, n, side, path, epilogue) of workspace)
 * Plain C++ functions, no device dependency, no globals.
 */
#ifndef CSYMM_HOST_H
#define CSYMM_HOST_H

#include "blas_host_common.h"

namespace blas_host {

/*
 * Validation, seed §3.3.2, first failing check wins:
 *   1 handle == nullptr                                  -> HANDLE_IS_NULLPTR
 *   2 side not LEFT/RIGHT                                -> INVALID_ENUM
 *   3 uplo not UPPER/LOWER                               -> INVALID_ENUM
 *   4 m < 0 or n < 0                                     -> INVALID_VALUE
 *   5 alpha or beta == nullptr                           -> INVALID_VALUE
 *   6 lda < max(1, side == LEFT ? m : n)                 -> INVALID_VALUE
 *   7 ldb < max(1, m)                                    -> INVALID_VALUE
 *   8 ldc < max(1, m)                                    -> INVALID_VALUE
 *   9 m > 0 && n > 0 && (A == nullptr or B == nullptr)   -> INVALID_VALUE
 *  10 m > 0 && n > 0 && beta != 0 && C == nullptr        -> INVALID_VALUE
 */
inline aclblasStatus_t ValidateCsymmParams(const void* handle, int32_t side, int32_t uplo, int64_t m, int64_t n,
                                           const aclblasComplex* alpha, const void* A, int64_t lda, const void* B,
                                           int64_t ldb, const aclblasComplex* beta, const void* C, int64_t ldc)
{
    if (handle == nullptr) {
        return ACLBLAS_STATUS_HANDLE_IS_NULLPTR;
    }
    if (side != kSideLeft && side != kSideRight) {
        return ACLBLAS_STATUS_INVALID_ENUM;
    }
    if (uplo != kUpper && uplo != kLower) {
        return ACLBLAS_STATUS_INVALID_ENUM;
    }
    if (m < 0 || n < 0) {
        return ACLBLAS_STATUS_INVALID_VALUE;
    }
    if (alpha == nullptr || beta == nullptr) {
        return ACLBLAS_STATUS_INVALID_VALUE;
    }
    if (lda < Max1(side == kSideLeft ? m : n) || ldb < Max1(m) || ldc < Max1(m)) {
        return ACLBLAS_STATUS_INVALID_VALUE;
    }
    const bool work = m > 0 && n > 0;
    if (work && (A == nullptr || B == nullptr)) {
        return ACLBLAS_STATUS_INVALID_VALUE;
    }
    if (work && !IsZero(*beta) && C == nullptr) {
        return ACLBLAS_STATUS_INVALID_VALUE;
    }
    return ACLBLAS_STATUS_SUCCESS;
}

/* What a valid call does (seed §3.3.2 last paragraph, §3.4.6). */
enum class CsymmPath : int32_t {
    QUICK_RETURN = 0,  // m == 0 || n == 0, alpha == 0 && beta == 1, or C == nullptr (only valid when beta == 0)
    SCALE_ONLY = 1,    // alpha == 0, beta != 1: C = beta * C (beta == 0: zero C)
    GEMM = 2,          // the matrix product with an epilogue
};

/* How old C enters the result (seed §3.4.3): BETA_ZERO never reads C, so NaN/Inf already in C cannot leak. */
enum class CsymmEpilogue : int32_t {
    GENERAL = 0,
    BETA_ZERO = 1,
    BETA_ONE = 2,
};

struct CsymmCall {
    CsymmPath path;
    CsymmEpilogue epilogue;
};

inline CsymmEpilogue CsymmEpilogueOf(const aclblasComplex& beta)
{
    if (IsZero(beta)) {
        return CsymmEpilogue::BETA_ZERO;
    }
    return IsOne(beta) ? CsymmEpilogue::BETA_ONE : CsymmEpilogue::GENERAL;
}

/* Classify a call that passed ValidateCsymmParams. hasC == false can only happen with beta == 0 (check 10); the seed
 * allows that call to succeed without writing, which is the only safe meaning of a NULL output. */
inline CsymmCall ClassifyCsymm(int64_t m, int64_t n, const aclblasComplex& alpha, const aclblasComplex& beta,
                               bool hasC)
{
    const CsymmEpilogue epilogue = CsymmEpilogueOf(beta);
    if (m == 0 || n == 0 || !hasC || (IsZero(alpha) && IsOne(beta))) {
        return {CsymmPath::QUICK_RETURN, epilogue};
    }
    if (IsZero(alpha)) {
        return {CsymmPath::SCALE_ONLY, epilogue};
    }
    return {CsymmPath::GEMM, epilogue};
}

/*
 * Offset (in elements) of the logical A(row, col) of a symmetric A of which only the `uplo` triangle is stored,
 * column-major with leading dimension lda (seed §3.4.2). Reflected reads swap the indices only: no conjugation, the
 * diagonal's imaginary part is kept. Never addresses the unreferenced triangle.
 */
inline int64_t CsymmAOffset(int32_t uplo, int64_t row, int64_t col, int64_t lda)
{
    const bool stored = (uplo == kUpper) ? (row <= col) : (row >= col);
    return stored ? row + col * lda : col + row * lda;
}

/* Tile sizes: a 128 x 128 output tile of complex64 keeps real and imaginary accumulators in L0C (2 x 64 KB of
 * 256 KB); K chunks of 128 keep A and B real/imag panels at 256 KB, so L1 (512 KB) can ping-pong. */
constexpr int64_t kCsymmBlockM = 128;
constexpr int64_t kCsymmBlockN = 128;
constexpr int64_t kCsymmBlockK = 128;
/* Smallest output tile the plan shrinks to when there are fewer tiles than cores (Cube granularity 16, x2). */
constexpr int64_t kCsymmMinBlock = 32;

struct CsymmTiling {
    int64_t m, n, k;  // k = side == LEFT ? m : n
    int32_t side, uplo;
    int64_t lda, ldb, ldc;
    float alphaReal, alphaImag, betaReal, betaImag;
    CsymmPath path;
    CsymmEpilogue epilogue;
    int64_t blockM, blockN, blockK;  // output tile rows (of C), columns (of C), K chunk
    int64_t tilesM, tilesN, tileCount;
    int64_t kChunks;
    int64_t tailM, tailN, tailK;  // rows/cols/depth of the last tile or chunk (== block when it divides evenly)
    int32_t usedCores;
};

/*
 * The tiling plan (seed §3.3.4, §3.4.4). Output C is cut into blockM x blockN tiles over a tilesM x tilesN grid;
 * tile t covers grid cell (t % tilesM, t / tilesM) (column-major over the grid, like C itself), and tiles go to
 * cores round-robin (TileOfCore): core c runs tiles c, c + usedCores, ... in that order. While there are fewer tiles
 * than cores and the tile is larger than kCsymmMinBlock, both tile sides halve (more parallelism for small shapes).
 * usedCores = min(coreCount, tileCount), at least 1.
 */
inline CsymmTiling PlanCsymm(int32_t side, int32_t uplo, int64_t m, int64_t n, int64_t lda, int64_t ldb, int64_t ldc,
                             const aclblasComplex& alpha, const aclblasComplex& beta, int32_t coreCount)
{
    CsymmTiling t{};
    t.m = m;
    t.n = n;
    t.k = side == kSideLeft ? m : n;
    t.side = side;
    t.uplo = uplo;
    t.lda = lda;
    t.ldb = ldb;
    t.ldc = ldc;
    t.alphaReal = alpha.real;
    t.alphaImag = alpha.imag;
    t.betaReal = beta.real;
    t.betaImag = beta.imag;
    const CsymmCall call = ClassifyCsymm(m, n, alpha, beta, true);
    t.path = call.path;
    t.epilogue = call.epilogue;
    t.blockM = kCsymmBlockM;
    t.blockN = kCsymmBlockN;
    t.blockK = kCsymmBlockK;
    while (t.blockM > kCsymmMinBlock && CeilDiv(m, t.blockM) * CeilDiv(n, t.blockN) < coreCount) {
        t.blockM /= 2;
        t.blockN /= 2;
    }
    t.tilesM = CeilDiv(m, t.blockM);
    t.tilesN = CeilDiv(n, t.blockN);
    t.tileCount = t.tilesM * t.tilesN;
    t.kChunks = CeilDiv(t.k, t.blockK);
    t.tailM = TailOf(m, t.blockM);
    t.tailN = TailOf(n, t.blockN);
    t.tailK = TailOf(t.k, t.blockK);
    t.usedCores = UsedCores(t.tileCount, coreCount);
    return t;
}

/*
 * Workspace of the Ascend build (the CPU twin computes in place and needs none). The Ascend kernels compute the
 * complex product as one real GEMM, engine (row-major) P^T = L * R with P^T n x 2m real (column j of C, re/im
 * interleaved), L n x 2k and R 2k x 2m, where one operand is real-embedded (complex a -> [[ar, ai], [-ai, ar]]):
 *   LEFT:  L = B read straight from GM (column j of B, interleaved), R = alpha*A embedded (2k x 2k)  -> workspace R
 *   RIGHT: L = alpha*A expanded from its triangle (n x 2k), R = B embedded (2k x 2m)               -> workspace L, R
 * and, unless the epilogue is BETA_ZERO (Fixpipe then writes C itself), the product P (n rows of 2*mPad floats)
 * for the beta epilogue. Rows are padded to kCsymmPlanePad floats (the cube's 32-byte C0) and every buffer starts
 * kCsymmPlaneAlign-aligned.
 */
constexpr int64_t kCsymmPlanePad = 8;
constexpr int64_t kCsymmPlaneAlign = 128;  // floats: 512 bytes

struct CsymmOperandSizes {
    uint64_t ldLeft, ldRight, ldP;               // row strides (floats) of the workspace L, R and P
    uint64_t leftFloats, rightFloats, pFloats;   // floats of each in the workspace (0: not in the workspace)
};

inline CsymmOperandSizes CsymmOperandSizesOf(int64_t m, int64_t n, int32_t side, CsymmEpilogue epilogue)
{
    const int64_t k = side == kSideLeft ? m : n;
    CsymmOperandSizes s{};
    s.ldRight = static_cast<uint64_t>(2 * CeilAlign(side == kSideLeft ? k : m, kCsymmPlanePad));
    s.rightFloats = static_cast<uint64_t>(CeilAlign(2 * k * static_cast<int64_t>(s.ldRight), kCsymmPlaneAlign));
    if (side != kSideLeft) {
        s.ldLeft = static_cast<uint64_t>(2 * CeilAlign(k, kCsymmPlanePad));
        s.leftFloats = static_cast<uint64_t>(CeilAlign(n * static_cast<int64_t>(s.ldLeft), kCsymmPlaneAlign));
    }
    s.ldP = static_cast<uint64_t>(2 * CeilAlign(m, kCsymmPlanePad));
    if (epilogue != CsymmEpilogue::BETA_ZERO) {
        s.pFloats = static_cast<uint64_t>(CeilAlign(n * static_cast<int64_t>(s.ldP), kCsymmPlaneAlign));
    }
    return s;
}

/* Workspace bytes of one call on the Ascend build: the operands above on the GEMM path, none on the others. */
inline uint64_t CsymmWorkspaceBytes(int64_t m, int64_t n, int32_t side, CsymmPath path, CsymmEpilogue epilogue)
{
    if (path != CsymmPath::GEMM) {
        return 0;
    }
    const CsymmOperandSizes s = CsymmOperandSizesOf(m, n, side, epilogue);
    return (s.leftFloats + s.rightFloats + s.pFloats) * sizeof(float);
}

/* First row/column of C and extent of tile `tile` (0 <= tile < tileCount). */
inline void CsymmTileRegion(const CsymmTiling& t, int64_t tile, int64_t* row0, int64_t* col0, int64_t* rows,
                            int64_t* cols)
{
    const int64_t tm = tile % t.tilesM;
    const int64_t tn = tile / t.tilesM;
    *row0 = tm * t.blockM;
    *col0 = tn * t.blockN;
    *rows = (tm == t.tilesM - 1) ? t.tailM : t.blockM;
    *cols = (tn == t.tilesN - 1) ? t.tailN : t.blockN;
}

}  // namespace blas_host

#endif  // CSYMM_HOST_H
