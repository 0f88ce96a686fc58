/*
 * A hostile `--operator-lib` for the harness's own tests: toy_ops.c's correct csymm that, on rows whose m picks an
 * attack, goes for the channels its worker's results travel to the judge by (tests/isolation/test_channels.py):
 *   m = 301 a FIFO in the worker's fault-note directory, then abort()
 *   m = 302 a symlink there to /proc/self/environ (the reader's own environment), then abort()
 *   m = 311 a symlink there to $HOSTILE_SECRET_FILE (a file only root may read), then abort()
 *   m = 303 a 200 GiB sparse file there, then abort()
 *   m = 304 a frame header promising 1000 bytes on the worker's socket, 10 of them, then wait forever
 *   m = 305 shrink the row's shared memory (memfd) to 0 and map anonymous memory over the worker's view of it, so
 *           the worker itself writes on and sends its message; only the judge's mapping is left truncated
 *   m = 306 patch the worker's timing code to send a NaN mean       (perf rows)
 *   m = 307 ... samples that are strings                            (perf rows)
 *   m = 308 ... a 400-deep list in the record                       (perf rows)
 *   m = 309 fail with a last-error message holding ESC[2J, an OSC title sequence and a bidi override, and print
 *           escape sequences to stdout
 *   m = 310 raise(SIGSEGV): a plain crash, not a memory fault
 * Every other row is correct, so the good rows around an attack must PASS.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define aclblasCsymm toy_csymm
#include "toy_ops.c"
#undef aclblasCsymm
#include "embedded_python.h"

static const char *last_message = "";

const char *aclblasTwinGetLastMessage(void *handle)
{
    (void)handle;
    return last_message;
}

/* <the worker's note directory>/<name> */
static void note_path(char *out, size_t cap, const char *name)
{
    const char *prefix = getenv("HARNESS_FAULT_NOTE_PREFIX");
    snprintf(out, cap, "%s%s", prefix ? prefix : "/tmp/harness-fault-x-", name);
}

static void partial_frame(void)
{
    unsigned char head[4] = {0, 0, 0x03, 0xe8};  /* 1000 bytes, big-endian */
    for (int fd = 3; fd < 256; ++fd) {
        struct stat st;
        if (fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
        if (write(fd, head, 4) == 4 && write(fd, "0123456789", 10) < 0) continue;
    }
    for (;;) pause();
}

/* Truncate the row's memfd and put anonymous memory where the worker maps it: returns 0 when it could not. */
static int truncate_shared(void)
{
    int done = 0;
    for (int fd = 3; fd < 256; ++fd) {
        char link[64], target[256];
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        ssize_t n = readlink(link, target, sizeof target - 1);
        if (n <= 0) continue;
        target[n] = 0;
        if (strstr(target, "memfd:harness-row") && ftruncate(fd, 0) == 0) done = 1;
    }
    if (!done) return 0;
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[512];
    while (maps && fgets(line, sizeof line, maps)) {
        unsigned long lo, hi;
        if (!strstr(line, "memfd:harness-row") || sscanf(line, "%lx-%lx", &lo, &hi) != 2) continue;
        mmap((void *)lo, hi - lo, PROT_READ | PROT_WRITE, MAP_FIXED | MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    }
    if (maps) fclose(maps);
    return 1;
}

static void forge_timing(const char *how)
{
    char code[1024];
    snprintf(code, sizeof code,
             "import harness.perf.timing as t\n"
             "if not hasattr(t, '_real'):\n"
             "    t._real = t.measure_scopes\n"
             "def forged(*a, **k):\n"
             "    r = t._real(*a, **k)\n"
             "    deep = []\n"
             "    for _ in range(400): deep = [deep]\n"
             "    %s\n"
             "    return r\n"
             "t.measure_scopes = forged\n", how);
    python(code);
}

int aclblasCsymm(void *handle, int side, int uplo, int m, int n, const cpx *alpha, const cpx *A, int lda,
                 const cpx *B, int ldb, const cpx *beta, cpx *C, int ldc)
{
    char path[512];
    switch (m) {
    case 301:
        note_path(path, sizeof path, "fifo");
        mkfifo(path, 0600);
        abort();
    case 302:
        note_path(path, sizeof path, "environ");
        if (symlink("/proc/self/environ", path) != 0) perror("symlink");
        abort();
    case 311:
        note_path(path, sizeof path, "secret");
        if (symlink(getenv("HOSTILE_SECRET_FILE") ? getenv("HOSTILE_SECRET_FILE") : "/etc/shadow", path) != 0)
            perror("symlink");
        abort();
    case 303: {
        note_path(path, sizeof path, "big");
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd >= 0 && ftruncate(fd, (off_t)200 << 30) != 0) perror("ftruncate");
        abort();
    }
    case 304: partial_frame(); break;
    case 305:
        if (truncate_shared()) fprintf(stderr, "truncated the row's shared memory\n");
        break;
    case 306: forge_timing("r['mean_us'] = float('nan')"); break;
    case 307: forge_timing("r['samples_us'] = ['fast'] * r['n']"); break;
    case 308: forge_timing("r['modes_us'] = deep"); break;
    case 309:
        last_message = "\x1b[2J\x1b]0;owned\x07" "\xe2\x80\xae" "EVIL";
        printf("captured \x1b]0;captured-title\x07 \x1b[31mred\n");
        fflush(stdout);
        return 7;  /* ACLBLAS_STATUS_EXECUTION_FAILED */
    case 310: raise(SIGSEGV); break;
    default: break;
    }
    return toy_csymm(handle, side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc);
}
