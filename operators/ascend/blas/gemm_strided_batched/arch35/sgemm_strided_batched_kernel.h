/*
 * Launchers of the aclblasSgemmStridedBatched arch35 kernels (defined in sgemm_strided_batched_kernel.cpp). Each
 * enqueues one kernel on `stream` with the tiling struct by value and returns at once: no synchronisation.
 */
#ifndef SGEMM_STRIDED_BATCHED_KERNEL_H
#define SGEMM_STRIDED_BATCHED_KERNEL_H

#include <cstdint>

#include "sgemm_strided_batched_tiling_data.h"

/* Engine GEMM of one batch: out = op(B)^T * op(A)^T written through Fixpipe (C_i on the fast path, temp otherwise).
 * transA/transB pick the GM layout of each operand (NDExt for N, DNExt for T/C). */
void sgemm_strided_batched_gemm_kernel_do(uint32_t numBlocks, void* stream, bool transA, bool transB,
                                          const float* a, const float* b, float* out,
                                          const SgemmStridedBatchedGemmTilingData& tiling);

/* C_i = alpha * temp + beta * C_i on the vector cores (C_i read only when tiling.readC). */
void sgemm_strided_batched_combine_kernel_do(uint32_t numBlocks, void* stream, const float* temp, float* c,
                                             const SgemmStridedBatchedEpilogueTilingData& tiling);

/* C_i = beta * C_i on the vector cores (tiling.readC == 0: C_i = 0 without reading it). */
void sgemm_strided_batched_scale_kernel_do(uint32_t numBlocks, void* stream, float* c,
                                           const SgemmStridedBatchedEpilogueTilingData& tiling);

#endif  // SGEMM_STRIDED_BATCHED_KERNEL_H
