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
#include <type_traits>
#include <vector>

#include "emu_core.h"
#include "emu_launch.h"

#define __aicore__
#define __global__
#define __cube__
#define __gm__
#define __ubuf__
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

// ---- vector queue API (Sgemm epilogue): functional, with UB bounds, pipe hand-off and GM bounds checks ---------

enum class TPosition { GM, VECIN, VECOUT, VECCALC, A1, B1, C1, A2, B2, CO1, CO2 };

namespace detail {
inline ascend_cpu::Buf BufOfPosition(TPosition pos)
{
    switch (pos) {
    case TPosition::A1: case TPosition::B1: case TPosition::C1: return ascend_cpu::Buf::L1;
    case TPosition::A2: return ascend_cpu::Buf::L0A;
    case TPosition::B2: return ascend_cpu::Buf::L0B;
    case TPosition::CO1: return ascend_cpu::Buf::L0C;
    default: return ascend_cpu::Buf::UB;
    }
}

/* Pipe `pipe` of this AIV reads or writes `bytes` of UB from `off` (the vector unit, SIMT, DataCopyPad): bounds and
 * 32-byte start, the hand-off from this core's other pipes (SetFlag/WaitFlag: emu_core.h Touch) and, in a mixed
 * launch unless crossCore is false, from the AIC's Fixpipe into this UB (cross-core flags: emu_launch.h
 * SharedAccess). */
inline void UbAccess(ascend_cpu::Buf buf, uint64_t off, uint64_t bytes, ascend_cpu::Pipe pipe, bool write,
                     const char* what, bool crossCore = true)
{
    using ascend_cpu::Buf;
    if (buf != Buf::UB) {
        ascend_cpu::Raise(std::string(what) + ": the tensor is not in UB");
    }
    ascend_cpu::CheckLocal(Buf::UB, off, bytes, what);
    if (bytes == 0) {
        return;
    }
    ascend_cpu::Touch(Buf::UB, off, off + bytes, pipe, write, what);
    const ascend_cpu::Core& c = ascend_cpu::Cur();
    if (crossCore && ascend_cpu::SharedUsed(Buf::UB, c.slot)) {
        ascend_cpu::SharedAccess(Buf::UB, c.slot, off, off + bytes, pipe, write, what);
    }
}
}  // namespace detail

/* A local tensor: `count` elements at byte offset `off` of the buffer its TPosition names (VECIN/VECOUT/VECCALC:
 * UB, A1/B1/C1: L1, CO1: L0C). On an AIV of a mixed kernel an L1 tensor is its AIC's L1 (UB -> L1 copies). */
