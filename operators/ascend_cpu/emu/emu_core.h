/*
 * The CPU emulator of one arch35 AI core (Ascend 950PR, dav-3510) under the project's Ascend C kernels: local
 * buffers (L1, L0A, L0B, L0C, UB) as byte arrays, the pipes as sequence counters, SetFlag/WaitFlag as single-bit
 * flags that carry what the signalling pipe has finished, and GM as the host allocations the runtime handed out.
 *
 * A launch's blocks run as concurrent threads, one per AI core (emu_launch.h: cross-core flags, SyncAll, deadlock
 * and GM race detection). Within a core the pipes are modelled in program order, so a WaitFlag without a pending
 * SetFlag is a deadlock on the device and a Fault here. Every check raises a Fault whose message names the
 * problem; the launch records one (deterministically: the lowest core's) and the ABI reports it (emu_runtime.cpp).
 *
 * Sizes: asc-devkit impl/basic_api/utils/kernel_utils_constants.h (__NPU_ARCH__ == 3510: L1 512 KiB, L0C 256 KiB,
 * UB 248 KiB; L0A/L0B 64 KiB) and impl/basic_api/kernel_macros.h (QUE_MAX_EVENT = 8 event ids). Alignments: the
 * basic-API Mmad doc (docs/zh/api/SIMD-API/基础API/矩阵计算（ISASI）/Mmad计算/Mmad.md, parameter table: L0A/L0B start
 * 512 B, L0C 1024 B; the tensor_api page says 64 B for L0C, the stricter rule is kept); L1 and UB 32 B (one block).
 */
#ifndef ASCEND_CPU_EMU_CORE_H
#define ASCEND_CPU_EMU_CORE_H

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <functional>
#include <vector>

