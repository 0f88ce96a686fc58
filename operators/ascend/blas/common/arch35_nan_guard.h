/*
 * Keeping NaN out of the cube on arch35. asc-devkit's Mmad doc (special values): "Mmad instructions should avoid
 * NaN input, otherwise an execution error may be raised". BLAS must still propagate NaN, so an operator with NaN in
 * its operands takes a vector path instead:
 *   1. the host takes the call's epoch, a nonzero number no earlier call on the handle had since the flag word was
 *      last zeroed (ascend_host::NextNanEpoch; the handle zeroes the word once, when it is created), and passes it
 *      in the kernels' tiling;
 *   2. a vector pass that reads every operand element (Csymm's scan, Sgemm's scan) stores the epoch into the
 *      handle's flag word on any NaN (SIMT stores, written through to GM: asc-devkit SIMT asc_dcci_single doc);
 *   3. the cube kernel reads the flag first (a scalar read after DataCacheCleanAndInvalid, asc-devkit
 *      DataCacheCleanAndInvalid.md) and does no cube work when it holds this call's epoch;
 *   4. a SIMT fallback computes the same result in plain fp32 on the vector cores (IEEE NaN propagation)
 *      when the flag holds the epoch, and returns at once otherwise.
 * A word left by an earlier call holds an older epoch (or 0), which reads as "no NaN": the flag needs no clearing
 * per call, so no aclrtMemsetAsync task precedes the kernels (Csymm is one launch). Csymm's scan and its readers
 * are in one launch, ordered by the SyncAll<false> between them (asc-devkit SyncAll.md); Sgemm's scan and fallback
 * share its guard launch, ordered by SyncAll<true>, and its cube kernels follow on the stream, which runs in order. Every writer stores the same value, so concurrent writes need no
 * atomics. After 2^32 - 1 calls the epochs repeat: a word a NaN call left could then match a later call's epoch,
 * which only sends that call to the fallback (the same result in plain fp32, slower); NaN never reaches the cube,
 * since a scan that sees it always stores the current epoch.
 */
#ifndef ARCH35_NAN_GUARD_H
#define ARCH35_NAN_GUARD_H

#include <cstdint>

#include "kernel_operator.h"

namespace arch35 {

/* The flag is a scalar read of a word SIMT threads of other cores wrote: this core's DCache may hold an older copy
 * (from an earlier call), so the line is invalidated first (asc-devkit DataCacheCleanAndInvalid). NaN was seen in
 * this call when the word holds this call's epoch. */
__aicore__ inline bool NanSeen(GM_ADDR flag, uint32_t epoch)
{
    AscendC::GlobalTensor<uint32_t> word;
    word.SetGlobalBuffer(reinterpret_cast<__gm__ uint32_t*>(flag), 1);
    AscendC::DataCacheCleanAndInvalid<uint32_t, AscendC::CacheLine::SINGLE_CACHE_LINE,
                                      AscendC::DcciDst::CACHELINE_OUT>(word);
    return word.GetValue(0) == epoch;
}

/* From a SIMT thread that found a NaN: every writer stores the same epoch, so concurrent writes need no atomics. */
__aicore__ inline void MarkNan(__gm__ uint32_t* flag, uint32_t epoch) { *flag = epoch; }

}  // namespace arch35

#endif  // ARCH35_NAN_GUARD_H
