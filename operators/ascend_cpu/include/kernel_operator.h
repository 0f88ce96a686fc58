/*
 * CPU implementation of the part of the Ascend C basic API (kernel_operator.h) the project's arch35 kernels call:
 * kernel qualifiers, block index, SetFlag/WaitFlag, PipeBarrier, cube mode registers, and the vector queue API of
 * the Sgemm epilogue. Same names and call shapes as asc-devkit, so the kernel text compiles unchanged with g++;
 * every operation goes through the emulated core's checks (emu/emu_core.h). Not a copy of asc-devkit: only the
 * interface the kernels use, written for this emulator.
 */
#ifndef ASCEND_CPU_KERNEL_OPERATOR_H
#define ASCEND_CPU_KERNEL_OPERATOR_H

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

#include "emu_core.h"
#include "emu_launch.h"

#define __aicore__
#define __global__
#define __cube__
#define __gm__
using GM_ADDR = uint8_t*;

enum KernelTypeTag {
    KERNEL_TYPE_AIC_ONLY, KERNEL_TYPE_AIV_ONLY, KERNEL_TYPE_MIX_AIC_1_2, KERNEL_TYPE_MIX_AIC_1_0, KERNEL_TYPE_MIX_AIV_1_0
};
/* The kernel's first statement: fixes this core's role and, for a 1:2 mix, starts its block's two AIVs. */
#define KERNEL_TASK_TYPE_DEFAULT(kernelType) ::ascend_cpu::EnterKernel(::ascend_cpu::TypeOf(kernelType))
/* g_coreType tests (asc-devkit impl/utils/sys_macros.h): which core of a mixed kernel runs this code. */
#define ASCEND_IS_AIC (::ascend_cpu::Cur().type == ::ascend_cpu::KernelType::AIC)
#define ASCEND_IS_AIV (::ascend_cpu::Cur().type == ::ascend_cpu::KernelType::AIV)

enum pipe_t { PIPE_S, PIPE_V, PIPE_M, PIPE_MTE1, PIPE_MTE2, PIPE_MTE3, PIPE_FIX, PIPE_ALL };

namespace ascend_cpu {

inline Declared TypeOf(KernelTypeTag t)
{
    switch (t) {
    case KERNEL_TYPE_AIC_ONLY: return Declared::AIC_ONLY;
    case KERNEL_TYPE_AIV_ONLY: return Declared::AIV_ONLY;
    case KERNEL_TYPE_MIX_AIC_1_2: return Declared::MIX_AIC_1_2;
    case KERNEL_TYPE_MIX_AIC_1_0: return Declared::MIX_AIC_1_0;
    case KERNEL_TYPE_MIX_AIV_1_0: return Declared::MIX_AIV_1_0;
    }
    return Declared::AIV_ONLY;
}

inline Pipe PipeOf(pipe_t p) { return p == PIPE_ALL ? Pipe::COUNT : static_cast<Pipe>(static_cast<int>(p)); }

}  // namespace ascend_cpu

