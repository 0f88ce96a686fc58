/*
 * A model of the ACL runtime's device timeline, built as a fake libascendcl.so for the npu backend's tests.
 *
 * Device memory is host memory. A stream is a queue of tasks with device durations on the host's monotonic clock:
 * a task starts when it is enqueued or when the task before it ends, whichever is later, so the device idles
 * while the host is still enqueuing. An event is timestamped when its stream reaches it (aclrtRecordEvent captures
 * the tasks before it). aclrtWaitAndResetNotify holds its stream until aclrtRecordNotify on another stream
 * releases it; the tasks queued behind it start at the release. Synchronising spins until the timeline is done.
 * A kernel's effect on memory (the operator's real result) is applied lazily, when the host next reads or writes
 * device memory, so computing it costs no time inside a timed region.
 *
 * What the ACL documentation forbids is a violation here: a line on stderr and in $FAKE_ACL_VIOLATIONS, and an
 * error code: aclrtFree or aclrtDestroyStream with tasks not yet synchronised, any call after aclFinalize, a
 * synchronisation that could only end in the notify timeout. aclrtMalloc aligns as documented (64-byte start,
 * size rounded up to 32 bytes plus 32). aclFinalize waits 2 s for the device log flush unless
 * ASCEND_LOG_DEVICE_FLUSH_TIMEOUT=0. Each kernel is logged to $FAKE_ACL_TASK_LOG (name, stream, start, end in ns)
 * for the fake msprof. fakeAclViolation lets the fake operator library report what it finds (a misaligned
 * pointer).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ERR_MODEL 507899      /* the model's code for a documented misuse */
#define ERR_TIMEOUT 507046    /* a wait that could only time out */
#define MAX_STREAMS 64

typedef long long ns_t;
typedef struct Task {
    int is_event;
    ns_t duration;
    struct Event *event;
    char name[64];
    struct Task *next;
} Task;
typedef struct Notify { int recorded; ns_t at; struct Stream *waiter; } Notify;
typedef struct Stream {
    int live;
    ns_t tail;                /* when the last timed task ends */
    Notify *held_by;          /* set while a wait on an unrecorded notify holds the stream */
    Task *queue, *queue_end;  /* tasks behind the hold, timed at the release */
    long long seq, synced;    /* tasks enqueued / covered by a synchronisation */
} Stream;
typedef struct Event { ns_t at; int timed; Stream *stream; long long seq; } Event;
typedef struct Effect { void (*fn)(void *); void *ctx; struct Effect *next; } Effect;

static Stream streams[MAX_STREAMS];
static Effect *effects, *effects_end;
static size_t used;
static int inits, finalized, device_set;

/* The model's clock: the host's monotonic clock, or with FAKE_ACL_CLOCK=virtual one that moves only by what the
 * model costs (fakeAclSpend, a synchronisation waiting for the device), so figures are exact on a loaded machine. */
static int virtual_clock = -1;
static ns_t virtual_now;

