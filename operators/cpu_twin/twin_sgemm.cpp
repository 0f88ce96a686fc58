/*
 * aclblasSgemmStridedBatched on the CPU twin: validates and plans with sgemm_strided_batched_host.h, then runs the
 * plan. Batches run in a host loop with one plan and one workspace temp; inside a batch every emulated core walks its
 * serpentine tiles of the engine output C^T = op(B)^T op(A)^T, accumulating per K chunk of 256 in float32. The fast
 * path writes C_i from the tile; the general path writes the temp (row stride CeilAlign(m, 8)) and, after a barrier,
 * the cores combine C_i = alpha * temp + beta * C_i over column ranges (the AIV combine kernel).
 */
#include <algorithm>
#include <new>

#include "sgemm_strided_batched_host.h"
#include "twin_handle.h"
#include "twin_kernels.h"
#include "twin_parallel.h"

namespace {

using blas_host::CeilAlign;
using blas_host::kOpN;
using blas_host::SgemmPath;
using blas_host::SgemmStridedBatchedTiling;
using twin::kMR;
using twin::kRealNR;

/* Operand addressing after the mutants that corrupt it. */
struct SgemmOperands {
    int32_t transA, transB;
    int64_t lda, ldb;
    int64_t strideA, strideB;
};

SgemmOperands OperandsOf(const SgemmStridedBatchedTiling& p)
{
    SgemmOperands o{p.transA, p.transB, p.lda, p.ldb, p.strideA, p.strideB};
#if TWIN_MUTANT == TWIN_MUTANT_TRANS_IGNORED
    o.transA = kOpN;
    o.transB = kOpN;
#endif
#if TWIN_MUTANT == TWIN_MUTANT_LDA_IGNORED
    o.lda = p.transA == kOpN ? p.m : p.k;
    o.ldb = p.transB == kOpN ? p.k : p.n;
#endif
#if TWIN_MUTANT == TWIN_MUTANT_STRIDE0_COMPACT
    if (o.strideA == 0) {
        o.strideA = o.lda * (p.transA == kOpN ? p.k : p.m);
    }
    if (o.strideB == 0) {
        o.strideB = o.ldb * (p.transB == kOpN ? p.n : p.k);
    }
#endif
    return o;
}

/* One engine tile (rows x cols at row0/col0 of C^T) into s.acc with row stride ldAcc, chunk by chunk over K. */
void ComputeTile(const SgemmStridedBatchedTiling& p, const SgemmOperands& o, const float* A, const float* B,
                 int64_t row0, int64_t col0, int64_t rows, int64_t cols, twin::TileScratch& s, int64_t ldAcc)
{
    const int64_t rowsPad = CeilAlign(rows, kMR);
    float* acc = s.acc.data();
    std::fill(acc, acc + rowsPad * ldAcc, 0.0f);
    for (int64_t k0 = 0; k0 < p.kEff; k0 += p.tileK) {
        const int64_t kc = std::min(p.tileK, p.kEff - k0);
        // left = op(B)^T: element (r, k) is op(B)(k, r)
        if (o.transB == kOpN) {
            twin::PackLeft(rows, kc, [&](int64_t r, int64_t k) { return B[(k0 + k) + (row0 + r) * o.ldb]; },
                           s.left.data());
        } else {
            twin::PackLeft(rows, kc, [&](int64_t r, int64_t k) { return B[(row0 + r) + (k0 + k) * o.ldb]; },
                           s.left.data());
        }
        // right = op(A)^T: element (k, c) is op(A)(c, k)
        if (o.transA == kOpN) {
            twin::PackRight<kRealNR>(cols, kc, [&](int64_t k, int64_t c) { return A[(col0 + c) + (k0 + k) * o.lda]; },
                                     s.right.data());
        } else {
            twin::PackRight<kRealNR>(cols, kc, [&](int64_t k, int64_t c) { return A[(k0 + k) + (col0 + c) * o.lda]; },
                                     s.right.data(), true);
        }
        for (int64_t q = 0; q * kRealNR < cols; ++q) {
            for (int64_t r = 0; r < rowsPad; r += kMR) {
                twin::MicroKernelReal(kc, s.left.data() + r * kc, s.right.data() + q * kc * kRealNR,
                                      acc + r * ldAcc + q * kRealNR, ldAcc);
            }
        }
#if TWIN_MUTANT == TWIN_MUTANT_FP16_ACCUM
        for (int64_t i = 0; i < rowsPad * ldAcc; ++i) {
            acc[i] = twin::RoundTo11Bits(acc[i]);
        }
#endif
    }
}

/* Whether row i of C is written; the tail-row mutant drops the last row of a tail tile. */
inline bool WritesRow(const SgemmStridedBatchedTiling& p, int64_t i)
{
#if TWIN_MUTANT == TWIN_MUTANT_TAIL_ROW_DROPPED
    return !(i == p.m - 1 && p.m % p.tileN != 0);
#else
    (void)p;
    (void)i;
    return true;
#endif
}

/* The fix-up every mutant that writes outside the m x n region needs after writing column j of C. */
inline void AfterColumn(const SgemmStridedBatchedTiling& p, float* C, int64_t ldc, int64_t j)
{
#if TWIN_MUTANT == TWIN_MUTANT_WRITES_LD_PADDING
    if (ldc > p.m) {
        C[p.m + j * ldc] = 0.0f;
    }
#elif TWIN_MUTANT == TWIN_MUTANT_WRITES_PAST_END
    if (j == p.n - 1) {
        C[p.m + j * ldc] = 0.0f;
    }
#else
    (void)p;
    (void)C;
    (void)ldc;
    (void)j;
#endif
}

/* Fast path: the tile goes straight to C_i (Fixpipe direct write). Engine (r, c) is C(col0 + c, row0 + r). */
void WriteTileToC(const SgemmStridedBatchedTiling& p, const float* acc, int64_t ldAcc, int64_t row0, int64_t col0,
                  int64_t rows, int64_t cols, float* C, int64_t ldc)
{
    for (int64_t r = 0; r < rows; ++r) {
        float* dst = C + (row0 + r) * ldc + col0;
        for (int64_t c = 0; c < cols; ++c) {
            if (WritesRow(p, col0 + c)) {
                dst[c] = acc[r * ldAcc + c];
            }
        }
        if (col0 + cols == p.m) {
            AfterColumn(p, C, ldc, row0 + r);
        }
    }
}

/* General path, first half: the tile into the compact temp (row stride tempRowStride). */
void WriteTileToTemp(const SgemmStridedBatchedTiling& p, const float* acc, int64_t ldAcc, int64_t row0, int64_t col0,
                     int64_t rows, int64_t cols, float* temp)
{
    for (int64_t r = 0; r < rows; ++r) {
        std::copy(acc + r * ldAcc, acc + r * ldAcc + cols, temp + (row0 + r) * p.tempRowStride + col0);
    }
}

/* General path, second half: C_i = alpha * temp + beta * C_i for columns [j0, j1); beta == 0 never reads C_i. */
void Combine(const SgemmStridedBatchedTiling& p, const float* temp, float* C, int64_t j0, int64_t j1)
{
    float alpha = p.alpha;
    float beta = p.beta;
#if TWIN_MUTANT == TWIN_MUTANT_ALPHA_BETA_SWAPPED
    std::swap(alpha, beta);
#endif
    bool readsC = beta != 0.0f;
#if TWIN_MUTANT == TWIN_MUTANT_BETA0_READS_C
    readsC = true;
#endif
    for (int64_t j = j0; j < j1; ++j) {
        const float* t = temp + j * p.tempRowStride;
        float* c = C + j * p.ldc;
        for (int64_t i = 0; i < p.m; ++i) {
            if (WritesRow(p, i)) {
                c[i] = readsC ? alpha * t[i] + beta * c[i] : alpha * t[i];
            }
        }
        AfterColumn(p, C, p.ldc, j);
    }
}

/* k == 0 or alpha == 0: C_i = beta * C_i for columns [j0, j1); beta == 0 writes zeros without reading. */
void Scale(const SgemmStridedBatchedTiling& p, float* C, int64_t j0, int64_t j1)
{
    for (int64_t j = j0; j < j1; ++j) {
        float* c = C + j * p.ldc;
        for (int64_t i = 0; i < p.m; ++i) {
            if (WritesRow(p, i)) {
                c[i] = p.beta == 0.0f ? 0.0f : p.beta * c[i];
            }
        }
        AfterColumn(p, C, p.ldc, j);
    }
}

/* One emulated core's share of a plan: its tiles of every batch, then (general path) its columns of the combine
 * between two barriers. */
void ExecuteOnCore(const SgemmStridedBatchedTiling& p, const SgemmOperands& o, const float* A, const float* B, float* C,
                   float* workspace, int64_t ldcWrite, int64_t ldAcc, int32_t core, twin::Barrier& barrier)
{
    twin::TileScratch s;
    if (p.path != SgemmPath::SCALE_ONLY) {
        s.left.resize(CeilAlign(p.tileM, kMR) * p.tileK);
        s.right.resize(ldAcc * p.tileK);
        s.acc.resize(CeilAlign(p.tileM, kMR) * ldAcc);
    }
    int64_t j0 = 0;
    int64_t j1 = 0;
    twin::SplitRange(p.n, p.usedCores, core, &j0, &j1);
    for (int64_t b = 0; b < p.batchCount; ++b) {
        const float* Ai = A + b * o.strideA;
        const float* Bi = B + b * o.strideB;
        float* Ci = C + b * p.strideC;
        float* temp = workspace;
#if TWIN_MUTANT == TWIN_MUTANT_WORKSPACE_PER_BATCH
        temp = workspace + b * (p.workspaceBytes / p.batchCount / sizeof(float));
#endif
        if (p.path == SgemmPath::SCALE_ONLY) {
            Scale(p, Ci, j0, j1);
            continue;
        }
        for (int64_t step = 0;; ++step) {
            const int64_t tile = blas_host::TileOfCore(p.tileCount, p.usedCores, core, step);
            if (tile < 0) {
                break;
            }
            int64_t row0 = 0, col0 = 0, rows = 0, cols = 0;
            blas_host::SgemmTileRegion(p, tile, &row0, &col0, &rows, &cols);
            ComputeTile(p, o, Ai, Bi, row0, col0, rows, cols, s, ldAcc);
            if (p.path == SgemmPath::FAST) {
                WriteTileToC(p, s.acc.data(), ldAcc, row0, col0, rows, cols, Ci, ldcWrite);
            } else {
                WriteTileToTemp(p, s.acc.data(), ldAcc, row0, col0, rows, cols, temp);
            }
        }
        if (p.path == SgemmPath::GENERAL) {
            barrier.Wait();
            Combine(p, temp, Ci, j0, j1);
            barrier.Wait();
        }
    }
}

/* Runs a validated, non-quick-return plan on the handle's cores. */
void Execute(const SgemmStridedBatchedTiling& p, const float* A, const float* B, float* C, float* workspace)
{
    const SgemmOperands o = OperandsOf(p);
    int64_t ldcWrite = p.ldc;
#if TWIN_MUTANT == TWIN_MUTANT_FAST_PATH_ODD_LDC
    ldcWrite = CeilAlign(p.ldc, blas_host::kFixpipeNAlign);
#endif
    const int64_t ldAcc = CeilAlign(p.tileN, kRealNR);
    twin::Barrier barrier(p.usedCores);
    const double flops = 2.0 * static_cast<double>(p.m) * static_cast<double>(p.n) * static_cast<double>(p.k) *
                         static_cast<double>(p.batchCount);
    twin::RunOnCores(p.usedCores, flops, [&](int32_t core) {
        try {
            ExecuteOnCore(p, o, A, B, C, workspace, ldcWrite, ldAcc, core, barrier);
        } catch (...) {
            barrier.Break();  // the other cores leave their barrier waits; this core's exception is the call's
            throw;
        }
    }, p.path == SgemmPath::GENERAL ? twin::Shares::BARRIER : twin::Shares::INDEPENDENT);  // the combine waits
}

}  // namespace

