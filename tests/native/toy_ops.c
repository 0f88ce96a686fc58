/*
 * A small, slow, independent implementation of the ops-blas C ABI used by the harness's own tests as an
 * `--operator-lib`. Its faults are switched by the environment so one build serves every negative control:
 *   TOY_CONJ_A=1     conjugate A (Hermitian instead of symmetric): precision rows must FAIL
 *   TOY_IGNORE_LD=1  treat lda as the matrix order (ignores ld padding): padded rows must FAIL
 *   TOY_CRASH_M=<m>  csymm with this m dereferences NULL: the row must be CRASH, the run goes on
 *   TOY_HANG_M=<m>   csymm with this m never returns: the row must be TIMEOUT, the run goes on
 *   TOY_OOB_M=<m>    csymm with this m writes one element past C: the guard check must FAIL the row
 * Validation follows the csymm seed's order only as far as the tests need; it is not a reference.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct { float re, im; } cpx;
typedef struct { int unused; } toy_handle;

static int env_int(const char *name) { const char *v = getenv(name); return v ? atoi(v) : -1; }

int aclblasCreate(void **handle) { if (!handle) return 9; *handle = calloc(1, sizeof(toy_handle)); return 0; }
int aclblasDestroy(void *handle) { free(handle); return 0; }
int aclblasSetStream(void *handle, void *stream) { (void)stream; return handle ? 0 : 9; }
int aclblasSetWorkspace(void *handle, void *ws, size_t size) { (void)ws; (void)size; return handle ? 0 : 9; }

static cpx cmul(cpx a, cpx b) { cpx r = {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re}; return r; }

static cpx sym_at(const cpx *A, int lda, int upper, int i, int k)
{
    int row = i, col = k;
    if ((upper && i > k) || (!upper && i < k)) { row = k; col = i; }
    cpx v = A[row + (int64_t)col * lda];
    if (env_int("TOY_CONJ_A") == 1 && row != col) v.im = -v.im;
    return v;
}

int aclblasCsymm(void *handle, int side, int uplo, int m, int n, const cpx *alpha, const cpx *A, int lda,
                 const cpx *B, int ldb, const cpx *beta, cpx *C, int ldc)
{
    if (!handle) return 9;
    if (side != 141 && side != 142) return 10;
    if (uplo != 121 && uplo != 122) return 10;
    if (m < 0 || n < 0 || !alpha || !beta) return 3;
    int ka = side == 141 ? m : n;
    if (lda < (ka > 1 ? ka : 1) || ldb < (m > 1 ? m : 1) || ldc < (m > 1 ? m : 1)) return 3;
    if (m == 0 || n == 0) return 0;
    if (m == env_int("TOY_CRASH_M")) { volatile int *p = NULL; *p = 1; }
    if (m == env_int("TOY_HANG_M")) { for (;;) pause(); }
    if (env_int("TOY_IGNORE_LD") == 1) lda = ka;
    int upper = uplo == 121;
    for (int j = 0; j < n; ++j) {
        for (int i = 0; i < m; ++i) {
            cpx acc = {0, 0};
            for (int p = 0; p < ka; ++p) {
                cpx t = side == 141 ? cmul(sym_at(A, lda, upper, i, p), B[p + (int64_t)j * ldb])
                                    : cmul(B[i + (int64_t)p * ldb], sym_at(A, lda, upper, p, j));
                acc.re += t.re; acc.im += t.im;
            }
            cpx out = cmul(*alpha, acc);
            if (beta->re != 0 || beta->im != 0) {
                cpx old = cmul(*beta, C[i + (int64_t)j * ldc]);
                out.re += old.re; out.im += old.im;
            }
            C[i + (int64_t)j * ldc] = out;
        }
    }
    if (m == env_int("TOY_OOB_M")) C[(int64_t)(n - 1) * ldc + ldc] = C[0];
    return 0;
}

int aclblasSgemmStridedBatched(void *handle, int ta, int tb, int m, int n, int k, const float *alpha,
                               const float *A, int lda, int64_t sa, const float *B, int ldb, int64_t sb,
                               const float *beta, float *C, int ldc, int64_t sc, int batch)
{
    if (!handle) return 9;
    if (ta < 111 || ta > 113 || tb < 111 || tb > 113) return 3;
    if (m < 0 || n < 0 || k < 0 || batch < 0 || !alpha || !beta) return 3;
    for (int b = 0; b < batch; ++b) {
        const float *a = A + b * sa, *bb = B + b * sb;
        float *c = C + b * sc;
        for (int j = 0; j < n; ++j) {
            for (int i = 0; i < m; ++i) {
                float acc = 0;
                for (int p = 0; p < k; ++p) {
                    float x = ta == 111 ? a[i + (int64_t)p * lda] : a[p + (int64_t)i * lda];
                    float y = tb == 111 ? bb[p + (int64_t)j * ldb] : bb[j + (int64_t)p * ldb];
                    acc += x * y;
                }
                c[i + (int64_t)j * ldc] = *alpha * acc + (*beta != 0 ? *beta * c[i + (int64_t)j * ldc] : 0);
            }
        }
    }
    return 0;
}
