/*
 * Launchers of the aclblasCsymm arch35 kernels (defined in csymm_kernel.cpp). Each enqueues one kernel on `stream`
 * with its tiling struct by value and returns at once: no synchronisation.
 */
#ifndef CSYMM_KERNEL_H
#define CSYMM_KERNEL_H

#include <cstdint>

#include "csymm_tiling_data.h"

/* The engine operands of the real GEMM (csymm_tiling_data.h): LEFT writes R = E(alpha*A) and only scans B; RIGHT
 * writes L = alpha*A and R = E(B); `left` is unused on LEFT (L is B itself). With tiling.split also lo(L) and lo(R)
 * into `lo` (unused otherwise). Sets the word at nanFlag (cleared by the caller) when A or B holds NaN (split: a
 * value whose HF32 part is not finite). */
void csymm_prepare_kernel_do(uint32_t numBlocks, void* stream, const void* a, const void* b, void* left, void* right,
                             void* lo, void* nanFlag, const CsymmPrepareTilingData& tiling);

/* out (row j = column j of the product, ldOut floats apart) = L * R on the cube cores, one L0C accumulation per
 * tile, written by Fixpipe. Two launches: the cube kernel, and its vector fallback, which computes the same product
 * in plain fp32 instead when the NaN flag is set. */
void csymm_gemm_kernel_do(uint32_t cubeBlocks, uint32_t vectorBlocks, void* stream, const void* left,
                          const void* right, const void* lo, void* out, void* nanFlag,
                          const CsymmGemmTilingData& tiling);

/* C = P + beta * C in one pass over C (vector cores, SIMT). */
void csymm_epilogue_kernel_do(uint32_t numBlocks, void* stream, const void* p, void* c,
                              const CsymmEpilogueTilingData& tiling);

/* C = beta * C (alpha == 0 path); BETA_ZERO writes zeros without reading C. */
void csymm_scale_kernel_do(uint32_t numBlocks, void* stream, void* c, const CsymmEpilogueTilingData& tiling);

#endif  // CSYMM_KERNEL_H
