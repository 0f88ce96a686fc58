/*
 * The twin's emulated AI cores: one host thread per core for the duration of one operator call, plus a barrier for
 * the phases that must not overlap (GEMM tiles -> combine -> next batch), like pipe barriers between kernels.
 */
#ifndef TWIN_PARALLEL_H
#define TWIN_PARALLEL_H

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace twin {

/* A reusable barrier for a fixed number of threads (std::barrier is C++20). */
class Barrier {
public:
    explicit Barrier(int32_t count) : count_(count) {}

    void Wait()
    {
        std::unique_lock<std::mutex> lock(mutex_);
        const uint64_t generation = generation_;
        if (++waiting_ == count_) {
            waiting_ = 0;
            ++generation_;
            cv_.notify_all();
            return;
        }
        cv_.wait(lock, [&] { return generation_ != generation; });
    }

private:
    std::mutex mutex_;
    std::condition_variable cv_;
    int32_t count_;
    int32_t waiting_ = 0;
    uint64_t generation_ = 0;
};

/* Runs body(core) for core = 0 .. cores-1, core 0 on the calling thread; returns when all have finished. */
template <typename Body>
void RunOnCores(int32_t cores, Body&& body)
{
    std::vector<std::thread> threads;
    threads.reserve(cores > 1 ? cores - 1 : 0);
    for (int32_t core = 1; core < cores; ++core) {
        threads.emplace_back([&body, core] { body(core); });
    }
    body(0);
    for (std::thread& t : threads) {
        t.join();
    }
}

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
