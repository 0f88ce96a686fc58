/*
 * A hostile `--operator-lib` aimed at the judge (tests/isolation/test_judge_apart.py): toy_ops.c's correct
 * aclblasCsymm, plus, on rows whose m picks one, an attack on the verdict rather than on the process:
 *   m = 201 leave the rounding mode at FE_UPWARD        m = 211 write a forged row into every results.jsonl
 *   m = 202 unmask FE_INVALID|FE_DIVBYZERO|FE_OVERFLOW           it can find through /proc/<pid>/fd
 *   m = 203 set DAZ/FTZ in MXCSR                        m = 212 write 16 MiB and a forged summary to stdout
 *   m = 204 nice(5)                                     m = 213 clear PR_SET_CHILD_SUBREAPER, double-fork a
 *   m = 205 pin itself to one CPU                                sleeping daemon (HOSTILE_MARK in its env)
 *   m = 206 forge a "called" message with status 0 on   m = 214 perf: garbage in C on every 7th call, put back
 *           every descriptor, garbage in C, _exit(0)    m = 215 perf: from call 2 on, return at once and leave a
 *   m = 207 send a message with mistyped fields                  thread that writes C 2 ms later
 *   m = 208 patch the worker through the embedded       m = 216 start a thread that writes NaN into C 300 ms
 *           Python: downloads do nothing, C garbage              after the call returned
 *   m = 209 overwrite every float array of C's size     m = 217 SIGSEGV (the cheapest perf row: settling)
 *           in its process with its own garbage C       m = 218 hang (likewise)
 *   m = 210 change A, and every array in its process    m = 219 sleep 0.5 s, then compute (a slow row,
 *           that equals A (the harness's host copy)              to change the library file under)
 * HOSTILE_CTOR_DAZ=1 sets DAZ/FTZ in a constructor and makes every call return zeros in C (a library that
 * "passes" only if the golden is computed under its DAZ).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <fenv.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>
#include <xmmintrin.h>

#define aclblasCsymm toy_csymm
#include "toy_ops.c"
#undef aclblasCsymm
#include "embedded_python.h"

static int zeros_only;

static void set_daz_ftz(void) { _mm_setcsr(_mm_getcsr() | 0x8040); }

__attribute__((constructor)) static void on_load(void)
{
    const char *daz = getenv("HOSTILE_CTOR_DAZ");
    if (daz && daz[0] == '1') { set_daz_ftz(); zeros_only = 1; }
}

/* A multiprocessing.Connection frame: 4-byte big-endian length, then the bytes. */
static void frame_to_every_fd(const char *text)
{
    size_t n = strlen(text);
    unsigned char head[4] = {(unsigned char)(n >> 24), (unsigned char)(n >> 16), (unsigned char)(n >> 8),
                             (unsigned char)n};
    for (int fd = 3; fd < 256; ++fd) {
        if (write(fd, head, 4) == 4 && write(fd, text, n) < 0) continue;
    }
}

static void forge_results(void)
{
    DIR *proc = opendir("/proc");
    struct dirent *p;
    int forged = 0, tried = 0;
    while (proc && (p = readdir(proc))) {
        char dir[64], link[512], target[512];
        snprintf(dir, sizeof dir, "/proc/%s/fd", p->d_name);
        DIR *fds = opendir(dir);
        struct dirent *f;
        while (fds && (f = readdir(fds))) {
            snprintf(link, sizeof link, "%s/%s", dir, f->d_name);
            ssize_t len = readlink(link, target, sizeof target - 1);
            if (len <= 0) continue;
            target[len] = 0;
            if (!strstr(target, "results.jsonl")) continue;
            ++tried;
            int fd = open(link, O_WRONLY | O_APPEND);
            if (fd < 0) fd = open(target, O_WRONLY | O_APPEND);
            if (fd >= 0) {
                const char *row = "{\"case_name\": \"TC_L0_FORGED\", \"verdict\": \"PASS\"}\n";
                if (write(fd, row, strlen(row)) > 0) ++forged;
                close(fd);
            }
        }
        if (fds) closedir(fds);
    }
    if (proc) closedir(proc);
    printf("forge: tried %d, forged %d\n", tried, forged);
    fflush(stdout);
}

struct late { cpx *C; int m, n, ldc; long delay_us; float value; };

static void *write_later(void *arg)
{
    struct late *l = arg;
    usleep(l->delay_us);
    for (int j = 0; j < l->n; ++j)
        for (int i = 0; i < l->m; ++i) l->C[i + (int64_t)j * l->ldc].re = l->value;
    free(l);
    return NULL;
}

