/*
 * Kernel arguments of aclblasCsymm on arch35 (Ascend 950PR, dav-3510), passed by value to each launch.
 *
 * The host fills them from blas_host::PlanCsymm and blas_host::CsymmOperandSizesOf (operators/host/csymm_host.h).
 * The complex product is one real GEMM on the engine (row-major, column-major swap):
 *   P^T (n x 2m real: row j = column j of the product, re/im interleaved) = L (n x 2k) * R (2k x 2m),
 * one operand real-embedded, a -> [[ar, ai], [-ai, ar]] per element, so [pr, pi] = [lr, li] * E(r) and the real and
 * imaginary products of every element pair share each K fractal of the one L0C accumulation:
 *   LEFT:  L = B (GM, row j = column j of B), R = E(alpha*A) built by prepare;
 *   RIGHT: L = alpha*A (built by prepare from A's stored triangle), R = E(B) built by prepare.
 */
#ifndef CSYMM_TILING_DATA_H
#define CSYMM_TILING_DATA_H

#include <cstdint>

constexpr uint32_t CSYMM_SIMT_THREADS = 1024;

/* Building the workspace operands: itemsPerCore of the k*k (A) + m*n (B) complex elements per vector core, one SIMT
 * thread per element. side LEFT: A -> R (E(alpha*a)), B scanned for NaN only; RIGHT: A -> L, B -> R (E(b)). */
struct CsymmPrepareTilingData {
    uint32_t m;
    uint32_t n;
    uint32_t k;
    uint32_t side;
    uint32_t uplo;
    uint32_t lda;
    uint32_t ldb;
    uint32_t ldLeft;
    uint32_t ldRight;
    uint32_t itemsPerCore;
    uint32_t split;          // 1: also write the split-HF32 lo operands (common/arch35_split_hf32.h)
    uint32_t ldLoLeft;       // row stride (floats) of lo(L), n rows at the start of the lo area
    uint64_t loRightOffset;  // floats from the lo area's start to lo(R) (R's layout, ldRight)
    float alphaReal;
    float alphaImag;
};

/* The real GEMM over PlanCsymm's tiles of C (tile t: C rows (t % tilesM) * blockM, C columns (t / tilesM) * blockN,
 * engine rows = C columns, engine columns = 2 x C rows), K (= 2k real) in chunks of chunkK through L1. */
struct CsymmGemmTilingData {
    uint32_t m;
    uint32_t n;
    uint32_t k;
    uint32_t blockM;
    uint32_t blockN;
    uint32_t chunkK;
    uint32_t tilesM;
    uint32_t tileCount;
    uint32_t ldLeft;
    uint32_t ldRight;
    uint32_t ldOut;
    uint32_t split;          // 1: hi*hi + hi*lo + lo*hi in HF32 mode (3 products per K step), 0: fp32
    uint32_t ldLoLeft;
    uint64_t loRightOffset;
};

/* Epilogue per element of C over columns: C = P + beta * C (alpha is already in P), the way PlanCsymm's epilogue
 * says (0 GENERAL, 2 BETA_ONE; BETA_ZERO has no epilogue: Fixpipe wrote C); scaleOnly: C = beta * C (BETA_ZERO:
 * C = 0, unread). P: row j = column j of the product, ldP floats apart. */
struct CsymmEpilogueTilingData {
    uint32_t m;
    uint32_t n;
    uint32_t ldc;
    uint32_t ldP;
    uint32_t colsPerCore;
    uint32_t epilogue;
    float betaReal;
    float betaImag;
};

/* The GEMM path in one mixed launch (KERNEL_TYPE_MIX_AIC_1_2, numBlocks AI cores): prepare on the vector cores,
 * SyncAll, the GEMM on the cubes (its fp32 fallback on the vector cores when the NaN flag is set), and with
 * withEpilogue a second SyncAll before the vector cores' epilogue. Vector-core shares (itemsPerCore, colsPerCore)
 * are for the launch's 2 * numBlocks vector cores. */
struct CsymmFusedTilingData {
    CsymmPrepareTilingData prepare;
    CsymmGemmTilingData gemm;
    CsymmEpilogueTilingData epilogue;
    uint32_t withEpilogue;
};

#endif  // CSYMM_TILING_DATA_H
