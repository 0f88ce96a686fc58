/*
 * What the arch35 host launch code needs from its surroundings: the handle's stream and workspace, and core counts.
 *
 * In this project's stand-alone Ascend library (operators/ascend/CMakeLists.txt) aclblas_handle.cpp implements them
 * with the ACL runtime. Dropped into an ops-blas checkout, the same functions are one-liners over ops-blas'
 * internal helpers (GetEffectiveWorkspace / EnsureDefaultWorkspace, h->stream, GetAicCoreCount / GetAivCoreCount).
 */
#ifndef ASCEND_HOST_ENV_H
#define ASCEND_HOST_ENV_H

#include <cstdint>

#include "acl/acl.h"
#include "blas_host_common.h"

namespace ascend_host {

/* The stream operators enqueue on (nullptr = the default stream). */
aclrtStream HandleStream(aclblasHandle_t handle);

/* Bytes of the handle's own device scratch (not workspace: the operators' reported workspace stays what the
 * design says): the NaN flag word of arch35_nan_guard.h (one uint32_t at the start), zeroed once when the handle is
 * created, never per call. */
constexpr uint64_t kHandleScratchBytes = 512;

/* The handle's scratch buffer, allocated and zeroed with the handle (an ops-blas checkout: a 512-byte buffer it
 * owns, zeroed at creation). */
void* HandleScratch(aclblasHandle_t handle);

/* The NaN flag's epoch for the call about to be enqueued (arch35_nan_guard.h): the handle's counter, advanced by one
 * per call, never 0 (the zeroed word reads as "no NaN"). An ops-blas checkout: a uint32_t counter in its handle. */
uint32_t NextNanEpoch(aclblasHandle_t handle);

/* At least `bytes` of device workspace from the handle: the library workspace grows (after synchronising its stream);
 * a user workspace that is too small gives ALLOC_FAILED. bytes == 0 yields nullptr and SUCCESS. */
aclblasStatus_t HandleWorkspace(aclblasHandle_t handle, uint64_t bytes, void** workspace);

/* AI Cube / AI Vector core counts of the handle's device, queried (aclrtGetDeviceInfo) on the handle's first call
 * that needs them and kept in the handle: a handle serves the device current when it was created, whose core counts
 * do not change, so no call after the first pays the query. 0 when the runtime cannot tell (the operator then fails
 * with INTERNAL_ERROR instead of running on one core); a failed query is not kept, the next call asks again. */
int32_t CubeCoreCount(aclblasHandle_t handle);
int32_t VectorCoreCount(aclblasHandle_t handle);

}  // namespace ascend_host

#endif  // ASCEND_HOST_ENV_H
