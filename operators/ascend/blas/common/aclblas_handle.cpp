/*
 * Handle, stream and workspace of the stand-alone Ascend library, with ops-blas semantics
 * (blas/common/helper/aclblas_auxiliary.cpp): Create needs *handle == nullptr and allocates a 32 MiB library
 * workspace; SetStream synchronises the old stream, binds the new one and returns to the library workspace;
 * SetWorkspace lends a user buffer (nullptr or size 0 -> INVALID_VALUE); Destroy synchronises and frees only the
 * library buffer. The argument checks and the choice of workspace come from handle_host.h, shared with the CPU twin;
 * the growth (doubling from 32 MiB) is this library's. An ops-blas checkout has its own; this file is not copied there.
 *
 * The handle also keeps the workspace bytes the operators asked for (high-water since the last reset, and the last
 * request), exported through the project's workspace-stats extension, so the harness reports what the Ascend code
 * allocates rather than a model of it.
 */
#include <cstddef>
#include <cstdint>
#include <new>

#include "ascend_host_env.h"
#include "handle_host.h"

struct _aclblas_handle {
    aclrtStream stream = nullptr;
    void* libWorkspace = nullptr;
    uint64_t libWorkspaceBytes = 0;
    void* userWorkspace = nullptr;
    uint64_t userWorkspaceBytes = 0;
    uint64_t requestHighWater = 0;
    uint64_t lastRequest = 0;
    void* scratch = nullptr;  // kHandleScratchBytes, owned: the operators' NaN flag word, zeroed at creation
    uint32_t nanEpoch = 0;    // the last NaN flag epoch handed out (arch35_nan_guard.h)
    int32_t cubeCores = 0;    // the device's core counts once queried (CubeCoreCount), 0 before
    int32_t vectorCores = 0;
};

