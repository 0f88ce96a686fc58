/* The pool of emulated cores and the spin-then-futex waits (see twin_parallel.h). */
#include "twin_parallel.h"

#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

namespace twin {
namespace {

/* How long a wait spins before it sleeps: a few microsecond-phases, far below a scheduler quantum (~4-8 ms). */
constexpr std::chrono::microseconds kSpinFor{20};

inline void CpuRelax()
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
}

long Futex(std::atomic<uint32_t>* word, int op, uint32_t value)
{
    return syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), op, value, nullptr, nullptr, 0);
}

/* CPUs this process may run on now (its affinity mask, which a pinned worker narrows). */
int32_t AllowedCpus()
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0) {
        return 1;
    }
    return CPU_COUNT(&set);
}

bool Spins(int32_t cores) { return cores <= AllowedCpus(); }

/* After a seq_cst change of word.value: a thread that counted itself asleep before it could see the change is
 * woken (one that counts itself later sees the change, and the futex does not block it). */
void WakeSleepers(WaitWord& word)
{
    if (word.sleepers.load(std::memory_order_seq_cst) > 0) {
        Futex(&word.value, FUTEX_WAKE_PRIVATE, INT_MAX);
    }
}

/* One pool thread: emulated core `core` (1-based; core 0 is the caller's thread). go.value is the number of the
 * last call that needs this core; `taken` the last call whose share of this core someone ran (the worker itself or,
 * when it was slow to start, the caller): whoever swaps the call's number in first runs it. */
struct Worker {
    WaitWord go;
    std::atomic<uint32_t> taken{0};
    std::thread thread;

    bool Claim(uint32_t call) { return taken.exchange(call, std::memory_order_acq_rel) != call; }
};

struct Pool {
    explicit Pool(pid_t owner) : pid(owner) {}

    const pid_t pid;
    std::mutex callMutex;  // one call at a time uses the workers
    std::deque<Worker> workers;  // workers[i] is core i + 1; a deque keeps their addresses when it grows
    uint32_t calls = 0;  // numbers the calls (under callMutex)
    CoreBody body = nullptr;
    void* context = nullptr;
    std::atomic<bool> spin{false};  // read by idle workers while the next call sets it
    std::atomic<int32_t> pending{0};
    WaitWord done;
    std::mutex errorMutex;
    std::exception_ptr error;

    void Fail(std::exception_ptr e)
    {
        std::lock_guard<std::mutex> lock(errorMutex);
        if (!error) {
            error = e;
        }
    }

    /* Runs core `core`'s share of the current call and counts it done. */
    void RunShare(int32_t core)
    {
        RunCore(core);
        if (pending.fetch_sub(1, std::memory_order_acq_rel) == 1) {
            Advance(done);
        }
    }

    void RunCore(int32_t core)
    {
        try {
            body(context, core);
        } catch (const BarrierBroken&) {
            // another core's failure, which it reports itself
        } catch (...) {
            Fail(std::current_exception());
        }
    }

    void Serve(Worker& w, int32_t core)
    {
        uint32_t seen = 0;
        for (;;) {
            WaitWhileEquals(w.go, seen, spin.load(std::memory_order_relaxed));
            seen = w.go.value.load(std::memory_order_acquire);
            if (w.Claim(seen)) {  // call `seen` cannot end before this share is run, so body is still its body
                RunShare(core);
            }
        }
    }

    /* Callers hold callMutex. */
    void Grow(int32_t threads)
    {
        while (static_cast<int32_t>(workers.size()) < threads) {
            workers.emplace_back();
            Worker& w = workers.back();
            const int32_t core = static_cast<int32_t>(workers.size());
            try {
                w.thread = std::thread([this, &w, core] { Serve(w, core); });
            } catch (...) {
                workers.pop_back();  // no thread serves it: no call may wake it
                throw;
            }
            const std::string name = "twin-core-" + std::to_string(core);  // what ps, gdb and tests see
            pthread_setname_np(w.thread.native_handle(), name.c_str());
            w.thread.detach();  // a pool lives as long as its process
        }
    }
};

std::atomic<Pool*> g_pool{nullptr};

