/*
 * Guard pages for the cpu backend's buffers, and a fault handler that names the buffer a stray access hit.
 *
 * fence_alloc maps   [PROT_NONE fence | read-write pages | PROT_NONE fence]   and returns the read-write start, so
 * an out-of-bounds access past the byte guard zones the harness checks lands on an inaccessible page: SIGSEGV, not
 * silent corruption. fence_map does the same with a file's pages in the middle (the row's shared memory, so the
 * operator writes the judge's bytes themselves, and there is no second copy of a row's buffers). The handler (SA_SIGINFO) looks the fault address up in the table of fences, writes one line
 * ("out-of-bounds write 800 bytes before C (guard page)") to <prefix><pid>, where the parent reads it, then
 * restores the default action and returns, so the access faults again and the worker dies of SIGSEGV as before.
 * The fences are shared mappings of one memfd sealed against writing (F_SEAL_WRITE), never anonymous memory: the
 * kernel refuses PROT_WRITE on them (mprotect fails with EACCES, MADV_REMOVE and hole punching too), so an operator
 * cannot make the page after C writable, write past C and protect it again. It could still unmap a fence and map
 * something else there (harness docs: isolation).
 * fence_free does not unmap: it turns the whole mapping into a fence (quarantine), so a thread the operator left
 * running that writes after its row ended also faults with a message, instead of scribbling on a later row.
 * A fault anywhere else (a NULL pointer, a wild pointer, a stack overflow) gets a note too: the address, and the
 * instruction that faulted as file+offset from /proc/self/maps ("... at pc in /path/libop.so+0x11a9"), so a CRASH
 * says whose code it was (the operator's library, the harness's, numpy's) and `addr2line` finds the line.
 * A SIGSEGV or SIGBUS that was sent (raise, kill) rather than caused by an access gets no note: it is sent again
 * under the default action, so the worker dies of it as it would without this handler.
 * The handler runs on an alternate stack (in the thread that installed it), so a stack overflow is reported too.
 *
 * Everything the handler does is async-signal-safe: open, read, write, close, getpid, sigaction, no stdio, no
 * malloc.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#define MAX_FENCES 4096
#define MAX_QUARANTINED 64  /* freed buffers kept inaccessible; older ones are unmapped */
#define NAME_LEN 48
#define FENCE_FILE_BYTES (1ULL << 32)  /* the largest fence (fence.py's MAX_FENCE_BYTES): address space only */

typedef struct {
    uintptr_t map_lo, map_hi;   /* the whole mapping, fences included; 0/0 = free slot */
    uintptr_t data_lo, data_hi; /* the read-write pages */
    uintptr_t span_lo, span_hi; /* the operator's data inside them (the harness's byte guard zones around it) */
    size_t map_len;
    unsigned long freed;        /* quarantined (the whole mapping is PROT_NONE): its sequence number, else 0 */
    char name[NAME_LEN];
} fence_t;

static fence_t fences[MAX_FENCES];
static unsigned long freed_count;
static char note_prefix[512];
static int installed;
static int fence_file = -1;  /* the sealed memfd every fence maps */

static size_t append(char *out, size_t at, size_t cap, const char *s)
{
    while (*s && at + 1 < cap) out[at++] = *s++;
    out[at] = 0;
    return at;
}

static size_t append_u(char *out, size_t at, size_t cap, uintptr_t v, int base)
{
    char digits[32];
    int n = 0;
    do { digits[n++] = "0123456789abcdef"[v % base]; v /= base; } while (v && n < 32);
    if (base == 16) at = append(out, at, cap, "0x");
    while (n && at + 1 < cap) out[at++] = digits[--n];
    out[at] = 0;
    return at;
}

static void write_note(const char *text)
{
    char path[600];
    size_t at = append(path, 0, sizeof path, note_prefix);
    append_u(path, at, sizeof path, (uintptr_t)getpid(), 10);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return;
    ssize_t ignored = write(fd, text, strlen(text));
    (void)ignored;
    close(fd);
}

