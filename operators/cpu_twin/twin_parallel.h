/*
 * The twin's emulated AI cores: a pool of host threads made once per process (lazily, in the process that calls:
 * a pool inherited through fork() has no threads and is replaced), of which a call wakes as many as it has cores,
 * plus a barrier for the phases that must not overlap (GEMM tiles -> combine -> next batch), like pipe barriers
 * between kernels. Waits spin for a few tens of microseconds before they sleep on a futex, so a call or a phase of
 * a few microseconds does not pay for a thread start or a scheduler quantum; they do not spin when the call has
 * more cores than the process may run on (the thread waited for would be the one kept off the CPU).
 */
#ifndef TWIN_PARALLEL_H
#define TWIN_PARALLEL_H

#include <atomic>
#include <cstdint>
#include <exception>
#include <type_traits>

namespace twin {

/* A futex word with a count of the threads asleep on it, so a wake costs a system call only when one sleeps. */
struct WaitWord {
    std::atomic<uint32_t> value{0};
    std::atomic<int32_t> sleepers{0};
};

/* Returns once word.value != seen: spins first when `spin`, then sleeps. */
void WaitWhileEquals(WaitWord& word, uint32_t seen, bool spin);

/* Adds one to word.value (release) and wakes its sleepers. */
void Advance(WaitWord& word);

/* Thrown by Barrier::Wait on every core once one core has broken the barrier (its exception is the call's). */
struct BarrierBroken : std::exception {
    const char* what() const noexcept override { return "twin barrier broken by a failing core"; }
};

/* A reusable barrier for a fixed number of cores of one call. */
class Barrier {
public:
    explicit Barrier(int32_t count);
    void Wait();
    /* A core that cannot reach the next Wait (it throws) breaks the barrier so the others do not wait forever. */
    void Break();

private:
    const int32_t count_;
    const bool spin_;
    std::atomic<int32_t> waiting_{0};
    std::atomic<bool> broken_{false};
    WaitWord generation_;
};

using CoreBody = void (*)(void* context, int32_t core);

/* How the cores' shares of a call relate. INDEPENDENT: no core waits for another, so any thread may run any share;
 * BARRIER: the shares meet at a Barrier, so each needs its own thread. */
enum class Shares { INDEPENDENT, BARRIER };

/* Below this many floating-point operations an INDEPENDENT call runs its shares one after another on the caller.
 * Waking a pool thread costs 5-50 us on a loaded host, and whether it comes in time changes from one timing round
 * to the next: measured on the ten smallest csymm perf rows (up to 7 MFLOP, 2 cores, load 11-14), rounds of the
 * pooled twin swung by +-20-50 % against each other, the serial one estimated a planted 5 % as +3..+7 % on every
 * row (benchmarks/load_rejection.py). The shares and their order within a share are the same either way. */
constexpr double kSerialBelowFlops = 16e6;

/* Runs body(context, core) for core = 0 .. cores-1, core 0 on the calling thread, the others on pool threads;
 * returns when all have finished, rethrowing the first exception a core threw (other than BarrierBroken). Calls
 * from several threads at once take turns. With INDEPENDENT shares the caller also runs the share of a pool
 * thread the scheduler has not started yet, and runs every share itself when the call is under kSerialBelowFlops. */
void RunOnCores(int32_t cores, CoreBody body, void* context, Shares shares, double flops);

template <typename Body>
void RunOnCores(int32_t cores, double flops, Body&& body, Shares shares = Shares::INDEPENDENT)
{
    using Callable = std::remove_reference_t<Body>;
    RunOnCores(cores, [](void* context, int32_t core) { (*static_cast<Callable*>(context))(core); },
               static_cast<void*>(&body), shares, flops);
}

/* Starts pool threads now for calls of up to `cores` cores (a handle's core count), so its first call does not. */
void ReserveCores(int32_t cores);

/* [begin, end) of `count` items split evenly over `parts`, part `index`. */
inline void SplitRange(int64_t count, int32_t parts, int32_t index, int64_t* begin, int64_t* end)
{
    const int64_t base = count / parts;
    const int64_t extra = count % parts;
    *begin = index * base + (index < extra ? index : extra);
    *end = *begin + base + (index < extra ? 1 : 0);
}

}  // namespace twin

#endif  // TWIN_PARALLEL_H