namespace {

using blas_host::WorkspaceSource;

constexpr uint64_t kDefaultWorkspaceBytes = 32ull << 20;

aclblasStatus_t GrowLibraryWorkspace(_aclblas_handle* h, uint64_t bytes)
{
    uint64_t size = h->libWorkspaceBytes > 0 ? h->libWorkspaceBytes : kDefaultWorkspaceBytes;
    while (size < bytes && size < blas_host::kMaxLibraryWorkspaceBytes) {
        size *= 2;
    }
    if (size < bytes) {
        return ACLBLAS_STATUS_ALLOC_FAILED;
    }
    if (h->libWorkspace != nullptr) {
        if (aclrtSynchronizeStream(h->stream) != ACL_SUCCESS) {
            return ACLBLAS_STATUS_EXECUTION_FAILED;
        }
        aclrtFree(h->libWorkspace);
        h->libWorkspace = nullptr;
        h->libWorkspaceBytes = 0;
    }
    if (aclrtMalloc(&h->libWorkspace, size, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) {
        h->libWorkspace = nullptr;
        return ACLBLAS_STATUS_ALLOC_FAILED;
    }
    h->libWorkspaceBytes = size;
    return ACLBLAS_STATUS_SUCCESS;
}

/* 0 when the runtime cannot say: running on one core instead would be a silent ~32x slowdown. */
int32_t DeviceCount(aclrtDevAttr attr)
{
    int32_t device = 0;
    int64_t value = 0;
    if (aclrtGetDevice(&device) != ACL_SUCCESS ||
        aclrtGetDeviceInfo(static_cast<uint32_t>(device), attr, &value) != ACL_SUCCESS || value < 1) {
        return 0;
    }
    return static_cast<int32_t>(value);
}

}  // namespace

namespace ascend_host {

aclrtStream HandleStream(aclblasHandle_t handle) { return handle->stream; }

void* HandleScratch(aclblasHandle_t handle) { return handle->scratch; }

uint32_t NextNanEpoch(aclblasHandle_t handle)
{
    handle->nanEpoch = handle->nanEpoch == UINT32_MAX ? 1u : handle->nanEpoch + 1u;
    return handle->nanEpoch;
}

aclblasStatus_t HandleWorkspace(aclblasHandle_t handle, uint64_t bytes, void** workspace)
{
    *workspace = nullptr;
    handle->lastRequest = bytes;
    handle->requestHighWater = bytes > handle->requestHighWater ? bytes : handle->requestHighWater;
    switch (blas_host::WorkspaceSourceOf(bytes, handle->userWorkspace != nullptr, handle->userWorkspaceBytes)) {
    case WorkspaceSource::NONE:
        return ACLBLAS_STATUS_SUCCESS;
    case WorkspaceSource::USER:
        *workspace = handle->userWorkspace;
        return ACLBLAS_STATUS_SUCCESS;
    case WorkspaceSource::USER_TOO_SMALL:
    case WorkspaceSource::OVER_LIBRARY_CAP:
        return ACLBLAS_STATUS_ALLOC_FAILED;
    case WorkspaceSource::LIBRARY:
        break;
    }
    if (handle->libWorkspaceBytes < bytes) {
        const aclblasStatus_t status = GrowLibraryWorkspace(handle, bytes);
        if (status != ACLBLAS_STATUS_SUCCESS) {
            return status;
        }
    }
    *workspace = handle->libWorkspace;
    return ACLBLAS_STATUS_SUCCESS;
}

int32_t CubeCoreCount(aclblasHandle_t handle)
{
    if (handle->cubeCores == 0) {
        handle->cubeCores = DeviceCount(ACL_DEV_ATTR_CUBE_CORE_NUM);
    }
    return handle->cubeCores;
}

int32_t VectorCoreCount(aclblasHandle_t handle)
{
    if (handle->vectorCores == 0) {
        handle->vectorCores = DeviceCount(ACL_DEV_ATTR_VECTOR_CORE_NUM);
    }
    return handle->vectorCores;
}

}  // namespace ascend_host

extern "C" {

aclblasStatus_t aclblasCreate(aclblasHandle_t* handle)
{
    const aclblasStatus_t status = blas_host::ValidateCreateParams(handle);
    if (status != ACLBLAS_STATUS_SUCCESS) {
        return status;
    }
    auto* h = new (std::nothrow) _aclblas_handle{};
    if (h == nullptr || GrowLibraryWorkspace(h, kDefaultWorkspaceBytes) != ACLBLAS_STATUS_SUCCESS ||
        aclrtMalloc(&h->scratch, ascend_host::kHandleScratchBytes, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) {
        if (h != nullptr && h->libWorkspace != nullptr) {
            aclrtFree(h->libWorkspace);
        }
        delete h;
        return ACLBLAS_STATUS_ALLOC_FAILED;
    }
    /* The NaN flag word starts at 0, below every epoch (arch35_nan_guard.h): once per handle, not per call. The
     * handle's stream is the default stream until aclblasSetStream. */
    if (aclrtMemsetAsync(h->scratch, ascend_host::kHandleScratchBytes, 0, ascend_host::kHandleScratchBytes,
                         h->stream) != ACL_SUCCESS ||
        aclrtSynchronizeStream(h->stream) != ACL_SUCCESS) {
        aclrtFree(h->scratch);
        aclrtFree(h->libWorkspace);
        delete h;
        return ACLBLAS_STATUS_ALLOC_FAILED;
    }
    *handle = h;
    return ACLBLAS_STATUS_SUCCESS;
}

aclblasStatus_t aclblasDestroy(aclblasHandle_t handle)
{
    if (handle == nullptr) {
        return ACLBLAS_STATUS_HANDLE_IS_NULLPTR;
    }
    const bool synced = aclrtSynchronizeStream(handle->stream) == ACL_SUCCESS;
    if (handle->libWorkspace != nullptr) {
        aclrtFree(handle->libWorkspace);
    }
    aclrtFree(handle->scratch);
    delete handle;
    return synced ? ACLBLAS_STATUS_SUCCESS : ACLBLAS_STATUS_EXECUTION_FAILED;
}

aclblasStatus_t aclblasSetStream(aclblasHandle_t handle, void* stream)
{
    if (handle == nullptr) {
        return ACLBLAS_STATUS_HANDLE_IS_NULLPTR;
    }
    if (aclrtSynchronizeStream(handle->stream) != ACL_SUCCESS) {
        return ACLBLAS_STATUS_EXECUTION_FAILED;
    }
    handle->stream = static_cast<aclrtStream>(stream);
    handle->userWorkspace = nullptr;
    handle->userWorkspaceBytes = 0;
    return ACLBLAS_STATUS_SUCCESS;
}

aclblasStatus_t aclblasSetWorkspace(aclblasHandle_t handle, void* workspace, size_t workspaceSize)
{
    const aclblasStatus_t status = blas_host::ValidateSetWorkspaceParams(handle, workspace, workspaceSize);
    if (status != ACLBLAS_STATUS_SUCCESS) {
        return status;
    }
    handle->userWorkspace = workspace;
    handle->userWorkspaceBytes = workspaceSize;
    return ACLBLAS_STATUS_SUCCESS;
}

aclblasStatus_t aclblasTwinGetWorkspaceStats(aclblasHandle_t handle, size_t* highWaterBytes, size_t* currentBytes)
{
    if (handle == nullptr) {
        return ACLBLAS_STATUS_HANDLE_IS_NULLPTR;
    }
    *highWaterBytes = handle->requestHighWater;
    *currentBytes = handle->lastRequest;
    return ACLBLAS_STATUS_SUCCESS;
}

aclblasStatus_t aclblasTwinResetWorkspaceStats(aclblasHandle_t handle)
{
    if (handle == nullptr) {
        return ACLBLAS_STATUS_HANDLE_IS_NULLPTR;
    }
    handle->requestHighWater = 0;
    handle->lastRequest = 0;
    return ACLBLAS_STATUS_SUCCESS;
}

}  // extern "C"
