/*
 * Kernel arguments of aclblasCsymm on arch35 (Ascend 950PR, dav-3510), passed by value to each launch.
 *
 * The host fills them from blas_host::PlanCsymm and blas_host::CsymmOperandSizesOf (operators/host/csymm_host.h).
 * The complex product is one real GEMM on the engine (row-major, column-major swap):
 *   P^T (n x 2m real: row j = column j of the product, re/im interleaved) = L (n x 2k) * R (2k x 2m),
 * one operand real-embedded, a -> [[ar, ai], [-ai, ar]] per element, so [pr, pi] = [lr, li] * E(r) and the real and
 * imaginary products of every element pair share each K fractal of the one L0C accumulation:
 *   LEFT:  L = B (row j = column j of B), R = E(alpha*A);
 *   RIGHT: L = alpha*A (from A's stored triangle), R = E(B).
 * Neither is ever stored in GM: the vector cores build each K chunk's panels in UB and copy them UB -> L1 of
 * their cube core (csymm_kernel.cpp), so the launch needs no workspace.
 */
#ifndef CSYMM_TILING_DATA_H
#define CSYMM_TILING_DATA_H

#include <cstdint>

constexpr uint32_t CSYMM_SIMT_THREADS = 1024;

/* The operands as the vector cores read them: the NaN scan (itemsPerCore of the k*k (A) + m*n (B) complex elements
 * per vector core, one SIMT thread per element) and the panels (side LEFT: L = B, R = E(alpha*A); RIGHT: L =
 * alpha*A, R = E(B)). */
struct CsymmPrepareTilingData {
    uint32_t m;
    uint32_t n;
    uint32_t k;
    uint32_t side;
    uint32_t uplo;
    uint32_t lda;
    uint32_t ldb;
    uint32_t itemsPerCore;
    uint32_t split;          // 1: the panels also carry lo(L), lo(R) (common/arch35_split_hf32.h); the scan
                             // flags values whose HF32 part is not finite
    float alphaReal;
    float alphaImag;
    uint32_t nanEpoch;       // this call's NaN flag epoch: the value the scan stores on NaN (common/arch35_nan_guard.h)
};

/* The real GEMM over PlanCsymm's tiles of C (tile t: C rows (t % tilesM) * blockM, C columns (t / tilesM) * blockN,
 * engine rows = C columns, engine columns = 2 x C rows), K (= 2k real) in chunks of chunkK through the two L1
 * halves; ldOut: floats between C columns (2 ldc), where Fixpipe writes C when beta == 0. */
struct CsymmGemmTilingData {
    uint32_t m;
    uint32_t n;
    uint32_t k;
    uint32_t blockM;
    uint32_t blockN;
    uint32_t chunkK;
    uint32_t tilesM;
    uint32_t tileCount;
    uint32_t ldOut;
    uint32_t split;          // 1: hi*hi + hi*lo + lo*hi in HF32 mode (3 products per K step), 0: fp32
};

/* Epilogue per element of C: C = P + beta * C (alpha is already in P), the way PlanCsymm's epilogue says (0
 * GENERAL, 2 BETA_ONE; BETA_ZERO has no epilogue: Fixpipe wrote C), P the tile's result the cube's Fixpipe put in
 * the vector core's UB; csymm_scale: C = beta * C over colsPerCore columns per vector core (BETA_ZERO: C = 0,
 * unread). */
struct CsymmEpilogueTilingData {
    uint32_t m;
    uint32_t n;
    uint32_t ldc;
    uint32_t colsPerCore;
    uint32_t epilogue;
    float betaReal;
    float betaImag;
};

/* The GEMM path in one mixed launch (KERNEL_TYPE_MIX_AIC_1_2, numBlocks AI cores): the NaN scan on the vector
 * cores, SyncAll, then per AI core the panels (AIV, UB -> L1) and the GEMM (AIC) under cross-core flags, with
 * withEpilogue the result L0C -> UB and C = P + beta * C on the vector cores; the plain fp32 fallback on the vector
 * cores when the NaN flag holds this call's epoch (prepare.nanEpoch). itemsPerCore is for the launch's 2 * numBlocks vector cores. */
struct CsymmFusedTilingData {
    CsymmPrepareTilingData prepare;
    CsymmGemmTilingData gemm;
    CsymmEpilogueTilingData epilogue;
    uint32_t withEpilogue;
};

#endif  // CSYMM_TILING_DATA_H
