/*
 * A hostile `--operator-lib` aimed at what lies outside the worker (tests/isolation/test_reach.py): toy_ops.c's correct
 * aclblasCsymm, plus, on rows whose m picks one, an attempt to reach the harness's files or the machine:
 *   m = 301 chmod 0 every path listed (colon-separated) in HOSTILE_PATHS: the table, the history database
 *   m = 302 open the file in HOSTILE_LOCK read-only and take a POSIX read lock over the whole of it and of its
 *           -wal and -shm files (SQLite's lock bytes), and keep them (the descriptors stay open)
 *   m = 303 create a 1 MiB SysV shared-memory segment under the key in HOSTILE_SHM_KEY and leave it
 *   m = 304 make the page after C writable with mprotect, write past C, protect it again (returns C correct);
 *           if the kernel refuses the mprotect, the write is made anyway (a library that trusted it)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/stat.h>

#define aclblasCsymm toy_csymm
#include "toy_ops.c"
#undef aclblasCsymm

static void chmod_all(const char *list)
{
    char paths[4096];
    if (!list || strlen(list) >= sizeof paths) return;
    strcpy(paths, list);
    for (char *p = strtok(paths, ":"); p; p = strtok(NULL, ":")) chmod(p, 0);
}

static void read_lock(const char *path)
{
    static const char *suffix[] = {"", "-wal", "-shm"};
    char name[4096];
    for (int i = 0; path && i < 3; ++i) {
        snprintf(name, sizeof name, "%s%s", path, suffix[i]);
        int fd = open(name, O_RDONLY);
        struct flock lock = {.l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
        if (fd >= 0) fcntl(fd, F_SETLK, &lock);  /* kept: the descriptor is never closed */
    }
}

static void leave_segment(const char *key)
{
    if (!key) return;
    int id = shmget((key_t)atoi(key), 1 << 20, IPC_CREAT | 0600);
    if (id >= 0) {
        char *at = shmat(id, NULL, 0);
        if (at != (void *)-1) { memset(at, 0x5A, 4096); shmdt(at); }
    }
}

/* The end of the mapping that holds `p` (from /proc/self/maps): where the guard after it begins. */
static uintptr_t mapping_end(uintptr_t p)
{
    FILE *maps = fopen("/proc/self/maps", "r");
    unsigned long lo, hi;
    uintptr_t end = 0;
    char line[512];
    while (maps && fgets(line, sizeof line, maps))
        if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && lo <= p && p < hi) { end = hi; break; }
    if (maps) fclose(maps);
    return end;
}

static void write_past(cpx *C, int ldc, int n)
{
    uintptr_t last = (uintptr_t)(C + (int64_t)ldc * n) - 1, guard = mapping_end(last);
    if (!guard) return;
    mprotect((void *)guard, 4096, PROT_READ | PROT_WRITE);
    memset((void *)guard, 0xAB, 64);
    mprotect((void *)guard, 4096, PROT_NONE);
}

int aclblasCsymm(void *handle, int side, int uplo, int m, int n, const cpx *alpha, const cpx *A, int lda,
                 const cpx *B, int ldb, const cpx *beta, cpx *C, int ldc)
{
    int status = toy_csymm(handle, side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc);
    if (!handle || status) return status;
    switch (m) {
    case 301: chmod_all(getenv("HOSTILE_PATHS")); break;
    case 302: read_lock(getenv("HOSTILE_LOCK")); break;
    case 303: leave_segment(getenv("HOSTILE_SHM_KEY")); break;
    case 304: write_past(C, ldc, n); break;
    default: break;
    }
    return status;
}
