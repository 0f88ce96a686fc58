/*
 * Kernel arguments of aclblasCsymm on arch35 (Ascend 950PR, dav-3510), passed by value to each launch.
 *
 * The host fills them from blas_host::PlanCsymm (operators/host/csymm_host.h), the plan the CPU twin executes and
 * tests. Complex data runs as real/imaginary fp32 planes in the workspace:
 *   A planes Ar, Ai, An (= -Ai): the symmetric A expanded from its `uplo` triangle, k x k, row stride kPad;
 *   B planes Br, Bi: B column-major, column stride mPad (= B^T row-major);
 *   P planes Pr, Pi: the product alpha-free, column stride mPad.
 * Engine (row-major, column-major swap): P^T = B^T * A (LEFT) or A * B^T (RIGHT), an n x m matrix.
 */
#ifndef CSYMM_TILING_DATA_H
#define CSYMM_TILING_DATA_H

#include <cstdint>

constexpr uint32_t CSYMM_SIMT_THREADS = 1024;

/* Expansion of A (k x k elements) and B (m x n) into planes: itemsPerCore of the k*k + m*n elements per vector core,
 * one SIMT thread per element. */
struct CsymmPrepareTilingData {
    uint32_t m;
    uint32_t n;
    uint32_t k;
    uint32_t uplo;
    uint32_t lda;
    uint32_t ldb;
    uint32_t kPad;
    uint32_t mPad;
    uint32_t itemsPerCore;
};

/* Engine GEMM over PlanCsymm's tiles of C (tile t: C rows (t % tilesM) * blockM, C columns (t / tilesM) * blockN). */
struct CsymmGemmTilingData {
    uint32_t m;
    uint32_t n;
    uint32_t k;
    uint32_t blockM;
    uint32_t blockN;
    uint32_t blockK;
    uint32_t tilesM;
    uint32_t tileCount;
    uint32_t ldLeft;
    uint32_t ldRight;
    uint32_t ldOut;
};

/* Epilogue per element of C over columns: C = alpha * P + beta * C, the way PlanCsymm's epilogue says
 * (0 GENERAL, 1 BETA_ZERO: C unread, 2 BETA_ONE); scaleOnly: C = beta * C (BETA_ZERO: C = 0, unread). */
struct CsymmEpilogueTilingData {
    uint32_t m;
    uint32_t n;
    uint32_t ldc;
    uint32_t mPad;
    uint32_t colsPerCore;
    uint32_t epilogue;
    float alphaReal;
    float alphaImag;
    float betaReal;
    float betaImag;
};

#endif  // CSYMM_TILING_DATA_H