static const char *access_kind(void *context)
{
#if defined(__x86_64__) && defined(REG_ERR)
    ucontext_t *uc = (ucontext_t *)context;
    return (uc->uc_mcontext.gregs[REG_ERR] & 2) ? "write" : "read";
#else
    (void)context;
    return "access";
#endif
}

static uintptr_t fault_pc(void *context)
{
    ucontext_t *uc = (ucontext_t *)context;
#if defined(__x86_64__) && defined(REG_RIP)
    return (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
    return (uintptr_t)uc->uc_mcontext.pc;
#else
    (void)uc;
    return 0;
#endif
}

static uintptr_t parse_hex(const char **p)
{
    uintptr_t v = 0;
    for (;; ++*p) {
        char c = **p;
        if (c >= '0' && c <= '9') v = v * 16 + (uintptr_t)(c - '0');
        else if (c >= 'a' && c <= 'f') v = v * 16 + (uintptr_t)(c - 'a' + 10);
        else return v;
    }
}

/* One /proc/self/maps line ("lo-hi perms offset dev inode path"): if it maps pc, append " in path+0xoff" (or the
   anonymous region's name, e.g. [stack]) and return 1. */
static int describe_line(const char *line, uintptr_t pc, char *out, size_t *at, size_t cap)
{
    const char *p = line;
    uintptr_t lo = parse_hex(&p);
    if (*p++ != '-') return 0;
    uintptr_t hi = parse_hex(&p);
    if (pc < lo || pc >= hi) return 0;
    while (*p == ' ') ++p;
    while (*p && *p != ' ') ++p;  /* perms */
    while (*p == ' ') ++p;
    uintptr_t offset = parse_hex(&p);
    for (int field = 0; field < 2; ++field) {  /* dev, inode */
        while (*p == ' ') ++p;
        while (*p && *p != ' ') ++p;
    }
    while (*p == ' ') ++p;
    *at = append(out, *at, cap, " in ");
    *at = append(out, *at, cap, *p ? p : "an anonymous mapping");
    *at = append(out, *at, cap, "+");
    *at = append_u(out, *at, cap, pc - lo + offset, 16);
    return 1;
}

/* Append where pc lies, by reading /proc/self/maps with plain read(2) into fixed buffers. */
static void describe_pc(uintptr_t pc, char *out, size_t *at, size_t cap)
{
    static char chunk[4096], line[1024];
    size_t used = 0;
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    ssize_t got;
    while ((got = read(fd, chunk, sizeof chunk)) > 0) {
        for (ssize_t i = 0; i < got; ++i) {
            if (chunk[i] != '\n') {
                if (used + 1 < sizeof line) line[used++] = chunk[i];
                continue;
            }
            line[used] = 0;
            used = 0;
            if (describe_line(line, pc, out, at, cap)) {
                close(fd);
                return;
            }
        }
    }
    close(fd);
}

/* The note for a fault outside every fence: what was accessed, and where the faulting instruction lies. */
static void note_wild_fault(int sig, uintptr_t addr, void *context)
{
    char text[1400];
    size_t at = append(text, 0, sizeof text, sig == SIGBUS ? "bus error: invalid " : "invalid ");
    at = append(text, at, sizeof text, access_kind(context));
    at = append(text, at, sizeof text, " of address ");
    at = append_u(text, at, sizeof text, addr, 16);
    if (addr < 4096) at = append(text, at, sizeof text, " (a NULL pointer)");
    uintptr_t pc = fault_pc(context);
    if (pc) {
        at = append(text, at, sizeof text, " at pc");
        describe_pc(pc, text, &at, sizeof text);
    }
    write_note(text);
}

static void on_fault(int sig, siginfo_t *info, void *context)
{
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    if (info->si_code <= 0) {
        /* sent, not a fault (raise, kill, tgkill, sigqueue): there is no access to re-execute, so the signal is sent
           again under the default action; it is blocked in this handler and kills the process as it returns */
        sigaction(sig, &dfl, NULL);
        raise(sig);
        return;
    }
    uintptr_t addr = (uintptr_t)info->si_addr;
    int on_fence = 0;
    for (int i = 0; i < MAX_FENCES; ++i) {
        const fence_t *f = &fences[i];
        if (f->map_hi == 0 || addr < f->map_lo || addr >= f->map_hi) continue;
        char text[256];
        size_t at = append(text, 0, sizeof text, "out-of-bounds ");
        at = append(text, at, sizeof text, access_kind(context));
        at = append(text, at, sizeof text, " ");
        if (f->freed) {
            at = append(text, at, sizeof text, "into buffer ");
            at = append(text, at, sizeof text, f->name);
            at = append(text, at, sizeof text, " after its row ended (a thread left running), offset ");
            at = append_u(text, at, sizeof text, addr - f->span_lo, 10);
        } else if (addr < f->data_lo) {
            at = append_u(text, at, sizeof text, f->span_lo - addr, 10);
            at = append(text, at, sizeof text, " bytes before ");
            at = append(text, at, sizeof text, f->name);
            at = append(text, at, sizeof text, " (guard page)");
        } else {
            at = append_u(text, at, sizeof text, addr - f->span_hi, 10);
            at = append(text, at, sizeof text, " bytes after the end of ");
            at = append(text, at, sizeof text, f->name);
            at = append(text, at, sizeof text, " (guard page)");
        }
        at = append(text, at, sizeof text, " at ");
        append_u(text, at, sizeof text, addr, 16);
        write_note(text);
        on_fence = 1;
        break;
    }
    if (!on_fence) note_wild_fault(sig, addr, context);
    sigaction(sig, &dfl, NULL);  /* returning re-executes the access, which now kills the process */
}

/* Install the handler for SIGSEGV and SIGBUS; notes go to <prefix><pid>. Returns 0 on success. */
int fence_install(const char *prefix)
{
    size_t n = strlen(prefix);
    if (n >= sizeof note_prefix) return -1;
    memcpy(note_prefix, prefix, n + 1);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    static char alt[1 << 16];
    stack_t stack = {.ss_sp = alt, .ss_size = sizeof alt, .ss_flags = 0};
    if (sigaltstack(&stack, NULL) != 0) return -1;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGSEGV, &sa, NULL) != 0 || sigaction(SIGBUS, &sa, NULL) != 0) return -1;
    installed = 1;
    return 0;
}

