/*
 * CPU implementation of the ACL runtime calls the arch35 host code makes (aclrtMalloc, aclrtFree, aclrtMemsetAsync,
 * aclrtSynchronizeStream, aclrtGetDevice, aclrtGetDeviceInfo), on host memory: device memory is host memory the
 * emulator knows as GM, a stream is synchronous, and a kernel fault surfaces at the next synchronisation as it does
 * on the device. Types and prototypes are the type check's stand-in (typecheck/acl_standin.h), implemented in
 * emu/emu_runtime.cpp.
 */
#ifndef ASCEND_CPU_ACL_H
#define ASCEND_CPU_ACL_H

#include "../../../ascend/typecheck/acl_standin.h"

/* What the runtime returns when an AI core kernel raised an exception (ACL_ERROR_RT_AICORE_EXCEPTION). */
constexpr aclError ACL_ERROR_RT_AICORE_EXCEPTION = 507015;
constexpr aclError ACL_ERROR_RT_PARAM_INVALID = 107000;

#endif  // ASCEND_CPU_ACL_H
