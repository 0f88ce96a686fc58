/*
 * Launchers of the aclblasCsymm arch35 kernels (defined in csymm_kernel.cpp). Each enqueues one kernel on `stream`
 * with its tiling struct by value and returns at once: no synchronisation.
 */
#ifndef CSYMM_KERNEL_H
#define CSYMM_KERNEL_H

#include <cstdint>

#include "csymm_tiling_data.h"

/* The GEMM path in one launch: the engine operands of the real GEMM (csymm_tiling_data.h: LEFT writes R =
 * E(alpha*A) and only scans B, `left` is B itself; RIGHT writes L = alpha*A and R = E(B) into `left` and `right`;
 * with split also lo(L) and lo(R) into `lo`) and the NaN flag (cleared by the caller) on the vector cores; after a
 * SyncAll, out (row j = column j of the product) = L * R on the cubes, written by Fixpipe (C itself when beta ==
 * 0, else P), or in plain fp32 on the vector cores when the NaN flag is set; with tiling.withEpilogue, after a
 * second SyncAll, C = P + beta * C on the vector cores. */
void csymm_fused_kernel_do(uint32_t numBlocks, void* stream, const void* a, const void* b, const void* left,
                           void* workspaceLeft, void* right, void* lo, void* out, void* c, void* nanFlag,
                           const CsymmFusedTilingData& tiling);

/* C = beta * C (alpha == 0 path); BETA_ZERO writes zeros without reading C. */
void csymm_scale_kernel_do(uint32_t numBlocks, void* stream, void* c, const CsymmEpilogueTilingData& tiling);

#endif  // CSYMM_KERNEL_H
