/*
 * The emulated device around the kernels: the ACL runtime on host memory (acl/acl.h), the ABI entry points that
 * run the real Ascend host code and then synchronise the stream as a caller on the device would, and the library's
 * extensions for the harness (last fault message, GM registration, core count, launch statistics).
 *
 * The Ascend host sources are compiled with their two operator symbols renamed to ascend_device_* (build.py), so
 * the exported aclblasCsymm / aclblasSgemmStridedBatched here are "launch, then synchronise": a kernel fault becomes
 * ACLBLAS_STATUS_EXECUTION_FAILED with the fault's message, as aclrtSynchronizeStream would report it.
 */
#include <cstdlib>
#include <cstring>
#include <string>

#include "acl/acl.h"
#include "aclblas_abi.h"
#include "emu_core.h"

extern "C" aclblasStatus_t ascend_device_aclblasCsymm(aclblasHandle_t, aclblasSideMode_t, aclblasFillMode_t, int, int,
                                                      const aclblasComplex*, const aclblasComplex*, int,
                                                      const aclblasComplex*, int, const aclblasComplex*,
                                                      aclblasComplex*, int);
extern "C" aclblasStatus_t ascend_device_aclblasSgemmStridedBatched(aclblasHandle_t, aclblasOperation_t,
                                                                    aclblasOperation_t, int, int, int, const float*,
                                                                    const float*, int, int64_t, const float*, int,
                                                                    int64_t, const float*, float*, int, int64_t, int);

namespace {

/* Defaults of the emulated device: arch35 has up to 72 vector cores (kernel_utils_constants.h AIV_CORE_NUM), two
 * per cube core; the real counts come from aclrtGetDeviceInfo on the device. */
int64_t g_cubeCores = 36;
bool g_deviceInfoFails = false;
uint64_t g_deviceInfoQueries = 0;  // aclrtGetDeviceInfo calls, for the per-handle core-count cache's test
std::string g_message;

aclblasStatus_t Synchronised(aclblasStatus_t status)
{
    const std::string fault = ascend_cpu::TakeFault();
    if (!fault.empty()) {
        g_message = "kernel fault: " + fault;
        return ACLBLAS_STATUS_EXECUTION_FAILED;
    }
    g_message.clear();
    return status;
}

}  // namespace

