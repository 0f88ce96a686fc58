/*
 * CPU implementation of the ACL runtime calls the arch35 host code makes (aclrtMalloc, aclrtFree, aclrtMemsetAsync,
 * aclrtSynchronizeStream, aclrtGetDevice, aclrtGetDeviceInfo), on host memory: device memory is host memory the
 * emulator knows as GM, a stream is synchronous, and a kernel fault surfaces at the next synchronisation as it does
 * on the device. Prototypes as the public ACL reference documents them (see typecheck/acl_standin.h).
 */
#ifndef ASCEND_CPU_ACL_H
#define ASCEND_CPU_ACL_H

#include <cstddef>
#include <cstdint>

typedef int aclError;
typedef void* aclrtStream;
constexpr aclError ACL_SUCCESS = 0;
/* What the runtime returns when an AI core kernel raised an exception (ACL_ERROR_RT_AICORE_EXCEPTION). */
constexpr aclError ACL_ERROR_RT_AICORE_EXCEPTION = 507015;
constexpr aclError ACL_ERROR_RT_PARAM_INVALID = 107000;

typedef enum aclrtMemMallocPolicy {
    ACL_MEM_MALLOC_HUGE_FIRST = 0,
    ACL_MEM_MALLOC_HUGE_ONLY = 1,
    ACL_MEM_MALLOC_NORMAL_ONLY = 2
} aclrtMemMallocPolicy;

typedef enum aclrtDevAttr {
    ACL_DEV_ATTR_AICPU_CORE_NUM = 1,
    ACL_DEV_ATTR_AICORE_CORE_NUM = 101,
    ACL_DEV_ATTR_CUBE_CORE_NUM = 102,
    ACL_DEV_ATTR_VECTOR_CORE_NUM = 201
} aclrtDevAttr;

extern "C" {
aclError aclrtMalloc(void** devPtr, size_t size, aclrtMemMallocPolicy policy);
aclError aclrtFree(void* devPtr);
aclError aclrtMemsetAsync(void* devPtr, size_t maxCount, int32_t value, size_t count, aclrtStream stream);
aclError aclrtSynchronizeStream(aclrtStream stream);
aclError aclrtGetDevice(int32_t* deviceId);
aclError aclrtGetDeviceInfo(uint32_t deviceId, aclrtDevAttr attr, int64_t* value);
}

#endif  // ASCEND_CPU_ACL_H