namespace ascend_cpu {

enum class Pipe : int { S, V, M, MTE1, MTE2, MTE3, FIX, COUNT };
enum class Buf : int { L1, L0A, L0B, L0C, UB, COUNT };

constexpr int kPipes = static_cast<int>(Pipe::COUNT);
constexpr int kBufs = static_cast<int>(Buf::COUNT);
constexpr int kEventIds = 8;
constexpr uint32_t kCapacity[kBufs] = {512u * 1024, 64u * 1024, 64u * 1024, 256u * 1024, 248u * 1024};
constexpr uint32_t kAlign[kBufs] = {32, 512, 512, 1024, 32};
/* The L0C block one unit flag covers (asc-devkit UnitFlag.md: 512 B). */
constexpr uint32_t kUnitFlagBlock = 512;

const char* PipeName(Pipe p);
const char* BufName(Buf b);

/* A check the hardware would not forgive; `what` names it. */
struct Fault {
    std::string what;
};

[[noreturn]] void Raise(const std::string& what);

/* The role of a core: the cube (AIC) or a vector core (AIV); UNSET until the kernel declares its type. */
enum class KernelType { UNSET, AIC, AIV };

/* One local buffer, mapped on first use and unmapped with its core: a launch's cores come and go with their
 * threads, and pages they never touch cost nothing (the harness checks the worker's resident memory). */
class LocalBuffer {
public:
    LocalBuffer() = default;
    LocalBuffer(const LocalBuffer&) = delete;
    LocalBuffer& operator=(const LocalBuffer&) = delete;
    ~LocalBuffer();
    void Init(uint32_t bytes) { bytes_ = bytes; }
    uint8_t* data();

private:
    /* Atomic: a core of the same AI core may copy into this buffer (UB -> L1, L0C -> UB) first. */
    std::atomic<uint8_t*> p_{nullptr};
    uint32_t bytes_ = 0;
};

/* State of the core running the current block: one per launch thread. */
struct Core {
    std::array<LocalBuffer, kBufs> mem;
    uint64_t seq[kPipes] = {};
    /* visible[p][q]: how many of pipe q's operations pipe p is known to see finished. */
    uint64_t visible[kPipes][kPipes] = {};
    struct Pending {
        bool set = false;
        uint64_t vis[kPipes] = {};
        uint32_t xclk[3] = {};
    };
    Pending flags[kPipes][kPipes][kEventIds];
    struct Access {
        uint32_t lo;
        uint32_t hi;
        Pipe pipe;
        uint64_t seq;
        bool write;
        const char* what;
    };
    std::array<std::vector<Access>, kBufs> accesses;
    /* Cross-core pipe clocks for the buffers one AI core's cores share (UB -> L1 copies, Fixpipe L0C -> UB):
     * xclk[p][g] = how many releases of group member g (0 the AIC, 1 + s the AIV of sub-block s) pipe p of this
     * core has seen. On the 950PR a CrossCoreWaitFlag blocks only its own pipe (asc-devkit CrossCoreWaitFlag(ISASI),
     * pipe), so a wait on the wrong pipe leaves the reading pipe's clock behind (emu_launch.h SharedAccess). */
    uint32_t xclk[kPipes][3] = {};
    /* seq[p] of this core's last copy into another core's buffer (UB -> L1, L0C -> UB) on pipe p that no
     * CrossCoreSetFlag has published yet: a set must be on that pipe, or on one the pipe signalled to. */
    uint64_t unpublished[kPipes] = {};
    const char* unpublishedWhat[kPipes] = {};
    /* One unit flag per 512 B block of L0C (UnitFlag()): 1 = an Mmad with unitFlag 3 finished it and no Fixpipe
     * with unitFlag 3 has read it since. */
    std::array<uint8_t, kCapacity[static_cast<int>(Buf::L0C)] / kUnitFlagBlock> unitFlags{};
    uint64_t lastMmadSeq = 0;   // seq[M] of the last Mmad that wrote L0C
    uint64_t mBarrierSeq = 0;   // seq[M] at the last PipeBarrier<PIPE_M>
    bool hf32 = false;
    bool hf32TiesToZero = false;  // SetHF32TransMode(NEAREST_ZERO); NEAREST_EVEN otherwise
    /* CTRL[48] (AscendCUtils::SetOverflow): -1 not set by this kernel, 0 saturation (Inf -> +-MAX, NaN -> 0),
     * 1 Inf/NaN kept (asc-devkit Mmad doc, special values). */
    int ctrlOverflow = -1;
    KernelType type = KernelType::UNSET;
    /* The kernel type enables the cross-core scheduler (KERNEL_TYPE_MIX_*): CrossCoreSetFlag/WaitFlag, SyncAll. */
    bool mix = false;
    uint32_t aivPerAic = 0;  // 2 for KERNEL_TYPE_MIX_AIC_1_2, 0 without vector sub-blocks
    uint32_t blockIdx = 0;   // GetBlockIdx(): on the AIV of a 1:2 mix, 2 * block + sub-block
    uint32_t blockNum = 1;
    uint32_t group = 0;      // the AI core (block) this core belongs to
    uint32_t subBlock = 0;   // GetSubBlockIdx()
    uint32_t slot = 0;       // this core's index in its launch (emu_launch.h)
    bool device = false;     // a launch thread's core (the host's is not)
    uint32_t ubUsed = 0;
};

/* The core of the calling launch thread. */
Core& Cur();
/* "AIC block 3" / "AIV block 5": how messages name a core. */
std::string CoreName(const Core& c);

/* Bytes [off, off + bytes) of a local buffer: inside the buffer, start aligned as the hardware requires. */
void CheckLocal(Buf b, uint64_t off, uint64_t bytes, const char* what);

/* Pipe `p` reads or writes bytes [lo, hi) of local buffer `b`: every earlier conflicting access by another pipe
 * must have been signalled to `p` (SetFlag on that pipe, WaitFlag on `p`, or a PipeBarrier<PIPE_ALL>). */
void Touch(Buf b, uint64_t lo, uint64_t hi, Pipe p, bool write, const char* what);

/* GM bytes [lo, hi) must lie inside one allocation the runtime knows (the tensors passed in, the workspace). */
void CheckGm(const void* lo, const void* hi, const char* what);

/* The unit-flag contract of an Mmad (write = true) or Fixpipe (write = false) with `unitFlag` on L0C bytes [lo, hi),
 * as asc-devkit documents it (TensorAPI Mmad计算/关键特性说明/UnitFlag.md; Mmad.md and the Fixpipe pages' unitFlag
 * parameter: 0 off, 1 reserved, 2 on and the flag kept, 3 on and the flag flipped; both instructions must enable
 * it together). Per 512 B block: an Mmad with 2/3 writes only a block whose flag is 0 (3 sets it to 1); a Fixpipe
 * with 2/3 reads only a block whose flag is 1 (3 resets it to 0). Within a core the emulator runs the pipes in
 * program order, so an instruction that would wait here waits for nothing that can come: the device hangs, a Fault
 * here. With unitFlag 0 an instruction ignores the flags: a Fixpipe with 0 after an Mmad with 3 leaves the block
 * marked (the next Mmad with 2/3 hangs), an Mmad with 0 overwrites a block no Fixpipe has read: both Faults. */
void UnitFlag(uint64_t lo, uint64_t hi, uint8_t unitFlag, bool write, const char* what);

void SetFlag(Pipe src, Pipe dst, int32_t id, const char* event);
void WaitFlag(Pipe src, Pipe dst, int32_t id, const char* event);
/* The hand-off under SetFlag/WaitFlag on a signal the caller keeps (a queue's buffer, kernel_operator.h TQue):
 * Post records what pipe `src` has finished; Take, if a post is pending, lets pipe `dst` see it and clears it. */
void Post(Core::Pending& f, Pipe src);
void Take(Core::Pending& f, Pipe dst);
void Barrier(Pipe p);
/* The kernel of this block must be a cube (AIC) or vector (AIV) kernel for `what`. */
void RequireType(KernelType t, const char* what);

/* GM allocations (base -> bytes) known to the emulated device. Unmapping also drops every core's cached words of
 * the allocation (its address may be handed out again). */
void MapGm(const void* base, uint64_t bytes);
void UnmapGm(const void* base);

/* The scalar unit's data cache. asc-devkit DataCacheCleanAndInvalid doc: scalar GM accesses go through each AI
 * core's DCache, DMA copies do not, and SIMT stores are written through to GM at once (SIMT asc_dcci_single doc).
 * The emulator keeps one DCache per physical core (core type and block index) across launches, as the hardware
 * does, at word granularity. A scalar read of a word this core cached earlier and has not invalidated since
 * returns the cached copy; if GM has changed since (another core, a DMA or a memset wrote it), the read is a
 * Fault naming the missing DataCacheCleanAndInvalid, not a silent stale value. */
void ScalarRead(const void* addr, void* out, uint32_t bytes, const char* what);
/* DataCacheCleanAndInvalid on this core: SINGLE_CACHE_LINE drops the words from `addr` up to the next 64-byte
 * boundary; entire = true drops the whole DCache. */
void CacheInvalidate(const void* addr, bool entire);

bool StreamFailed();
void RecordFault(const char* kernel, uint32_t block, const std::string& what);
/* Records "<kernel> <what>" as the stream's fault unless one is recorded already. */
void RecordLaunchFault(const std::string& what);
/* The first fault since the last call, cleared ("" when none): what a stream synchronisation reports. */
std::string TakeFault();

/* Instruction kinds the emulator counts, in the order aclblasAscendCpuGetInstrCounts writes them (the Python side's
 * ascend_cpu.INSTR_KINDS): SIMT calls and the threads they start, each copy's calls and bytes, Mmads, Fixpipes. */
enum Instr : int {
    SIMT_CALLS, SIMT_THREADS, GM_TO_L1, GM_TO_L1_BYTES, UB_TO_L1, UB_TO_L1_BYTES, L1_TO_L0, L1_TO_L0_BYTES, MMADS,
    FIXPIPES, DATA_COPY_PADS, DATA_COPY_PAD_BYTES, kInstrKinds
};

/* Launch counters for the cost model and tests: kernels launched and blocks run since the last reset. */
struct LaunchStats {
    uint64_t launches = 0;
    uint64_t blocks = 0;
    uint64_t cubeMacs = 0;
    uint64_t gmBytes = 0;  // moved by tensor copies, Fixpipe and DataCopyPad (not by raw SIMT accesses)
    uint64_t instr[kInstrKinds] = {};  // instruction counts (Instr), for benchmarks/panel_counts.py
};
/* Adds n to the calling core's count of instruction kind i. */
void CountInstr(Instr i, uint64_t n = 1);
/* The calling launch thread's counters (merged into the device's at its end), or the device's on the host. */
LaunchStats& Stats();

/* Runs `numBlocks` blocks of `body` as concurrent core threads unless the stream already failed (emu_launch.cpp). */
void RunLaunch(const char* kernel, uint32_t numBlocks, const std::function<void()>& body);

/* `kernel<<<numBlocks, l2ctrl, stream>>>(args)` is rewritten by the build to
 * `ascend_cpu::Launch("kernel", numBlocks, l2ctrl, stream, kernel)(args)`. */
template <typename... Params>
auto Launch(const char* name, uint32_t numBlocks, void* /*l2ctrl*/, void* /*stream*/, void (*kernel)(Params...))
{
    return [=](auto&&... args) { RunLaunch(name, numBlocks, [&]() { kernel(args...); }); };
}

}  // namespace ascend_cpu

#endif  // ASCEND_CPU_EMU_CORE_H
