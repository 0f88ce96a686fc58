/*
 * A hostile `--operator-lib` for the harness's own tests: a correct aclblasCsymm that, on rows whose m picks a
 * fault, also attacks the process it runs in. One table mixes faulty and good rows; every fault must be charged to
 * its own row and nothing may leak into the next one or into the harness's files.
 *   m = 101 alarm(1) left armed                  m = 109 fork a busy child and leave it running
 *   m = 102 SIGUSR1 handler installed            m = 110 write junk to every descriptor above 2
 *   m = 103 SIGTERM blocked in the signal mask   m = 111 raise(SIGKILL) (what the OOM killer does)
 *   m = 104 chdir("/")                           m = 112 _exit(0) in the middle of the call
 *   m = 105 setenv("HOSTILE_LEFT")               m = 113 fork a busy child, then spin forever itself
 *   m = 106 umask(0)                             m = 114 double-fork a daemon that leaves the process group
 *   m = 107 setitimer(ITIMER_REAL, 30 s)         m = 115 lower RLIMIT_NOFILE
 *   m = 108 fork (child sleeps holding every descriptor), then abort()
 * The library itself misbehaves on load and on handle management through the environment:
 *   HOSTILE_CTOR=exit0|segv|hang     in a constructor, i.e. while the library is being loaded
 *   HOSTILE_CREATE=exit0|segv|hang|fail   in aclblasCreate
 *   HOSTILE_DESTROY=exit0|segv|hang  in aclblasDestroy
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

typedef struct { float re, im; } cpx;

static void misbehave(const char *var)
{
    const char *how = getenv(var);
    if (!how) return;
    if (!strcmp(how, "exit0")) _exit(0);
    if (!strcmp(how, "segv")) { volatile int *p = NULL; *p = 1; }
    if (!strcmp(how, "hang")) for (;;) pause();
}

__attribute__((constructor)) static void on_load(void) { misbehave("HOSTILE_CTOR"); }

static void spin(void) { for (volatile unsigned long i = 0;; ++i) {} }
static void on_usr1(int sig) { (void)sig; }

int aclblasCreate(void **handle)
{
    misbehave("HOSTILE_CREATE");
    const char *how = getenv("HOSTILE_CREATE");
    if (how && !strcmp(how, "fail")) return 6;  /* ACLBLAS_STATUS_INTERNAL_ERROR */
    if (!handle) return 9;
    *handle = calloc(1, 16);
    return 0;
}

int aclblasDestroy(void *handle) { misbehave("HOSTILE_DESTROY"); free(handle); return 0; }
int aclblasSetStream(void *handle, void *stream) { (void)stream; return handle ? 0 : 9; }
int aclblasSetWorkspace(void *handle, void *ws, size_t size) { (void)ws; (void)size; return handle ? 0 : 9; }

static void attack(int m)
{
    struct itimerval timer = {{0, 0}, {30, 0}};
    struct rlimit files;
    sigset_t term;
    char junk[64];
    switch (m) {
    case 101: alarm(1); break;
    case 102: signal(SIGUSR1, on_usr1); break;
    case 103: sigemptyset(&term); sigaddset(&term, SIGTERM); sigprocmask(SIG_BLOCK, &term, NULL); break;
    case 104: if (chdir("/") != 0) abort(); break;
    case 105: setenv("HOSTILE_LEFT", "1", 1); break;
    case 106: umask(0); break;
    case 107: setitimer(ITIMER_REAL, &timer, NULL); break;
    case 108: if (fork() == 0) { sleep(60); _exit(0); } abort();
    case 109: if (fork() == 0) spin(); break;
    case 110:
        memset(junk, 0xA5, sizeof junk);
        for (int fd = 3; fd < 1024; ++fd) if (write(fd, junk, sizeof junk) < 0) continue;
        break;
    case 111: raise(SIGKILL); break;
    case 112: _exit(0);
    case 113: if (fork() == 0) spin(); spin(); break;
    case 114:
        if (fork() == 0) { setsid(); if (fork() == 0) { sleep(60); _exit(0); } _exit(0); }
        sleep(1);  /* let the middle process exit, so the daemon is an orphan outside the process group */
        break;
    case 115: getrlimit(RLIMIT_NOFILE, &files); files.rlim_cur = 64; setrlimit(RLIMIT_NOFILE, &files); break;
    default: break;
    }
}

static cpx cmul(cpx a, cpx b) { cpx r = {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re}; return r; }

static cpx sym_at(const cpx *A, int lda, int upper, int i, int k)
{
    if ((upper && i > k) || (!upper && i < k)) { int t = i; i = k; k = t; }
    return A[i + (int64_t)k * lda];
}

int aclblasCsymm(void *handle, int side, int uplo, int m, int n, const cpx *alpha, const cpx *A, int lda,
                 const cpx *B, int ldb, const cpx *beta, cpx *C, int ldc)
{
    if (!handle) return 9;
    if ((side != 141 && side != 142) || (uplo != 121 && uplo != 122)) return 10;
    if (m < 0 || n < 0 || !alpha || !beta) return 3;
    int ka = side == 141 ? m : n;
    if (lda < (ka > 1 ? ka : 1) || ldb < (m > 1 ? m : 1) || ldc < (m > 1 ? m : 1)) return 3;
    if (m == 0 || n == 0) return 0;
    attack(m);
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
    return 0;
}

int aclblasSgemmStridedBatched(void *handle, int ta, int tb, int m, int n, int k, const float *alpha,
                               const float *A, int lda, int64_t sa, const float *B, int ldb, int64_t sb,
                               const float *beta, float *C, int ldc, int64_t sc, int batch)
{
    (void)ta; (void)tb; (void)m; (void)n; (void)k; (void)alpha; (void)A; (void)lda; (void)sa; (void)B; (void)ldb;
    (void)sb; (void)beta; (void)C; (void)ldc; (void)sc; (void)batch;
    return handle ? 7 : 9;  /* ACLBLAS_STATUS_NOT_SUPPORTED: only csymm rows are hostile */
}