ns_t fakeAclNow(void)
{
    if (virtual_clock < 0) {
        const char *mode = getenv("FAKE_ACL_CLOCK");
        virtual_clock = mode && strcmp(mode, "virtual") == 0;
    }
    if (virtual_clock) return virtual_now;
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (ns_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

#define now fakeAclNow

static void spin_until(ns_t t)
{
    if (now() >= t) return;
    if (virtual_clock) virtual_now = t;
    while (now() < t) { }
}

/* Host time spent by a caller (the fake operator library's per-call cost). */
void fakeAclSpend(ns_t duration) { spin_until(now() + duration); }

int fakeAclViolation(const char *what)
{
    fprintf(stderr, "fake ACL: %s\n", what);
    const char *path = getenv("FAKE_ACL_VIOLATIONS");
    FILE *f = path ? fopen(path, "a") : NULL;
    if (f) { fprintf(f, "%s\n", what); fclose(f); }
    return ERR_MODEL;
}

#define violation fakeAclViolation
#define LIVE(name) do { if (finalized) return violation(name " after aclFinalize"); } while (0)

/* Model-only queries for the tests: whether aclFinalize ran, and whether the device is still set. */
int fakeAclFinalized(void) { return finalized; }
int fakeAclDeviceSet(void) { return device_set; }

static void log_task(Stream *s, const char *name, ns_t start, ns_t end)
{
    const char *path = getenv("FAKE_ACL_TASK_LOG");
    FILE *f = path ? fopen(path, "a") : NULL;
    if (f) { fprintf(f, "%s,%d,%lld,%lld\n", name, (int)(s - streams), start, end); fclose(f); }
}

/* Time one task at the stream's tail (the stream is not held). */
static void run_task(Stream *s, Task *t, ns_t ready)
{
    ns_t start = ready > s->tail ? ready : s->tail;
    if (t->is_event) {
        t->event->at = start;
        t->event->timed = 1;
    } else {
        s->tail = start + t->duration;
        log_task(s, t->name, start, s->tail);
    }
}

static void enqueue(Stream *s, Task *t)
{
    s->seq++;
    if (s->held_by) {
        t->next = NULL;
        if (s->queue_end) s->queue_end->next = t; else s->queue = t;
        s->queue_end = t;
        return;
    }
    run_task(s, t, now());
    free(t);
}

__attribute__((unused)) static void release(Stream *s, ns_t at)
{
    s->held_by = NULL;
    if (at > s->tail) s->tail = at;
    for (Task *t = s->queue, *next; t; t = next) {
        next = t->next;
        run_task(s, t, at);
        free(t);
    }
    s->queue = s->queue_end = NULL;
}

static void apply_effects(void)
{
    Effect *e = effects;
    effects = effects_end = NULL;
    while (e) {
        Effect *next = e->next;
        e->fn(e->ctx);
        free(e);
        e = next;
    }
}

static int pending(void)
{
    for (int i = 0; i < MAX_STREAMS; i++)
        if (streams[i].live && streams[i].seq > streams[i].synced) return 1;
    return 0;
}

/* The model's kernel launch (what aclrtLaunchKernel would be): `duration_ns` of device work on `stream`, and
 * `fn(ctx)` its effect on memory, applied lazily. */
int fakeAclLaunch(void *stream, ns_t duration_ns, const char *name, void (*fn)(void *), void *ctx)
{
    LIVE("fakeAclLaunch");
    Task *t = calloc(1, sizeof(Task));
    t->duration = duration_ns;
    snprintf(t->name, sizeof t->name, "%s", name);
    if (fn) {
        Effect *e = calloc(1, sizeof(Effect));
        e->fn = fn;
        e->ctx = ctx;
        if (effects_end) effects_end->next = e; else effects = e;
        effects_end = e;
    }
    enqueue((Stream *)stream, t);
    return 0;
}

int aclInit(const char *c) { (void)c; LIVE("aclInit"); return inits++ ? 100002 : 0; }

int aclFinalize(void)
{
    LIVE("aclFinalize");
    apply_effects();
    const char *flush = getenv("ASCEND_LOG_DEVICE_FLUSH_TIMEOUT");
    if (!flush || strcmp(flush, "0") != 0) {
        struct timespec two = {2, 0};
        nanosleep(&two, NULL);
    }
    finalized = 1;
    return 0;
}

int aclrtSetDevice(int d)
{
    LIVE("aclrtSetDevice");
    if (d != 0) return 107001;
    device_set = 1;
    return 0;
}

int aclrtResetDevice(int d)
{
    LIVE("aclrtResetDevice");
    (void)d;
    device_set = 0;
    return 0;
}

int aclrtCreateStream(void **s)
{
    LIVE("aclrtCreateStream");
    for (int i = 0; i < MAX_STREAMS; i++)
        if (!streams[i].live) {
            memset(&streams[i], 0, sizeof(Stream));
            streams[i].live = 1;
            *s = &streams[i];
            return 0;
        }
    return violation("aclrtCreateStream: more streams than the model holds");
}

int aclrtDestroyStream(void *p)
{
    LIVE("aclrtDestroyStream");
    Stream *s = p;
    if (s->seq > s->synced) return violation("aclrtDestroyStream with tasks not synchronised");
    s->live = 0;
    return 0;
}

int aclrtSynchronizeStream(void *p)
{
    LIVE("aclrtSynchronizeStream");
    Stream *s = p;
    if (s->held_by) {
        violation("aclrtSynchronizeStream on a stream held by a notify nothing will record");
        return ERR_TIMEOUT;
    }
    spin_until(s->tail);
    s->synced = s->seq;
    return 0;
}

int aclrtMalloc(void **p, size_t n, unsigned policy)
{
    LIVE("aclrtMalloc");
    (void)policy;
    if (n == 0) return 100000;
    size_t size = (n + 31) / 32 * 32 + 32;
    void *mem = aligned_alloc(64, (size + 63) / 64 * 64 + 64);
    if (!mem) return 207001;
    *(size_t *)mem = size;                   /* bookkeeping in the 64 bytes before the pointer handed out */
    *p = (char *)mem + 64;
    used += size;
    return 0;
}

int aclrtFree(void *p)
{
    LIVE("aclrtFree");
    if (!p) return 100000;
    if (pending()) return violation("aclrtFree with tasks not synchronised");
    apply_effects();
    char *mem = (char *)p - 64;
    used -= *(size_t *)mem;
    free(mem);
    return 0;
}

int aclrtMemcpy(void *d, size_t dmax, const void *s, size_t n, unsigned kind)
{
    LIVE("aclrtMemcpy");
    (void)kind;
    if (n > dmax) return 100000;
    apply_effects();
    memcpy(d, s, n);
    return 0;
}

int aclrtCreateEvent(void **e) { LIVE("aclrtCreateEvent"); *e = calloc(1, sizeof(Event)); return 0; }
int aclrtDestroyEvent(void *e) { LIVE("aclrtDestroyEvent"); free(e); return 0; }

int aclrtRecordEvent(void *e, void *p)
{
    LIVE("aclrtRecordEvent");
    Event *ev = e;
    Stream *s = p;
    ev->timed = 0;
    ev->stream = s;
    Task *t = calloc(1, sizeof(Task));
    t->is_event = 1;
    t->event = ev;
    enqueue(s, t);
    ev->seq = s->seq;
    return 0;
}

int aclrtSynchronizeEvent(void *e)
{
    LIVE("aclrtSynchronizeEvent");
    Event *ev = e;
    if (!ev->stream) return 0;                /* never recorded: complete */
    if (!ev->timed) {
        violation("aclrtSynchronizeEvent on an event behind a notify nothing will record");
        return ERR_TIMEOUT;
    }
    spin_until(ev->at);
    if (ev->stream->synced < ev->seq) ev->stream->synced = ev->seq;
    return 0;
}

int aclrtEventElapsedTime(float *ms, void *a, void *b)
{
    LIVE("aclrtEventElapsedTime");
    Event *x = a, *y = b;
    if (!x->timed || !y->timed || now() < y->at) return violation("aclrtEventElapsedTime before the events completed");
    *ms = (float)((y->at - x->at) / 1e6);
    return 0;
}

#ifndef FAKE_ACL_NO_NOTIFY  /* -DFAKE_ACL_NO_NOTIFY: a runtime without the notify calls */
int aclrtCreateNotify(void **n, uint64_t flag)
{
    LIVE("aclrtCreateNotify");
    (void)flag;
    *n = calloc(1, sizeof(Notify));
    return 0;
}
int aclrtDestroyNotify(void *n) { LIVE("aclrtDestroyNotify"); free(n); return 0; }

int aclrtWaitAndResetNotify(void *n, void *p, uint32_t timeout)
{
    LIVE("aclrtWaitAndResetNotify");
    (void)timeout;
    Notify *no = n;
    Stream *s = p;
    s->seq++;
    if (no->recorded) { no->recorded = 0; if (no->at > s->tail) s->tail = no->at; return 0; }
    if (s->held_by) return violation("aclrtWaitAndResetNotify behind another hold (not modelled)");
    s->held_by = no;
    no->waiter = s;
    return 0;
}

int aclrtRecordNotify(void *n, void *p)
{
    LIVE("aclrtRecordNotify");
    Notify *no = n;
    Stream *s = p;
    if (s->held_by) return violation("aclrtRecordNotify on a held stream (not modelled)");
    s->seq++;
    ns_t at = now() > s->tail ? now() : s->tail;
    if (no->waiter) {
        Stream *w = no->waiter;
        no->waiter = NULL;
        release(w, at);
    } else {
        no->recorded = 1;
        no->at = at;
    }
    return 0;
}
#endif

int aclrtGetMemInfo(unsigned attr, size_t *freeb, size_t *total)
{
    LIVE("aclrtGetMemInfo");
    (void)attr;
    *total = (size_t)1 << 30;
    *freeb = *total - used;
    return 0;
}

const char *aclrtGetSocName(void)
{
    if (finalized) { violation("aclrtGetSocName after aclFinalize"); return NULL; }
    const char *s = getenv("FAKE_ACL_SOC");
    return s ? s : "Ascend950PR_9599";
}

/* The runtime's identity: version 1.2.3, FAKE_ACL_AI_CORES AI cores (default 32) and twice as many vector cores. */
int aclrtGetVersion(int32_t *major, int32_t *minor, int32_t *patch)
{
    LIVE("aclrtGetVersion");
    *major = 1; *minor = 2; *patch = 3;
    return 0;
}

int aclGetDeviceCapability(uint32_t device, int32_t info, int64_t *value)
{
    LIVE("aclGetDeviceCapability");
    (void)device;
    const char *s = getenv("FAKE_ACL_AI_CORES");
    int64_t cores = s ? atoll(s) : 32;
    if (info == 0) { *value = cores; return 0; }
    if (info == 1) { *value = 2 * cores; return 0; }
    return 100000;  /* ACL_ERROR_INVALID_PARAM */
}
