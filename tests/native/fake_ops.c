/*
 * A fake Ascend operator library for the fake ACL runtime (fake_acl.c): aclblasCsymm costs FAKE_OPS_HOST_US of
 * host time per call (argument checks, tiling), then enqueues FAKE_OPS_DEVICE_US of device work in
 * FAKE_OPS_LAUNCHES kernel launches (named aclblasCsymm_k<i>) on the handle's stream, on the runtime's clock
 * (fakeAclSpend: real or the model's virtual clock). The result itself is computed by the library named
 * in FAKE_OPS_COMPUTE (the CPU twin), as the last kernel's effect, which the runtime applies when the host next
 * touches device memory, so rows are checked like any row without that work landing in a timed region. A matrix
 * pointer not aligned as aclrtMalloc aligns is reported to the runtime's violation log.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct { float re, im; } cpx;
typedef int (*create_fn)(void **);
typedef int (*csymm_fn)(void *, int, int, int, int, const cpx *, const cpx *, int, const cpx *, int, const cpx *,
                        cpx *, int);
typedef struct { void *stream; void *compute; } handle_t;
typedef struct {
    int skip;
    void *compute;
    int side, uplo, m, n, lda, ldb, ldc;
    cpx alpha, beta;
    const cpx *A, *B;
    cpx *C;
} csymm_args;

/* The model's own functions, from the runtime the npu backend loaded ($ASCEND_HOME_PATH/lib64/libascendcl.so:
 * opened by path it is that same instance, where a link-time dependency could bind an older one). */
static int (*fakeAclLaunch)(void *stream, long long duration_ns, const char *name, void (*fn)(void *), void *ctx);
static int (*fakeAclViolation)(const char *what);
static void (*fakeAclSpend)(long long duration_ns);

static int bind_runtime(void)
{
    char path[4096];
    const char *home = getenv("ASCEND_HOME_PATH");
    snprintf(path, sizeof path, "%s/lib64/libascendcl.so", home ? home : ".");
    void *rt = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!rt) return 0;
    *(void **)&fakeAclLaunch = dlsym(rt, "fakeAclLaunch");
    *(void **)&fakeAclViolation = dlsym(rt, "fakeAclViolation");
    *(void **)&fakeAclSpend = dlsym(rt, "fakeAclSpend");
    return fakeAclLaunch && fakeAclViolation && fakeAclSpend;
}

/* aclrtMalloc returns 64-byte aligned memory (hicann/runtime docs/api_docs/aclrtMalloc.md) and the ops-blas frame
 * passes fresh allocations: a kernel may rely on that alignment, so a harness must keep it. */
static int misaligned(const void *p) { return p && ((uintptr_t)p % 64) != 0; }

static void *library(void)
{
    static void *lib;
    if (!lib && getenv("FAKE_OPS_COMPUTE")) lib = dlopen(getenv("FAKE_OPS_COMPUTE"), RTLD_NOW | RTLD_LOCAL);
    return lib;
}

static double env_num(const char *name, double fallback)
{
    const char *v = getenv(name);
    return v ? atof(v) : fallback;
}

int aclblasCreate(void **handle)
{
    void *lib = library();
    if (!handle || !lib || !bind_runtime()) return 9;
    handle_t *h = calloc(1, sizeof(handle_t));
    int status = ((create_fn)dlsym(lib, "aclblasCreate"))(&h->compute);
    if (status) { free(h); return status; }
    *handle = h;
    return 0;
}

int aclblasDestroy(void *handle)
{
    handle_t *h = handle;
    if (!h) return 9;
    ((int (*)(void *))dlsym(library(), "aclblasDestroy"))(h->compute);
    free(h);
    return 0;
}

int aclblasSetStream(void *handle, void *stream)
{
    if (!handle) return 9;
    ((handle_t *)handle)->stream = stream;
    return 0;
}

int aclblasSetWorkspace(void *handle, void *ws, size_t size) { (void)ws; (void)size; return handle ? 0 : 9; }

/* The newest effect not yet applied. A call with beta == 0 and the same arguments as it makes it redundant (C is
 * overwritten with the same values: A and B cannot have changed, a host write would have applied it), so it is
 * skipped: thousands of timed calls cost one computation. */
static csymm_args *last;

static int same_call(const csymm_args *x, const csymm_args *y)
{
    return x->compute == y->compute && x->side == y->side && x->uplo == y->uplo && x->m == y->m && x->n == y->n &&
           x->lda == y->lda && x->ldb == y->ldb && x->ldc == y->ldc && x->A == y->A && x->B == y->B &&
           x->C == y->C && x->alpha.re == y->alpha.re && x->alpha.im == y->alpha.im && x->beta.re == 0 &&
           x->beta.im == 0 && y->beta.re == 0 && y->beta.im == 0;
}

static void csymm_effect(void *ctx)
{
    csymm_args *a = ctx;
    if (last == a) last = NULL;
    if (!a->skip) {
        int status = ((csymm_fn)dlsym(library(), "aclblasCsymm"))(a->compute, a->side, a->uplo, a->m, a->n,
                                                                  &a->alpha, a->A, a->lda, a->B, a->ldb, &a->beta,
                                                                  a->C, a->ldc);
        if (status) fprintf(stderr, "fake ops: the computing library's aclblasCsymm returned %d\n", status);
    }
    free(a);
}

int aclblasCsymm(void *handle, int side, int uplo, int m, int n, const cpx *alpha, const cpx *A, int lda,
                 const cpx *B, int ldb, const cpx *beta, cpx *C, int ldc)
{
    handle_t *h = handle;
    if (!h) return 9;
    if (!alpha || !beta) return 2;
    if (misaligned(A) || misaligned(B) || misaligned(C)) {
        fakeAclViolation("aclblasCsymm: a matrix not 64-byte aligned as aclrtMalloc returns it");
        return 14;
    }
    long long host = (long long)(env_num("FAKE_OPS_HOST_US", 0) * 1000);
    long long device = (long long)(env_num("FAKE_OPS_DEVICE_US", 0) * 1000);
    int launches = (int)env_num("FAKE_OPS_LAUNCHES", 1);
    fakeAclSpend(host);
    csymm_args *a = malloc(sizeof(csymm_args));
    *a = (csymm_args){0, h->compute, side, uplo, m, n, lda, ldb, ldc, *alpha, *beta, A, B, C};
    if (last && same_call(last, a)) last->skip = 1;
    last = a;
    for (int i = 0; i < launches; i++) {
        char name[32];
        snprintf(name, sizeof name, "aclblasCsymm_k%d", i);
        int last = i == launches - 1;
        int status = fakeAclLaunch(h->stream, device / launches, name, last ? csymm_effect : NULL, last ? a : NULL);
        if (status) return 14;
    }
    return 0;
}
