/*
 * The twin's handle: stream (only remembered), the emulated core count, workspace (library-owned or lent by the
 * user) with its usage statistics, and the last error message. Operators reach the workspace only through
 * AcquireWorkspace, which applies ops-blas' EnsureDefaultWorkspace / CheckEffectiveWorkspaceSize rules
 * (blas_host::WorkspaceSourceOf in handle_host.h, shared with the Ascend library).
 */
#ifndef TWIN_HANDLE_H
#define TWIN_HANDLE_H

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "aclblas_abi.h"
#include "twin_mutants.h"

struct _aclblas_handle {
    void* stream = nullptr;
    int32_t coreCount = 1;
    std::vector<unsigned char> libraryWorkspace;
    void* userWorkspace = nullptr;
    size_t userWorkspaceSize = 0;
    size_t highWaterBytes = 0;
    size_t currentBytes = 0;
    std::string lastMessage;
};

namespace twin {

/* Workspace of `bytes` for the current call (nullptr when 0), recorded in the handle's statistics. A user workspace
 * that is too small, or a need above the library cap, fails with ALLOC_FAILED and a message naming the bytes. */
aclblasStatus_t AcquireWorkspace(aclblasHandle_t handle, uint64_t bytes, void** workspace);

/* Records a call's outcome: an empty last message on success, `what` plus the status otherwise. */
aclblasStatus_t Finish(aclblasHandle_t handle, aclblasStatus_t status, const char* what);

/* TWIN_SLOWDOWN_PCT: on destruction, busy-waits pct% of the time since construction. */
class Slowdown {
public:
    Slowdown() : start_(std::chrono::steady_clock::now()) {}
    ~Slowdown()
    {
        if (TWIN_SLOWDOWN_PCT <= 0) {
            return;
        }
        const auto end = std::chrono::steady_clock::now();
        const auto until = end + (end - start_) * TWIN_SLOWDOWN_PCT / 100;
        while (std::chrono::steady_clock::now() < until) {
        }
    }
    Slowdown(const Slowdown&) = delete;
    Slowdown& operator=(const Slowdown&) = delete;

private:
    std::chrono::steady_clock::time_point start_;
};

}  // namespace twin

#endif  // TWIN_HANDLE_H