extern "C" aclblasStatus_t aclblasSgemmStridedBatched(aclblasHandle_t handle, aclblasOperation_t transA,
                                                      aclblasOperation_t transB, int m, int n, int k,
                                                      const float* alpha, const float* A, int lda, int64_t strideA,
                                                      const float* B, int ldb, int64_t strideB, const float* beta,
                                                      float* C, int ldc, int64_t strideC, int batchCount)
{
    const twin::Slowdown slowdown;
    const char* what = "aclblasSgemmStridedBatched";
    if (handle != nullptr) {
        handle->lastMessage.clear();
    }
    const aclblasStatus_t status = blas_host::ValidateSgemmStridedBatchedParams(
        handle, transA, transB, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, batchCount);
    if (status != ACLBLAS_STATUS_SUCCESS) {
        return twin::Finish(handle, status, what);
    }
    SgemmStridedBatchedTiling plan = blas_host::PlanSgemmStridedBatched(
        transA, transB, m, n, k, *alpha, lda, strideA, ldb, strideB, *beta, ldc, strideC, batchCount,
        handle->coreCount);
#if TWIN_MUTANT == TWIN_MUTANT_FAST_PATH_ODD_LDC
    if (plan.path == SgemmPath::GENERAL && *alpha == 1.0f && *beta == 0.0f) {
        plan.path = SgemmPath::FAST;
        plan.workspaceBytes = 0;
    }
#endif
#if TWIN_MUTANT == TWIN_MUTANT_ALPHA0_NO_SCALE
    if (plan.path == SgemmPath::SCALE_ONLY) {
        plan.path = SgemmPath::QUICK_RETURN;
    }
#endif
#if TWIN_MUTANT == TWIN_MUTANT_WORKSPACE_PER_BATCH
    plan.workspaceBytes *= static_cast<uint64_t>(batchCount);
#endif
    void* workspace = nullptr;
    const aclblasStatus_t wsStatus = twin::AcquireWorkspace(handle, plan.workspaceBytes, &workspace);
    if (wsStatus != ACLBLAS_STATUS_SUCCESS || plan.path == SgemmPath::QUICK_RETURN) {
        return twin::Finish(handle, wsStatus, what);
    }
    try {
        Execute(plan, A, B, C, static_cast<float*>(workspace));
    } catch (const std::bad_alloc&) {
        return twin::Finish(handle, ACLBLAS_STATUS_ALLOC_FAILED, what);
    }
    return twin::Finish(handle, ACLBLAS_STATUS_SUCCESS, what);
}