extern "C" {

aclError aclrtMalloc(void** devPtr, size_t size, aclrtMemMallocPolicy)
{
    const size_t bytes = (size + 511) / 512 * 512;
    *devPtr = std::aligned_alloc(512, bytes == 0 ? 512 : bytes);
    if (*devPtr == nullptr) {
        return ACL_ERROR_RT_PARAM_INVALID;
    }
    ascend_cpu::MapGm(*devPtr, size);
    return ACL_SUCCESS;
}

aclError aclrtFree(void* devPtr)
{
    ascend_cpu::UnmapGm(devPtr);
    std::free(devPtr);
    return ACL_SUCCESS;
}

aclError aclrtMemsetAsync(void* devPtr, size_t maxCount, int32_t value, size_t count, aclrtStream)
{
    if (count > maxCount) {
        return ACL_ERROR_RT_PARAM_INVALID;
    }
    try {
        ascend_cpu::CheckGm(devPtr, static_cast<uint8_t*>(devPtr) + count, "aclrtMemsetAsync");
    } catch (const ascend_cpu::Fault& f) {
        ascend_cpu::RecordFault("aclrtMemsetAsync", 0, f.what);
        return ACL_ERROR_RT_PARAM_INVALID;
    }
    std::memset(devPtr, value, count);
    return ACL_SUCCESS;
}

aclError aclrtSynchronizeStream(aclrtStream) { return ascend_cpu::StreamFailed() ? ACL_ERROR_RT_AICORE_EXCEPTION : ACL_SUCCESS; }

aclError aclrtGetDevice(int32_t* deviceId)
{
    *deviceId = 0;
    return ACL_SUCCESS;
}

aclError aclrtGetDeviceInfo(uint32_t, aclrtDevAttr attr, int64_t* value)
{
    ++g_deviceInfoQueries;
    if (g_deviceInfoFails) {
        return ACL_ERROR_RT_PARAM_INVALID;
    }
    *value = attr == ACL_DEV_ATTR_VECTOR_CORE_NUM ? 2 * g_cubeCores : g_cubeCores;
    return ACL_SUCCESS;
}

aclblasStatus_t aclblasCsymm(aclblasHandle_t handle, aclblasSideMode_t side, aclblasFillMode_t uplo, int m, int n,
                             const aclblasComplex* alpha, const aclblasComplex* A, int lda, const aclblasComplex* B,
                             int ldb, const aclblasComplex* beta, aclblasComplex* C, int ldc)
{
    return Synchronised(ascend_device_aclblasCsymm(handle, side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc));
}

aclblasStatus_t aclblasSgemmStridedBatched(aclblasHandle_t handle, aclblasOperation_t transA,
                                           aclblasOperation_t transB, int m, int n, int k, const float* alpha,
                                           const float* A, int lda, int64_t strideA, const float* B, int ldb,
                                           int64_t strideB, const float* beta, float* C, int ldc, int64_t strideC,
                                           int batchCount)
{
    return Synchronised(ascend_device_aclblasSgemmStridedBatched(handle, transA, transB, m, n, k, alpha, A, lda,
                                                                 strideA, B, ldb, strideB, beta, C, ldc, strideC,
                                                                 batchCount));
}

/* ---- extensions for the harness -------------------------------------------------------------------------- */

const char* aclblasTwinGetLastMessage(aclblasHandle_t) { return g_message.c_str(); }

aclblasStatus_t aclblasTwinSetCoreCount(aclblasHandle_t, int coreCount)
{
    if (coreCount < 1) {
        return ACLBLAS_STATUS_INVALID_VALUE;
    }
    g_cubeCores = coreCount;
    return ACLBLAS_STATUS_SUCCESS;
}

/* Device memory the harness allocated (the tensors it passes in): GM the kernels may touch. */
void aclblasAscendCpuMapBuffer(void* base, size_t bytes) { ascend_cpu::MapGm(base, bytes); }
void aclblasAscendCpuUnmapBuffer(void* base) { ascend_cpu::UnmapGm(base); }

/* Make aclrtGetDeviceInfo fail (nonzero) or work (0): the core-count query's failure path. */
void aclblasAscendCpuFailDeviceInfo(int fail) { g_deviceInfoFails = fail != 0; }

/* aclrtGetDeviceInfo calls since the library was loaded. */
uint64_t aclblasAscendCpuDeviceInfoQueries() { return g_deviceInfoQueries; }

/* Kernels launched, blocks run, cube multiply-accumulates and GM bytes of tensor/queue copies since the last reset. */
void aclblasAscendCpuGetStats(uint64_t* launches, uint64_t* blocks, uint64_t* cubeMacs, uint64_t* gmBytes)
{
    const ascend_cpu::LaunchStats& s = ascend_cpu::Stats();
    *launches = s.launches;
    *blocks = s.blocks;
    *cubeMacs = s.cubeMacs;
    *gmBytes = s.gmBytes;
}

/* The first n instruction counts (ascend_cpu::Instr order) since the last reset. */
void aclblasAscendCpuGetInstrCounts(uint64_t* out, uint32_t n)
{
    const ascend_cpu::LaunchStats& s = ascend_cpu::Stats();
    for (uint32_t i = 0; i < n && i < ascend_cpu::kInstrKinds; ++i) {
        out[i] = s.instr[i];
    }
}

void aclblasAscendCpuResetStats() { ascend_cpu::Stats() = ascend_cpu::LaunchStats{}; }

}  // extern "C"
