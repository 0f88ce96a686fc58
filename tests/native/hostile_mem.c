/*
 * A hostile operator library for the harness's own tests: a correct (slow, simple) csymm and sgemm strided batched
 * with memory faults switched per row. A row selects its fault by its csymm m: HOSTILE_<FAULT>_M=<m> in the
 * environment arms <FAULT> for calls with that m; every other call is correct, so the good rows around a faulty one
 * must PASS. Faults:
 *   BEFORE     write 800 bytes before C (past the byte guard zone)
 *   AFTER      write 64 KiB after the end of C (far past it)
 *   LATE       return correctly, leaving a thread that overwrites C's guard zone 20 ms later
 *   ALPHA      overwrite the const alpha scalar;  BETA: the const beta scalar
 *   WRITE_A    write into A (an input)
 *   NOTHING    return SUCCESS without writing C
 *   NAN        write NaN over C
 *   LATER      correct on the first call for that m; on later calls wrong values and a write just past C
 *   LEAK       leak 200 MB (touched) per call
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct { float re, im; } cpx;
typedef struct { int unused; } toy_handle;

static int armed(const char *fault, int m)
{
    char name[64] = "HOSTILE_";
    strncat(name, fault, sizeof name - 12);
    strcat(name, "_M");
    const char *v = getenv(name);
    return v && atoi(v) == m;
}

int aclblasCreate(void **handle) { if (!handle) return 9; *handle = calloc(1, sizeof(toy_handle)); return 0; }
int aclblasDestroy(void *handle) { free(handle); return 0; }
int aclblasSetStream(void *handle, void *stream) { (void)stream; return handle ? 0 : 9; }
int aclblasSetWorkspace(void *handle, void *ws, size_t size) { (void)ws; (void)size; return handle ? 0 : 9; }

static cpx cmul(cpx a, cpx b) { cpx r = {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re}; return r; }

static cpx sym_at(const cpx *A, int lda, int upper, int i, int k)
{
    if ((upper && i > k) || (!upper && i < k)) { int t = i; i = k; k = t; }
    return A[i + (int64_t)k * lda];
}

static void *late_writer(void *target)
{
    usleep(20000);
    memset(target, 0x77, 16);
    return NULL;
}

void *hostile_leaked;  /* global, so the compiler cannot drop the allocation as dead */

static void leak(void)
{
    size_t n = 200u << 20;
    char *p = malloc(n);
    if (!p) return;
    memset(p, 1, n);
    *(void **)p = hostile_leaked;
    hostile_leaked = p;
}

int aclblasCsymm(void *handle, int side, int uplo, int m, int n, const cpx *alpha, const cpx *A, int lda,
                 const cpx *B, int ldb, const cpx *beta, cpx *C, int ldc)
{
    static int later_calls;
    if (!handle) return 9;
    if (side != 141 && side != 142) return 10;
    if (uplo != 121 && uplo != 122) return 10;
    if (m < 0 || n < 0 || !alpha || !beta) return 3;
    int ka = side == 141 ? m : n;
    if (lda < (ka > 1 ? ka : 1) || ldb < (m > 1 ? m : 1) || ldc < (m > 1 ? m : 1)) return 3;
    if (m == 0 || n == 0) return 0;
    if (armed("NOTHING", m)) return 0;
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
    char *c_bytes = (char *)C;
    size_t c_span = ((size_t)(n - 1) * ldc + m) * sizeof(cpx);
    if (armed("BEFORE", m)) c_bytes[-800] = 1;
    if (armed("AFTER", m)) c_bytes[c_span + (64 << 10)] = 1;
    if (armed("ALPHA", m)) ((cpx *)alpha)->re += 1;
    if (armed("BETA", m)) ((cpx *)beta)->im = -7;
    if (armed("WRITE_A", m)) ((cpx *)A)[0].re += 1;
    if (armed("NAN", m)) for (int j = 0; j < n; ++j) C[(int64_t)j * ldc].re = NAN;
    if (armed("LEAK", m)) leak();
    if (armed("LATER", m) && later_calls++ > 0) {
        C[0].re += 1000;
        c_bytes[c_span] = 1;
    }
    if (armed("LATE", m)) {
        pthread_t t;
        if (pthread_create(&t, NULL, late_writer, c_bytes - 16) == 0) pthread_detach(t);
    }
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
