/*
 * A plain-loop implementation of the whole ops-blas C ABI (aclblasCreate/Destroy/SetStream/SetWorkspace, aclblasCsymm,
 * aclblasSgemmStridedBatched), written from the seeds without the project's host code, for `--operator-lib`.
 *
 * Its purpose is decidability: the project's tables must be decided by the official gate for ANY correct float32
 * implementation, not only for the CPU twin. This one sums in the plainest order (one element at a time, k from 0
 * to K-1, no blocking, no K chunks, no FMA), the twin sums per micro-tile over K chunks: two different orders.
 * Validation follows the seeds' check order and status codes; quick returns follow Netlib.
 *
 * PLAIN_PLANE_ORDER=1 (environment) switches csymm to the plane-order defect: the real part sums the two real plane
 * products one after the other over all of K (sum ar*br, then minus sum ai*bi) instead of interleaving them per K
 * step, and the imaginary part likewise. Mathematically equal, numerically a cancellation of two large sums.
 */
#include <stdint.h>
#include <stdlib.h>

#include "../../operators/include/aclblas_abi.h"

struct _aclblas_handle {
    void *stream;
    void *workspace;
    size_t workspaceSize;
};

aclblasStatus_t aclblasCreate(aclblasHandle_t *handle)
{
    if (handle == NULL) {
        return ACLBLAS_STATUS_HANDLE_IS_NULLPTR;
    }
    *handle = calloc(1, sizeof(struct _aclblas_handle));
    return *handle == NULL ? ACLBLAS_STATUS_ALLOC_FAILED : ACLBLAS_STATUS_SUCCESS;
}

aclblasStatus_t aclblasDestroy(aclblasHandle_t handle)
{
    if (handle == NULL) {
        return ACLBLAS_STATUS_HANDLE_IS_NULLPTR;
    }
    free(handle);
    return ACLBLAS_STATUS_SUCCESS;
}

aclblasStatus_t aclblasSetStream(aclblasHandle_t handle, void *stream)
{
    if (handle == NULL) {
        return ACLBLAS_STATUS_HANDLE_IS_NULLPTR;
    }
    handle->stream = stream;
    return ACLBLAS_STATUS_SUCCESS;
}

aclblasStatus_t aclblasSetWorkspace(aclblasHandle_t handle, void *workspace, size_t size)
{
    if (handle == NULL) {
        return ACLBLAS_STATUS_HANDLE_IS_NULLPTR;
    }
    handle->workspace = workspace;
    handle->workspaceSize = size;
    return ACLBLAS_STATUS_SUCCESS;
}

static int64_t max1(int64_t x) { return x > 1 ? x : 1; }

static int is_zero(aclblasComplex z) { return z.real == 0.0f && z.imag == 0.0f; }

static int is_one(aclblasComplex z) { return z.real == 1.0f && z.imag == 0.0f; }

/* The logical A(row, col) of the symmetric A: only the uplo triangle is read, never conjugated. */
static aclblasComplex sym_at(const aclblasComplex *A, int64_t lda, int upper, int64_t row, int64_t col)
{
    if ((upper && row > col) || (!upper && row < col)) {
        int64_t t = row;
        row = col;
        col = t;
    }
    return A[row + col * lda];
}

/* C = beta * C in place, Netlib style: beta == 0 writes zeros without reading C. */
static aclblasComplex scaled(aclblasComplex beta, aclblasComplex c)
{
    aclblasComplex r = {0.0f, 0.0f};
    if (!is_zero(beta)) {
        r.real = beta.real * c.real - beta.imag * c.imag;
        r.imag = beta.real * c.imag + beta.imag * c.real;
    }
    return r;
}

/* sum over p of opLeft(i, p) * opRight(p, j) for LEFT (A(i,p) B(p,j)) or RIGHT (B(i,p) A(p,j)). */
static aclblasComplex dot(int left, int upper, int64_t ka, const aclblasComplex *A, int64_t lda,
                          const aclblasComplex *B, int64_t ldb, int64_t i, int64_t j, int planeOrder)
{
    float re = 0.0f, im = 0.0f;
    float rr = 0.0f, ii = 0.0f, ri = 0.0f, ir = 0.0f;
    for (int64_t p = 0; p < ka; ++p) {
        aclblasComplex x = left ? sym_at(A, lda, upper, i, p) : B[i + p * ldb];
        aclblasComplex y = left ? B[p + j * ldb] : sym_at(A, lda, upper, p, j);
        if (planeOrder) {
            rr += x.real * y.real;
            ii += x.imag * y.imag;
            ri += x.real * y.imag;
            ir += x.imag * y.real;
        } else {
            re += x.real * y.real - x.imag * y.imag;
            im += x.real * y.imag + x.imag * y.real;
        }
    }
    if (planeOrder) {
        re = rr - ii;
        im = ri + ir;
    }
    aclblasComplex s = {re, im};
    return s;
}

/* Seed §3.3.2 check order: handle, side, uplo, m/n, alpha/beta, lda/ldb/ldc, A/B when there is work, C when there
 * is work and beta != 0. */