template <typename T>
class LocalTensor {
public:
    LocalTensor() = default;
    LocalTensor(uint32_t off, uint32_t count) : off_(off), count_(count) {}
    LocalTensor(TPosition pos, uint32_t off, uint32_t count)
        : off_(off), count_(count), buf_(detail::BufOfPosition(pos)) {}
    T* Data() const { return reinterpret_cast<T*>(ascend_cpu::Cur().mem[static_cast<int>(buf_)].data() + off_); }
    uint32_t Count() const { return count_; }
    uint32_t Offset() const { return off_; }
    ascend_cpu::Buf Buffer() const { return buf_; }
    LocalTensor operator[](uint32_t elems) const
    {
        LocalTensor t = *this;
        t.off_ += elems * sizeof(T);
        t.count_ = elems <= count_ ? count_ - elems : 0;
        return t;
    }
    /* The UB address SIMT threads work on (asc_vf_call): the emulator counts the call as PIPE_V writing the whole
     * tensor, checked against the other pipes (intra-core flags) and against the AIC's Fixpipe into this UB
     * (cross-core flags). */
    __ubuf__ T* GetPhyAddr() const
    {
        detail::UbAccess(buf_, off_, static_cast<uint64_t>(count_) * sizeof(T), ascend_cpu::Pipe::V, true,
                         "SIMT on UB");
        return Data();
    }

private:
    uint32_t off_ = 0;
    uint32_t count_ = 0;
    ascend_cpu::Buf buf_ = ascend_cpu::Buf::UB;
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

/* A VECIN or VECOUT queue over num buffers of one UB region. The queues synchronise the stages they join (Ascend C
 * programming model: tasks communicate and synchronise through queues), as a SetFlag/WaitFlag pair per buffer
 * would: EnQue -> DeQue hands a buffer from its producer's pipe to its consumer's (VECIN MTE2 -> V, VECOUT
 * V -> MTE3), FreeTensor -> the next AllocTensor of that buffer hands it back. A buffer used without them is checked
 * like any other UB access (kernel_operator.h detail::UbAccess). DeQue returns the last buffer allocated. */
template <TPosition Pos, int32_t Depth>
class TQue {
public:
    template <typename T>
    LocalTensor<T> AllocTensor()
    {
        const uint32_t slot = next_++ % num_;
        ascend_cpu::Take(freed_[slot], kProducer);
        return LocalTensor<T>(off_ + slot * bytes_, bytes_ / sizeof(T));
    }
    template <typename T>
    void EnQue(const LocalTensor<T>& t)
    {
        Post(ready_, t, kProducer);
    }
    template <typename T>
    LocalTensor<T> DeQue()
    {
        const uint32_t slot = (next_ - 1) % num_;
        ascend_cpu::Take(ready_[slot], kConsumer);
        return LocalTensor<T>(off_ + slot * bytes_, bytes_ / sizeof(T));
    }
    template <typename T>
    void FreeTensor(const LocalTensor<T>& t)
    {
        Post(freed_, t, kConsumer);
    }
    void Init(uint32_t off, uint32_t num, uint32_t bytes)
    {
        off_ = off;
        num_ = num;
        bytes_ = bytes;
        ready_.assign(num, {});
        freed_.assign(num, {});
    }

private:
    using Pipe = ascend_cpu::Pipe;
    using Signals = std::vector<ascend_cpu::Core::Pending>;
    static_assert(Pos == TPosition::VECIN || Pos == TPosition::VECOUT, "the emulator models VECIN/VECOUT queues only");
    static constexpr Pipe kProducer = Pos == TPosition::VECOUT ? Pipe::V : Pipe::MTE2;
    static constexpr Pipe kConsumer = Pos == TPosition::VECOUT ? Pipe::MTE3 : Pipe::V;

    /* A tensor of another queue signals nothing here: its accesses are checked without this queue's hand-off. */
    template <typename T>
    void Post(Signals& signals, const LocalTensor<T>& t, Pipe pipe)
    {
        const uint32_t rel = t.Offset() - off_;
        if (bytes_ != 0 && t.Offset() >= off_ && rel < num_ * bytes_ && rel % bytes_ == 0) {
            ascend_cpu::Post(signals[rel / bytes_], pipe);
        }
    }

