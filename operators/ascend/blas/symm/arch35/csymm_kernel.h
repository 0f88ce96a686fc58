/*
 * Launchers of the aclblasCsymm arch35 kernels (defined in csymm_kernel.cpp). Each enqueues one kernel on `stream`
 * with its tiling struct by value and returns at once: no synchronisation.
 */
#ifndef CSYMM_KERNEL_H
#define CSYMM_KERNEL_H

#include <cstdint>

#include "csymm_tiling_data.h"

/* Planes of the workspace, in floats (see csymm_tiling_data.h). */
struct CsymmPlanes {
    float* ar;
    float* ai;
    float* an;
    float* br;
    float* bi;
    float* pr;
    float* pi;
};

/* Symmetric A from its uplo triangle into Ar/Ai/An (no conjugation), B into Br/Bi (vector cores, SIMT); sets the
 * word at nanFlag (cleared by the caller) when A or B holds NaN. */
void csymm_prepare_kernel_do(uint32_t numBlocks, void* stream, const void* a, const void* b, const CsymmPlanes& planes,
                             void* nanFlag, const CsymmPrepareTilingData& tiling);

/* Pr = Lr*Rr - Li*Ri and Pi = Lr*Ri + Li*Rr, both products of a part interleaved every K step, on the cube cores;
 * `side` picks which engine operand is A (the negated plane An stands for -Ai). Two launches: the cube kernel, and
 * its vector fallback, which computes P instead when the NaN flag is set. */
void csymm_gemm_kernel_do(uint32_t cubeBlocks, uint32_t vectorBlocks, void* stream, bool sideLeft,
                          const CsymmPlanes& planes, void* nanFlag, const CsymmGemmTilingData& tiling);

/* C = alpha * P + beta * C in one pass over C (vector cores, SIMT). */
void csymm_epilogue_kernel_do(uint32_t numBlocks, void* stream, const CsymmPlanes& planes, void* c,
                              const CsymmEpilogueTilingData& tiling);

/* C = beta * C (alpha == 0 path); BETA_ZERO writes zeros without reading C. */
void csymm_scale_kernel_do(uint32_t numBlocks, void* stream, void* c, const CsymmEpilogueTilingData& tiling);

#endif  // CSYMM_KERNEL_H