aclblasStatus_t aclblasCsymm(aclblasHandle_t handle, aclblasSideMode_t side, aclblasFillMode_t uplo, int m, int n,
                             const aclblasComplex *alpha, const aclblasComplex *A, int lda, const aclblasComplex *B,
                             int ldb, const aclblasComplex *beta, aclblasComplex *C, int ldc)
{
    if (handle == NULL) {
        return ACLBLAS_STATUS_HANDLE_IS_NULLPTR;
    }
    if (side != ACLBLAS_SIDE_LEFT && side != ACLBLAS_SIDE_RIGHT) {
        return ACLBLAS_STATUS_INVALID_ENUM;
    }
    if (uplo != ACLBLAS_UPPER && uplo != ACLBLAS_LOWER) {
        return ACLBLAS_STATUS_INVALID_ENUM;
    }
    if (m < 0 || n < 0 || alpha == NULL || beta == NULL) {
        return ACLBLAS_STATUS_INVALID_VALUE;
    }
    const int left = side == ACLBLAS_SIDE_LEFT;
    const int64_t ka = left ? m : n;
    if (lda < max1(ka) || ldb < max1(m) || ldc < max1(m)) {
        return ACLBLAS_STATUS_INVALID_VALUE;
    }
    const int work = m > 0 && n > 0;
    if (work && (A == NULL || B == NULL)) {
        return ACLBLAS_STATUS_INVALID_VALUE;
    }
    if (work && !is_zero(*beta) && C == NULL) {
        return ACLBLAS_STATUS_INVALID_VALUE;
    }
    if (!work || C == NULL || (is_zero(*alpha) && is_one(*beta))) {
        return ACLBLAS_STATUS_SUCCESS;
    }
    const char *env = getenv("PLAIN_PLANE_ORDER");
    const int planeOrder = env != NULL && env[0] == '1';
    const aclblasComplex a = *alpha, b = *beta;
    for (int64_t j = 0; j < n; ++j) {
        for (int64_t i = 0; i < m; ++i) {
            aclblasComplex *c = &C[i + j * (int64_t)ldc];
            if (is_zero(a)) {
                *c = scaled(b, *c);
                continue;
            }
            aclblasComplex s = dot(left, uplo == ACLBLAS_UPPER, ka, A, lda, B, ldb, i, j, planeOrder);
            aclblasComplex out = {a.real * s.real - a.imag * s.imag, a.real * s.imag + a.imag * s.real};
            if (is_one(b)) {
                out.real += c->real;
                out.imag += c->imag;
            } else if (!is_zero(b)) {
                aclblasComplex old = scaled(b, *c);
                out.real += old.real;
                out.imag += old.imag;
            }
            *c = out;
        }
    }
    return ACLBLAS_STATUS_SUCCESS;
}

static int valid_op(aclblasOperation_t op) { return op == ACLBLAS_OP_N || op == ACLBLAS_OP_T || op == ACLBLAS_OP_C; }

/* op(X)(r, c) of a column-major X: N reads X(r, c), T and C (real data) read X(c, r). */
static float op_at(const float *X, int64_t ld, aclblasOperation_t op, int64_t r, int64_t c)
{
    return op == ACLBLAS_OP_N ? X[r + c * ld] : X[c + r * ld];
}

/* The Sgemm seed's 参数约束 order: handle, transA/transB (INVALID_VALUE), m/n/k/batchCount, alpha/beta,
 * lda/ldb/ldc, A/B when there is work and k > 0, C when there is work. Strides are not validated (0 broadcasts). */
aclblasStatus_t aclblasSgemmStridedBatched(aclblasHandle_t handle, aclblasOperation_t transA,
                                           aclblasOperation_t transB, int m, int n,
                                           int k, const float *alpha, const float *A, int lda, int64_t strideA,
                                           const float *B, int ldb, int64_t strideB, const float *beta, float *C,
                                           int ldc, int64_t strideC, int batchCount)
{
    if (handle == NULL) {
        return ACLBLAS_STATUS_HANDLE_IS_NULLPTR;
    }
    if (!valid_op(transA) || !valid_op(transB)) {
        return ACLBLAS_STATUS_INVALID_VALUE;
    }
    if (m < 0 || n < 0 || k < 0 || batchCount < 0 || alpha == NULL || beta == NULL) {
        return ACLBLAS_STATUS_INVALID_VALUE;
    }
    if (lda < max1(transA == ACLBLAS_OP_N ? m : k) || ldb < max1(transB == ACLBLAS_OP_N ? k : n) || ldc < max1(m)) {
        return ACLBLAS_STATUS_INVALID_VALUE;
    }
    const int work = m > 0 && n > 0 && batchCount > 0;
    if (work && k > 0 && (A == NULL || B == NULL)) {
        return ACLBLAS_STATUS_INVALID_VALUE;
    }
    if (work && C == NULL) {
        return ACLBLAS_STATUS_INVALID_VALUE;
    }
    const float a = *alpha, b = *beta;
    const int noProduct = k == 0 || a == 0.0f;
    if (!work || (noProduct && b == 1.0f)) {
        return ACLBLAS_STATUS_SUCCESS;
    }
    for (int64_t batch = 0; batch < batchCount; ++batch) {
        const float *Ai = A + batch * strideA;
        const float *Bi = B + batch * strideB;
        float *Ci = C + batch * strideC;
        for (int64_t j = 0; j < n; ++j) {
            for (int64_t i = 0; i < m; ++i) {
                float *c = &Ci[i + j * (int64_t)ldc];
                float old = b == 0.0f ? 0.0f : b * *c;
                if (noProduct) {
                    *c = old;
                    continue;
                }
                float s = 0.0f;
                for (int64_t p = 0; p < k; ++p) {
                    s += op_at(Ai, lda, transA, i, p) * op_at(Bi, ldb, transB, p, j);
                }
                *c = b == 0.0f ? a * s : a * s + old;
            }
        }
    }
    return ACLBLAS_STATUS_SUCCESS;
}