    uint32_t off_ = 0;
    uint32_t num_ = 1;
    uint32_t bytes_ = 0;
    uint32_t next_ = 0;
    Signals ready_ = Signals(1);
    Signals freed_ = Signals(1);
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
/* GM side of a DataCopyPad: blockCount runs of blockLen bytes, gapBytes apart (asc-devkit DataCopyPad: the GM
 * stride is in bytes, the UB one in 32-byte blocks, each UB block padded to 32 bytes). */
template <typename T>
inline void CheckGmCopy(const GlobalTensor<T>& gm, const DataCopyExtParams& p, uint64_t gapBytes, bool write,
                        const char* what)
{
    const uint64_t span = p.blockCount == 0 ? 0
                        : static_cast<uint64_t>(p.blockCount - 1) * (p.blockLen + gapBytes) + p.blockLen;
    if (span > gm.Count() * sizeof(T)) {
        ascend_cpu::Raise(std::string(what) + ": " + std::to_string(span) + " bytes past the GlobalTensor's " +
                          std::to_string(gm.Count() * sizeof(T)) + " set by SetGlobalBuffer");
    }
    ascend_cpu::CheckGm(gm.Data(), reinterpret_cast<const uint8_t*>(gm.Data()) + span, what);
    ascend_cpu::GmAccess(gm.Data(), p.blockCount, p.blockLen, p.blockLen + gapBytes, write, what);
    ascend_cpu::Stats().gmBytes += static_cast<uint64_t>(p.blockLen) * p.blockCount;
    ascend_cpu::CountInstr(ascend_cpu::DATA_COPY_PADS);
    ascend_cpu::CountInstr(ascend_cpu::DATA_COPY_PAD_BYTES, static_cast<uint64_t>(p.blockLen) * p.blockCount);
}

/* UB side: block i at i * (RoundUp(blockLen, 32) + 32 * gapBlocks); its span [first block, end of the last) is
 * checked as one access of the copy's pipe (detail::UbAccess), the gaps included. */
inline uint64_t UbPitch(const DataCopyExtParams& p, uint32_t gapBlocks)
{
    return (static_cast<uint64_t>(p.blockLen) + 31) / 32 * 32 + 32ull * gapBlocks;
}

template <typename T>
inline void CheckUbCopy(const LocalTensor<T>& ub, const DataCopyExtParams& p, uint32_t gapBlocks, ascend_cpu::Pipe pipe,
                        bool write, const char* what)
{
    const uint64_t bytes = p.blockCount == 0 ? 0 : (p.blockCount - 1) * UbPitch(p, gapBlocks) + p.blockLen;
    UbAccess(ub.Buffer(), ub.Offset(), bytes, pipe, write, what);
}
}  // namespace detail

namespace detail {
/* One DataCopyPad between GM and UB, GM -> UB (MTE2) or UB -> GM (MTE3): blockCount blocks of blockLen bytes. */
template <typename T>
inline void PadCopy(const GlobalTensor<T>& gm, const LocalTensor<T>& ub, const DataCopyExtParams& p, bool toGm)
{
    const char* what = toGm ? "DataCopyPad UB->GM" : "DataCopyPad GM->UB";
    const uint32_t gmGap = toGm ? p.dstStride : p.srcStride;
    const uint32_t ubGap = toGm ? p.srcStride : p.dstStride;
    ascend_cpu::RequireType(ascend_cpu::KernelType::AIV, what);
    /* asc-devkit GMToUB非对齐数据搬运(DataCopyPad).md, parameter table: blockCount in [0, 4095] (uint16_t, so a larger
     * count the kernel computes would wrap), blockLen in [0, 2097151] bytes and a multiple of sizeof(T). */
    if (p.blockCount > 4095 || p.blockLen > 2097151 || p.blockLen % sizeof(T) != 0) {
        ascend_cpu::Raise(std::string(what) + ": blockCount " + std::to_string(p.blockCount) + ", blockLen " +
                          std::to_string(p.blockLen) + " bytes; DataCopyPad takes blockCount 0..4095 and blockLen "
                          "0..2097151 bytes, a multiple of the element size (asc-devkit DataCopyPad parameters)");
    }
    CheckGmCopy(gm, p, gmGap, toGm, what);
    CheckUbCopy(ub, p, ubGap, toGm ? ascend_cpu::Pipe::MTE3 : ascend_cpu::Pipe::MTE2, !toGm, what);
    const uint64_t pitch = UbPitch(p, ubGap);
    for (uint32_t i = 0; i < p.blockCount; ++i) {
        uint8_t* g = reinterpret_cast<uint8_t*>(gm.Data()) + static_cast<uint64_t>(i) * (p.blockLen + gmGap);
        uint8_t* u = reinterpret_cast<uint8_t*>(ub.Data()) + i * pitch;
        std::memcpy(toGm ? g : u, toGm ? u : g, p.blockLen);
    }
}
}  // namespace detail

template <typename T>
inline void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyExtParams& p,
                        const DataCopyPadExtParams<T>&)
{
    detail::PadCopy(src, dst, p, false);
}

template <typename T>
inline void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyExtParams& p)
{
    detail::PadCopy(dst, src, p, true);
}

