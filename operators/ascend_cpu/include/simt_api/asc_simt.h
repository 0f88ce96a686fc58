/*
 * CPU implementation of the SIMT launch the arch35 vector kernels use (asc_vf_call, threadIdx, blockDim): the
 * threads of one call run one after another on the emulated vector core. Raw __gm__ pointer accesses inside a SIMT
 * function are plain host loads and stores; the emulator does not see them (only GM copies through the tensor and
 * queue APIs are bounds-checked), so the harness's guard zones stay the check for them.
 */
#ifndef ASCEND_CPU_ASC_SIMT_H
#define ASCEND_CPU_ASC_SIMT_H

#include <cstdint>
#include <cstring>
#include <string>

#include "kernel_operator.h"

#define __simt_vf__
#define LAUNCH_BOUND(n)

struct dim3 {
    uint32_t x = 1;
    uint32_t y = 1;
    uint32_t z = 1;
    constexpr dim3(uint32_t vx = 1, uint32_t vy = 1, uint32_t vz = 1) : x(vx), y(vy), z(vz) {}
};

namespace ascend_cpu {
/* Per launch thread: every emulated core runs its own SIMT calls. */
inline thread_local dim3 g_threadIdx;
inline thread_local dim3 g_blockDim;
/* __launch_bounds__(N) takes N in 1..2048 (asc-devkit SIMT-API docs, 核函数配置); the kernels' LAUNCH_BOUND. */
constexpr uint32_t kMaxSimtThreads = 2048;
}  // namespace ascend_cpu

/* simt_api/device_functions.h: the bits of a float as an unsigned int and back. */
inline unsigned int __float_as_uint(const float x)
{
    unsigned int u;
    std::memcpy(&u, &x, sizeof(u));
    return u;
}

inline float __uint_as_float(const unsigned int x)
{
    float f;
    std::memcpy(&f, &x, sizeof(f));
    return f;
}

#define threadIdx (::ascend_cpu::g_threadIdx)
#define blockDim (::ascend_cpu::g_blockDim)

template <auto F, typename... Args>
inline void asc_vf_call(dim3 block, Args... args)
{
    ascend_cpu::RequireType(ascend_cpu::KernelType::AIV, "asc_vf_call (SIMT)");
    if (block.x * block.y * block.z == 0 || block.x * block.y * block.z > ascend_cpu::kMaxSimtThreads) {
        ascend_cpu::Raise("asc_vf_call with " + std::to_string(block.x * block.y * block.z) +
                          " threads; a SIMT call takes 1.." + std::to_string(ascend_cpu::kMaxSimtThreads));
    }
    ascend_cpu::g_blockDim = block;
    ascend_cpu::CountInstr(ascend_cpu::SIMT_CALLS);
    ascend_cpu::CountInstr(ascend_cpu::SIMT_THREADS, block.x * block.y * block.z);
    for (uint32_t x = 0; x < block.x; ++x) {
        ascend_cpu::g_threadIdx = dim3{x, 0, 0};
        F(args...);
    }
}

#endif  // ASCEND_CPU_ASC_SIMT_H