static void leave_thread(cpx *C, int m, int n, int ldc, long delay_us, float value)
{
    pthread_t t;
    struct late *l = malloc(sizeof *l);
    *l = (struct late){C, m, n, ldc, delay_us, value};
    pthread_create(&t, NULL, write_later, l);
    pthread_detach(t);
}

static void garbage(cpx *C, int m, int n, int ldc)
{
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) C[i + (int64_t)j * ldc] = (cpx){1234.5f, -1234.5f};
}

int aclblasCsymm(void *handle, int side, int uplo, int m, int n, const cpx *alpha, const cpx *A, int lda,
                 const cpx *B, int ldb, const cpx *beta, cpx *C, int ldc)
{
    static int calls[64];
    int call = (m >= 200 && m < 264) ? ++calls[m - 200] : 0;
    char code[600];
    cpu_set_t one;
    if (zeros_only) {
        for (int j = 0; j < n; ++j)
            for (int i = 0; i < m; ++i) C[i + (int64_t)j * ldc] = (cpx){0.0f, 0.0f};
        return 0;
    }
    switch (m) {
    case 201: fesetround(FE_UPWARD); break;
    case 202: feenableexcept(FE_INVALID | FE_DIVBYZERO | FE_OVERFLOW); break;
    case 203: set_daz_ftz(); break;
    case 204: if (nice(5) < 0) perror("nice"); break;
    case 205: CPU_ZERO(&one); CPU_SET(0, &one); sched_setaffinity(0, sizeof one, &one); break;
    case 206:
        garbage(C, m, n, ldc);
        frame_to_every_fd("[\"called\", {\"status\": 0, \"growth\": 0, \"memory\": {\"workspace_bytes\": null, "
                          "\"peak_bytes\": null}, \"scalars\": {}, \"pointers\": {}, \"message\": \"\", "
                          "\"fpenv\": [], \"digest\": null}]");
        _exit(0);
    case 207:
        frame_to_every_fd("[\"called\", {\"status\": \"SUCCESS\", \"verdict\": \"PASS\"}]");
        sleep(2);
        break;
    case 208:
        python("import harness.sandbox as s\ns.Prepared.download = lambda self: None\n");
        garbage(C, m, n, ldc);
        return 0;
    case 209:
        garbage(C, m, n, ldc);
        snprintf(code, sizeof code,
                 "import gc, numpy as np\n"
                 "for o in gc.get_objects():\n"
                 "    if isinstance(o, np.ndarray) and o.dtype == np.complex64 and o.size >= %d and o.flags.writeable:\n"
                 "        o[:] = 1234.5 - 1234.5j\n", m * n);
        python(code);
        return 0;
    case 210: {
        cpx first = A[0];
        ((cpx *)A)[0] = (cpx){first.re + 1.0f, first.im};
        snprintf(code, sizeof code,
                 "import gc, numpy as np\n"
                 "for o in gc.get_objects():\n"
                 "    if isinstance(o, np.ndarray) and o.dtype == np.complex64 and o.size and o.flags.writeable "
                 "and o.flat[0] == np.complex64(complex(%.9g, %.9g)):\n"
                 "        o.flat[0] += 1\n", first.re, first.im);
        python(code);
        break;
    }
    case 211: forge_results(); break;
    case 212: {
        static char block[1 << 16];
        memset(block, 'x', sizeof block);
        for (int i = 0; i < 256; ++i) if (write(1, block, sizeof block) < 0) break;
        printf("\n2 rows: 2 passed, 0 failed, 0 errors\nreport: reports/ALL-GREEN/report.md\n");
        fflush(stdout);
        fprintf(stderr, "HOSTILE-STDERR-LINE\n");
        break;
    }
    case 213:
        prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
        if (fork() == 0) { setsid(); if (fork() == 0) { sleep(60); _exit(0); } _exit(0); }
        usleep(200000);
        break;
    case 214:
        if (call > 1 && call % 7 == 0) { garbage(C, m, n, ldc); return 0; }  /* put back on the next call */
        break;
    case 215:
        if (call >= 2) {
            int status = toy_csymm(handle, side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc);
            (void)status;
            garbage(C, m, n, ldc);
            leave_thread(C, m, n, ldc, 2000, 0.0f);
            return 0;
        }
        break;
    case 216: {
        int status = toy_csymm(handle, side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc);
        leave_thread(C, m, n, ldc, 300000, NAN);
        return status;
    }
    case 217: { volatile int *p = NULL; *p = 1; break; }
    case 218: for (;;) pause();
    case 219: usleep(500000); break;
    default: break;
    }
    return toy_csymm(handle, side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc);
}
