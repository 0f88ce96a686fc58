/*
 * The operators' C ABI: the subset of ops-blas `cann_ops_blas.h` / `cann_ops_blas_common.h` that the harness drives.
 *
 * Every library the `cpu` backend loads (the CPU twin, or any `--operator-lib`) and the Ascend build export exactly
 * these symbols. Enum values and status codes are the ops-blas ones; enums are 32-bit ints so a raw value such as 999
 * read from a case table reaches the operator's validation unchanged. Device pointers are host pointers on the twin.
 */
#ifndef ACLBLAS_ABI_H
#define ACLBLAS_ABI_H

#include <stddef.h>
#include <stdint.h>

/* In C++ the enums get a fixed 32-bit underlying type, so out-of-range values (999) are well-defined to inspect. */
#ifdef __cplusplus
#define ACLBLAS_ENUM_BASE : int32_t
#else
#define ACLBLAS_ENUM_BASE
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef enum aclblasStatus_ ACLBLAS_ENUM_BASE {
    ACLBLAS_STATUS_SUCCESS = 0,
    ACLBLAS_STATUS_NOT_INITIALIZED = 1,
    ACLBLAS_STATUS_ALLOC_FAILED = 2,
    ACLBLAS_STATUS_INVALID_VALUE = 3,
    ACLBLAS_STATUS_MAPPING_ERROR = 4,
    ACLBLAS_STATUS_EXECUTION_FAILED = 5,
    ACLBLAS_STATUS_INTERNAL_ERROR = 6,
    ACLBLAS_STATUS_NOT_SUPPORTED = 7,
    ACLBLAS_STATUS_ARCH_MISMATCH = 8,
    ACLBLAS_STATUS_HANDLE_IS_NULLPTR = 9,
    ACLBLAS_STATUS_INVALID_ENUM = 10,
    ACLBLAS_STATUS_UNKNOWN = 11
} aclblasStatus_t;

typedef enum aclblasOperation_ ACLBLAS_ENUM_BASE {
    ACLBLAS_OP_N = 111,
    ACLBLAS_OP_T = 112,
    ACLBLAS_OP_C = 113
} aclblasOperation_t;

typedef enum aclblasFillMode_ ACLBLAS_ENUM_BASE {
    ACLBLAS_UPPER = 121,
    ACLBLAS_LOWER = 122
} aclblasFillMode_t;

typedef enum aclblasDiagType_ ACLBLAS_ENUM_BASE {
    ACLBLAS_NON_UNIT = 131,
    ACLBLAS_UNIT = 132
} aclblasDiagType_t;

typedef enum aclblasSideMode_ ACLBLAS_ENUM_BASE {
    ACLBLAS_SIDE_LEFT = 141,
    ACLBLAS_SIDE_RIGHT = 142
} aclblasSideMode_t;

/* 8 bytes, interleaved real/imag: the layout of numpy complex64. */
typedef struct aclblasComplex_ {
    float real;
    float imag;
} aclblasComplex;

typedef struct _aclblas_handle* aclblasHandle_t;

/* Handle, stream and workspace (ops-blas semantics: *handle must be NULL on entry to Create; SetStream rebinds and
 * returns to the library workspace; SetWorkspace lends a user buffer, NULL or size 0 -> INVALID_VALUE). */
aclblasStatus_t aclblasCreate(aclblasHandle_t* handle);
aclblasStatus_t aclblasDestroy(aclblasHandle_t handle);
aclblasStatus_t aclblasSetStream(aclblasHandle_t handle, void* stream);
aclblasStatus_t aclblasSetWorkspace(aclblasHandle_t handle, void* workspace, size_t workspaceSize);

/* seeds/csymm_design.md.txt §3.3.1 */
aclblasStatus_t aclblasCsymm(
    aclblasHandle_t handle,
    aclblasSideMode_t side,
    aclblasFillMode_t uplo,
    int m, int n,
    const aclblasComplex* alpha,
    const aclblasComplex* A, int lda,
    const aclblasComplex* B, int ldb,
    const aclblasComplex* beta,
    aclblasComplex* C, int ldc);

/* seeds/sgemm_strided_batched_design.txt, 接口签名 */
aclblasStatus_t aclblasSgemmStridedBatched(
    aclblasHandle_t handle,
    aclblasOperation_t transA,
    aclblasOperation_t transB,
    int m,
    int n,
    int k,
    const float* alpha,
    const float* A,
    int lda,
    int64_t strideA,
    const float* B,
    int ldb,
    int64_t strideB,
    const float* beta,
    float* C,
    int ldc,
    int64_t strideC,
    int batchCount);

/* ops-blas aclblasSsymm (arch35): ROW-major, A dimA x dimA with row stride lda (dimA = m LEFT, n RIGHT), B and C
 * m x n with row strides ldb, ldc; UPPER = the elements with col >= row. */
aclblasStatus_t aclblasSsymm(
    aclblasHandle_t handle,
    aclblasSideMode_t side,
    aclblasFillMode_t uplo,
    int64_t m, int64_t n,
    const float* alpha,
    const float* A, int64_t lda,
    const float* B, int64_t ldb,
    const float* beta,
    float* C, int64_t ldc);

/* ops-blas aclblasSgemmBatched: column-major; Aarray/Barray/Carray are device arrays of batchCount device
 * pointers. */
aclblasStatus_t aclblasSgemmBatched(
    aclblasHandle_t handle,
    aclblasOperation_t transa,
    aclblasOperation_t transb,
    int m, int n, int k,
    const float* alpha,
    const float* const Aarray[], int lda,
    const float* const Barray[], int ldb,
    const float* beta,
    float* const Carray[], int ldc,
    int batchCount);

/*
 * ---- CPU twin extensions (NOT part of ops-blas) ----
 * Only the CPU twin exports these; callers must look them up optionally, since a foreign `--operator-lib` or the
 * Ascend library lacks them.
 */

/* Workspace bytes used: highWaterBytes = the most any operator call used since the last reset; currentBytes = what
 * the most recent call used (0 when it needed none). Either out-pointer may be NULL. */
aclblasStatus_t aclblasTwinGetWorkspaceStats(aclblasHandle_t handle, size_t* highWaterBytes, size_t* currentBytes);
aclblasStatus_t aclblasTwinResetWorkspaceStats(aclblasHandle_t handle);
/* Number of emulated AI cores (host threads); coreCount < 1 -> INVALID_VALUE. */
aclblasStatus_t aclblasTwinSetCoreCount(aclblasHandle_t handle, int coreCount);
/* Why the last call on this handle failed, e.g. "workspace too small: need N bytes, have M"; "" after a success. */
const char* aclblasTwinGetLastMessage(aclblasHandle_t handle);

#ifdef __cplusplus
}
#endif

#endif /* ACLBLAS_ABI_H */
