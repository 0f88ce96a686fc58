/*
 * A hostile operator library for the harness's own tests: toy_ops.c's correct csymm and sgemm strided batched
 * (included below) with memory faults added around csymm, switched per row. A row selects its fault by its csymm m: HOSTILE_<FAULT>_M=<m> in the
 * environment arms <FAULT> for calls with that m; every other call is correct, so the good rows around a faulty one
 * must PASS (a comma-separated list of m arms it for several rows). Faults:
 *   BEFORE     write 800 bytes before C (past the byte guard zone)
 *   AFTER      write 64 KiB after the end of C (far past it)
 *   LATE       return correctly, leaving a thread that overwrites C's guard zone 20 ms later
 *   ALPHA      overwrite the const alpha scalar;  BETA: the const beta scalar
 *   WRITE_A    write into A (an input)
 *   NOTHING    return SUCCESS without writing C
 *   NAN        write NaN over C
 *   LATER      correct on the first call for that m; on later calls wrong values and a write just past C
 *   DRIFT      correct on the first call for that m; on later calls wrong values (in bounds)
 *   LEAK       leak 200 MB (touched) per call
 */
#define aclblasCsymm toy_csymm  /* the correct arithmetic is toy_ops.c's; this file adds the faults around it */
#include "toy_ops.c"
#undef aclblasCsymm

#include <math.h>
#include <pthread.h>

static int armed(const char *fault, int m)
{
    char name[64] = "HOSTILE_";
    strncat(name, fault, sizeof name - 12);
    strcat(name, "_M");
    for (const char *v = getenv(name); v && *v; v = strchr(v, ',') ? strchr(v, ',') + 1 : NULL)
        if (atoi(v) == m) return 1;
    return 0;
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
    static int calls_for_m[256];
    int later = m > 0 && calls_for_m[m % 256]++ > 0;
    if (armed("NOTHING", m)) return 0;
    int status = toy_csymm(handle, side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc);
    if (status != 0 || m <= 0 || n <= 0) return status;
    char *c_bytes = (char *)C;
    size_t c_span = ((size_t)(n - 1) * ldc + m) * sizeof(cpx);
    if (armed("BEFORE", m)) c_bytes[-800] = 1;
    if (armed("AFTER", m)) c_bytes[c_span + (64 << 10)] = 1;
    if (armed("ALPHA", m)) ((cpx *)alpha)->re += 1;
    if (armed("BETA", m)) ((cpx *)beta)->im = -7;
    if (armed("WRITE_A", m)) ((cpx *)A)[0].re += 1;
    if (armed("NAN", m)) for (int j = 0; j < n; ++j) C[(int64_t)j * ldc].re = NAN;
    if (armed("LEAK", m)) leak();
    if (armed("LATER", m) && later) {
        C[0].re += 1000;
        c_bytes[c_span] = 1;
    }
    if (armed("DRIFT", m) && later) C[0].re += 1000;
    if (armed("LATE", m)) {
        pthread_t t;
        if (pthread_create(&t, NULL, late_writer, c_bytes - 16) == 0) pthread_detach(t);
    }
    return 0;
}
