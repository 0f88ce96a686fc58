/*
 * A hostile `--operator-lib` aimed at the calls the judge does not check (tests/isolation/test_calls_judged.py,
 * issue 37 class 1): toy_ops.c's correct aclblasCsymm on its first call (the checked one), then, on rows whose m picks one:
 *   m = 221 every later call returns ACLBLAS_STATUS_EXECUTION_FAILED at once (C is right from the checked call)
 *   m = 222 call 2 (the first warm-up call) writes garbage into C, call 3 puts C back
 *   m = 223 call 2 writes into C's ld padding (the row has ldc > m), call 3 puts it back
 *   m = 224 call 2 writes one element past C (its guard zone), call 3 puts it back
 *   m = 225 (beta != 0) does nothing on calls 2..12; later, the real work only when C holds its input again (the
 *           re-check after the timed loop, which puts C back): on main the timed calls see the accumulated C
 *   m = 226 patches the harness's timing through the embedded Python on its first call (every sample reported
 *           at 1/1000), and sleeps 100 ms in every call, so its true time is far from its figures
 *   m = 227 sleeps 5 ms in every call and patches nothing (the row timed after 226's)
 *   m = 228 not an attack: correct, but every other call one ulp off in C[0] (a result that differs from call to
 *           call within the tolerance, as a non-deterministic reduction gives)
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define aclblasCsymm toy_csymm
#include "toy_ops.c"
#undef aclblasCsymm

#include "embedded_python.h"

static cpx saved[1 << 16];
static cpx *input_c;

int aclblasCsymm(void *handle, int side, int uplo, int m, int n, const cpx *alpha, const cpx *A, int lda,
                 const cpx *B, int ldb, const cpx *beta, cpx *C, int ldc)
{
    static int calls[16];
    int call = (m >= 220 && m < 236) ? ++calls[m - 220] : 0;
    size_t elems = (size_t)ldc * n;
    switch (m) {
    case 221:
        if (call > 1) return 5;
        break;
    case 222: case 223: case 224: {
        cpx *at = m == 222 ? C : m == 223 ? C + m : C + elems;  /* data, padding below row m, past the end */
        if (call == 2) { saved[0] = *at; *at = (cpx){1234.5f, -1234.5f}; return 0; }
        if (call == 3) { *at = saved[0]; return 0; }
        if (call > 3) return 0;  /* C is still the checked call's result */
        break;
    }
    case 225:
        if (call == 1) {
            input_c = malloc(elems * sizeof(cpx));
            memcpy(input_c, C, elems * sizeof(cpx));
            break;
        }
        if (call <= 12 || memcmp(input_c, C, elems * sizeof(cpx)) != 0) return 0;
        break;
    case 226:
        if (call == 1)
            python("import harness.perf.timing as t\n"
                   "if not getattr(t.Sampler, 'hostile', False):\n"
                   "    real = t.Sampler.sample\n"
                   "    t.Sampler.sample = lambda self: real(self) / 1000\n"
                   "    t.Sampler.hostile = True\n");
        usleep(100000);
        break;
    case 227:
        usleep(5000);
        break;
    case 228: {
        int status = toy_csymm(handle, side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc);
        if (call % 2 == 0) C[0].re = nextafterf(C[0].re, INFINITY);
        return status;
    }
    default:
        break;
    }
    return toy_csymm(handle, side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc);
}
