/*
 * A launch on the emulated device: its blocks run as concurrent threads, one per core, so what the cores do to
 * each other is observable.
 *
 * Kernel types (asc-devkit 设置Kernel类型, GetBlockIdx.md, GetBlockNum.md): KERNEL_TYPE_AIC_ONLY / AIV_ONLY run
 * numBlocks cube or vector cores; KERNEL_TYPE_MIX_AIC_1_2 runs numBlocks AI cores of one AIC and two AIVs each
 * (GetBlockIdx on an AIV: 2 * block + GetSubBlockIdx()); MIX_AIC_1_0 / MIX_AIV_1_0 run only cubes or vectors with
 * the cross-core scheduler on. The kernel's KERNEL_TASK_TYPE_DEFAULT starts its block's AIVs (EnterKernel).
 *
 * Cross-core synchronisation as asc-devkit documents it (docs/zh/api/SIMD-API/基础API/同步控制/核间同步/
 * CrossCoreSetFlag(ISASI).md, CrossCoreWaitFlag(ISASI).md, SyncAll.md): each flag id is a counter per core
 * (at most 15 pending sets); CrossCoreWaitFlag blocks until its counter is nonzero and takes one. Mode 0: every
 * AIC (or every AIV) of the launch has set -> each of them may pass; mode 1: both AIVs of an AI core have set ->
 * both may pass; mode 2: the AIC's set releases both its AIVs, both AIVs' sets release the AIC; mode 4: the AIC
 * and one AIV (AIC ids 0-10 -> AIV0, 16-26 -> AIV1; AIV0 / AIV1 id f -> AIC id f / 16 + f). Only KERNEL_TYPE_MIX_*
 * kernels have the scheduler. SyncAll (hard): every AIV (isAIVOnly) or every core of the launch.
 *
 * Checks (each a Fault naming kernel, core and flag or address):
 *  - deadlock: every live core of the launch waits (cross-core flag or SyncAll) -> all of them fail with the list
 *    of who waits for what, instead of hanging; a wait longer than kWaitLimitSeconds fails too;
 *  - race: GM accesses through the tensor, queue and scalar APIs are kept per launch as strided byte ranges with
 *    the core's vector clock; a read or write of bytes another core wrote (or a write of bytes another core read)
 *    with no cross-core synchronisation ordering the two is an error (raw SIMT pointer accesses are not seen);
 *  - a cross-core set never waited for when the launch ends, a counter past 15, a flag id out of range.
 * Kernels on one stream run one launch after another, so the race records start empty at every launch.
 */
#ifndef ASCEND_CPU_EMU_LAUNCH_H
#define ASCEND_CPU_EMU_LAUNCH_H

#include <cstdint>

#include "emu_core.h"

namespace ascend_cpu {

/* What KERNEL_TASK_TYPE_DEFAULT declares. */
enum class Declared { AIC_ONLY, AIV_ONLY, MIX_AIC_1_2, MIX_AIC_1_0, MIX_AIV_1_0 };

constexpr uint32_t kCrossCoreIds = 32;      // mode 4 uses AIC wait ids up to 26
constexpr uint32_t kCrossCoreMaxSets = 15;  // "同一flagId的计数器最多设置15次"
constexpr int kWaitLimitSeconds = 600;

/* The kernel's type declaration, first thing in its body: sets this core's role; on the AIC of a 1:2 mix it also
 * starts the block's two AIVs, which run the same body. */
void EnterKernel(Declared type);

void CrossCoreSet(int mode, Pipe pipe, uint32_t flagId);
void CrossCoreWait(int mode, Pipe pipe, uint32_t flagId);
/* Hard SyncAll: every vector core of the launch (aivOnly) or every core. */
void SyncAllCores(bool aivOnly);

/* A GM access of `runs` runs of `runBytes` bytes, `strideBytes` apart, from `base`: recorded for race detection
 * when a launch thread makes it (a no-op on the host). */
void GmAccess(const void* base, uint64_t runs, uint64_t runBytes, uint64_t strideBytes, bool write, const char* what);

/* The buffers the cores of one AI core share in a KERNEL_TYPE_MIX_AIC_1_2 launch (asc-devkit DataCopy（UBToL1连续数据
 * 搬运）.md, Fixpipe（L0C到UB数据搬运）.md): the AIVs copy UB -> their AIC's L1, the AIC copies L0C -> its AIVs' UB.
 * SharedCore(slot) is that core (its buffers); AicSlotOf / AivSlotOf name the calling core's AIC and AIVs. */
Core& SharedCore(uint32_t slot, const char* what);
uint32_t AicSlotOf(const Core& c);
uint32_t AivSlotOf(const Core& c, uint32_t sub);
/* Race check of shared local buffers, as GmAccess does for GM but per pipe: pipe p of the calling core reads or
 * writes bytes [lo, hi) of buffer b of core `owner`; an earlier conflicting access by another core of the AI core
 * must have been released to pipe p (CrossCoreSetFlag there, CrossCoreWaitFlag on p or PIPE_S, SyncAll, or a local
 * flag from a pipe that had it). Otherwise a Fault names the byte range, both cores, pipes and calls; when the
 * core did receive the flag but on another pipe, a pipe error. */
void SharedAccess(Buf b, uint32_t owner, uint64_t lo, uint64_t hi, Pipe p, bool write, const char* what);
/* Whether accesses to buffer b of `owner` are race-checked: in every KERNEL_TYPE_MIX_AIC_1_2 launch. */
bool SharedUsed(Buf b, uint32_t owner);

/* Binds the calling thread to a core and its counters (nullptr: the host's). */
void BindThread(Core* core, LaunchStats* stats);
void MergeStats(const LaunchStats& s);

}  // namespace ascend_cpu

#endif  // ASCEND_CPU_EMU_LAUNCH_H