/* DataCopy UB -> L1 (asc-devkit DataCopy（UBToL1连续数据搬运）.md): an AIV copies count elements of its UB into its
 * AIC's L1 on PIPE_MTE3, over the hardware channel (ENABLE_CV_COMM_VIA_SSBUF=true; without it the copy goes through
 * GM and needs Matmul's REGISTER_MATMUL). Start addresses 32-byte aligned; count * sizeof(T) a multiple of 32 (the
 * device would round the copy down: here an error). The AIC may read it only after a cross-core flag set on
 * PIPE_MTE3 and waited for on the reading pipe; the UB it reads is checked as DataCopyPad's (detail::UbAccess). */
template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count)
{
    using ascend_cpu::Buf;
    using ascend_cpu::Pipe;
    const char* what = "DataCopy UB->L1";
#if !defined(ENABLE_CV_COMM_VIA_SSBUF) || !(ENABLE_CV_COMM_VIA_SSBUF)
    ascend_cpu::Raise(std::string(what) + " without ENABLE_CV_COMM_VIA_SSBUF=true: the copy would go through GM and "
                      "needs Matmul's REGISTER_MATMUL (asc-devkit DataCopy（UBToL1连续数据搬运）, constraints)");
#endif
    if (src.Buffer() != Buf::UB || dst.Buffer() != Buf::L1) {
        ascend_cpu::Raise(std::string(what) + ": the source must be a UB tensor (VECIN/VECOUT/VECCALC) and the "
                          "destination an L1 tensor (A1/B1/C1)");
    }
    ascend_cpu::RequireType(ascend_cpu::KernelType::AIV, what);
    const uint64_t bytes = static_cast<uint64_t>(count) * sizeof(T);
    if (bytes % 32 != 0) {
        ascend_cpu::Raise(std::string(what) + ": " + std::to_string(count) + " elements are " + std::to_string(bytes) +
                          " bytes, not a multiple of 32 (asc-devkit DataCopy（UBToL1连续数据搬运）: count * sizeof(T) "
                          "must be 32-byte aligned, the device would round the copy down)");
    }
    ascend_cpu::CheckLocal(Buf::L1, dst.Offset(), bytes, what);
    ascend_cpu::Core& c = ascend_cpu::Cur();
    const uint32_t aic = ascend_cpu::AicSlotOf(c);
    ascend_cpu::Core& cube = ascend_cpu::SharedCore(aic, what);
    detail::UbAccess(src.Buffer(), src.Offset(), bytes, Pipe::MTE3, false, what);
    ascend_cpu::SharedAccess(Buf::L1, aic, dst.Offset(), dst.Offset() + bytes, Pipe::MTE3, true, what);
    std::memcpy(cube.mem[static_cast<int>(Buf::L1)].data() + dst.Offset(), src.Data(), bytes);
    ascend_cpu::CountInstr(ascend_cpu::UB_TO_L1);
    ascend_cpu::CountInstr(ascend_cpu::UB_TO_L1_BYTES, bytes);
    c.unpublished[static_cast<int>(Pipe::MTE3)] = c.seq[static_cast<int>(Pipe::MTE3)];
    c.unpublishedWhat[static_cast<int>(Pipe::MTE3)] = what;
}

// ---- Fixpipe L0C -> UB (asc-devkit Fixpipe（L0C到UB数据搬运）.md, FixpipeParamsArch3510) ---------------------------

enum class CO2Layout : uint8_t { NZ = 0, ROW_MAJOR, COLUMN_MAJOR };
struct FixpipeConfig {
    CO2Layout format;
    bool isToUB = false;
};
constexpr FixpipeConfig CFG_NZ = {CO2Layout::NZ};
constexpr FixpipeConfig CFG_ROW_MAJOR = {CO2Layout::ROW_MAJOR};
constexpr FixpipeConfig CFG_COLUMN_MAJOR = {CO2Layout::COLUMN_MAJOR};