namespace AscendC {

enum class HardEvent {
    MTE2_MTE1, MTE1_MTE2, MTE1_M, M_MTE1, M_FIX, FIX_M, MTE2_V, V_MTE2, V_MTE3, MTE3_V, MTE3_MTE2, MTE2_MTE3,
    MTE2_FIX, FIX_MTE2, S_MTE2, MTE2_S, V_S, S_V, MTE3_S, S_MTE3
};

namespace detail {
struct EventPipes {
    ascend_cpu::Pipe src;
    ascend_cpu::Pipe dst;
    const char* name;
};

constexpr EventPipes Pipes(HardEvent e)
{
    using ascend_cpu::Pipe;
    switch (e) {
    case HardEvent::MTE2_MTE1: return {Pipe::MTE2, Pipe::MTE1, "MTE2_MTE1"};
    case HardEvent::MTE1_MTE2: return {Pipe::MTE1, Pipe::MTE2, "MTE1_MTE2"};
    case HardEvent::MTE1_M: return {Pipe::MTE1, Pipe::M, "MTE1_M"};
    case HardEvent::M_MTE1: return {Pipe::M, Pipe::MTE1, "M_MTE1"};
    case HardEvent::M_FIX: return {Pipe::M, Pipe::FIX, "M_FIX"};
    case HardEvent::FIX_M: return {Pipe::FIX, Pipe::M, "FIX_M"};
    case HardEvent::MTE2_V: return {Pipe::MTE2, Pipe::V, "MTE2_V"};
    case HardEvent::V_MTE2: return {Pipe::V, Pipe::MTE2, "V_MTE2"};
    case HardEvent::V_MTE3: return {Pipe::V, Pipe::MTE3, "V_MTE3"};
    case HardEvent::MTE3_V: return {Pipe::MTE3, Pipe::V, "MTE3_V"};
    case HardEvent::MTE3_MTE2: return {Pipe::MTE3, Pipe::MTE2, "MTE3_MTE2"};
    case HardEvent::MTE2_MTE3: return {Pipe::MTE2, Pipe::MTE3, "MTE2_MTE3"};
    case HardEvent::MTE2_FIX: return {Pipe::MTE2, Pipe::FIX, "MTE2_FIX"};
    case HardEvent::FIX_MTE2: return {Pipe::FIX, Pipe::MTE2, "FIX_MTE2"};
    case HardEvent::S_MTE2: return {Pipe::S, Pipe::MTE2, "S_MTE2"};
    case HardEvent::MTE2_S: return {Pipe::MTE2, Pipe::S, "MTE2_S"};
    case HardEvent::V_S: return {Pipe::V, Pipe::S, "V_S"};
    case HardEvent::S_V: return {Pipe::S, Pipe::V, "S_V"};
    case HardEvent::MTE3_S: return {Pipe::MTE3, Pipe::S, "MTE3_S"};
    case HardEvent::S_MTE3: return {Pipe::S, Pipe::MTE3, "S_MTE3"};
    }
    return {Pipe::S, Pipe::S, "?"};
}
}  // namespace detail

template <HardEvent E>
inline void SetFlag(int32_t id)
{
    constexpr detail::EventPipes p = detail::Pipes(E);
    ascend_cpu::SetFlag(p.src, p.dst, id, p.name);
}

template <HardEvent E>
inline void WaitFlag(int32_t id)
{
    constexpr detail::EventPipes p = detail::Pipes(E);
    ascend_cpu::WaitFlag(p.src, p.dst, id, p.name);
}

template <pipe_t P>
inline void PipeBarrier()
{
    ascend_cpu::Barrier(ascend_cpu::PipeOf(P));
}

inline int64_t GetBlockIdx() { return ascend_cpu::Cur().blockIdx; }
inline int64_t GetBlockNum() { return ascend_cpu::Cur().blockNum; }
inline int64_t GetSubBlockIdx() { return ascend_cpu::Cur().subBlock; }
/* AIVs per AIC of a mixed kernel (GetTaskRatio.md): 2 on the AIV of a 1:2 mix, 1 otherwise. */
inline int64_t GetTaskRatio()
{
    const ascend_cpu::Core& c = ascend_cpu::Cur();
    return c.type == ascend_cpu::KernelType::AIV && c.aivPerAic == 2 ? 2 : 1;
}

/* Cross-core synchronisation (asc-devkit kernel_operator_block_sync_intf.h; semantics: emu/emu_launch.h). */
template <uint8_t modeId, pipe_t pipe>
inline void CrossCoreSetFlag(uint16_t flagId)
{
    ascend_cpu::CrossCoreSet(modeId, ascend_cpu::PipeOf(pipe), flagId);
}

template <uint8_t modeId = 0, pipe_t pipe = PIPE_S>
inline void CrossCoreWaitFlag(uint16_t flagId)
{
    ascend_cpu::CrossCoreWait(modeId, ascend_cpu::PipeOf(pipe), flagId);
}

/* The hard SyncAll: every vector core (isAIVOnly) or every core of a mixed kernel. */
template <bool isAIVOnly = true>
inline void SyncAll()
{
    ascend_cpu::SyncAllCores(isAIVOnly);
}

enum class HF32Mode { ENABLE, DISABLE };
enum class HF32TransMode { NEAREST_ZERO, NEAREST_EVEN };
inline void SetHF32Mode(HF32Mode mode) { ascend_cpu::Cur().hf32 = mode == HF32Mode::ENABLE; }
/* How Mmad rounds fp32 operands to HF32 (asc-devkit SetHF32TransMode: to nearest, ties to even or toward zero). */
inline void SetHF32TransMode(HF32TransMode mode)
{
    ascend_cpu::Cur().hf32TiesToZero = mode == HF32TransMode::NEAREST_ZERO;
}
/* Output fractal order of the cube; no numerical effect, so the emulator only accepts the calls. */
inline void SetMMRowMajor() {}
inline void SetMMColumnMajor() {}

namespace Std {
template <uint32_t V>
struct Int {
    static constexpr uint32_t value = V;
};
}  // namespace Std

// ---- vector queue API (Sgemm epilogue): functional, with UB capacity and GM bounds checks --------------------

enum class TPosition { GM, VECIN, VECOUT, VECCALC };

template <typename T>
class LocalTensor {
public:
    LocalTensor() = default;
    LocalTensor(uint32_t off, uint32_t count) : off_(off), count_(count) {}
    T* Data() const { return reinterpret_cast<T*>(ascend_cpu::Cur().mem[static_cast<int>(ascend_cpu::Buf::UB)].data() + off_); }
    uint32_t Count() const { return count_; }

private:
    uint32_t off_ = 0;
    uint32_t count_ = 0;
};

template <typename T>
class GlobalTensor {
public:
    void SetGlobalBuffer(__gm__ T* p, uint64_t count)
    {
        base_ = p;
        count_ = count;
    }
    GlobalTensor operator[](uint64_t off) const
    {
        GlobalTensor g;
        g.base_ = base_ + off;
        g.count_ = off <= count_ ? count_ - off : 0;
        return g;
    }
    T* Data() const { return base_; }
    uint64_t Count() const { return count_; }
    /* A scalar read: through this core's DCache (emu_core.h ScalarRead). */
    T GetValue(uint64_t i) const
    {
        if (i >= count_) {
            ascend_cpu::Raise("GlobalTensor::GetValue(" + std::to_string(i) + ") past the " +
                              std::to_string(count_) + " elements set by SetGlobalBuffer");
        }
        T v;
        ascend_cpu::ScalarRead(base_ + i, &v, sizeof(T), "GlobalTensor::GetValue");
        return v;
    }

private:
    T* base_ = nullptr;
    uint64_t count_ = 0;
};

enum class CacheLine : uint64_t { SINGLE_CACHE_LINE = 0, ENTIRE_DATA_CACHE };
enum class DcciDst : uint64_t { CACHELINE_ALL = 0, CACHELINE_UB, CACHELINE_OUT, CACHELINE_ATOMIC };

/* Clean (the kernels make no scalar GM writes, so nothing is dirty) and invalidate this core's DCache for dst. */
template <typename T, CacheLine entireType, DcciDst dcciDst>
inline void DataCacheCleanAndInvalid(const GlobalTensor<T>& dst)
{
    static_assert(dcciDst != DcciDst::CACHELINE_UB, "the emulator models the DCache against GM only");
    ascend_cpu::CacheInvalidate(dst.Data(), entireType == CacheLine::ENTIRE_DATA_CACHE);
}

struct AscendCUtils {
    /* CTRL[48]: 1 keeps Inf/NaN in floating-point results, 0 saturates them (asc-devkit kernel_utils_base.h). */
    static void SetOverflow(uint64_t ctrlValue) { ascend_cpu::Cur().ctrlOverflow = ctrlValue == 1 ? 1 : 0; }
};

/* Queues run in program order on one emulated core, so EnQue/DeQue carry no synchronisation here. */
template <TPosition Pos, int32_t Depth>
class TQue {
public:
    template <typename T>
    LocalTensor<T> AllocTensor()
    {
        const uint32_t slot = next_++ % num_;
        return LocalTensor<T>(off_ + slot * bytes_, bytes_ / sizeof(T));
    }
    template <typename T>
    void EnQue(const LocalTensor<T>&)
    {
    }
    template <typename T>
    LocalTensor<T> DeQue()
    {
        const uint32_t slot = (next_ - 1) % num_;
        return LocalTensor<T>(off_ + slot * bytes_, bytes_ / sizeof(T));
    }
    template <typename T>
    void FreeTensor(const LocalTensor<T>&) {}
    void Init(uint32_t off, uint32_t num, uint32_t bytes)
    {
        off_ = off;
        num_ = num;
        bytes_ = bytes;
    }

private:
    uint32_t off_ = 0;
    uint32_t num_ = 1;
    uint32_t bytes_ = 0;
    uint32_t next_ = 0;
};

class TPipe {
public:
    template <typename Que>
    void InitBuffer(Que& que, uint32_t num, uint32_t bytes)
    {
        ascend_cpu::Core& c = ascend_cpu::Cur();
        ascend_cpu::CheckLocal(ascend_cpu::Buf::UB, c.ubUsed, static_cast<uint64_t>(num) * bytes, "TPipe::InitBuffer");
        que.Init(c.ubUsed, num, bytes);
        c.ubUsed += num * bytes;
    }
};

struct DataCopyExtParams {
    uint16_t blockCount;
    uint32_t blockLen;
    uint32_t srcStride;
    uint32_t dstStride;
    uint32_t rsv;
};

template <typename T>
struct DataCopyPadExtParams {
    bool isPad;
    uint8_t leftPadding;
    uint8_t rightPadding;
    T paddingValue;
};

namespace detail {
template <typename T>
inline void CheckGmCopy(const GlobalTensor<T>& gm, uint32_t bytes, bool write, const char* what)
{
    if (bytes > gm.Count() * sizeof(T)) {
        ascend_cpu::Raise(std::string(what) + ": " + std::to_string(bytes) + " bytes past the GlobalTensor's " +
                          std::to_string(gm.Count() * sizeof(T)) + " set by SetGlobalBuffer");
    }
    ascend_cpu::CheckGm(gm.Data(), reinterpret_cast<const uint8_t*>(gm.Data()) + bytes, what);
    ascend_cpu::GmAccess(gm.Data(), 1, bytes, bytes, write, what);
    ascend_cpu::Stats().gmBytes += bytes;
}
}  // namespace detail

template <typename T>
inline void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyExtParams& p,
                        const DataCopyPadExtParams<T>&)
{
    ascend_cpu::RequireType(ascend_cpu::KernelType::AIV, "DataCopyPad GM->UB");
    detail::CheckGmCopy(src, p.blockLen * p.blockCount, false, "DataCopyPad GM->UB");
    std::memcpy(dst.Data(), src.Data(), static_cast<size_t>(p.blockLen) * p.blockCount);
}

