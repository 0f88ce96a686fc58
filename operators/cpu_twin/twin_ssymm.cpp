/*
 * aclblasSsymm on the CPU twin: validates with ssymm_host.h (the ops-blas arch35 order), then runs the arch35
 * pipeline's steps on the host: mirror the stored triangle of A into a full dimA x dimA row-major copy, multiply,
 * and combine C = alpha * product + beta * C (beta == 0 never reads C). Rows of C are shared out over the emulated
 * cores in blocks of kRows, each block accumulating in float32 while one row of the right operand is in cache.
 */
#include <algorithm>
#include <new>
#include <vector>

#include "ssymm_host.h"
#include "twin_handle.h"
#include "twin_parallel.h"

namespace {

constexpr int64_t kRows = 8;

struct SsymmProblem {
    int64_t m, n;
    float alpha, beta;
    const float* left;   // row i of C = sum over l of left(i, l) * right(l, :)
    int64_t ldLeft;
    const float* right;
    int64_t ldRight, depth;
    float* C;
    int64_t ldc;
};

/* Rows [i0, i1) of C. */
void RowBlock(const SsymmProblem& p, int64_t i0, int64_t i1, std::vector<float>& acc)
{
    const int64_t rows = i1 - i0;
    std::fill(acc.begin(), acc.begin() + rows * p.n, 0.0f);
    for (int64_t l = 0; l < p.depth; ++l) {
        const float* y = p.right + l * p.ldRight;
        for (int64_t r = 0; r < rows; ++r) {
            const float x = p.left[(i0 + r) * p.ldLeft + l];
            float* a = acc.data() + r * p.n;
            for (int64_t j = 0; j < p.n; ++j) {
                a[j] += x * y[j];
            }
        }
    }
    for (int64_t r = 0; r < rows; ++r) {
        float* c = p.C + (i0 + r) * p.ldc;
        const float* a = acc.data() + r * p.n;
        for (int64_t j = 0; j < p.n; ++j) {
            c[j] = p.beta == 0.0f ? p.alpha * a[j] : p.alpha * a[j] + p.beta * c[j];
        }
    }
}

/* alpha == 0: C = beta * C, zeros without reading C when beta == 0. */
void ScaleRows(const SsymmProblem& p, int64_t i0, int64_t i1)
{
    for (int64_t i = i0; i < i1; ++i) {
        float* c = p.C + i * p.ldc;
        for (int64_t j = 0; j < p.n; ++j) {
            c[j] = p.beta == 0.0f ? 0.0f : p.beta * c[j];
        }
    }
}

void Execute(const SsymmProblem& p, int32_t coreCount)
{
    const int64_t blocks = blas_host::CeilDiv(p.m, kRows);
    const int32_t cores = blas_host::UsedCores(blocks, coreCount);
    const double flops = 2.0 * static_cast<double>(p.m) * static_cast<double>(p.n) * static_cast<double>(p.depth);
    twin::RunOnCores(cores, flops, [&](int32_t core) {
        int64_t b0 = 0, b1 = 0;
        twin::SplitRange(blocks, cores, core, &b0, &b1);
        std::vector<float> acc(p.alpha == 0.0f ? 0 : kRows * p.n);
        for (int64_t b = b0; b < b1; ++b) {
            const int64_t i0 = b * kRows;
            const int64_t i1 = std::min(p.m, i0 + kRows);
            if (p.alpha == 0.0f) {
                ScaleRows(p, i0, i1);
            } else {
                RowBlock(p, i0, i1, acc);
            }
        }
    });
}

}  // namespace

extern "C" aclblasStatus_t aclblasSsymm(aclblasHandle_t handle, aclblasSideMode_t side, aclblasFillMode_t uplo,
                                        int64_t m, int64_t n, const float* alpha, const float* A, int64_t lda,
                                        const float* B, int64_t ldb, const float* beta, float* C, int64_t ldc)
{
    const twin::Slowdown slowdown;
    const char* what = "aclblasSsymm";
    if (handle != nullptr) {
        handle->lastMessage.clear();
    }
    const aclblasStatus_t status = blas_host::ValidateSsymmParams(handle, side, uplo, m, n, alpha, A, lda, B, ldb,
                                                                  beta, C, ldc);
    if (status != ACLBLAS_STATUS_SUCCESS || blas_host::SsymmQuickReturn(m, n) || (*alpha == 0.0f && *beta == 1.0f)) {
        return twin::Finish(handle, status, what);
    }
    const bool left = side == blas_host::kSideLeft;
    const int64_t dimA = left ? m : n;
    try {
        std::vector<float> full;
        if (*alpha != 0.0f) {  // the mirror step: A's stored triangle reflected into a full row-major copy
            full.resize(static_cast<size_t>(dimA * dimA));
            for (int64_t r = 0; r < dimA; ++r) {
                for (int64_t c = 0; c < dimA; ++c) {
                    full[r * dimA + c] = A[blas_host::SsymmAOffset(uplo, r, c, lda)];
                }
            }
        }
        const SsymmProblem p{m, n, *alpha, *beta, left ? full.data() : B, left ? dimA : ldb,
                             left ? B : full.data(), left ? ldb : dimA, dimA, C, ldc};
        Execute(p, handle->coreCount);
    } catch (const std::bad_alloc&) {
        return twin::Finish(handle, ACLBLAS_STATUS_ALLOC_FAILED, what);
    }
    return twin::Finish(handle, ACLBLAS_STATUS_SUCCESS, what);
}