/* This process's pool. One made before a fork() belongs to the parent (its threads did not come along): it is
 * left as it is, never destroyed (its mutexes may have been held at the fork), and a new one takes its place. */
Pool& ThePool()
{
    const pid_t pid = getpid();
    Pool* current = g_pool.load(std::memory_order_acquire);
    if (current != nullptr && current->pid == pid) {
        return *current;
    }
    Pool* fresh = new Pool(pid);
    if (g_pool.compare_exchange_strong(current, fresh, std::memory_order_acq_rel)) {
        return *fresh;
    }
    delete fresh;  // another thread of this process installed one first
    return *current;
}

}  // namespace

void WaitWhileEquals(WaitWord& word, uint32_t seen, bool spin)
{
    if (spin) {
        const auto until = std::chrono::steady_clock::now() + kSpinFor;
        for (uint32_t i = 1;; ++i) {
            if (word.value.load(std::memory_order_acquire) != seen) {
                return;
            }
            CpuRelax();
            if (i % 64 == 0 && std::chrono::steady_clock::now() >= until) {
                break;
            }
        }
    }
    while (word.value.load(std::memory_order_acquire) == seen) {
        word.sleepers.fetch_add(1, std::memory_order_seq_cst);
        Futex(&word.value, FUTEX_WAIT_PRIVATE, seen);  // returns at once if the value moved meanwhile
        word.sleepers.fetch_sub(1, std::memory_order_seq_cst);
    }
}

void Advance(WaitWord& word)
{
    word.value.fetch_add(1, std::memory_order_seq_cst);
    WakeSleepers(word);
}

Barrier::Barrier(int32_t count) : count_(count), spin_(Spins(count)) {}

void Barrier::Wait()
{
    const uint32_t seen = generation_.value.load(std::memory_order_acquire);
    if (waiting_.fetch_add(1, std::memory_order_acq_rel) + 1 == count_) {
        waiting_.store(0, std::memory_order_relaxed);
        Advance(generation_);
    } else {
        WaitWhileEquals(generation_, seen, spin_);
    }
    if (broken_.load(std::memory_order_acquire)) {
        throw BarrierBroken();
    }
}

void Barrier::Break()
{
    broken_.store(true, std::memory_order_release);
    Advance(generation_);
}

void RunOnCores(int32_t cores, CoreBody body, void* context, Shares shares, double flops)
{
    const bool independent = shares == Shares::INDEPENDENT;
    if (cores <= 1 || (independent && flops < kSerialBelowFlops)) {
        for (int32_t core = 0; core < cores; ++core) {
            body(context, core);
        }
        return;
    }
    Pool& pool = ThePool();
    std::lock_guard<std::mutex> lock(pool.callMutex);
    pool.Grow(cores - 1);
    const uint32_t call = ++pool.calls;
    pool.body = body;
    pool.context = context;
    const bool spin = Spins(cores);
    pool.spin.store(spin, std::memory_order_relaxed);
    pool.error = nullptr;
    pool.pending.store(cores, std::memory_order_relaxed);
    const uint32_t doneSeen = pool.done.value.load(std::memory_order_relaxed);
    for (int32_t i = 0; i < cores - 1; ++i) {
        WaitWord& go = pool.workers[i].go;
        go.value.store(call, std::memory_order_seq_cst);  // release: the worker sees body, context and spin
        WakeSleepers(go);
    }
    pool.RunShare(0);
    if (independent) {
        // A worker the scheduler has not run yet would keep the call waiting for a time slice: its share is run
        // here instead (the shares do not depend on each other, so which thread runs one changes no result).
        for (int32_t i = 0; i < cores - 1; ++i) {
            if (pool.workers[i].Claim(call)) {
                pool.RunShare(i + 1);
            }
        }
    }
    WaitWhileEquals(pool.done, doneSeen, spin);
    if (pool.error) {
        std::rethrow_exception(pool.error);
    }
}

void ReserveCores(int32_t cores)
{
    if (cores <= 1) {
        return;
    }
    Pool& pool = ThePool();
    std::lock_guard<std::mutex> lock(pool.callMutex);
    pool.Grow(cores - 1);
}

}  // namespace twin