struct Nz2NdParams {
    uint16_t ndNum = 1;
    uint16_t srcNdStride = 0;
    uint32_t dstNdStride = 0;
};

template <CO2Layout format>
struct TransformParams {
    using PARAMS = uint8_t;
};
template <>
struct TransformParams<CO2Layout::ROW_MAJOR> {
    using PARAMS = Nz2NdParams;
};

}  // namespace AscendC

enum QuantMode_t { NoQuant, F322F16, F322BF16 };

namespace AscendC {

template <CO2Layout format = CO2Layout::ROW_MAJOR>
struct FixpipeParamsArch3510 {
    uint16_t nSize = 0;
    uint16_t mSize = 0;
    uint16_t srcStride = 0;
    uint32_t dstStride = 0;
    QuantMode_t quantPre = QuantMode_t::NoQuant;
    uint64_t deqScalar = 0;
    bool reluEn = false;
    uint8_t unitFlag = 0;
    uint8_t dualDstCtl = 0;
    uint8_t subBlockId = 0;
    bool isChannelSplit = false;
    typename TransformParams<format>::PARAMS params{};
};

/* The AIC's L0C (NZ, float, mSize x nSize, srcStride rows per 16-column fractal block) -> UB of its AIVs in ND rows
 * dstStride elements apart (NZ2ND), on PIPE_FIX. dualDstCtl 1: rows [0, mSize/2) to sub-block 0's UB and the rest
 * to sub-block 1's, at the same UB address (mSize even); 0: all of it to subBlockId's UB. Checked: isToUB, nSize a
 * multiple of 16, mSize even under dualDstCtl 1, L0C and UB bounds and alignment, PIPE_FIX having seen the Mmads
 * (intra-core flags), and the AIV's own UB accesses against it (cross-core flags, emu_launch.h SharedAccess). */
template <typename T, typename U, const FixpipeConfig& config>
inline void Fixpipe(const LocalTensor<T>& dst, const LocalTensor<U>& src, const FixpipeParamsArch3510<config.format>& p)
{
    using ascend_cpu::Buf;
    using ascend_cpu::Pipe;
    static_assert(std::is_same_v<T, float> && std::is_same_v<U, float>, "the emulator models fp32 L0C -> UB only");
    static_assert(config.format == CO2Layout::ROW_MAJOR, "the emulator models the NZ2ND L0C -> UB copy only");
    const char* what = "Fixpipe L0C->UB";
    ascend_cpu::RequireType(ascend_cpu::KernelType::AIC, what);
    if (!config.isToUB) {
        ascend_cpu::Raise(std::string(what) + ": the FixpipeConfig needs isToUB = true (asc-devkit Fixpipe（L0C到UB数据"
                          "搬运）: CFG_ROW_MAJOR and the other GM configurations cannot target UB)");
    }
    if (src.Buffer() != Buf::L0C || dst.Buffer() != Buf::UB) {
        ascend_cpu::Raise(std::string(what) + ": the source must be an L0C tensor (CO1), the destination a UB one");
    }
    if (p.mSize == 0 || p.nSize == 0) {
        return;  // a NOP (the doc)
    }
    if (p.nSize % 16 != 0 || p.quantPre != QuantMode_t::NoQuant || p.dualDstCtl > 1 ||
        (p.dualDstCtl == 1 && p.mSize % 2 != 0) || p.srcStride < p.mSize || p.dstStride < p.nSize) {
        ascend_cpu::Raise(std::string(what) + ": nSize " + std::to_string(p.nSize) + " (a multiple of 16), mSize " +
                          std::to_string(p.mSize) + " (even under dualDstCtl 1), srcStride " +
                          std::to_string(p.srcStride) + " (>= mSize), dstStride " + std::to_string(p.dstStride) +
                          " (>= nSize), dualDstCtl " + std::to_string(p.dualDstCtl) + " (0 or 1 modelled), NoQuant");
    }
    const uint64_t srcBytes = static_cast<uint64_t>(p.nSize / 16) * p.srcStride * 16 * sizeof(float);
    ascend_cpu::CheckLocal(Buf::L0C, src.Offset(), srcBytes, what);
    ascend_cpu::Touch(Buf::L0C, src.Offset(), src.Offset() + srcBytes, Pipe::FIX, false, what);
    ascend_cpu::UnitFlag(src.Offset(), src.Offset() + srcBytes, p.unitFlag, false, what);
    ascend_cpu::Core& c = ascend_cpu::Cur();
    const float* l0c = reinterpret_cast<const float*>(c.mem[static_cast<int>(Buf::L0C)].data() + src.Offset());
    const uint32_t parts = p.dualDstCtl == 1 ? 2 : 1;
    const uint32_t rowsEach = p.mSize / parts;
    for (uint32_t part = 0; part < parts; ++part) {
        const uint32_t sub = parts == 2 ? part : p.subBlockId;
        const uint32_t aiv = ascend_cpu::AivSlotOf(c, sub);
        ascend_cpu::Core& vec = ascend_cpu::SharedCore(aiv, what);
        const uint64_t bytes = (static_cast<uint64_t>(rowsEach - 1) * p.dstStride + p.nSize) * sizeof(float);
        ascend_cpu::CheckLocal(Buf::UB, dst.Offset(), bytes, what);
        ascend_cpu::SharedAccess(Buf::UB, aiv, dst.Offset(), dst.Offset() + bytes, Pipe::FIX, true, what);
        float* ub = reinterpret_cast<float*>(vec.mem[static_cast<int>(Buf::UB)].data() + dst.Offset());
        for (uint32_t r = 0; r < rowsEach; ++r) {
            const uint32_t row = part * rowsEach + r;
            for (uint32_t col = 0; col < p.nSize; ++col) {
                ub[static_cast<uint64_t>(r) * p.dstStride + col] =
                    l0c[(static_cast<uint64_t>(col / 16) * p.srcStride + row) * 16 + col % 16];
            }
        }
    }
    c.unpublished[static_cast<int>(Pipe::FIX)] = c.seq[static_cast<int>(Pipe::FIX)];
    c.unpublishedWhat[static_cast<int>(Pipe::FIX)] = what;
    ascend_cpu::CountInstr(ascend_cpu::FIXPIPES);
}

// ---- vector unit on UB (PIPE_V) ----------------------------------------------------------------------------------

namespace detail {
/* One vector instruction over count elements: src (if any) read, dst read too if readsDst, then dst written, each a
 * UB access on PIPE_V. Against the AIC's Fixpipe a read of dst's own bytes is left to the write (which conflicts
 * with all the read does): otherwise which of the two a race names would depend on which core came first. */
template <typename T>
inline void VecOperands(const char* what, int32_t count, const LocalTensor<T>& dst, const LocalTensor<T>* src,
                        bool readsDst)
{
    using ascend_cpu::Pipe;
    const uint64_t bytes = (count > 0 ? static_cast<uint64_t>(count) : 0) * sizeof(T);
    if (src != nullptr) {
        const bool inDst = src->Buffer() == dst.Buffer() && src->Offset() == dst.Offset();
        UbAccess(src->Buffer(), src->Offset(), bytes, Pipe::V, false, what, !inDst);
    }
    if (readsDst) {
        UbAccess(dst.Buffer(), dst.Offset(), bytes, Pipe::V, false, what, false);
    }
    UbAccess(dst.Buffer(), dst.Offset(), bytes, Pipe::V, true, what);
}
}  // namespace detail

template <typename T>
inline void Muls(const LocalTensor<T>& dst, const LocalTensor<T>& src, T s, int32_t count)
{
    detail::VecOperands("Muls", count, dst, &src, false);
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
    detail::VecOperands("Axpy", count, dst, &src, true);
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
    detail::VecOperands<T>("Duplicate", count, dst, nullptr, false);
    T* d = dst.Data();
    for (int32_t i = 0; i < count; ++i) {
        d[i] = v;
    }
}

}  // namespace AscendC

#endif  // ASCEND_CPU_KERNEL_OPERATOR_H
