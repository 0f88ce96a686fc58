/*
 * Handle rules shared by every build (ops-blas blas/common/helper/aclblas_auxiliary.cpp semantics): the argument checks
 * of aclblasCreate / aclblasSetWorkspace, and where an operator's workspace comes from. How the library workspace
 * grows stays with each build (the Ascend library doubles a device buffer from its 32 MiB default; the twin resizes a
 * host vector to max(bytes, 2x)): their sizes differ on purpose, only the decision below is common.
 * Plain C++ functions, no device dependency, no globals.
 */
#ifndef HANDLE_HOST_H
#define HANDLE_HOST_H

#include "blas_host_common.h"

namespace blas_host {

/* Library workspace cap, as ops-blas ACLBLAS_MAX_WORKSPACE_SIZE. */
constexpr uint64_t kMaxLibraryWorkspaceBytes = uint64_t{2} << 30;

/* aclblasCreate: the out pointer must exist and hold nullptr (a live handle is never overwritten). */
inline aclblasStatus_t ValidateCreateParams(const aclblasHandle_t* handle)
{
    if (handle == nullptr) {
        return ACLBLAS_STATUS_HANDLE_IS_NULLPTR;
    }
    return *handle != nullptr ? ACLBLAS_STATUS_INVALID_VALUE : ACLBLAS_STATUS_SUCCESS;
}

/* aclblasSetWorkspace: a user workspace is lent only with a buffer and a size (nullptr or 0 -> INVALID_VALUE). */
inline aclblasStatus_t ValidateSetWorkspaceParams(const void* handle, const void* workspace, size_t workspaceSize)
{
    if (handle == nullptr) {
        return ACLBLAS_STATUS_HANDLE_IS_NULLPTR;
    }
    return workspace == nullptr || workspaceSize == 0 ? ACLBLAS_STATUS_INVALID_VALUE : ACLBLAS_STATUS_SUCCESS;
}

enum class WorkspaceSource : int32_t {
    NONE = 0,              // bytes == 0: no workspace (nullptr)
    USER = 1,              // the lent user workspace
    LIBRARY = 2,           // the library workspace, grown first when smaller than bytes
    USER_TOO_SMALL = 3,    // ALLOC_FAILED: a lent workspace is never replaced by the library's
    OVER_LIBRARY_CAP = 4,  // ALLOC_FAILED: bytes > kMaxLibraryWorkspaceBytes
};

/* Where `bytes` of an operator's workspace come from, given the handle's lent workspace (if any). */
inline WorkspaceSource WorkspaceSourceOf(uint64_t bytes, bool hasUserWorkspace, uint64_t userWorkspaceBytes)
{
    if (bytes == 0) {
        return WorkspaceSource::NONE;
    }
    if (hasUserWorkspace) {
        return userWorkspaceBytes < bytes ? WorkspaceSource::USER_TOO_SMALL : WorkspaceSource::USER;
    }
    return bytes > kMaxLibraryWorkspaceBytes ? WorkspaceSource::OVER_LIBRARY_CAP : WorkspaceSource::LIBRARY;
}

}  // namespace blas_host

#endif  // HANDLE_HOST_H
