/* Handle, stream and workspace functions of the ABI, and the twin's extension functions. */
#include <cstdlib>
#include <new>
#include <string>
#include <thread>

#include "handle_host.h"
#include "twin_handle.h"
#include "twin_parallel.h"

namespace {

using blas_host::kMaxLibraryWorkspaceBytes;
using blas_host::WorkspaceSource;

/* ACLBLAS_TWIN_CORES if set to a positive integer, else the host's CPU count. */
int32_t DefaultCoreCount()
{
    const char* env = std::getenv("ACLBLAS_TWIN_CORES");
    if (env != nullptr) {
        const int value = std::atoi(env);
        if (value > 0) {
            return value;
        }
    }
    const unsigned hw = std::thread::hardware_concurrency();
    return hw > 0 ? static_cast<int32_t>(hw) : 1;
}

/* The pool threads of a handle's cores start with the handle, not inside its first (timed) call. A failure to
 * start them is left to that call, which starts them again. */
void ReserveCoresOf(aclblasHandle_t handle)
{
    try {
        twin::ReserveCores(handle->coreCount);
    } catch (const std::exception&) {
    }
}

}  // namespace

namespace twin {

aclblasStatus_t AcquireWorkspace(aclblasHandle_t handle, uint64_t bytes, void** workspace)
{
    *workspace = nullptr;
    switch (blas_host::WorkspaceSourceOf(bytes, handle->userWorkspace != nullptr, handle->userWorkspaceSize)) {
    case WorkspaceSource::USER_TOO_SMALL:
        handle->lastMessage = "workspace too small: need " + std::to_string(bytes) + " bytes, have " +
                              std::to_string(handle->userWorkspaceSize);
        return ACLBLAS_STATUS_ALLOC_FAILED;
    case WorkspaceSource::OVER_LIBRARY_CAP:
        handle->lastMessage = "workspace too small: need " + std::to_string(bytes) +
                              " bytes, library workspace is capped at " + std::to_string(kMaxLibraryWorkspaceBytes);
        return ACLBLAS_STATUS_ALLOC_FAILED;
    case WorkspaceSource::USER:
        *workspace = handle->userWorkspace;
        break;
    case WorkspaceSource::LIBRARY: {
        std::vector<unsigned char>& lib = handle->libraryWorkspace;
        if (lib.size() < bytes) {
            const uint64_t doubled =
                lib.size() * 2 < kMaxLibraryWorkspaceBytes ? lib.size() * 2 : kMaxLibraryWorkspaceBytes;
            lib.resize(doubled > bytes ? doubled : bytes);
        }
        *workspace = lib.data();
        break;
    }
    case WorkspaceSource::NONE:
        break;
    }
    handle->currentBytes = bytes;
    if (bytes > handle->highWaterBytes) {
        handle->highWaterBytes = bytes;
    }
    return ACLBLAS_STATUS_SUCCESS;
}

aclblasStatus_t Finish(aclblasHandle_t handle, aclblasStatus_t status, const char* what)
{
    if (handle == nullptr) {
        return status;
    }
    if (status == ACLBLAS_STATUS_SUCCESS) {
        handle->lastMessage.clear();
    } else if (handle->lastMessage.empty()) {
        handle->lastMessage = std::string(what) + ": status " + std::to_string(static_cast<int>(status));
    }
    return status;
}

}  // namespace twin

extern "C" {

aclblasStatus_t aclblasCreate(aclblasHandle_t* handle)
{
    const aclblasStatus_t status = blas_host::ValidateCreateParams(handle);
    if (status != ACLBLAS_STATUS_SUCCESS) {
        return status;
    }
    aclblasHandle_t h = new (std::nothrow) _aclblas_handle();
    if (h == nullptr) {
        return ACLBLAS_STATUS_ALLOC_FAILED;
    }
    h->coreCount = DefaultCoreCount();
    ReserveCoresOf(h);
    *handle = h;
    return ACLBLAS_STATUS_SUCCESS;
}

aclblasStatus_t aclblasDestroy(aclblasHandle_t handle)
{
    if (handle == nullptr) {
        return ACLBLAS_STATUS_HANDLE_IS_NULLPTR;
    }
    delete handle;
    return ACLBLAS_STATUS_SUCCESS;
}

aclblasStatus_t aclblasSetStream(aclblasHandle_t handle, void* stream)
{
    if (handle == nullptr) {
        return ACLBLAS_STATUS_HANDLE_IS_NULLPTR;
    }
    handle->stream = stream;
    handle->userWorkspace = nullptr;
    handle->userWorkspaceSize = 0;
    return ACLBLAS_STATUS_SUCCESS;
}

aclblasStatus_t aclblasSetWorkspace(aclblasHandle_t handle, void* workspace, size_t workspaceSize)
{
    const aclblasStatus_t status = blas_host::ValidateSetWorkspaceParams(handle, workspace, workspaceSize);
    if (status != ACLBLAS_STATUS_SUCCESS) {
        return status;
    }
    handle->userWorkspace = workspace;
    handle->userWorkspaceSize = workspaceSize;
    std::vector<unsigned char>().swap(handle->libraryWorkspace);
    return ACLBLAS_STATUS_SUCCESS;
}

aclblasStatus_t aclblasTwinGetWorkspaceStats(aclblasHandle_t handle, size_t* highWaterBytes, size_t* currentBytes)
{
    if (handle == nullptr) {
        return ACLBLAS_STATUS_HANDLE_IS_NULLPTR;
    }
    if (highWaterBytes != nullptr) {
        *highWaterBytes = handle->highWaterBytes;
    }
    if (currentBytes != nullptr) {
        *currentBytes = handle->currentBytes;
    }
    return ACLBLAS_STATUS_SUCCESS;
}

aclblasStatus_t aclblasTwinResetWorkspaceStats(aclblasHandle_t handle)
{
    if (handle == nullptr) {
        return ACLBLAS_STATUS_HANDLE_IS_NULLPTR;
    }
    handle->highWaterBytes = 0;
    handle->currentBytes = 0;
    return ACLBLAS_STATUS_SUCCESS;
}

aclblasStatus_t aclblasTwinSetCoreCount(aclblasHandle_t handle, int coreCount)
{
    if (handle == nullptr) {
        return ACLBLAS_STATUS_HANDLE_IS_NULLPTR;
    }
    if (coreCount < 1) {
        return ACLBLAS_STATUS_INVALID_VALUE;
    }
    handle->coreCount = coreCount;
    ReserveCoresOf(handle);
    return ACLBLAS_STATUS_SUCCESS;
}

const char* aclblasTwinGetLastMessage(aclblasHandle_t handle)
{
    return handle == nullptr ? "" : handle->lastMessage.c_str();
}

}  // extern "C"
