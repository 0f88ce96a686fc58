/*
 * Launchers of the aclblasCsymm arch35 kernels (defined in csymm_kernel.cpp). Each enqueues one kernel on `stream`
 * with its tiling struct by value and returns at once: no synchronisation.
 */
#ifndef CSYMM_KERNEL_H
#define CSYMM_KERNEL_H

#include <cstdint>

#include "csymm_tiling_data.h"

/* The GEMM path in one launch, no workspace: the NaN flag (the epoch of tiling.prepare, stored on NaN: no clearing) from a scan of A and B on the
 * vector cores; after a SyncAll, per AI core the vector cores build the engine panels in UB and copy them to their
 * cube core's L1, the cube accumulates L * R, and writes C (beta == 0, Fixpipe L0C -> GM) or hands the result to
 * the vector cores' UB (Fixpipe L0C -> UB), which write C = P + beta * C; with the NaN flag set, the vector cores
 * compute the call in plain fp32 from A and B. */
void csymm_fused_kernel_do(uint32_t numBlocks, void* stream, const void* a, const void* b, void* c, void* nanFlag,
                           const CsymmFusedTilingData& tiling);

/* The GEMM path on the vector cores alone, one launch: C = alpha * op(A, B) + beta * C in plain fp32 straight from A
 * and B, one SIMT thread per element of C (small shapes; NaN needs no scan there). */
void csymm_vector_kernel_do(uint32_t numBlocks, void* stream, const void* a, const void* b, void* c,
                            const CsymmPrepareTilingData& prepare, const CsymmEpilogueTilingData& epilogue);

/* C = beta * C (alpha == 0 path); BETA_ZERO writes zeros without reading C. */
void csymm_scale_kernel_do(uint32_t numBlocks, void* stream, void* c, const CsymmEpilogueTilingData& tiling);

#endif  // CSYMM_KERNEL_H
