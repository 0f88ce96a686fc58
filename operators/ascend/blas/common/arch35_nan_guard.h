/*
 * Keeping NaN out of the cube on arch35. asc-devkit's Mmad doc (special values): "Mmad instructions should avoid
 * NaN input, otherwise an execution error may be raised". BLAS must still propagate NaN, so an operator with NaN in
 * its operands takes a vector path instead:
 *   1. the host clears the handle's flag word (aclrtMemsetAsync on the operator's stream);
 *   2. a vector pass that reads every operand element (Csymm's prepare, Sgemm's scan) sets it on any NaN;
 *   3. the cube kernel reads the flag first (a scalar read after DataCacheCleanAndInvalid) and does no cube
 *      work when it is set;
 *   4. a SIMT fallback kernel computes the same result in plain fp32 on the vector cores (IEEE NaN propagation)
 *      when the flag is set, and returns at once otherwise.
 * Kernels on one stream run in order, so each reads the flag after the previous one wrote it.
 */
#ifndef ARCH35_NAN_GUARD_H
#define ARCH35_NAN_GUARD_H

#include <cstdint>

#include "kernel_operator.h"

namespace arch35 {

/* The flag is a scalar read of a word SIMT threads of other cores wrote: this core's DCache may hold an older copy
 * (from an earlier call), so the line is invalidated first (asc-devkit DataCacheCleanAndInvalid). */
__aicore__ inline bool NanSeen(GM_ADDR flag)
{
    AscendC::GlobalTensor<uint32_t> word;
    word.SetGlobalBuffer(reinterpret_cast<__gm__ uint32_t*>(flag), 1);
    AscendC::DataCacheCleanAndInvalid<uint32_t, AscendC::CacheLine::SINGLE_CACHE_LINE,
                                      AscendC::DcciDst::CACHELINE_OUT>(word);
    return word.GetValue(0) != 0;
}

/* From a SIMT thread that found a NaN: every writer stores the same 1, so concurrent writes need no atomics. */
__aicore__ inline void MarkNan(__gm__ uint32_t* flag) { *flag = 1u; }

}  // namespace arch35

#endif  // ARCH35_NAN_GUARD_H