template <typename T>
inline void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyExtParams& p)
{
    ascend_cpu::RequireType(ascend_cpu::KernelType::AIV, "DataCopyPad UB->GM");
    detail::CheckGmCopy(dst, p.blockLen * p.blockCount, true, "DataCopyPad UB->GM");
    std::memcpy(dst.Data(), src.Data(), static_cast<size_t>(p.blockLen) * p.blockCount);
}

template <typename T>
inline void Muls(const LocalTensor<T>& dst, const LocalTensor<T>& src, T s, int32_t count)
{
    T* d = dst.Data();
    const T* a = src.Data();
    for (int32_t i = 0; i < count; ++i) {
        d[i] = a[i] * s;
    }
}

/* dst += src * s, one rounding per operation as the vector unit's fp32 multiply and add. */
template <typename T>
inline void Axpy(const LocalTensor<T>& dst, const LocalTensor<T>& src, T s, int32_t count)
{
    T* d = dst.Data();
    const T* a = src.Data();
    for (int32_t i = 0; i < count; ++i) {
        const T prod = a[i] * s;
        d[i] = d[i] + prod;
    }
}

template <typename T>
inline void Duplicate(const LocalTensor<T>& dst, T v, int32_t count)
{
    T* d = dst.Data();
    for (int32_t i = 0; i < count; ++i) {
        d[i] = v;
    }
}

}  // namespace AscendC

#endif  // ASCEND_CPU_KERNEL_OPERATOR_H
