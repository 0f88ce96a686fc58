/*
 * Launchers of the aclblasSgemmStridedBatched arch35 kernels (defined in sgemm_strided_batched_kernel.cpp). Each
 * enqueues one kernel on `stream` with the tiling struct by value and returns at once: no synchronisation.
 */
#ifndef SGEMM_STRIDED_BATCHED_KERNEL_H
#define SGEMM_STRIDED_BATCHED_KERNEL_H

#include <cstdint>

#include "sgemm_strided_batched_tiling_data.h"

/* Engine GEMM of one batch: out = op(B)^T * op(A)^T written through Fixpipe (C_i on the fast path, temp otherwise).
 * transA/transB pick the GM layout of each operand (NDExt for N, DNExt for T/C). No cube work when the NaN flag is
 * set (the fallback computes C_i instead). */
void sgemm_strided_batched_gemm_kernel_do(uint32_t numBlocks, void* stream, bool transA, bool transB,
                                          const float* a, const float* b, float* out, void* nanFlag,
                                          const SgemmStridedBatchedGemmTilingData& tiling);

/* C_i = alpha * temp + beta * C_i on the vector cores (C_i read only when tiling.readC); nothing when the NaN flag
 * is set. */
void sgemm_strided_batched_combine_kernel_do(uint32_t numBlocks, void* stream, const float* temp, float* c,
                                             void* nanFlag, const SgemmStridedBatchedEpilogueTilingData& tiling);

/* The general path of every batch in one mixed launch (cube tiles into workspace slots, the vector cores' epilogue
 * into C_i under cross-core flags); C_i must be disjoint. Nothing when the NaN flag is set. */
void sgemm_strided_batched_fused_kernel_do(uint32_t numBlocks, void* stream, bool transA, bool transB,
                                           const float* a, const float* b, float* c, void* workspace, void* nanFlag,
                                           const SgemmStridedBatchedFusedTilingData& tiling);

/* The NaN guard of the call, one launch on the vector cores (KERNEL_TYPE_MIX_AIV_1_0, for its SyncAll): the scan
 * stores tiling.nanEpoch into the word at nanFlag when any A_i or B_i holds NaN (SIMT; the word is never cleared:
 * an older epoch there reads as "no NaN", common/arch35_nan_guard.h); after SyncAll<true> every core reads the word
 * and, when it holds the epoch, computes its share of every C_i = alpha * op(A_i) * op(B_i) (+ beta * C_i) in plain
 * fp32. The gemm, fused and combine launches after it on the stream then do nothing. */
void sgemm_strided_batched_nan_guard_kernel_do(uint32_t numBlocks, void* stream, const float* a, const float* b,
                                               float* c, void* nanFlag, const SgemmStridedBatchedNanTilingData& tiling);

/* C_i = beta * C_i on the vector cores for tiling.batchCount C_i from c, tiling.strideC apart (tiling.readC == 0:
 * C_i = 0 without reading it). */
void sgemm_strided_batched_scale_kernel_do(uint32_t numBlocks, void* stream, float* c,
                                           const SgemmStridedBatchedEpilogueTilingData& tiling);

#endif  // SGEMM_STRIDED_BATCHED_KERNEL_H