static void unmap_slot(int i)
{
    munmap((void *)fences[i].map_lo, fences[i].map_len);
    memset(&fences[i], 0, sizeof fences[i]);
}

/* Unmap the oldest quarantined mapping (its late writes are no longer watched); returns its slot or -1. */
static int evict_oldest(void)
{
    int oldest = -1;
    for (int i = 0; i < MAX_FENCES; ++i)
        if (fences[i].freed && (oldest < 0 || fences[i].freed < fences[oldest].freed)) oldest = i;
    if (oldest >= 0) unmap_slot(oldest);
    return oldest;
}

static int free_slot(void)
{
    for (int i = 0; i < MAX_FENCES; ++i)
        if (fences[i].map_hi == 0) return i;
    return evict_oldest();
}

/* The write-sealed memfd fences map (made once); -1 if the kernel has no sealing memfd. */
static int sealed_file(void)
{
    if (fence_file >= 0) return fence_file;
    int fd = memfd_create("harness-fence", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0) return -1;
    if (ftruncate(fd, (off_t)FENCE_FILE_BYTES) != 0
        || fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
        close(fd);
        return -1;
    }
    return fence_file = fd;
}

/* Turn [at, at + len) of a reservation into a sealed fence (a shared PROT_NONE mapping of the sealed memfd). */
static int seal_fence(char *at, size_t len)
{
    int fd = sealed_file();
    if (fd < 0 || len > FENCE_FILE_BYTES) return -1;
    return mmap(at, len, PROT_NONE, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED ? -1 : 0;
}

/* data_len read-write bytes (a multiple of the page size) between two PROT_NONE fences of fence_len bytes each
   (also a page multiple): anonymous memory when fd < 0, else the pages of file fd from file_offset (a page
   multiple), mapped shared, so the buffer IS that file's bytes (the row's shared memory: no copy of it), and
   populated, so the pages are resident in this process before the call as an uploaded copy's were (a call that
   only faults them in has not grown the worker: the leak check compares the resident bytes around it). name
   labels it in fault notes, whose distances count from the span_len bytes at span_offset inside it. Returns the
   read-write start, or NULL. */
static void *place(int fd, off_t file_offset, size_t data_len, size_t fence_len, const char *name,
                   size_t span_offset, size_t span_len)
{
    int slot = free_slot();
    if (slot < 0) return NULL;
    size_t total = data_len + 2 * fence_len;
    char *map = mmap(NULL, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (map == MAP_FAILED) return NULL;
    char *data = map + fence_len;
    int placed = !data_len || (fd < 0 ? mprotect(data, data_len, PROT_READ | PROT_WRITE) == 0
                                      : mmap(data, data_len, PROT_READ | PROT_WRITE,
                                             MAP_SHARED | MAP_FIXED | MAP_POPULATE, fd, file_offset) != MAP_FAILED);
    if (!placed || (fence_len && (seal_fence(map, fence_len) != 0 || seal_fence(data + data_len, fence_len) != 0))) {
        munmap(map, total);
        return NULL;
    }
    fence_t f;
    memset(&f, 0, sizeof f);
    f.map_lo = (uintptr_t)map;
    f.map_hi = (uintptr_t)map + total;
    f.map_len = total;
    f.data_lo = (uintptr_t)data;
    f.data_hi = f.data_lo + data_len;
    f.span_lo = f.data_lo + span_offset;
    f.span_hi = f.span_lo + span_len;
    size_t n = strlen(name);
    memcpy(f.name, name, n < NAME_LEN - 1 ? n : NAME_LEN - 1);
    fences[slot] = f;
    return data;
}

void *fence_alloc(size_t data_len, size_t fence_len, const char *name, size_t span_offset, size_t span_len)
{
    return place(-1, 0, data_len, fence_len, name, span_offset, span_len);
}

/* fence_alloc on the pages of fd from file_offset (see place). */
void *fence_map(int fd, size_t file_offset, size_t data_len, size_t fence_len, const char *name, size_t span_offset,
                size_t span_len)
{
    if (fd < 0) return NULL;
    return place(fd, (off_t)file_offset, data_len, fence_len, name, span_offset, span_len);
}

static fence_t *find(void *data)
{
    for (int i = 0; i < MAX_FENCES; ++i)
        if (fences[i].map_hi && fences[i].data_lo == (uintptr_t)data && !fences[i].freed) return &fences[i];
    return NULL;
}

/* Quarantine: the buffer becomes inaccessible and its pages are returned to the system; the address range stays
   reserved (the last MAX_QUARANTINED buffers), so a late write faults with a note instead of landing in a later
   row. */
int fence_free(void *data)
{
    fence_t *f = find(data);
    if (!f) return -1;
    size_t len = f->data_hi - f->data_lo;
    /* fresh PROT_NONE pages over the data: the pages go back to the system and a buffer mapped from a file lets
       go of it (a quarantined mapping must not keep a finished row's shared memory alive) */
    if (len && mmap((void *)f->data_lo, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1,
                    0) == MAP_FAILED) {
        mprotect((void *)f->data_lo, len, PROT_NONE);
        madvise((void *)f->data_lo, len, MADV_DONTNEED);
    }
    f->freed = ++freed_count;
    int quarantined = 0;
    for (int i = 0; i < MAX_FENCES; ++i) quarantined += fences[i].freed != 0;
    if (quarantined > MAX_QUARANTINED) evict_oldest();
    return 0;
}

/* Unmap every quarantined buffer (when the backend closes). */
void fence_release_freed(void)
{
    for (int i = 0; i < MAX_FENCES; ++i)
        if (fences[i].map_hi && fences[i].freed) unmap_slot(i);
}

int fence_installed(void) { return installed; }
