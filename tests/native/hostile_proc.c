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
 * The arithmetic is toy_ops.c's (included, its own entry points renamed). The library itself misbehaves on load
 * and on handle management through the environment:
 *   HOSTILE_CTOR=exit0|segv|hang     in a constructor, i.e. while the library is being loaded
 *   HOSTILE_CREATE=exit0|segv|hang|fail   in aclblasCreate
 *   HOSTILE_DESTROY=exit0|segv|hang  in aclblasDestroy
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#define aclblasCreate toy_create
#define aclblasDestroy toy_destroy
#define aclblasCsymm toy_csymm
#include "toy_ops.c"
#undef aclblasCreate
#undef aclblasDestroy
#undef aclblasCsymm

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
    return toy_create(handle);
}

int aclblasDestroy(void *handle) { misbehave("HOSTILE_DESTROY"); return toy_destroy(handle); }

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

int aclblasCsymm(void *handle, int side, int uplo, int m, int n, const cpx *alpha, const cpx *A, int lda,
                 const cpx *B, int ldb, const cpx *beta, cpx *C, int ldc)
{
    if (handle && m > 100) attack(m);
    return toy_csymm(handle, side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc);
}
